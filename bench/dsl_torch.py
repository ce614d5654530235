#!/usr/bin/env python3
"""dsl_torch.py: PyTorch's figures for the shapes of bench/dsl.c, timed the same way.

    python3 bench/dsl_torch.py [--smoke] [GROUP...]

Groups as sg_bench_dsl's (bandwidth host). Prints "torch_NAME value unit", one figure a line,
NAME as sg_bench_dsl names its figures (dsl_NAME); notes go to stderr. Exit status 77 where
torch has no usable GPU. bench/run dsl runs both programs in one run and computes the ratios.

The ops: torch.rms_norm, torch._softmax(x, -1, False), torch.native_layer_norm, and for
fused::add_rms_norm, which PyTorch does not have, torch.rms_norm(x + r) (two kernels); its
bytes are the fused op's (x and r read, y and the sum written), as in bench/dsl.c.

Timing, as in bench/dsl.c: CUDA events on the current stream around a batch of calls after
3 warm-up calls, the batch sized to about 200 ms, the best of 5 batches. Host time: wall time
of the calls alone, 128 at a time with an untimed synchronize after each, the best of 41
rounds of 1024 calls.
"""
import sys
import time

import torch

REPS, WARMUP, BATCH_MS = 5, 3, 200.0
CHUNK, ROUNDS, ROUND_CALLS = 128, 41, 1024
RMS_EPS, LN_EPS = 1e-6, 1e-5
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


def host_us(fn):
    """Host µs per call of fn: the calls alone, CHUNK at a time, synchronized between chunks."""
    calls = CHUNK if smoke else ROUND_CALLS
    for _ in range(CHUNK):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(1 if smoke else ROUNDS):
        t = 0.0
        for _ in range(calls // CHUNK):
            t0 = time.perf_counter()
            for _ in range(CHUNK):
                fn()
            t += time.perf_counter() - t0
            torch.cuda.synchronize()
        best = min(best, t / calls * 1e6)
    return best


def filled(shape, dtype, scale=1.0):
    return ((torch.rand(shape, device="cuda", dtype=torch.float32) * 4 - 2) * scale).to(dtype)


def op_bytes(name, rows, n, es):
    """What the op must move, as bench/dsl.c's op_bytes."""
    rn, wn = float(rows) * n * es, float(n) * es
    if name == "rms_norm":
        return 2 * rn + wn + 4.0 * rows
    if name == "softmax":
        return 2 * rn
    if name == "layer_norm":
        return 2 * rn + 2 * wn + 8.0 * rows
    return 4 * rn + wn  # add_rms_norm


def bench_bandwidth():
    n = (1 << 20) if smoke else (256 << 20)
    src = torch.ones(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    out("copy_gbps", "%.1f" % (2.0 * n / (time_gpu(lambda: dst.copy_(src)) * 1e-3) * 1e-9),
        "GB/s")
    del src, dst
    for dt, dn, es in ((torch.float32, "f32", 4), (torch.bfloat16, "bf16", 2)):
        for n in (1024, 2048, 4096, 8192, 16384):
            rows = 256 if smoke else (256 << 20) // (n * es)
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


def bench_host():
    x = filled((1, 1024), torch.float32)
    w = filled((1024,), torch.float32, 0.5)
    out("rms_norm_1x1024_us", "%.3f" % host_us(lambda: torch.rms_norm(x, (1024,), w, RMS_EPS)),
        "us")
    # the op itself, without torch.rms_norm's Python-side routing
    if hasattr(torch.ops.aten, "_fused_rms_norm"):
        f = torch.ops.aten._fused_rms_norm.default
        out("fused_rms_norm_1x1024_us", "%.3f" % host_us(lambda: f(x, [1024], w, RMS_EPS)), "us")


GROUPS = {"bandwidth": bench_bandwidth, "host": bench_host}


def main(argv):
    global smoke
    want = []
    for a in argv:
        if a == "--smoke":
            smoke = True
        elif a in GROUPS:
            want.append(a)
        else:
            print("usage: dsl_torch.py [--smoke] [%s...]" % "|".join(GROUPS), file=sys.stderr)
            return 2
    if not torch.cuda.is_available():
        print("dsl_torch.py: torch %s sees no usable GPU" % torch.__version__, file=sys.stderr)
        return 77
    p = torch.cuda.get_device_properties(0)
    print("dsl_torch.py: torch %s (CUDA %s), %s" % (torch.__version__, torch.version.cuda, p.name),
          file=sys.stderr)
    rc = 0
    for name, fn in GROUPS.items():
        if want and name not in want:
            continue
        try:
            with torch.no_grad():
                fn()
        except Exception as e:  # one group failing leaves the others' figures
            print("dsl_torch.py: %s: %s: %s" % (name, type(e).__name__, e), file=sys.stderr)
            rc = 1
        torch.cuda.empty_cache()
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
