#!/bin/bash
# Boot the test guest under QEMU (TCG, q35) with a Spyre card, run a command
# inside it and return that command's output and exit status.
#
# usage: vm-run.sh [--kernel stock|debug] [--mem-size SIZE] [--cards N]
#                  [--timeout SECONDS] [--share DIR] [--workdir DIR] [--user]
#                  [--stdin] [--shell] [--distro [--disk FILE]] [--] COMMAND...
#   --kernel    Debian's 6.12 kernel (default) or the debug kernel
#   --mem-size  the card's device memory (QEMU size syntax, default 2G)
#   --cards     how many Spyre cards, each on its own root port (default 1)
#   --timeout   kill the guest after this long (default 600); exit status 124
#   --share     the host directory DIR appears in the guest at the same path
#               (virtio-9p, read-write with the QEMU process's rights)
#   --workdir   run COMMAND (or the shell) in DIR (default /root)
#   --user      load the driver, then run COMMAND as the unprivileged user
#               'spyre' (the caller's uid, or 1000 for root), a member of
#               group 'render', which may open /dev/accel/* (mode 0660)
#   --stdin     COMMAND reads this script's standard input (the guest's
#               /dev/ttyS1, raw, no echo), e.g. a benchmark paced by its
#               caller; without it the guest sees no input (busybox guest)
#   --shell     interactive guest shell on this terminal instead of COMMAND
#   --distro    boot the Debian 13 guest (build-debian-guest.sh builds it
#               once) instead of the busybox one: systemd, udev, Debian's
#               kernel with its headers, DKMS; COMMAND runs once the system
#               is up (root, or 'spyre' with --user), the driver is not
#               loaded for it; 2 GiB of guest memory
#   --disk      with --distro: the guest's disk is the qcow2 overlay FILE,
#               made over the cached image if FILE does not exist and kept
#               afterwards, so that a next run boots the disk this one left;
#               without it each run starts from a pristine disk
# Environment: SPYRE_BUILD (default <checkout>/build), SPYRE_QEMU_ARGS
# (appended to QEMU's command line).  A guest whose kernel dies before
# /init starts is booted again, once (see below).
set -euo pipefail
. "$(dirname "$0")/common.sh"

mem_size=2G
cards=1
flavour=stock
timeout_s=600
mode=run
share=
workdir=
user_uid=
distro=0
disk=
stdin=0
while [ $# -gt 0 ]; do
	case "$1" in
	--share) share=$2; shift 2 ;;
	--workdir) workdir=$2; shift 2 ;;
	--user) user_uid=$(id -u); [ "$user_uid" != 0 ] || user_uid=1000; shift ;;
	--mem-size) mem_size=$2; shift 2 ;;
	--cards) cards=$2; shift 2 ;;
	--kernel) flavour=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--stdin) stdin=1; shift ;;
	--shell) mode=shell; shift ;;
	--distro) distro=1; shift ;;
	--disk) disk=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "vm-run: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
case $cards in
[1-8]) ;;
*) echo "vm-run: --cards takes 1 to 8" >&2; exit 2 ;;
esac
if [ $mode = run ] && [ $# -eq 0 ]; then
	echo "vm-run: no command given" >&2
	exit 2
fi

build=$SPYRE_BUILD
qemu=$SPYRE_CACHE/qemu-build/qemu-system-x86_64
guest_mem=1G
if [ $distro = 1 ]; then
	[ $stdin = 0 ] || { echo "vm-run: --stdin works with the busybox guest, not --distro" >&2; exit 2; }
	[ $flavour = stock ] || { echo "vm-run: --distro boots Debian 13's own kernel" >&2; exit 2; }
	image=$("$SPYRE_TOP/scripts/build-debian-guest.sh")
	kernel=$image/vmlinuz
	initrd=$image/initrd.img
	guest_mem=2G
else
	[ -z "$disk" ] || { echo "vm-run: --disk needs --distro" >&2; exit 2; }
	kernel_flavour "$flavour"
	kernel=$KIMAGE
	initrd=$build/initramfs-$flavour.cpio.gz
fi
for f in "$qemu" "$kernel" "$initrd"; do
	[ -e "$f" ] || { echo "vm-run: $f missing; run make first" >&2; exit 2; }
done

vmdir=$build/vm
mkdir -p "$vmdir"
nonce=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
cmd_b64=$(printf '%s' "$*" | base64 -w0)
append="console=ttyS0 quiet panic=-1 SPYRE_MODE=$mode SPYRE_NONCE=$nonce SPYRE_CMD=$cmd_b64"
# Paths go base64-encoded: the kernel command line splits on spaces.
[ -z "$workdir" ] || append+=" SPYRE_WORKDIR=$(printf '%s' "$workdir" | base64 -w0)"
[ -z "$user_uid" ] || append+=" SPYRE_USER_UID=$user_uid"
[ $stdin = 0 ] || append+=" SPYRE_STDIN=1"
share_args=()
if [ -n "$share" ]; then
	[ -d "$share" ] || { echo "vm-run: --share $share is not a directory" >&2; exit 2; }
	share=$(cd "$share" && pwd -P)
	case "$share" in *,*) echo "vm-run: --share path may not contain a comma: $share" >&2; exit 2 ;; esac
	append+=" SPYRE_SHARE=$(printf '%s' "$share" | base64 -w0)"
	share_args=(-fsdev "local,id=share,path=$share,security_model=none"
		-device "virtio-9p-pci,fsdev=share,mount_tag=spyre_share")
