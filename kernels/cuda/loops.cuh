/* loops.cuh: the CUDA side of the strided iterator: launches an elementwise functor over an
 * iteration built by sg_iter_build (kernels/cpu/iter.c: broadcast, promotion, output
 * allocation on the inputs' device, dimension merging; the same code as the CPU's).
 *
 *     sg_iter it; sg_tensor *res;
 *     if ((st = sg_iter_build(&it, &spec, &res))) return st;
 *     st = sg_cu_pointwise<float, float, float>(&it, add_fn{alpha}, "add");
 *     ... sg_iter_finish(&it, &res) ...
 *
 * Template arguments: the output element type, then one element type per input, as the
 * iteration holds them (inputs are cast to spec.compute unless spec.keep marks them). The
 * functor takes one argument per input and returns the output element.
 *
 * Two kernels: where every operand is contiguous (one merged dim) and 16-byte aligned, each
 * thread moves 16 bytes per operand per step (vector loads and stores); otherwise each element
 * finds its operands' offsets from its linear index, in 32-bit arithmetic where every offset
 * fits. Both are grid-stride loops over a grid sized to fill the device. Host scalars (0-dim
 * CPU tensors beside CUDA ones) travel by value in the kernel's parameters. */
#ifndef SG_CU_LOOPS_CUH
#define SG_CU_LOOPS_CUH

#include "cu.cuh"

#include <algorithm>
#include <tuple>
#include <utility>

enum { SG_CU_BLOCK = 256 };

/* Everything a launch needs, by value (kernel parameters, at most SG_ITER_MAX operands). */
template <class Idx, int NOPS> struct sg_cu_geom {
    char   *data[NOPS];
    Idx     size[SG_MAX_DIMS];          /* dim 0 innermost */
    Idx     stride[NOPS][SG_MAX_DIMS];  /* bytes */
    int32_t ndim;
    Idx     numel;
    unsigned scalar_mask;               /* bit k: operand k is a value in `scalar` */
    alignas(8) char scalar[NOPS][8];    /* host scalars, in their operand's type */
};

/* The contiguous kernel's parameters: no shape or strides. Rationale: a launch copies its
 * parameters, and sg_cu_geom is over 2 KB (SG_MAX_DIMS sizes and strides), which was most of a
 * small op's host time beyond an empty kernel's launch. */
template <int NOPS> struct sg_cu_flat {
    char    *data[NOPS];
    int64_t  numel;
    unsigned scalar_mask;
    alignas(8) char scalar[NOPS][8];
};

template <class T> __device__ __forceinline__ T sg_cu_ld(const char *p) {
    return *reinterpret_cast<const T *>(p);
}

template <class T> __host__ __device__ inline T sg_cu_scalar_of(const char *raw) {
    T v;
    memcpy(&v, raw, sizeof(T));
    return v;
}

/* Operand k's element at byte offset off (or its scalar). */
template <class T, int K, class G>
__device__ __forceinline__ T sg_cu_operand(const G &g, int64_t off) {
    if (g.scalar_mask & (1u << K)) return sg_cu_scalar_of<T>(g.scalar[K]);
    return sg_cu_ld<T>(g.data[K] + off);
}

/* V elements of every operand per step: the widest operand moves 16 bytes. */
template <class T, int V> struct alignas(sizeof(T) * V) sg_cu_vec {
    T v[V];
};

template <class T, int V, int K, class G>
__device__ __forceinline__ sg_cu_vec<T, V> sg_cu_load_vec(const G &g, int64_t i) {
    sg_cu_vec<T, V> r;
    if (g.scalar_mask & (1u << K)) {
        T s = sg_cu_scalar_of<T>(g.scalar[K]);
#pragma unroll
        for (int j = 0; j < V; j++) r.v[j] = s;
    } else {
        r = reinterpret_cast<const sg_cu_vec<T, V> *>(g.data[K])[i];
    }
    return r;
}

/* An elementwise signature: the output type and the inputs' (a __global__ template may not
 * take a pack before other parameters, so the pack lives here). */
template <class Out, class... In> struct sg_cu_sig {
    static constexpr int N = 1 + sizeof...(In);

    /* out[off[0]] = f(in_k[off[k]]...) */
    template <class G, class Idx, class F, size_t... K>
    __device__ __forceinline__ static void at(const G &g, const F &f, const Idx *off,
                                              std::index_sequence<K...>) {
        Out r = f(sg_cu_operand<In, K + 1>(g, off[K + 1])...);
        *reinterpret_cast<Out *>(g.data[0] + off[0]) = r;
    }

    /* V outputs from V elements of each input, at vector index i */
    template <int V, class F, size_t... K>
    __device__ __forceinline__ static void vec(const sg_cu_flat<N> &g, const F &f, int64_t i,
                                               std::index_sequence<K...>) {
        auto ins = std::make_tuple(sg_cu_load_vec<In, V, K + 1>(g, i)...);
        sg_cu_vec<Out, V> o;
#pragma unroll
        for (int j = 0; j < V; j++) o.v[j] = f(std::get<K>(ins).v[j]...);
        reinterpret_cast<sg_cu_vec<Out, V> *>(g.data[0])[i] = o;
    }

    /* the element at linear index e of contiguous operands */
    template <class F>
    __device__ __forceinline__ static void one(const sg_cu_flat<N> &g, const F &f, int64_t e) {
        const int64_t off[N] = {e * (int64_t)sizeof(Out), e * (int64_t)sizeof(In)...};
        at(g, f, off, std::index_sequence_for<In...>{});
    }
};

