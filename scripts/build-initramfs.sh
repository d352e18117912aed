#!/bin/bash
# Build the guest's initramfs: busybox, the Debian modules spyre.ko needs,
# spyre.ko, libspyre and its shared libraries, the tools and test programs.
# usage: build-initramfs.sh OUTPUT.cpio.gz STAGING_DIR BUILD_DIR
set -euo pipefail
. "$(dirname "$0")/common.sh"

out=$1 build=$3
root=$2/root
kver=$(cat "$KERNEL_ROOT/.kver")
moddir=lib/modules/$kver

rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/lib,proc,sys,dev,tmp,root,etc,"$moddir"/extra}
install -m 755 /bin/busybox "$root/bin/busybox"
install -m 755 "$SPYRE_TOP/scripts/guest-init.sh" "$root/init"

# Debian modules spyre.ko depends on, decompressed so busybox modprobe loads them.
for dep in $(modinfo -F depends "$SPYRE_TOP/driver/spyre.ko" | tr ',' ' '); do
	modprobe -d "$KERNEL_ROOT" -S "$kver" --show-depends "$dep" |
	awk '$1 == "insmod" { print $2 }'
done | sort -u | while read -r ko; do
	rel=${ko#"$KERNEL_ROOT"/}
	mkdir -p "$root/$(dirname "$rel")"
	case "$ko" in
	*.xz) xz -dc "$ko" > "$root/${rel%.xz}" ;;
	*.zst) zstd -qdc "$ko" > "$root/${rel%.zst}" ;;
	*) cp "$ko" "$root/$rel" ;;
	esac
done
install -m 644 "$SPYRE_TOP/driver/spyre.ko" "$root/$moddir/extra/"
cp "$KERNEL_ROOT/$moddir"/modules.{builtin,builtin.modinfo,order} "$root/$moddir/"
depmod -b "$root" "$kver"

# Userspace: our binaries, then every shared library they load.
cp -a "$build"/lib/libspyre.so* "$root/usr/lib/"
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
