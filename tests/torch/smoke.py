# SPDX-License-Identifier: MIT
"""First checks of torch_spyre on a card (run by hand in the Debian guest
for now; docs/torch.md): copies, a gathered view, fill, the caching
allocator's counters and card-memory exhaustion.  Exits non-zero on any
failure."""
import sys

import torch
import torch_spyre  # noqa: F401

failed = 0


def check(name, ok):
    global failed
    print(("ok - " if ok else "not ok - ") + name)
    failed += not ok


check("one card visible", torch.spyre.device_count() >= 1)
for dt in (torch.float32, torch.float16, torch.bfloat16):
    x = torch.randn(37, 100).to(dt)
    y = x.to("spyre")
    check(f"{dt} round trip on {y.device}", y.device.type == "spyre" and torch.equal(y.cpu(), x))
    check(f"{dt} transposed view gathered on the card",
          torch.equal(y.t().contiguous().cpu(), x.t().contiguous()))
    z = torch.empty(5, 7, dtype=dt, device="spyre").fill_(2.5)
    check(f"{dt} fill_", torch.equal(z.cpu(), torch.full((5, 7), 2.5, dtype=dt)))
    del y, z

torch.spyre.empty_cache()
base = torch.spyre.memory_stats()
ts = [torch.empty(16, device="spyre") for _ in range(1000)]
mid = torch.spyre.memory_stats()
check("1000 small tensors take one card buffer",
      mid["card_buffer_allocations"] - base["card_buffer_allocations"] == 1)
check("and 512 bytes each", mid["allocated_bytes"] - base["allocated_bytes"] == 1000 * 512)
del ts
check("freed tensors give their bytes back", torch.spyre.memory_allocated() == base["allocated_bytes"])
torch.spyre.empty_cache()
check("empty_cache returns the buffer", torch.spyre.memory_reserved() == base["reserved_bytes"])

big = []
try:
    for _ in range(64):
        big.append(torch.empty(256 << 20, dtype=torch.uint8, device="spyre"))
    check("card memory runs out", False)
except torch.OutOfMemoryError as e:
    msg = str(e)
    print("  #", msg.splitlines()[0][:160])
    check("card memory exhaustion is torch.OutOfMemoryError naming the request",
          "SPYRE_ERROR_OUT_OF_DEVICE_MEMORY" in msg and "bytes on spyre:0" in msg)
del big
torch.spyre.empty_cache()
check("everything back after exhaustion", torch.spyre.memory_reserved() == base["reserved_bytes"])
sys.exit(1 if failed else 0)
