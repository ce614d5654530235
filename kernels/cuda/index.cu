/* index.cu: joining (cat), indexing (index_select, gather, scatter,
 * scatter_add) and triangles (tril, triu) on CUDA, with kernels/cpu/index.c's semantics and
 * messages (its meta functions make the checks of the structured ops). sort and topk are in
 * sort.cu. where, masked_fill, clamp and pow are elsewhere.
 *
 * Gathers and scatters move elements as bytes (any dtype), one thread per element of the
 * index (or of the result), with operands read through their strides. cat copies the parts
 * that are contiguous and of the output's dtype in one launch (up to 64 parts, each in the
 * widest unit their sizes and alignments allow); other parts go through the casting copy.
 * Index tensors are bounds-checked before anything is written (see sg_cu_find_oob).
 * scatter's reductions use atomics (add on float, double, int32, int64 natively; otherwise a
 * compare-and-swap loop); float16 and bfloat16 accumulate in a float32 copy, rounded once at
 * the end, as the CPU's. */
#include "index.cuh"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/* ---- shared helpers (index.cuh) ------------------------------------------------------------ */

sg_status sg_cu_same_device(const char *op, const sg_tensor *t, sg_device dev) {
    if (sg_device_eq(t->device, dev)) return SG_OK;
    return sg_error(SG_EINVAL, "%s: Expected all tensors to be on the same device, but found at "
                               "least two devices, %s:%d and %s:%d!",
                    op, sg_device_type_name((sg_device_type)dev.type), dev.index,
                    sg_device_type_name((sg_device_type)t->device.type), t->device.index);
}

sg_status sg_cu_prep_out(const char *op, sg_tensor *out, const sg_meta *m, bool exact) {
    sg_status st = sg_cu_same_device(op, out, m->device);
    return st ? st : sg_index_out_ready(op, out, m, exact);
}

sg_status sg_cu_index_i64(const char *op, const sg_tensor *idx, sg_device dev, sg_tensor **out) {
    *out = NULL;
    if (idx->device.type == SG_DEV_CPU && dev.type != SG_DEV_CPU) {
        /* an index on the host is moved over (as a contiguous int64 copy) */
        sg_tensor *c = NULL;
        sg_status  st = sg_cast(idx, SG_INT64, &c);
        if (!st) st = sg_tensor_to(c, dev, out);
        sg_tensor_release(c);
        return st;
    }
    sg_status st = sg_cu_same_device(op, idx, dev);
    return st ? st : sg_cast(idx, SG_INT64, out);
}

namespace {

__global__ void oob_kernel(const int64_t *idx, int64_t n, int64_t bound,
                           unsigned long long *first) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t v = idx[i];
        if (v < 0 || v >= bound) atomicMin(first, (unsigned long long)i);
    }
}

} // namespace

sg_status sg_cu_find_oob(const char *op, const sg_tensor *idx, int64_t bound, int64_t *bad,
                         int64_t *value) {
    *bad = -1;
    *value = 0;
    int64_t n = sg_tensor_numel(idx);
    if (n == 0) return SG_OK;
    sg_cu_guard  guard(idx->device);
    cudaStream_t s = sg_cu_stream();
    sg_tensor   *flag = NULL;
    int64_t      one = 1;
    sg_status    st = sg_tensor_empty(&one, 1, SG_INT64, idx->device, &flag);
    if (st) return st;
    unsigned long long *f = (unsigned long long *)sg_tensor_data(flag), first = 0;
    const int64_t      *iv = (const int64_t *)sg_tensor_data(idx);
    st = sg_cu_status(cudaMemsetAsync(f, 0xff, sizeof *f, s), op);
    if (!st) {
        oob_kernel<<<sg_cu_blocks(n), SG_CU_BLOCK, 0, s>>>(iv, n, bound, f);
        st = sg_cu_check(op);
    }
    if (!st) st = sg_cu_status(cudaMemcpyAsync(&first, f, sizeof first, cudaMemcpyDeviceToHost, s), op);
    if (!st) st = sg_cu_status(cudaStreamSynchronize(s), op);
    if (!st && first != ~0ull) {
        *bad = (int64_t)first;
        st = sg_cu_status(cudaMemcpyAsync(value, iv + first, sizeof *value,
                                          cudaMemcpyDeviceToHost, s), op);
        if (!st) st = sg_cu_status(cudaStreamSynchronize(s), op);
    }
    sg_tensor_release(flag);
    return st;
}

