#!/usr/bin/env python3
"""gemm_torch.py: PyTorch's torch.mm over the shape suite of bench/gemm.c, timed the same way;
with --ops, the products of bench/gemm_ops.c (linear without and with a bias over the suite,
bmm with B row-major and transposed over the bmm suite).

    python3 bench/gemm_torch.py [--smoke] [--suite FILE] --records FILE
    python3 bench/gemm_torch.py --ops [--smoke] --suite FILE --bmm-suite FILE --records FILE
    python3 bench/gemm_torch.py --serve [--smoke]

--serve: bench/gemm.c's peer (its --torch): reads lines "M N K TARGET_MS" on stdin, times
torch.mm on that shape (the median of as many calls as fill TARGET_MS; the operands kept while
the shape stays) and answers each with one line, the ms, on stdout; ends at end of input. So
PyTorch is timed in turn with ours, round by round, and both see the GPU in the same state.

Writes one line per shape to FILE: "M N K dtype ms"; with --ops "op batch M N K ms". Timing, as bench/gemm.c: each call after
an L2 flush (a 256 MiB buffer zeroed), CUDA events around the call alone, calls queued back to
back and synchronised once; the median of as many calls as fill about 60 ms (5 to 64).
Inputs: bfloat16 in [-0.5, 0.5); torch.mm(a, b), its result allocated each call, as ours. Exit status 77 without a usable GPU.
"""
import sys

import torch

MAX_CALLS, MIN_CALLS, TARGET_MS = 64, 5, 60.0
FLUSH_BYTES = 256 << 20


def read_suite(path, batched=False):
    """The suite's shapes (M, N, K), as bench/gemm.c expands its m/nk/mnk lines; batched:
    its bmnk lines' (BATCH, M, N, K)."""
    shapes, ms = [], []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            words = line.split("#")[0].split()
            if not words:
                continue
            try:
                v = [int(w) for w in words[1:]]
            except ValueError:
                v = []
            if not v or min(v) <= 0:
                raise SystemExit("%s:%d: expected positive numbers" % (path, no))
            if words[0] == "m":
                ms = v
            elif words[0] == "nk" and len(v) == 2 and ms:
                shapes += [(m, v[0], v[1]) for m in ms]
            elif words[0] == "mnk" and len(v) == 3:
                shapes.append(tuple(v))
            elif words[0] == "bmnk" and len(v) == 4:
                shapes.append(tuple(v))
            else:
                raise SystemExit("%s:%d: expected 'm M...', 'nk N K', 'mnk M N K' or "
                                 "'bmnk BATCH M N K'" % (path, no))
    return [s for s in shapes if (len(s) == 4) == batched]


def median_ms(fn, flush, smoke, target_ms=TARGET_MS):
    def timed(n):
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(n)]
        for e0, e1 in ev:
            flush.zero_()
            e0.record()
            fn()
            e1.record()
        torch.cuda.synchronize()
        return sorted(e0.elapsed_time(e1) for e0, e1 in ev)

    t = timed(2)  # warm-up, estimate
    if smoke:
        return t[1]
    n = min(MAX_CALLS, max(MIN_CALLS, int(target_ms / t[1]) if t[1] > 0 else MAX_CALLS))
    t = timed(n)
    return t[n // 2] if n % 2 else 0.5 * (t[n // 2 - 1] + t[n // 2])


def rand(*sizes):
    return (torch.rand(sizes, device="cuda") - 0.5).to(torch.bfloat16)


def ops(suite, bsuite, out, flush, smoke):
    """bench/gemm_ops.c's products, in its order."""
    shapes, bshapes = read_suite(suite), read_suite(bsuite, batched=True)
    if smoke:
        shapes, bshapes = shapes[:2], bshapes[:2]
    F = torch.nn.functional
    for op in ("linear", "linear_bias"):
        for m, n, k in shapes:
            x, w, bias = rand(m, k), rand(n, k), rand(n)
            b = bias if op == "linear_bias" else None
            ms = median_ms(lambda: F.linear(x, w, b), flush, smoke)
            out.write("%s 1 %d %d %d %.5f\n" % (op, m, n, k, ms))
            del x, w, bias, b
    for op in ("bmm_nn", "bmm_nt"):
        for bt, m, n, k in bshapes:
            x = rand(bt, m, k)
            y = rand(bt, k, n) if op == "bmm_nn" else rand(bt, n, k).transpose(1, 2)
            ms = median_ms(lambda: torch.bmm(x, y), flush, smoke)
            out.write("%s %d %d %d %d %.5f\n" % (op, bt, m, n, k, ms))
            del x, y


def serve(flush, smoke):
    """The peer of bench/gemm.c: one timed shape per input line, one ms per output line."""
    shape, a, b = None, None, None
    for line in sys.stdin:
        w = line.split()
        try:
            m, n, k, target = int(w[0]), int(w[1]), int(w[2]), float(w[3])
        except (ValueError, IndexError):
            print("gemm_torch.py: --serve: expected 'M N K TARGET_MS', got %r" % line,
                  file=sys.stderr)
            return 2
        if shape != (m, n, k):
            shape, a, b = (m, n, k), rand(m, k), rand(k, n)
        print("%.5f" % median_ms(lambda: torch.mm(a, b), flush, smoke, target), flush=True)
    return 0


def main(argv):
    smoke, with_ops, with_serve, suite, bsuite, records = (False, False, False,
                                                           "bench/gemm_suite.txt", None, None)
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--smoke":
            smoke = True
        elif a == "--ops":
            with_ops = True
        elif a == "--serve":
            with_serve = True
        elif a in ("--suite", "--bmm-suite", "--records") and args:
            v = args.pop(0)
            if a == "--suite":
                suite = v
            elif a == "--bmm-suite":
                bsuite = v
            else:
                records = v
        else:
            records = None
            break
    if (records is None and not with_serve) or (with_ops and bsuite is None):
        print("usage: gemm_torch.py [--ops] [--smoke] [--suite FILE] [--bmm-suite FILE] "
              "--records FILE | --serve [--smoke]", file=sys.stderr)
        return 2
    shapes = read_suite(suite)
    if smoke:
        shapes = shapes[:2]
    if not torch.cuda.is_available():
        print("gemm_torch.py: torch %s sees no usable GPU" % torch.__version__, file=sys.stderr)
        return 77
    print("gemm_torch.py: torch %s (CUDA %s, cuBLAS %s), %s" %
          (torch.__version__, torch.version.cuda, torch.backends.cuda.preferred_blas_library(),
           torch.cuda.get_device_name(0)), file=sys.stderr)
    flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    if with_serve:
        with torch.no_grad():
            return serve(flush, smoke)
    if with_ops:
        with torch.no_grad(), open(records, "w") as out:
            ops(suite, bsuite, out, flush, smoke)
        return 0
    with torch.no_grad(), open(records, "w") as out:
        for m, n, k in shapes:
            a = (torch.rand((m, k), device="cuda") - 0.5).to(torch.bfloat16)
            b = (torch.rand((k, n), device="cuda") - 0.5).to(torch.bfloat16)
            ms = median_ms(lambda: torch.mm(a, b), flush, smoke)
            out.write("%d %d %d bf16 %.5f\n" % (m, n, k, ms))
            del a, b
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
