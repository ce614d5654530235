/* reduce.cuh: the CUDA reduction engine shared by the reduction files (reduce.cu:
 * sum/mean/prod; reduce_ext.cu: amax/amin/max/min/argmax/argmin; reduce_stat.cu:
 * var/std/logsumexp; reduce_scan.cu: cumsum). aten's argument handling is the CPU's
 * (kernels/cpu/sg_reduce_shape.h).
 *
 * The engine runs over an iteration built by sg_iter_build_reduce (the CPU's iterator: merged
 * dims ordered by the input's strides, the output's stride 0 exactly along reduced dims). Its
 * dims split into kept dims K and reduced dims R, innermost first; an output's linear index
 * counts over K, a reduced position over R. Two shapes of work:
 *  - inner (the input's innermost dim is reduced): a warp per output, or a block per output
 *    where outputs are few and lines long; contiguous lines are read 16 bytes at a time from
 *    the first aligned element;
 *  - outer (the innermost dim is kept): a block of 32 x 8 threads owns 32 (x V, vectorised)
 *    neighbouring outputs, its 8 rows of threads walk the reduced rows (every read coalesced)
 *    and join through shared memory.
 * Where the outputs alone cannot fill the GPU, the reduced range is split over blocks
 * (grid.y): each writes its partial accumulator to a workspace and a second kernel joins them
 * in a fixed order, so results are deterministic (no atomics).
 *
 * An Ops type describes one reduction: in_t (the element read), acc (the accumulator: a
 * trivially copyable type of a multiple of 4 bytes), ident(), step(acc&, x, r) (r the reduced
 * position, for argmax), join(a, b), write(acc, count, out, ext) (count: elements reduced per
 * output; ext: operand 2's element, or null). */
#ifndef SG_CU_REDUCE_CUH
#define SG_CU_REDUCE_CUH

#include "loops.cuh"
#include "sg_reduce_shape.h"

#include <math.h>

/* ---- the engine ------------------------------------------------------------------------------ */

enum { SG_CU_RDIMS = 16 }; /* kept or reduced dims after merging (more: refused) */

struct sg_cu_rgeom {
    const char *in;
    char       *out, *ext;
    int64_t     n_out, n_red;
    int32_t     nk, nr;
    int64_t     ksize[SG_CU_RDIMS], kin[SG_CU_RDIMS], kout[SG_CU_RDIMS], kext[SG_CU_RDIMS];
    int64_t     rsize[SG_CU_RDIMS], rin[SG_CU_RDIMS]; /* byte strides */
};

/* Byte offsets of output o's elements, counting o over K's dims from `first`. */
__device__ __forceinline__ void sg_cu_rkoff(const sg_cu_rgeom &g, int64_t o, int first,
                                            int64_t &io, int64_t &oo, int64_t &eo) {
    io = oo = eo = 0;
    for (int d = first; d < g.nk; d++) {
        int64_t q = o / g.ksize[d], r = o - q * g.ksize[d];
        o = q;
        io += r * g.kin[d], oo += r * g.kout[d], eo += r * g.kext[d];
    }
}

/* The input's byte offset of reduced position r. */
__device__ __forceinline__ int64_t sg_cu_roff(const sg_cu_rgeom &g, int64_t r) {
    if (g.nr <= 1) return g.nr ? r * g.rin[0] : 0;
    int64_t off = 0;
    for (int d = 0; d < g.nr; d++) {
        int64_t q = r / g.rsize[d];
        off += (r - q * g.rsize[d]) * g.rin[d];
        r = q;
    }
    return off;
}

template <class A> __device__ __forceinline__ A sg_cu_shfl_down(const A &a, int off) {
    static_assert(sizeof(A) % 4 == 0, "accumulators are whole words");
    int w[sizeof(A) / 4];
    memcpy(w, &a, sizeof(A));
#pragma unroll
    for (int i = 0; i < (int)(sizeof(A) / 4); i++) w[i] = __shfl_down_sync(0xffffffffu, w[i], off);
    A r;
    memcpy(&r, w, sizeof(A));
    return r;
}

