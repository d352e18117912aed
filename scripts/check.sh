#!/bin/bash
# Run every test suite; each prints "<suite>: N passed, N failed", and the
# last line is the sum.  Exit status 1 if anything failed.
# SPYRE_SUITES limits the suites run (default: all), e.g. SPYRE_SUITES=host.
set -uo pipefail
. "$(dirname "$0")/common.sh"

B=${SPYRE_BUILD:-$SPYRE_TOP/build}
suites=${SPYRE_SUITES:-host qtest kunit vm vm-debug distro torch}
tap=$SPYRE_TOP/tests/lib/tap-summary.sh
counts_dir=$(mktemp -d)
trap 'rm -rf "$counts_dir"' EXIT

# A test program that was not built fails its suite (it would print nothing).
run_test() {
	if [ -x "$1" ]; then
		"$@"
	else
		echo "Bail out! $1 is missing (not built)"
	fi
}

suite_host() {
	run_test "$B/tests/host/test_libspyre"
	run_test "$B/tests/host/test_libspyre_san"
	run_test "$SPYRE_TOP/tests/host/library-shape.sh" "$B"
	run_test "$SPYRE_TOP/tests/host/library-layers.sh" "$B"
	run_test "$SPYRE_TOP/tests/host/function-lengths.sh"
	run_test "$SPYRE_TOP/tests/host/dmesg-scanner.sh"
	run_test "$B/tests/host/test_engine_ops"
	run_test "$B/tests/host/test_engine_ops_san"
	run_test "$B/tests/host/test_engine_loader"
	run_test "$B/tests/host/test_engine_loader_san"
	run_test "$B/tests/host/test_engine_run"
	run_test "$B/tests/host/test_engine_run_san"
	run_test "$B/tests/host/test_engine_broken"
	run_test "$B/tests/host/test_engine_broken_san"
	run_test "$B/tests/host/test_engine_corpus_san" "$SPYRE_TOP/tests/fuzz/corpus"
	run_test "$B/tests/host/test_ops"
	run_test "$B/tests/host/test_ops_san"
	run_test "$B/tests/host/test_kernel_builder"
	run_test "$B/tests/host/test_kernel_builder_san"
	run_test "$B/tests/host/test_trace_san"
	run_test "$SPYRE_TOP/tests/host/spyre-prof.sh" "$B"
	run_test "$SPYRE_TOP/tests/host/man-pages.sh" "$B"
	run_test "$B/tests/host/test_smi_fdinfo"
}

# qtest: QEMU's qtest framework against the card (libqos "spyre" node in
# qos-test, and QEMU's device-introspect-test), no guest.
suite_qtest() {
	"$SPYRE_TOP/scripts/run-qtest.sh"
}

# The card gets a non-default mem-size so the query test proves it is read.
VM_MEM_SIZE=3G
VM_MEM_BYTES=$((3 << 30))
vm_suite() {	# kernel flavour
	"$SPYRE_TOP/scripts/vm-run.sh" --kernel "$1" --mem-size $VM_MEM_SIZE --timeout 900 -- \
		"SPYRE_EXPECT_MEM_BYTES=$VM_MEM_BYTES /usr/share/spyre/tests/run-vm-tests.sh"
	local rc=$?
	# A guest that died or hung has not reported its plan: make it a failure.
	[ $rc = 0 ] || echo "Bail out! guest exited with status $rc"
}
# A guest of its own for tests that need other cards: load the driver, run
# TEST, then check the kernel log.
guest_with_log_check() {	# kernel flavour, what, TEST, vm-run options...
	local kernel=$1 what=$2 test=$3
	shift 3
	"$SPYRE_TOP/scripts/vm-run.sh" --kernel "$kernel" "$@" -- \
		"T=/usr/share/spyre/tests
		 modprobe spyre || echo 'Bail out! cannot load spyre'
		 \$T/$test
		 echo 1..1
		 if dmesg | \$T/dmesg-check.sh > /tmp/dmesg.out; then
			echo 'ok 1 - $what: kernel log clean'
		 else
			echo 'not ok 1 - $what: kernel log clean'; cat /tmp/dmesg.out
		 fi"
	local rc=$?
	[ $rc = 0 ] || echo "Bail out! $what guest exited with status $rc"
}
# PRIME between two cards (tests/vm/test_prime2.c).
two_card_suite() { guest_with_log_check "$1" "two cards" test_prime2 --cards 2 --timeout 300; }
# Eight cards, as in one I/O drawer: each found and usable, peer copies
# around the ring and between processes on every card (tests/vm/test_peer.c),
# then eight processes on each card at once (tests/vm/test_stress.c).
eight_card_suite() {
	guest_with_log_check "$1" "eight cards" \
		"test_peer 8; TAP_ONLY=eight_processes_on_every_card \$T/test_stress" \
		--cards 8 --timeout 900
}
# A 128 GiB card (the real card's largest): a 16 GiB buffer, many small
# ones, exhaustion, a process killed while allocating (tests/vm/test_bigmem.c).
big_card_suite() {
	guest_with_log_check "$1" "128 GiB card" test_bigmem --mem-size 128G --timeout 600
}
# The user's path: a program built outside the checkout, run with spyre-vm.
user_program_suite() { "$SPYRE_TOP/tests/vm/user-program.sh" "$B"; }
suite_vm() {
	vm_suite stock; two_card_suite stock; eight_card_suite stock; big_card_suite stock
	user_program_suite
}

