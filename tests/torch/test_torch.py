# SPDX-License-Identifier: MIT
"""The torch suite (docs/torch.md), in the Debian guest as a user of group
render with python3-torch-spyre installed: every check in one Python
process (importing torch takes 15-30 s under TCG).  Prints TAP; exits 1 if
a check failed.

Card results are compared with the CPU's on the same (rounded) inputs,
computed in float32 and rounded to the dtype; tolerances (TOL) are the
op library's (docs/ops.md: fp32 arithmetic on the card, so the difference
is the accumulation order, plus one rounding of the output).
"""
import os
import subprocess
import sys
import traceback
import warnings

import torch
import torch.nn.functional as F
import torch_spyre  # noqa: F401

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
# (rtol, atol) per dtype.
TOL = {torch.float32: (1e-4, 1e-4), torch.float16: (1e-2, 1e-2), torch.bfloat16: (4e-2, 4e-2)}
ONLY = os.environ.get("TAP_ONLY")

count = 0
failed = 0


def tap(name, fn):
    global count, failed
    if ONLY and ONLY not in name:
        return
    count += 1
    try:
        fn()
        print(f"ok {count} - {name}", flush=True)
    except Exception:  # noqa: BLE001 - every failure is reported, then the next check runs
        failed += 1
        print(f"not ok {count} - {name}", flush=True)
        for line in traceback.format_exc().splitlines()[-12:]:
            print(f"  # {line}", flush=True)


def close(got, want, dtype, what=""):
    rtol, atol = TOL[dtype]
    got = got.cpu().float()
    want = want.cpu().float().to(dtype).float()
    assert got.shape == want.shape, f"{what} shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    if not torch.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        err = (got - want).abs().max().item()
        raise AssertionError(f"{what} {dtype}: max |error| {err:.3g} over rtol {rtol} atol {atol}")


