#!/usr/bin/env python3
"""dsl_torch.py: PyTorch's figures for the shapes of bench/dsl.c, timed the same way.

    python3 bench/dsl_torch.py [--smoke] [GROUP...]

Groups as sg_bench_dsl's (bandwidth matmul host). Prints "torch_NAME value unit", one figure a line,
NAME as sg_bench_dsl names its figures (dsl_NAME); notes go to stderr. Exit status 77 where
torch has no usable GPU. bench/run dsl runs both programs in one run and computes the ratios.

The ops: torch.rms_norm, torch._softmax(x, -1, False), torch.native_layer_norm, and for
fused::add_rms_norm, which PyTorch does not have, torch.rms_norm(x + r) (two kernels); its
bytes are the fused op's (x and r read, y and the sum written), as in bench/dsl.c; for
fused::silu_mul, F.silu(x) * r (two kernels) at N = 4096 only, its bytes the fused op's;
torch.mm on bench/dsl.c's bfloat16 matmul shapes, in TFLOP/s.

Timing, as in bench/dsl.c: CUDA events on the current stream around a batch of calls after
3 warm-up calls, the batch sized to about 200 ms, the best of 5 batches. Host time: wall time
of the calls alone, 128 at a time with an untimed synchronize after each, the best of 41
rounds of 1024 calls.
"""
import os
import sys
import time

import torch

# the shared harness beside this script, however the script is started
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_harness as th  # noqa: E402
from torch_harness import filled, out, time_gpu  # noqa: E402

CHUNK, ROUNDS, ROUND_CALLS = 128, 41, 1024
RMS_EPS, LN_EPS = 1e-6, 1e-5


def host_us(fn):
    """Host µs per call of fn: the calls alone, CHUNK at a time, synchronized between chunks."""
    calls = CHUNK if th.smoke else ROUND_CALLS
    for _ in range(CHUNK):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(1 if th.smoke else ROUNDS):
        t = 0.0
        for _ in range(calls // CHUNK):
            t0 = time.perf_counter()
            for _ in range(CHUNK):
                fn()
            t += time.perf_counter() - t0
            torch.cuda.synchronize()
        best = min(best, t / calls * 1e6)
    return best


def op_bytes(name, rows, n, es):
    """What the op must move, as bench/dsl.c's op_bytes."""
    rn, wn = float(rows) * n * es, float(n) * es
    if name == "rms_norm":
        return 2 * rn + wn + 4.0 * rows
    if name == "softmax":
        return 2 * rn
    if name == "layer_norm":
        return 2 * rn + 2 * wn + 8.0 * rows
    if name == "silu_mul":
        return 3 * rn
    return 4 * rn + wn  # add_rms_norm


def bench_bandwidth():
    n = (1 << 20) if th.smoke else (256 << 20)
    src = torch.ones(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    out("copy_gbps", "%.1f" % (2.0 * n / (time_gpu(lambda: dst.copy_(src)) * 1e-3) * 1e-9),
        "GB/s")
    del src, dst
    for dt, dn, es in ((torch.float32, "f32", 4), (torch.bfloat16, "bf16", 2)):
        for n in (1024, 2048, 4096, 8192, 16384):
            rows = 256 if th.smoke else (256 << 20) // (n * es)
            x = filled((rows, n), dt)
            w = filled((n,), dt, 0.5)
            b = filled((n,), dt, 0.5)
            r = filled((rows, n), dt)
            ops = {
                "rms_norm": lambda: torch.rms_norm(x, (n,), w, RMS_EPS),
                "softmax": lambda: torch._softmax(x, -1, False),
                "layer_norm": lambda: torch.native_layer_norm(x, [n], w, b, LN_EPS),
                "add_rms_norm": lambda: torch.rms_norm(x + r, (n,), w, RMS_EPS),
            }
            if n == 4096:  # elementwise: one size, as bench/dsl.c
                ops["silu_mul"] = lambda: torch.nn.functional.silu(x) * r
            for name, fn in ops.items():
                try:
                    ms = time_gpu(fn)
                except Exception as e:  # one op failing leaves the others' figures
                    print("dsl_torch.py: %s %s %dx%d: %s: %s" % (name, dn, rows, n,
                                                               type(e).__name__, e),
                          file=sys.stderr)
                    continue
                out("%s_%s_%d_gbps" % (name, dn, n),
                    "%.1f" % (op_bytes(name, rows, n, es) / (ms * 1e-3) * 1e-9), "GB/s")
            del x, w, b, r
            torch.cuda.empty_cache()


def bench_matmul():
    shapes = ((4096, 4096, 4097), (4096, 4097, 4096), (8192, 8192, 8193), (2048, 2047, 2048))
    for m, n, k in shapes:
        if th.smoke:
            m, n, k = m // 4, n // 4 + (n % 8 != 0), k // 4 + (k % 8 != 0)
        a = filled((m, k), torch.bfloat16, 0.1)
        b = filled((k, n), torch.bfloat16, 0.1)
        ms = time_gpu(lambda: torch.mm(a, b))
        out("mm_bf16_%dx%dx%d_tflops" % (m, n, k), "%.2f" % (2.0 * m * n * k / (ms * 1e-3) * 1e-12),
            "TFLOP/s")
        del a, b


def bench_host():
    x = filled((1, 1024), torch.float32)
    w = filled((1024,), torch.float32, 0.5)
    out("rms_norm_1x1024_us", "%.3f" % host_us(lambda: torch.rms_norm(x, (1024,), w, RMS_EPS)),
        "us")
    # the op itself, without torch.rms_norm's Python-side routing
    if hasattr(torch.ops.aten, "_fused_rms_norm"):
        f = torch.ops.aten._fused_rms_norm.default
        out("fused_rms_norm_1x1024_us", "%.3f" % host_us(lambda: f(x, [1024], w, RMS_EPS)), "us")


GROUPS = {"bandwidth": bench_bandwidth, "matmul": bench_matmul, "host": bench_host}


if __name__ == "__main__":
    sys.exit(th.main("dsl_torch.py", GROUPS, sys.argv[1:]))
