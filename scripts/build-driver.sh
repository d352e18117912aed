#!/bin/bash
# Build driver/spyre.ko against the cached Debian 6.12 headers (or KDIR).
set -euo pipefail
. "$(dirname "$0")/common.sh"
kdir=${KDIR:-$KERNEL_ROOT/usr/src/linux-headers-$(cat "$KERNEL_ROOT/.kver")}
make -C "$kdir" M="$SPYRE_TOP" W=1 modules
