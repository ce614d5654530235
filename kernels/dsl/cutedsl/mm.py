# mm: C = A @ B for row-major contiguous A (M x K), B (K x N) and C (M x N), bfloat16 or
# float16, accumulated in float32 on the tensor cores and rounded once to C's dtype.
#
# The export passes each matrix as a 1-D tensor of its elements (16-byte aligned) and the sizes
# as int32 scalars; the 2-D views are built here. Requires K and N multiples of 8 (rows of 16
# bytes) and K > 0; M, N and K need not be multiples of the tile. Rows of A past M and columns of
# B past N are not read (their stale shared memory only reaches rows and columns of C that are
# not written, and C's store is predicated on both); in the last K tile, where K is not a
# multiple of BK, the vectors past K are zeros in shared memory instead, as they reach every
# element of C.
#
# One CTA computes a BM x BN tile of C with THREADS threads: THREADS / 32 warps laid 2 x W over
# the tile, each issuing m16n8k16 MMAs (warp-level, sm_80 and later). A and B tiles of BK along
# K go from global to shared memory by cp.async, 16 bytes a thread, through a ring of STAGES
# buffers (STAGES - 1 tiles in flight while one is multiplied); from shared memory to registers
# by ldmatrix (transposed for B, whose rows run along N). The shared layouts are swizzled so
# that neither the 16-byte cp.async writes nor the ldmatrix reads of eight rows collide in banks.
# Tiles are ordered in groups of GROUP rows of tiles so that CTAs running together share A and B
# tiles in L2.
import cutlass
import cutlass.cute as cute
import cuda.bindings.driver as cuda
from cutlass.cute.nvgpu import cpasync, warp

GROUP = 8
VEC = 8  # elements of one 16-byte copy


def _warps_n(threads):
    # warps laid 2 along M and the rest along N
    return threads // 32 // 2


