#!/bin/bash
# libspyre's shape as a shared library, as TAP: SONAME, exactly the exported
# symbols the version script lists, a usable pkg-config file, and a public
# header that compiles on its own.  usage: library-shape.sh BUILD_DIR
B=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
lib=$B/lib/libspyre.so.0
n=0
check() {
	local name=$1; shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then echo "ok $n - $name"; else
		echo "not ok $n - $name"; printf '%s\n' "$out" | sed 's/^/  # /'; fi
}
soname() { readelf -d "$lib" | grep -q 'SONAME.*\[libspyre\.so\.0\]'; }
exports() {
	local want got
	want=$(sed -n 's/^\t\(spyre_[a-z0-9_]*\);$/\1/p' "$top/libspyre/libspyre.map" | sort)
	got=$(nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sed 's/@.*//' | sort)
	diff <(echo "$want") <(echo "$got")
}
versioned() { nm -D --defined-only "$lib" | awk '$2 == "T"' | grep -v '@@SPYRE_0' && return 1 || true; }
pkgconfig() {
	local tmp
	tmp=$(mktemp -d)
	# shellcheck disable=SC2046
	PKG_CONFIG_PATH=$B/lib/pkgconfig cc -std=c11 -Wall -Werror \
		-I"$top/libspyre/include" "$top/libspyre/examples/device_info.c" \
		-o "$tmp/a.out" $(PKG_CONFIG_PATH=$B/lib/pkgconfig pkg-config --libs spyre)
	local rc=$?
	rm -rf "$tmp"
	return $rc
}
header_alone_c() { echo '#include "spyre/spyre.h"' | cc -std=c11 -pedantic -Wall -Werror -I"$top/libspyre/include" -x c -fsyntax-only -; }
header_alone_cxx() { echo '#include "spyre/spyre.h"' | c++ -Wall -Werror -I"$top/libspyre/include" -x c++ -fsyntax-only -; }

echo "TAP version 13"
echo "1..6"
check "SONAME is libspyre.so.0" soname
check "exports exactly the version script's symbols" exports
check "every export carries a version node SPYRE_0 or SPYRE_0.N" versioned
check "pkg-config file builds the example" pkgconfig
check "public header compiles alone as C11" header_alone_c
check "public header compiles alone as C++" header_alone_cxx