namespace {

/* ---- helpers ------------------------------------------------------------------------------ */

sg_dtype dt(const sg_tensor *t) { return (sg_dtype)t->dtype; }
size_t   esize(const sg_tensor *t) { return sg_dtype_size(dt(t)); }

/* The tensor a kernel runs on must be a CUDA one (a CPU operand beside CUDA ones dispatches
 * here too). */
sg_status need_cuda(const char *op, const sg_tensor *t) {
    if (t->device.type == SG_DEV_CUDA) return SG_OK;
    return sg_error(SG_EINVAL, "%s: expected a tensor on cuda, got one on %s", op,
                    sg_device_type_name((sg_device_type)t->device.type));
}

sg_status no_meta(const char *op) {
    return sg_error(SG_EUNSUPPORTED, "%s: the meta function is not set (sg_aten_cpu_init)", op);
}

/* Fills a geometry of t's (ensure_nonempty) sizes, operand k's strides from each tensor. */
template <int N> void nd_of(sg_cu_nd<N> &g, const sg_tensor *shape, const sg_tensor *const *ops) {
    g.ndim = sg_cu_ne_dim(shape);
    for (int32_t d = 0; d < g.ndim; d++) {
        g.size[d] = sg_cu_ne_size(shape, d);
        for (int k = 0; k < N; k++) g.st[k][d] = ops[k] ? sg_cu_ne_stride(ops[k], d) : 0;
    }
}

/* ---- cat, stack --------------------------------------------------------------------------- */

enum { CAT_BATCH = 64 };

struct cat_part {
    const void *src;
    int64_t     cols; /* units per outer row */
    int64_t     col0; /* where they start in the output's row */
};
struct cat_batch {
    cat_part p[CAT_BATCH];
};

/* Part blockIdx.y: its outer x cols units into the output's rows (out_cols units each). */
template <class U>
__global__ void __launch_bounds__(SG_CU_BLOCK)
    cat_kernel(const cat_batch b, U *out, int64_t out_cols, int64_t outer) {
    const cat_part p = b.p[blockIdx.y];
    const U       *src = (const U *)p.src;
    int64_t        n = outer * p.cols, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t r = i / p.cols, c = i - r * p.cols;
        out[r * out_cols + p.col0 + c] = src[i];
    }
}

/* Launches one batch of n parts whose byte sizes and addresses are multiples of `unit`. */
sg_status cat_launch(const cat_batch &b, int n, int64_t unit, char *out, int64_t out_row_bytes,
                     int64_t outer, int64_t max_bytes) {
    cat_batch     u = b;
    cudaStream_t  s = sg_cu_stream();
    for (int i = 0; i < n; i++) u.p[i].cols /= unit, u.p[i].col0 /= unit;
    int64_t  out_cols = out_row_bytes / unit;
    dim3     grid(sg_cu_blocks(outer * (max_bytes / unit)), (unsigned)n);
    return sg_cu_visit_size((size_t)unit, [&](auto tag) {
        using U = typename decltype(tag)::type;
        cat_kernel<U><<<grid, SG_CU_BLOCK, 0, s>>>(u, (U *)out, out_cols, outer);
        return sg_cu_check("cat");
    });
}

/* The parts of ts (along dim) into out: those contiguous and of out's dtype batched, the rest
 * through the casting copy. out is contiguous where `batched` is asked for. */
