#!/bin/sh
# Scan the kernel log (stdin or dmesg) for reports that must fail a test run.
# Prints each report with its context and exits 1 if there is one.
# Allowed: the taint notes that every unsigned out-of-tree module causes.
awk '
	/loading out-of-tree module taints kernel/ { next }
	/module verification failed: signature and\/or required key missing - tainting kernel/ { next }
	# WARNING:/BUG: also head every lockdep report ("WARNING: possible
	# circular locking dependency detected") and KASAN ("BUG: KASAN: ...").
	/WARNING:|BUG:|INFO: possible|Oops|Call Trace:|general protection fault|Kernel panic|KASAN:|UBSAN:|suspected memory leak|[Tt]aint/ {
		bad++; print "  # dmesg: " $0; next
	}
	END { exit bad ? 1 : 0 }' "${1:--}"
