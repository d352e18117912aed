# TAP helpers the distro suite's guest scripts source (user-path.sh,
# next-boot.sh): check NAME COMMAND... runs COMMAND, prints ok/not ok and
# the tail of its output; $fails counts the failures.
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() {
	name=$1; shift
	if "$@" > /tmp/check.out 2>&1; then ok "$name"; else notok "$name"; fi
	sed 's/^/  # /' /tmp/check.out | tail -40
}
