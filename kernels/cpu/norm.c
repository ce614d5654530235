/* norm.c: normalisation on the CPU: native_layer_norm (out, mean, rstd) and layer_norm over it,
 * native_group_norm and group_norm over it, and rms_norm over _fused_rms_norm.
 *
 * Each kernel walks rows (a layer norm's trailing N elements, a group norm's (C/G) * HxW
 * elements, an RMS norm's trailing N), in parallel where the work is large. A row is widened
 * into a per-thread buffer of the accumulation type, float32 (float64 for float64 inputs),
 * its statistics are pairwise sums there, and the result is rounded once on the way out.
 *
 * Semantics follow PyTorch 2.11's CPU kernels:
 *  - layer/group norm: biased variance, rstd = 1 / sqrt(max(var, 0) + eps) (std::max's: a NaN
 *    var stays NaN), the output in the input's dtype, mean and rstd in the input's dtype, or
 *    float32 for a float16/bfloat16 input with float32 weight and bias (aten's mixed types);
 *    mean/rstd of a layer norm are
 *    shaped input.shape[:axis] + [1] * len(normalized_shape), of a group norm [N, G].
 *  - rms_norm is aten's rms_norm_composite: x widened to float32 (float64 for float64),
 *    rstd = rsqrt(mean(x^2) + eps), y = x * rstd, then * weight in the promoted type, then
 *    rounded to the input's dtype. eps None is numeric_limits<opmath>::epsilon(): float32's
 *    for float16/bfloat16/float32 (so float16 uses 2^-23, not finfo(float16).eps), float64's
 *    for float64. _fused_rms_norm also returns rstd (opmath dtype, reduced dims kept).
 *  - the same argument checks and messages as aten. */
#include "cpu.h"
#include "sg_norm_shape.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- small helpers --------------------------------------------------------------------------- */

static int max_threads(void) {
#ifdef _OPENMP
    return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
    return 1;
#endif
}

static int thread_num(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* A parallel loop where the local `par` says the work is worth threads, on at most `nthr`
 * threads (the per-thread buffers there are). */
#ifdef _OPENMP
#define PAR_FOR _Pragma("omp parallel for schedule(static) if (par) num_threads(nthr)")
#else
#define PAR_FOR
#endif

enum { GRAIN = 32768 };

/* ---- rows in the accumulation type ------------------------------------------------------------
 * load/store convert a contiguous run between a floating dtype and ACC; psum is a pairwise sum
 * (error growing with log n rather than n); psq sums squares of (x - c). */

/* one case of load_ and store_ per floating dtype, from the dtype table */
#define LOAD_CASE(NAME, NUM, KIND, SIZE, CTYPE, SUF, ...)                                     \
    case SG_##NAME:                                                                           \
        for (int64_t i = 0; i < n; i++)                                                       \
            d[i] = (acc)SG_REAL_VALUE(KIND, SUF, ((const CTYPE *)p)[i]);                      \
        break;
#define STORE_CASE(NAME, NUM, KIND, SIZE, CTYPE, SUF, ...)                                    \
    case SG_##NAME:                                                                           \
        for (int64_t i = 0; i < n; i++)                                                       \
            ((CTYPE *)p)[i] = SG_REAL_STORE(KIND, SUF, CTYPE, s[i]);                          \
        break;

#define DEF_ROWS(ACC, SUF)                                                                    \
    static void load_##SUF(const char *p, sg_dtype t, int64_t n, ACC *d) {                    \
        typedef ACC acc;                                                                      \
        switch (t) {                                                                          \
            SG_DTYPES_FLOATING(LOAD_CASE)                                                     \
        default: break;                                                                       \
        }                                                                                     \
    }                                                                                         \
    static void store_##SUF(char *p, sg_dtype t, int64_t n, const ACC *s) {                   \
        switch (t) {                                                                          \
            SG_DTYPES_FLOATING(STORE_CASE)                                                    \
        default: break;                                                                       \
        }                                                                                     \
    }                                                                                         \
    static ACC psum_##SUF(const ACC *x, int64_t n) {                                          \
        if (n > 128) return psum_##SUF(x, n / 2) + psum_##SUF(x + n / 2, n - n / 2);          \
        ACC s[4] = {0, 0, 0, 0};                                                              \
        int64_t i = 0;                                                                        \
        for (; i + 4 <= n; i += 4)                                                            \
            s[0] += x[i], s[1] += x[i + 1], s[2] += x[i + 2], s[3] += x[i + 3];               \
        for (; i < n; i++) s[0] += x[i];                                                      \
        return (s[0] + s[1]) + (s[2] + s[3]);                                                 \
    }                                                                                         \
    static ACC psq_##SUF(const ACC *x, int64_t n, ACC c) {                                    \
        if (n > 128) return psq_##SUF(x, n / 2, c) + psq_##SUF(x + n / 2, n - n / 2, c);      \
        ACC s[4] = {0, 0, 0, 0};                                                              \
        int64_t i = 0;                                                                        \
        for (; i + 4 <= n; i += 4) {                                                          \
            ACC d0 = x[i] - c, d1 = x[i + 1] - c, d2 = x[i + 2] - c, d3 = x[i + 3] - c;       \
            s[0] += d0 * d0, s[1] += d1 * d1, s[2] += d2 * d2, s[3] += d3 * d3;               \
        }                                                                                     \
        for (; i < n; i++) s[0] += (x[i] - c) * (x[i] - c);                                   \
        return (s[0] + s[1]) + (s[2] + s[3]);                                                 \
    }
