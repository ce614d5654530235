/* reduce_scan.cu: cumsum on CUDA, as kernels/cpu/reduce.c: the input contiguous in the
 * result's dtype, seen as [outer, len, inner], and the running sums along len. Running sums
 * accumulate in float64 for float32 and float64 (as aten's CPU kernel does), float32 for
 * float16/bfloat16, and wrap in 64 bits for integers and bools.
 *
 * Where the dim is innermost (inner == 1), a warp scans a row: chunks of 32 x 4 elements, each
 * lane's four added in order, the lanes' totals scanned by shuffles, a carry from chunk to
 * chunk. Otherwise a thread owns a column (q, j) and walks its len elements, neighbouring
 * threads reading neighbouring memory; where columns are too few to fill the GPU, each walks a
 * chunk of its column from a carry (scan_columns). Input and output may be the same memory: every element
 * is read before the thread that reads it writes it. */
#include "reduce.cuh"

namespace {

template <class T>
using scan_acc_t = typename std::conditional<
    sg_cu_is_half<T>(), float,
    typename std::conditional<sg_cu_is_float<T>(), double, uint64_t>::type>::type;

enum { SCAN_ITEMS = 4 };

template <class T>
__global__ void __launch_bounds__(256)
    scan_rows(const T *x, T *o, int64_t rows, int64_t len) {
    using A = scan_acc_t<T>;
    const int lane = threadIdx.x & 31;
    for (int64_t q = (int64_t)blockIdx.x * 8 + (threadIdx.x >> 5); q < rows;
         q += (int64_t)gridDim.x * 8) {
        const T *xr = x + q * len;
        T       *orow = o + q * len;
        A        carry = A(0);
        for (int64_t c = 0; c < len; c += 32 * SCAN_ITEMS) {
            int64_t b = c + lane * SCAN_ITEMS;
            A       p[SCAN_ITEMS];
            A       run = A(0);
#pragma unroll
            for (int k = 0; k < SCAN_ITEMS; k++) {
                if (b + k < len) run += sg_cu_racc<A>(xr[b + k]);
                p[k] = run;
            }
            /* inclusive scan of the lanes' totals, then each lane's exclusive prefix */
            A incl = run;
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                A y = __shfl_up_sync(0xffffffffu, incl, off);
                if (lane >= off) incl += y;
            }
            A excl = __shfl_up_sync(0xffffffffu, incl, 1);
            if (lane == 0) excl = A(0);
            A base = carry + excl;
#pragma unroll
            for (int k = 0; k < SCAN_ITEMS; k++)
                if (b + k < len) orow[b + k] = sg_cu_convert<T>(base + p[k]);
            carry += __shfl_sync(0xffffffffu, incl, 31);
        }
    }
}

template <class T>
__global__ void __launch_bounds__(256)
    scan_cols(const T *x, T *o, int64_t outer, int64_t len, int64_t inner) {
    using A = scan_acc_t<T>;
    int64_t n = outer * inner, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += step) {
        int64_t q = u / inner, j = u - q * inner;
        int64_t at = q * len * inner + j;
        A       a = A(0);
        for (int64_t i = 0; i < len; i++, at += inner) {
            a += sg_cu_racc<A>(x[at]);
            o[at] = sg_cu_convert<T>(a);
        }
    }
}

/* Where columns alone are too few to fill the GPU, len is cut into nch chunks: the chunks'
 * totals (pass 1), their exclusive running sums per column (pass 2, in place), then each chunk
 * rescanned from its carry (pass 3). tot is [outer, nch, inner]. */
template <class T>
__global__ void __launch_bounds__(256)
    scan_chunk_totals(const T *x, scan_acc_t<T> *tot, int64_t outer, int64_t len, int64_t inner,
                      int64_t clen, int64_t nch) {
    using A = scan_acc_t<T>;
    int64_t n = outer * nch * inner, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += step) {
        int64_t j = u % inner, rest = u / inner, c = rest % nch, q = rest / nch;
        int64_t i0 = c * clen, i1 = i0 + clen < len ? i0 + clen : len;
        A       a = A(0);
        for (int64_t i = i0; i < i1; i++) a += sg_cu_racc<A>(x[(q * len + i) * inner + j]);
        tot[u] = a;
    }
}

template <class A>
__global__ void __launch_bounds__(256)
    scan_chunk_carries(A *tot, int64_t outer, int64_t inner, int64_t nch) {
    int64_t n = outer * inner, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += step) {
        int64_t j = u % inner, q = u / inner;
        A      *t = tot + q * nch * inner + j;
        A       run = A(0);
        for (int64_t c = 0; c < nch; c++) {
            A v = t[c * inner];
            t[c * inner] = run;
            run += v;
        }
    }
}

template <class T>
__global__ void __launch_bounds__(256)
    scan_chunk_apply(const T *x, T *o, const scan_acc_t<T> *tot, int64_t outer, int64_t len,
                     int64_t inner, int64_t clen, int64_t nch) {
    using A = scan_acc_t<T>;
    int64_t n = outer * nch * inner, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += step) {
        int64_t j = u % inner, rest = u / inner, c = rest % nch, q = rest / nch;
        int64_t i0 = c * clen, i1 = i0 + clen < len ? i0 + clen : len;
        A       a = tot[u];
        for (int64_t i = i0; i < i1; i++) {
            int64_t at = (q * len + i) * inner + j;
            a += sg_cu_racc<A>(x[at]);
            o[at] = sg_cu_convert<T>(a);
        }
    }
}

