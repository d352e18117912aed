#!/bin/bash
# The build root for torch_spyre: a Debian 13 (trixie) chroot with Debian's
# PyTorch 2.6 (python3-torch, libtorch-dev), its compiler and the packaging
# tools, so that the PyTorch extension is built on the host against the
# PyTorch the Debian guest runs (the guest does not compile C++ under TCG).
#
# usage: build-torch-root.sh      (prints the root's directory last)
#
# Cached in $SPYRE_CACHE/torch-root-<key>/root, the key being a hash of this
# script (which holds the package list); downloaded .debs are kept in
# $SPYRE_CACHE/debs/torch-root/.  scripts/build-torch-deb.sh uses it, holding
# $SPYRE_CACHE/torch-root-<key>.lock while it does (one build at a time).
# Needs root (debootstrap, chroot).  Packages come from the mirror of the
# host's own apt sources (no host name is written here).
set -euo pipefail
. "$(dirname "$0")/common.sh"

SUITE=trixie
TORCH_ROOT_PKGS="python3-torch libtorch-dev python3-dev python3-numpy build-essential pkg-config
	dpkg-dev debhelper dh-python python3-setuptools libdrm2 libudev1"

key=$(sha256sum < "$0" | cut -c1-12)
dir=$SPYRE_CACHE/torch-root-$key
if [ -f "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "build-torch-root: run as root (debootstrap, chroot)" >&2; exit 1; }
"$SPYRE_TOP/scripts/setup.sh" --debian-guest >&2

exec 9> "$dir.lock"
flock 9
if [ -f "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi
rm -rf --one-file-system "$dir"
host_mirrors build-torch-root || exit 1

mkdir -p "$dir"
root=$dir/root
log=$dir/build.log
mounted=()
trap 'chroot_umount' EXIT
trap 'exit 130' INT TERM HUP
fail() {
	echo "build-torch-root: $1; the end of $log:" >&2
	tail -n 30 "$log" >&2
	exit 1
}
in_root() { in_chroot "$root" "$@"; }

t0=$(date +%s)
echo "build-torch-root: debootstrap $SUITE (log: $log)" >&2
debian_bootstrap "$root" "$SUITE" "$SPYRE_CACHE/debs/torch-root" "$log" ||
	fail "debootstrap failed"
echo "build-torch-root: apt-get install $(echo $TORCH_ROOT_PKGS)" >&2
# shellcheck disable=SC2086
debian_install "$root" "$SPYRE_CACHE/debs/torch-root" "$log" $TORCH_ROOT_PKGS ||
	fail "installing the packages failed"
in_root dpkg-query -W -f='${Package} ${Version}\n' > "$dir/packages.txt"
in_root python3 -c 'import torch; print(torch.__version__)' > "$dir/torch-version" 2>> "$log" ||
	fail "python3 cannot import torch"
chroot_umount
echo "$(( $(date +%s) - t0 ))" > "$dir/build-seconds"
touch "$dir/.done"
echo "build-torch-root: PyTorch $(cat "$dir/torch-version") in $(cat "$dir/build-seconds") s" >&2
echo "$dir"
