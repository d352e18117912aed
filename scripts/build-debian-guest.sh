#!/bin/bash
# Build the Debian guest: a Debian 13 (trixie) system as a user has it
# (Debian's Linux 6.12 image and headers, DKMS, build-essential, systemd,
# udev, sudo), on an ext4 disk image (label spyre-root) the guest boots from
# over virtio-blk, with its kernel and initrd beside it for QEMU's
# -kernel/-initrd.
# vm-run.sh --distro (scripts/distro-run.sh) boots it; the busybox guest
# stays for the fast suites.
#
# usage: build-debian-guest.sh      (prints the image's directory last)
#
# The result is cached in $SPYRE_CACHE/debian-guest-<key>/, the key being a
# hash of this script (which holds the package list) and of the guest's
# command runner (debian-guest-run.sh):
#   disk.img      the root file system (ext4, read-only; boot it through a
#                 qcow2 overlay, as vm-run.sh does, so it stays pristine)
#   vmlinuz, initrd.img   the root's kernel and initramfs
#   kver, packages.txt    the kernel's release; every installed package
#   seabios/      Debian 13's SeaBIOS, which QEMU boots this guest with
#   build.log     debootstrap's and apt's output
# Needs root (debootstrap, chroot).  Packages come from the mirror of the
# host's own apt sources (no host name is written here); downloaded .debs are
# kept in $SPYRE_CACHE/debs/debian-guest/ for the next build.
set -euo pipefail
. "$(dirname "$0")/common.sh"

SUITE=trixie
# What a user's machine has for the driver stack, and what the distro suite
# needs preinstalled (it installs the project's packages without network):
# libdrm2 and libudev1 for libspyre0, Debian's PyTorch 2.6 (python3-torch)
# for python3-torch-spyre.  No recommends.
GUEST_PKGS="linux-image-amd64 linux-headers-amd64 dkms build-essential pkg-config
	systemd systemd-sysv udev kmod sudo libdrm2 libudev1 ca-certificates python3-torch"
DISK_SIZE=6G
INITRD_MODULES="virtio_pci virtio_blk ahci sd_mod ext4"