/* lane 0 gets the join of the warp's accumulators */
template <class Ops, class A>
__device__ __forceinline__ A sg_cu_warp_join(const Ops &ops, A a) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) a = ops.join(a, sg_cu_shfl_down(a, off));
    return a;
}

/* thread 0 gets the join of a 256-thread block's; sm holds 8 accumulators */
template <class Ops, class A>
__device__ __forceinline__ A sg_cu_block_join(const Ops &ops, A a, A *sm) {
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    a = sg_cu_warp_join(ops, a);
    if (lane == 0) sm[w] = a;
    __syncthreads();
    if (w == 0) {
        a = lane < 8 ? sm[lane] : ops.ident();
        a = sg_cu_warp_join(ops, a);
    }
    __syncthreads(); /* sm is reused by the next output */
    return a;
}

template <class T> constexpr int sg_cu_rvec() { return 16 / sizeof(T) > 0 ? (int)(16 / sizeof(T)) : 1; }

/* Thread t of nt folds its share of reduced positions [rb, re) of the line at row. vec: the
 * line is contiguous (one reduced dim of stride sizeof(T)). */
template <class Ops>
__device__ __forceinline__ typename Ops::acc sg_cu_red_line(const Ops &ops, const sg_cu_rgeom &g,
                                                            const char *row, int64_t rb,
                                                            int64_t re, int t, int nt, bool vec) {
    using T = typename Ops::in_t;
    using A = typename Ops::acc;
    constexpr int V = sg_cu_rvec<T>();
    A a = ops.ident();
    if (vec) {
        const T *x = reinterpret_cast<const T *>(row);
        int64_t  mis = (int64_t)((uintptr_t)(x + rb) % 16) / (int64_t)sizeof(T);
        int64_t  head = mis ? V - mis : 0;
        if (head > re - rb) head = re - rb;
        for (int64_t r = rb + t; r < rb + head; r += nt) ops.step(a, x[r], r);
        int64_t b = rb + head, nv = (re - b) / V;
        const sg_cu_vec<T, V> *xv = reinterpret_cast<const sg_cu_vec<T, V> *>(x + b);
        int64_t i = t;
        for (; i + 3 * nt < nv; i += 4 * nt) { /* four loads in flight per thread */
            sg_cu_vec<T, V> v[4];
#pragma unroll
            for (int k = 0; k < 4; k++) v[k] = xv[i + k * nt];
#pragma unroll
            for (int k = 0; k < 4; k++)
#pragma unroll
                for (int j = 0; j < V; j++) ops.step(a, v[k].v[j], b + (i + k * nt) * V + j);
        }
        for (; i < nv; i += nt) {
            sg_cu_vec<T, V> v = xv[i];
#pragma unroll
            for (int j = 0; j < V; j++) ops.step(a, v.v[j], b + i * V + j);
        }
        for (int64_t r = b + nv * V + t; r < re; r += nt) ops.step(a, x[r], r);
    } else if (g.nr <= 1) {
        int64_t s = g.nr ? g.rin[0] : 0, r = rb + t;
        for (; r + 3 * nt < re; r += 4 * nt) {
            T v[4];
#pragma unroll
            for (int k = 0; k < 4; k++) v[k] = sg_cu_ld<T>(row + (r + k * nt) * s);
#pragma unroll
            for (int k = 0; k < 4; k++) ops.step(a, v[k], r + k * nt);
        }
        for (; r < re; r += nt) ops.step(a, sg_cu_ld<T>(row + r * s), r);
    } else {
        for (int64_t r = rb + t; r < re; r += nt) ops.step(a, sg_cu_ld<T>(row + sg_cu_roff(g, r)), r);
    }
    return a;
}

template <class Ops>
__device__ __forceinline__ void sg_cu_red_emit(const Ops &ops, const sg_cu_rgeom &g,
                                               const typename Ops::acc &a, int64_t o,
                                               int64_t oo, int64_t eo, typename Ops::acc *ws,
                                               int64_t s, int64_t ns) {
    if (ws) ws[o * ns + s] = a;
    else ops.write(a, g.n_red, g.out + oo, g.ext ? g.ext + eo : nullptr);
}

