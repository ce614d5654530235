#!/usr/bin/env python3
"""llama_block_ref.py: the reference for examples/llama_block.c, computed by PyTorch.

    python3 examples/llama_block_ref.py > examples/llama_block.ref

Builds the same weights and input as the C demo (splitmix64 of (seed, index), uniform in
[-1, 1), scaled), runs the same block with torch in float32 on the CPU, and prints the
checksum, the sum of absolute values and the first 512 outputs. Run it where PyTorch is
installed (the GPU machine has it); the output is committed as examples/llama_block.ref.
"""
import math

import torch
import torch.nn.functional as F

T, D, H, HIDDEN = 32, 256, 8, 688
HD = D // H
M64 = (1 << 64) - 1


def uniform(seed, n):
    out = []
    for i in range(n):
        z = (seed * 0x9E3779B97F4A7C15 + i + 1) & M64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z ^= z >> 31
        out.append((z >> 11) / 9007199254740992.0 * 2.0 - 1.0)
    return out


def filled(seed, scale, *shape):
    n = math.prod(shape)
    vals = [v * scale for v in uniform(seed, n)]
    return torch.tensor(vals, dtype=torch.float64).to(torch.float32).reshape(shape)


def build():
    """The block's weights (a dict, in the C demo's order), input x, and rotary tables."""
    s, sh = 1 / math.sqrt(D), 1 / math.sqrt(HIDDEN)
    w = {}
    w["wq"], w["wk"], w["wv"], w["wo"] = (filled(i, s, D, D) for i in (1, 2, 3, 4))
    w["w_gate"], w["w_up"] = filled(5, s, HIDDEN, D), filled(6, s, HIDDEN, D)
    w["w_down"] = filled(7, sh, D, HIDDEN)
    w["norm1"], w["norm2"] = filled(8, 0.1, D) + 1, filled(9, 0.1, D) + 1
    x = filled(10, 1.0, T, D)
    cos = torch.empty(T, HD)
    sin = torch.empty(T, HD)
    for t in range(T):
        for j in range(HD):
            inv = 10000.0 ** (-2.0 * (j % (HD // 2)) / HD)
            cos[t, j] = math.cos(t * inv)
            sin[t, j] = math.sin(t * inv)
    return w, x, cos, sin


def forward(w, x, cos, sin):
    def rotary(a):
        lo, hi = a[..., : HD // 2], a[..., HD // 2:]
        return a * cos + torch.cat([-hi, lo], dim=-1) * sin

    def heads(a):
        return a.view(T, H, HD).transpose(0, 1)

    n1 = F.rms_norm(x, [D], w["norm1"])
    q, k, v = (heads(F.linear(n1, w[n])) for n in ("wq", "wk", "wv"))
    att = F.scaled_dot_product_attention(rotary(q), rotary(k), v, is_causal=True)
    h = x + F.linear(att.transpose(0, 1).contiguous().view(T, D), w["wo"])
    n2 = F.rms_norm(h, [D], w["norm2"])
    gate, up = F.linear(n2, w["w_gate"]), F.linear(n2, w["w_up"])
    return h + F.linear(F.silu(gate) * up, w["w_down"])


def main():
    w, x, cos, sin = build()
    y = forward(w, x, cos, sin)
    flat = y.flatten().double()
    print("# made by examples/llama_block_ref.py with torch", torch.__version__)
    print("checksum %.9f" % flat.sum().item())
    print("abs_sum %.9f" % flat.abs().sum().item())
    print("values " + " ".join("%.9g" % v for v in flat[:512].tolist()))


if __name__ == "__main__":
    main()