DEF_ROWS(float, f)
DEF_ROWS(double, d)

/* The parameters of a norm as ACC arrays (NULL where absent), and per-thread row buffers. */
typedef struct norm_work {
    sg_tensor *x;        /* the input, contiguous */
    sg_tensor *g, *b;    /* weight and bias cast to the accumulation dtype, contiguous */
    void      *scratch;  /* nthr rows of the accumulation type */
    int        nthr;
} norm_work;

static void work_free(norm_work *w) {
    sg_tensor_release(w->x);
    sg_tensor_release(w->g);
    sg_tensor_release(w->b);
    free(w->scratch);
}

static sg_status work_init(norm_work *w, sg_tensor *input, sg_tensor *weight, sg_tensor *bias,
                           sg_dtype acc, sg_dtype wacc, int64_t row) {
    sg_status st;
    memset(w, 0, sizeof *w);
    if ((st = sg_tensor_contiguous(input, &w->x)) ||
        (weight && (st = sg_cast(weight, wacc, &w->g))) ||
        (bias && (st = sg_cast(bias, acc, &w->b))))
        return work_free(w), st;
    w->nthr = max_threads();
    size_t n = (size_t)w->nthr * (size_t)(row > 0 ? row : 1) * sg_dtype_size(acc);
    if (!(w->scratch = malloc(n))) {
        work_free(w);
        return sg_error(SG_ENOMEM, "norm: out of memory for %zu bytes of scratch", n);
    }
    return SG_OK;
}

static const void *data_or_null(const sg_tensor *t) { return t ? sg_tensor_data(t) : NULL; }

/* ---- native_layer_norm ----------------------------------------------------------------------- */