/* inner: a warp (BLK false, 8 outputs a block) or the block (BLK true) per output; grid.y
 * splits the reduced range into chunks */
template <class Ops, bool BLK>
__global__ void __launch_bounds__(256)
    sg_cu_red_inner(const sg_cu_rgeom g, const Ops ops, typename Ops::acc *ws, int64_t chunk,
                    bool vec) {
    using A = typename Ops::acc;
    __shared__ __align__(16) unsigned char smraw[8 * sizeof(A)];
    const int     tid = threadIdx.x;
    const int     nt = BLK ? 256 : 32, t = BLK ? tid : (tid & 31);
    const int     wpb = BLK ? 1 : 8, w = BLK ? 0 : tid >> 5;
    const int64_t s = blockIdx.y, ns = gridDim.y;
    const int64_t rb = s * chunk, re = rb + chunk < g.n_red ? rb + chunk : g.n_red;
    for (int64_t o = (int64_t)blockIdx.x * wpb + w; o < g.n_out; o += (int64_t)gridDim.x * wpb) {
        int64_t io, oo, eo;
        sg_cu_rkoff(g, o, 0, io, oo, eo);
        A a = sg_cu_red_line(ops, g, g.in + io, rb, re, t, nt, vec);
        if (BLK) a = sg_cu_block_join(ops, a, reinterpret_cast<A *>(smraw));
        else a = sg_cu_warp_join(ops, a);
        if (t == 0) sg_cu_red_emit(ops, g, a, o, oo, eo, ws, s, ns);
    }
}

/* outer: 32 x 8 threads; threadIdx.x owns V neighbouring outputs along K's innermost dim,
 * threadIdx.y a share of the rows; ncg column groups per combination of K's other dims */
template <class Ops, int V>
__global__ void __launch_bounds__(256)
    sg_cu_red_outer(const sg_cu_rgeom g, const Ops ops, typename Ops::acc *ws, int64_t chunk,
                    int64_t ncg) {
    using T = typename Ops::in_t;
    using A = typename Ops::acc;
    __shared__ __align__(16) unsigned char smraw[256 * sizeof(A)];
    A            *sm = reinterpret_cast<A *>(smraw);
    const int     tx = threadIdx.x, ty = threadIdx.y;
    const int64_t s = blockIdx.y, ns = gridDim.y;
    const int64_t rb = s * chunk, re = rb + chunk < g.n_red ? rb + chunk : g.n_red;
    const int64_t k0 = g.ksize[0], nblk = ncg * (g.n_out / k0);
    for (int64_t b = blockIdx.x; b < nblk; b += gridDim.x) {
        int64_t cg = b % ncg, kp = b / ncg;
        int64_t io, oo, eo;
        sg_cu_rkoff(g, kp, 1, io, oo, eo);
        int64_t j0 = (cg * 32 + tx) * V;
        A       a[V];
#pragma unroll
        for (int v = 0; v < V; v++) a[v] = ops.ident();
        if (j0 < k0) {
            const char *base = g.in + io + j0 * g.kin[0];
            int64_t     r = rb + ty;
            if (V > 1) {
                using VT = sg_cu_vec<T, V>;
                for (; r + 24 < re; r += 32) {
                    VT x[4];
#pragma unroll
                    for (int k = 0; k < 4; k++)
                        x[k] = *reinterpret_cast<const VT *>(base + sg_cu_roff(g, r + 8 * k));
#pragma unroll
                    for (int k = 0; k < 4; k++)
#pragma unroll
                        for (int v = 0; v < V; v++) ops.step(a[v], x[k].v[v], r + 8 * k);
                }
                for (; r < re; r += 8) {
                    VT x = *reinterpret_cast<const VT *>(base + sg_cu_roff(g, r));
#pragma unroll
                    for (int v = 0; v < V; v++) ops.step(a[v], x.v[v], r);
                }
            } else {
                for (; r + 24 < re; r += 32) {
                    T x[4];
#pragma unroll
                    for (int k = 0; k < 4; k++) x[k] = sg_cu_ld<T>(base + sg_cu_roff(g, r + 8 * k));
#pragma unroll
                    for (int k = 0; k < 4; k++) ops.step(a[0], x[k], r + 8 * k);
                }
                for (; r < re; r += 8) ops.step(a[0], sg_cu_ld<T>(base + sg_cu_roff(g, r)), r);
            }
        }
#pragma unroll
        for (int v = 0; v < V; v++) {
            sm[ty * 32 + tx] = a[v];
            __syncthreads();
            if (ty == 0 && j0 + v < k0) {
                A c = sm[tx];
#pragma unroll
                for (int k = 1; k < 8; k++) c = ops.join(c, sm[k * 32 + tx]);
                int64_t j = j0 + v;
                sg_cu_red_emit(ops, g, c, kp * k0 + j, oo + j * g.kout[0], eo + j * g.kext[0],
                               ws, s, ns);
            }
            __syncthreads();
        }
    }
}

