/* softmax.cu: _softmax.out and _log_softmax.out on CUDA (softmax.int and log_softmax.int are
 * composites over them, registered once by the CPU library).
 *
 * The input is made contiguous and seen as [outer, D, inner] with D the softmax dim. Where D is
 * innermost each row is one pass in registers (rows.cuh): load, max, sum of exp(x - max), write;
 * rows too long or misaligned for that walk global memory in three passes. Where D is not
 * innermost, each thread owns one column (consecutive threads reading consecutive addresses)
 * and walks it three times. float16/bfloat16 compute in float32, float64 in float64, exp with
 * the accurate expf/exp. half_to_float (a float16 input, float32 output) is supported, as on
 * aten's CUDA. */
#include "rows.cuh"
#include "sg_reduce_shape.h"

namespace {

__device__ __forceinline__ float sm_exp(float v) { return expf(v); }
__device__ __forceinline__ double sm_exp(double v) { return exp(v); }
__device__ __forceinline__ float sm_log(float v) { return logf(v); }
__device__ __forceinline__ double sm_log(double v) { return log(v); }

/* The row in registers: E elements per thread, in vectors of V; one warp or one block a row. */
template <bool LOG, class T, class O, int V, int E, bool WARP>
__global__ void __launch_bounds__(WARP ? SG_ROWS_WARP_THREADS : SG_ROWS_MAX_BLOCK)
    softmax_reg(const T *x, O *y, int64_t rows, int n) {
    using A = sg_acc_t<T>;
    constexpr int NV = E / V;
    __shared__ A part[2][32];
    int           turn = 0;
    const int     G = WARP ? 32 : (int)blockDim.x;
    const int     t = WARP ? (int)(threadIdx.x & 31) : (int)threadIdx.x;
    const int64_t per = WARP ? blockDim.x / 32 : 1;
    const int64_t step = (int64_t)gridDim.x * per;
    for (int64_t row = (int64_t)blockIdx.x * per + (WARP ? threadIdx.x / 32 : 0); row < rows;
         row += step) {
        const T *xr = x + row * n;
        O       *yr = y + row * n;
        A        v[E];
        A        m = -INFINITY;
#pragma unroll
        for (int j = 0; j < NV; j++) {
            int vi = j * G + t;
            if (vi * V < n) {
                sg_rows_load<T, V>(xr, vi, v + j * V);
#pragma unroll
                for (int k = 0; k < V; k++) m = sg_rows_max{}(m, v[j * V + k]);
            }
        }
        m = sg_rows_reduce<WARP>(m, sg_rows_max{}, part, turn);
        A s = 0;
#pragma unroll
        for (int j = 0; j < NV; j++) {
            if ((j * G + t) * V < n) {
#pragma unroll
                for (int k = 0; k < V; k++) {
                    A e = sm_exp(v[j * V + k] - m);
                    if constexpr (!LOG) v[j * V + k] = e;
                    s += e;
                }
            }
        }
        s = sg_rows_reduce<WARP>(s, sg_rows_sum{}, part, turn);
        /* log: (x - m) - log(s), not x - (m + log(s)), which would round away small
         * differences; softmax: times 1 / s, as the CPU's */
        const A c = LOG ? sm_log(s) : A(1) / s;
#pragma unroll
        for (int j = 0; j < NV; j++) {
            int vi = j * G + t;
            if (vi * V < n) {
                A o[V];
#pragma unroll
                for (int k = 0; k < V; k++)
                    o[k] = LOG ? (v[j * V + k] - m) - c : v[j * V + k] * c;
                sg_rows_store<O, V>(yr, vi, o);
            }
        }
    }
}

/* Any row length and alignment: three passes over the row in global memory. */
template <bool LOG, class T, class O, bool WARP>
__global__ void __launch_bounds__(WARP ? SG_ROWS_WARP_THREADS : SG_ROWS_MAX_BLOCK)
    softmax_loop(const T *x, O *y, int64_t rows, int64_t n) {
    using A = sg_acc_t<T>;
    __shared__ A part[2][32];
    int           turn = 0;
    const int     G = WARP ? 32 : (int)blockDim.x;
    const int     t = WARP ? (int)(threadIdx.x & 31) : (int)threadIdx.x;
    const int64_t per = WARP ? blockDim.x / 32 : 1;
    const int64_t step = (int64_t)gridDim.x * per;
    for (int64_t row = (int64_t)blockIdx.x * per + (WARP ? threadIdx.x / 32 : 0); row < rows;
         row += step) {
        const T *xr = x + row * n;
        O       *yr = y + row * n;
        A        m = -INFINITY, s = 0;
        for (int64_t i = t; i < n; i += G) m = sg_rows_max{}(m, sg_cu_convert<A>(xr[i]));
        m = sg_rows_reduce<WARP>(m, sg_rows_max{}, part, turn);
        for (int64_t i = t; i < n; i += G) s += sm_exp(sg_cu_convert<A>(xr[i]) - m);
        s = sg_rows_reduce<WARP>(s, sg_rows_sum{}, part, turn);
        const A c = LOG ? sm_log(s) : A(1) / s;
        for (int64_t i = t; i < n; i += G) {
            A d = sg_cu_convert<A>(xr[i]) - m;
            yr[i] = sg_cu_convert<O>(LOG ? d - c : sm_exp(d) * c);
        }
    }
}

/* The dim not innermost: one thread per (outer, inner) column, len elements inner apart. */
template <bool LOG, class T, class O>
__global__ void __launch_bounds__(SG_CU_BLOCK)
    softmax_cols(const T *x, O *y, int64_t outer, int64_t len, int64_t inner) {
    using A = sg_acc_t<T>;
    const int64_t cols = outer * inner, step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += step) {
        int64_t  o = c / inner, i = c - o * inner;
        const T *xc = x + o * len * inner + i;
        O       *yc = y + o * len * inner + i;
        A        m = -INFINITY, s = 0;
        for (int64_t k = 0; k < len; k++) m = sg_rows_max{}(m, sg_cu_convert<A>(xc[k * inner]));
        for (int64_t k = 0; k < len; k++) s += sm_exp(sg_cu_convert<A>(xc[k * inner]) - m);
        const A r = LOG ? sm_log(s) : A(1) / s;
        for (int64_t k = 0; k < len; k++) {
            A d = sg_cu_convert<A>(xc[k * inner]) - m;
            yc[k * inner] = sg_cu_convert<O>(LOG ? d - r : sm_exp(d) * r);
        }
    }
}

