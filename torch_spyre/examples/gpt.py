# SPDX-License-Identifier: MIT
"""A small GPT-style decoder in plain PyTorch (random weights; RMSNorm,
grouped-query attention with rotary positions, a SwiGLU MLP, as in
Granite), run on the spyre device: a prompt's prefill, then token-by-token
decode with a key/value cache, eager and compiled (torch.compile with
backend="spyre").  Prints tokens/s for each and the compiled/eager
speedups.

  python3 gpt.py                 # the timings
  python3 gpt.py --check --tap   # also: logits equal the CPU's (TAP)
  python3 gpt.py --json --rounds 5   # also: the figures as JSON, speedups the
                                     # median of 5 interleaved rounds (make bench)

Installed by python3-torch-spyre as /usr/share/torch-spyre/examples/gpt.py;
docs/torch.md describes it.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_spyre
import torch_spyre.compile


class Config:
    vocab = 512
    dim = 256
    layers = 2
    heads = 4
    kv_heads = 2
    head_dim = 64
    ffn = 512
    max_seq = 128
    eps = 1e-5


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))

    def forward(self, x):
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


def rotate(x, cos, sin):
    """Rotary positions: x * cos + rotate_half(x) * sin."""
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.wq = nn.Linear(c.dim, c.heads * c.head_dim, bias=False)
        self.wk = nn.Linear(c.dim, c.kv_heads * c.head_dim, bias=False)
        self.wv = nn.Linear(c.dim, c.kv_heads * c.head_dim, bias=False)
        self.wo = nn.Linear(c.heads * c.head_dim, c.dim, bias=False)

    def forward(self, x, cos, sin, cache):
        c = self.c
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, c.heads, c.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, t, c.kv_heads, c.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, t, c.kv_heads, c.head_dim).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        if cache is not None:
            if cache[0] is not None:
                k = torch.cat((cache[0], k), dim=2)
                v = torch.cat((cache[1], v), dim=2)
            cache[0], cache[1] = k, v
        y = F.scaled_dot_product_attention(q, k, v, is_causal=t > 1, enable_gqa=True)
        return self.wo(y.transpose(1, 2).reshape(b, t, c.heads * c.head_dim))


class SwiGLU(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate = nn.Linear(c.dim, c.ffn, bias=False)
        self.up = nn.Linear(c.dim, c.ffn, bias=False)
        self.down = nn.Linear(c.ffn, c.dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm1, self.attn = RMSNorm(c.dim, c.eps), Attention(c)
        self.norm2, self.mlp = RMSNorm(c.dim, c.eps), SwiGLU(c)

    def forward(self, x, cos, sin, cache):
        x = x + self.attn(self.norm1(x), cos, sin, cache)
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab, c.dim)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.norm = RMSNorm(c.dim, c.eps)
        self.head = nn.Linear(c.dim, c.vocab, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, c.head_dim, 2).float() / c.head_dim))
        angles = torch.outer(torch.arange(c.max_seq).float(), inv)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=1.0 / math.sqrt(p.shape[1]))

    def forward(self, tokens, cos, sin, caches=None):
        """Logits of every position; cos/sin: the positions' rotary tables."""
        x = self.embed(tokens)
        for i, block in enumerate(self.blocks):
            x = block(x, cos, sin, None if caches is None else caches[i])
        return self.head(self.norm(x))


def generate(model, prompt, steps, device):
    """Greedy decoding: the prefill's logits, then each step's, and the
    seconds the prefill and the decode steps took (each step ends reading
    its token on the host, which waits for the card)."""
    caches = [[None, None] for _ in model.blocks]
    t = prompt.shape[1]
    t0 = time.perf_counter()
    logits = [model(prompt.to(device), model.cos[:t], model.sin[:t], caches)]
    token = logits[-1][:, -1].cpu().argmax(-1, keepdim=True)
    t1 = time.perf_counter()
    for pos in range(t, t + steps):
        logits.append(model(token.to(device), model.cos[pos:pos + 1], model.sin[pos:pos + 1], caches))
        token = logits[-1][:, -1].cpu().argmax(-1, keepdim=True)
    t2 = time.perf_counter()
    return [x.cpu() for x in logits], t1 - t0, t2 - t1