fi

disk_args=()
bios=$FIRMWARE_ROOT/usr/share/seabios
if [ $distro = 1 ]; then
	# Debian 13's SeaBIOS (build-debian-guest.sh says why).
	bios=$image/seabios
	# A copy-on-write overlay over the cached image, which stays pristine:
	# the caller's (--disk), or this run's own.
	if [ -z "$disk" ]; then
		disk=$vmdir/distro.$nonce.qcow2
		disk_tmp=$disk
		trap 'rm -f "$disk_tmp"' EXIT
	fi
	if [ ! -e "$disk" ]; then
		qemu-img create -q -f qcow2 -F raw -b "$image/disk.img" "$disk" ||
			{ echo "vm-run: cannot create the overlay $disk" >&2; exit 2; }
	fi
	# The root is found by its label.
	disk_args=(-drive "file=$disk,format=qcow2,if=none,id=root,cache=unsafe"
		-device virtio-blk-pci,drive=root)
	append="root=LABEL=spyre-root rw $append systemd.show_status=error"
fi
qemu_args=(-nodefaults -machine q35 -accel tcg -smp 2 -m "$guest_mem" -no-reboot -display none
	-L "$bios" -L "$FIRMWARE_ROOT/usr/share/qemu"
	-kernel "$kernel" -initrd "$initrd" -append "$append" "${share_args[@]}" "${disk_args[@]}")
for ((i = 0; i < cards; i++)); do
	qemu_args+=(-device "pcie-root-port,id=rp$i,chassis=$((i + 1)),slot=$i"
		-device "spyre,bus=rp$i,mem-size=$mem_size")
done
# shellcheck disable=SC2206
qemu_args+=(${SPYRE_QEMU_ARGS:-})

if [ $mode = shell ]; then
	[ -n "${disk_tmp:-}" ] || exec "$qemu" "${qemu_args[@]}" -serial mon:stdio
	"$qemu" "${qemu_args[@]}" -serial mon:stdio
	exit
fi

# Per run, so that guests started at once from one checkout keep apart; the
# last one is kept as console.log.
console=$vmdir/console.$nonce.log
rcfile=$vmdir/rc.$nonce
fifo=$vmdir/out.$nonce
# An interrupted run leaves neither its output FIFO nor its status file.
trap 'mv -f "$console" "$vmdir/console.log" 2>/dev/null; rm -f "$fifo" "$rcfile"
	[ -z "${disk_tmp:-}" ] || rm -f "$disk_tmp"' EXIT

# One boot; the command's output goes to stdout, its exit status to $rcfile.
# QEMU runs under timeout(1) in the background so that an interrupt or a
# TERM sent to this script stops it too: nothing is left running.
qpid=
stop_guest() {
	[ -z "$qpid" ] || kill -TERM "$qpid" 2>/dev/null
	wait
	echo "vm-run: interrupted; the guest was stopped" >&2
	exit 130
}
trap stop_guest INT TERM HUP
# QEMU's stdin: the caller's with --stdin (kept on fd 3: a background job's
# stdin would be /dev/null), else none.
if [ $stdin = 1 ]; then
	exec 3<&0
else
	exec 3< /dev/null
fi
# mawk (Debian's default awk) fills its whole input buffer before it
# handles a line; -W interactive passes each line on as it comes, which a
# caller pacing the guest through --stdin waits for.
awk_lines=()
case $(awk -W version 2>&1 || true) in
*mawk*) awk_lines=(-W interactive) ;;
esac
boot() {
	local apid
	rm -f "$rcfile" "$fifo"
	mkfifo "$fifo"
	set +e
	awk "${awk_lines[@]}" -v tag="SPYRE-EXIT-$nonce" -v rcfile="$rcfile" '
		$1 == tag && NF == 2 { print $2 > rcfile; next }
		{ print; fflush() }' < "$fifo" &
	apid=$!
	timeout -k 10 "$timeout_s" "$qemu" "${qemu_args[@]}" \
		-serial "file:$console" -chardev stdio,id=out,signal=off -serial chardev:out \
		<&3 > "$fifo" &
	qpid=$!
	wait "$qpid"
	qrc=$?
	qpid=
	wait "$apid"
	rm -f "$fifo"
	set -e
}

boot
# The guest kernel itself can die while booting, before /init runs anything
# (twice in about 150 boots on 2026-12-03 under QEMU 7.2: fatal oopses in
# early interrupt handling, one an int3 where the kernel patches its own
# code, a multi-threaded TCG hazard; not seen yet under QEMU 10.0, kept as
# a guard).  Nothing of the command ran, so boot again, once, and say so.
if [ ! -s "$rcfile" ] && [ "$qrc" != 124 ] && [ "$qrc" != 137 ] &&
	! grep -q "SPYRE-INIT-$nonce" "$console" && grep -q "Kernel panic" "$console"; then
	echo "vm-run: the guest kernel died before /init started; console tail:" >&2
	tail -n 12 "$console" >&2
	echo "vm-run: booting again (once)" >&2
	boot
fi

if [ -s "$rcfile" ]; then
	rc=$(cat "$rcfile")
	rm -f "$rcfile"
	exit "$rc"
fi
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "vm-run: guest timed out after ${timeout_s}s; console tail:" >&2
	rc=124
else
	echo "vm-run: guest ended without an exit status (qemu $qrc); console tail:" >&2
	rc=125
fi
tail -n 40 "$console" >&2
exit $rc
