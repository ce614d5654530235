#!/usr/bin/env python3
"""cuda_torch.py: PyTorch's figures for the shapes of bench/cuda.c, timed the same way.

    python3 bench/cuda_torch.py [--smoke] [GROUP...]

Groups as sg_bench_cuda's (copy norm pointwise sum mm small). Prints "torch_NAME value unit",
one figure a line, NAME as sg_bench_cuda names it; notes go to stderr. Exit status 77 where
torch has no usable GPU. bench/run cuda runs both programs in one run and computes the ratios.

Timing, as in bench/cuda.c: CUDA events on the current stream around a batch of calls after
3 warm-up calls, the batch sized to about 200 ms, the best of 5 batches; the small-op stream is
host wall time of 10,000 calls until a final synchronize, the best of 5.
"""
import os
import sys
import time

import torch

# the shared harness beside this script, however the script is started
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_harness as th  # noqa: E402
from torch_harness import filled, out, time_gpu  # noqa: E402

SMALL_CALLS = 10000


def time_host(fn):
    """Host µs per call of fn: calls in a row, then one synchronize."""
    calls = 100 if th.smoke else SMALL_CALLS
    for _ in range(calls // 10):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(1 if th.smoke else th.REPS):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best


def gbps(name, nbytes, ms):
    out(name, "%.1f" % (nbytes / (ms * 1e-3) * 1e-9), "GB/s")


def bench_copy():
    n = 1 << 30
    src = torch.ones(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    gbps("copy_gbps", 2.0 * n, time_gpu(lambda: dst.copy_(src)))


def bench_norm():
    x = filled((16384, 4096), torch.float32)
    w = filled((4096,), torch.float32, 0.5)
    gbps("rms_norm_f32_gbps", 2.0 * 4 * x.numel(),
         time_gpu(lambda: torch.rms_norm(x, (4096,), w, 1e-6)))
    del x, w
    x = filled((16384, 4096), torch.bfloat16, 2.0)
    gbps("softmax_bf16_gbps", 2.0 * 2 * x.numel(), time_gpu(lambda: torch._softmax(x, -1, False)))
    del x
    x = filled((65536, 1024), torch.bfloat16)
    w = filled((1024,), torch.bfloat16, 0.5)
    b = filled((1024,), torch.bfloat16, 0.5)
    gbps("layer_norm_bf16_gbps", 2.0 * 2 * x.numel(),
         time_gpu(lambda: torch.native_layer_norm(x, [1024], w, b, 1e-5)))


def bench_pointwise():
    n = 64 << 20
    a, b = filled((n,), torch.float32), filled((n,), torch.float32)
    c = torch.empty_like(a)
    gbps("add_f32_gbps", 3.0 * 4 * n, time_gpu(lambda: torch.add(a, b, out=c)))
    gbps("mul_f32_gbps", 3.0 * 4 * n, time_gpu(lambda: torch.mul(a, b, out=c)))
    gbps("exp_f32_gbps", 2.0 * 4 * n, time_gpu(lambda: torch.exp(a, out=c)))
    del a, b, c
    a, b = filled((n,), torch.bfloat16), filled((n,), torch.bfloat16)
    c = torch.empty_like(a)
    gbps("add_bf16_gbps", 3.0 * 2 * n, time_gpu(lambda: torch.add(a, b, out=c)))


def bench_sum():
    x = filled((16384, 4096), torch.float32)
    o = torch.empty(16384, device="cuda")
    gbps("sum_f32_gbps", 4.0 * (x.numel() + 16384), time_gpu(lambda: torch.sum(x, -1, out=o)))


def bench_mm():
    a = filled((8192, 8192), torch.bfloat16, 0.25)
    b = filled((8192, 8192), torch.bfloat16, 0.25)
    c = torch.empty_like(a)
    ms = time_gpu(lambda: torch.mm(a, b, out=c))
    out("mm_bf16_tflops", "%.1f" % (2.0 * 8192 ** 3 / (ms * 1e-3) * 1e-12), "TFLOP/s")


def bench_small():
    a, b = filled((65536,), torch.float32), filled((65536,), torch.float32)
    out("small_add_us", "%.3f" % time_host(lambda: torch.add(a, b)), "us")


GROUPS = {"copy": bench_copy, "norm": bench_norm, "pointwise": bench_pointwise,
          "sum": bench_sum, "mm": bench_mm, "small": bench_small}


if __name__ == "__main__":
    sys.exit(th.main("cuda_torch.py", GROUPS, sys.argv[1:]))
