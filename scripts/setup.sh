#!/bin/bash
# Idempotent host set-up on Debian 12 (bookworm) or 13 (trixie): build
# dependencies, apt sources, and the downloaded inputs (QEMU source, Linux
# 6.12 image/headers, firmware) unpacked into the cache.  A second run does no
# network access.
# usage: setup.sh [--packages | --fuzz | --deb | --debian-guest | --bench]
#   --packages  only the Debian packages the host build needs (compilers,
#               libdrm, libudev, ...): what `make lib` and `make install` need
#   --fuzz      only clang and its libFuzzer runtime, for `make fuzz-engine`
#   --deb       only Debian's packaging tools, for `make deb`
#   --debian-guest  only what `make debian-guest` needs: debootstrap,
#               mkfs.ext4 -d (e2fsprogs) and qemu-img (qemu-utils; the
#               project's QEMU is built without its tools)
#   --bench     only what `make bench` adds: gnuplot (gnuplot-nox) for its plot
set -euo pipefail
. "$(dirname "$0")/common.sh"

# Root installs directly; anyone else through sudo.
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

only_packages=0
case "${1:-}" in
--packages) only_packages=1 ;;
--fuzz)
	# libFuzzer ships in libclang-rt-<major>-dev, for the clang that
	# `clang` (Debian's default version) installs.
	if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return !d + (int)n; }' |
		clang -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null; then
		export DEBIAN_FRONTEND=noninteractive
		$SUDO apt-get update -q
		$SUDO apt-get install -y -q --no-install-recommends clang
		major=$(clang -dumpversion | cut -d. -f1)
		$SUDO apt-get install -y -q --no-install-recommends "libclang-rt-$major-dev"
	fi
	exit 0
	;;
--deb | --debian-guest | --bench)
	# debhelper with DKMS support, and lintian to check the result; the
	# Debian guest's image tools; or the benchmark's plotter.
	case "$1" in
	--deb) DEB_PKGS="debhelper dh-dkms dkms dpkg-dev lintian libdrm-dev libudev-dev pkg-config" ;;
	--debian-guest) DEB_PKGS="debootstrap e2fsprogs qemu-utils" ;;
	--bench) DEB_PKGS="gnuplot-nox" ;;
	esac
	missing=
	for p in $DEB_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		export DEBIAN_FRONTEND=noninteractive
		$SUDO apt-get update -q
		# shellcheck disable=SC2086
		$SUDO apt-get install -y -q --no-install-recommends $missing
	fi
	exit 0
	;;
"") ;;
*) echo "usage: $0 [--packages | --fuzz | --deb | --debian-guest | --bench]" >&2; exit 2 ;;
esac

APT_PKGS="build-essential pkg-config git python3 python3-venv meson ninja-build
	libglib2.0-dev libpixman-1-dev libslirp-dev flex bison bc cpio zstd xz-utils
	libelf-dev libssl-dev dwarves kmod libdrm-dev libudev-dev busybox-static
	dpkg-dev rsync libfdt-dev sparse libopenblas-dev ca-certificates
	man-db bsdextrautils"

# The host's Debian release.  QEMU is built from Debian 13's source on both
# releases (one QEMU for everyone); it needs meson >= 1.5, which Debian 12
# has in bookworm-backports.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
case "$codename" in
bookworm) MESON_SUITE=bookworm-backports ;;
trixie) MESON_SUITE= ;;
*)
	echo "setup: this is '${codename:-an unknown release}'; Debian 12 (bookworm) or 13 (trixie) is needed" >&2
	exit 1
	;;
esac

need_apt_install() {
	local p
	for p in $APT_PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || return 0
	done
	meson_ok || return 0
	return 1
}

meson_ok() {
	local v
	v=$(/usr/bin/meson --version 2>/dev/null) || return 1
	dpkg --compare-versions "$v" ge "$QEMU_MESON_MIN"
}

