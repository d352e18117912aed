#!/bin/bash
# The distro suite, host side (docs/packages.md): `make deb`'s four packages
# go into the Debian 13 guest (scripts/build-debian-guest.sh) the way a user
# installs them.  First boot: tests/distro/user-path.sh (apt from a local
# directory, DKMS against the guest's own headers, udev, a non-root user,
# the README's example built with pkg-config); second boot of the same disk:
# tests/distro/next-boot.sh (the driver loads by itself; purging removes
# everything).  Before the boots, tests/distro/dkms-kernels.sh builds the
# package through DKMS against Debian 12's 6.12 and the debug kernel on the
# host.  Prints TAP.  usage: run.sh BUILD_DIR
set -uo pipefail
B=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)

"$top/scripts/build-debian-guest.sh" > "$B/debian-guest.log" 2>&1 || {
	tail -20 "$B/debian-guest.log" | sed 's/^/# /'
	echo "Bail out! the Debian guest image could not be built ($B/debian-guest.log)"
	exit 1
}
debs=$(ls "$B"/deb/*.deb 2>/dev/null | grep -v -- '-dbgsym_')
[ "$(echo "$debs" | grep -c .)" = 4 ] || {
	echo "Bail out! $B/deb does not hold the four packages (make deb)"
	exit 1
}
# The same package's DKMS build against the host's other 6.12 kernels.
"$top/tests/distro/dkms-kernels.sh" "$B"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
share=$work/share
mkdir -p "$share"
# shellcheck disable=SC2086
cp $debs "$top"/tests/distro/user-path.sh "$top"/tests/distro/next-boot.sh \
	"$top"/tests/distro/tap.sh "$share/"
# The README's example, exactly as a user copies it.
awk '/^```c$/ { on = 1; next } /^```$/ { on = 0 } on' "$top/README.md" > "$share/hello.c"
chmod -R a+rX "$work"

boot() {	# timeout script
	"$top/scripts/distro-run.sh" --disk "$work/disk.qcow2" --share "$share" \
		--timeout "$1" -- "sh $share/$2 $share"
	local rc=$?
	# 1: a check failed (its TAP says which); anything else: the guest did not finish.
	[ $rc = 0 ] || [ $rc = 1 ] || echo "Bail out! the Debian guest's $2 exited with status $rc"
}
start=$(date +%s)
boot 1500 user-path.sh
boot 600 next-boot.sh
echo "# distro: $(( $(date +%s) - start )) s for both boots"