def jobs_submitted():
    """SUBMIT calls of this process's card files (the driver's fdinfo)."""
    total = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("/dev/accel/"):
                continue
            with open(f"/proc/self/fdinfo/{fd}") as f:
                total += sum(int(line.split()[1]) for line in f
                             if line.startswith("spyre-jobs-submitted:"))
        except OSError:
            continue
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompt", type=int, default=32, help="prompt tokens (default 32)")
    ap.add_argument("--steps", type=int, default=8, help="decoded tokens (default 8)")
    ap.add_argument("--check", action="store_true", help="compare the logits with the CPU's")
    ap.add_argument("--tap", action="store_true", help="print the checks as TAP")
    ap.add_argument("--rounds", type=int, default=1,
                    help="interleaved eager/compiled rounds the speedups are the median of (default 1)")
    ap.add_argument("--json", action="store_true",
                    help="also print the figures as one SPYRE-BENCH-JSON line (make bench)")
    args = ap.parse_args()

    torch.manual_seed(0)
    c = Config()
    cpu_model = GPT(c).eval()
    model = GPT(c).eval()
    model.load_state_dict(cpu_model.state_dict())
    model.to("spyre")
    prompt = torch.randint(0, c.vocab, (1, args.prompt))
    checks = []

    with torch.no_grad():
        generate(model, prompt, args.steps, "spyre")    # warm: the op library's programs
        jobs0 = jobs_submitted()
        eager, eager_pre, eager_dec = generate(model, prompt, args.steps, "spyre")
        jobs_eager = jobs_submitted() - jobs0
        # Compiled: one recording per input shape (every decode step has its
        # own, the cache growing), so dynamo keeps one graph per step.
        torch._dynamo.config.cache_size_limit = max(64, 2 * args.steps + 8)
        compiled = torch.compile(model, backend="spyre", dynamic=False)
        for _ in range(2):                              # compile, then record
            generate(compiled, prompt, args.steps, "spyre")
        jobs0 = jobs_submitted()
        graphs, graph_pre, graph_dec = generate(compiled, prompt, args.steps, "spyre")
        jobs_compiled = jobs_submitted() - jobs0
        # Speedups: medians of interleaved rounds (eager, compiled, eager, ...).
        ratios = {"prefill": [eager_pre / graph_pre], "decode": [eager_dec / graph_dec]}
        for _ in range(args.rounds - 1):
            _, e_pre, e_dec = generate(model, prompt, args.steps, "spyre")
            _, g_pre, g_dec = generate(compiled, prompt, args.steps, "spyre")
            ratios["prefill"].append(e_pre / g_pre)
            ratios["decode"].append(e_dec / g_dec)
        if args.check:
            want, _, _ = generate(cpu_model, prompt, args.steps, "cpu")
            # fp32 on the card; the difference is summation order (docs/torch.md).
            for how, got_all in (("eager", eager), ("compiled", graphs)):
                for i, (got, ref) in enumerate(zip(got_all, want)):
                    err = (got - ref).abs().max().item()
                    name = "prefill" if i == 0 else f"decode step {i}"
                    checks.append((f"{how} {name} logits equal the CPU's (max |error| {err:.2e})",
                                   torch.allclose(got, ref, rtol=2e-3, atol=2e-3)))
                same = all(torch.equal(g[:, -1].argmax(-1), r[:, -1].argmax(-1))
                           for g, r in zip(got_all, want))
                checks.append((f"{how} greedy tokens equal the CPU's", same))
            st = torch_spyre.compile.stats
            checks.append((f"compiled calls replayed graphs ({st['replays']} replays, "
                           f"{st['captures']} recordings, {st['eager_parts']} parts left eager)",
                           st["replays"] > 0 and st["eager_parts"] == 0))
            checks.append((f"compiled generation submits fewer jobs: {jobs_compiled} vs eager "
                           f"{jobs_eager}", 0 < jobs_compiled < jobs_eager))

    for how, pre, dec in (("eager", eager_pre, eager_dec), ("compiled", graph_pre, graph_dec)):
        print(f"# {how}: prefill {args.prompt / pre:.1f} tokens/s, decode {args.steps / dec:.2f} tokens/s")
    pre_x, dec_x = statistics.median(ratios["prefill"]), statistics.median(ratios["decode"])
    print(f"# compiled/eager (median of {len(ratios['decode'])}): prefill {pre_x:.2f}x, decode {dec_x:.2f}x; "
          f"jobs per generation (1 prefill + {args.steps} decode calls): eager {jobs_eager}, "
          f"compiled {jobs_compiled}")
    if args.json:
        rows = [("torch.graph_vs_eager_prefill", pre_x, "x (goal >= 1.7)"),
                ("torch.graph_vs_eager_prefill.min", min(ratios["prefill"]), "x"),
                ("torch.graph_vs_eager_prefill.max", max(ratios["prefill"]), "x"),
                ("torch.graph_vs_eager_decode", dec_x, "x (goal >= 2.4)"),
                ("torch.graph_vs_eager_decode.min", min(ratios["decode"]), "x"),
                ("torch.graph_vs_eager_decode.max", max(ratios["decode"]), "x"),
                ("torch.gpt_prefill_tokens_per_s_eager", args.prompt / eager_pre, "tokens/s"),
                ("torch.gpt_prefill_tokens_per_s_compiled", args.prompt / graph_pre, "tokens/s"),
                ("torch.gpt_decode_tokens_per_s_eager", args.steps / eager_dec, "tokens/s"),
                ("torch.gpt_decode_tokens_per_s_compiled", args.steps / graph_dec, "tokens/s"),
                ("torch.gpt_jobs_eager", jobs_eager, "jobs/generation"),
                ("torch.gpt_jobs_compiled", jobs_compiled, "jobs/generation")]
        print("SPYRE-BENCH-JSON " + json.dumps([{"name": n, "value": v, "unit": u} for n, v, u in rows]))
    if args.tap:
        for i, (name, ok) in enumerate(checks, 1):
            print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        print(f"1..{len(checks)}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