def rand(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


def card(t):
    return t.to("spyre")


def ref(fn, *ts):
    """fn on the CPU in float32 from the same rounded inputs."""
    return fn(*[t.float() if isinstance(t, torch.Tensor) else t for t in ts])


def same_op(fn, *ts, dtype):
    close(fn(*[card(t) if isinstance(t, torch.Tensor) else t for t in ts]), ref(fn, *ts), dtype,
          getattr(fn, "__name__", ""))


torch.manual_seed(0)


def check_basics():
    assert torch.spyre.device_count() >= 1, "no card visible"
    x = torch.randn(4, 4)
    assert torch.allclose((card(x) @ card(x)).cpu(), x @ x, rtol=1e-4, atol=1e-4)


tap("a card; x @ x of the issue's one-liner", check_basics)

# ---- ops against the CPU, per dtype ----
for dt in DTYPES:
    def matmuls(dt=dt):
        a, b = rand(37, 100, dtype=dt), rand(100, 45, dtype=dt)
        same_op(torch.mm, a, b, dtype=dt)
        same_op(lambda x, y: x @ y, rand(3, 17, 64, dtype=dt), rand(64, 9, dtype=dt), dtype=dt)
        w, bias = rand(45, 100, dtype=dt), rand(45, dtype=dt)
        same_op(F.linear, a, w, bias, dtype=dt)
        same_op(lambda x, y, z: torch.addmm(z, x, y, beta=0.5, alpha=2.0),
                a, b, rand(37, 45, dtype=dt), dtype=dt)
        same_op(torch.bmm, rand(3, 17, 70, dtype=dt), rand(3, 70, 33, dtype=dt), dtype=dt)
        same_op(lambda x, y: x @ y, rand(2, 3, 17, 64, dtype=dt), rand(2, 3, 64, 9, dtype=dt),
                dtype=dt)
        # Non-contiguous operands: transposed views on both sides.
        same_op(lambda x, y: x.t() @ y.t(), rand(100, 37, dtype=dt), rand(45, 100, dtype=dt),
                dtype=dt)
        same_op(lambda x, y: x @ y.transpose(-1, -2), rand(4, 9, 32, dtype=dt),
                rand(4, 11, 32, dtype=dt), dtype=dt)

    def elementwise(dt=dt):
        x, y = rand(5, 33, dtype=dt), rand(5, 33, dtype=dt)
        for fn in (torch.add, torch.sub, torch.mul):
            same_op(fn, x, y, dtype=dt)
        same_op(lambda a, b: a + b, rand(6, 7, 40, dtype=dt), rand(40, dtype=dt), dtype=dt)
        same_op(lambda a, b: a * b, rand(6, 7, 40, dtype=dt), rand(7, 1, dtype=dt), dtype=dt)
        same_op(lambda a, b: torch.sub(a, b, alpha=3), x, y, dtype=dt)
        same_op(lambda a: (a + 1.5) * 2 - 0.25, x, dtype=dt)
        same_op(lambda a: a / 4, x, dtype=dt)
        same_op(lambda a: 3 + a, x, dtype=dt)
        same_op(lambda a: -a, x, dtype=dt)
        same_op(lambda a, b: a.t() + b.t(), x, y, dtype=dt)       # non-contiguous
        same_op(lambda a, b: a + b, rand(64, 64, dtype=dt), rand(64, 64, dtype=dt), dtype=dt)

    def activations(dt=dt):
        x = rand(5, 33, dtype=dt) * 3
        for fn in (F.relu, F.silu, F.gelu):
            same_op(fn, x, dtype=dt)
            same_op(lambda a, fn=fn: fn(a.t()), x, dtype=dt)
        same_op(lambda a: F.gelu(a, approximate="tanh"), x, dtype=dt)   # on the CPU

    def norms(dt=dt):
        x = rand(7, 50, dtype=dt)
        w, b = rand(50, dtype=dt), rand(50, dtype=dt)
        same_op(lambda a: torch.softmax(a, -1), x, dtype=dt)
        same_op(lambda a: torch.softmax(a * 4, 0), x, dtype=dt)      # on the CPU
        same_op(lambda a: F.layer_norm(a, (50,), w.to(a.device, a.dtype), b.to(a.device, a.dtype)),
                x, dtype=dt)
        same_op(lambda a: F.layer_norm(a, (64,)), rand(3, 4, 64, dtype=dt), dtype=dt)
        same_op(lambda a: F.rms_norm(a, (50,), w.to(a.device, a.dtype), eps=1e-5), x, dtype=dt)
        same_op(lambda a: F.rms_norm(a, (50,)), x, dtype=dt)
        same_op(lambda a: F.log_softmax(a, -1), x, dtype=dt)

    def relayout(dt=dt):
        x = rand(2, 3, 5, 40, dtype=dt)
        for fn in (lambda a: a.transpose(1, 2).contiguous(), lambda a: a.permute(3, 0, 2, 1).contiguous(),
                   lambda a: a[:, 1:, ::2, 3:30].contiguous()):
            y = fn(card(x))
            assert y.is_contiguous() and y.device.type == "spyre"
            assert torch.equal(y.cpu(), fn(x)), "relayout differs"

    def attention(dt=dt):
        q, k, v = rand(2, 4, 9, 32, dtype=dt), rand(2, 2, 9, 32, dtype=dt), rand(2, 2, 9, 32, dtype=dt)
        same_op(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True, enable_gqa=True),
                q, k, v, dtype=dt)
        same_op(lambda a, b, c: F.scaled_dot_product_attention(a, b, c), q[:, :2], k, v, dtype=dt)

    for name, fn in (("matmuls (mm, matmul, linear, addmm, bmm, transposed operands)", matmuls),
                     ("elementwise (add, sub, mul, broadcasts, numbers, div by number, neg)",
                      elementwise),
                     ("relu, silu, gelu (and tanh gelu on the CPU)", activations),
                     ("softmax, layer_norm, rms_norm, log_softmax", norms),
                     ("transpose/permute/slices + contiguous on the card", relayout),
                     ("scaled dot product attention (causal, GQA)", attention)):
        tap(f"{name}, {dt}", fn)


