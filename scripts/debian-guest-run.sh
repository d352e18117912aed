#!/bin/bash
# Inside the Debian guest (/usr/local/sbin/spyre-guest-run, started by
# spyre-run.service once multi-user.target is up): run the command
# vm-run.sh --distro passed on the kernel command line, print its output and
# exit status on the second serial port, power off.  The keys, like the
# busybox guest's (guest-init.sh):
#   SPYRE_MODE=run         only then does this run (shell: a root login on
#                          the console instead, nothing here)
#   SPYRE_CMD=<base64>     the command (bash -c)
#   SPYRE_NONCE=<token>    tags the exit-status line so output cannot fake it
#   SPYRE_SHARE=<base64>   a host directory (virtio-9p tag spyre_share) to
#                          mount at the same path
#   SPYRE_WORKDIR=<base64> where the command starts (default /root)
#   SPYRE_USER_UID=<uid>   run the command as user 'spyre' (uid 1000 here)
#                          instead of root
for w in $(cat /proc/cmdline); do
	case "$w" in SPYRE_*=*) export "${w?}" ;; esac
done
[ "${SPYRE_MODE:-}" = run ] || exit 0
export HOME=/root TERM=dumb LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive
# vm-run.sh: the command is about to start (a boot that dies before this
# line is retried).
echo "SPYRE-INIT-$SPYRE_NONCE" > /dev/console

out=/dev/ttyS1
stty -F $out raw -echo 2>/dev/null
workdir=/root
[ -z "${SPYRE_WORKDIR:-}" ] || workdir=$(echo "$SPYRE_WORKDIR" | base64 -d)
cmd=$(echo "$SPYRE_CMD" | base64 -d)
rc=0
if [ -n "${SPYRE_SHARE:-}" ]; then
	share=$(echo "$SPYRE_SHARE" | base64 -d)
	mkdir -p "$share"
	modprobe 9pnet_virtio 2>/dev/null
	if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=none \
		spyre_share "$share"; then
		echo "guest: cannot mount the shared directory $share" > $out
		rc=125
	fi
fi
# Devices found at boot have their rules applied (and modules loaded) first.
udevadm settle -t 60
if [ $rc = 0 ]; then
	if [ -n "${SPYRE_USER_UID:-}" ]; then
		# runuser keeps the exit status: 128 + N for a signal N.
		runuser -u spyre -- bash -c "cd \"\$0\" && $cmd" "$workdir" < /dev/null > $out 2>&1
	else
		(cd "$workdir" && bash -c "$cmd") < /dev/null > $out 2>&1
	fi
	rc=$?
fi
echo "SPYRE-EXIT-$SPYRE_NONCE $rc" > $out
sync
# Processes are killed and file systems unmounted or remounted read-only
# (the disk is consistent for a next boot of the same overlay), without
# stopping every service one by one.
systemctl --force poweroff