/* the second pass: a warp per output joins its ns partials in order */
template <class Ops>
__global__ void __launch_bounds__(256)
    sg_cu_red_final(const sg_cu_rgeom g, const Ops ops, const typename Ops::acc *ws, int64_t ns) {
    using A = typename Ops::acc;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (int64_t o = (int64_t)blockIdx.x * 8 + w; o < g.n_out; o += (int64_t)gridDim.x * 8) {
        A a = ops.ident();
        for (int64_t s = lane; s < ns; s += 32) a = ops.join(a, ws[o * ns + s]);
        a = sg_cu_warp_join(ops, a);
        if (lane == 0) {
            int64_t io, oo, eo;
            sg_cu_rkoff(g, o, 0, io, oo, eo);
            ops.write(a, g.n_red, g.out + oo, g.ext ? g.ext + eo : nullptr);
        }
    }
}

static inline unsigned sg_cu_rgrid(int64_t n) {
    if (n < 1) return 1;
    return n > (1 << 30) ? (1u << 30) : (unsigned)n;
}

/* Runs ops over a reduction built by sg_iter_build_reduce, on its device's current stream. */
template <class Ops>
sg_status sg_cu_reduce(const sg_iter *it, const Ops &ops, const char *op) {
    using T = typename Ops::in_t;
    using A = typename Ops::acc;
    constexpr int VMAX = sg_cu_rvec<T>();
    constexpr int VOUT = VMAX < 8 ? VMAX : 8; /* outer: at most 8 accumulators a thread */
    sg_cu_rgeom   g;
    g.in = it->data[1];
    g.out = it->data[0];
    g.ext = it->nops > 2 ? it->data[2] : nullptr;
    g.nk = g.nr = 0;
    g.n_out = g.n_red = 1;
    for (int32_t d = 0; d < it->ndim; d++) {
        bool red = it->stride[0][d] == 0;
        if ((red ? g.nr : g.nk) >= SG_CU_RDIMS)
            return sg_error(SG_EUNSUPPORTED, "%s: more than %d %s dims after merging", op,
                            (int)SG_CU_RDIMS, red ? "reduced" : "kept");
        if (red) {
            g.rsize[g.nr] = it->shape[d], g.rin[g.nr] = it->stride[1][d];
            g.n_red *= it->shape[d];
            g.nr++;
        } else {
            g.ksize[g.nk] = it->shape[d], g.kin[g.nk] = it->stride[1][d];
            g.kout[g.nk] = it->stride[0][d];
            g.kext[g.nk] = it->nops > 2 ? it->stride[2][d] : 0;
            g.n_out *= it->shape[d];
            g.nk++;
        }
    }
    if (g.n_out == 0) return SG_OK;
    sg_cu_guard  guard(it->device);
    cudaStream_t st = sg_cu_stream();
    int64_t      sm = sg_cu_sm_count();
    bool         inner = g.nk == 0 || it->stride[0][0] == 0;

    int64_t nsplit = 1, nblk = 0, ncg = 0;
    bool    blk = false, vec = false;
    int     V = 1;
    if (inner) {
        vec = VMAX > 1 && g.nr == 1 && g.rin[0] == (int64_t)sizeof(T);
        blk = g.n_red > 2048 && g.n_out < sm * 16;
        if (blk) {
            int64_t want = sg_cu_ceil_div(sm * 8, g.n_out);
            int64_t most = sg_cu_ceil_div(g.n_red, 16384);
            nsplit = std::min(std::min(want, most), (int64_t)65535);
        }
    } else {
        int64_t k0 = g.ksize[0], al = VOUT * (int64_t)sizeof(T); /* a vector's alignment */
        bool    ok = VOUT > 1 && k0 % VOUT == 0 && g.kin[0] == (int64_t)sizeof(T) &&
                  (uintptr_t)g.in % al == 0;
        for (int d = 1; ok && d < g.nk; d++) ok = g.kin[d] % al == 0;
        for (int d = 0; ok && d < g.nr; d++) ok = g.rin[d] % al == 0;
        V = ok ? VOUT : 1;
        ncg = sg_cu_ceil_div(k0, 32 * (int64_t)V);
        nblk = ncg * (g.n_out / k0);
        if (nblk < sm * 4) {
            int64_t want = sg_cu_ceil_div(sm * 8, nblk);
            int64_t most = sg_cu_ceil_div(g.n_red, 64);
            nsplit = std::min(std::min(want, most), (int64_t)65535);
        }
    }
    if (nsplit < 1) nsplit = 1;
    int64_t chunk = sg_cu_ceil_div(g.n_red, nsplit);
    if (nsplit > 1) chunk = sg_cu_ceil_div(chunk, 1024) * 1024; /* whole vectors per chunk */
    if (chunk < 1) chunk = 1;
    nsplit = std::max(sg_cu_ceil_div(g.n_red, chunk), (int64_t)1);

    sg_tensor *wst = NULL;
    A         *ws = nullptr;
    if (nsplit > 1) {
        int64_t   bytes = g.n_out * nsplit * (int64_t)sizeof(A);
        sg_status s = sg_tensor_empty(&bytes, 1, SG_UINT8, it->device, &wst);
        if (s) return s;
        ws = reinterpret_cast<A *>(sg_tensor_data(wst));
    }
    if (inner) {
        dim3 grid(sg_cu_rgrid(blk ? g.n_out : sg_cu_ceil_div(g.n_out, 8)), (unsigned)nsplit);
        if (blk) sg_cu_red_inner<Ops, true><<<grid, 256, 0, st>>>(g, ops, ws, chunk, vec);
        else sg_cu_red_inner<Ops, false><<<grid, 256, 0, st>>>(g, ops, ws, chunk, vec);
    } else {
        dim3 grid(sg_cu_rgrid(nblk), (unsigned)nsplit), block(32, 8);
        if (V > 1) sg_cu_red_outer<Ops, VOUT><<<grid, block, 0, st>>>(g, ops, ws, chunk, ncg);
        else sg_cu_red_outer<Ops, 1><<<grid, block, 0, st>>>(g, ops, ws, chunk, ncg);
    }
    if (nsplit > 1)
        sg_cu_red_final<Ops><<<sg_cu_rgrid(sg_cu_ceil_div(g.n_out, 8)), 256, 0, st>>>(g, ops, ws,
                                                                                      nsplit);
    sg_status s = sg_cu_check(op);
    sg_tensor_release(wst); /* stream-ordered: freed after the kernels that use it */
    return s;
}