#define DEF_LAYER_NORM(ACC, SUF)                                                              \
    static void layer_norm_##SUF(const char *x, sg_dtype xt, char *y, char *mean, char *rstd, \
                                 sg_dtype pt, const ACC *g, const ACC *b, int64_t M,         \
                                 int64_t N, ACC eps, ACC *scratch, int nthr) {               \
        size_t xs = sg_dtype_size(xt), ps = sg_dtype_size(pt);                                \
        bool   par = M > 1 && M * N > GRAIN;                                                  \
        (void)par, (void)nthr;                                                                \
        PAR_FOR                                                                               \
        for (int64_t r = 0; r < M; r++) {                                                     \
            ACC *row = scratch + (int64_t)thread_num() * N;                                   \
            load_##SUF(x + (size_t)(r * N) * xs, xt, N, row);                                 \
            ACC mu = psum_##SUF(row, N) / (ACC)N;                                             \
            ACC var = psq_##SUF(row, N, mu) / (ACC)N;                                         \
            ACC rs = (ACC)1 / (ACC)sqrt((double)((var < 0 ? 0 : var) + eps));                 \
            ACC sh = -rs * mu;                                                                \
            for (int64_t j = 0; j < N; j++)                                                   \
                row[j] = (row[j] * rs + sh) * (g ? g[j] : (ACC)1) + (b ? b[j] : (ACC)0);      \
            store_##SUF(y + (size_t)(r * N) * xs, xt, N, row);                                \
            store_##SUF(mean + (size_t)r * ps, pt, 1, &mu);                                   \
            store_##SUF(rstd + (size_t)r * ps, pt, 1, &rs);                                   \
        }                                                                                     \
    }
DEF_LAYER_NORM(float, f)
DEF_LAYER_NORM(double, d)

static sg_status native_layer_norm_cpu(sg_keyset ks, sg_tensor *input, sg_int_list ns,
                                       sg_tensor *weight, sg_tensor *bias, double eps,
                                       sg_tensor **ret0, sg_tensor **ret1, sg_tensor **ret2) {
    (void)ks;
    int64_t   M, N, stat[SG_MAX_DIMS];
    sg_dtype  pt = SG_FLOAT32, xt = dtype_of(input);
    sg_status st = sg_norm_layer_checks(input, ns, weight, bias, &pt, &M, &N, stat);
    if (st) return st;
    sg_dtype   acc = xt == SG_FLOAT64 ? SG_FLOAT64 : SG_FLOAT32;
    sg_tensor *y = NULL, *mean = NULL, *rstd = NULL;
    norm_work  w;
    if ((st = work_init(&w, input, weight, bias, acc, acc, N))) return st;
    if ((st = sg_tensor_empty(input->sizes, input->ndim, xt, SG_CPU, &y)) ||
        (st = sg_tensor_empty(stat, input->ndim, pt, SG_CPU, &mean)) ||
        (st = sg_tensor_empty(stat, input->ndim, pt, SG_CPU, &rstd)))
        goto fail;
    if (M > 0) {
        if (acc == SG_FLOAT64)
            layer_norm_d(sg_tensor_data(w.x), xt, sg_tensor_data(y), sg_tensor_data(mean),
                         sg_tensor_data(rstd), pt, data_or_null(w.g), data_or_null(w.b), M, N,
                         eps, w.scratch, w.nthr);
        else
            layer_norm_f(sg_tensor_data(w.x), xt, sg_tensor_data(y), sg_tensor_data(mean),
                         sg_tensor_data(rstd), pt, data_or_null(w.g), data_or_null(w.b), M, N,
                         (float)eps, w.scratch, w.nthr);
    }
    work_free(&w);
    *ret0 = y, *ret1 = mean, *ret2 = rstd;
    return SG_OK;
fail:
    work_free(&w);
    sg_tensor_release(y);
    sg_tensor_release(mean);
    sg_tensor_release(rstd);
    return st;
}

static sg_status layer_norm_fn(sg_keyset ks, sg_tensor *input, sg_int_list ns, sg_tensor *weight,
                               sg_tensor *bias, double eps, bool cudnn_enable, sg_tensor **ret) {
    (void)ks, (void)cudnn_enable;
    sg_tensor *mean = NULL, *rstd = NULL;
    sg_status  st = aten_native_layer_norm(input, ns, weight, bias, eps, ret, &mean, &rstd);
    sg_tensor_release(mean);
    sg_tensor_release(rstd);
    return st;
}

/* ---- native_group_norm ----------------------------------------------------------------------- */

