/* rows.cuh: what the row-wise kernels (softmax.cu, norm.cu) share: group reductions, vector
 * loads into the accumulation type, and the choice of launch shape for a row length.
 *
 * A row is handled by a group of threads: one warp for rows of up to 1024 elements (several
 * rows per block), or a whole block (128 to 512 threads) for rows of up to 16384. Where the
 * row and its pointers allow 16-byte vectors, each thread holds E elements of its row in
 * registers (E known at compile time), so the row is read once and written once; otherwise
 * (odd lengths, misaligned views, longer rows) a loop kernel walks the row in global memory
 * once per pass (still correct, the later passes mostly hitting L2). */
#ifndef SG_CU_ROWS_CUH
#define SG_CU_ROWS_CUH

#include "cu.cuh"
#include "loops.cuh"

#include <math.h>

extern "C" sg_status sg_cu_register_softmax(void);

/* ---- reductions ------------------------------------------------------------------------------ */

/* NaN-propagating max (a NaN anywhere in the row wins, as on the CPU). */
struct sg_rows_max {
    template <class A> __device__ __forceinline__ A operator()(A a, A b) const {
        return (b > a || b != b) ? b : a;
    }
};
struct sg_rows_sum {
    template <class A> __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};

/* The reduction of v over the group (a warp, or the whole block), known to every thread of it.
 * Every thread combines the partials in the same order, so all agree bit for bit. A block's
 * per-warp partials go to part[turn] (shared, part[2][32]); consecutive reductions take turns
 * between the two halves (turn: each thread's own copy, flipped alike by all), so that one
 * reduction's writes never meet the previous one's reads without a barrier between them. */
template <bool WARP, class A, class Op>
__device__ __forceinline__ A sg_rows_reduce(A v, Op op, A (*part)[32], int &turn) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    if constexpr (WARP) {
        (void)part, (void)turn;
        return v;
    } else {
        A *p = part[turn];
        turn ^= 1;
        int w = (int)(threadIdx.x >> 5), nw = (int)(blockDim.x >> 5);
        if ((threadIdx.x & 31) == 0) p[w] = v;
        __syncthreads();
        A r = p[0];
        for (int i = 1; i < nw; i++) r = op(r, p[i]);
        return r;
    }
}

/* ---- elements -------------------------------------------------------------------------------- */

/* V elements of T at p[vi * V] (16-byte aligned) into the accumulation type. */
template <class T, int V, class A>
__device__ __forceinline__ void sg_rows_load(const T *p, int64_t vi, A *dst) {
    sg_cu_vec<T, V> v = reinterpret_cast<const sg_cu_vec<T, V> *>(p)[vi];
#pragma unroll
    for (int k = 0; k < V; k++) dst[k] = sg_cu_convert<A>(v.v[k]);
}

template <class T, int V, class A>
__device__ __forceinline__ void sg_rows_store(T *p, int64_t vi, const A *src) {
    sg_cu_vec<T, V> v;
#pragma unroll
    for (int k = 0; k < V; k++) v.v[k] = sg_cu_convert<T>(src[k]);
    reinterpret_cast<sg_cu_vec<T, V> *>(p)[vi] = v;
}

/* V parameters (weight or bias) of type W from p[e0], e0 a multiple of V, p 16-byte aligned, in
 * 16-byte pieces (W may be wider than the row's type, so V of them may span several). */
template <class W, int V, class A>
__device__ __forceinline__ void sg_rows_load_params(const W *p, int64_t e0, A *dst) {
    constexpr int C = 16 / (int)sizeof(W) < V ? 16 / (int)sizeof(W) : V;
    static_assert(V % C == 0, "pieces tile the vector");
#pragma unroll
    for (int c = 0; c < V / C; c++) {
        sg_cu_vec<W, C> v = *reinterpret_cast<const sg_cu_vec<W, C> *>(p + e0 + c * C);
#pragma unroll
        for (int k = 0; k < C; k++) dst[c * C + k] = sg_cu_convert<A>(v.v[k]);
    }
}

/* Writes v as element i of a statistics tensor of dtype dt (mean, rstd: their dtype follows the
 * parameters', so it is read at run time; once per row). */
