#!/bin/bash
# The guest's kernel-log scanner (tests/vm/dmesg-check.sh) against real
# kernel logs, as TAP: every tests/host/data/good-*.log must pass, every
# bad-*.log (real KASAN, lockdep, WARN... reports) must fail and be printed.
top=$(cd "$(dirname "$0")/../.." && pwd)
scan=$top/tests/vm/dmesg-check.sh
logs=("$top"/tests/host/data/good-*.log "$top"/tests/host/data/bad-*.log)
echo "TAP version 13"
echo "1..${#logs[@]}"
n=0
for log in "${logs[@]}"; do
	n=$((n + 1))
	name=$(basename "$log")
	out=$("$scan" < "$log")
	rc=$?
	case $name in
	good-*) [ $rc = 0 ] && echo "ok $n - scanner passes $name" ||
		{ echo "not ok $n - scanner passes $name"; printf '%s\n' "$out"; } ;;
	bad-*) if [ $rc = 1 ] && [ -n "$out" ]; then echo "ok $n - scanner fails $name"
		else echo "not ok $n - scanner fails $name (status $rc)"; fi ;;
	esac
done