sg_status cat_copy(sg_tensor_list ts, int64_t dim, sg_tensor *out) {
    sg_status st = SG_OK;
    int64_t   outer = 1, inner = 1, es = (int64_t)esize(out);
    for (int64_t d = 0; d < dim; d++) outer *= out->sizes[d];
    for (int64_t d = dim + 1; d < out->ndim; d++) inner *= out->sizes[d];
    bool      batched = sg_tensor_is_contiguous(out) && outer > 0;
    sg_cu_guard guard(out->device);
    cat_batch b;
    int       nb = 0;
    int64_t   max_bytes = 0, row = out->sizes[dim] * inner * es, at = 0;
    char     *o = (char *)sg_tensor_data(out);
    /* each batch moves the widest unit that divides every address and size in it */
    auto flush = [&]() -> sg_status {
        if (!nb) return SG_OK;
        int64_t   w = 16;
        uintptr_t bits = (uintptr_t)o | (uintptr_t)row;
        for (int i = 0; i < nb; i++)
            bits |= (uintptr_t)b.p[i].src | (uintptr_t)b.p[i].cols | (uintptr_t)b.p[i].col0;
        while (w > 1 && bits % (uintptr_t)w) w /= 2;
        sg_status r = cat_launch(b, nb, w, o, row, outer, max_bytes);
        nb = 0;
        max_bytes = 0;
        return r;
    };
    for (int32_t i = 0; i < ts.len && !st; i++) {
        sg_tensor *t = ts.items[i], *part;
        if (t->ndim == 1 && t->sizes[0] == 0) continue; /* the legacy empty tensor */
        int64_t len = t->sizes[dim];
        if (len > 0 && batched && dt(t) == dt(out) && sg_tensor_is_contiguous(t)) {
            b.p[nb].src = sg_tensor_data(t);
            b.p[nb].cols = len * inner * es;
            b.p[nb].col0 = at * inner * es;
            if (b.p[nb].cols > max_bytes) max_bytes = b.p[nb].cols;
            if (++nb == CAT_BATCH) st = flush();
        } else if (len > 0 && !(st = sg_tensor_slice(out, dim, at, at + len, 1, &part))) {
            st = sg_cast_copy_(part, t);
            sg_tensor_release(part);
        }
        at += len;
    }
    if (!st) st = flush();
    return st;
}

sg_status cat_out_k(sg_keyset ks, sg_tensor_list ts, int64_t dim, sg_tensor *out,
                    sg_tensor **ret) {
    (void)ks;
    sg_meta   m;
    sg_status st;
    *ret = NULL;
    if (!aten_cat_out_meta) return no_meta("cat");
    if ((st = aten_cat_out_meta(ts, dim, &m)) || (st = need_cuda("cat", out))) return st;
    if (!sg_dtype_can_cast(m.dtype, dt(out)))
        return sg_error(SG_EINVAL, "cat: input types can't be cast to the desired output type %s",
                        sg_dtype_c10_name(dt(out)));
    const sg_tensor *first = NULL;
    for (int32_t i = 0; i < ts.len; i++) {
        if ((st = sg_cu_same_device("cat", ts.items[i], out->device)) ||
            (st = sg_index_no_overlap("cat", out, ts.items[i])))
            return st;
        if (!first && !(ts.items[i]->ndim == 1 && ts.items[i]->sizes[0] == 0)) first = ts.items[i];
    }
    m.dtype = dt(out);
    if ((st = sg_cu_prep_out("cat", out, &m, false))) return st;
    if (first) {
        if ((st = sg_check_dim("cat", &dim, first->ndim))) return st;
        if (sg_tensor_numel(out) > 0 && (st = cat_copy(ts, dim, out))) return st;
    }
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

/* ---- index_select, gather ---------------------------------------------------------------- */

/* out[c] = self[c with c[dim] replaced by the index]: the index at c[dim] (index_select) or
 * at c itself (gather: the index has out's shape, contiguous). st[0]: out, st[1]: self. */
template <class E, bool BY_COORD>
__global__ void __launch_bounds__(SG_CU_BLOCK)
    take_kernel(const sg_cu_nd<2> g, int32_t dim, const int64_t *idx, const E *self, E *out,
                int64_t n) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t oo = 0, so = 0;
        sg_cu_coords(g, i, [&](int d, int64_t c) {
            oo += c * g.st[0][d];
            if (d == dim) so += (BY_COORD ? idx[c] : idx[i]) * g.st[1][d];
            else so += c * g.st[1][d];
        });
        out[oo] = self[so];
    }
}

