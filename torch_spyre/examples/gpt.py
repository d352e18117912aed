# SPDX-License-Identifier: MIT
"""A small GPT-style decoder in plain PyTorch (random weights; RMSNorm,
grouped-query attention with rotary positions, a SwiGLU MLP, as in
Granite), run on the spyre device: a prompt's prefill, then token-by-token
decode with a key/value cache, eager and compiled (torch.compile with
backend="spyre").  Prints tokens/s for each and the compiled/eager
speedups.

  python3 gpt.py                 # the timings
  python3 gpt.py --check --tap   # also: logits equal the CPU's (TAP)

Installed by python3-torch-spyre as /usr/share/torch-spyre/examples/gpt.py;
docs/torch.md describes it.
"""
import argparse
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_spyre  # noqa: F401


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
    """Greedy decoding: the prefill's logits, then each step's."""
    caches = [[None, None] for _ in model.blocks]
    t = prompt.shape[1]
    logits = [model(prompt.to(device), model.cos[:t], model.sin[:t], caches)]
    token = logits[-1][:, -1].cpu().argmax(-1, keepdim=True)
    for pos in range(t, t + steps):
        logits.append(model(token.to(device), model.cos[pos:pos + 1], model.sin[pos:pos + 1], caches))
        token = logits[-1][:, -1].cpu().argmax(-1, keepdim=True)
    return [x.cpu() for x in logits]


def timed(fn):
    torch.spyre.synchronize()
    t0 = time.perf_counter()
    out = fn()
    torch.spyre.synchronize()
    return out, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompt", type=int, default=32, help="prompt tokens (default 32)")
    ap.add_argument("--steps", type=int, default=8, help="decoded tokens (default 8)")
    ap.add_argument("--check", action="store_true", help="compare the logits with the CPU's")
    ap.add_argument("--tap", action="store_true", help="print the checks as TAP")
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
        generate(model, prompt, 1, "spyre")            # warm: programs generated, cached
        eager, t_eager = timed(lambda: generate(model, prompt, args.steps, "spyre"))
        _, t_prefill = timed(lambda: model(prompt.to("spyre"), model.cos[:args.prompt],
                                           model.sin[:args.prompt]))
        if args.check:
            want = generate(cpu_model, prompt, args.steps, "cpu")
            # fp32 on the card; the difference is summation order (docs/torch.md).
            for i, (got, ref) in enumerate(zip(eager, want)):
                err = (got - ref).abs().max().item()
                name = "prefill" if i == 0 else f"decode step {i}"
                checks.append((f"eager {name} logits equal the CPU's (max |error| {err:.2e})",
                               torch.allclose(got, ref, rtol=2e-3, atol=2e-3)))
            same = all(torch.equal(g[:, -1].argmax(-1), r[:, -1].argmax(-1)) for g, r in zip(eager, want))
            checks.append(("eager greedy tokens equal the CPU's", same))

    decode_s = max(t_eager - t_prefill, 1e-9)
    print(f"# eager: prefill {args.prompt / t_prefill:.1f} tokens/s, "
          f"decode {args.steps / decode_s:.2f} tokens/s")
    if args.tap:
        for i, (name, ok) in enumerate(checks, 1):
            print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        print(f"1..{len(checks)}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
