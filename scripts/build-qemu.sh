#!/bin/bash
# Build QEMU (Debian 13's 10.0 source; x86_64-softmmu, q35 + TCG, minimal
# devices, virtio-9p for the shared host directory) with the Spyre card from
# qemu-device/.  The tree and build live in the cache; the build
# directory is keyed by the QEMU source version and the configure options, so
# a second run only recompiles what qemu-device/ changed.
# usage: build-qemu.sh [--qtest]
#   --qtest  also build QEMU's qos-test (with the card's tests/qtest/spyre-test.c)
#            and device-introspect-test, for scripts/run-qtest.sh
set -euo pipefail
# Debian's python3 and meson, whatever else is first on PATH.
export PATH=/usr/bin:$PATH
. "$(dirname "$0")/common.sh"

want_qtest=0
case "${1:-}" in
--qtest) want_qtest=1 ;;
"") ;;
*) echo "usage: $0 [--qtest]" >&2; exit 2 ;;
esac

[ -f "$QEMU_SRC/.done" ] || "$SPYRE_TOP/scripts/setup.sh"

# One build at a time in a cache (make -j, or two checkouts sharing it).
exec 9> "$SPYRE_CACHE/.qemu-build.lock"
flock 9

CONFIGURE_OPTS="--target-list=x86_64-softmmu --without-default-devices
	--without-default-features --enable-tcg --enable-fdt=system --disable-werror --disable-docs
	--disable-tools --disable-user --disable-install-blobs --disable-debug-info
	--enable-attr --enable-virtfs --disable-download --python=/usr/bin/python3"
# The q35 board and devices beyond what it selects: the PCIe root port the card
# sits behind, the card, virtio-9p over PCI for vm-run.sh's host share and
# virtio-blk for the Debian guest's disk.
DEVICE_CONFIG="CONFIG_Q35=y
CONFIG_PCIE_PORT=y
CONFIG_SPYRE=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_9P=y
CONFIG_VIRTIO_BLK=y"

# Hook hw/spyre into QEMU's build once; idempotent.
hook_tree() {
	grep -q "subdir('spyre')" "$QEMU_SRC/hw/meson.build" ||
		echo "subdir('spyre')" >> "$QEMU_SRC/hw/meson.build"
	grep -q 'source spyre/Kconfig' "$QEMU_SRC/hw/Kconfig" ||
		echo 'source spyre/Kconfig' >> "$QEMU_SRC/hw/Kconfig"
	grep -q "'hw/spyre'," "$QEMU_SRC/meson.build" ||
		sed -i "s|^    'hw/misc',$|    'hw/misc',\n    'hw/spyre',|" "$QEMU_SRC/meson.build"
	# Only the q35 board (the others pull in fdt and more devices).
	local board i386="$QEMU_SRC/configs/devices/i386-softmmu/default.mak"
	for board in ISAPC I440FX MICROVM NITRO_ENCLAVE; do
		grep -q "^CONFIG_$board=n" "$i386" || echo "CONFIG_$board=n" >> "$i386"
	done
	local mak="$QEMU_SRC/configs/devices/x86_64-softmmu/default.mak"
	# Our block, between markers, is rewritten so a change to DEVICE_CONFIG lands.
	sed -i '/^# spyre: begin$/,/^# spyre: end$/d' "$mak"
	printf '# spyre: begin\n%s\n# spyre: end\n' "$DEVICE_CONFIG" >> "$mak"
	# The card's qtest is one more source of qos-test, like nvme-test.c.
	local qmeson="$QEMU_SRC/tests/qtest/meson.build"
	grep -q "^  'spyre-test.c',$" "$qmeson" ||
		sed -i "s|^  'nvme-test.c',$|  'nvme-test.c',\n  'spyre-test.c',|" "$qmeson"
	grep -q "^  'spyre-test.c',$" "$qmeson" || {
		echo "build-qemu: cannot add spyre-test.c to $qmeson" >&2
		exit 1
	}
}

# Copy only changed files (by content) so ninja rebuilds only the device.
sync_device() {
	mkdir -p "$QEMU_SRC/hw/spyre/include"
	rsync -rc --delete --exclude include "$SPYRE_TOP/qemu-device/" "$QEMU_SRC/hw/spyre/"
	rsync -c "$SPYRE_TOP/include/spyre_regs.h" "$SPYRE_TOP/include/spyre_cmd.h" \
		"$SPYRE_TOP/include/spyre_program.h" "$SPYRE_TOP/include/spyre_engine_status.h" \
		"$QEMU_SRC/hw/spyre/include/"
	# meson.build names it (hook_tree), so the tree always needs one: the
	# repository's, else an empty placeholder (qos-test then has no card tests).
	local qtest_src="$SPYRE_TOP/tests/qtest/spyre-test.c"
	if [ -f "$qtest_src" ]; then
		# It builds LAUNCH kernels with the project's program builder.
		rsync -c "$qtest_src" "$SPYRE_TOP/include/spyre_program_builder.h" \
			"$SPYRE_TOP/include/spyre_program.h" "$QEMU_SRC/tests/qtest/"
	elif ! grep -q 'placeholder' "$QEMU_SRC/tests/qtest/spyre-test.c" 2>/dev/null; then
		echo '/* placeholder: tests/qtest/spyre-test.c is missing */' \
			> "$QEMU_SRC/tests/qtest/spyre-test.c"
	fi
}

# The engine's meson.build lists its sources; a file missing there would
# only show up as a link error much later.
check_engine_list() {
	local f
	for f in "$SPYRE_TOP"/qemu-device/engine/*.c; do
		grep -q "'$(basename "$f")'" "$SPYRE_TOP/qemu-device/engine/meson.build" || {
			echo "build-qemu: $(basename "$f") is not in qemu-device/engine/meson.build" >&2
			exit 1
		}
	done
}

check_engine_list
hook_tree
sync_device

qemu_ver=$(cat "$QEMU_SRC/VERSION")-$(sed -n '1s/.*(\(.*\)).*/\1/p' "$QEMU_SRC/debian/changelog")
key=$(printf '%s\n%s\n%s\n' "$qemu_ver" "$CONFIGURE_OPTS" "$DEVICE_CONFIG" | sha256sum | cut -c1-12)
build="$SPYRE_CACHE/qemu-build-$key"

if [ ! -f "$build/.configured" ]; then
	rm -rf "$build"
	mkdir -p "$build"
	# shellcheck disable=SC2086
	(cd "$build" && "$QEMU_SRC/configure" $CONFIGURE_OPTS)
	touch "$build/.configured"
fi
ninja -C "$build" qemu-system-x86_64
if [ $want_qtest = 1 ]; then
	ninja -C "$build" tests/qtest/qos-test tests/qtest/device-introspect-test
fi
ln -sfn "$build" "$SPYRE_CACHE/qemu-build"
echo "build-qemu: $build/qemu-system-x86_64"