template <bool BY_COORD>
sg_status take(const char *op, const sg_tensor *self, int64_t dim, const sg_tensor *idx,
               sg_tensor *out) {
    int64_t n = sg_tensor_numel(out);
    if (n == 0) return SG_OK;
    sg_cu_nd<2>      g;
    const sg_tensor *ops[2] = {out, self};
    nd_of(g, out, ops);
    sg_cu_guard  guard(out->device);
    cudaStream_t s = sg_cu_stream();
    return sg_cu_visit_size(esize(self), [&](auto tag) {
        using E = typename decltype(tag)::type;
        take_kernel<E, BY_COORD><<<sg_cu_blocks(n), SG_CU_BLOCK, 0, s>>>(
            g, (int32_t)dim, (const int64_t *)sg_tensor_data(idx),
            (const E *)sg_tensor_data(self), (E *)sg_tensor_data(out), n);
        return sg_cu_check(op);
    });
}

sg_status index_select_run(const char *op, sg_tensor *self, int64_t dim, sg_tensor *index,
                           sg_tensor *out, sg_tensor **ret) {
    sg_meta   m;
    sg_status st;
    *ret = NULL;
    if ((st = sg_index_select_check(op, self, &dim, index, out, &m)) ||
        (st = need_cuda(op, self)))
        return st;
    if (out && ((st = sg_index_no_overlap(op, out, self)) ||
                (st = sg_index_no_overlap(op, out, index)) ||
                (st = sg_cu_prep_out(op, out, &m, true))))
        return st;

    sg_tensor *idx = NULL, *res = NULL;
    int64_t    bad, value;
    if ((st = sg_cu_index_i64(op, index, self->device, &idx))) return st;
    if (!(st = sg_cu_find_oob(op, idx, sg_cu_ne_size(self, (int32_t)dim), &bad, &value)) &&
        bad >= 0)
        st = sg_error(SG_EINVAL, "%s: index out of range in self", op);
    if (!st) {
        if (out) res = sg_tensor_retain(out);
        else st = sg_tensor_empty(m.sizes, m.ndim, dt(self), self->device, &res);
    }
    if (!st) st = take<true>(op, self, dim, idx, res);
    sg_tensor_release(idx);
    if (st) {
        sg_tensor_release(res);
        return st;
    }
    *ret = res;
    return SG_OK;
}

sg_status index_select_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                         sg_tensor **ret) {
    (void)ks;
    return index_select_run("index_select", self, dim, index, NULL, ret);
}

sg_status index_select_out_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                             sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return index_select_run("index_select", self, dim, index, out, ret);
}

sg_status gather_out_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                       bool sparse_grad, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_meta   m;
    sg_status st;
    *ret = NULL;
    if (!aten_gather_out_meta) return no_meta("gather");
    if ((st = aten_gather_out_meta(self, dim, index, sparse_grad, &m)) ||
        (st = sg_check_dim("gather", &dim, self->ndim)) || (st = need_cuda("gather", self)) ||
        (st = sg_cu_same_device("gather", self, out->device)) ||
        (st = sg_index_no_overlap("gather", out, self)) ||
        (st = sg_index_no_overlap("gather", out, index)) ||
        (st = sg_cu_prep_out("gather", out, &m, true)))
        return st;
    if (sg_tensor_numel(index) > 0) {
        sg_tensor *idx = NULL;
        int64_t    bad, v, bound = sg_cu_ne_size(self, (int32_t)dim);
        if ((st = sg_cu_index_i64("gather", index, self->device, &idx))) return st;
        if (!(st = sg_cu_find_oob("gather", idx, bound, &bad, &v)) && bad >= 0)
            st = sg_error(SG_EINVAL, "gather: index %lld is out of bounds for dimension %lld with "
                                     "size %lld",
                          (long long)v, (long long)dim, (long long)bound);
        if (!st) st = take<false>("gather", self, dim, idx, out);
        sg_tensor_release(idx);
        if (st) return st;
    }
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

