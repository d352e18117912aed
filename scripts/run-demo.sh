#!/bin/bash
# The main job: boot the guest with a Spyre card, load the driver, list the
# card with spyre-smi and run the sample libspyre program.
set -euo pipefail
. "$(dirname "$0")/common.sh"

exec "$SPYRE_TOP/scripts/vm-run.sh" --mem-size 4G --timeout 300 -- '
set -e
echo "# modprobe spyre"
modprobe spyre
dmesg | grep -E "spyre|accel" | grep -v taint
echo "# spyre-smi"
spyre-smi
echo "# spyre-smi --json"
spyre-smi --json
echo "# device_info (libspyre sample)"
device_info
echo "# vector_add (libspyre runtime: kernel, profile, events, graph)"
vector_add
echo "# bias_gelu (a kernel of your own, docs/kernels.md)"
bias_gelu
echo "# matmul (op library, checked against the CPU)"
matmul
echo "# decoder (op library: prefill and decode, eager and as graphs)"
decoder
'
