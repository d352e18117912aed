#!/bin/sh
# The distro suite, first boot, as root inside the Debian 13 guest: the
# user's path from packages to a program of their own.  $1 is the directory
# holding the four .deb files and hello.c (the README's example).  Prints TAP.
# The second boot (next-boot.sh) checks the driver loads by itself and that
# removing the packages leaves nothing behind.
debs=${1:?usage: user-path.sh DEB_DIR}
. "$(dirname "$0")/tap.sh"
as_user() { su - "$1" -c "$2"; }

# Without the running kernel's headers DKMS cannot build: the install must
# fail and say why, not leave a package without its module.
no_headers_fails_loudly() {
	build=/lib/modules/$(uname -r)/build
	mv "$build" /tmp/headers-aside || return 1
	out=$(cd "$debs" && apt-get install -y ./spyre-dkms_*.deb 2>&1); rc=$?
	mv /tmp/headers-aside "$build"
	echo "$out" | tail -15
	dpkg --purge spyre-dkms > /dev/null 2>&1
	[ $rc != 0 ] && echo "$out" | grep -q "has no headers: install linux-headers-$(uname -r)" &&
		! dpkg -l spyre-dkms 2>/dev/null | grep -q '^ii'
}
install_packages() {
	cd "$debs" || return 1
	# No network in the guest: everything the packages need is in the image.
	apt-get install -y ./spyre-dkms_*.deb ./libspyre0_*.deb \
		./libspyre-dev_*.deb ./spyre-tools_*.deb
}
dkms_built_for_this_kernel() {
	dkms status spyre
	dkms status spyre -k "$(uname -r)" | grep -q ': installed'
}
module_loads() {
	modprobe spyre && lsmod | grep -q '^spyre ' && modinfo spyre | grep -E '^(filename|version|vermagic)'
	modinfo -n spyre | grep -q "/updates/dkms/spyre.ko"
}
node_is_render_0660() {
	udevadm settle
	for i in 1 2 3 4 5; do [ -c /dev/accel/accel0 ] && break; sleep 1; done
	ls -l /dev/accel/
	[ "$(stat -c '%G %a' /dev/accel/accel0)" = "render 660" ]
}
user_runs_smi() { as_user spyre "spyre-smi" && as_user spyre "spyre-smi --json" | grep -q '"num_cores": 32'; }
user_runs_sample() { as_user spyre /usr/lib/spyre/examples/device_info; }
user_builds_readme_example() {
	cp "$debs/hello.c" /home/spyre/hello.c && chown spyre /home/spyre/hello.c &&
	as_user spyre 'cc hello.c $(pkg-config --cflags --libs spyre) -o hello && ./hello' |
		tee /tmp/hello.out && grep -q ': 32 cores' /tmp/hello.out
}
outsider_is_told_the_group() {
	out=$(as_user nogroup-user /usr/lib/spyre/examples/device_info 2>&1) && {
		echo "opened: $out"; return 1; }
	echo "$out"
	echo "$out" | grep -q "belongs to group 'render' (mode 0660)"
}

echo "TAP version 13"
check "without kernel headers spyre-dkms fails to install and says why" no_headers_fails_loudly
check "apt installs the four packages from a local directory" install_packages
check "DKMS built spyre.ko against this kernel's headers" dkms_built_for_this_kernel
check "modprobe spyre loads the DKMS module" module_loads
check "udev gave /dev/accel/accel0 to group render, mode 0660" node_is_render_0660
check "a user in group render runs spyre-smi" user_runs_smi
check "a user in group render runs a sample program" user_runs_sample
check "the README's example builds with pkg-config and runs" user_builds_readme_example
check "a user outside render gets SPYRE_ERROR_PERMISSION naming the group" outsider_is_told_the_group
echo "1..$n"
[ $fails = 0 ]