/* ---- element helpers ------------------------------------------------------------------------- */

/* a value of T in the type a reduction accumulates it in */
template <class A, class T> __device__ __forceinline__ A sg_cu_racc(T x) {
    if constexpr (sg_cu_is_half<T>()) return (A)(float)x;
    else if constexpr (std::is_integral<A>::value && std::is_unsigned<A>::value)
        return (A)(int64_t)x; /* integers wrap in 64 bits */
    else return (A)x;
}

template <class T> __device__ __forceinline__ bool sg_cu_isnan(T x) {
    if constexpr (std::is_floating_point<T>::value) return x != x;
    else return false;
}

/* The dtype whose device element type is T (bool for a type that is none). */
template <class T> constexpr sg_dtype sg_cu_dtype_of() {
#define SG_CU_DTYPE_OF(NAME, ...) \
    if constexpr (std::is_same<T, sg_cu_elem_t<SG_##NAME>>::value) return SG_##NAME; else
    SG_CU_DTYPES(SG_CU_DTYPE_OF) return SG_BOOL;
#undef SG_CU_DTYPE_OF
}

/* What loops reading t write for an output of dtype o: o itself where it is t, float32 or
 * float64 (for floating t), int64 (integral t); otherwise float64 or int64, and the iterator
 * casts the staged result into o. */
static inline sg_dtype sg_cu_w_dtype(sg_dtype t, sg_dtype o) {
    if (o == t) return t;
    if (sg_dtype_is_floating(t)) return o == SG_FLOAT32 ? SG_FLOAT32 : SG_FLOAT64;
    return SG_INT64;
}

/* f(sg_cu_tag<W>{}) for w as sg_cu_w_dtype gives it for T */
template <class T, class F> sg_status sg_cu_visit_w(sg_dtype w, F &&f) {
    if (w == sg_cu_dtype_of<T>()) return f(sg_cu_tag<T>{});
    if constexpr (sg_cu_is_float<T>()) {
        if (w == SG_FLOAT32) return f(sg_cu_tag<float>{});
        return f(sg_cu_tag<double>{});
    } else {
        return f(sg_cu_tag<int64_t>{});
    }
}

/* ---- running a reduction --------------------------------------------------------------------- */

/* Builds the reduction of x (read as it is) into out (already shaped) with `extra` operands
 * shaped like out (keepdim form or not), loops writing out_dtype (the iterator stages and
 * casts where out's dtype differs), and calls run(const sg_iter *) to launch. */
template <class F>
sg_status sg_cu_reduce_into(const char *op, sg_tensor *x, const sg_rdims *r, bool keepdim,
                            sg_tensor *out, sg_dtype out_dtype, sg_tensor *const *extra,
                            int32_t nextra, F &&run) {
    if (x->device.type != SG_DEV_CUDA)
        return sg_error(SG_EINVAL, "%s: expected a CUDA tensor, got one on %s", op,
                        sg_device_type_name((sg_device_type)x->device.type));
    sg_tensor *views[SG_ITER_MAX] = {NULL}, *res = NULL;
    sg_status  st = sg_reduce_keepdim_view(out, r, x->ndim, keepdim, &views[0]);
    for (int32_t i = 0; !st && i < nextra; i++)
        st = sg_reduce_keepdim_view(extra[i], r, x->ndim, keepdim, &views[1 + i]);
    if (!st) {
        sg_iter      it;
        sg_iter_spec spec = {};
        spec.op = op;
        spec.out = views[0];
        spec.in[0] = x;
        spec.nin = 1 + nextra;
        spec.compute = dtype_of(x);
        spec.result = dtype_of(out);
        spec.out_dtype = out_dtype;
        for (int32_t i = 0; i < nextra; i++) spec.in[1 + i] = views[1 + i];
        if (!(st = sg_iter_build_reduce(&it, &spec, &res))) {
            st = run(&it);
            if (st) {
                sg_iter_free(&it);
                sg_tensor_release(res);
                res = NULL;
            } else {
                st = sg_iter_finish(&it, &res);
            }
        }
    }
    sg_tensor_release(res);
    for (int32_t i = 0; i <= nextra; i++) sg_tensor_release(views[i]);
    return st;
}

/* the families' registrations (reduce.cu calls them) */
sg_status sg_cu_register_reduce_ext(void);
sg_status sg_cu_register_reduce_stat(void);
sg_status sg_cu_register_reduce_scan(void);

#endif
