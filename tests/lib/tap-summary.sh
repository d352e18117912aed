#!/bin/bash
# Read TAP on stdin, echo it, and end with "<suite>: N passed, N failed[, N skipped]".
# Exit 1 if any test failed, the plan was not met, or nothing ran.
# usage: tap-summary.sh SUITE [COUNTS_FILE]   (COUNTS_FILE gets "passed failed skipped")
suite=$1
counts=${2:-}
awk -v suite="$suite" -v counts="$counts" '
	{ print; fflush() }
	/^[ \t]*1\.\.[0-9]+/ && !/^[ \t]/ { sub(/^1\.\./, ""); planned += $0 + 0; next }
	/^not ok [0-9]+/ { failed++; next }
	/^ok [0-9]+/ {
		if ($0 ~ /# [Ss][Kk][Ii][Pp]/) skipped++; else passed++
		next
	}
	/^Bail out!/ { bailed = 1 }
	END {
		ran = passed + failed + skipped
		if (ran < planned || bailed) {
			print "# " suite ": " (planned - ran) " planned tests did not report"
			failed += (planned > ran ? planned - ran : 1)
		}
		if (ran == 0 && planned == 0) { print "# " suite ": no tests ran"; failed++ }
		line = sprintf("%s: %d passed, %d failed", suite, passed, failed)
		if (skipped) line = line sprintf(", %d skipped", skipped)
		print line
		if (counts != "") printf "%d %d %d\n", passed, failed, skipped > counts
		exit failed ? 1 : 0
	}'