/* the scan along len of inner > 1 columns */
template <class T>
sg_status scan_columns(const T *x, T *o, int64_t outer, int64_t len, int64_t inner,
                       sg_device dev, cudaStream_t s) {
    using A = scan_acc_t<T>;
    int64_t cols = outer * inner, sm = sg_cu_sm_count();
    int64_t nch = 1;
    if (cols < sm * 1024) nch = std::min(sg_cu_ceil_div(sm * 2048, cols), sg_cu_ceil_div(len, 16));
    if (nch <= 1) {
        scan_cols<T><<<sg_cu_grid(cols, 1), SG_CU_BLOCK, 0, s>>>(x, o, outer, len, inner);
        return sg_cu_check("cumsum");
    }
    int64_t clen = sg_cu_ceil_div(len, nch);
    nch = sg_cu_ceil_div(len, clen);
    int64_t    bytes = cols * nch * (int64_t)sizeof(A);
    sg_tensor *tt = NULL;
    sg_status  st = sg_tensor_empty(&bytes, 1, SG_UINT8, dev, &tt);
    if (st) return st;
    A       *tot = static_cast<A *>(sg_tensor_data(tt));
    unsigned g = sg_cu_grid(cols * nch, 1);
    scan_chunk_totals<T><<<g, SG_CU_BLOCK, 0, s>>>(x, tot, outer, len, inner, clen, nch);
    scan_chunk_carries<A><<<sg_cu_grid(cols, 1), SG_CU_BLOCK, 0, s>>>(tot, outer, inner, nch);
    scan_chunk_apply<T><<<g, SG_CU_BLOCK, 0, s>>>(x, o, tot, outer, len, inner, clen, nch);
    st = sg_cu_check("cumsum");
    sg_tensor_release(tt); /* stream-ordered: freed after the kernels that use it */
    return st;
}

/* out (of self's shape, dtype r) = the running sums of self along dim (wrapped) */
sg_status cumsum_run(sg_tensor *self, int64_t dim, sg_dtype r, sg_tensor *out) {
    sg_status st;
    if (sg_dtype_is_complex(r) || (!sg_dtype_is_floating(r) && !sg_dtype_is_integral(r, false)))
        return sg_not_implemented("cumsum_out_cuda", r);
    if (self->device.type != SG_DEV_CUDA || out->device.type != SG_DEV_CUDA)
        return sg_error(SG_EINVAL, "cumsum: expected CUDA tensors");
    int64_t outer, len, inner;
    if ((st = sg_reduce_lines(self, dim, out, &outer, &len, &inner))) return st;
    if (sg_tensor_numel(self) == 0) return SG_OK;
    /* the input contiguous in the result's dtype; the output contiguous, and either the input
     * itself or apart from it */
    sg_tensor *x = NULL, *o = NULL;
    if ((st = sg_cast(self, r, &x))) return st;
    bool direct = sg_tensor_is_contiguous(out) &&
                  (out->storage != x->storage || out->offset == x->offset);
    if (direct) o = sg_tensor_retain(out);
    else st = sg_tensor_empty(self->sizes, self->ndim, r, self->device, &o);
    if (!st) {
        sg_cu_guard  guard(self->device);
        cudaStream_t s = sg_cu_stream();
        st = sg_cu_visit(r, SG_CU_ALL, "cumsum", [&](auto tt) {
            using T = typename decltype(tt)::type;
            const T *xp = static_cast<const T *>(sg_tensor_data(x));
            T       *op = static_cast<T *>(sg_tensor_data(o));
            if (inner > 1) return scan_columns<T>(xp, op, outer, len, inner, self->device, s);
            scan_rows<T><<<sg_cu_rgrid(sg_cu_ceil_div(outer, 8)), 256, 0, s>>>(xp, op, outer, len);
            return sg_cu_check("cumsum");
        });
        if (!st && !direct) st = sg_tensor_copy_(out, o);
    }
    sg_tensor_release(o);
    sg_tensor_release(x);
    return st;
}

sg_status cumsum_out(sg_keyset, sg_tensor *self, int64_t dim, const sg_dtype *dtype,
                     sg_tensor *out, sg_tensor **ret) {
    sg_status st = sg_reduce_cumsum_args(self, &dim, dtype, out, false);
    if (!st) st = cumsum_run(self, dim, dtype_of(out), out);
    return sg_reduce_give(st, out, ret);
}

/* in place: the result keeps self's dtype (a dtype argument must be it) */
sg_status cumsum_inplace(sg_keyset, sg_tensor *self, int64_t dim, const sg_dtype *dtype,
                         sg_tensor **ret) {
    sg_status st = sg_reduce_cumsum_args(self, &dim, dtype, self, true);
    if (!st) st = cumsum_run(self, dim, dtype_of(self), self);
    return sg_reduce_give(st, self, ret);
}

} // namespace

sg_status sg_cu_register_reduce_scan(void) {
    SG_CU_REG(aten_cumsum_out, cumsum_out);
    SG_CU_REG(aten_cumsum_, cumsum_inplace);
    return SG_OK;
}
