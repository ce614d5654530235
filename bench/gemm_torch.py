#!/usr/bin/env python3
"""gemm_torch.py: PyTorch's side of bench/gemm.c and bench/gemm_ops.c, timed in turn with
theirs: the peer process they start (their --torch).

    python3 bench/gemm_torch.py --serve [--smoke]

Reads lines "OP BATCH M N K TARGET_MS" on stdin and answers each with one line on stdout, the
ms of PyTorch's call on that product: OP mm (torch.mm of A [M, K] and B [K, N]), linear and
linear_bias (F.linear of x [M, K] and a row-major weight [N, K], the second with a bias [N]),
bmm_nn and bmm_nt (torch.bmm of [BATCH, M, K] and B [BATCH, K, N], row-major or the transpose
of a row-major [BATCH, N, K]). The operands are kept while the product stays. Timing, as
gemm_util.h: each call after an L2 flush (a 256 MiB buffer zeroed), CUDA events around the call
alone, calls queued back to back and synchronised once; the median of as many calls as fill
TARGET_MS (5 to 64; one under --smoke). The caller asks round by round, between its own
rounds, so both sides see the GPU in the same state. Inputs: bfloat16 in [-0.5, 0.5); the
result allocated each call, as ours. Ends at the end of its input; exit status 77 without a
usable GPU, 2 on a line it cannot read.
"""
import sys

import torch

MAX_CALLS, MIN_CALLS = 64, 5
FLUSH_BYTES = 256 << 20


def median_ms(fn, flush, smoke, target_ms):
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


def product(op, bt, m, n, k):
    """PyTorch's call for the product, its operands made once."""
    F = torch.nn.functional
    if op == "mm":
        a, b = rand(m, k), rand(k, n)
        return lambda: torch.mm(a, b)
    if op in ("linear", "linear_bias"):
        x, w = rand(m, k), rand(n, k)
        bias = rand(n) if op == "linear_bias" else None
        return lambda: F.linear(x, w, bias)
    if op in ("bmm_nn", "bmm_nt"):
        x = rand(bt, m, k)
        y = rand(bt, k, n) if op == "bmm_nn" else rand(bt, n, k).transpose(1, 2)
        return lambda: torch.bmm(x, y)
    return None


def serve(flush, smoke):
    key, fn = None, None
    for line in sys.stdin:
        w = line.split()
        try:
            op, bt, m, n, k, target = w[0], int(w[1]), int(w[2]), int(w[3]), int(w[4]), float(w[5])
            if key != (op, bt, m, n, k):
                key, fn = (op, bt, m, n, k), product(op, bt, m, n, k)
        except (ValueError, IndexError):
            fn = None
        if fn is None:
            print("gemm_torch.py: --serve: expected 'OP BATCH M N K TARGET_MS' (OP mm, linear, "
                  "linear_bias, bmm_nn or bmm_nt), got %r" % line, file=sys.stderr)
            return 2
        print("%.5f" % median_ms(fn, flush, smoke, target), flush=True)
    return 0


def main(argv):
    smoke = "--smoke" in argv
    if "--serve" not in argv or any(a not in ("--serve", "--smoke") for a in argv):
        print("usage: gemm_torch.py --serve [--smoke]", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gemm_torch.py: torch %s sees no usable GPU" % torch.__version__, file=sys.stderr)
        return 77
    print("gemm_torch.py: torch %s (CUDA %s, cuBLAS %s), %s" %
          (torch.__version__, torch.version.cuda, torch.backends.cuda.preferred_blas_library(),
           torch.cuda.get_device_name(0)), file=sys.stderr)
    flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    with torch.no_grad():
        return serve(flush, smoke)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
