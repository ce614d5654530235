/* softmax.c: softmax and log_softmax along one dim on the CPU (aten's _softmax and
 * _log_softmax, structured, and the softmax.int / log_softmax.int front ends with their dtype
 * argument).
 *
 * The input is made contiguous and seen as [outer, D, inner] with D the softmax dim. Each line
 * subtracts its max before exponentiating (so large inputs do not overflow), sums, then scales
 * (softmax) or subtracts the log of the sum (log_softmax). Where inner is 1 each line is
 * contiguous and handled on its own; otherwise a block of up to BLOCK neighbouring lines
 * advances together along D, so that every read is contiguous. float16 and bfloat16 compute in
 * float32, float32 in float32 with vmath.h's vectorisable exp (as aten's CPU kernels compute in
 * float32 with a vectorised exp), float64 in float64. As on aten's CPU, half_to_float is
 * refused.
 *
 * A line makes three passes: max, exp and sum, scale. Only the first reads memory: a line of
 * up to a few thousand floats is still in L1 for the other two, so fusing max and sum online
 * (rescaling the sum at each new max) would add work without saving traffic. The float32 and
 * float16/bfloat16 loops exist in one version per instruction set (vmath.h's SG_VM_VERSIONS,
 * picked on first use); float32 lines on AVX-512 are written by hand (below: a cheaper exp for
 * x - max <= 0, the next line prefetched, streaming stores for large outputs). */
#include "cpu.h"
#include "sg_reduce_shape.h"
#include "vmath.h"

#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

enum {
    BLOCK = 256,             /* lines advanced together where the dim is not innermost */
    STREAM_BYTES = 32 << 20, /* outputs from 32 MiB are written past the cache (an EPYC's L3 is
                                32 MB per 8 cores); smaller ones are kept for their reader */
};




/* ---- the kernels ---------------------------------------------------------------------------- */

/* What one run needs: the [outer, D, inner] view and the mode. */
typedef struct sm {
    int64_t outer, len, inner;
    bool    log;
    bool    stream; /* an output large enough for streaming stores, where a version has them */
} sm;

#define LOAD_PLAIN(x) (x)
#define LOAD_HALF(x)  sg_half_to_float(x)
#define LOAD_BF16(x)  sg_bf16_to_float(x)
#define STORE_PLAIN(x) (x)
#define STORE_HALF(x)  sg_float_to_half(x)
#define STORE_BF16(x)  sg_float_to_bf16(x)
/* float: F, a vectorisable exp of vmath.h (the version's flavour); double: libm's */
#define EXP(F, x)     _Generic((x), float: F, default: exp)(x)
#define LOG(x)        _Generic((x), float: logf, default: log)(x)
/* NaN-propagating max, branch-free */
#define MAXN(a, x) ((((x) > (a)) | ((x) != (x))) ? (x) : (a))

enum { LANES = 32 };

/* T: storage, C: compute. Where they are the same, exp values are kept in the output between
 * the sum and the scaling; otherwise they are computed again. Reductions along a line run in
 * LANES independent lanes, each in a loop of its own, so that they vectorise. */
/* ATTR: the version's target attribute; EXPF: its float exp; HOOK(p, x, o): true where a
 * contiguous line was done by a version's own code (NO_HOOK: never) */
