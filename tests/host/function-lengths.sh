#!/bin/bash
# No function over 100 lines in the driver, the QEMU device (and its
# engine), libspyre's library and its tools; examples and tests aside.
# Counts from the line of a function's opening brace (column 0, after a
# line ending in ")") to its closing brace in column 0: the kernel's and
# QEMU's style.  TAP on stdout; the ten longest as comments.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
max=100
cd "$top"
mapfile -t files < <(git ls-files 'driver/*.c' 'qemu-device/*.c' 'libspyre/*.c' 2>/dev/null |
	grep -v -e '/tests/' -e '^libspyre/examples/' || true)
if [ ${#files[@]} -eq 0 ]; then
	mapfile -t files < <(find driver qemu-device libspyre -name '*.c' \
		-not -path '*/tests/*' -not -path 'libspyre/examples/*' | sort)
fi
lengths=$(awk '
FNR == 1 { start = 0; prev = "" }
/^\{/ && prev ~ /\)[ \t]*$/ { start = FNR; name = sig }
/^\}/ && start { printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, name; start = 0 }
!/^[ \t{}#\/]/ && /\(/ { s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ \t*]+/); sig = w[n] }
{ prev = $0 }' "${files[@]}" | sort -rn)
echo "1..1"
over=$(echo "$lengths" | awk -v max=$max '$1 > max')
if [ -z "$over" ]; then
	echo "ok 1 - no function over $max lines in ${#files[@]} files"
else
	echo "not ok 1 - functions over $max lines:"
	echo "$over" | sed 's/^/# /'
fi
echo "$lengths" | head -10 | sed 's/^/# longest: /'