template <class A>
__device__ __forceinline__ void sg_rows_put_stat(void *p, sg_dtype dt, int64_t i, A v) {
#define SG_ROWS_PUT(NAME, ...)                                                           \
    case SG_##NAME:                                                                       \
        static_cast<sg_cu_elem_t<SG_##NAME> *>(p)[i] = sg_cu_convert<sg_cu_elem_t<SG_##NAME>>(v); \
        break;
    switch (dt) {
        SG_DTYPES_FLOATING(SG_ROWS_PUT)
    default: break;
    }
#undef SG_ROWS_PUT
}

/* ---- launch shapes --------------------------------------------------------------------------- */

enum {
    SG_ROWS_WARP_THREADS = 128, /* 4 rows per block in warp mode */
    SG_ROWS_MAX_BLOCK = 512,    /* threads of a block-per-row launch */
    SG_ROWS_MAX_E = 32,         /* elements per thread held in registers */
    SG_ROWS_MAX_REG = SG_ROWS_MAX_BLOCK * SG_ROWS_MAX_E, /* longest row held in registers */
};

/* How a row length runs: in registers (e elements per thread) or looping (e == 0); one warp per
 * row or a block of `threads`. */
struct sg_rows_cfg {
    bool warp;
    int  e;
    int  threads;
};

/* vec: the row length in vectors of V (n % V == 0) and every pointer 16-byte aligned. */
static inline sg_rows_cfg sg_rows_pick(int64_t n, int V, bool vec) {
    sg_rows_cfg c;
    if (n <= 32 * SG_ROWS_MAX_E) {
        c.warp = true;
        c.threads = SG_ROWS_WARP_THREADS;
        c.e = 4 < V ? V : 4;
        while (32 * c.e < n) c.e *= 2;
    } else {
        /* about 16 elements per thread: enough loads in flight per thread, blocks small
         * enough that several share an SM */
        int g = 128;
        while (g < SG_ROWS_MAX_BLOCK && (int64_t)g * 16 < n) g *= 2;
        c.warp = false;
        c.threads = g;
        c.e = 8;
        while (c.e <= SG_ROWS_MAX_E && (int64_t)g * c.e < n) c.e *= 2;
        if (c.e > SG_ROWS_MAX_E) c.e = 0;
    }
    if (!vec || n % V != 0) c.e = 0;
    if (c.e == 0 && !c.warp) c.threads = SG_ROWS_MAX_BLOCK;
    return c;
}

/* Blocks for `rows` rows (a grid-stride loop covers the rest where they exceed the grid). */
static inline unsigned sg_rows_grid(const sg_rows_cfg &c, int64_t rows) {
    int64_t per = c.warp ? c.threads / 32 : 1;
    int64_t b = sg_cu_ceil_div(rows, per);
    return (unsigned)(b > INT32_MAX ? INT32_MAX : b < 1 ? 1 : b);
}

/* Calls f(E, WARP) as compile-time constants (std::integral_constant) for the configuration,
 * instantiating only E >= V (the smallest E sg_rows_pick gives). f(0, WARP) is the loop. */
template <int V, class F> sg_status sg_rows_dispatch(const sg_rows_cfg &c, F &&f) {
    using std::integral_constant;
    using yes = integral_constant<bool, true>;
    using no = integral_constant<bool, false>;
    if (c.warp) {
        switch (c.e) {
        case 0: return f(integral_constant<int, 0>{}, yes{});
        case 4: if constexpr (V <= 4) return f(integral_constant<int, 4>{}, yes{}); break;
        case 8: return f(integral_constant<int, 8>{}, yes{});
        case 16: return f(integral_constant<int, 16>{}, yes{});
        case 32: return f(integral_constant<int, 32>{}, yes{});
        default: break;
        }
    } else {
        switch (c.e) {
        case 0: return f(integral_constant<int, 0>{}, no{});
        case 8: return f(integral_constant<int, 8>{}, no{});
        case 16: return f(integral_constant<int, 16>{}, no{});
        case 32: return f(integral_constant<int, 32>{}, no{});
        default: break;
        }
    }
    return sg_error(SG_EUNSUPPORTED, "rows: no kernel for %d elements per thread", c.e);
}

/* Whether p is 16-byte aligned (NULL counts as aligned: an absent operand). */
static inline bool sg_rows_aligned(const void *p) { return (uintptr_t)p % 16 == 0; }

#endif