#define NO_HOOK(p, x, o) false
#define SOFTMAX_LOOPS(SUF, T, C, LOAD, STORE, ATTR, EXPF, HOOK)                                 \
    ATTR static C max_##SUF(const T *restrict x, int64_t n) {                                   \
        C       m = -INFINITY;                                                                  \
        int64_t i = 0;                                                                          \
        if (n >= LANES) {                                                                       \
            C a[LANES];                                                                         \
            for (int k = 0; k < LANES; k++) a[k] = (C)LOAD(x[k]);                               \
            for (i = LANES; i + LANES <= n; i += LANES)                                         \
                for (int k = 0; k < LANES; k++) a[k] = MAXN(a[k], (C)LOAD(x[i + k]));           \
            for (int k = 0; k < LANES; k++) m = MAXN(m, a[k]);                                  \
        }                                                                                       \
        for (; i < n; i++) m = MAXN(m, (C)LOAD(x[i]));                                          \
        return m;                                                                               \
    }                                                                                           \
    /* the sum of exp(x - m); o (where given, T being C) gets the exps */                       \
    ATTR static C sumexp_##SUF(const T *restrict x, T *restrict o, int64_t n, C m) {            \
        C       a[LANES], s = 0;                                                                \
        int64_t i = 0;                                                                          \
        for (int k = 0; k < LANES; k++) a[k] = 0;                                               \
        if (o) {                                                                                \
            for (; i + LANES <= n; i += LANES)                                                  \
                for (int k = 0; k < LANES; k++) {                                               \
                    C e = EXP(EXPF, (C)LOAD(x[i + k]) - m);                                     \
                    o[i + k] = (T)e;                                                            \
                    a[k] += e;                                                                  \
                }                                                                               \
        } else {                                                                                \
            for (; i + LANES <= n; i += LANES)                                                  \
                for (int k = 0; k < LANES; k++) a[k] += EXP(EXPF, (C)LOAD(x[i + k]) - m);       \
        }                                                                                       \
        for (; i < n; i++) {                                                                    \
            C e = EXP(EXPF, (C)LOAD(x[i]) - m);                                                 \
            if (o) o[i] = (T)e;                                                                 \
            s += e;                                                                             \
        }                                                                                       \
        for (int k = 0; k < LANES; k++) s += a[k];                                              \
        return s;                                                                               \
    }                                                                                           \
    /* one contiguous line */                                                                   \
    ATTR static void line_##SUF(const sm *p, const T *restrict x, T *restrict o) {              \
        if (HOOK(p, x, o)) return;                                                              \
        int64_t n = p->len;                                                                     \
        bool    keep = sizeof(T) == sizeof(C) && !p->log;                                       \
        C       m = max_##SUF(x, n), s = sumexp_##SUF(x, keep ? o : NULL, n, m);                \
        if (p->log) {                                                                           \
            C ls = LOG(s); /* (x - m) - ls: m + ls would round away the small differences */    \
            for (int64_t i = 0; i < n; i++) o[i] = STORE(((C)LOAD(x[i]) - m) - ls);             \
        } else if (keep) {                                                                      \
            C r = 1 / s;                                                                        \
            for (int64_t i = 0; i < n; i++) o[i] = (T)((C)o[i] * r);                            \
        } else {                                                                                \
            C r = 1 / s;                                                                        \
            for (int64_t i = 0; i < n; i++) o[i] = STORE(EXP(EXPF, (C)LOAD(x[i]) - m) * r);     \
        }                                                                                       \
    }                                                                                           \
    /* w neighbouring lines, inner apart, advancing together along the dim */                   \
    ATTR static void block_##SUF(const sm *p, const T *restrict x, T *restrict o, int64_t w) {  \
        C       m[BLOCK], s[BLOCK];                                                             \
        int64_t n = p->len, st = p->inner;                                                      \
        for (int64_t j = 0; j < w; j++) m[j] = -INFINITY, s[j] = 0;                             \
        for (int64_t i = 0; i < n; i++)                                                         \
            for (int64_t j = 0; j < w; j++) m[j] = MAXN(m[j], (C)LOAD(x[i * st + j]));          \
        bool keep = sizeof(T) == sizeof(C) && !p->log;                                          \
        if (keep) {                                                                             \
            for (int64_t i = 0; i < n; i++)                                                     \
                for (int64_t j = 0; j < w; j++) {                                               \
                    C e = EXP(EXPF, (C)LOAD(x[i * st + j]) - m[j]);                             \
                    o[i * st + j] = (T)e;                                                       \
                    s[j] += e;                                                                  \
                }                                                                               \
        } else {                                                                                \
            for (int64_t i = 0; i < n; i++)                                                     \
                for (int64_t j = 0; j < w; j++) s[j] += EXP(EXPF, (C)LOAD(x[i * st + j]) - m[j]); \
        }                                                                                       \
        if (p->log) {                                                                           \
            for (int64_t j = 0; j < w; j++) s[j] = LOG(s[j]);                                   \
            for (int64_t i = 0; i < n; i++)                                                     \
                for (int64_t j = 0; j < w; j++)                                                 \
                    o[i * st + j] = STORE(((C)LOAD(x[i * st + j]) - m[j]) - s[j]);              \
        } else if (keep) {                                                                      \
            for (int64_t j = 0; j < w; j++) s[j] = 1 / s[j];                                    \
            for (int64_t i = 0; i < n; i++)                                                     \
                for (int64_t j = 0; j < w; j++) o[i * st + j] = (T)((C)o[i * st + j] * s[j]);   \
        } else {                                                                                \
            for (int64_t j = 0; j < w; j++) s[j] = 1 / s[j];                                    \
            for (int64_t i = 0; i < n; i++)                                                     \
                for (int64_t j = 0; j < w; j++)                                                 \
                    o[i * st + j] = STORE(EXP(EXPF, (C)LOAD(x[i * st + j]) - m[j]) * s[j]);     \
        }                                                                                       \
    }                                                                                           \
    /* units [b, e): lines (inner == 1) or blocks of lines */                                   \
    ATTR static void range_##SUF(const sm *p, const char *xin, char *oin, int64_t b, int64_t e) { \
        const T *x = (const T *)xin;                                                            \
        T       *o = (T *)oin;                                                                  \
        if (p->inner == 1) {                                                                    \
            for (int64_t u = b; u < e; u++) line_##SUF(p, x + u * p->len, o + u * p->len);      \
            return;                                                                             \
        }                                                                                       \
        int64_t nb = (p->inner + BLOCK - 1) / BLOCK;                                            \
        for (int64_t u = b; u < e; u++) {                                                       \
            int64_t q = u / nb, j0 = (u % nb) * BLOCK;                                          \
            int64_t w = p->inner - j0 < BLOCK ? p->inner - j0 : BLOCK;                          \
            int64_t off = q * p->len * p->inner + j0;                                           \
            block_##SUF(p, x + off, o + off, w);                                                \
        }                                                                                       \
    }