template <bool LOG, class T, class O>
sg_status softmax_launch(const void *xp, void *yp, int64_t outer, int64_t len, int64_t inner,
                         const char *op) {
    const T     *x = static_cast<const T *>(xp);
    O           *y = static_cast<O *>(yp);
    cudaStream_t s = sg_cu_stream();
    if (inner != 1) {
        softmax_cols<LOG, T, O><<<sg_cu_grid(outer * inner, 1), SG_CU_BLOCK, 0, s>>>(x, y, outer,
                                                                                    len, inner);
        return sg_cu_check(op);
    }
    constexpr int V = 16 / (int)sizeof(T);
    bool vec = (uintptr_t)x % (V * sizeof(T)) == 0 && (uintptr_t)y % (V * sizeof(O)) == 0;
    sg_rows_cfg c = sg_rows_pick(len, V, vec);
    unsigned    grid = sg_rows_grid(c, outer);
    return sg_rows_dispatch<V>(c, [&](auto e, auto w) {
        constexpr int  E = decltype(e)::value;
        constexpr bool WARP = decltype(w)::value;
        if constexpr (E == 0)
            softmax_loop<LOG, T, O, WARP><<<grid, c.threads, 0, s>>>(x, y, outer, len);
        else
            softmax_reg<LOG, T, O, V, E, WARP><<<grid, c.threads, 0, s>>>(x, y, outer, (int)len);
        return sg_cu_check(op);
    });
}

template <bool LOG>
sg_status softmax_run(sg_tensor *self, int64_t dim, bool half_to_float, sg_tensor *out) {
    const char *op = LOG ? "_log_softmax" : "_softmax";
    int64_t     d = dim;
    sg_dtype    xt = dtype_of(self), ot = half_to_float ? SG_FLOAT32 : xt;
    sg_status   st;
    if ((st = sg_check_wrap_dim(&d, self->ndim)) || (st = sg_check_out_dtype(out, ot))) return st;
    if (half_to_float && xt != SG_FLOAT16)
        return sg_error(SG_EINVAL, "conversion is supported for Half type only");
    if (self->device.type != SG_DEV_CUDA || !sg_device_eq(out->device, self->device))
        return sg_error(SG_EINVAL, "%s: expected the input and out on one CUDA device", op);
    /* as aten's: the dtype is the kernel's to refuse, and an empty input runs none */
    if (!sg_dtype_is_floating(xt) && sg_tensor_numel(self) != 0)
        return sg_error(SG_EUNSUPPORTED, "\"host_softmax\" not implemented for '%s'",
                        sg_dtype_c10_name(xt));
    sg_cu_guard guard(self->device);
    int64_t     outer, len, inner;
    if ((st = sg_reduce_lines(self, d, out, &outer, &len, &inner))) return st;
    if (sg_tensor_numel(self) == 0) return SG_OK;

    /* a contiguous input, and a contiguous output that is the input or apart from it (a row
     * is read whole before it is written, so in place is safe; a partial overlap is not) */
    sg_tensor *x = NULL, *o = NULL;
    if ((st = sg_tensor_contiguous(self, &x))) return st;
    bool direct = sg_tensor_is_contiguous(out) &&
                  (out->storage != x->storage || out->offset == x->offset);
    if (direct) o = sg_tensor_retain(out);
    else st = sg_tensor_empty(self->sizes, self->ndim, ot, self->device, &o);
    if (!st) {
        const void *xp = sg_tensor_data(x);
        void       *yp = sg_tensor_data(o);
        if (half_to_float) {
            st = softmax_launch<LOG, __half, float>(xp, yp, outer, len, inner, op);
        } else {
            st = sg_cu_visit(xt, SG_CU_FLOATS, "host_softmax", [&](auto tag) {
                using T = typename decltype(tag)::type;
                if constexpr (sg_cu_is_float<T>())
                    return softmax_launch<LOG, T, T>(xp, yp, outer, len, inner, op);
                else
                    return SG_OK; /* not reached: floats only */
            });
        }
        if (!st && !direct) st = sg_tensor_copy_(out, o);
    }
    sg_tensor_release(o);
    sg_tensor_release(x);
    return st;
}

sg_status softmax_out(sg_keyset ks, sg_tensor *self, int64_t dim, bool half_to_float,
                      sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_status st = softmax_run<false>(self, dim, half_to_float, out);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

sg_status log_softmax_out(sg_keyset ks, sg_tensor *self, int64_t dim, bool half_to_float,
                          sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_status st = softmax_run<true>(self, dim, half_to_float, out);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

} // namespace

extern "C" sg_status sg_cu_register_softmax(void) {
    SG_CU_REG(aten__softmax_out, softmax_out);
    SG_CU_REG(aten__log_softmax_out, log_softmax_out);
    return SG_OK;
}
