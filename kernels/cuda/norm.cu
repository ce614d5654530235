/* norm.cu: normalisation on CUDA: native_layer_norm (out, mean, rstd), _fused_rms_norm (out,
 * rstd) and native_group_norm (out, mean, rstd); layer_norm, rms_norm and group_norm are
 * composites over them, registered once by the CPU library. Also registers softmax.cu's ops.
 *
 * The semantics and result dtypes are the CPU kernels' (kernels/cpu/norm.c), the checks and
 * messages one copy with theirs (sg_norm_shape.h):
 *  - layer/group norm: biased variance from a second pass over the row (x - mean)^2, rstd =
 *    1 / sqrt(max(var, 0) + eps) (a NaN var kept: a row holding NaN gives NaN, as aten's
 *    CPU kernel's std::max does), y = (x - mean) * rstd * weight + bias; mean and rstd in the
 *    input's dtype, or float32 for a float16/bfloat16 input with float32 parameters. (The CPU
 *    computes x * rstd - rstd * mean; the same within rounding, but here fused multiply-adds
 *    would leave a residue of rounding where x == mean, so constant rows would not give 0.)
 *  - rms_norm: rstd = 1 / sqrt(mean(x^2) + eps), y = x * rstd, times the weight in the
 *    promoted type (float64 where the weight is float64 and the input is not), rounded to the
 *    input's dtype; rstd in the accumulation dtype; eps None is float32's (float64's) epsilon.
 * Accumulation in float32 (float64 for float64 inputs).
 *
 * Layer and RMS norms hold each row in registers where it fits (rows.cuh): one read, one
 * write. Longer or misaligned rows, and group norms (whose parameters change along the row),
 * walk the row in global memory once per pass. */
#include "rows.cuh"
#include "sg_norm_shape.h"

#include <float.h>
#include <stdio.h>

#include <type_traits>

