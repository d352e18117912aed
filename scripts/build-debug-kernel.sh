#!/bin/bash
# Build the debug test kernel from Debian's linux-source-6.12 with
# scripts/kernel/debug.config merged onto tinyconfig.  Cached in
# $SPYRE_CACHE/kernel-debug-<source version>-<config hash>; prints its dir.
set -euo pipefail
. "$(dirname "$0")/common.sh"
export PATH=/usr/bin:$PATH

[ -f "$KERNEL_ROOT/.done" ] || "$SPYRE_TOP/scripts/setup.sh" >&2
pkgver=$(cat "$KERNEL_ROOT/.pkgver")
src=$(debug_kernel_source)
fragment=$DEBUG_FRAGMENT

if [ ! -f "$src/.done" ]; then
	tmp=$SPYRE_CACHE/debs/linux-source
	rm -rf "$tmp" "$src"
	mkdir -p "$tmp" "$src"
	(cd "$tmp" && apt-get download -q "linux-source-$KERNEL_SERIES=$pkgver") >&2
	dpkg-deb --fsys-tarfile "$tmp"/linux-source-*.deb |
		tar -xO --wildcards './usr/src/linux-source-*.tar.xz' |
		tar -xJ -C "$src" --strip-components=1
	rm -rf "$tmp"
	# The out-of-tree driver cannot select these helpers; let the config ask.
	sed -i '/^config DRM_SCHED$/,/^$/s/^\ttristate$/\ttristate "DRM GPU scheduler"/;
		/^config DRM_GEM_SHMEM_HELPER$/,/^$/s/^\ttristate$/\ttristate "DRM GEM shmem helpers"/' \
		"$src/drivers/gpu/drm/Kconfig"
	touch "$src/.done"
fi

out=$(debug_kernel_dir)
if [ ! -f "$out/.done" ]; then
	mkdir -p "$out"
	start=$(date +%s)
	make -C "$src" O="$out" tinyconfig >&2
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$fragment" >&2
	make -C "$src" O="$out" olddefconfig >&2
	# Every line of the fragment must have survived olddefconfig.
	missing=0
	while IFS= read -r line; do
		case "$line" in CONFIG_*=n) want="# ${line%=n} is not set" ;; CONFIG_*) want=$line ;; *) continue ;; esac
		grep -qxF "$want" "$out/.config" || { echo "debug kernel: $line did not stick" >&2; missing=1; }
	done < "$fragment"
	[ $missing = 0 ] || exit 1
	make -C "$src" O="$out" -j"$(nproc)" bzImage modules >&2
	make -C "$src" O="$out" INSTALL_MOD_PATH="$out/root" INSTALL_MOD_STRIP=1 modules_install >&2
	echo "$(($(date +%s) - start))" > "$out/.build-seconds"
	touch "$out/.done"
fi
echo "$out"