#define DEF_GROUP_NORM(ACC, SUF)                                                              \
    static void group_norm_##SUF(const char *x, sg_dtype xt, char *y, char *mean, char *rstd, \
                                 sg_dtype pt, const ACC *g, const ACC *b, int64_t N,         \
                                 int64_t C, int64_t HxW, int64_t G, ACC eps, ACC *scratch, \
                                 int nthr) {                                                 \
        size_t  xs = sg_dtype_size(xt), ps = sg_dtype_size(pt);                               \
        int64_t D = C / G, len = D * HxW, rows = N * G;                                       \
        bool    par = rows > 1 && rows * len > GRAIN;                                         \
        (void)par, (void)nthr;                                                                \
        PAR_FOR                                                                               \
        for (int64_t r = 0; r < rows; r++) {                                                  \
            ACC *row = scratch + (int64_t)thread_num() * len;                                 \
            load_##SUF(x + (size_t)(r * len) * xs, xt, len, row);                             \
            ACC mu = len ? psum_##SUF(row, len) / (ACC)len : (ACC)0;                          \
            ACC var = len ? psq_##SUF(row, len, mu) / (ACC)len : (ACC)0;                      \
            ACC rs = (ACC)1 / (ACC)sqrt((double)((var < 0 ? 0 : var) + eps));                 \
            int64_t c0 = (r % G) * D;                                                         \
            for (int64_t d = 0; d < D; d++) {                                                 \
                ACC  sc = rs * (g ? g[c0 + d] : (ACC)1);                                      \
                ACC  sh = -sc * mu + (b ? b[c0 + d] : (ACC)0);                                \
                ACC *p = row + d * HxW;                                                       \
                for (int64_t j = 0; j < HxW; j++) p[j] = p[j] * sc + sh;                      \
            }                                                                                 \
            store_##SUF(y + (size_t)(r * len) * xs, xt, len, row);                            \
            store_##SUF(mean + (size_t)r * ps, pt, 1, &mu);                                   \
            store_##SUF(rstd + (size_t)r * ps, pt, 1, &rs);                                   \
        }                                                                                     \
    }
DEF_GROUP_NORM(float, f)
DEF_GROUP_NORM(double, d)

static sg_status native_group_norm_cpu(sg_keyset ks, sg_tensor *input, sg_tensor *weight,
                                       sg_tensor *bias, int64_t N, int64_t C, int64_t HxW,
                                       int64_t group, double eps, sg_tensor **ret0,
                                       sg_tensor **ret1, sg_tensor **ret2) {
    (void)ks;
    sg_dtype  pt = SG_FLOAT32, xt = dtype_of(input);
    sg_status st = sg_norm_group_checks(input, weight, bias, N, C, HxW, group, &pt);
    if (st) return st;
    sg_dtype   acc = xt == SG_FLOAT64 ? SG_FLOAT64 : SG_FLOAT32;
    int64_t    stat[2] = {N, group};
    sg_tensor *y = NULL, *mean = NULL, *rstd = NULL;
    norm_work  w;
    if ((st = work_init(&w, input, weight, bias, acc, acc, (C / group) * HxW))) return st;
    if ((st = sg_tensor_empty(input->sizes, input->ndim, xt, SG_CPU, &y)) ||
        (st = sg_tensor_empty(stat, 2, pt, SG_CPU, &mean)) ||
        (st = sg_tensor_empty(stat, 2, pt, SG_CPU, &rstd)))
        goto fail;
    if (N > 0) {
        if (acc == SG_FLOAT64)
            group_norm_d(sg_tensor_data(w.x), xt, sg_tensor_data(y), sg_tensor_data(mean),
                         sg_tensor_data(rstd), pt, data_or_null(w.g), data_or_null(w.b), N, C,
                         HxW, group, eps, w.scratch, w.nthr);
        else
            group_norm_f(sg_tensor_data(w.x), xt, sg_tensor_data(y), sg_tensor_data(mean),
                         sg_tensor_data(rstd), pt, data_or_null(w.g), data_or_null(w.b), N, C,
                         HxW, group, (float)eps, w.scratch, w.nthr);
    }
    work_free(&w);
    *ret0 = y, *ret1 = mean, *ret2 = rstd;
    return SG_OK;
fail:
    work_free(&w);
    sg_tensor_release(y);
    sg_tensor_release(mean);
    sg_tensor_release(rstd);
    return st;
}

