# Shared paths for the scripts; sourced, not run.
# shellcheck shell=bash
SPYRE_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SPYRE_CACHE=${SPYRE_CACHE:-$HOME/.cache/spyre}
SETUP_VERSION=1
# The inputs are keyed by what they are: bump the key when an input changes.
KERNEL_SERIES=6.12
KERNEL_ROOT=$SPYRE_CACHE/kernel-$KERNEL_SERIES
FIRMWARE_ROOT=$SPYRE_CACHE/firmware
QEMU_SRC=$SPYRE_CACHE/src/qemu