/* ---- scatter ------------------------------------------------------------------------------ */

template <class T> __device__ __forceinline__ T combine(T x, T y, int mode) {
    if constexpr (std::is_same<T, bool>::value) return mode == 1 ? (x || y) : (x && y);
    else return (T)(mode == 1 ? x + y : x * y);
}

template <class W, class T> __device__ __forceinline__ W bits_of(T v) {
    W w = 0;
    memcpy(&w, &v, sizeof v);
    return w;
}

/* *p (op)= v atomically: native adds where CUDA has them, a compare-and-swap loop otherwise
 * (on the aligned 32-bit word that holds a 1- or 2-byte element). */
template <class T> __device__ void atomic_combine(T *p, T v, int mode) {
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
        if (mode == 1) {
            atomicAdd(p, v);
            return;
        }
    } else if constexpr (std::is_same<T, int32_t>::value) {
        if (mode == 1) {
            atomicAdd((int *)p, (int)v);
            return;
        }
    } else if constexpr (std::is_same<T, int64_t>::value) {
        if (mode == 1) {
            atomicAdd((unsigned long long *)p, (unsigned long long)v);
            return;
        }
    }
    if constexpr (sizeof(T) == 8) {
        unsigned long long *w = (unsigned long long *)p, old = *w, assumed;
        do {
            assumed = old;
            T x;
            memcpy(&x, &assumed, 8);
            old = atomicCAS(w, assumed, bits_of<unsigned long long>(combine(x, v, mode)));
        } while (old != assumed);
    } else if constexpr (sizeof(T) == 4) {
        unsigned *w = (unsigned *)p, old = *w, assumed;
        do {
            assumed = old;
            T x;
            memcpy(&x, &assumed, 4);
            old = atomicCAS(w, assumed, bits_of<unsigned>(combine(x, v, mode)));
        } while (old != assumed);
    } else {
        unsigned *w = (unsigned *)((uintptr_t)p & ~(uintptr_t)3), old = *w, assumed;
        unsigned  shift = (unsigned)((uintptr_t)p & 3) * 8;
        unsigned  mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
        do {
            assumed = old;
            unsigned part = (assumed & mask) >> shift;
            T        x;
            memcpy(&x, &part, sizeof x); /* little-endian: the low bytes */
            unsigned r = bits_of<unsigned>(combine(x, v, mode)) << shift;
            old = atomicCAS(w, assumed, (assumed & ~mask) | (r & mask));
        } while (old != assumed);
    }
}

/* dst[c with c[dim] = idx[i]] (op)= src[c] or value, over the index's elements (i row-major,
 * c its coordinate). st[0]: dst, st[1]: src. */
template <class E>
__global__ void __launch_bounds__(SG_CU_BLOCK)
    scatter_kernel(const sg_cu_nd<2> g, int32_t dim, const int64_t *idx, const E *src, E value,
                   E *dst, int64_t n, int mode) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t doff = 0, soff = 0;
        sg_cu_coords(g, i, [&](int d, int64_t c) {
            doff += (d == dim ? idx[i] : c) * g.st[0][d];
            soff += c * g.st[1][d];
        });
        E v = src ? src[soff] : value;
        if constexpr (std::is_same<E, sg_cu_b16>::value || sg_cu_is_half<E>()) {
            dst[doff] = v; /* never reduced: complex is refused, 16-bit floats are staged */
        } else {
            if (mode) atomic_combine(dst + doff, v, mode);
            else dst[doff] = v;
        }
    }
}