static sg_status group_norm_fn(sg_keyset ks, sg_tensor *input, int64_t num_groups,
                               sg_tensor *weight, sg_tensor *bias, double eps, bool cudnn_enabled,
                               sg_tensor **ret) {
    (void)ks, (void)cudnn_enabled;
    if (input->ndim == 0)
        return sg_error(SG_EINVAL, "Dimension specified as 0 but tensor has no dimensions");
    if (input->ndim < 2) /* aten reads input.size(1) */
        return sg_error(SG_EINVAL, "Dimension out of range (expected to be in range of [-1, 0], "
                                   "but got 1)");
    int64_t   N = input->sizes[0], C = input->sizes[1], HxW = 1;
    sg_status st = sg_norm_check_group_inputs(input, weight, bias, C, num_groups);
    if (st) return st;
    for (int32_t i = 2; i < input->ndim; i++) HxW *= input->sizes[i];
    sg_tensor *x = NULL, *mean = NULL, *rstd = NULL;
    if ((st = aten_contiguous(input, SG_CONTIGUOUS_FORMAT, &x))) return st;
    st = aten_native_group_norm(x, weight, bias, N, C, HxW, num_groups, eps, ret, &mean, &rstd);
    sg_tensor_release(x);
    sg_tensor_release(mean);
    sg_tensor_release(rstd);
    return st;
}

/* ---- rms_norm ---------------------------------------------------------------------------------
 * y = x * rsqrt(mean(x^2) + eps) in ACC; times the weight in ACC, or in float64 where the weight
 * is float64 and ACC float32 (aten's promotion); then rounded to the input's dtype. */

#define DEF_RMS_NORM(ACC, SUF)                                                                \
    static void rms_norm_##SUF(const char *x, sg_dtype xt, char *y, ACC *rstd, const ACC *g,  \
                               const double *gd, int64_t M, int64_t N, ACC eps, ACC *scratch, \
                               double *dscratch, int nthr) {                                  \
        size_t xs = sg_dtype_size(xt);                                                        \
        bool   par = M > 1 && M * N > GRAIN;                                                  \
        (void)par, (void)nthr;                                                                \
        PAR_FOR                                                                               \
        for (int64_t r = 0; r < M; r++) {                                                     \
            ACC *row = scratch + (int64_t)thread_num() * N;                                   \
            load_##SUF(x + (size_t)(r * N) * xs, xt, N, row);                                 \
            ACC ms = psq_##SUF(row, N, (ACC)0) / (ACC)N;                                      \
            ACC rs = (ACC)1 / (ACC)sqrt((double)(ms + eps));                                  \
            rstd[r] = rs;                                                                     \
            if (gd) {                                                                         \
                double *drow = dscratch + (int64_t)thread_num() * N;                          \
                for (int64_t j = 0; j < N; j++) drow[j] = (double)(row[j] * rs) * gd[j];      \
                store_d(y + (size_t)(r * N) * xs, xt, N, drow);                               \
                continue;                                                                     \
            }                                                                                 \
            for (int64_t j = 0; j < N; j++) row[j] = g ? (row[j] * rs) * g[j] : row[j] * rs;  \
            store_##SUF(y + (size_t)(r * N) * xs, xt, N, row);                                \
        }                                                                                     \
    }
DEF_RMS_NORM(float, f)
DEF_RMS_NORM(double, d)

