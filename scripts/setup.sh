#!/bin/bash
# Idempotent host set-up: Debian build dependencies, deb-src entries, and the
# downloaded inputs (QEMU source, Linux 6.12 image/headers, busybox, firmware)
# unpacked into the cache.  A second run does no network access.
set -euo pipefail
. "$(dirname "$0")/common.sh"

APT_PKGS="build-essential pkg-config git python3 python3-venv meson ninja-build
	libglib2.0-dev libpixman-1-dev libslirp-dev flex bison bc cpio zstd xz-utils
	libelf-dev libssl-dev dwarves kmod libdrm-dev libudev-dev busybox-static
	dpkg-dev rsync libfdt-dev sparse libopenblas-dev"

# Root installs directly; anyone else through sudo.
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

need_apt_install() {
	local p
	for p in $APT_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || return 0
	done
	return 1
}

# Add deb-src to the existing Debian sources entries (deb822 format) if missing.
enable_deb_src() {
	local f=/etc/apt/sources.list.d/debian.sources
	[ -f "$f" ] || { echo "setup: $f not found; add deb-src entries by hand" >&2; return 1; }
	if grep -q '^Types:.*deb-src' "$f"; then
		return 1
	fi
	$SUDO sed -i 's/^Types: deb$/Types: deb deb-src/' "$f"
	return 0
}

stamp="$SPYRE_CACHE/.setup-$SETUP_VERSION"
if [ -f "$stamp" ] && ! need_apt_install; then
	exit 0
fi

mkdir -p "$SPYRE_CACHE"/{debs,src}
export DEBIAN_FRONTEND=noninteractive
updated=0
if enable_deb_src; then
	$SUDO apt-get update -q
	updated=1
fi
if need_apt_install; then
	[ $updated = 1 ] || $SUDO apt-get update -q
	updated=1
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -q --no-install-recommends $APT_PKGS
fi

# Kernel: resolve the meta packages to their versioned names, download, extract.
fetch_debs() {	# dest pkg...
	local dest=$1; shift
	mkdir -p "$dest"
	(cd "$dest" && apt-get download -q "$@")
}

if [ ! -f "$KERNEL_ROOT/.done" ]; then
	[ $updated = 1 ] || { $SUDO apt-get update -q; updated=1; }
	kver=$(apt-cache depends linux-image-6.12-amd64 | sed -n 's/.*Depends: linux-image-\(6\.12\.[^ ]*-amd64\)$/\1/p' | head -1)
	[ -n "$kver" ] || { echo "setup: cannot resolve linux-image-6.12-amd64" >&2; exit 1; }
	kabi=${kver%-amd64}
	kbuildpkg=$(apt-cache depends "linux-headers-$kver" | sed -n 's/.*Depends: \(linux-kbuild-[^ ]*\)$/\1/p' | head -1)
	tmp="$SPYRE_CACHE/debs/kernel"
	rm -rf "$tmp"
	fetch_debs "$tmp" "linux-image-$kver-unsigned" "linux-headers-$kver" \
		"linux-headers-$kabi-common" "$kbuildpkg" 2>/dev/null ||
	fetch_debs "$tmp" "linux-image-$kver" "linux-headers-$kver" \
		"linux-headers-$kabi-common" "$kbuildpkg"
	rm -rf "$KERNEL_ROOT.tmp"
	mkdir -p "$KERNEL_ROOT.tmp"
	for d in "$tmp"/*.deb; do dpkg -x "$d" "$KERNEL_ROOT.tmp"; done
	# The headers' top Makefile includes the common tree by absolute path;
	# point it into the cache.
	sed -i "s|^include /usr/src/|include $KERNEL_ROOT/usr/src/|" \
		"$KERNEL_ROOT.tmp/usr/src/linux-headers-$kver/Makefile"
	# The image package ships no modules.dep (postinst makes it).
	depmod -b "$KERNEL_ROOT.tmp" "$kver"
	echo "$kver" > "$KERNEL_ROOT.tmp/.kver"
	dpkg-deb -f "$tmp"/linux-headers-"$kver"_*.deb Version > "$KERNEL_ROOT.tmp/.pkgver"
	touch "$KERNEL_ROOT.tmp/.done"
	rm -rf "$KERNEL_ROOT"
	mv "$KERNEL_ROOT.tmp" "$KERNEL_ROOT"
fi

# Firmware blobs Debian's QEMU source strips: SeaBIOS and option ROMs.
if [ ! -f "$FIRMWARE_ROOT/.done" ]; then
	tmp="$SPYRE_CACHE/debs/firmware"
	rm -rf "$tmp"
	fetch_debs "$tmp" seabios qemu-system-data ipxe-qemu
	rm -rf "$FIRMWARE_ROOT"
	mkdir -p "$FIRMWARE_ROOT"
	for d in "$tmp"/*.deb; do dpkg -x "$d" "$FIRMWARE_ROOT"; done
	touch "$FIRMWARE_ROOT/.done"
fi

# QEMU source, Debian's patched tree.
if [ ! -f "$QEMU_SRC/.done" ]; then
	tmp="$SPYRE_CACHE/src/qemu-dl"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	(cd "$tmp" && apt-get source -q qemu)
	srcdir=$(find "$tmp" -maxdepth 1 -mindepth 1 -type d -name 'qemu-*' | head -1)
	[ -n "$srcdir" ] || { echo "setup: apt-get source qemu produced no tree" >&2; exit 1; }
	rm -rf "$QEMU_SRC"
	mv "$srcdir" "$QEMU_SRC"
	rm -rf "$tmp"
	touch "$QEMU_SRC/.done"
fi

touch "$stamp"
echo "setup: done (cache $SPYRE_CACHE)"