/* dst (op)= src or value through idx (contiguous int64 of the index's shape `shape`). */
sg_status scatter_launch(const char *op, sg_tensor *dst, int64_t dim, const sg_tensor *shape,
                         const sg_tensor *idx, const sg_tensor *src, const char *value,
                         int mode) {
    int64_t n = sg_tensor_numel(shape);
    if (n == 0) return SG_OK;
    sg_cu_nd<2>      g;
    const sg_tensor *ops[2] = {dst, src};
    nd_of(g, shape, ops);
    sg_cu_guard  guard(dst->device);
    cudaStream_t s = sg_cu_stream();
    const int64_t *iv = (const int64_t *)sg_tensor_data(idx);
    auto launch = [&](auto tag) -> sg_status {
        using E = typename decltype(tag)::type;
        E v{};
        if (value) memcpy(&v, value, sizeof v);
        scatter_kernel<E><<<sg_cu_blocks(n), SG_CU_BLOCK, 0, s>>>(
            g, (int32_t)dim, iv, src ? (const E *)sg_tensor_data(src) : nullptr, v,
            (E *)sg_tensor_data(dst), n, mode);
        return sg_cu_check(op);
    };
    if (!mode) return sg_cu_visit_size(esize(dst), launch);
    return sg_cu_visit(dt(dst), SG_CU_ALL, op, launch);
}

/* out = self (unless the same), then out[index] (op)= src or value, along dim (the meta has
 * checked the arguments) */
sg_status scatter_run(const char *op, sg_tensor *self, int64_t dim, sg_tensor *index,
                      sg_tensor *src, const sg_scalar *value, int mode, const sg_meta *m,
                      sg_tensor *out, sg_tensor **ret) {
    sg_status st;
    *ret = NULL;
    if ((st = sg_check_dim(op, &dim, self->ndim)) || (st = need_cuda(op, self)) ||
        (st = sg_cu_same_device(op, self, out->device)) ||
        (src && (st = sg_cu_same_device(op, src, out->device))) ||
        (st = sg_cu_prep_out(op, out, m, true)) || (st = sg_index_no_overlap(op, out, index)) ||
        (src && (st = sg_index_no_overlap(op, out, src))))
        return st;
    sg_dtype t = dt(self);
    if (mode && sg_dtype_is_complex(t)) return sg_not_implemented(op, t);
    char vbuf[16];
    if (value && (st = sg_index_scalar_bytes(op, *value, t, vbuf))) return st;
    sg_tensor *idx = NULL;
    if (sg_tensor_numel(index) > 0) {
        int64_t bad, v, bound = sg_cu_ne_size(self, (int32_t)dim);
        if ((st = sg_cu_index_i64(op, index, out->device, &idx))) return st;
        if (!(st = sg_cu_find_oob(op, idx, bound, &bad, &v)) && bad >= 0)
            st = sg_error(SG_EINVAL, "%s: index %lld is out of bounds for dimension %lld with size "
                                     "%lld",
                          op, (long long)v, (long long)dim, (long long)bound);
    }
    if (!st && out != self) st = sg_cast_copy_(out, self);
    if (!st && idx) {
        if (mode && (t == SG_FLOAT16 || t == SG_BFLOAT16)) {
            /* reductions of the 16-bit floats accumulate in float, rounded once at the end */
            sg_tensor *acc = NULL, *src32 = NULL;
            char       v32[16];
            st = sg_cast(out, SG_FLOAT32, &acc);
            if (!st && src) st = sg_cast(src, SG_FLOAT32, &src32);
            if (!st && value) st = sg_index_scalar_bytes(op, *value, SG_FLOAT32, v32);
            if (!st) st = scatter_launch(op, acc, dim, index, idx, src32, value ? v32 : NULL, mode);
            if (!st) st = sg_cast_copy_(out, acc);
            sg_tensor_release(src32);
            sg_tensor_release(acc);
        } else {
            st = scatter_launch(op, out, dim, index, idx, src, value ? vbuf : NULL, mode);
        }
    }
    sg_tensor_release(idx);
    if (st) return st;
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

sg_status scatter_src_out_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                            sg_tensor *src, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_meta   m;
    sg_status st = aten_scatter_src_out_meta ? aten_scatter_src_out_meta(self, dim, index, src, &m)
                                             : no_meta("scatter");
    *ret = NULL;
    return st ? st : scatter_run("scatter", self, dim, index, src, NULL, 0, &m, out, ret);
}

