# Shared paths for the scripts; sourced, not run.
# shellcheck shell=bash
SPYRE_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SPYRE_CACHE=${SPYRE_CACHE:-$HOME/.cache/spyre}
SPYRE_BUILD=${SPYRE_BUILD:-$SPYRE_TOP/build}
SETUP_VERSION=2
# The inputs are keyed by what they are: bump the key when an input changes.
KERNEL_SERIES=6.12
KERNEL_ROOT=$SPYRE_CACHE/kernel-$KERNEL_SERIES
FIRMWARE_ROOT=$SPYRE_CACHE/firmware
# QEMU: Debian 13's source on every host (Debian 12 and 13), so the card is
# built and tested against one QEMU.
QEMU_SUITE=trixie
QEMU_SERIES=10.0
QEMU_MESON_MIN=1.5
QEMU_SRC=$SPYRE_CACHE/src/qemu-$QEMU_SERIES
DEBUG_FRAGMENT=$SPYRE_TOP/scripts/kernel/debug.config

# Bump when build-debug-kernel.sh changes how the kernel is built.
DEBUG_KERNEL_RECIPE=1

# The debug kernel's build directory: keyed by the Debian source version, the
# config fragment and the build recipe.
debug_kernel_dir() {
	local key
	key=$( (cat "$DEBUG_FRAGMENT"; echo "recipe $DEBUG_KERNEL_RECIPE") |
		sha256sum | cut -c1-12)
	echo "$SPYRE_CACHE/kernel-debug-$(cat "$KERNEL_ROOT/.pkgver")-$key"
}

# Debian's linux-source tree the debug kernel is built from.
debug_kernel_source() {
	echo "$SPYRE_CACHE/src/linux-source-$(cat "$KERNEL_ROOT/.pkgver")"
}

# Set KDIR (module build dir), KVER, MODROOT (root holding lib/modules/KVER)
# and KIMAGE (bzImage) for a kernel flavour: stock (Debian's) or debug.
kernel_flavour() {
	case "$1" in
	stock)
		KVER=$(cat "$KERNEL_ROOT/.kver")
		KDIR=$KERNEL_ROOT/usr/src/linux-headers-$KVER
		MODROOT=$KERNEL_ROOT
		KIMAGE=$KERNEL_ROOT/boot/vmlinuz-$KVER
		;;
	debug)
		KDIR=$(debug_kernel_dir)
		KVER=$(cat "$KDIR/include/config/kernel.release" 2>/dev/null || echo missing)
		MODROOT=$KDIR/root
		KIMAGE=$KDIR/arch/x86/boot/bzImage
		;;
	*)
		echo "unknown kernel flavour '$1' (stock or debug)" >&2
		return 1
		;;
	esac
}

# The host's Debian mirrors, read from its apt sources (deb822 or one-line)
# so that no host name is written in the repository: sets 'mirror' (the
# release's) and 'security' (its security suite's); fails, naming the
# caller, if there is none.
host_mirrors() {	# caller
	_host_mirror() {	# "" or "-security"
		{
			awk -v w="$1" '/^URIs:/ { u = $2 } /^Suites:/ { for (i = 2; i <= NF; i++)
				if ((w == "" && $i !~ /-/) || (w != "" && $i ~ w "$")) { print u; exit } }' \
				/etc/apt/sources.list.d/*.sources 2>/dev/null
			awk -v w="$1" '$1 == "deb" && ((w == "" && $3 !~ /-/) || (w != "" && $3 ~ w "$")) {
				print $2; exit }' /etc/apt/sources.list 2>/dev/null
			true
		} | head -1
	}
	mirror=$(_host_mirror "")
	security=$(_host_mirror "-security")
	[ -n "$mirror" ] || { echo "$1: no Debian mirror in this host's apt sources" >&2; return 1; }
	[ -n "$security" ] || security=${mirror%/debian}/debian-security
}

# The apt sources of an installed Debian system of SUITE on those mirrors
# (deb822): the release, its updates and its security suite.
deb822_sources() {	# suite
	cat <<EOF
Types: deb
URIs: $mirror
Suites: $1 $1-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $1-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
}

# A chroot's kernel file systems: mount them under ROOT (and any further
# bind mounts, "HOSTDIR:DIR" with DIR inside ROOT), each recorded in the
# array 'mounted'; chroot_umount undoes them, last first.
chroot_mount() {	# ROOT [HOSTDIR:DIR]...
	local root=$1 m
	shift
	for m in proc sys dev dev/pts "$@"; do
		mkdir -p "$root/${m#*:}"
		case $m in
		proc) mount -t proc proc "$root/proc" ;;
		sys) mount -t sysfs sysfs "$root/sys" ;;
		dev) mount --bind /dev "$root/dev" ;;
		dev/pts) mount -t devpts devpts "$root/dev/pts" ;;
		*) mount --bind "${m%%:*}" "$root/${m#*:}" ;;
		esac
		mounted+=("$root/${m#*:}")
	done
}
chroot_umount() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -l "${mounted[i]}" 2>/dev/null || true
	done
	mounted=()
}

# A Debian root at ROOT (minbase, SUITE, on the host's mirrors, set by
# host_mirrors) made the way the guest image and the torch build root both
# need it: no recommends or suggests, no services started inside, apt sources
# for SUITE, its updates and security. debootstrap's downloads are kept in
# DEBS; its output goes to LOG.
debian_bootstrap() {	# ROOT SUITE DEBS LOG
	local root=$1 suite=$2 debs=$3 log=$4
	mkdir -p "$root" "$debs/partial"
	# Debian 12's debian-archive-keyring carries Debian 13's keys.
	debootstrap --variant=minbase --cache-dir="$debs" \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$suite" "$root" "$mirror" >> "$log" 2>&1 || return 1
	printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' \
		> "$root/etc/apt/apt.conf.d/90spyre-root"
	printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	rm -f "$root/etc/apt/sources.list"
	deb822_sources "$suite" > "$root/etc/apt/sources.list.d/debian.sources"
}

# A command inside a chroot, with a clean environment.
in_chroot() {	# ROOT COMMAND...
	local root=$1
	shift
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# apt-get install PACKAGES into a debian_bootstrap root, DEBS mounted as its
# archive cache (the caller's chroot_umount undoes the mounts); output to LOG.
debian_install() {	# ROOT DEBS LOG PACKAGES...
	local root=$1 debs=$2 log=$3
	shift 3
	chroot_mount "$root" "$debs:var/cache/apt/archives"
	{ in_chroot "$root" apt-get update -q && in_chroot "$root" apt-get install -y -q "$@"; } \
		>> "$log" 2>&1
}