def _check_tile(bm, bn, bk, stages, threads):
    # the shapes this code is written for: an export of another fails here, naming it
    wn = _warps_n(threads)
    ok = (bk in (32, 64) and stages >= 2 and threads % 64 == 0 and bm % 32 == 0
          and bn % 64 == 0 and bn % (16 * wn) == 0
          # A's copy: rows of bk / 8 threads over bm rows; B's: bn / 8 threads per row of K
          and bm % (threads // (bk // VEC)) == 0
          and threads % (bn // VEC) == 0 and bk % (threads // (bn // VEC)) == 0)
    if not ok:
        raise ValueError("mm: unsupported tile BM=%d BN=%d BK=%d STAGES=%d THREADS=%d"
                         % (bm, bn, bk, stages, threads))


def _smem_a(bm, bk, stages):
    # K-major rows of bk (32 or 64) elements: their 16-byte chunks XORed with the row so that
    # the eight rows one ldmatrix reads (one chunk each) fall in distinct banks
    if bk == 32:
        sw, atom = cute.make_swizzle(2, 3, 3), cute.make_layout((8, 32), stride=(32, 1))
    else:
        sw, atom = cute.make_swizzle(3, 3, 3), cute.make_layout((8, 64), stride=(64, 1))
    return cute.tile_to_shape(cute.make_composed_layout(sw, 0, atom), (bm, bk, stages),
                              (0, 1, 2))


def _smem_b(bn, bk, stages):
    # N-major: 64 contiguous elements of N per row of K, chunks XORed with the K index
    atom = cute.make_layout((64, 8), stride=(1, 64))
    return cute.tile_to_shape(cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0, atom),
                              (bn, bk, stages), (0, 1, 2))


@cute.jit
def _load_tile(g2s, src, dst, crd, pred, t, stage, k_rest, PAST_K: cutlass.Constexpr):
    # K tile t of one operand into buffer `stage`: each of this thread's 16-byte vectors (modes
    # 1 and 2: rows of the operand, then K) whose row is inside (pred); with PAST_K, a vector
    # whose K (crd's second coordinate, from the tile's start) is not below k_rest is zeroed
    for i in cutlass.range_constexpr(cute.size(dst, mode=[1])):
        inside = pred[i]
        for j in cutlass.range_constexpr(cute.size(dst, mode=[2])):
            if cutlass.const_expr(PAST_K):
                if crd[(0, i, j)][1] < k_rest:
                    if inside:
                        cute.copy(g2s, src[None, i, j, t], dst[None, i, j, stage])
                else:
                    dst[None, i, j, stage].fill(0)
            else:
                if inside:
                    cute.copy(g2s, src[None, i, j, t], dst[None, i, j, stage])


@cute.jit
def _load_ab(g2s_a, tAgA, tAsA, tAcA, pA, g2s_b, tBgB, tBsB, tBcB, pB, t, stage, K,
             BK: cutlass.Constexpr):
    # K tile t of A and of B; only the last tile of a K that BK does not divide reaches past K
    k_rest = K - t * BK
    if k_rest >= BK:
        _load_tile(g2s_a, tAgA, tAsA, tAcA, pA, t, stage, k_rest, False)
        _load_tile(g2s_b, tBgB, tBsB, tBcB, pB, t, stage, k_rest, False)
    else:
        _load_tile(g2s_a, tAgA, tAsA, tAcA, pA, t, stage, k_rest, True)
        _load_tile(g2s_b, tBgB, tBsB, tBcB, pB, t, stage, k_rest, True)


@cute.kernel
def _mm_kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, M: cutlass.Int32,
               N: cutlass.Int32, K: cutlass.Int32, tiled_mma: cute.TiledMma,
               g2s_a: cute.TiledCopy, g2s_b: cute.TiledCopy, s2r_a: cute.TiledCopy,
               s2r_b: cute.TiledCopy, sA_layout: cute.ComposedLayout,
               sB_layout: cute.ComposedLayout, BM: cutlass.Constexpr, BN: cutlass.Constexpr,
               BK: cutlass.Constexpr, STAGES: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()

    # the tile of C: grouped order (GROUP tile rows at a time, down the rows first)
    tiles_m = (M + BM - 1) // BM
    tiles_n = (N + BN - 1) // BN
    pid = cutlass.Int64(bidx)
    per_group = cutlass.Int64(GROUP) * cutlass.Int64(tiles_n)
    first_m = (pid // per_group) * GROUP
    rows = cutlass.min(cutlass.Int64(tiles_m) - first_m, cutlass.Int64(GROUP))
    in_group = pid % per_group
    tm = cutlass.Int32(first_m + in_group % rows)
    tn = cutlass.Int32(in_group // rows)

    # this CTA's tiles: gA (BM, BK, k), gB (BN, BK, k), gC (BM, BN)
    gA = cute.local_tile(mA, (BM, BK), (tm, None))
    gB = cute.local_tile(mB, (BN, BK), (tn, None))
    gC = cute.local_tile(mC, (BM, BN), (tm, tn))
    # what is left of M and N from this tile's corner on
    rest_m = M - tm * BM
    rest_n = N - tn * BN

    smem = cutlass.memory.SmemAllocator()
    sA = smem.allocate_tensor(mA.element_type, sA_layout, 1024)
    sB = smem.allocate_tensor(mB.element_type, sB_layout, 1024)

    # global -> shared: each thread's 16-byte vectors and their coordinates in the tile
    thr_a = g2s_a.get_slice(tidx)
    tAgA = thr_a.partition_S(gA)  # (VEC, CPY_M, CPY_K, k)
    tAsA = thr_a.partition_D(sA)  # (VEC, CPY_M, CPY_K, STAGES)
    tAcA = thr_a.partition_S(cute.make_identity_tensor((BM, BK)))
    thr_b = g2s_b.get_slice(tidx)
    tBgB = thr_b.partition_S(gB)  # (VEC, CPY_N, CPY_K, k)
    tBsB = thr_b.partition_D(sB)
    tBcB = thr_b.partition_S(cute.make_identity_tensor((BN, BK)))

    # rows of A and columns of B within M and N: the same for every k tile
    pA = cute.make_rmem_tensor((cute.size(tAsA, mode=[1]),), cutlass.Boolean)
    for i in cutlass.range_constexpr(cute.size(tAsA, mode=[1])):
        pA[i] = tAcA[(0, i, 0)][0] < rest_m
    pB = cute.make_rmem_tensor((cute.size(tBsB, mode=[1]),), cutlass.Boolean)
    for i in cutlass.range_constexpr(cute.size(tBsB, mode=[1])):
        pB[i] = tBcB[(0, i, 0)][0] < rest_n

    # the MMA's view: accumulators, register fragments, and ldmatrix's view of them
    thr_mma = tiled_mma.get_slice(tidx)
    tCgC = thr_mma.partition_C(gC)
    acc = thr_mma.make_fragment_C(tCgC)
    acc.fill(0.0)
    tCrA = thr_mma.make_fragment_A(thr_mma.partition_A(sA[None, None, 0]))
    tCrB = thr_mma.make_fragment_B(thr_mma.partition_B(sB[None, None, 0]))
    ld_a = s2r_a.get_slice(tidx)
    tXsA = ld_a.partition_S(sA)  # (CPY, MMA_M, MMA_K, STAGES)
    tXrA = ld_a.retile(tCrA)
    ld_b = s2r_b.get_slice(tidx)
    tXsB = ld_b.partition_S(sB)
    tXrB = ld_b.retile(tCrB)

    k_tiles = (K + BK - 1) // BK

    # prologue: tiles 0 .. STAGES-2 in flight, one commit group each (empty past the last
    # tile, so that the count of groups stays one per tile in the wait below)
    for s in cutlass.range_constexpr(STAGES - 1):
        if s < k_tiles:
            _load_ab(g2s_a, tAgA, tAsA, tAcA, pA, g2s_b, tBgB, tBsB, tBcB, pB,
                     cutlass.Int32(s), cutlass.Int32(s), K, BK)
        cute.arch.cp_async_commit_group()

    k_blocks = cute.size(tCrA, mode=[2])
    for kt in range(k_tiles):
        # tile kt has landed for this thread (at most STAGES-2 younger groups pending) ...
        cute.arch.cp_async_wait_group(STAGES - 2)
        # ... and for all threads; all have also finished multiplying tile kt-1, whose buffer
        # the load below refills
        cute.arch.sync_threads()
        nxt = kt + STAGES - 1
        if nxt < k_tiles:
            _load_ab(g2s_a, tAgA, tAsA, tAcA, pA, g2s_b, tBgB, tBsB, tBcB, pB,
                     nxt, nxt % STAGES, K, BK)
        cute.arch.cp_async_commit_group()

        cs = kt % STAGES
        for kb in cutlass.range_constexpr(k_blocks):
            cute.copy(s2r_a, tXsA[None, None, kb, cs], tXrA[None, None, kb])
            cute.copy(s2r_b, tXsB[None, None, kb, cs], tXrB[None, None, kb])
            cute.gemm(tiled_mma, acc, tCrA[None, None, kb], tCrB[None, None, kb], acc)

    # nothing may be left in flight when the CTA exits
    cute.arch.cp_async_wait_group(0)

    # C: rounded once; each thread holds pairs of adjacent columns (mode 0's first mode), an even
    # column and the next, both below N where the first is (N is even), so each pair is one
    # 4-byte store where its row is below M and its column below N
    out = cute.make_fragment_like(acc, mC.element_type)
    out.store(acc.load().to(mC.element_type))
    tCcC = thr_mma.partition_C(cute.make_identity_tensor((BM, BN)))
    for v in cutlass.range_constexpr(cute.size(out, mode=[0]) // 2):
        for i in cutlass.range_constexpr(cute.size(out, mode=[1])):
            for j in cutlass.range_constexpr(cute.size(out, mode=[2])):
                if cute.elem_less(tCcC[(0, v), i, j], (rest_m, rest_n)):
                    tCgC[(None, v), i, j].store(out[(None, v), i, j].load())


@cute.jit
def mm(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, M: cutlass.Int32, N: cutlass.Int32,
       K: cutlass.Int32, BM: cutlass.Constexpr, BN: cutlass.Constexpr, BK: cutlass.Constexpr,
       STAGES: cutlass.Constexpr, THREADS: cutlass.Constexpr, stream: cuda.CUstream):
    _check_tile(BM, BN, BK, STAGES, THREADS)
    wn = _warps_n(THREADS)
    dtype = a.element_type
    # row strides as 64-bit so that no address of a row past M overflows int32; K and N are
    # multiples of 8 (the declaration's predicate), which lets every row start 16-byte aligned
    ka = cute.assume(K, divby=VEC)
    nb = cute.assume(N, divby=VEC)
    ka64 = cute.assume(cutlass.Int64(K), divby=VEC)
    nb64 = cute.assume(cutlass.Int64(N), divby=VEC)
    mA = cute.make_tensor(a.iterator, cute.make_layout((M, ka), stride=(ka64, 1)))
    # B as (N, K): column n of B is row n of this view, its elements N apart
    mB = cute.make_tensor(b.iterator, cute.make_layout((nb, ka), stride=(1, nb64)))
    mC = cute.make_tensor(c.iterator, cute.make_layout((M, nb), stride=(nb64, 1)))

    tiled_mma = cute.make_tiled_mma(
        warp.MmaF16BF16Op(dtype, cutlass.Float32, (16, 8, 16)), (2, wn, 1),
        # each warp takes 16 columns at a time (two n8 MMAs), so one ldmatrix.x4 loads its B
        permutation_mnk=(2 * 16, wn * 16, 16))

    # cp.async, 16 bytes a thread: A's threads along K first (a row is BK / 8 vectors), B's
    # along N first (its rows run along N)
    g2s = cute.make_copy_atom(cpasync.CopyG2SOp(cache_mode=cute.nvgpu.LoadCacheMode.GLOBAL),
                              dtype, num_bits_per_copy=128)
    ta = BK // VEC
    g2s_a = cute.make_tiled_copy_tv(
        g2s, cute.make_layout((THREADS // ta, ta), stride=(ta, 1)), cute.make_layout((1, VEC)))
    tb = BN // VEC
    g2s_b = cute.make_tiled_copy_tv(
        g2s, cute.make_layout((tb, THREADS // tb), stride=(1, tb)), cute.make_layout((VEC, 1)))

    s2r_a = cute.make_tiled_copy_A(
        cute.make_copy_atom(warp.LdMatrix8x8x16bOp(transpose=False, num_matrices=4), dtype),
        tiled_mma)
    s2r_b = cute.make_tiled_copy_B(
        cute.make_copy_atom(warp.LdMatrix8x8x16bOp(transpose=True, num_matrices=4), dtype),
        tiled_mma)

    tiles_m = (M + BM - 1) // BM
    tiles_n = (N + BN - 1) // BN
    _mm_kernel(mA, mB, mC, M, N, K, tiled_mma, g2s_a, g2s_b, s2r_a, s2r_b,
               _smem_a(BM, BK, STAGES), _smem_b(BN, BK, STAGES),
               BM, BN, BK, STAGES).launch(grid=[tiles_m * tiles_n, 1, 1],
                                          block=[THREADS, 1, 1], stream=stream)