def dtype_conversion():
    x = rand(9, 70)
    y = card(x).half().bfloat16().float()
    close(y, x.half().bfloat16().float(), torch.bfloat16, "fp32 -> fp16 -> bf16 -> fp32 on the card")


tap("dtype conversions on the card", dtype_conversion)


def fallback_warns_once():
    x = rand(6, 10)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = torch.cumsum(card(x), 1)
        z = torch.cumsum(card(x), 0)
    assert y.device.type == "spyre"
    close(y, torch.cumsum(x, 1), torch.float32, "cumsum")
    close(z, torch.cumsum(x, 0), torch.float32, "cumsum")
    msgs = [str(m.message) for m in w if "aten::cumsum" in str(m.message)]
    assert len(msgs) == 1, f"expected one warning naming aten::cumsum, got {msgs}"
    assert "runs on the CPU" in msgs[0], msgs[0]


tap("an op without a card kernel runs on the CPU, warning once by name", fallback_warns_once)


def refused_op_raises_detail():
    # K past the engine's longest row (SPYRE_OP_MAX_ROW = 65536).
    a, b = card(rand(1, 70000)), card(rand(70000, 1))
    try:
        torch.mm(a, b)
    except ValueError as e:
        msg = str(e)
        assert "SPYRE_ERROR_INVALID_ARGUMENT" in msg and "mm on spyre:0" in msg, msg
        print(f"  # {msg.splitlines()[0][:200]}")
        return
    raise AssertionError("a matmul with K = 70000 was not refused")


tap("an op the card refuses raises ValueError with libspyre's detail", refused_op_raises_detail)


def mixing_devices():
    x = card(rand(4, 4))
    for fn in (lambda: x + torch.ones(4, 4), lambda: torch.mm(x, torch.ones(4, 4)),
               lambda: torch.cumsum(x, 0) + torch.ones(4, 4)):
        try:
            fn()
        except RuntimeError as e:
            assert "same device" in str(e) and "cpu" in str(e), str(e)
            continue
        raise AssertionError("spyre and cpu tensors mixed in one op without an error")
    y = x + torch.tensor(2.0)   # a 0-dim CPU tensor is a number, as on CUDA
    close(y, x.cpu() + 2, torch.float32)


tap("mixing cpu and spyre tensors in one op is a clear error", mixing_devices)


