"""mm.py: 16-bit matrix product C = A @ B (aten::mm), float32 accumulation.

mm_fwd: one program per BM x BN tile of C, in grouped order (GROUP rows of tiles share B's columns in
L2); K is walked in BK steps with masked loads, so M, N and K need not be multiples of the
tiles. A, B and C are contiguous (the predicate says so): their rows are K, N and N apart and
their columns adjacent, which the compiler must know to vectorise the loads and pipeline them
(with the column strides as arguments it cannot: docs/perf.md has the figures). For the
same reason the size that is a multiple of 8 comes in units of 8 (K = KD * KU, N = ND * NU with
KU, NU 8 or 1): the compiler then knows those rows start 16-byte aligned. Sizes are int32 (the
predicate gates them); offsets are computed in int64. mm_persist: the same tiles, walked by a
fixed number of programs (the launch grid's). mm_splitk: each tile's K split over programs.
"""
import triton
import triton.language as tl


@triton.jit
def _tile_of(t, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP: tl.constexpr):
    """Tile t's (row, column) of tiles, in grouped order."""
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    width = GROUP * grid_n
    first_m = (t // width) * GROUP
    size_m = min(grid_m - first_m, GROUP)
    return first_m + (t % width) % size_m, (t % width) // size_m


@triton.jit
def _mm_acc(a, b, M, N, K, pm, pn, k_lo, k_hi, BM: tl.constexpr, BN: tl.constexpr,
            BK: tl.constexpr):
    """C's tile (pm, pn) over K's range [k_lo, k_hi), in float32."""
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(k_lo, k_hi, BK):
        ka = k0 + rk
        x = tl.load(a + rm[:, None].to(tl.int64) * K + ka[None, :],
                    mask=(rm[:, None] < M) & (ka[None, :] < k_hi), other=0.0)
        y = tl.load(b + ka[:, None].to(tl.int64) * N + rn[None, :],
                    mask=(ka[:, None] < k_hi) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    return acc


@triton.jit
def _store_tile(c, acc, M, N, pm, pn, BM: tl.constexpr, BN: tl.constexpr):
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    tl.store(c + rm[:, None].to(tl.int64) * N + rn[None, :], acc.to(c.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _mm_tile(a, b, c, M, N, K, pm, pn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C's tile (pm, pn): A's rows times B's columns over all of K."""
    acc = _mm_acc(a, b, M, N, K, pm, pn, 0, K, BM, BN, BK)
    _store_tile(c, acc, M, N, pm, pn, BM, BN)


@triton.jit
def mm_fwd(a, b, c, M, ND, KD, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           GROUP: tl.constexpr, NU: tl.constexpr, KU: tl.constexpr):
    N = ND * NU
    K = KD * KU
    pm, pn = _tile_of(tl.program_id(0), M, N, BM, BN, GROUP)
    _mm_tile(a, b, c, M, N, K, pm, pn, BM, BN, BK)


@triton.jit
def mm_persist(a, b, c, M, ND, KD, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               GROUP: tl.constexpr, NU: tl.constexpr, KU: tl.constexpr):
    """The persistent variant: fewer programs than tiles (one a multiprocessor), each walking
    the tiles from its own in steps of the program count. The loop nest is not flattened
    (tl.range's flatten=True): with pointer loads that is slower (docs/gemm.md)."""
    N = ND * NU
    K = KD * KU
    tiles = tl.cdiv(M, BM) * tl.cdiv(N, BN)
    for t in range(tl.program_id(0), tiles, tl.num_programs(0)):
        pm, pn = _tile_of(t, M, N, BM, BN, GROUP)
        _mm_tile(a, b, c, M, N, K, pm, pn, BM, BN, BK)


@triton.jit
def mm_splitk(a, b, c, part, count, M, ND, KD, BM: tl.constexpr, BN: tl.constexpr,
              BK: tl.constexpr, GROUP: tl.constexpr, NU: tl.constexpr, KU: tl.constexpr,
              SPLIT: tl.constexpr):
    """Split-K, for products of few tiles: program (t, s) multiplies tile t over the s-th of
    SPLIT runs of K (whole BK steps each) and writes its float32 partial to part (SPLIT x
    tiles x BM x BN), then counts itself in count[t] (zeros before the launch). The program
    that counts last sums the SPLIT partials in their order, so C is the same whichever
    arrives last. The barrier puts every thread's partial before the count's release."""
    N = ND * NU
    K = KD * KU
    t = tl.program_id(0)
    s = tl.program_id(1)
    tiles = tl.num_programs(0)
    pm, pn = _tile_of(t, M, N, BM, BN, GROUP)
    run = tl.cdiv(tl.cdiv(K, BK), SPLIT) * BK
    acc = _mm_acc(a, b, M, N, K, pm, pn, s * run, min(K, (s + 1) * run), BM, BN, BK)
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(part + (s * tiles + t).to(tl.int64) * (BM * BN) + offs, acc)
    tl.debug_barrier()
    if tl.atomic_add(count + t, 1, sem="acq_rel", scope="gpu") == SPLIT - 1:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for i in tl.static_range(SPLIT):
            acc += tl.load(part + (i * tiles + t).to(tl.int64) * (BM * BN) + offs,
                           cache_modifier=".cg")
        _store_tile(c, acc, M, N, pm, pn, BM, BN)
