"""mm.py: 16-bit matrix product C = A @ B (aten::mm), float32 accumulation.

mm_fwd: one program per BM x BN tile of C, in grouped order (GROUP rows of tiles share B's columns in
L2); K is walked in BK steps with masked loads, so M, N and K need not be multiples of the
tiles. A, B and C are contiguous (the predicate says so): their rows are K, N and N apart and
their columns adjacent, which the compiler must know to vectorise the loads and pipeline them
(with the column strides as arguments it cannot: docs/perf.md has the figures). For the
same reason the size that is a multiple of 8 comes in units of 8 (K = KD * KU, N = ND * NU with
KU, NU 8 or 1): the compiler then knows those rows start 16-byte aligned. Sizes are int32 (the
predicate gates them); offsets are computed in int64. mm_persist: the same tiles, walked by a
fixed number of programs (the launch grid's).
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
def _mm_tile(a, b, c, M, N, K, pm, pn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C's tile (pm, pn): A's rows times B's columns over all of K."""
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ka = k0 + rk
        x = tl.load(a + rm[:, None].to(tl.int64) * K + ka[None, :],
                    mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0)
        y = tl.load(b + ka[:, None].to(tl.int64) * N + rn[None, :],
                    mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None].to(tl.int64) * N + rn[None, :], acc.to(c.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


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