#ifdef SG_VM_X86
/* A float32 line on AVX-512: the generic line's steps with vmath.h's exp for x <= 0
 * (sg_exp16_neg: 10 operations where sg_exp16 takes 14, and the exp is what bounds a line in
 * cache; its last bit differs from sg_exp16's on 1.6% of inputs). Where the data is in memory,
 * the max pass waits on it: the exp pass prefetches the next line into L2 while it computes, and
 * where p->stream a line of up to SCRATCH floats keeps its exps on the stack, so that the
 * output is written once, by streaming stores (no read of it into the cache first). */
enum { SCRATCH = 8192 }; /* 32 KiB: a line of 4096 and its exps fit in L1 together */

/* mask of the last n - i < 16 lanes */
#define TAIL(n, i) ((__mmask16)((1u << ((n) - (i))) - 1u))

/* The max by vmaxps, which can drop a NaN where the generic MAXN keeps it; the line comes out
 * all NaN either way, as exp(NaN - m) makes the sum NaN. Four running maxima, so that the loop
 * does not wait on the latency of vmaxps. */
SG_VM_AVX512 static float max_f32_512(const float *x, int64_t n) {
    __m512  a0 = _mm512_set1_ps(-INFINITY), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        a0 = _mm512_max_ps(a0, _mm512_loadu_ps(x + i));
        a1 = _mm512_max_ps(a1, _mm512_loadu_ps(x + i + 16));
        a2 = _mm512_max_ps(a2, _mm512_loadu_ps(x + i + 32));
        a3 = _mm512_max_ps(a3, _mm512_loadu_ps(x + i + 48));
    }
    for (; i + 16 <= n; i += 16) a0 = _mm512_max_ps(a0, _mm512_loadu_ps(x + i));
    if (i < n)
        a1 = _mm512_mask_max_ps(a1, TAIL(n, i), a1, _mm512_maskz_loadu_ps(TAIL(n, i), x + i));
    return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(a0, a1), _mm512_max_ps(a2, a3)));
}

/* The sum of exp(x - m), e (where given) getting the exps; two vectors in flight, each with its
 * own running sum. Prefetches the n floats after x (the next line; a prefetch past the end of
 * the data does not fault). e may be x. Inlined, so that each caller's loop has no test of e. */
