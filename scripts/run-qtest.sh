#!/bin/bash
# The qtest suite: QEMU's own qtest framework against the card, no guest.
#  - qos-test's card paths (tests/qtest/spyre-test.c: the "spyre" libqos
#    driver node on the q35 machine's pci-bus), one process per test so a
#    crash or hang costs one result, not the rest;
#  - QEMU's device-introspect-test, which lists and introspects every device
#    of this build, the card included.
# Prints one TAP stream.  Built by scripts/build-qemu.sh --qtest.
# usage: run-qtest.sh [PATTERN]   (only test paths matching the grep PATTERN)
set -uo pipefail
. "$(dirname "$0")/common.sh"

build=$SPYRE_CACHE/qemu-build
qos=$build/tests/qtest/qos-test
introspect=$build/tests/qtest/device-introspect-test
pattern=${1:-.}
per_test_timeout=${SPYRE_QTEST_TIMEOUT:-120}

for b in "$build/qemu-system-x86_64" "$qos" "$introspect"; do
	if [ ! -x "$b" ]; then
		echo "Bail out! $b missing: run scripts/build-qemu.sh --qtest"
		exit 1
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# libqtest runs "$QTEST_QEMU_BINARY <args>" and takes the target from the
# name's "-system-<arch>" suffix; firmware comes from the cache (-L), as for
# make bench, so a wrapper of the same name adds it.
mkdir "$tmp/bin"
cat > "$tmp/bin/qemu-system-x86_64" <<WRAP
#!/bin/sh
exec "$build/qemu-system-x86_64" -L "$FIRMWARE_ROOT/usr/share/seabios" \
	-L "$FIRMWARE_ROOT/usr/share/qemu" "\$@"
WRAP
chmod +x "$tmp/bin/qemu-system-x86_64"
export QTEST_QEMU_BINARY=$tmp/bin/qemu-system-x86_64
# Each qtest binary makes its sockets in TMPDIR: keep them in ours.
export TMPDIR=$tmp

# Test paths from a binary's -l: plain lines with GLib 2.74 (Debian 12),
# TAP comments ("# /path") with GLib 2.84 (Debian 13).
list_paths() { "$@" -l 2>/dev/null | sed -n 's|^\(# \)\{0,1\}\(/[^ ]*\)$|\2|p'; }
tests=()	# "binary mode path"
while read -r p; do tests+=("$qos quick $p"); done < <(
	list_paths "$qos" | grep '/spyre/' | grep -e "$pattern")
while read -r p; do tests+=("$introspect slow $p"); done < <(
	list_paths "$introspect" -m slow | grep -e "$pattern")

if [ ${#tests[@]} = 0 ]; then
	echo "Bail out! no qtest matches '$pattern'"
	exit 1
fi
echo "1..${#tests[@]}"
n=0
failed=0
for t in "${tests[@]}"; do
	read -r bin mode path <<< "$t"
	n=$((n + 1))
	case $path in
	*/device/introspect/concrete/defaults/none) ;;
	*/device/introspect/concrete/defaults/*)
		# A real machine with its default devices wants a VGA card, which
		# this minimal build (only what q35 and the card need) lacks;
		# .../nodefaults/<machine> introspects every device on it.
		echo "ok $n - $path # SKIP no default VGA device in this QEMU build"
		continue ;;
	esac
	timeout -k 5 "$per_test_timeout" "$bin" --tap -m "$mode" -p "$path" \
		> "$tmp/out" 2>&1
	rc=$?
	if [ $rc = 0 ] && grep -q '^ok 1 ' "$tmp/out" && ! grep -q '^not ok' "$tmp/out"; then
		echo "ok $n - $path"
	else
		failed=$((failed + 1))
		echo "not ok $n - $path"
		[ $rc = 124 ] && echo "  # timed out after ${per_test_timeout}s"
		[ $rc = 0 ] || echo "  # exit status $rc"
		grep -v '^# \(Start\|End\) of ' "$tmp/out" | sed 's/^/  # /'
	fi
done
[ $failed = 0 ]