template <class Sig, class Idx, class F>
__global__ void __launch_bounds__(SG_CU_BLOCK)
    sg_cu_strided_kernel(const sg_cu_geom<Idx, Sig::N> g, const F f) {
    Idx step = (Idx)gridDim.x * blockDim.x;
    for (Idx i = (Idx)blockIdx.x * blockDim.x + threadIdx.x; i < g.numel; i += step) {
        Idx off[Sig::N] = {};
        Idx rem = i;
        for (int d = 0; d < g.ndim; d++) {
            Idx q = rem / g.size[d], r = rem - q * g.size[d];
            rem = q;
#pragma unroll
            for (int k = 0; k < Sig::N; k++) off[k] += r * g.stride[k][d];
        }
        Sig::at(g, f, off, std::make_index_sequence<Sig::N - 1>{});
    }
}

template <class Sig, int V, class F>
__global__ void __launch_bounds__(SG_CU_BLOCK)
    sg_cu_vec_kernel(const sg_cu_flat<Sig::N> g, const F f) {
    int64_t nvec = g.numel / V, step = (int64_t)gridDim.x * blockDim.x;
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t i = t; i < nvec; i += step)
        Sig::template vec<V>(g, f, i, std::make_index_sequence<Sig::N - 1>{});
    /* the tail, fewer than V elements: one thread each */
    int64_t e = nvec * V + t;
    if (e < g.numel) Sig::one(g, f, e);
}

/* Blocks for n units of work: enough to fill every SM several times over, no more (the loops
 * are grid-stride). */
static inline unsigned sg_cu_grid(int64_t n, int per_thread) {
    int64_t want = sg_cu_ceil_div(n, (int64_t)SG_CU_BLOCK * per_thread);
    int64_t cap = (int64_t)sg_cu_sm_count() * (2048 / SG_CU_BLOCK) * 4;
    if (want > cap) want = cap;
    return (unsigned)(want < 1 ? 1 : want);
}

template <class Idx, int N>
static void sg_cu_fill_geom(sg_cu_geom<Idx, N> &g, const sg_iter *it, const size_t *esize) {
    g.ndim = it->ndim;
    g.numel = (Idx)it->numel;
    g.scalar_mask = 0;
    for (int k = 0; k < N; k++) {
        g.data[k] = it->data[k];
        if (it->host_scalars & (1u << k)) {
            g.scalar_mask |= 1u << k;
            memcpy(g.scalar[k], it->data[k], esize[k]);
        }
        for (int d = 0; d < it->ndim; d++) g.stride[k][d] = (Idx)it->stride[k][d];
    }
    for (int d = 0; d < it->ndim; d++) g.size[d] = (Idx)it->shape[d];
}

/* Whether every offset of every operand fits in 32 bits. */
static inline bool sg_cu_fits32(const sg_iter *it) {
    if (it->numel > INT32_MAX) return false;
    for (int k = 0; k < it->nops; k++) {
        int64_t span = 0;
        for (int d = 0; d < it->ndim; d++) span += (it->shape[d] - 1) * it->stride[k][d];
        if (span > INT32_MAX || span < 0) return false;
    }
    return true;
}

/* Runs f over the iteration on its device's current stream. */
template <class Out, class... In, class F>
sg_status sg_cu_pointwise(const sg_iter *it, const F &f, const char *op) {
    constexpr int N = 1 + sizeof...(In);
    static_assert(N <= SG_ITER_MAX, "too many operands");
    if (it->numel == 0) return SG_OK;
    sg_cu_guard  guard(it->device);
    cudaStream_t s = sg_cu_stream();
    const size_t esize[N] = {sizeof(Out), sizeof(In)...};

    constexpr size_t widest = std::max({sizeof(Out), sizeof(In)...});
    constexpr int    V = (int)(16 / widest) > 0 ? (int)(16 / widest) : 1;
    bool contiguous = it->ndim <= 1;
    for (int k = 0; k < N && contiguous; k++) {
        if (it->host_scalars & (1u << k)) continue;
        contiguous = (it->ndim == 0 || it->stride[k][0] == (int64_t)esize[k]) &&
                     (uintptr_t)it->data[k] % 16 == 0;
    }
    if (contiguous && V > 1) {
        sg_cu_flat<N> g;
        g.numel = it->numel;
        g.scalar_mask = 0;
        for (int k = 0; k < N; k++) {
            g.data[k] = it->data[k];
            if (it->host_scalars & (1u << k)) {
                g.scalar_mask |= 1u << k;
                memcpy(g.scalar[k], it->data[k], esize[k]);
            }
        }
        sg_cu_vec_kernel<sg_cu_sig<Out, In...>, V><<<sg_cu_grid(it->numel, V), SG_CU_BLOCK, 0, s>>>(g, f);
    } else if (sg_cu_fits32(it)) {
        sg_cu_geom<uint32_t, N> g;
        sg_cu_fill_geom(g, it, esize);
        sg_cu_strided_kernel<sg_cu_sig<Out, In...>><<<sg_cu_grid(it->numel, 1), SG_CU_BLOCK, 0, s>>>(g, f);
    } else {
        sg_cu_geom<int64_t, N> g;
        sg_cu_fill_geom(g, it, esize);
        sg_cu_strided_kernel<sg_cu_sig<Out, In...>><<<sg_cu_grid(it->numel, 1), SG_CU_BLOCK, 0, s>>>(g, f);
    }
    return sg_cu_check(op);
}

#endif
