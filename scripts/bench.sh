#!/bin/bash
# make bench: run every benchmark, print a table, write build/bench/results.json
# (an array of {"name", "value", "unit"}).
set -euo pipefail
. "$(dirname "$0")/common.sh"
out=$SPYRE_BUILD/bench
mkdir -p "$out"
"$out/dma-bench" "$SPYRE_CACHE/qemu-build/qemu-system-x86_64" "$out/dma.json" 64 \
	-L "$FIRMWARE_ROOT/usr/share/seabios" -L "$FIRMWARE_ROOT/usr/share/qemu"
cp "$out/dma.json" "$out/results.json"
echo "results: $out/results.json"
