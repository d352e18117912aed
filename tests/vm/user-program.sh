#!/bin/bash
# The user's path, as TAP: the README's example written to a directory
# outside the checkout, built there with exactly `pkg-config --cflags --libs
# spyre` (the in-tree spyre.pc), and run on the card with scripts/spyre-vm as
# the unprivileged user; then what spyre-vm says about a program that exits
# non-zero, crashes, hangs, is interrupted (Ctrl-C), or lies outside the
# shared directory.
# Runs on the host (each case boots a guest).  usage: user-program.sh BUILD_DIR
set -uo pipefail
B=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
vm=$top/scripts/spyre-vm
work=$(mktemp -d /tmp/spyre-user.XXXXXX)
trap 'rm -rf "$work"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1))
	echo "not ok $n - $1"
	[ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/  # /'
}
# Run spyre-vm in $work; sets out (stdout+stderr) and rc.
run() {
	out=$(cd "$work" && "$vm" "$@" 2>&1)
	rc=$?
}

echo "TAP version 13"
echo "1..9"

# mktemp's 0700: the guest user (uid 1000 when the caller is root) may not
# enter it, and spyre-vm says so before booting anything.
if [ "$(id -u)" = 0 ]; then
	run -- true
	if [ $rc = 2 ] && grep -q 'cannot enter .*mode 700' <<< "$out"; then
		ok "a directory the guest user cannot enter is refused with a message"
	else
		not_ok "a directory the guest user cannot enter is refused with a message" "status $rc: $out"
	fi
else
	ok "a directory the guest user cannot enter is refused with a message # SKIP not root"
fi
chmod 755 "$work"

# The README's example, taken from the README itself.
awk '/^```c$/ { on = 1; next } /^```$/ { on = 0 } on' "$top/README.md" > "$work/hello.c"
if out=$(cd "$work" && PKG_CONFIG_PATH=$B/lib/pkgconfig &&
	export PKG_CONFIG_PATH && cc hello.c $(pkg-config --cflags --libs spyre) -o hello 2>&1); then
	ok "README example builds outside the checkout with pkg-config alone"
else
	not_ok "README example builds outside the checkout with pkg-config alone" "$out"
fi

run -- ./hello
if [ $rc = 0 ] && grep -Eq '^0000:[0-9a-f]{2}:00\.0: 32 cores, [0-9]+ MiB$' <<< "$out"; then
	ok "spyre-vm runs it on the card (output and status 0)"
else
	not_ok "spyre-vm runs it on the card (output and status 0)" "status $rc: $out"
fi

# As whom, and may that user open the card?
cat > "$work/whoami.sh" <<'EOF'
#!/bin/sh
echo "uid $(id -u) groups $(id -Gn)"
./hello > /dev/null && echo "opened the card"
EOF
chmod +x "$work/whoami.sh"
run -- ./whoami.sh
if [ $rc = 0 ] && grep -q '^uid [1-9][0-9]* groups .*render' <<< "$out" &&
	grep -q '^opened the card$' <<< "$out"; then
	ok "the program runs as a non-root user in group render that opens /dev/accel"
else
	not_ok "the program runs as a non-root user in group render that opens /dev/accel" "status $rc: $out"
fi

# Exit status and arguments pass through.
printf '#!/bin/sh\necho "[$1] [$2]"\nexit 3\n' > "$work/args.sh"
chmod +x "$work/args.sh"
run -- ./args.sh "two words" 'q"uote'
if [ $rc = 3 ] && grep -qxF '[two words] [q"uote]' <<< "$out"; then
	ok "arguments reach the program intact and its exit status comes back"
else
	not_ok "arguments reach the program intact and its exit status comes back" "status $rc: $out"
fi

# A crash: SIGSEGV is named.
printf '#include <signal.h>\nint main(void) { raise(SIGSEGV); return 0; }\n' > "$work/crash.c"
cc "$work/crash.c" -o "$work/crash"
run -- ./crash
if [ $rc = 139 ] && grep -q 'crash was killed by signal 11 (SIGSEGV)' <<< "$out"; then
	ok "a crashing program is reported with its signal (status 139)"
else
	not_ok "a crashing program is reported with its signal (status 139)" "status $rc: $out"
fi

# A hang: stopped at the timeout, nothing left running.
printf '#!/bin/sh\nsleep 1000\n' > "$work/hang.sh"
chmod +x "$work/hang.sh"
run --timeout 30 -- ./hang.sh
if [ $rc = 124 ] && grep -q 'hang.sh did not finish within 30s' <<< "$out" &&
	! pgrep -f "share,path=$work" > /dev/null; then
	ok "a hanging program is stopped at --timeout (status 124), no QEMU left"
else
	not_ok "a hanging program is stopped at --timeout (status 124), no QEMU left" "status $rc: $out"
fi

# Ctrl-C (SIGINT to the whole process group, as a terminal sends it): the
# guest is stopped and the run leaves nothing behind in the build's vm/.
# The subshell is not a group leader (no job control here), so setsid makes
# it, spyre-vm, the leader of a new group without forking: its pid is the
# group's.  A background job of a script starts with SIGINT ignored, and a
# shell cannot trap a signal ignored when it started: env gives spyre-vm
# SIGINT's default back, as a terminal's foreground job has it.
printf '#!/bin/sh\necho started\nsleep 1000\n' > "$work/wait.sh"
chmod +x "$work/wait.sh"
leftovers() { find "$B/vm" -mindepth 1 ! -name console.log 2>/dev/null | sort; }
before=$(leftovers)
(cd "$work" && exec setsid env --default-signal=INT "$vm" --timeout 120 -- ./wait.sh > "$work/int.out" 2>&1) &
pid=$!
for _ in $(seq 300); do
	grep -q '^started$' "$work/int.out" 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || break	# it ended on its own: reported below
	sleep 1
done
kill -INT -- -"$pid" 2>/dev/null
wait "$pid"
rc=$?
if [ $rc = 130 ] && ! pgrep -f "share,path=$work" > /dev/null && [ "$(leftovers)" = "$before" ] &&
	grep -q 'interrupted; the guest was stopped' "$work/int.out" &&
	! grep -q 'killed by signal' "$work/int.out"; then
	ok "an interrupted run says so, stops QEMU (status 130) and leaves no files in vm/"
else
	not_ok "an interrupted run says so, stops QEMU (status 130) and leaves no files in vm/" \
		"status $rc; left: $(leftovers); $(cat "$work/int.out")"
fi

# A program the guest cannot see.
run -- /bin/true
if [ $rc = 2 ] && grep -q 'outside' <<< "$out"; then
	ok "a program outside the shared directory is refused with a message"
else
	not_ok "a program outside the shared directory is refused with a message" "status $rc: $out"
fi
