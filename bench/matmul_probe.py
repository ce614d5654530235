#!/usr/bin/env python3
"""matmul_probe.py: is there a matmul shape on this GPU where a Triton kernel beats PyTorch's
(cuBLAS/cuBLASLt) mm? The question issue 21 asks before a Triton matmul is shipped; the answer
is in docs/perf.md with the figures.

    python3 bench/matmul_probe.py [--smoke]

bfloat16 A (M x K) @ B (K x N), float32 accumulation, on skinny (decode-like: M of 1 to 64) and
odd (sizes not a multiple of 8 or 16) shapes. For each shape: torch.mm, and the shipped Triton
kernel (kernels/dsl/triton/mm.py, by the JIT, which specialises on the sizes' alignment as the
declarations' units of 8 do ahead of time) over a fixed list of tile configurations, each timed
as bench/dsl_torch.py times (CUDA events around a batch, best of 5); the best configuration
whose result is within 2e-2 of the product in double (|c - ref| / (1 + |ref|)) is the Triton
figure. torch.mm's own error in that measure, 0.1-0.4 on odd shapes where cuBLAS reduces split
K in bfloat16, goes to stderr beside it. Prints "matmul_probe_SHAPE_torch_tflops",
"..._triton_tflops" and "..._triton_vs_torch" lines (name value unit).
Needs torch and triton (the GPU machine's); exit 77 without a GPU.
"""
import os
import sys

import torch
import triton

import torch_harness as th

# the shipped kernel (kernels/dsl/triton/mm.py), run by Triton's JIT: its sizes in units of 1
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels",
                                "dsl", "triton"))
from mm import mm_fwd  # noqa: E402


# (BM, BN, BK, GROUP, warps, stages): small-M tiles for skinny shapes, the usual large ones
CONFIGS = [
    (16, 64, 128, 8, 4, 4), (16, 128, 128, 8, 4, 4), (32, 64, 64, 8, 4, 4),
    (64, 64, 64, 8, 4, 4), (64, 128, 64, 8, 4, 4), (128, 128, 64, 8, 8, 3),
    (128, 256, 64, 8, 8, 3), (128, 64, 64, 8, 4, 4),
]

SHAPES = [  # (M, N, K)
    (1, 4096, 4096), (4, 4096, 4096), (16, 4096, 4096), (64, 4096, 4096),
    (1, 11008, 4096), (16, 11008, 4096), (1, 4096, 11008), (16, 4096, 11008),
    (16, 14336, 4096), (64, 14336, 4096),
    (1000, 1000, 1000), (1999, 1999, 1999), (4095, 4095, 4095), (4097, 4097, 4097),
    (128, 4097, 4097), (4096, 4096, 4097), (4096, 4097, 4096), (333, 5555, 777),
]


def rel_error(c, ref):
    """The largest |c - ref| / (1 + |ref|), ref computed in double."""
    return ((c.float() - ref).abs() / (1 + ref.abs())).max().item()


def out(name, value, unit):
    print("%s %s %s" % (name, value, unit), flush=True)


def triton_mm(a, b, cfg):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    BM, BN, BK, G, w, s = cfg
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    mm_fwd[grid](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK, GROUP=G, NU=1, KU=1, num_warps=w,
                 num_stages=s)
    return c


def probe():
    shapes = SHAPES[:3] if th.smoke else SHAPES
    for M, N, K in shapes:
        a = th.filled((M, K), torch.bfloat16, 0.25)
        b = th.filled((K, N), torch.bfloat16, 0.25)
        name = "matmul_probe_%dx%dx%d" % (M, N, K)
        flop = 2.0 * M * N * K
        ref = (a.double() @ b.double()).float()
        err_torch = rel_error(torch.mm(a, b), ref)
        t_ms = th.time_gpu(lambda: torch.mm(a, b))
        best, best_cfg, best_err = None, None, None
        for cfg in CONFIGS:
            try:
                err = rel_error(triton_mm(a, b, cfg), ref)
                if err > 2e-2:
                    print("matmul_probe: %s %s: error %.3g: left out" % (name, cfg, err),
                          file=sys.stderr)
                    continue
                ms = th.time_gpu(lambda: triton_mm(a, b, cfg))
            except Exception as e:  # a configuration the GPU cannot run (shared memory)
                print("matmul_probe: %s %s: %s" % (name, cfg, type(e).__name__), file=sys.stderr)
                continue
            if best is None or ms < best:
                best, best_cfg, best_err = ms, cfg, err
        out(name + "_torch_tflops", "%.2f" % (flop / (t_ms * 1e-3) * 1e-12), "TFLOP/s")
        if best is not None:
            out(name + "_triton_tflops", "%.2f" % (flop / (best * 1e-3) * 1e-12), "TFLOP/s")
            out(name + "_triton_vs_torch", "%.3f" % (t_ms / best), "ratio")
            print("matmul_probe: %s: best %s, error %.3g (torch.mm's %.3g)"
                  % (name, best_cfg, best_err, err_torch), file=sys.stderr)
        del a, b, ref


if __name__ == "__main__":
    sys.exit(th.main("matmul_probe.py", {"probe": probe}, sys.argv[1:]))
