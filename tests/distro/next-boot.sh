#!/bin/sh
# The distro suite, second boot of the same disk: the driver loaded by itself
# (no modprobe), then removing the packages removes the module and every
# file.  Prints TAP.
. "$(dirname "$0")/tap.sh"
PKGS="spyre-tools libspyre-dev libspyre0 spyre-dkms"

loaded_at_boot() {
	udevadm settle
	lsmod | grep '^spyre ' && [ -c /dev/accel/accel0 ] &&
	[ "$(stat -c '%G %a' /dev/accel/accel0)" = "render 660" ]
}
remove_leaves_nothing() {
	for p in $PKGS; do dpkg -L "$p"; done | sort -u > /tmp/files
	rmmod spyre
	apt-get purge -y $PKGS || return 1
	echo "dkms status: '$(dkms status spyre)'"
	[ -z "$(dkms status spyre)" ] || return 1
	find /lib/modules -name 'spyre*.ko*' | grep . && return 1
	left=0
	while read -r f; do
		[ -f "$f" ] || [ -L "$f" ] || continue
		echo "left behind: $f"; left=1
	done < /tmp/files
	ls -d /usr/src/spyre-* 2>/dev/null && left=1
	[ $left = 0 ]
}

echo "TAP version 13"
check "the driver loaded by itself at boot, node render 0660" loaded_at_boot
check "purging the packages removes the module and every file" remove_leaves_nothing
echo "1..$n"
[ $fails = 0 ]
