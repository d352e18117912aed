#!/bin/bash
# spyre-prof on fixture traces (tests/host/data/traces/), as TAP: the text,
# --model and --json summaries of a trace written like libspyre's, the bare
# array form, and every kind of bad input with its exit status and message
# (docs/runtime.md "spyre-prof").  usage: spyre-prof.sh BUILD_DIR
B=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
prof=$B/bin/spyre-prof
data=$(cd "$(dirname "$0")/data/traces" && pwd)
n=0
check() {	# name command...
	local name=$1 out; shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then echo "ok $n - $name"; else
		echo "not ok $n - $name"; printf '%s\n' "$out" | sed 's/^/  # /'; fi
}
# The output of spyre-prof ARGS (run in the data directory) is exactly FILE.
same() {	# expected_file args...
	local want=$1 got rc; shift
	got=$(cd "$data" && "$prof" "$@" 2>&1); rc=$?
	[ $rc = 0 ] || { echo "exit status $rc"; echo "$got"; return 1; }
	diff <(echo "$got") "$data/$want"
}
# spyre-prof ARGS exits with STATUS, prints nothing on stdout and a stderr
# matching PATTERN.
refuses() {	# status pattern args...
	local want=$1 pat=$2 out err rc; shift 2
	err=$(cd "$data" && "$prof" "$@" 2>&1 >/tmp/spyre-prof-test.$$); rc=$?
	out=$(cat /tmp/spyre-prof-test.$$); rm -f /tmp/spyre-prof-test.$$
	[ $rc = "$want" ] || { echo "exit status $rc, want $want: $err"; return 1; }
	[ -z "$out" ] || { echo "stdout not empty: $out"; return 1; }
	grep -qE -- "$pat" <<< "$err" || { echo "stderr: $err"; echo "want: $pat"; return 1; }
}
# The trace on standard input is named "-".
stdin_same() {
	diff <("$prof" - < "$data/array.json" 2>&1) <(sed '1s/^array\.json:/-:/' "$data/array.txt")
}
json_valid() { (cd "$data" && "$prof" --json good.json) | python3 -m json.tool > /dev/null; }

echo "1..19"
[ -x "$prof" ] || { echo "Bail out! $prof is missing (make tools)"; exit 1; }
check "the text summary: kernels by time with share, model time, copies with bandwidth" \
	same good.txt good.json
check "--model: kernel times from device_ns" same good-model.txt --model good.json
check "the card clock of each device open: mixed when they differ" \
	sh -c "'$prof' '$data/mixed-clocks.json' | grep -qx 'card clock: mixed: device opens on different clocks'"
check "--json: the same summary as JSON" same good-json.txt --json good.json
if command -v python3 > /dev/null; then
	check "--json output parses as JSON" json_valid
else
	n=$((n + 1)); echo "ok $n - --json output parses as JSON # SKIP no python3"
fi
check "a bare array of events (Chrome's array form) is a trace" same array.txt array.json
check "standard input as -" stdin_same
check "no events: a summary saying so" same empty-events.txt empty-events.json
check "no traceEvents: not a trace, status 3" \
	refuses 3 'no-events.json: no "traceEvents" array: not a trace' no-events.json
check "a truncated file: status 3 with where" \
	refuses 3 'truncated.json: not a trace: the file ends early .*\(truncated\?\) at line 8, column 17' \
	truncated.json
check "not JSON: status 3" refuses 3 'not-json.json: not a trace: not JSON at line 1, column 1' \
	not-json.json
check "data after the JSON: status 3" \
	refuses 3 'trailing.json: not a trace: more data after the JSON value at line 1' trailing.json
check "nesting past 64 levels: status 3" refuses 3 'deep.json: not a trace: nested too deeply' \
	deep.json
check "a bad escape: status 3" refuses 3 'bad-escape.json: not a trace: bad escape in a string' \
	bad-escape.json
check "an empty file: status 3" refuses 3 'not a trace: the file is empty' /dev/null
check "a missing file: status 1" \
	refuses 1 'cannot open no-such-trace.json: No such file or directory' no-such-trace.json
check "a directory: status 1" refuses 1 'cannot read .*: Is a directory' "$data"
check "no file: usage, status 2" refuses 2 'no trace file given'
check "an unknown option: usage, status 2" refuses 2 "unexpected argument '--bogus'" --bogus good.json
