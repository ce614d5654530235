/* attention.c: scaled_dot_product_attention on the CPU by aten's math path,
 *     out = softmax(q . k^T * scale + mask) . v,
 * and _scaled_dot_product_attention_math, which also returns the attention weights.
 *
 * q is [..., L, E], k [..., S, E], v [..., S, Ev]; their batch dims broadcast as matmul's do.
 * The two products run through the dispatched matmul (so BLAS where it is linked); between
 * them one pass over each row of scores scales it, applies the mask and takes a numerically
 * stable softmax (the row's maximum subtracted before exp). float16 and bfloat16 are computed
 * in float32 and rounded once at the end, as aten's math path does on the CPU.
 *
 * Semantics follow PyTorch 2.11:
 *  - scale None is 1 / sqrt(E);
 *  - a bool attn_mask says which positions take part (True), so False adds -inf; a float mask
 *    (float32, or the query's dtype) is added. _scaled_dot_product_attention_math called
 *    directly adds a bool mask as 0/1, as aten's does (the conversion is sdpa's);
 *  - is_causal keeps position j for query i where j <= i (torch.ones(L, S).tril(), aligned
 *    top-left), and refuses an explicit mask beside it;
 *  - a row whose scores are all -inf gives zeros, not NaN (aten's _safe_softmax);
 *  - enable_gqa repeats each key/value head for Hq / Hkv consecutive query heads
 *    (repeat_interleave on dim -3);
 *  - dropout_p > 0 drops weights after the softmax (sg_attention.h: a bernoulli draw from the
 *    default generator, or the dropout_mask given to _scaled_dot_product_attention_math). */
#include "cpu.h"
#include "sg_attention.h"

#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

sg_status sg_cpu_register_attention(void); /* called by sg_cpu_register_linalg */

#ifdef _OPENMP
#define PAR_FOR _Pragma("omp parallel for schedule(static) if (par)")
#else
#define PAR_FOR
#endif

/* Tensors to release at the end. */
typedef struct pool {
    sg_tensor *t[24];
    int        n;
} pool;

static sg_tensor *keep(pool *p, sg_tensor *t) {
    if (p->n < (int)(sizeof p->t / sizeof p->t[0])) p->t[p->n++] = t;
    return t;
}
static void drain(pool *p) {
    while (p->n) sg_tensor_release(p->t[--p->n]);
}

/* ---- the softmax pass ------------------------------------------------------------------------ */

enum { MASK_NONE, MASK_ALLOW, MASK_ADD };

typedef struct rows {
    char          *x;      /* scores, contiguous [rows, S] */
    int64_t        rows, L, S;
    double         scale;
    bool           causal;
    int            mode;   /* MASK_*: ALLOW reads bools, ADD values of the scores' dtype */
    const sg_tensor *mask; /* expanded to the scores' shape (strides may be 0) */
} rows;

/* The mask's element offset of row r's first column. */
static int64_t mask_row(const sg_tensor *m, int64_t r) {
    int64_t off = 0;
    for (int32_t d = m->ndim - 2; d >= 0; d--) {
        off += (r % m->sizes[d]) * m->strides[d];
        r /= m->sizes[d];
    }
    return off;
}

#define DEF_SOFTMAX(T, SUF, EXP)                                                              \
    static void softmax_##SUF(const rows *c) {                                                \
        int64_t S = c->S;                                                                     \
        T       scale = (T)c->scale;                                                          \
        bool    par = c->rows > 1 && c->rows * S > 16384;                                     \
        (void)par;                                                                            \
        PAR_FOR                                                                               \
        for (int64_t r = 0; r < c->rows; r++) {                                               \
            T         *x = (T *)c->x + r * S;                                                 \
            int64_t    i = r % c->L, ms = 0;                                                  \
            const bool *mb = NULL;                                                            \
            const T    *mv = NULL;                                                            \
            if (c->mode != MASK_NONE) {                                                       \
                const char *base = sg_tensor_data(c->mask);                                   \
                int64_t     off = mask_row(c->mask, r);                                       \
                ms = c->mask->strides[c->mask->ndim - 1];                                     \
                if (c->mode == MASK_ALLOW) mb = (const bool *)base + off;                     \
                else mv = (const T *)base + off;                                              \
            }                                                                                 \
            T    mx = -INFINITY;                                                              \
            bool nan = false;                                                                 \
            for (int64_t j = 0; j < S; j++) {                                                 \
                T v = x[j] * scale;                                                           \
                if (c->causal && j > i) v = -INFINITY;                                        \
                else if (mb && !mb[j * ms]) v = -INFINITY;                                    \
                else if (mv) v += mv[j * ms];                                                 \
                x[j] = v;                                                                     \
                if (v != v) nan = true;                                                       \
                else if (v > mx) mx = v;                                                      \
            }                                                                                 \
            if (nan || mx == -INFINITY) { /* NaN stays NaN; all -inf gives zeros */           \
                for (int64_t j = 0; j < S; j++) x[j] = nan ? (T)NAN : (T)0;                   \
                continue;                                                                     \
            }                                                                                 \
            T sum = 0;                                                                        \
            for (int64_t j = 0; j < S; j++) sum += (x[j] = EXP(x[j] - mx));                   \
            T inv = (T)1 / sum;                                                               \
            for (int64_t j = 0; j < S; j++) x[j] *= inv;                                      \
        }                                                                                     \
    }