# vm-debug: the same selftests under KASAN, lockdep and kmemleak, then a
# negative test: a deliberate use-after-free must be caught by the scanner.
suite_vm-debug() {
	vm_suite debug
	two_card_suite debug
	eight_card_suite debug
	big_card_suite debug
	echo "1..1"
	local out
	out=$("$SPYRE_TOP/scripts/vm-run.sh" --kernel debug --timeout 600 -- \
		'modprobe spyre_kunit inject_use_after_free=1 >/dev/null 2>&1
		 dmesg | /usr/share/spyre/tests/dmesg-check.sh && echo SCANNER-MISSED
		 echo SCANNER-DONE' 2>&1)
	if grep -q "dmesg: .*KASAN: slab-use-after-free" <<< "$out" &&
	   grep -q SCANNER-DONE <<< "$out" && ! grep -q SCANNER-MISSED <<< "$out"; then
		echo "ok 1 - dmesg scanner catches an injected KASAN use-after-free"
	else
		echo "not ok 1 - dmesg scanner catches an injected KASAN use-after-free"
		sed 's/^/  # /' <<< "$out"
	fi
}

# distro: the Debian packages (make deb) installed in the Debian 13 guest
# the way a user installs them: apt, DKMS, udev, users (tests/distro/).
suite_distro() { "$SPYRE_TOP/tests/distro/run.sh" "$B"; }

# torch: python3-torch-spyre (make torch) with the four packages in the
# Debian 13 guest, two cards: ops against the CPU, allocator, streams,
# torch.compile, the GPT example, misuse (tests/torch/).
suite_torch() { "$SPYRE_TOP/tests/torch/run.sh" "$B"; }

run_tap_suite() {	# name
	echo "== suite $1"
	"suite_$1" 2>&1 | "$tap" "$1" "$counts_dir/$1"
}

run_kunit_suite() {
	local kunit_py
	kunit_py=$(debug_kernel_source)/tools/testing/kunit/kunit.py
	echo "== suite kunit"
	"$SPYRE_TOP/scripts/vm-run.sh" --kernel debug --timeout 600 -- \
		'dmesg -c >/dev/null; modprobe spyre_kunit; dmesg' 2>&1 |
		"$SPYRE_TOP/tests/lib/kunit-summary.py" "$kunit_py" kunit "$counts_dir/kunit"
}

for s in $suites; do
	case $s in
	kunit) run_kunit_suite ;;
	*) run_tap_suite "$s" ;;
	esac
done

awk '{ p += $1; f += $2; s += $3 }
	END {
		line = sprintf("%d passed, %d failed", p, f)
		if (s) line = line sprintf(", %d skipped", s)
		print line
		exit f ? 1 : 0
	}' "$counts_dir"/*