SG_VM_AVX512 static inline __attribute__((always_inline)) float
sumexp_f32_512(const float *x, float *e, int64_t n, float m) {
    __m512  vm = _mm512_set1_ps(m), a0 = _mm512_setzero_ps(), a1 = a0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        _mm_prefetch((const char *)(x + n + i), _MM_HINT_T1);
        _mm_prefetch((const char *)(x + n + i + 16), _MM_HINT_T1);
        __m512 e0 = sg_exp16_neg(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm));
        __m512 e1 = sg_exp16_neg(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vm));
        if (e) {
            _mm512_storeu_ps(e + i, e0);
            _mm512_storeu_ps(e + i + 16, e1);
        }
        a0 = _mm512_add_ps(a0, e0);
        a1 = _mm512_add_ps(a1, e1);
    }
    for (; i < n; i += 16) { /* masked-off lanes are neither read, written nor summed */
        __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : TAIL(n, i);
        __m512    e0 = sg_exp16_neg(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), vm));
        if (e) _mm512_mask_storeu_ps(e + i, k, e0);
        a0 = _mm512_mask_add_ps(a0, k, a0, e0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}

/* o = e * r, by streaming stores where `stream` (plain ones for o's partial first and last
 * cache lines). e may be o. */
SG_VM_AVX512 static void scale_f32_512(const float *e, float *o, int64_t n, float r, bool stream) {
    __m512  vr = _mm512_set1_ps(r);
    int64_t i = 0, last = n - 16, head = (int64_t)((64 - ((uintptr_t)o & 63)) & 63) / 4;
    if (stream && head < n) {
        if (head)
            _mm512_mask_storeu_ps(o, TAIL(head, 0),
                                  _mm512_mul_ps(_mm512_maskz_loadu_ps(TAIL(head, 0), e), vr));
        for (i = head; i <= last; i += 16)
            _mm512_stream_ps(o + i, _mm512_mul_ps(_mm512_loadu_ps(e + i), vr));
    }
    for (; i <= last; i += 16) _mm512_storeu_ps(o + i, _mm512_mul_ps(_mm512_loadu_ps(e + i), vr));
    if (i < n)
        _mm512_mask_storeu_ps(o + i, TAIL(n, i),
                              _mm512_mul_ps(_mm512_maskz_loadu_ps(TAIL(n, i), e + i), vr));
}

SG_VM_AVX512 static bool line_f32_512(const sm *p, const float *x, float *o) {
    int64_t n = p->len;
    float   m = max_f32_512(x, n);
    if (p->log) {
        float ls = logf(sumexp_f32_512(x, NULL, n, m));
        for (int64_t i = 0; i < n; i++) o[i] = (x[i] - m) - ls;
    } else if (p->stream && n <= SCRATCH) {
        _Alignas(64) float e[SCRATCH];
        scale_f32_512(e, o, n, 1 / sumexp_f32_512(x, e, n, m), true);
    } else {
        scale_f32_512(o, o, n, 1 / sumexp_f32_512(x, o, n, m), false);
    }
    return true;
}
#undef TAIL

/* orders the streaming stores before the threads' results are used */
static inline void store_fence(void) { _mm_sfence(); }
#define HOOK_avx512(p, x, o) line_f32_512(p, x, o)
#define HOOK_avx2            NO_HOOK
#define HOOK_base            NO_HOOK
#else
#define HOOK_base NO_HOOK
static inline void store_fence(void) {}
#endif

