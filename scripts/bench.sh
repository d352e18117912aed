#!/bin/bash
# make bench: run every benchmark, print a table, write build/bench/results.json
# (an array of {"name", "value", "unit"}): the DMA benchmark (QEMU), the
# engine's host speed against OpenBLAS, the timing model's published cases,
# and the driver's null-job overhead in the guest.
set -euo pipefail
. "$(dirname "$0")/common.sh"
out=$SPYRE_BUILD/bench
mkdir -p "$out"
"$out/dma-bench" "$SPYRE_CACHE/qemu-build/qemu-system-x86_64" "$out/dma.json" 64 \
	-L "$FIRMWARE_ROOT/usr/share/seabios" -L "$FIRMWARE_ROOT/usr/share/qemu"
"$out/engine-bench" "$out/engine.json"
"$out/model-bench" "$out/model.json"
# Host time the engine takes to emulate each kernel of the decoder example
# (engine.emulation.*_ms): what bounds runtime.graph_vs_eager_prefill.
"$out/ops-bench" "$out/ops.json"
# The driver's empty-job overhead, measured inside the guest.
"$SPYRE_TOP/scripts/vm-run.sh" --timeout 600 -- \
	'modprobe spyre && /usr/share/spyre/tests/bench_null_job 2' > "$out/driver.log"
grep -v '^SPYRE-BENCH-JSON ' "$out/driver.log"
sed -n 's/^SPYRE-BENCH-JSON //p' "$out/driver.log" > "$out/driver.json"
# A 128 GiB card: creating a 16 GiB device buffer, reaping a process killed
# while it allocates (tests/vm/test_bigmem.c prints "# bench NAME VALUE UNIT").
"$SPYRE_TOP/scripts/vm-run.sh" --mem-size 128G --timeout 600 -- \
	'modprobe spyre && /usr/share/spyre/tests/test_bigmem' > "$out/bigmem.log"
cat "$out/bigmem.log"
awk '/# bench / { printf "%s{\"name\": \"%s\", \"value\": %s, \"unit\": \"%s\"}", n++ ? ", " : "[", $3, $4, $5 }
	END { print n ? "]" : "[]" }' "$out/bigmem.log" > "$out/bigmem.json"
# libspyre's copies (runtime.h2d_gbps, runtime.d2h_gbps) against a guest memcpy;
# two cards for runtime.peer_copy_gbps (card 0's memory to card 1's) beside
# runtime.dtod_gbps (within card 0).
"$SPYRE_TOP/scripts/vm-run.sh" --cards 2 --timeout 600 -- \
	'modprobe spyre && /usr/share/spyre/tests/runtime_bench 64' > "$out/runtime.log"
grep -v '^SPYRE-BENCH-JSON ' "$out/runtime.log"
sed -n 's/^SPYRE-BENCH-JSON //p' "$out/runtime.log" > "$out/runtime.json"
python3 - "$out/results.json" "$out/dma.json" "$out/engine.json" "$out/model.json" "$out/ops.json" \
	"$out/runtime.json" "$out/driver.json" "$out/bigmem.json" <<'PY'
import json, sys
rows = []
for path in sys.argv[2:]:
    with open(path) as f:
        rows += json.load(f)
with open(sys.argv[1], "w") as f:
    json.dump(rows, f, indent=2)
    f.write("\n")
PY
# The decoder example (libspyre/examples/decoder.c): wall-clock speedup of
# graph replay over eager launches, decode and prefill
# (runtime.graph_vs_eager_decode, runtime.graph_vs_eager_prefill).
"$SPYRE_TOP/scripts/vm-run.sh" --timeout 900 -- 'modprobe spyre && decoder --json' \
	> "$out/decoder.log"
grep -v '^SPYRE-BENCH-JSON ' "$out/decoder.log"
sed -n 's/^SPYRE-BENCH-JSON //p' "$out/decoder.log" > "$out/decoder.json"
python3 - "$out/results.json" "$out/decoder.json" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    rows = json.load(f)
with open(sys.argv[2]) as f:
    rows += json.load(f)
with open(sys.argv[1], "w") as f:
    json.dump(rows, f, indent=2)
    f.write("\n")
PY
echo "results: $out/results.json"
