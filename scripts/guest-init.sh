#!/bin/busybox sh
# /init of the test guest.  The host passes, through the kernel command line
# (unknown key=value parameters reach init as environment variables):
#   SPYRE_MODE=run|shell   run one command and power off, or a login shell
#   SPYRE_CMD=<base64>     the command (sh -c) for run mode
#   SPYRE_NONCE=<token>    tags the exit-status line so output cannot fake it
#   SPYRE_SHARE=<base64>   a host directory (virtio-9p tag spyre_share) to
#                          mount at the same path
#   SPYRE_WORKDIR=<base64> where the command (or the shell) starts
#   SPYRE_USER_UID=<uid>   load the driver, then run the command as user
#                          'spyre' (this uid), in group 'render'
#   SPYRE_STDIN=1          the command reads /dev/ttyS1 (vm-run.sh --stdin)
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

# Users: root, and 'spyre' in group 'render'.  The accel nodes get the
# policy a udev rule gives them on a host: group render, mode 0660.
uid=${SPYRE_USER_UID:-1000}
printf 'root:x:0:0:root:/root:/bin/sh\nspyre:x:%s:%s:Spyre user:/home/spyre:/bin/sh\n' \
	"$uid" "$uid" > /etc/passwd
printf 'root:x:0:\nrender:x:990:spyre\nspyre:x:%s:\n' "$uid" > /etc/group
mkdir -p /home/spyre
chown "$uid:$uid" /home/spyre
accel_policy() {
	for n in /dev/accel/accel*; do
		[ -e "$n" ] || continue
		chgrp render "$n" && chmod 0660 "$n"
	done
}

workdir=/root
[ -z "$SPYRE_WORKDIR" ] || workdir=$(echo "$SPYRE_WORKDIR" | base64 -d)
if [ -n "$SPYRE_SHARE" ]; then
	share=$(echo "$SPYRE_SHARE" | base64 -d)
	mkdir -p "$share"
	modprobe 9pnet_virtio 2>/dev/null
	modprobe 9p 2>/dev/null
	if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=none \
		spyre_share "$share"; then
		share_failed="guest: cannot mount the shared directory $share"
		echo "$share_failed" > /dev/console
	fi
fi

case "$SPYRE_MODE" in
shell)
	echo "Spyre test guest: $(uname -r). 'modprobe spyre' loads the driver; exit powers off."
	[ -z "$share" ] || echo "The host's $share is shared here; the shell starts in $workdir."
	cd "$workdir" 2>/dev/null || cd /root
	setsid cttyhack sh -l
	;;
*)
	out=/dev/ttyS1
	stty -F $out raw -echo 2>/dev/null
	cmd=$(echo "$SPYRE_CMD" | base64 -d)
	in=/dev/console
	[ -z "$SPYRE_STDIN" ] || in=$out
	if [ -n "$share_failed" ]; then
		# The command would run without the files it names.
		echo "$share_failed" > $out
		rc=125
	elif [ -n "$SPYRE_USER_UID" ]; then
		{
			if ! modprobe spyre; then
				echo "guest: modprobe spyre failed"
				rc=125
			else
				accel_policy
				# su keeps the exit status: 128 + N for a signal N.
				su -s /bin/sh spyre -c "cd \"\$0\" && $cmd" "$workdir" < $in
				rc=$?
			fi
			echo "$rc" > /tmp/rc
		} > $out 2>&1
		rc=$(cat /tmp/rc)
	else
		(cd "$workdir" && sh -c "$cmd") < $in > $out 2>&1
		rc=$?
	fi
	echo "SPYRE-EXIT-$SPYRE_NONCE $rc" > $out
	;;
esac
sync
reboot -f