sg_status scatter_value_out_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                              sg_scalar value, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_meta   m;
    sg_status st = aten_scatter_value_out_meta
                       ? aten_scatter_value_out_meta(self, dim, index, value, &m)
                       : no_meta("scatter");
    *ret = NULL;
    return st ? st : scatter_run("scatter", self, dim, index, NULL, &value, 0, &m, out, ret);
}

sg_status scatter_reduce_out_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                               sg_tensor *src, const char *reduce, sg_tensor *out,
                               sg_tensor **ret) {
    (void)ks;
    sg_meta   m;
    int       mode = 0;
    sg_status st = aten_scatter_reduce_out_meta
                       ? aten_scatter_reduce_out_meta(self, dim, index, src, reduce, &m)
                       : no_meta("scatter");
    *ret = NULL;
    if (!st) st = sg_index_reduce_of(reduce, &mode);
    return st ? st : scatter_run("scatter", self, dim, index, src, NULL, mode, &m, out, ret);
}

sg_status scatter_value_reduce_out_k(sg_keyset ks, sg_tensor *self, int64_t dim,
                                     sg_tensor *index, sg_scalar value, const char *reduce,
                                     sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_meta   m;
    int       mode = 0;
    sg_status st = aten_scatter_value_reduce_out_meta
                       ? aten_scatter_value_reduce_out_meta(self, dim, index, value, reduce, &m)
                       : no_meta("scatter");
    *ret = NULL;
    if (!st) st = sg_index_reduce_of(reduce, &mode);
    return st ? st : scatter_run("scatter", self, dim, index, NULL, &value, mode, &m, out, ret);
}

sg_status scatter_add_out_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                            sg_tensor *src, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_meta   m;
    sg_status st = aten_scatter_add_out_meta ? aten_scatter_add_out_meta(self, dim, index, src, &m)
                                             : no_meta("scatter_add");
    *ret = NULL;
    return st ? st : scatter_run("scatter_add", self, dim, index, src, NULL, 1, &m, out, ret);
}

/* ---- tril, triu --------------------------------------------------------------------------- */

/* out = src where the element is on the kept side of the diagonal, else zero; in place
 * (out == src), only the zeros are written. st[0]: out, st[1]: src. */
template <class E>
__global__ void __launch_bounds__(SG_CU_BLOCK)
    tri_kernel(const sg_cu_nd<2> g, const E *src, E *out, int64_t n, int64_t k, bool lower,
               bool inplace) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    int     rd = g.ndim - 2, cd = g.ndim - 1;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t oo = 0, so = 0, row = 0, col = 0;
        sg_cu_coords(g, i, [&](int d, int64_t c) {
            oo += c * g.st[0][d];
            so += c * g.st[1][d];
            if (d == rd) row = c;
            if (d == cd) col = c;
        });
        bool keep = lower ? col - row <= k : col - row >= k;
        if (!keep) out[oo] = E{};
        else if (!inplace) out[oo] = src[so];
    }
}