# ---- allocator ----
def fdinfo_memory():
    """The driver's drm-total-* bytes of this process's card file."""
    total = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("/dev/accel/"):
                continue
            with open(f"/proc/self/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("drm-total-"):
                        value, unit = line.split(":", 1)[1].split()
                        total += int(value) * {"B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
        except OSError:
            continue
    return total


def allocator():
    torch.spyre.synchronize()
    torch.spyre.empty_cache()
    base, drv0 = torch.spyre.memory_stats(), fdinfo_memory()
    ts = [torch.empty(16, device="spyre") for _ in range(1000)]
    mid = torch.spyre.memory_stats()
    assert mid["card_buffer_allocations"] - base["card_buffer_allocations"] == 1, mid
    assert mid["allocated_bytes"] - base["allocated_bytes"] == 1000 * 512, mid
    del ts
    for i in range(1000):
        t = torch.empty(1000 + i, device="spyre")
        del t
    assert torch.spyre.memory_allocated() == base["allocated_bytes"], torch.spyre.memory_stats()
    torch.spyre.empty_cache()
    assert torch.spyre.memory_reserved() == base["reserved_bytes"], torch.spyre.memory_stats()
    assert fdinfo_memory() == drv0, f"the driver holds {fdinfo_memory()} bytes, {drv0} before"


tap("allocator: 1000 small tensors share a buffer; nothing leaks (fdinfo)", allocator)


def out_of_memory():
    big = []
    try:
        for _ in range(64):
            big.append(torch.empty(256 << 20, dtype=torch.uint8, device="spyre"))
    except torch.OutOfMemoryError as e:
        msg = str(e)
        assert "SPYRE_ERROR_OUT_OF_DEVICE_MEMORY" in msg and "bytes on spyre:0" in msg, msg
        print(f"  # {msg.splitlines()[0][:200]}")
    else:
        raise AssertionError("card memory never ran out")
    del big
    torch.spyre.empty_cache()
    x = card(torch.ones(3))
    assert torch.equal(x.cpu(), torch.ones(3)), "the card does not work after running out"


tap("card memory exhaustion is torch.OutOfMemoryError with the detail", out_of_memory)


def pinned_non_blocking():
    h = torch.randn(256, 256).pin_memory()
    assert h.is_pinned(), "pin_memory() did not give pinned memory"
    d = h.to("spyre", non_blocking=True)
    back = torch.empty(256, 256).pin_memory()
    back.copy_(d * 2, non_blocking=True)
    torch.spyre.synchronize()
    assert torch.equal(d.cpu(), h), "a non_blocking copy from pinned memory differs"
    close(back, h * 2, torch.float32, "a non_blocking copy into pinned memory")


tap("non_blocking copies with pinned memory (SPYRE_MEM_HOST buffers)", pinned_non_blocking)


# ---- streams and events ----
def streams():
    s1, s2 = torch.spyre.Stream(), torch.spyre.Stream()
    assert torch.spyre.current_stream() == torch.spyre.default_stream()
    x = card(rand(64, 256))
    w = card(rand(256, 256))
    start, mid, end = (torch.spyre.Event(enable_timing=True) for _ in range(3))
    with torch.spyre.stream(s1):
        assert torch.spyre.current_stream() == s1
        start.record()
        y = x @ w
        y = y @ w
        mid.record()
    s2.wait_event(mid)
    with torch.spyre.stream(s2):
        z = F.relu(y) + 1
        end.record()
    assert torch.spyre.current_stream() == torch.spyre.default_stream()
    end.synchronize()
    assert mid.query() and end.query()
    want = F.relu(x.cpu() @ w.cpu() @ w.cpu()) + 1
    close(z, want, torch.float32, "work across two streams")
    ms = start.elapsed_time(end)
    assert 0 < ms < 60_000, f"elapsed_time {ms} ms"
    print(f"  # two matmuls, relu, add: {ms:.3f} ms on the card's clock")
    with s2:
        assert torch.spyre.current_stream() == s2
    torch.spyre.synchronize()
    assert s1.query() and s2.query()


tap("streams: two streams ordered by an event; elapsed_time; synchronize", streams)


def stream_pool():
    """Streams come from a pool of 8 per priority: 1000 Stream() calls hold 8 card streams."""
    made = [torch.spyre.Stream() for _ in range(1000)]
    ids = {s.stream_id for s in made}
    assert len(ids) == 8, f"{len(ids)} distinct streams"
    high = {torch.spyre.Stream(priority=-1).stream_id for _ in range(100)}
    assert len(high) == 8 and not high & ids, f"high priority: {sorted(high)}"
    x = card(rand(64, 64))
    with torch.spyre.stream(made[-1]):
        y = x * 2
    torch.spyre.synchronize()
    close(y, x.cpu() * 2, torch.float32, "work on a pooled stream")


tap("streams: Stream() hands out a pool of 8 per priority, round robin", stream_pool)


def jobs_submitted():
    """SUBMIT calls of this process's card files (the driver's fdinfo)."""
    total = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("/dev/accel/"):
                with open(f"/proc/self/fdinfo/{fd}") as f:
                    total += sum(int(line.split()[1]) for line in f
                                 if line.startswith("spyre-jobs-submitted:"))
        except OSError:
            continue
    return total


def compiled_replay():
    import torch_spyre.compile as sc
    w1, w2 = card(rand(128, 64)), card(rand(64, 128))

    def mlp(x):
        return F.linear(F.silu(F.linear(x, w1)), w2) * 0.5 + x

    f = torch.compile(mlp, backend="spyre", dynamic=False)
    xs = [card(rand(16, 64)) for _ in range(4)]
    with torch.no_grad():
        outs = [f(x) for x in xs]           # compile + eager, record + replay, replay, replay
        torch.spyre.synchronize()
        j0 = jobs_submitted()
        y = f(xs[0])
        torch.spyre.synchronize()
        compiled_jobs = jobs_submitted() - j0
        j0 = jobs_submitted()
        want = mlp(xs[0])
        torch.spyre.synchronize()
        eager_jobs = jobs_submitted() - j0
    for x, out in zip(xs, outs):
        close(out, mlp(x), torch.float32, "compiled mlp")
    close(y, want, torch.float32, "compiled mlp")
    assert sc.stats["replays"] >= 3 and sc.stats["captures"] >= 1, sc.stats
    # The input copied into the graph's own, ONE submission for the whole
    # graph, the output copied out.
    print(f"  # jobs per call: compiled {compiled_jobs} (copy in, replay, copy out), eager {eager_jobs}")
    assert compiled_jobs == 3, f"a compiled call submitted {compiled_jobs} jobs, not 3"
    assert eager_jobs > compiled_jobs


tap("torch.compile(backend='spyre'): replay is one submission per call (fdinfo)", compiled_replay)


def compiled_falls_back():
    def f(x):
        return torch.cumsum(x * 2, 0) + 1     # cumsum runs on the CPU: not recordable
    g = torch.compile(f, backend="spyre", dynamic=False)
    x = card(rand(8, 32))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        outs = [g(x) for _ in range(3)]
    for out in outs:
        close(out, f(x.cpu()), torch.float32, "eager fallback")
    msgs = [str(m.message) for m in w if "cannot be recorded" in str(m.message)]
    assert len(msgs) == 1, f"expected one warning, got {msgs}"
    print(f"  # {msgs[0][:200]}")


tap("torch.compile falls back to eager on what it cannot record, saying so once", compiled_falls_back)


def two_cards():
    if torch.spyre.device_count() < 2:
        raise AssertionError("the suite boots two cards; this process sees "
                             f"{torch.spyre.device_count()}")
    x = rand(33, 64)
    a = x.to("spyre:1")
    assert a.device == torch.device("spyre", 1)
    close(a @ a.t(), x @ x.t(), torch.float32, "matmul on spyre:1")
    b = a.to("spyre:0")
    assert b.device == torch.device("spyre", 0) and torch.equal(b.cpu(), x)
    try:
        a + b
    except RuntimeError as e:
        assert "same device" in str(e), str(e)
    else:
        raise AssertionError("spyre:0 + spyre:1 did not raise")


tap("two cards: spyre:1 computes, copies between cards, mixing them raises", two_cards)


def device_gone():
    """Last: the card is removed (PCI hot-unplug) under a live tensor."""
    x = card(rand(8, 8))
    bdf = os.path.basename(os.path.realpath("/sys/class/accel/accel0/device"))
    subprocess.run(["sudo", "sh", "-c", f"echo 1 > /sys/bus/pci/devices/{bdf}/remove"], check=True)
    for fn in (lambda: x.cpu(), lambda: x @ x, lambda: torch.empty(4, device="spyre").fill_(1)):
        try:
            fn()
            torch.spyre.synchronize()
        except RuntimeError as e:
            print(f"  # {str(e).splitlines()[0][:200]}")
            continue
        raise AssertionError("work on a removed card did not raise")
    del x


tap("a tensor used after its card is gone raises, no crash", device_gone)

print(f"1..{count}")
print(f"# torch: {count - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
