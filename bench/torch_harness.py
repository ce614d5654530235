"""torch_harness.py: what bench/cuda_torch.py and bench/dsl_torch.py share: the figure line, the
inputs, the GPU timing (as bench/gpu_harness.c times ours) and the command line.

GPU time: CUDA events on the current stream around a batch of calls after 3 warm-up calls, the
batch sized to about 200 ms, the best of 5 batches; with --smoke, one warm-up and one timed call.
"""
import sys

import torch

REPS, WARMUP, BATCH_MS = 5, 3, 200.0
smoke = False  # set by main() from --smoke; the scripts' own timers read it too


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


def filled(shape, dtype, scale=1.0):
    return ((torch.rand(shape, device="cuda", dtype=torch.float32) * 4 - 2) * scale).to(dtype)


def main(prog, groups, argv):
    """[--smoke] [GROUP...]: runs the named groups of groups (all where none is named), each
    under no_grad; one failing leaves the others' figures. The exit status."""
    global smoke
    want = []
    for a in argv:
        if a == "--smoke":
            smoke = True
        elif a in groups:
            want.append(a)
        else:
            print("usage: %s [--smoke] [%s...]" % (prog, "|".join(groups)), file=sys.stderr)
            return 2
    if not torch.cuda.is_available():
        print("%s: torch %s sees no usable GPU" % (prog, torch.__version__), file=sys.stderr)
        return 77
    p = torch.cuda.get_device_properties(0)
    print("%s: torch %s (CUDA %s), %s" % (prog, torch.__version__, torch.version.cuda, p.name),
          file=sys.stderr)
    rc = 0
    for name, fn in groups.items():
        if want and name not in want:
            continue
        try:
            with torch.no_grad():
                fn()
        except Exception as e:  # one group failing leaves the others' figures
            print("%s: %s: %s: %s" % (prog, name, type(e).__name__, e), file=sys.stderr)
            rc = 1
        torch.cuda.empty_cache()
    return rc
