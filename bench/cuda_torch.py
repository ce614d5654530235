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
import sys
import time

import torch

REPS, WARMUP, SMALL_CALLS, BATCH_MS = 5, 3, 10000, 200.0
smoke = False


def out(name, value, unit):
    print("torch_%s %s %s" % (name, value, unit), flush=True)


def time_gpu(fn):
    """ms per call of fn on the GPU."""
    for _ in range(1 if smoke else WARMUP):
        fn()
    torch.cuda.synchronize()
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)

    def batch(n):
        e0.record()
        for _ in range(n):
            fn()
        e1.record()
        e1.synchronize()
        return e0.elapsed_time(e1) / n

    if smoke:
        return batch(1)
    est = batch(3)
    n = int(min(10000.0, max(3.0, BATCH_MS / est))) if est > 0 else 10000
    return min(batch(n) for _ in range(REPS))


def time_host(fn):
    """Host µs per call of fn: calls in a row, then one synchronize."""
    calls = 100 if smoke else SMALL_CALLS
    for _ in range(calls // 10):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(1 if smoke else REPS):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best


def gbps(name, nbytes, ms):
    out(name, "%.1f" % (nbytes / (ms * 1e-3) * 1e-9), "GB/s")


def filled(shape, dtype, scale=1.0):
    return ((torch.rand(shape, device="cuda", dtype=torch.float32) * 4 - 2) * scale).to(dtype)


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


def main(argv):
    global smoke
    want = []
    for a in argv:
        if a == "--smoke":
            smoke = True
        elif a in GROUPS:
            want.append(a)
        else:
            print("usage: cuda_torch.py [--smoke] [%s...]" % "|".join(GROUPS), file=sys.stderr)
            return 2
    if not torch.cuda.is_available():
        print("cuda_torch.py: torch %s sees no usable GPU" % torch.__version__, file=sys.stderr)
        return 77
    p = torch.cuda.get_device_properties(0)
    print("cuda_torch.py: torch %s (CUDA %s), %s" % (torch.__version__, torch.version.cuda, p.name),
          file=sys.stderr)
    rc = 0
    for name, fn in GROUPS.items():
        if want and name not in want:
            continue
        try:
            with torch.no_grad():
                fn()
        except Exception as e:  # one group failing leaves the others' figures
            print("cuda_torch.py: %s: %s: %s" % (name, type(e).__name__, e), file=sys.stderr)
            rc = 1
        torch.cuda.empty_cache()
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