runner=$SPYRE_TOP/scripts/debian-guest-run.sh
key=$(cat "$0" "$runner" | sha256sum | cut -c1-12)
dir=$SPYRE_CACHE/debian-guest-$key
if [ -f "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "build-debian-guest: run as root (debootstrap, chroot)" >&2; exit 1; }
"$SPYRE_TOP/scripts/setup.sh" --debian-guest >&2

# One build at a time in a cache: a second waits, then finds it done.
mkdir -p "$SPYRE_CACHE/debs/debian-guest"
exec 9> "$SPYRE_CACHE/.debian-guest.lock"
flock 9
if [ -f "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi
# What an interrupted build left (none is running: the lock is ours).
rm -rf --one-file-system "$SPYRE_CACHE"/debian-guest-*.tmp.*

# The host's Debian mirrors (main and security), from its apt sources.
host_mirrors build-debian-guest || exit 1

tmp=$(mktemp -d "$dir.tmp.XXXXXX")
chmod 755 "$tmp"
root=$tmp/root
log=$tmp/build.log
mounted=()
trap 'chroot_umount; rm -rf --one-file-system "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
fail() {
	echo "build-debian-guest: $1; the end of $log:" >&2
	tail -n 30 "$log" >&2
	exit 1
}
in_root() { in_chroot "$root" "$@"; }

t0=$(date +%s)
echo "build-debian-guest: debootstrap $SUITE (log: $log)" >&2
debian_bootstrap "$root" "$SUITE" "$SPYRE_CACHE/debs/debian-guest" "$log" ||
	fail "debootstrap failed"

# Before the packages (debian_bootstrap has turned recommends off, for the
# user's apt too, and services): no manual pages or translations, and the
# modules the initramfs needs to mount an ext4 root on virtio-blk or AHCI;
# only those, so that it is small and quick to unpack under TCG.
cat > "$root/etc/dpkg/dpkg.cfg.d/90spyre-guest" <<'EOF'
path-exclude=/usr/share/man/*
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
path-exclude=/usr/share/info/*
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
EOF
mkdir -p "$root/etc/initramfs-tools/conf.d"
echo MODULES=list > "$root/etc/initramfs-tools/conf.d/spyre-guest"
printf '%s\n' $INITRD_MODULES >> "$root/etc/initramfs-tools/modules"

echo "build-debian-guest: apt-get install $(echo $GUEST_PKGS)" >&2
# shellcheck disable=SC2086
debian_install "$root" "$SPYRE_CACHE/debs/debian-guest" "$log" $GUEST_PKGS ||
	fail "installing the packages failed"
in_root dpkg-query -W -f='${Package} ${Version}\n' > "$tmp/packages.txt"
# Debian 13's SeaBIOS, for QEMU to boot this guest with: Debian 12's (1.16.2,
# the busybox guest's) waits 32 s for an AHCI command under QEMU 10.0 when a
# disk is attached; 1.16.3 does not.
in_root sh -c 'cd /tmp && apt-get download -q seabios' >> "$log" 2>&1 ||
	fail "cannot download $SUITE's seabios"
dpkg -x "$root"/tmp/seabios_*.deb "$tmp/seabios-deb"
mv "$tmp/seabios-deb/usr/share/seabios" "$tmp/seabios"
rm -rf "$tmp/seabios-deb" "$root"/tmp/seabios_*.deb
chroot_umount
rm -f "$root/usr/sbin/policy-rc.d"
# debootstrap's own downloads stay under the cache mount.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb

# The kernel, and an initramfs that can mount the root.
kver=$(cd "$root/boot" && ls vmlinuz-* | sed 's/^vmlinuz-//' | sort -V | tail -1)
[ -n "$kver" ] || fail "no kernel in $root/boot"
case "$kver" in
"$KERNEL_SERIES".*) ;;
*) fail "$SUITE's kernel is $kver, not $KERNEL_SERIES" ;;
esac
[ -d "$root/usr/src/linux-headers-$kver" ] || fail "no headers for $kver"
in_root lsinitramfs "/boot/initrd.img-$kver" > "$tmp/initrd.list" 2>> "$log" ||
	fail "cannot list initrd.img-$kver"
for m in $INITRD_MODULES; do
	grep -q "/$m\.ko" "$tmp/initrd.list" "$root/usr/lib/modules/$kver/modules.builtin" ||
		fail "initrd.img-$kver lacks $m"
done
cp "$root/boot/vmlinuz-$kver" "$tmp/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$tmp/initrd.img"
echo "$kver" > "$tmp/kver"

# The system: users, the console, the command runner, fewer units.
in_root useradd -m -u 1000 -U -G render,sudo -s /bin/bash -c "Spyre user" spyre
in_root useradd -m -U -s /bin/bash -c "A user outside group render" nogroup-user
echo 'spyre ALL=(ALL:ALL) NOPASSWD: ALL' > "$root/etc/sudoers.d/spyre"
chmod 440 "$root/etc/sudoers.d/spyre"
echo spyre-debian > "$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tspyre-debian\n' > "$root/etc/hosts"
echo 'LABEL=spyre-root / ext4 rw,errors=remount-ro 0 1' > "$root/etc/fstab"
# A machine id now, so the boots are not first boots.
in_root systemd-machine-id-setup > /dev/null
install -m 755 "$runner" "$root/usr/local/sbin/spyre-guest-run"
cat > "$root/etc/systemd/system/spyre-run.service" <<'EOF'
[Unit]
Description=Run the command vm-run.sh --distro passed, then power off
After=multi-user.target
ConditionKernelCommandLine=SPYRE_MODE=run

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/spyre-guest-run
TimeoutStartSec=infinity
StandardOutput=journal+console
StandardError=journal+console

[Install]
WantedBy=multi-user.target
EOF
in_root systemctl enable spyre-run.service > /dev/null 2>&1
# vm-run.sh --distro --shell: root is logged in on the serial console.
mkdir -p "$root/etc/systemd/system/serial-getty@ttyS0.service.d"
cat > "$root/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf" <<'EOF'
[Unit]
ConditionKernelCommandLine=SPYRE_MODE=shell

[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin root --keep-baud 115200,57600,38400,9600 - $TERM
EOF
# Timers and services a test boot has no use for; the journal in memory.
for u in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
	e2scrub_reap.service fstrim.timer systemd-tmpfiles-clean.timer getty@tty1.service \
	getty-static.service man-db.timer systemd-timesyncd.service; do
	in_root systemctl mask "$u" > /dev/null 2>&1 || true
done
# Nor KVM (the guest runs under TCG; its CPU still advertises SVM).
printf 'blacklist kvm_amd\nblacklist kvm_intel\nblacklist kvm\n' > "$root/etc/modprobe.d/spyre-guest.conf"
mkdir -p "$root/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' > "$root/etc/systemd/journald.conf.d/spyre-guest.conf"

# The disk: an ext4 file system made from the tree, no mounting needed.
echo "build-debian-guest: mkfs.ext4 -d ($DISK_SIZE)" >&2
find "$root/dev" -mindepth 1 -delete
mkfs.ext4 -q -L spyre-root -d "$root" "$tmp/disk.img" "$DISK_SIZE" >> "$log" 2>&1 ||
	fail "mkfs.ext4 -d failed"
chmod 444 "$tmp/disk.img"
rm -rf --one-file-system "$root"
t1=$(date +%s)
echo "$((t1 - t0))" > "$tmp/build-seconds"
touch "$tmp/.done"
trap - EXIT
mv "$tmp" "$dir"
echo "build-debian-guest: $dir: Linux $kver, $(wc -l < "$dir/packages.txt") packages, $(du -sh "$dir/disk.img" | cut -f1) used, built in $(((t1 - t0) / 60)) min $(((t1 - t0) % 60)) s" >&2
echo "$dir"