namespace {

enum { LAYER, RMS, GROUP };

/* What a launch needs. Pointers are untyped here; the kernels know the element types. */
struct norm_args {
    const void *x;
    void       *y;
    const void *w, *b;       /* NULL where absent */
    void       *mean, *rstd; /* mean NULL for RMS */
    sg_dtype    stat;        /* dtype of mean and rstd (layer, group) */
    int64_t     rows, n;     /* rows of n elements */
    int64_t     groups, hxw; /* group norm: channels per group is n / hxw */
    double      eps;
};

__device__ __forceinline__ float nm_rsqrt(float v) { return 1.0f / sqrtf(v); }
__device__ __forceinline__ double nm_rsqrt(double v) { return 1.0 / sqrt(v); }

/* The type the weight multiplies in: float64 for a float64 weight beside float32 arithmetic. */
template <class A, class W>
using mul_t = std::conditional_t<std::is_same<W, double>::value, double, A>;

/* Layer or RMS norm, the row in registers: E elements per thread in vectors of V. */
template <int KIND, class T, class W, int V, int E, bool WARP>
__global__ void __launch_bounds__(WARP ? SG_ROWS_WARP_THREADS : SG_ROWS_MAX_BLOCK)
    norm_reg(const norm_args a) {
    using A = sg_acc_t<T>;
    using M = mul_t<A, W>;
    constexpr int NV = E / V;
    __shared__ A part[2][32];
    int           turn = 0;
    const T      *x = static_cast<const T *>(a.x);
    T            *y = static_cast<T *>(a.y);
    const W      *w = static_cast<const W *>(a.w), *b = static_cast<const W *>(a.b);
    const int     n = (int)a.n, G = WARP ? 32 : (int)blockDim.x;
    const int     t = WARP ? (int)(threadIdx.x & 31) : (int)threadIdx.x;
    const A       eps = (A)a.eps;
    const int64_t per = WARP ? blockDim.x / 32 : 1;
    const int64_t step = (int64_t)gridDim.x * per;
    for (int64_t row = (int64_t)blockIdx.x * per + (WARP ? threadIdx.x / 32 : 0); row < a.rows;
         row += step) {
        const T *xr = x + row * n;
        T       *yr = y + row * n;
        A        v[E];
        A        s = 0;
#pragma unroll
        for (int j = 0; j < NV; j++) {
            int vi = j * G + t;
            if (vi * V < n) {
                sg_rows_load<T, V>(xr, vi, v + j * V);
#pragma unroll
                for (int k = 0; k < V; k++) s += KIND == RMS ? v[j * V + k] * v[j * V + k]
                                                              : v[j * V + k];
            }
        }
        s = sg_rows_reduce<WARP>(s, sg_rows_sum{}, part, turn);
        A mu = 0, rs;
        if constexpr (KIND == RMS) {
            rs = nm_rsqrt(s / (A)n + eps);
        } else {
            mu = s / (A)n;
            A q = 0;
#pragma unroll
            for (int j = 0; j < NV; j++) {
                if ((j * G + t) * V < n) {
#pragma unroll
                    for (int k = 0; k < V; k++) {
                        A d = v[j * V + k] - mu;
                        q += d * d;
                    }
                }
            }
            q = sg_rows_reduce<WARP>(q, sg_rows_sum{}, part, turn);
            A var = q / (A)n;
            rs = nm_rsqrt((var < 0 ? A(0) : var) + eps);
        }
        if (t == 0) {
            if constexpr (KIND == RMS) {
                static_cast<A *>(a.rstd)[row] = rs;
            } else {
                sg_rows_put_stat(a.mean, a.stat, row, mu);
                sg_rows_put_stat(a.rstd, a.stat, row, rs);
            }
        }
#pragma unroll
        for (int j = 0; j < NV; j++) {
            int vi = j * G + t;
            if (vi * V < n) {
                M o[V];
                if constexpr (KIND == RMS) {
#pragma unroll
                    for (int k = 0; k < V; k++) o[k] = (M)(v[j * V + k] * rs);
                    if (w) {
                        M g[V];
                        sg_rows_load_params<W, V>(w, (int64_t)vi * V, g);
#pragma unroll
                        for (int k = 0; k < V; k++) o[k] *= g[k];
                    }
                } else {
#pragma unroll
                    for (int k = 0; k < V; k++) o[k] = (v[j * V + k] - mu) * rs;
                    if (w) {
                        A g[V];
                        sg_rows_load_params<W, V>(w, (int64_t)vi * V, g);
#pragma unroll
                        for (int k = 0; k < V; k++) o[k] *= g[k];
                    }
                    if (b) {
                        A c[V];
                        sg_rows_load_params<W, V>(b, (int64_t)vi * V, c);
#pragma unroll
                        for (int k = 0; k < V; k++) o[k] += c[k];
                    }
                }
                sg_rows_store<T, V>(yr, vi, o);
            }
        }
    }
}

/* Any norm, any row length and alignment: the row walked in global memory once per pass. */
template <int KIND, class T, class W, bool WARP>
__global__ void __launch_bounds__(WARP ? SG_ROWS_WARP_THREADS : SG_ROWS_MAX_BLOCK)
    norm_loop(const norm_args a) {
    using A = sg_acc_t<T>;
    using M = mul_t<A, W>;
    __shared__ A part[2][32];
    int           turn = 0;
    const T      *x = static_cast<const T *>(a.x);
    T            *y = static_cast<T *>(a.y);
    const W      *w = static_cast<const W *>(a.w), *b = static_cast<const W *>(a.b);
    const int64_t n = a.n;
    const int     G = WARP ? 32 : (int)blockDim.x;
    const int     t = WARP ? (int)(threadIdx.x & 31) : (int)threadIdx.x;
    const A       eps = (A)a.eps;
    const int64_t per = WARP ? blockDim.x / 32 : 1;
    const int64_t step = (int64_t)gridDim.x * per;
    for (int64_t row = (int64_t)blockIdx.x * per + (WARP ? threadIdx.x / 32 : 0); row < a.rows;
         row += step) {
        const T *xr = x + row * n;
        T       *yr = y + row * n;
        A        s = 0;
        for (int64_t i = t; i < n; i += G) {
            A v = sg_cu_convert<A>(xr[i]);
            s += KIND == RMS ? v * v : v;
        }
        s = sg_rows_reduce<WARP>(s, sg_rows_sum{}, part, turn);
        A mu = 0, rs;
        if constexpr (KIND == RMS) {
            rs = nm_rsqrt(s / (A)n + eps);
            if (t == 0) static_cast<A *>(a.rstd)[row] = rs;
            for (int64_t i = t; i < n; i += G) {
                M o = (M)(sg_cu_convert<A>(xr[i]) * rs);
                if (w) o *= sg_cu_convert<M>(w[i]);
                yr[i] = sg_cu_convert<T>(o);
            }
        } else {
            /* a group norm of empty groups has mean 0 and variance 0, as on the CPU; a layer
             * norm's 0 / 0 is NaN, as there */
            if (KIND == LAYER || n > 0) mu = s / (A)n;
            A q = 0;
            for (int64_t i = t; i < n; i += G) {
                A d = sg_cu_convert<A>(xr[i]) - mu;
                q += d * d;
            }
            q = sg_rows_reduce<WARP>(q, sg_rows_sum{}, part, turn);
            A var = (KIND == LAYER || n > 0) ? q / (A)n : A(0);
            rs = nm_rsqrt((var < 0 ? A(0) : var) + eps);
            if (t == 0) {
                sg_rows_put_stat(a.mean, a.stat, row, mu);
                sg_rows_put_stat(a.rstd, a.stat, row, rs);
            }
            if constexpr (KIND == LAYER) {
                for (int64_t i = t; i < n; i += G) {
                    A o = (sg_cu_convert<A>(xr[i]) - mu) * rs;
                    if (w) o *= sg_cu_convert<A>(w[i]);
                    if (b) o += sg_cu_convert<A>(b[i]);
                    yr[i] = sg_cu_convert<T>(o);
                }
            } else {
                /* channel c0 + i / hxw of the group: its scale rstd * weight and its bias */
                const int64_t c0 = (row % a.groups) * (n / a.hxw);
                for (int64_t i = t; i < n; i += G) {
                    int64_t c = c0 + i / a.hxw;
                    A       sc = rs * (w ? sg_cu_convert<A>(w[c]) : A(1));
                    A       sf = b ? sg_cu_convert<A>(b[c]) : A(0);
                    yr[i] = sg_cu_convert<T>((sg_cu_convert<A>(xr[i]) - mu) * sc + sf);
                }
            }
        }
    }
}

/* Launches KIND over a's rows with T the input's element type and W the parameters'. */
template <int KIND, class T, class W> sg_status norm_launch(const norm_args &a, const char *op) {
    cudaStream_t  s = sg_cu_stream();
    constexpr int V = 16 / (int)sizeof(T);
    bool vec = KIND != GROUP && sg_rows_aligned(a.x) && sg_rows_aligned(a.y) &&
               sg_rows_aligned(a.w) && sg_rows_aligned(a.b);
    sg_rows_cfg c = sg_rows_pick(a.n, V, vec);
    unsigned    grid = sg_rows_grid(c, a.rows);
    return sg_rows_dispatch<V>(c, [&](auto e, auto wp) {
        constexpr int  E = decltype(e)::value;
        constexpr bool WARP = decltype(wp)::value;
        if constexpr (E == 0 || KIND == GROUP)
            norm_loop<KIND, T, W, WARP><<<grid, c.threads, 0, s>>>(a);
        else
            norm_reg<KIND, T, W, V, E, WARP><<<grid, c.threads, 0, s>>>(a);
        return sg_cu_check(op);
    });
}

/* The parameters' element type as launched: the input's own (SAME), float32 beside a 16-bit
 * input (FLOAT), or float64 beside a float32 or 16-bit one (DOUBLE, rms_norm only). */
enum wkind { W_SAME, W_FLOAT, W_DOUBLE };

template <int KIND>
sg_status norm_dispatch(sg_dtype xt, wkind wk, const norm_args &a, const char *op,
                        const char *name) {
    return sg_cu_visit(xt, SG_CU_FLOATS, name, [&](auto tag) -> sg_status {
        using T = typename decltype(tag)::type;
        if constexpr (sg_cu_is_float<T>()) {
            if (wk == W_SAME) return norm_launch<KIND, T, T>(a, op);
            if constexpr (sg_cu_is_half<T>())
                if (wk == W_FLOAT) return norm_launch<KIND, T, float>(a, op);
            if constexpr (KIND == RMS && !std::is_same<T, double>::value)
                if (wk == W_DOUBLE) return norm_launch<KIND, T, double>(a, op);
        }
        return sg_error(SG_EUNSUPPORTED, "%s: no kernel for these parameter types", op);
    });
}

/* ---- operands and results -------------------------------------------------------------------- */

/* Every tensor given on the input's CUDA device. */
sg_status check_devices(const char *op, const sg_tensor *input, const sg_tensor *w,
                        const sg_tensor *b) {
    if (input->device.type != SG_DEV_CUDA || (w && !sg_device_eq(w->device, input->device)) ||
        (b && !sg_device_eq(b->device, input->device)))
        return sg_error(SG_EINVAL, "%s: expected the input, weight and bias on one CUDA device",
                        op);
    return SG_OK;
}

/* Contiguous copies (or new references) of the input and the parameters given. */
struct operands {
    sg_tensor *x = NULL, *w = NULL, *b = NULL;
    ~operands() {
        sg_tensor_release(x);
        sg_tensor_release(w);
        sg_tensor_release(b);
    }
};

sg_status contiguous_or_null(sg_tensor *t, sg_tensor **out) {
    *out = NULL;
    return t ? sg_tensor_contiguous(t, out) : SG_OK;
}

/* The results: released on failure, handed over on success. */
struct results {
    sg_tensor *t[3] = {NULL, NULL, NULL};
    ~results() {
        for (sg_tensor *r : t) sg_tensor_release(r);
    }
    void give(sg_tensor **r0, sg_tensor **r1, sg_tensor **r2) {
        *r0 = t[0], t[0] = NULL;
        *r1 = t[1], t[1] = NULL;
        if (r2) *r2 = t[2], t[2] = NULL;
    }
};

void *data_or_null(const sg_tensor *t) { return t ? sg_tensor_data(t) : NULL; }

/* ---- native_layer_norm ----------------------------------------------------------------------- */

sg_status native_layer_norm_cuda(sg_keyset ks, sg_tensor *input, sg_int_list ns, sg_tensor *weight,
                                 sg_tensor *bias, double eps, sg_tensor **ret0, sg_tensor **ret1,
                                 sg_tensor **ret2) {
    (void)ks;
    const char *op = "native_layer_norm";
    int64_t     M, N, stat[SG_MAX_DIMS];
    sg_dtype    pt = SG_FLOAT32, xt = dtype_of(input);
    sg_status   st;
    if ((st = sg_norm_layer_checks(input, ns, weight, bias, &pt, &M, &N, stat)) ||
        (st = check_devices(op, input, weight, bias)))
        return st;
    sg_cu_guard guard(input->device);
    /* mean and rstd in the accumulation dtype, as aten's CUDA kernel keeps them (its CPU one
     * uses the parameters' dtype) */
    sg_dtype acc = xt == SG_FLOAT64 ? SG_FLOAT64 : SG_FLOAT32;
    operands o;
    results  r;
    if ((st = sg_tensor_contiguous(input, &o.x)) || (st = contiguous_or_null(weight, &o.w)) ||
        (st = contiguous_or_null(bias, &o.b)) ||
        (st = sg_tensor_empty(input->sizes, input->ndim, xt, input->device, &r.t[0])) ||
        (st = sg_tensor_empty(stat, input->ndim, acc, input->device, &r.t[1])) ||
        (st = sg_tensor_empty(stat, input->ndim, acc, input->device, &r.t[2])))
        return st;
    if (M > 0) {
        norm_args a = {};
        a.x = sg_tensor_data(o.x), a.y = sg_tensor_data(r.t[0]);
        a.w = data_or_null(o.w), a.b = data_or_null(o.b);
        a.mean = sg_tensor_data(r.t[1]), a.rstd = sg_tensor_data(r.t[2]);
        a.stat = acc, a.rows = M, a.n = N, a.eps = eps;
        wkind wk = (weight || bias) && pt != xt ? W_FLOAT : W_SAME;
        if ((st = norm_dispatch<LAYER>(xt, wk, a, op, "LayerNormKernelImpl"))) return st;
    }
    r.give(ret0, ret1, ret2);
    return SG_OK;
}

/* ---- _fused_rms_norm ------------------------------------------------------------------------- */

sg_status fused_rms_norm_cuda(sg_keyset ks, sg_tensor *input, sg_int_list ns, sg_tensor *weight,
                              const double *eps, sg_tensor **ret0, sg_tensor **ret1) {
    (void)ks;
    const char *op = "_fused_rms_norm";
    int64_t     M, N, stat[SG_MAX_DIMS];
    sg_dtype    xt = dtype_of(input);
    sg_status   st;
    if ((st = sg_norm_rms_checks(input, ns, weight, &M, &N, stat)) ||
        (st = check_devices(op, input, weight, NULL)))
        return st;
    sg_cu_guard guard(input->device);
    sg_dtype    acc = xt == SG_FLOAT64 ? SG_FLOAT64 : SG_FLOAT32;
    /* the weight as it multiplies: its own dtype where that is the input's, float32 beside a
     * 16-bit input, float64 where it is float64 (aten's promotion); otherwise cast to the
     * accumulation dtype, as the CPU's */
    wkind    wk = W_SAME;
    operands o;
    results  r;
    if ((st = sg_tensor_contiguous(input, &o.x))) return st;
    if (weight) {
        sg_dtype wt = dtype_of(weight);
        if (wt == xt) wk = W_SAME;
        else if (wt == SG_FLOAT64) wk = W_DOUBLE, wt = SG_FLOAT64;
        else if (acc == SG_FLOAT32) wk = xt == SG_FLOAT32 ? W_SAME : W_FLOAT, wt = SG_FLOAT32;
        else wk = W_SAME, wt = SG_FLOAT64;
        if ((st = sg_cast(weight, wt, &o.w))) return st;
    }
    if ((st = sg_tensor_empty(input->sizes, input->ndim, xt, input->device, &r.t[0])) ||
        (st = sg_tensor_empty(stat, input->ndim, acc, input->device, &r.t[1])))
        return st;
    if (M > 0) {
        norm_args a = {};
        a.x = sg_tensor_data(o.x), a.y = sg_tensor_data(r.t[0]);
        a.w = data_or_null(o.w), a.rstd = sg_tensor_data(r.t[1]);
        a.stat = acc, a.rows = M, a.n = N;
        a.eps = eps ? (acc == SG_FLOAT32 ? (double)(float)*eps : *eps)
                    : (acc == SG_FLOAT32 ? (double)FLT_EPSILON : DBL_EPSILON);
        if ((st = norm_dispatch<RMS>(xt, wk, a, op, "rms_norm"))) return st;
    }
    r.give(ret0, ret1, NULL);
    return SG_OK;
}

/* ---- native_group_norm ----------------------------------------------------------------------- */

sg_status native_group_norm_cuda(sg_keyset ks, sg_tensor *input, sg_tensor *weight,
                                 sg_tensor *bias, int64_t N, int64_t C, int64_t HxW, int64_t group,
                                 double eps, sg_tensor **ret0, sg_tensor **ret1,
                                 sg_tensor **ret2) {
    (void)ks;
    const char *op = "native_group_norm";
    sg_dtype    pt = SG_FLOAT32, xt = dtype_of(input);
    sg_status   st;
    if ((st = sg_norm_group_checks(input, weight, bias, N, C, HxW, group, &pt)) ||
        (st = check_devices(op, input, weight, bias)))
        return st;
    sg_cu_guard guard(input->device);
    int64_t     stat[2] = {N, group};
    operands    o;
    results     r;
    if ((st = sg_tensor_contiguous(input, &o.x)) || (st = contiguous_or_null(weight, &o.w)) ||
        (st = contiguous_or_null(bias, &o.b)) ||
        (st = sg_tensor_empty(input->sizes, input->ndim, xt, input->device, &r.t[0])) ||
        (st = sg_tensor_empty(stat, 2, pt, input->device, &r.t[1])) ||
        (st = sg_tensor_empty(stat, 2, pt, input->device, &r.t[2])))
        return st;
    if (N > 0) {
        norm_args a = {};
        a.x = sg_tensor_data(o.x), a.y = sg_tensor_data(r.t[0]);
        a.w = data_or_null(o.w), a.b = data_or_null(o.b);
        a.mean = sg_tensor_data(r.t[1]), a.rstd = sg_tensor_data(r.t[2]);
        a.stat = pt, a.rows = N * group, a.n = (C / group) * HxW;
        a.groups = group, a.hxw = HxW > 0 ? HxW : 1, a.eps = eps;
        wkind wk = (weight || bias) && pt != xt ? W_FLOAT : W_SAME;
        if ((st = norm_dispatch<GROUP>(xt, wk, a, op, "GroupNormKernelImpl"))) return st;
    }
    r.give(ret0, ret1, ret2);
    return SG_OK;
}

} // namespace

extern "C" sg_status sg_cu_register_norm(void) {
    SG_CU_REG(aten_native_layer_norm, native_layer_norm_cuda);
    SG_CU_REG(aten__fused_rms_norm, fused_rms_norm_cuda);
    SG_CU_REG(aten_native_group_norm, native_group_norm_cuda);
    return sg_cu_register_softmax();
}
