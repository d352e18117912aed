#!/bin/bash
# Every installed tool (BUILD_DIR/bin/spyre-*) has a manual page in
# docs/man that formats without warnings and names every option its --help
# names, so the two cannot drift apart.
# usage: man-pages.sh BUILD_DIR     (TAP on stdout)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
b=${1:?usage: man-pages.sh BUILD_DIR}
mapfile -t tools < <(find "$b/bin" -maxdepth 1 -name 'spyre-*' -type f -perm -u+x -printf '%f\n' | sort)
echo "1..$((${#tools[@]} * 2 + 1))"
n=0
if [ ${#tools[@]} -gt 0 ]; then
	echo "ok $((++n)) - ${#tools[@]} tools: ${tools[*]}"
else
	echo "not ok $((++n)) - no spyre-* tool in $b/bin (not built?)"
fi
for t in "${tools[@]}"; do
	page=$top/docs/man/$t.1
	if [ ! -f "$page" ]; then
		echo "not ok $((++n)) - $t has no manual page ($page)"
		echo "not ok $((++n)) - $t: options not compared"
		continue
	fi
	warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
	if [ -z "$warnings" ]; then
		echo "ok $((++n)) - $t.1 formats without warnings"
	else
		echo "not ok $((++n)) - $t.1 formats with warnings:"
		echo "$warnings" | sed 's/^/# /'
	fi
	text=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -E UTF-8 -l "$page" 2>/dev/null | col -b)
	mapfile -t opts < <("$b/bin/$t" --help 2>&1 | grep -oE '(^|[][ |,(])--?[a-z][a-z-]*' |
		sed 's/^[][ |,(]//' | sort -u)
	missing=()
	for o in "${opts[@]}"; do
		grep -qF -- "$o" <<< "$text" || missing+=("$o")
	done
	if [ ${#opts[@]} -gt 0 ] && [ ${#missing[@]} -eq 0 ]; then
		echo "ok $((++n)) - $t.1 names all ${#opts[@]} options of --help (${opts[*]})"
	else
		echo "not ok $((++n)) - $t.1 lacks options its --help names: ${missing[*]:-(--help named none)}"
	fi
done