sg_status tri_run(const char *op, bool lower, sg_tensor *self, int64_t k, sg_tensor *out,
                  sg_tensor **ret) {
    sg_meta   m;
    sg_status st;
    auto      meta = lower ? aten_tril_out_meta : aten_triu_out_meta;
    *ret = NULL;
    if (!meta) return no_meta(op);
    if ((st = meta(self, k, &m)) || (st = need_cuda(op, self)) ||
        (st = sg_cu_same_device(op, self, out->device)) ||
        (st = sg_cu_prep_out(op, out, &m, true)))
        return st;
    sg_tensor *src = NULL;
    if (out != self && sg_may_overlap(out, self)) {
        if ((st = sg_tensor_clone(self, &src))) return st;
    } else {
        src = sg_tensor_retain(self);
    }
    int64_t n = sg_tensor_numel(self);
    if (n > 0) {
        sg_cu_nd<2>      g;
        const sg_tensor *ops[2] = {out, src};
        nd_of(g, self, ops);
        sg_cu_guard  guard(out->device);
        cudaStream_t s = sg_cu_stream();
        bool         inplace = out == self;
        st = sg_cu_visit_size(esize(self), [&](auto tag) {
            using E = typename decltype(tag)::type;
            tri_kernel<E><<<sg_cu_blocks(n), SG_CU_BLOCK, 0, s>>>(
                g, (const E *)sg_tensor_data(src), (E *)sg_tensor_data(out), n, k, lower, inplace);
            return sg_cu_check(op);
        });
    }
    sg_tensor_release(src);
    if (st) return st;
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

sg_status tril_out_k(sg_keyset ks, sg_tensor *self, int64_t diagonal, sg_tensor *out,
                     sg_tensor **ret) {
    (void)ks;
    return tri_run("tril", true, self, diagonal, out, ret);
}
sg_status triu_out_k(sg_keyset ks, sg_tensor *self, int64_t diagonal, sg_tensor *out,
                     sg_tensor **ret) {
    (void)ks;
    return tri_run("triu", false, self, diagonal, out, ret);
}

} // namespace

/* sort.cu */
sg_status sg_cu_register_sort(void);

/* where(condition): the coordinates of the nonzero elements. Rationale: the result's length is
 * the count of nonzero elements, which the host must know to allocate, so the condition is
 * read on the host anyway (aten's CUDA nonzero synchronises too); the CPU kernel finds the
 * coordinates there and they move back to the condition's device, as the CPU's are: rows of
 * one [n, count] tensor. */
static sg_status where_cond_k(sg_keyset ks, sg_tensor *cond, sg_tensor_list *ret) {
    (void)ks;
    ret->items = NULL, ret->len = 0;
    sg_tensor     *host = NULL, *all = NULL, *dev = NULL;
    sg_tensor_list cpu = {NULL, 0};
    sg_status      st = sg_tensor_to(cond, sg_device{SG_DEV_CPU, 0}, &host);
    if (!st) st = aten_where(host, &cpu);
    sg_tensor_release(host);
    if (st) return st;
    int32_t     n = cpu.len;
    int64_t     count = n ? cpu.items[0]->sizes[0] : 0;
    sg_tensor **items = (sg_tensor **)calloc((size_t)(n ? n : 1), sizeof *items);
    if (!items) st = sg_error(SG_ENOMEM, "where: out of memory");
    if (!st && n) {
        int64_t sizes[2] = {n, count}, strides[2] = {count, 1};
        st = sg_tensor_as_strided(cpu.items[0], sizes, strides, 2, 0, &all);
    }
    if (!st && n) st = sg_tensor_to(all, cond->device, &dev);
    for (int32_t d = 0; !st && d < n; d++) st = sg_tensor_select(dev, 0, d, &items[d]);
    sg_tensor_release(all);
    sg_tensor_release(dev);
    sg_tensor_list_release(&cpu);
    if (st) {
        for (int32_t d = 0; items && d < n; d++) sg_tensor_release(items[d]);
        free(items);
        return st;
    }
    ret->items = items;
    ret->len = n;
    return SG_OK;
}

extern "C" sg_status sg_cu_register_index(void) {
    SG_CU_REG(aten_cat_out, cat_out_k);
    SG_CU_REG(aten_where, where_cond_k);
    SG_CU_REG(aten_index_select, index_select_k);
    SG_CU_REG(aten_index_select_out, index_select_out_k);
    SG_CU_REG(aten_gather_out, gather_out_k);
    SG_CU_REG(aten_scatter_src_out, scatter_src_out_k);
    SG_CU_REG(aten_scatter_value_out, scatter_value_out_k);
    SG_CU_REG(aten_scatter_reduce_out, scatter_reduce_out_k);
    SG_CU_REG(aten_scatter_value_reduce_out, scatter_value_reduce_out_k);
    SG_CU_REG(aten_scatter_add_out, scatter_add_out_k);
    SG_CU_REG(aten_tril_out, tril_out_k);
    SG_CU_REG(aten_triu_out, triu_out_k);
    return sg_cu_register_sort();
}
