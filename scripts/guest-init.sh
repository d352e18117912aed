#!/bin/busybox sh
# /init of the test guest.  The host passes, through the kernel command line
# (unknown key=value parameters reach init as environment variables):
#   SPYRE_MODE=run|shell   run one command and power off, or a login shell
#   SPYRE_CMD=<base64>     the command (sh -c) for run mode
#   SPYRE_NONCE=<token>    tags the exit-status line so output cannot fake it
/bin/busybox --install -s /bin
export PATH=/usr/bin:/bin:/sbin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /tmp /root /dev/pts /run
mount -t tmpfs tmpfs /tmp
mount -t devpts devpts /dev/pts
# vm-run.sh: /init started (a boot that dies before this line is retried).
echo "SPYRE-INIT-$SPYRE_NONCE" > /dev/console

case "$SPYRE_MODE" in
shell)
	echo "Spyre test guest: $(uname -r). 'modprobe spyre' loads the driver; exit powers off."
	setsid cttyhack sh -l
	;;
*)
	out=/dev/ttyS1
	stty -F $out raw -echo 2>/dev/null
	cmd=$(echo "$SPYRE_CMD" | base64 -d)
	(cd /root && sh -c "$cmd") > $out 2>&1
	rc=$?
	echo "SPYRE-EXIT-$SPYRE_NONCE $rc" > $out
	;;
esac
sync
reboot -f
