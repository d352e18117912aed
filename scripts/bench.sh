#!/bin/bash
# make bench: run every benchmark, print a table, write build/bench/results.json
# (an array of {"name", "value", "unit"}): the DMA benchmark (QEMU), the
# engine's host speed against OpenBLAS, the timing model's published cases,
# the driver's null-job overhead in the guest, and PyTorch on the card
# (torch.*, in the Debian guest).  Rows that compare two
# things are medians of interleaved rounds with NAME.min and NAME.max.
# How cost grows (engine GFLOPS by size, DMA GB/s by size, jobs/s by
# processes, decoder tokens/s by layers) goes to build/bench/scaling-*.tsv
# and the plot build/bench/scaling.png.
set -euo pipefail
. "$(dirname "$0")/common.sh"
out=$SPYRE_BUILD/bench
mkdir -p "$out"
command -v gnuplot > /dev/null || "$SPYRE_TOP/scripts/setup.sh" --bench
"$out/dma-bench" "$SPYRE_CACHE/qemu-build/qemu-system-x86_64" "$out/dma.json" 64 \
	--scaling "$out/scaling-dma.tsv" \
	-L "$FIRMWARE_ROOT/usr/share/seabios" -L "$FIRMWARE_ROOT/usr/share/qemu"
"$out/engine-bench" "$out/engine.json"
"$out/engine-bench" --scaling "$out/engine-scaling.json" "$out/scaling-engine.tsv"
# What QEMU adds to a LAUNCH beyond the engine's compute (device.launch_overhead_us).
"$out/launch-bench" "$SPYRE_CACHE/qemu-build/qemu-system-x86_64" "$out/launch.json" \
	-L "$FIRMWARE_ROOT/usr/share/seabios" -L "$FIRMWARE_ROOT/usr/share/qemu"
"$out/model-bench" "$out/model.json"
# Host time the engine takes to emulate each kernel of the decoder example
# (engine.emulation.*_ms): what bounds runtime.graph_vs_eager_prefill.
"$out/ops-bench" "$out/ops.json"
# The same prefill in QEMU without a guest (qtest) against the host engine,
# in turn: what the device model adds (device.prefill_vs_engine).
"$out/ops-bench" --qemu "$SPYRE_CACHE/qemu-build/qemu-system-x86_64" "$out/ops-qemu.json" \
	-L "$FIRMWARE_ROOT/usr/share/seabios" -L "$FIRMWARE_ROOT/usr/share/qemu"
# The decoder's graph prefill in the guest (guest wall time, launch to
# synchronize) against the host engine's pass over its kernels in the
# graph's order, in turn, round by round: what the emulator adds around
# launches (runtime.graph_prefill_vs_engine).
"$out/ops-bench" --guest "$SPYRE_TOP/scripts/vm-run.sh" "$out/prefill-guest.json" \
	> "$out/prefill-guest.log"
grep -v '^SPYRE-' "$out/prefill-guest.log" | tail -n 1
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
python3 - "$out/results.json" "$out/dma.json" "$out/engine.json" "$out/engine-scaling.json" \
	"$out/launch.json" \
	"$out/model.json" "$out/ops.json" "$out/ops-qemu.json" "$out/prefill-guest.json" \
	"$out/runtime.json" "$out/driver.json" \
	"$out/bigmem.json" <<'PY'
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
# Then the same model with 1, 4 and 8 layers (64-token prompt, 8 decode
# steps) for the scaling table: runtime.decoder.scaling.*.<layers>.
"$SPYRE_TOP/scripts/vm-run.sh" --timeout 1800 -- 'modprobe spyre && decoder --json &&
	for l in 1 4 8; do echo "SPYRE-LAYERS $l"; decoder --json $l 64 8; done' \
	> "$out/decoder.log"
grep -v '^SPYRE-BENCH-JSON \|^SPYRE-LAYERS ' "$out/decoder.log"
python3 - "$out/results.json" "$out/decoder.log" "$out/driver.json" "$out/scaling-jobs.tsv" \
	"$out/scaling-decoder.tsv" <<'PY'
