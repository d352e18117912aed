#!/bin/bash
# Build spyre.ko (and, where the kernel has KUnit, spyre_kunit.ko) for one
# kernel flavour: stock (Debian's 6.12 headers) or debug.  The sources are
# copied to build/kmod-<flavour> so both flavours build from one checkout.
# usage: build-driver.sh [stock|debug]
set -euo pipefail
. "$(dirname "$0")/common.sh"
flavour=${1:-stock}
kernel_flavour "$flavour"
dir=$SPYRE_BUILD/kmod-$flavour
mkdir -p "$dir"
rsync -rc --delete --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
	--exclude='*.mod*' --exclude=modules.order \
	"$SPYRE_TOP/Kbuild" "$SPYRE_TOP/driver" "$SPYRE_TOP/include" "$dir/"
make -C "$KDIR" M="$dir" W=1 modules
