#!/bin/sh
# The vm suite, run inside the guest.  Prints TAP: module and sysfs checks,
# the C selftests, reload cycles, then a clean-kernel-log check.
T=/usr/share/spyre/tests
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { name=$1; shift; if "$@" > /tmp/check.out 2>&1; then ok "$name"; else notok "$name"; sed 's/^/  # /' /tmp/check.out; fi; }

card_pci() { for d in /sys/bus/pci/devices/*; do
	[ "$(cat $d/vendor)" = 0x1014 ] && [ "$(cat $d/device)" = 0x06a7 ] && echo "$d"; done; }

node_has_card_parent() {
	[ -c /dev/accel/accel0 ] || { echo "no /dev/accel/accel0"; return 1; }
	parent=$(readlink -f /sys/class/accel/accel0/device)
	want=$(readlink -f "$(card_pci)")
	echo "accel0 parent $parent, card $want"
	[ -n "$want" ] && [ "$parent" = "$want" ] &&
	[ "$(basename "$(readlink -f "$want/driver")")" = spyre ]
}

class_is_accelerator() { grep -qx 0x120000 "$(card_pci)/class"; }
probe_logged_card() {
	dmesg | grep "spyre" | grep -q "32 cores" &&
	! dmesg | grep -q "interrupt self-test timed out"
}
smi_lists_card() { spyre-smi && spyre-smi | grep -q "irq self-test passed"; }
smi_json() { spyre-smi --json && spyre-smi --json | grep -q '"num_cores": 32'; }
drm_loaded() { lsmod | grep -q "^drm "; }
log_clean() { dmesg | "$T/dmesg-check.sh"; }
kmemleak_clean() {
	f=/sys/kernel/debug/kmemleak
	# Two scans: an object is reported once it stayed unreferenced through one.
	echo scan > $f && sleep 1 && echo scan > $f || return 1
	leaks=$(cat $f)
	[ -z "$leaks" ] || { echo "$leaks"; return 1; }
}
taint_only_module() {
	t=$(cat /proc/sys/kernel/tainted)
	echo "tainted=$t"
	[ $((t & ~(4096 | 8192))) = 0 ]	# O (out-of-tree), E (unsigned)
}

reload_cycle() {
	rmmod spyre || return 1
	[ ! -e /dev/accel/accel0 ] || { echo "node still present after rmmod"; return 1; }
	modprobe spyre || return 1
	[ -c /dev/accel/accel0 ] || { echo "node missing after reload"; return 1; }
	spyre-smi
}

observability() {
	card=$(card_pci)
	[ "$(cat "$card/spyre/num_cores")" = 32 ] || { echo "num_cores"; return 1; }
	[ "$(cat "$card/spyre/mem_bytes")" = "${SPYRE_EXPECT_MEM_BYTES:-1073741824}" ] ||
		{ echo "mem_bytes $(cat "$card/spyre/mem_bytes")"; return 1; }
	cat "$card/spyre/busy_time_ns" "$card/spyre/reset_count" > /dev/null || return 1
	hw=$(grep -l '^spyre$' /sys/class/hwmon/*/name | head -1)
	[ -n "$hw" ] || { echo "no spyre hwmon"; return 1; }
	hw=$(dirname "$hw")
	t=$(cat "$hw/temp1_input"); p=$(cat "$hw/power1_input")
	echo "temp1_input $t power1_input $p"
	[ "$t" -ge 30000 ] && [ "$t" -le 100000 ] && [ "$p" -ge 20000000 ] && [ "$p" -le 75000000 ]
}
fdinfo_keys() {
	exec 3<>/dev/accel/accel0
	info=$(cat /proc/$$/fdinfo/3)
	exec 3<&-
	echo "$info"
	echo "$info" | grep -q "^drm-driver:.*spyre" &&
	echo "$info" | grep -q "^drm-client-id:" &&
	echo "$info" | grep -q "^drm-engine-queue0:" &&
	echo "$info" | grep -q "^drm-total-memory:"
}
# A user outside the node's group is refused, and told which group to join.
outsider_is_told_the_group() {
	grep -q '^outsider:' /etc/passwd ||
		echo "outsider:x:2000:2000::/tmp:/bin/sh" >> /etc/passwd
	chgrp render /dev/accel/accel0 && chmod 0660 /dev/accel/accel0 || return 1
	out=$(su -s /bin/sh outsider -c device_info 2>&1) && { echo "opened: $out"; return 1; }
	echo "$out"
	echo "$out" | grep -q "permission denied on the device" &&
	echo "$out" | grep -q "belongs to group 'render' (mode 0660); add the user to it"
}

echo "TAP version 13"
echo "1..13"
check "card is a processing accelerator" class_is_accelerator
check "modprobe spyre loads with its Debian deps" modprobe spyre
check "drm dependency came from the module tree" drm_loaded
check "accel node has the card as sysfs parent" node_has_card_parent
check "probe logged the card and no self-test failure" probe_logged_card
check "spyre-smi lists the card" smi_lists_card
check "spyre-smi --json" smi_json
check "sysfs facts and hwmon temperature and power" observability
check "fdinfo has the DRM usage keys" fdinfo_keys
check "a user outside group render is told to join it" outsider_is_told_the_group
check "reload cycle 1" reload_cycle
check "reload cycle 2" reload_cycle
check "reload cycle 3" reload_cycle

"$T/test_query"
"$T/test_submit"
"$T/test_debugfs"
"$T/test_badinput"
# libspyre's runtime: every call, misuse, 16 threads, two processes, a fault.
"$T/test_runtime"
# Broken kernels: the card says what broke, all the way to the user.
"$T/test_errors"
# The card's clocks: wall by default, the real card's time when modelled.
"$T/test_clock"
# The op library: every op against CPU references, misuse, graphs, threads.
"$T/test_ops"
# Eight processes at once, every result checked.
SPYRE_STRESS_SECONDS=${SPYRE_STRESS_SECONDS:-15} "$T/test_stress"
# The ioctl fuzzer, briefly and with a fixed seed (make fuzz-driver runs it long).
"$T/fuzz_ioctl" 1 20
# Recovery with a short job timeout so a hang is found in a second or two.
rmmod spyre && modprobe spyre job_timeout_ms=1000 || echo "Bail out! cannot reload spyre"
"$T/test_recovery"
# rmmod refused in use, unbind under load, then rmmod and a fresh load.
"$T/test_lifecycle"

echo "1..3"
n=0
if [ -e /sys/kernel/debug/kmemleak ]; then
	check "kmemleak finds no leaks" kmemleak_clean
else
	n=$((n + 1)); echo "ok $n - kmemleak finds no leaks # SKIP kernel has no kmemleak"
fi
check "kernel log has no warnings, bugs or oopses" log_clean
check "kernel taint only from the out-of-tree module" taint_only_module
exit 0