import json, sys
results, log, driver, jobs_tsv, decoder_tsv = sys.argv[1:]
with open(results) as f:
    rows = json.load(f)
layers, by_layers = 2, {}
for line in open(log):
    if line.startswith("SPYRE-LAYERS "):
        layers = int(line.split()[1])
    elif line.startswith("SPYRE-BENCH-JSON "):
        got = {r["name"]: r["value"] for r in json.loads(line[len("SPYRE-BENCH-JSON "):])}
        if layers == 2 and not by_layers:
            rows += json.loads(line[len("SPYRE-BENCH-JSON "):])
        by_layers[layers] = got
with open(decoder_tsv, "w") as f:
    f.write("# layers\tprefill_tokens_per_s\tdecode_tokens_per_s\n")
    for l in sorted(by_layers):
        pre = by_layers[l]["runtime.decoder_prefill_tokens_per_s_graph"]
        dec = by_layers[l]["runtime.decoder_decode_tokens_per_s_graph"]
        f.write(f"{l}\t{pre:.3f}\t{dec:.3f}\n")
        rows += [{"name": f"runtime.decoder.scaling.prefill_tokens_per_s.{l}", "value": pre,
                  "unit": "tokens/s"},
                 {"name": f"runtime.decoder.scaling.decode_tokens_per_s.{l}", "value": dec,
                  "unit": "tokens/s"}]
with open(driver) as f:
    d = {r["name"]: r["value"] for r in json.load(f)}
with open(jobs_tsv, "w") as f:
    f.write("# processes\tjobs_per_s\n")
    for p in (1, 4, 16, 64):
        f.write(f"{p}\t{d[f'driver.null_jobs_per_s_{p}p']:.1f}\n")
with open(results, "w") as f:
    json.dump(rows, f, indent=2)
    f.write("\n")
PY
# PyTorch on the card, in the Debian guest with make deb's and make torch's
# packages: torch.dispatch_overhead_us (a tiny op from PyTorch against the
# same libspyre launch from C) and the GPT example's compiled/eager
# speedups (torch.graph_vs_eager_prefill, torch.graph_vs_eager_decode).
torch_share=$(mktemp -d)
trap 'rm -rf "$torch_share"' EXIT
cp $(ls "$SPYRE_BUILD"/deb/*.deb "$SPYRE_BUILD"/deb-torch/python3-torch-spyre_*.deb | grep -v -- -dbgsym_) \
	"$SPYRE_TOP"/tests/torch/bench-in-guest.sh "$SPYRE_TOP"/tests/torch/dispatch_bench.[cp]* "$torch_share/"
chmod -R a+rX "$torch_share"
"$SPYRE_TOP/scripts/build-debian-guest.sh" > "$out/debian-guest.log" 2>&1
"$SPYRE_TOP/scripts/distro-run.sh" --share "$torch_share" --timeout 2400 -- \
	"sh $torch_share/bench-in-guest.sh $torch_share" > "$out/torch.log"
grep -v '^SPYRE-BENCH-JSON ' "$out/torch.log"
python3 - "$out/results.json" "$out/torch.log" <<'PY'
import json, sys
results, log = sys.argv[1:]
with open(results) as f:
    rows = json.load(f)
for line in open(log):
    if line.startswith("SPYRE-BENCH-JSON "):
        rows += json.loads(line[len("SPYRE-BENCH-JSON "):])
with open(results, "w") as f:
    json.dump(rows, f, indent=2)
    f.write("\n")
PY
gnuplot -e "dir='$out'" "$SPYRE_TOP/scripts/bench-plot.gp" > "$out/scaling.png" \
	2> "$out/gnuplot.log" ||
	{ cat "$out/gnuplot.log"; exit 1; }
echo "plot: $out/scaling.png"
echo "results: $out/results.json"
