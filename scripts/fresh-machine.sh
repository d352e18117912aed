#!/bin/bash
# Prove the README's quick start on a pristine Debian machine: a minbase
# debootstrap root of Debian 12 (bookworm) or 13 (trixie), with the apt
# sources an installed system has, a clone of this checkout's HEAD, and an
# empty SPYRE_CACHE; inside it, as root in a chroot, the README's commands
# run literally:
#     apt-get install -y make      (the README's prerequisite)
#     make run
#     make check
# Prints each command's time and last lines; logs go to
# build/fresh-<release>/.  Exit status 0 only if both passed.
#
# usage: fresh-machine.sh bookworm|trixie [--keep] [--first 'COMMAND']
#   --keep    leave the root in place (default: removed at the end)
#   --first   run COMMAND (e.g. 'make install') as the first command after
#             the prerequisite, instead of make run and make check
# Needs root.  The debootstrap result is cached as a tarball in
# $SPYRE_CACHE/fresh/ (keyed by release); nothing else is reused.
set -euo pipefail
# This runs for most of an hour: run a private copy, so that editing the
# checkout meanwhile cannot change the script under bash's feet.
if [ -z "${SPYRE_FRESH_COPY:-}" ]; then
	copy=$(mktemp /tmp/fresh-machine.XXXXXX.sh)
	cp "$0" "$copy"
	SPYRE_FRESH_COPY=$copy SPYRE_TOP=$(cd "$(dirname "$0")/.." && pwd) exec bash "$copy" "$@"
fi
trap 'rm -f "$SPYRE_FRESH_COPY"' EXIT
. "$SPYRE_TOP/scripts/common.sh"

release=${1:-}
keep=0
first=
shift || true
while [ $# -gt 0 ]; do
	case "$1" in
	--keep) keep=1; shift ;;
	--first) first=$2; shift 2 ;;
	*) echo "fresh-machine: unknown option $1" >&2; exit 2 ;;
	esac
done
case "$release" in
bookworm|trixie) ;;
*) echo "usage: $0 bookworm|trixie [--keep] [--first 'COMMAND']" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "fresh-machine: run as root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap > /dev/null || {
	apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap
}

# The host's own Debian mirrors (main and security); no host name is written here.
host_mirrors fresh-machine || exit 1

out=$SPYRE_BUILD/fresh-$release${first:+-first}
mkdir -p "$out" "$SPYRE_CACHE/fresh"
tarball=$SPYRE_CACHE/fresh/debootstrap-$release-minbase.tar
exec 8> "$tarball.lock"
flock 8
if [ ! -f "$tarball" ]; then
	tmp=$(mktemp -d /var/tmp/spyre-debootstrap.XXXXXX)
	echo "fresh-machine: debootstrap --variant=minbase $release (once; cached as $tarball)"
	debootstrap --variant=minbase "$release" "$tmp" "$mirror" > "$out/debootstrap.log" 2>&1 || {
		tail -n 20 "$out/debootstrap.log" >&2
		rm -rf "$tmp"
		exit 1
	}
	tar -C "$tmp" -cf "$tarball.tmp" .
	mv "$tarball.tmp" "$tarball"
	rm -rf "$tmp"
fi
flock -u 8

root=$(mktemp -d /var/tmp/spyre-fresh-$release.XXXXXX)
chmod 755 "$root"	# a root directory's mode, not mktemp's 0700
mounted=()
cleanup() {
	chroot_umount
	if [ $keep = 0 ]; then
		rm -rf --one-file-system "$root"
	else
		echo "fresh-machine: root kept at $root"
	fi
}
trap 'cleanup; rm -f "$SPYRE_FRESH_COPY"' EXIT
tar -C "$root" -xf "$tarball"

# The apt sources of an installed system: the release, its updates and its
# security suite.  Debian 13 installs write deb822 files, Debian 12 ones the
# one-line sources.list: each root gets its release's kind.
rm -f "$root/etc/apt/sources.list"
if [ "$release" = trixie ]; then
	deb822_sources "$release" > "$root/etc/apt/sources.list.d/debian.sources"
else
	cat > "$root/etc/apt/sources.list" <<EOF
deb $mirror $release main
deb $mirror $release-updates main
deb $security $release-security main
EOF
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"

chroot_mount "$root"
mkdir -p "$root/tmp" && chmod 1777 "$root/tmp"

git clone -q --no-hardlinks "$SPYRE_TOP" "$root/root/spyre"
echo "fresh-machine: $release root at $root, checkout at $(git -C "$SPYRE_TOP" rev-parse --short HEAD)"

# One README command in the chroot, timed, its log kept.
status=0
step() {	# name command
	local name=$1 cmd=$2 t0 t1 rc
	t0=$(date +%s)
	set +e
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		SPYRE_CACHE=/root/.cache/spyre \
		/bin/bash -c "cd /root/spyre && $cmd" < /dev/null > "$out/$name.log" 2>&1
	rc=$?
	set -e
	t1=$(date +%s)
	printf 'fresh-machine: %s: `%s` exit %d in %d min %02d s; last lines:\n' "$release" "$cmd" \
		"$rc" $(((t1 - t0) / 60)) $(((t1 - t0) % 60))
	tail -n 4 "$out/$name.log" | sed 's/^/    /'
	echo "$name $rc $((t1 - t0))" >> "$out/times"
	[ $rc = 0 ] || status=1
	return $rc
}
rm -f "$out/times"
if [ -n "$first" ]; then
	step prerequisite "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q make" &&
		step first "$first" || true
	exit $status
fi
step prerequisite "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q make" &&
	step run "make run" || true
[ $status != 0 ] || step check "make check" || true
exit $status
