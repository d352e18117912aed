# SPDX-License-Identifier: MIT
"""torch.dispatch_overhead_us (make bench, tests/torch/bench-in-guest.sh):
a tiny op on spyre (an fp32 add of two 64-element tensors) N times, one
synchronize, against the same libspyre launch from C (dispatch_bench.c,
its microseconds per call in argv[1]).  Prints a SPYRE-BENCH-JSON line."""
import json
import sys
import time

import torch
import torch_spyre  # noqa: F401

c_us = float(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
x, y = torch.randn(64).to("spyre"), torch.randn(64).to("spyre")
with torch.no_grad():
    z = x + y
    torch.spyre.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        z = x + y
    torch.spyre.synchronize()
    torch_us = (time.perf_counter() - t0) / n * 1e6
print(f"# a 64-element add: {torch_us:.1f} us per call from PyTorch, {c_us:.1f} us from C")
print("SPYRE-BENCH-JSON " + json.dumps([
    {"name": "torch.dispatch_overhead_us", "value": torch_us - c_us, "unit": "us/op"},
    {"name": "torch.add_us", "value": torch_us, "unit": "us/op"},
    {"name": "torch.add_us_from_c", "value": c_us, "unit": "us/op"}]))
