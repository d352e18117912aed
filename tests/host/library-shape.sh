#!/bin/bash
# libspyre's shape as a shared library, as TAP: SONAME, exactly the exported
# symbols the version script lists, a usable pkg-config file, and a public
# header that compiles on its own.  usage: library-shape.sh BUILD_DIR
B=$(cd "$1" && pwd)
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
# Old nodes keep their old symbol (spyre_stream_get_fault@SPYRE_0.2, for
# programs built before its record grew) beside the default (@@).
versioned() { nm -D --defined-only "$lib" | awk '$2 == "T"' | grep -v '@@\?SPYRE_0' && return 1 || true; }
old_fault_record() {
	nm -D --defined-only "$lib" | grep -q ' spyre_stream_get_fault@SPYRE_0.2$' &&
	nm -D --defined-only "$lib" | grep -q ' spyre_stream_get_fault@@SPYRE_0.4$'
}
# The README's example built with exactly what pkg-config gives, from a
# directory outside the checkout: in-tree spyre.pc, then a DESTDIR install.
readme_example() {	# dir
	awk '/^```c$/ { on = 1; next } /^```$/ { on = 0 } on' "$top/README.md" > "$1/example.c"
}
pkgconfig_build() {	# pc_dir
	local tmp rc
	tmp=$(mktemp -d)
	readme_example "$tmp"
	# shellcheck disable=SC2046
	(cd "$tmp" && PKG_CONFIG_PATH=$1 && export PKG_CONFIG_PATH &&
		cc -std=c11 -Wall -Werror example.c $(pkg-config --cflags --libs spyre) -o example)
	rc=$?
	rm -rf "$tmp"
	return $rc
}
pkgconfig() { pkgconfig_build "$B/lib/pkgconfig"; }
# make install into a DESTDIR: the files, spyre.pc naming the installed
# paths, the four public headers compiling alone, the example building and
# loading the installed library, and make uninstall removing it all.
install_destdir() {
	local d rc=0 h
	d=$(mktemp -d)
	make -s -C "$top" install DESTDIR="$d" PREFIX=/opt/spyre > /dev/null || { rm -rf "$d"; return 1; }
	for f in lib/libspyre.so.0 lib/libspyre.so lib/pkgconfig/spyre.pc bin/spyre-smi bin/spyre-prof \
		include/spyre/spyre.h include/spyre/spyre_ops.h \
		include/spyre/spyre_kernel_builder.h include/spyre/spyre_program.h; do
		[ -e "$d/opt/spyre/$f" ] || { echo "missing /opt/spyre/$f"; rc=1; }
	done
	grep -qx 'includedir=/opt/spyre/include' "$d/opt/spyre/lib/pkgconfig/spyre.pc" ||
		{ echo "spyre.pc does not name the installed includedir"; rc=1; }
	# pkg-config gives /opt/spyre paths; point them into the DESTDIR as a
	# packager's sysroot does.
	sed -i "s|=/opt/spyre|=$d/opt/spyre|" "$d/opt/spyre/lib/pkgconfig/spyre.pc"
	for h in spyre.h spyre_ops.h spyre_kernel_builder.h spyre_program.h; do
		printf '#include <spyre/%s>\nint header_check;\n' "$h" | cc -std=c11 -pedantic -Wall -Werror \
			-I"$d/opt/spyre/include" -x c -fsyntax-only - || { echo "$h alone"; rc=1; }
	done
	pkgconfig_build "$d/opt/spyre/lib/pkgconfig" || rc=1
	cp "$top/libspyre/examples/bias_gelu.c" "$d/k.c"
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Werror "$d/k.c" -o "$d/k" $(PKG_CONFIG_PATH=$d/opt/spyre/lib/pkgconfig \
		pkg-config --cflags --libs spyre) -lm || { echo "bias_gelu against the install"; rc=1; }
	LD_LIBRARY_PATH=$d/opt/spyre/lib ldd "$d/k" | grep -q "$d/opt/spyre/lib/libspyre.so.0" ||
		{ echo "the example does not load the installed library"; rc=1; }
	make -s -C "$top" uninstall DESTDIR="$d" PREFIX=/opt/spyre > /dev/null || rc=1
	left=$(find "$d/opt" -type f -o -type l)
	[ -z "$left" ] || { echo "left after uninstall: $left"; rc=1; }
	rm -rf "$d"
	return $rc
}
header_alone_c() { echo '#include "spyre/spyre.h"' | cc -std=c11 -pedantic -Wall -Werror -I"$top/libspyre/include" -x c -fsyntax-only -; }
header_alone_cxx() { printf "#include <spyre/%s>\n" spyre.h spyre_ops.h spyre_kernel_builder.h | c++ -Wall -Werror -Wextra -I"$B/include" -x c++ -fsyntax-only -; }

echo "TAP version 13"
echo "1..8"
check "SONAME is libspyre.so.0" soname
check "exports exactly the version script's symbols" exports
check "every export carries a version node SPYRE_0 or SPYRE_0.N" versioned
check "spyre_stream_get_fault keeps its 0.2 record for older programs" old_fault_record
check "README example builds with pkg-config --cflags --libs spyre alone (in-tree)" pkgconfig
check "make install DESTDIR= PREFIX=: files, spyre.pc, headers, example, uninstall" install_destdir
check "public header compiles alone as C11" header_alone_c
check "public headers compile as C++ (spyre.h, spyre_ops.h, spyre_kernel_builder.h)" header_alone_cxx
