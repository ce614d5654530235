#!/usr/bin/env python3
"""gemm_floor.py: how far any kernel could beat torch.mm on the gemm suite's memory-bound
products (M of at most 64), as bench/gemm.c times them.

    python3 bench/gemm_floor.py [--smoke]

A product with few rows must read B (K x N) once; no kernel can take less than the time of a
kernel that only reads B's bytes. For each such shape of bench/gemm_suite.txt this times
torch.mm and that floor the way bench/gemm_torch.py times (each call after a 256 MiB L2 flush,
CUDA events around the call alone, the median), the floor being the best of a few grid and
block sizes of a Triton kernel that sums B's elements (one float per program). torch.mm's
time over the floor's is the most any kernel could gain on a shape (stderr has each shape's);
prints their geometric mean "gemm_floor_torch_over_read_geomean", their largest
"gemm_floor_torch_over_read_max" and "gemm_floor_empty_us", an empty kernel's time in the
same measure. Needs torch and triton (the GPU machine's); exit 77 without a GPU.
"""
import math
import os
import sys

import torch
import triton
import triton.language as tl

from gemm_torch import FLUSH_BYTES, median_ms

MAX_M = 64
WAVES = (2, 4, 8, 16)  # programs per multiprocessor tried by the read
BLOCKS = (1024, 2048, 4096)


@triton.jit
def _empty(x):
    pass


@triton.jit
def _read(src, out, n, BLOCK: tl.constexpr):
    """Program p sums the blocks p, p + P, ... of src's n elements (n a multiple of BLOCK)."""
    p = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(p * BLOCK, n, tl.num_programs(0) * BLOCK):
        acc += tl.load(src + i + tl.arange(0, BLOCK)).to(tl.float32)
    tl.store(out + p, tl.sum(acc))


def suite_shapes():
    """(M, N, K) of bench/gemm_suite.txt with M <= MAX_M."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gemm_suite.txt")
    ms, shapes = [], []
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[0] == "m":
                ms = [int(v) for v in w[1:]]
            elif w[0] == "nk":
                shapes += [(m, int(w[1]), int(w[2])) for m in ms]
            elif w[0] == "mnk":
                shapes.append(tuple(int(v) for v in w[1:4]))
    return [s for s in shapes if s[0] <= MAX_M]


def out(name, value, unit):
    print("%s %s %s" % (name, value, unit), flush=True)


def main(argv):
    smoke = argv == ["--smoke"]
    if argv and not smoke:
        print("usage: gemm_floor.py [--smoke]", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gemm_floor.py: torch %s sees no usable GPU" % torch.__version__, file=sys.stderr)
        return 77
    flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    target = 1.0 if smoke else 20.0

    def time(fn):
        fn()  # Triton compiles on a kernel's first call: not in the timed ones
        torch.cuda.synchronize()
        return median_ms(fn, flush, smoke, target)

    x = torch.zeros(1, device="cuda")
    out("gemm_floor_empty_us", "%.2f" % (time(lambda: _empty[(1,)](x)) * 1e3), "us")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    grids = [w * sms for w in WAVES]
    sums = torch.empty(max(grids), device="cuda")
    floors = {}  # B's element count: its floor, ms
    ratios = []
    shapes = suite_shapes()
    for m, n, k in shapes[:2] if smoke else shapes:
        a = (torch.rand(m, k, device="cuda") - 0.5).to(torch.bfloat16)
        b = (torch.rand(k, n, device="cuda") - 0.5).to(torch.bfloat16)
        if k * n not in floors:
            floors[k * n] = min(
                time(lambda: _read[(g,)](b, sums, k * n, BLOCK=bl))
                for g in grids for bl in BLOCKS if (k * n) % bl == 0)
        mm = time(lambda: torch.mm(a, b))
        ratios.append(mm / floors[k * n])
        print("gemm_floor.py: %dx%dx%d: torch.mm %.2f us, reading B %.2f us: %.3f"
              % (m, n, k, mm * 1e3, floors[k * n] * 1e3, ratios[-1]), file=sys.stderr)
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    out("gemm_floor_torch_over_read_geomean", "%.3f" % geo, "ratio")
    out("gemm_floor_torch_over_read_max", "%.3f" % max(ratios), "ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
