#!/bin/bash
# Build the guest's initramfs: busybox, the Debian modules spyre.ko needs,
# spyre.ko, libspyre and its shared libraries, the tools and test programs.
# usage: build-initramfs.sh stock|debug   (writes build/initramfs-<flavour>.cpio.gz)
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=${1:-stock}
kernel_flavour "$flavour"
build=$SPYRE_BUILD
out=$build/initramfs-$flavour.cpio.gz
root=$build/initramfs-$flavour
kmod=$build/kmod-$flavour/driver
kver=$KVER
moddir=lib/modules/$kver

rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/lib,proc,sys,dev,tmp,root,etc,"$moddir"/extra}
install -m 755 /bin/busybox "$root/bin/busybox"
install -m 755 "$SPYRE_TOP/scripts/guest-init.sh" "$root/init"

# Debian modules spyre.ko depends on, 9p over virtio for vm-run.sh's
# shared directory, and aer_inject where the kernel has AER (test_aer),
# decompressed so busybox modprobe loads them.
aer_inject=
modprobe -q -d "$MODROOT" -S "$kver" --show-depends aer_inject > /dev/null 2>&1 &&
	aer_inject=aer_inject
for dep in 9p 9pnet_virtio $aer_inject \
	$(modinfo -F depends "$kmod"/*.ko | tr ',' ' ' | tr ' ' '\n' | grep -vx 'spyre' | sort -u); do
	modprobe -d "$MODROOT" -S "$kver" --show-depends "$dep" |
	awk '$1 == "insmod" { print $2 }'
done | sort -u | while read -r ko; do
	rel=${ko#"$MODROOT"/}
	mkdir -p "$root/$(dirname "$rel")"
	case "$ko" in
	*.xz) xz -dc "$ko" > "$root/${rel%.xz}" ;;
	*.zst) zstd -qdc "$ko" > "$root/${rel%.zst}" ;;
	*) cp "$ko" "$root/$rel" ;;
	esac
done
install -m 644 "$kmod"/*.ko "$root/$moddir/extra/"
cp "$MODROOT/$moddir"/modules.{builtin,builtin.modinfo,order} "$root/$moddir/"
depmod -b "$root" "$kver"

# Userspace: our binaries, then every shared library they load.
# The library the build links (libspyre.so.0's target), not older versions a
# build directory may still hold: the guest's ldconfig would prefer those.
cp -a "$build"/lib/libspyre.so "$build"/lib/libspyre.so.0 \
	"$(readlink -f "$build"/lib/libspyre.so.0)" "$root/usr/lib/"
cp -a "$build"/bin/. "$root/usr/bin/"
mkdir -p "$root/usr/share/spyre"
cp -a "$build"/tests/vm "$root/usr/share/spyre/tests"
for f in "$root"/usr/bin/* "$root"/usr/share/spyre/tests/*; do
	[ -x "$f" ] && [ "$(head -c4 "$f" | tail -c3)" = ELF ] || continue
	LD_LIBRARY_PATH="$build/lib" ldd "$f" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }'
done | sort -u | while read -r lib; do
	case "$lib" in "$build"/*) continue ;; esac
	mkdir -p "$root/$(dirname "$lib")"
	cp -L "$lib" "$root/$lib"
done
mkdir -p "$root/lib64"
[ -e "$root/lib64/ld-linux-x86-64.so.2" ] ||
	cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
printf '/usr/lib\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n' > "$root/etc/ld.so.conf"
ldconfig -r "$root"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
echo "initramfs: $out ($(du -h "$out" | cut -f1))"
