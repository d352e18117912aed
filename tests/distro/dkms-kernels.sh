#!/bin/bash
# The spyre-dkms package's sources built by DKMS, as `dkms autoinstall`
# builds them, against the host's other 6.12 kernels: Debian 12's (the
# security suite's headers, the busybox guest's kernel) and the project's
# debug kernel (KASAN, lockdep).  Debian 13's own kernel is covered inside
# the Debian guest (user-path.sh).  The DKMS tree is private to this run:
# the host's /var/lib/dkms is not touched.
# usage: dkms-kernels.sh BUILD_DIR     (TAP on stdout)
set -uo pipefail
B=$(cd "$1" && pwd)
. "$(dirname "$0")/../../scripts/common.sh"

flavours="stock debug"
echo "1..$((1 + 3 * $(wc -w <<< "$flavours")))"
deb=$(ls "$B"/deb/spyre-dkms_*_all.deb 2>/dev/null | tail -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
if [ -n "$deb" ] && dpkg -x "$deb" "$work/root" &&
	ver=$(dpkg-deb -f "$deb" Version) &&
	mkdir -p "$work/dkms" &&
	dkms add -m spyre -v "$ver" --sourcetree "$work/root/usr/src" \
		--dkmstree "$work/dkms" > "$work/add.log" 2>&1; then
	echo "ok $((++n)) - dkms add spyre/$ver from $(basename "$deb")"
else
	echo "not ok $((++n)) - dkms add of the spyre-dkms package (${deb:-no package in $B/deb})"
	sed 's/^/# /' "$work/add.log" 2>/dev/null
	exit 0
fi

for flavour in $flavours; do
	kernel_flavour "$flavour"
	log=$work/build-$flavour.log
	start=$(date +%s)
	if dkms build -m spyre -v "$ver" -k "$KVER" --kernelsourcedir "$KDIR" \
		--dkmstree "$work/dkms" --sourcetree "$work/root/usr/src" > "$log" 2>&1; then
		echo "ok $((++n)) - dkms build against the $flavour kernel $KVER ($(( $(date +%s) - start )) s)"
	else
		echo "not ok $((++n)) - dkms build against the $flavour kernel $KVER failed:"
		tail -20 "$log" | sed 's/^/# /'
		make_log=$work/dkms/spyre/$ver/build/make.log
		[ -f "$make_log" ] && tail -30 "$make_log" | sed 's/^/# make.log: /'
	fi
	ko=$work/dkms/spyre/$ver/$KVER/x86_64/module/spyre.ko
	[ -f "$ko" ] || ko=$(ls "$ko".* 2>/dev/null | head -1)
	vermagic=$(modinfo -F vermagic "$ko" 2>/dev/null)
	if [ "${vermagic%% *}" = "$KVER" ]; then
		echo "ok $((++n)) - spyre.ko's vermagic names $KVER"
	else
		echo "not ok $((++n)) - spyre.ko for $KVER: vermagic '${vermagic:-no module built}'"
	fi
	status=$(dkms status -m spyre -v "$ver" -k "$KVER" --dkmstree "$work/dkms" 2>&1)
	if grep -q "spyre/$ver, $KVER, x86_64: built" <<< "$status"; then
		echo "ok $((++n)) - dkms status: $status"
	else
		echo "not ok $((++n)) - dkms status for $KVER: '$status'"
	fi
done
