#!/bin/bash
# libspyre flows one way: which object file calls which, read from the
# objects' symbol tables (nm), must form no circle, and the runtime core
# must not call up into its clients (the op library, the kernel builder).
# usage: library-layers.sh BUILD_DIR     (TAP on stdout)
set -euo pipefail
B=${1:?usage: $0 BUILD_DIR}
obj=$B/obj/libspyre
core="object driver device discover encode error event fault graph kernel log memory peer stream trace"
clients="ops/ kernel_builder"

src=$(cd "$(dirname "$0")/../../libspyre" && pwd)
# The library's sources now (an object left from a removed file does not count).
mapfile -t objs < <(cd "$src" && find . -path ./examples -prune -o -path ./tools -prune -o \
	-name '*.c' -print | sed 's|^\./||; s|\.c$||' | sort)
for o in "${objs[@]}"; do
	if [ ! -f "$obj/$o.o" ]; then
		echo "1..1"; echo "not ok 1 - $obj/$o.o is missing (build the library first)"; exit 1
	fi
done
declare -A def
for o in "${objs[@]}"; do
	while read -r sym; do def[$sym]=$o; done < <(nm --defined-only -g "$obj/$o.o" | awk '{print $3}')
done
# Edges "user used" (one per pair of files).
edges=$(for o in "${objs[@]}"; do
	nm -u "$obj/$o.o" | awk '{print $2}' | while read -r sym; do
		d=${def[$sym]:-}
		if [ -n "$d" ] && [ "$d" != "$o" ]; then echo "$o $d"; fi
	done
done | sort -u)

echo "1..3"
n=1
# 1: no circle (tsort reports one on stderr).
if cycle=$(echo "$edges" | tsort 2>&1 >/dev/null) && [ -z "$cycle" ]; then
	echo "ok $n - no circle among $(echo "$edges" | wc -l) file dependencies"
else
	echo "not ok $n - a circle among libspyre's files:"; echo "$cycle" | sed 's/^/# /'
fi
n=$((n + 1))
# 2: the core calls nothing of its clients.
bad=$(echo "$edges" | while read -r user used; do
	case " $core " in *" $user "*) ;; *) continue ;; esac
	for c in $clients; do case $used in $c*) echo "$user -> $used" ;; esac; done
done || true)
if [ -z "$bad" ]; then
	echo "ok $n - the runtime core calls nothing of the op library or the kernel builder"
else
	echo "not ok $n - the core calls up into a client:"; echo "$bad" | sed 's/^/# /'
fi
n=$((n + 1))
# 3: the bottom layer (errors, logs) calls nothing above it.
bad=$(echo "$edges" | awk '($1 == "error" || $1 == "log") && $2 != "error" && $2 != "log"')
if [ -z "$bad" ]; then
	echo "ok $n - error.c and log.c call nothing above them"
else
	echo "not ok $n - the bottom layer calls up:"; echo "$bad" | sed 's/^/# /'
fi
# The graph, for the reader.
echo "$edges" | sed 's/^/# uses: /'