DEF_SOFTMAX(float, f, expf)
DEF_SOFTMAX(double, d, exp)

/* ---- pieces ---------------------------------------------------------------------------------- */

/* The mask broadcast to the scores' shape, as an in-place add would take it. */
static sg_status mask_to(pool *p, sg_tensor *mask, const sg_tensor *scores, sg_tensor **out) {
    sg_status st = sg_attn_mask_fits(mask, scores);
    if (!st) st = sg_tensor_expand(mask, scores->sizes, scores->ndim, out);
    if (!st) keep(p, *out);
    return st;
}

/* ---- the op ---------------------------------------------------------------------------------- */

/* out (and attn where wanted) of attention; bool_allows: a bool mask says who takes part (sdpa)
 * rather than being added as 0/1 (_scaled_dot_product_attention_math). */
static sg_status attention(sg_tensor *q, sg_tensor *k, sg_tensor *v, sg_tensor *mask,
                           double dropout_p, sg_tensor *dropout_mask, bool is_causal,
                           const double *scale, bool enable_gqa, bool bool_allows,
                           sg_tensor **out, sg_tensor **attn_out) {
    sg_status st = sg_attn_check(q, k, v, mask, is_causal);
    if (st) return st;
    sg_dtype   qt = dtype_of(q);
    sg_dtype   cd = qt == SG_FLOAT64 ? SG_FLOAT64 : SG_FLOAT32;
    pool       p = {.n = 0};
    sg_tensor *qc, *kc, *vc, *kt, *s, *scores, *mc = NULL, *me = NULL, *o = NULL, *a, *vd;
    if ((st = sg_cast(q, cd, &qc))) goto done;
    keep(&p, qc);
    if ((st = sg_cast(k, cd, &kc))) goto done;
    keep(&p, kc);
    if ((st = sg_cast(v, cd, &vc))) goto done;
    keep(&p, vc);
    if (enable_gqa) {
        if ((st = sg_attn_gqa(qc, kc, vc, &kc, &vc))) goto done;
        keep(&p, kc);
        keep(&p, vc);
    }
    if ((st = sg_tensor_transpose(kc, -2, -1, &kt))) goto done;
    keep(&p, kt);
    if ((st = aten_matmul(qc, kt, &s))) goto done;
    keep(&p, s);
    if ((st = sg_tensor_contiguous(s, &scores))) goto done; /* a fresh tensor: ours to write */
    keep(&p, scores);
    int  mode = MASK_NONE;
    if (mask) {
        mode = mask->dtype == SG_BOOL && bool_allows ? MASK_ALLOW : MASK_ADD;
        if ((st = sg_cast(mask, mode == MASK_ALLOW ? SG_BOOL : cd, &mc))) goto done;
        keep(&p, mc);
        if ((st = mask_to(&p, mc, scores, &me))) goto done;
    }
    rows r = {
        .x = sg_tensor_data(scores),
        .L = scores->sizes[scores->ndim - 2],
        .S = scores->sizes[scores->ndim - 1],
        .scale = scale ? *scale : 1.0 / sqrt((double)q->sizes[q->ndim - 1]),
        .causal = is_causal,
        .mode = mode,
        .mask = me,
    };
    r.rows = r.S ? sg_tensor_numel(scores) / r.S : 0;
    if (r.rows > 0 && r.S > 0 && scores->device.type != SG_DEV_META) { /* Meta: shapes only */
        if (cd == SG_FLOAT64) softmax_d(&r);
        else softmax_f(&r);
    }
    if ((st = sg_attn_dropout(scores, vc, dropout_p, dropout_mask, &a, &vd))) goto done;
    keep(&p, a);
    keep(&p, vd);
    if ((st = aten_matmul(a, vd, &o))) goto done;
    keep(&p, o);
    st = sg_attn_outputs(o, dropout_mask ? scores : a, qt, out, attn_out);
done:
    drain(&p);
    return st;
}

static sg_status sdpa_fn(sg_keyset ks, sg_tensor *query, sg_tensor *key, sg_tensor *value,
                         sg_tensor *attn_mask, double dropout_p, bool is_causal,
                         const double *scale, bool enable_gqa, sg_tensor **ret) {
    (void)ks;
    return attention(query, key, value, attn_mask, dropout_p, NULL, is_causal, scale, enable_gqa,
                     true, ret, NULL);
}

static sg_status sdpa_math_fn(sg_keyset ks, sg_tensor *query, sg_tensor *key, sg_tensor *value,
                              sg_tensor *attn_mask, double dropout_p, bool is_causal,
                              sg_tensor *dropout_mask, const double *scale, bool enable_gqa,
                              sg_tensor **ret0, sg_tensor **ret1) {
    (void)ks;
    return attention(query, key, value, attn_mask, dropout_p, dropout_mask, is_causal, scale,
                     enable_gqa, false, ret0, ret1);
}

sg_status sg_cpu_register_attention_ad(void); /* attention_ad.c */

sg_status sg_cpu_register_attention(void) {
    SG_REG_CPU_META(aten_scaled_dot_product_attention, sdpa_fn);
    SG_REG_CPU_META(aten__scaled_dot_product_attention_math, sdpa_math_fn);
    return sg_cpu_register_attention_ad();
}