#define DEF_SOFTMAX(V, ATTR, EXPF)                                                              \
    SOFTMAX_LOOPS(f32_##V, float, float, LOAD_PLAIN, STORE_PLAIN, ATTR, EXPF, HOOK_##V)         \
    SOFTMAX_LOOPS(f16_##V, sg_half, float, LOAD_HALF, STORE_HALF, ATTR, EXPF, NO_HOOK)          \
    SOFTMAX_LOOPS(bf16_##V, sg_bf16, float, LOAD_BF16, STORE_BF16, ATTR, EXPF, NO_HOOK)
SG_VM_VERSIONS(DEF_SOFTMAX)
SOFTMAX_LOOPS(f64, double, double, LOAD_PLAIN, STORE_PLAIN, , sg_expf, NO_HOOK)

typedef void range_type(const sm *p, const char *x, char *o, int64_t b, int64_t e);
#define PICK_RANGE(NAME)                                                                        \
    SG_VM_PICK(NAME, range_type,                                                                \
               (const sm *p, const char *x, char *o, int64_t b, int64_t e), (p, x, o, b, e))
PICK_RANGE(range_f32)
PICK_RANGE(range_f16)
PICK_RANGE(range_bf16)

typedef range_type *range_fn;
#define RANGE_ENTRY(NAME, NUM, KIND, SIZE, T, SUF, ...) [SG_##NAME] = range_##SUF,
static const range_fn ranges[SG_DTYPE__END] = {SG_DTYPES_FLOATING(RANGE_ENTRY)};

/* Runs fn over every unit, in parallel where the work is large. */
static void run_units(range_fn fn, const sm *p, const char *x, char *o) {
    int64_t units = p->inner == 1 ? p->outer : p->outer * ((p->inner + BLOCK - 1) / BLOCK);
#ifdef _OPENMP
    if (p->outer * p->len * p->inner >= SG_GRAIN && units > 1 && omp_get_max_threads() > 1 &&
        !omp_in_parallel()) {
#pragma omp parallel
        {
            int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
            int64_t chunk = (units + nt - 1) / nt, b = t * chunk;
            int64_t e = b + chunk < units ? b + chunk : units;
            if (b < e) fn(p, x, o, b, e);
            if (p->stream) store_fence();
        }
        return;
    }
#endif
    fn(p, x, o, 0, units);
    if (p->stream) store_fence();
}

/* ---- _softmax / _log_softmax ---------------------------------------------------------------- */

static sg_status sm_meta(sg_tensor *self, int64_t dim, bool half_to_float, sg_meta *m) {
    sg_status st = sg_check_wrap_dim(&dim, self->ndim);
    if (st) return st;
    m->ndim = self->ndim;
    memcpy(m->sizes, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    m->dtype = half_to_float ? SG_FLOAT32 : dtype_of(self);
    m->device = self->device;
    m->strided = false;
    return SG_OK;
}

static sg_status sm_run(bool log, sg_tensor *self, int64_t dim, bool half_to_float,
                        sg_tensor *out) {
    sg_meta m;
    m.dtype = dtype_of(self);
    sg_status st = sm_meta(self, dim, half_to_float, &m);
    if (st) return st;
    if ((st = sg_check_out_dtype(out, m.dtype))) return st;
    if (half_to_float)
        return sg_error(SG_EUNSUPPORTED, "softmax with half to float conversion is not supported "
                                         "on CPU");
    if (self->device.type != SG_DEV_CPU || out->device.type != SG_DEV_CPU)
        return sg_error(SG_EINVAL, "%s: expected CPU tensors", log ? "_log_softmax" : "_softmax");
    sg_wrap_dim(&dim, self->ndim);
    bool     last = self->ndim == 0 || dim == self->ndim - 1;
    range_fn fn = ranges[m.dtype];
    if (!fn && sg_tensor_numel(self) != 0) /* aten's kernel returns before its dtype dispatch */
        return sg_error(SG_EUNSUPPORTED, "\"%s%s_kernel_impl\" not implemented for '%s'",
                        log ? "log_softmax" : "softmax", last ? "_lastdim" : "",
                        sg_dtype_c10_name(m.dtype));
    sm p = {1, 1, 1, log, false};
    if ((st = sg_reduce_lines(self, dim, out, &p.outer, &p.len, &p.inner))) return st;
    if (sg_tensor_numel(self) == 0) return SG_OK;

    /* a contiguous input, and a contiguous output that is the input or apart from it */
    sg_tensor *x = NULL, *o = NULL;
    if ((st = sg_tensor_contiguous(self, &x))) return st;
    bool direct = sg_tensor_is_contiguous(out) &&
                  (out->storage != x->storage ||
                   (out->offset == x->offset && out->storage == x->storage));
    if (direct) o = sg_tensor_retain(out);
    else st = sg_tensor_empty(self->sizes, self->ndim, m.dtype, SG_CPU, &o);
    p.stream = direct && sg_tensor_numel(self) * (int64_t)sg_dtype_size(m.dtype) >= STREAM_BYTES;
    if (!st) {
        run_units(fn, &p, sg_tensor_data(x), sg_tensor_data(o));
        if (!direct) st = sg_tensor_copy_(out, o);
    }
    sg_tensor_release(o);
    sg_tensor_release(x);
    return st;
}

static sg_status softmax_out(sg_keyset ks, sg_tensor *self, int64_t dim, bool half_to_float,
                             sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_status st = sm_run(false, self, dim, half_to_float, out);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

static sg_status log_softmax_out(sg_keyset ks, sg_tensor *self, int64_t dim, bool half_to_float,
                                 sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_status st = sm_run(true, self, dim, half_to_float, out);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

/* ---- softmax.int / log_softmax.int: the input in `dtype` first ------------------------------ */

/* self in dtype (a new reference), through the dispatched to.dtype: these front ends serve every
 * backend, as aten's do, and are the ops' differentiable decompositions */
static sg_status converted(sg_tensor *self, const sg_dtype *dtype, sg_tensor **x) {
    if (!dtype || *dtype == dtype_of(self)) {
        *x = sg_tensor_retain(self);
        return SG_OK;
    }
    return aten_to_dtype(self, *dtype, false, false, NULL, x);
}

#define FRONT(NAME, FN, FN_OUT)                                                                \
    static sg_status NAME##_int(sg_keyset ks, sg_tensor *self, int64_t dim,                    \
                                const sg_dtype *dtype, sg_tensor **ret) {                      \
        (void)ks;                                                                              \
        sg_tensor *x = NULL;                                                                   \
        sg_status  st = converted(self, dtype, &x);                                            \
        if (!st) st = FN(x, dim, false, ret);                                                  \
        sg_tensor_release(x);                                                                  \
        return st;                                                                             \
    }                                                                                          \
    static sg_status NAME##_int_out(sg_keyset ks, sg_tensor *self, int64_t dim,                \
                                    const sg_dtype *dtype, sg_tensor *out, sg_tensor **ret) {  \
        (void)ks;                                                                              \
        sg_tensor *x = NULL;                                                                   \
        sg_status  st = converted(self, dtype, &x);                                            \
        if (!st) st = FN_OUT(x, dim, false, out, ret);                                         \
        sg_tensor_release(x);                                                                  \
        return st;                                                                             \
    }
FRONT(softmax, aten__softmax, aten__softmax_out)
FRONT(log_softmax, aten__log_softmax, aten__log_softmax_out)

/* ---- _safe_softmax: softmax, with rows whose inputs are all -inf giving zeros ---------------
 * aten's math attention path uses it, so that a fully masked query row gives zeros, not NaN. A
 * row is fully masked where its max is -inf (a NaN row keeps its NaN, as aten's all(x == -inf)
 * does). Composed of dispatched ops: it serves every backend. */
static sg_status safe_softmax(sg_keyset ks, sg_tensor *self, int64_t dim, const sg_dtype *dtype,
                              sg_tensor **ret) {
    (void)ks;
    sg_tensor *out = NULL, *mx = NULL, *rows = NULL;
    sg_status  st = aten_softmax_int(self, dim, dtype, &out);
    if (st || sg_tensor_numel(self) == 0) {
        *ret = out;
        return st;
    }
    if (!(st = aten_amax(self, (sg_int_list){&dim, 1}, true, &mx)) &&
        !(st = aten_eq_Scalar(mx, sg_scalar_float(-INFINITY), &rows)))
        st = aten_masked_fill_Scalar(out, rows, sg_scalar_int(0), ret);
    sg_tensor_release(out), sg_tensor_release(mx), sg_tensor_release(rows);
    return st;
}

/* ---- registration --------------------------------------------------------------------------- */

sg_status sg_cpu_register_softmax(void);

sg_status sg_cpu_register_softmax(void) {
    SG_REG_STRUCTURED(aten__softmax_out, sm_meta, softmax_out);
    SG_REG_STRUCTURED(aten__log_softmax_out, sm_meta, log_softmax_out);
    SG_REG_DECOMP(aten_softmax_int, softmax_int);
    SG_REG_EXPLICIT(aten_softmax_int_out, softmax_int_out);
    SG_REG_DECOMP(aten_log_softmax_int, log_softmax_int);
    SG_REG_EXPLICIT(aten_log_softmax_int_out, log_softmax_int_out);
    SG_REG_EXPLICIT(aten__safe_softmax, safe_softmax);
    return SG_OK;
}
