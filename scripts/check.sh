#!/bin/bash
# Run every test suite; each prints "<suite>: N passed, N failed", and the
# last line is the sum.  Exit status 1 if anything failed.
# SPYRE_SUITES limits the suites run (default: all), e.g. SPYRE_SUITES=host.
set -uo pipefail
. "$(dirname "$0")/common.sh"

B=${SPYRE_BUILD:-$SPYRE_TOP/build}
suites=${SPYRE_SUITES:-host vm}
tap=$SPYRE_TOP/tests/lib/tap-summary.sh
counts_dir=$(mktemp -d)
trap 'rm -rf "$counts_dir"' EXIT

suite_host() {
	"$B/tests/host/test_libspyre"
	"$B/tests/host/test_libspyre_san"
	"$SPYRE_TOP/tests/host/library-shape.sh" "$B"
}

# The card gets a non-default mem-size so the query test proves it is read.
VM_MEM_SIZE=3G
VM_MEM_BYTES=$((3 << 30))
suite_vm() {
	"$SPYRE_TOP/scripts/vm-run.sh" --mem-size $VM_MEM_SIZE --timeout 600 -- \
		"SPYRE_EXPECT_MEM_BYTES=$VM_MEM_BYTES /usr/share/spyre/tests/run-vm-tests.sh"
	local rc=$?
	# A guest that died or hung has not reported its plan: make it a failure.
	[ $rc = 0 ] || echo "Bail out! guest exited with status $rc"
}

for s in $suites; do
	echo "== suite $s"
	"suite_$s" 2>&1 | "$tap" "$s" "$counts_dir/$s"
done

awk '{ p += $1; f += $2; s += $3 }
	END {
		line = sprintf("%d passed, %d failed", p, f)
		if (s) line = line sprintf(", %d skipped", s)
		print line
		exit f ? 1 : 0
	}' "$counts_dir"/*
