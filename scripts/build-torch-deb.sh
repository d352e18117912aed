#!/bin/bash
# Build python3-torch-spyre (docs/torch.md) into $SPYRE_BUILD/deb-torch,
# version $1 (the project's; the Makefile passes it), in the torch build
# root (scripts/build-torch-root.sh: Debian 13 with PyTorch 2.6), against
# the libspyre that `make deb` packaged: its libspyre0 and libspyre-dev are
# installed into the root first, so the extension links with what the
# guest will have.  The root's lock is held throughout (one build at a time).
# usage: build-torch-deb.sh VERSION
set -euo pipefail
. "$(dirname "$0")/common.sh"

version=${1:?usage: build-torch-deb.sh VERSION}
out=$SPYRE_BUILD/deb-torch
[ "$(id -u)" = 0 ] || { echo "build-torch-deb: run as root (chroot)" >&2; exit 1; }
libs=$(ls "$SPYRE_BUILD"/deb/libspyre0_"$version"_*.deb "$SPYRE_BUILD"/deb/libspyre-dev_"$version"_*.deb \
	2>/dev/null) || true
[ "$(echo "$libs" | grep -c .)" = 2 ] || {
	echo "build-torch-deb: no libspyre0/libspyre-dev $version in $SPYRE_BUILD/deb (make deb)" >&2
	exit 1
}
dir=$("$SPYRE_TOP/scripts/build-torch-root.sh" | tail -1)
root=$dir/root

exec 9> "$dir.lock"
flock 9
mounted=()
work=$root/tmp/torch-spyre-build
trap 'chroot_umount; rm -rf --one-file-system "$work"' EXIT
trap 'exit 130' INT TERM HUP
rm -rf --one-file-system "$work" "$out"
mkdir -p "$work/torch-spyre-$version" "$out"
log=$out/build.log
in_root() { in_chroot "$root" "$@"; }
fail() {
	echo "build-torch-deb: $1; the end of $log:" >&2
	tail -n 40 "$log" >&2
	exit 1
}

# shellcheck disable=SC2086
cp $libs "$work/"
git -C "$SPYRE_TOP" ls-files -z --cached --others --exclude-standard torch_spyre |
	(cd "$SPYRE_TOP" && xargs -0 cp --parents -t "$work/torch-spyre-$version")
cp -r "$SPYRE_TOP/packaging/torch-spyre/debian" "$work/torch-spyre-$version/debian"
rev=$(git -C "$SPYRE_TOP" describe --always --dirty 2>/dev/null || echo unknown)
cat > "$work/torch-spyre-$version/debian/changelog" <<CHANGELOG
torch-spyre ($version) unstable; urgency=medium

  * Built from $rev.

 -- Spyre emulation project <spyre-maintainers@spyre.invalid>  $(date -R)
CHANGELOG

chroot_mount "$root"
# dpkg, not apt: the packages' dependencies (libdrm2, libudev1) are in the
# root already, and nothing is downloaded.
in_root sh -c 'dpkg -i /tmp/torch-spyre-build/*.deb' > "$log" 2>&1 ||
	fail "installing libspyre $version into the torch build root failed"
in_root sh -c "cd /tmp/torch-spyre-build/torch-spyre-$version &&
	dpkg-buildpackage -b -us -uc -j$(nproc)" >> "$log" 2>&1 ||
	fail "dpkg-buildpackage failed"
cp "$work"/python3-torch-spyre_"$version"_*.deb "$out/"
ls -1 "$out"/*.deb