static sg_status rms_norm_run(sg_tensor *input, sg_int_list ns, sg_tensor *weight,
                              const double *eps, sg_tensor **out, sg_tensor **rstd_out) {
    int64_t   M, N, stat[SG_MAX_DIMS];
    sg_dtype  xt = dtype_of(input);
    sg_status st = sg_norm_rms_checks(input, ns, weight, &M, &N, stat);
    if (st) return st;
    sg_dtype acc = xt == SG_FLOAT64 ? SG_FLOAT64 : SG_FLOAT32;
    /* the weight multiplies in the promoted type: float64 wins over float32 */
    bool     wide = acc == SG_FLOAT32 && weight && weight->dtype == SG_FLOAT64;
    sg_tensor *y = NULL, *rstd = NULL;
    double    *dscratch = NULL;
    norm_work  w;
    if ((st = work_init(&w, input, weight, NULL, acc, wide ? SG_FLOAT64 : acc, N))) return st;
    if (wide && !(dscratch = malloc((size_t)w.nthr * (size_t)(N > 0 ? N : 1) *
                                    sizeof(double)))) {
        st = sg_error(SG_ENOMEM, "rms_norm: out of memory");
        goto done;
    }
    if ((st = sg_tensor_empty(input->sizes, input->ndim, xt, SG_CPU, &y)) ||
        (st = sg_tensor_empty(stat, input->ndim, acc, SG_CPU, &rstd)))
        goto done;
    if (M > 0) {
        const void *g = data_or_null(w.g);
        if (acc == SG_FLOAT64)
            rms_norm_d(sg_tensor_data(w.x), xt, sg_tensor_data(y), sg_tensor_data(rstd), g, NULL,
                       M, N, eps ? *eps : DBL_EPSILON, w.scratch, NULL, w.nthr);
        else
            rms_norm_f(sg_tensor_data(w.x), xt, sg_tensor_data(y), sg_tensor_data(rstd),
                       wide ? NULL : g, wide ? g : NULL, M, N, eps ? (float)*eps : FLT_EPSILON,
                       w.scratch, dscratch, w.nthr);
    }
done:
    work_free(&w);
    free(dscratch);
    if (st) {
        sg_tensor_release(y);
        sg_tensor_release(rstd);
        return st;
    }
    *out = y;
    if (rstd_out) *rstd_out = rstd;
    else sg_tensor_release(rstd);
    return SG_OK;
}

static sg_status fused_rms_norm_cpu(sg_keyset ks, sg_tensor *input, sg_int_list ns,
                                    sg_tensor *weight, const double *eps, sg_tensor **ret0,
                                    sg_tensor **ret1) {
    (void)ks;
    int64_t M, N;
    if (sg_norm_check_inputs(input, ns, weight, NULL, &M, &N))
        return sg_norm_rms_composite(input, ns, weight, eps, ret0, ret1);
    return rms_norm_run(input, ns, weight, eps, ret0, ret1);
}

/* aten's rms_norm_symint: the checks, then _fused_rms_norm's output. */
static sg_status rms_norm_fn(sg_keyset ks, sg_tensor *input, sg_int_list ns, sg_tensor *weight,
                             const double *eps, sg_tensor **ret) {
    (void)ks;
    int64_t    M, N;
    sg_tensor *rstd = NULL;
    sg_status  st = sg_norm_check_inputs(input, ns, weight, NULL, &M, &N);
    if (!st) st = aten__fused_rms_norm(input, ns, weight, eps, ret, &rstd);
    sg_tensor_release(rstd);
    return st;
}

/* ---- registration ---------------------------------------------------------------------------- */

sg_status sg_cpu_register_norm(void) {
    SG_REG(aten_native_layer_norm, native_layer_norm_cpu);
    SG_REG(aten_native_group_norm, native_group_norm_cpu);
    SG_REG(aten__fused_rms_norm, fused_rms_norm_cpu);
    SG_REG_DECOMP(aten_layer_norm, layer_norm_fn);
    SG_REG_DECOMP(aten_group_norm, group_norm_fn);
    SG_REG_DECOMP(aten_rms_norm, rms_norm_fn);
    return SG_OK;
}