# The apt sources the build needs, added to the host's existing Debian
# entries (their own mirror; no host name is written here): deb-src for the
# host's suites, deb-src of $QEMU_SUITE for QEMU's source, and on Debian 12
# bookworm-backports for meson (not-automatic: nothing else is taken from it).
# Handles both deb822 (debian.sources) and one-line (sources.list) files.
# Returns 0 if it changed anything.
edit_sources() {
	local f=/etc/apt/sources.list.d/debian.sources changed=1 uri
	if [ -f "$f" ]; then
		if grep -q '^Types: deb$' "$f"; then
			$SUDO sed -i 's/^Types: deb$/Types: deb deb-src/' "$f"
			changed=0
		fi
		# The mirror of the stanza that carries the host's own suite.
		uri=$(awk -v s="$codename" '/^URIs:/ { u = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s) { print u; exit } }' "$f")
		[ -n "$uri" ] || { echo "setup: no '$codename' entry in $f" >&2; exit 1; }
		add_stanza() {	# types suite
			awk -v t="$1" -v s="$2" '$1 == "Types:" { ty = $0 } $1 == "Suites:" {
				for (i = 2; i <= NF; i++) if ($i == s && index(ty, t)) found = 1 }
				END { exit !found }' "$f" && return 0
			printf '\nTypes: %s\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
				"$1" "$uri" "$2" /usr/share/keyrings/debian-archive-keyring.gpg |
				$SUDO tee -a "$f" > /dev/null
			changed=0
		}
		[ "$codename" = "$QEMU_SUITE" ] || add_stanza deb-src "$QEMU_SUITE"
		[ -z "$MESON_SUITE" ] || add_stanza deb "$MESON_SUITE"
		return $changed
	fi
	f=/etc/apt/sources.list
	[ -f "$f" ] || { echo "setup: neither debian.sources nor $f found" >&2; exit 1; }
	uri=$(awk -v s="$codename" '$1 == "deb" && $3 == s { print $2; exit }' "$f")
	[ -n "$uri" ] || { echo "setup: no 'deb ... $codename' line in $f" >&2; exit 1; }
	add_line() {	# line
		grep -qxF "$1" "$f" && return 0
		echo "$1" | $SUDO tee -a "$f" > /dev/null
		changed=0
	}
	local line
	while read -r line; do
		add_line "deb-src ${line#deb }"
	done < <(grep '^deb ' "$f")
	[ "$codename" = "$QEMU_SUITE" ] || add_line "deb-src $uri $QEMU_SUITE main"
	[ -z "$MESON_SUITE" ] || add_line "deb $uri $MESON_SUITE main"
	return $changed
}

mkdir -p "$SPYRE_CACHE"/{debs,src}
# One set-up at a time per cache (make -j, or two checkouts sharing it).
exec 9> "$SPYRE_CACHE/.setup.lock"
flock 9

stamp="$SPYRE_CACHE/.setup-$SETUP_VERSION"
if ! need_apt_install && { [ $only_packages = 1 ] || [ -f "$stamp" ]; }; then
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
updated=0
apt_update() {
	[ $updated = 1 ] && return 0
	$SUDO apt-get update -q
	updated=1
}
if edit_sources; then
	apt_update
fi
if need_apt_install; then
	apt_update
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -q --no-install-recommends $APT_PKGS
	if ! meson_ok; then
		$SUDO apt-get install -y -q --no-install-recommends -t "$MESON_SUITE" meson
	fi
fi
[ $only_packages = 0 ] || exit 0

fetch_debs() {	# dest pkg...
	local dest=$1; shift
	mkdir -p "$dest"
	(cd "$dest" && apt-get download -q "$@")
}

# The 6.12 kernel's versioned package name: Debian 12 has the series meta
# package linux-image-6.12-amd64 (security suite); on Debian 13 it is the
# default kernel, linux-image-amd64.
resolve_kernel() {
	local meta v
	for meta in "linux-image-$KERNEL_SERIES-amd64" linux-image-amd64; do
		v=$(apt-cache depends "$meta" 2>/dev/null |
			sed -n "s/.*Depends: linux-image-\($KERNEL_SERIES\.[^ ]*-amd64\)$/\1/p" | head -1)
		[ -z "$v" ] || { echo "$v"; return 0; }
	done
	return 1
}

if [ ! -f "$KERNEL_ROOT/.done" ]; then
	apt_update
	kver=$(resolve_kernel) ||
		{ echo "setup: no Linux $KERNEL_SERIES kernel package in the apt sources (Debian 12: enable its security suite)" >&2; exit 1; }
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
	# Debian 13's packages put modules under usr/lib (merged /usr); give
	# the tree the /lib -> usr/lib link the installed system has.
	[ -e "$KERNEL_ROOT.tmp/lib" ] || ln -s usr/lib "$KERNEL_ROOT.tmp/lib"
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
	apt_update
	tmp="$SPYRE_CACHE/debs/firmware"
	rm -rf "$tmp"
	fetch_debs "$tmp" seabios qemu-system-data ipxe-qemu
	rm -rf "$FIRMWARE_ROOT"
	mkdir -p "$FIRMWARE_ROOT"
	for d in "$tmp"/*.deb; do dpkg -x "$d" "$FIRMWARE_ROOT"; done
	touch "$FIRMWARE_ROOT/.done"
fi

# QEMU source, Debian 13's patched tree.
if [ ! -f "$QEMU_SRC/.done" ]; then
	apt_update
	tmp="$SPYRE_CACHE/src/qemu-dl"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	(cd "$tmp" && apt-get source -q "qemu/$QEMU_SUITE")
	srcdir=$(find "$tmp" -maxdepth 1 -mindepth 1 -type d -name 'qemu-*' | head -1)
	[ -n "$srcdir" ] || { echo "setup: apt-get source qemu/$QEMU_SUITE produced no tree" >&2; exit 1; }
	case "$(cat "$srcdir/VERSION")" in
	"$QEMU_SERIES".*) ;;
	*) echo "setup: qemu/$QEMU_SUITE is $(cat "$srcdir/VERSION"), not $QEMU_SERIES" >&2; exit 1 ;;
	esac
	rm -rf "$QEMU_SRC"
	mv "$srcdir" "$QEMU_SRC"
	rm -rf "$tmp"
	touch "$QEMU_SRC/.done"
fi

touch "$stamp"
echo "setup: done (cache $SPYRE_CACHE)"
