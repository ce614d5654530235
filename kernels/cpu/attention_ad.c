/* attention_ad.c: the CompositeImplicitAutograd kernels of scaled_dot_product_attention and
 * _scaled_dot_product_attention_math: aten's math path written as aten calls, so that autograd
 * records every step. The generated Autograd kernel runs them where an input requires grad; the
 * backends' fused kernels (attention.c, kernels/cuda) serve every other call.
 *
 * The steps are those of aten's _scaled_dot_product_attention_math:
 *   q * sqrt(scale) @ (k^T * sqrt(scale)), plus the mask as an additive float mask (a bool one
 *   becomes 0 / -inf, is_causal the upper triangle of -inf), _safe_softmax over the last dim (a
 *   fully masked row gives zeros), dropout,
 *   @ v; float16 and bfloat16 are computed in float32 and the results rounded back, as aten's
 *   math path does on the CPU. Grouped-query keys and values repeat their heads by
 *   unsqueeze / expand / reshape. */
#include "cpu.h"
#include "sg_attention.h"
#include "sg_autograd.h"

#include <math.h>

/* The tensors a call made, released at the end. */
typedef struct pool {
    sg_tensor *t[24];
    int        n;
} pool;

/* Keeps *t, which the call that returned st made (a pointer: C leaves the order in which a
 * call's arguments are evaluated open, so the call's output is read here, after it). */
static sg_status keep(pool *p, sg_status st, sg_tensor **t) {
    if (!st && p->n < (int)(sizeof p->t / sizeof p->t[0])) p->t[p->n++] = *t;
    else if (!st) sg_tensor_release(*t), st = sg_error(SG_ENOMEM, "attention: too many steps");
    return st;
}

static void drain(pool *p) {
    while (p->n) sg_tensor_release(p->t[--p->n]);
}

/* Each head of x (dim -3) r times in a row: repeat_interleave(r, -3) as views and one reshape. */
static sg_status repeat_heads(pool *p, sg_tensor *x, int64_t r, sg_tensor **out) {
    if (r == 1) {
        *out = x;
        return SG_OK;
    }
    int64_t   sz[SG_MAX_DIMS + 1], n = x->ndim;
    sg_tensor *u = NULL, *e = NULL;
    sg_status st = keep(p, aten_unsqueeze(x, n - 2, &u), &u);
    for (int64_t d = 0; d < n - 2; d++) sz[d] = x->sizes[d];
    sz[n - 2] = r, sz[n - 1] = x->sizes[n - 2], sz[n] = x->sizes[n - 1];
    if (!st) st = keep(p, aten_expand(u, (sg_int_list){sz, (int32_t)n + 1}, false, &e), &e);
    sz[n - 3] = x->sizes[n - 3] * r, sz[n - 2] = x->sizes[n - 2], sz[n - 1] = x->sizes[n - 1];
    if (!st) st = keep(p, aten_reshape(e, (sg_int_list){sz, (int32_t)n}, out), out);
    return st;
}

/* The additive mask of the scores, or NULL: is_causal's triangle, a bool mask as 0 / -inf (or
 * as 0 / 1 where bool_allows is false, as _scaled_dot_product_attention_math adds it), a float
 * mask as given. */
static sg_status additive_mask(pool *p, sg_tensor *mask, bool causal, bool bool_allows,
                               int64_t L, int64_t S, sg_dtype cd, sg_device dev,
                               sg_tensor **out) {
    sg_status  st = SG_OK;
    sg_tensor *full;
    *out = mask;
    if (causal) {
        int64_t sz[2] = {L, S};
        st = keep(p, aten_full((sg_int_list){sz, 2}, sg_scalar_float(-INFINITY), &cd, NULL,
                               &dev, NULL, &full), &full);
        if (!st) st = keep(p, aten_triu(full, 1, out), out);
    } else if (mask && mask->dtype == SG_BOOL && bool_allows) {
        sg_tensor *allowed;
        st = keep(p, aten_full((sg_int_list){mask->sizes, mask->ndim},
                               sg_scalar_float(-INFINITY), &cd, NULL, &dev, NULL, &full), &full);
        if (!st) st = keep(p, aten_masked_fill_Scalar(full, mask, sg_scalar_int(0), &allowed),
                           &allowed);
        if (!st) *out = allowed;
    } else if (mask && mask->dtype != cd) {
        st = keep(p, aten_to_dtype(mask, cd, false, false, NULL, out), out);
    }
    return st;
}

/* probs after dropout, and v as the product takes it (sg_attn_dropout's rules); the random
 * keep-mask is drawn with grad mode off, as it is no function of the inputs. */
static sg_status dropout(pool *p, sg_tensor *probs, sg_tensor *v, double dp,
                         sg_tensor *dropout_mask, sg_tensor **a, sg_tensor **vv) {
    if (!(dp > 0 && dp < 1) || dropout_mask) {
        sg_status st = sg_attn_dropout(probs, v, dp, dropout_mask, a, vv);
        if (!st) st = keep(p, SG_OK, a);
        if (!st) st = keep(p, SG_OK, vv);
        return st;
    }
    sg_tensor *t = NULL, *same = NULL;
    bool       was = sg_grad_set_enabled(false);
    sg_status  st = aten_bernoulli_p(probs, 1.0 - dp, NULL, &t);
    if (!st) st = aten_div__Scalar(t, sg_scalar_float(1.0 - dp), &same);
    sg_grad_set_enabled(was);
    sg_tensor_release(same);
    if (!(st = keep(p, st, &t))) st = keep(p, aten_mul_Tensor(probs, t, a), a);
    *vv = v;
    return st;
}

static sg_status math_ad(sg_tensor *q, sg_tensor *k, sg_tensor *v, sg_tensor *mask, double dp,
                         sg_tensor *dropout_mask, bool causal, const double *scale, bool gqa,
                         bool bool_allows, sg_tensor **out, sg_tensor **attn_out) {
    sg_status st = sg_attn_check(q, k, v, mask, causal);
    if (st) return st;
    pool     p = {.n = 0};
    sg_dtype qt = (sg_dtype)q->dtype;
    sg_dtype cd = sg_compute_dtype(qt);
    sg_tensor *qc = q, *kc = k, *vc = v, *qs, *kt, *kts, *s, *m = NULL, *sm = NULL, *probs;
    sg_tensor *a = NULL, *vv = NULL, *o = NULL;
    if (cd != qt) {
        if ((st = keep(&p, aten_to_dtype(q, cd, false, false, NULL, &qc), &qc)) ||
            (st = keep(&p, aten_to_dtype(k, cd, false, false, NULL, &kc), &kc)) ||
            (st = keep(&p, aten_to_dtype(v, cd, false, false, NULL, &vc), &vc)))
            goto done;
    }
    if (gqa) {
        sg_tensor *k0 = NULL, *v0 = NULL; /* sg_attn_gqa checks the head counts */
        if ((st = sg_attn_gqa(q, k, v, &k0, &v0))) goto done;
        sg_tensor_release(k0);
        sg_tensor_release(v0);
        int64_t hq = q->sizes[q->ndim - 3];
        if ((st = repeat_heads(&p, kc, hq / kc->sizes[kc->ndim - 3], &kc)) ||
            (st = repeat_heads(&p, vc, hq / vc->sizes[vc->ndim - 3], &vc)))
            goto done;
    }
    double sc = scale ? fabs(*scale) : 1.0 / sqrt((double)q->sizes[q->ndim - 1]);
    double root = sqrt(sc), qroot = scale && *scale < 0 ? -root : root;
    int64_t L = q->sizes[q->ndim - 2], S = k->sizes[k->ndim - 2];
    if ((st = keep(&p, aten_mul_Scalar(qc, sg_scalar_float(qroot), &qs), &qs)) ||
        (st = keep(&p, aten_transpose_int(kc, -2, -1, &kt), &kt)) ||
        (st = keep(&p, aten_mul_Scalar(kt, sg_scalar_float(root), &kts), &kts)) ||
        (st = keep(&p, aten_matmul(qs, kts, &s), &s)) ||
        (st = additive_mask(&p, mask, causal, bool_allows, L, S, cd, q->device, &m)))
        goto done;
    if (m && (st = keep(&p, aten_add_Tensor(s, m, sg_scalar_int(1), &sm), &sm))) goto done;
    if ((st = keep(&p, aten__safe_softmax(m ? sm : s, -1, NULL, &probs), &probs)) ||
        (st = dropout(&p, probs, vc, dp, dropout_mask, &a, &vv)) ||
        (st = keep(&p, aten_matmul(a, vv, &o), &o)))
        goto done;
    sg_tensor *w = dropout_mask ? probs : a;
    if (cd == qt) {
        *out = sg_tensor_retain(o);
        if (attn_out) *attn_out = sg_tensor_retain(w);
    } else if (!(st = aten_to_dtype(o, qt, false, false, NULL, out)) && attn_out &&
               (st = aten_to_dtype(w, qt, false, false, NULL, attn_out))) {
        sg_tensor_release(*out);
        *out = NULL;
    }
done:
    drain(&p);
    return st;
}

static sg_status sdpa_ad(sg_keyset ks, sg_tensor *query, sg_tensor *key, sg_tensor *value,
                         sg_tensor *attn_mask, double dropout_p, bool is_causal,
                         const double *scale, bool enable_gqa, sg_tensor **ret) {
    (void)ks;
    return math_ad(query, key, value, attn_mask, dropout_p, NULL, is_causal, scale, enable_gqa,
                   true, ret, NULL);
}

static sg_status sdpa_math_ad(sg_keyset ks, sg_tensor *query, sg_tensor *key, sg_tensor *value,
                              sg_tensor *attn_mask, double dropout_p, bool is_causal,
                              sg_tensor *dropout_mask, const double *scale, bool enable_gqa,
                              sg_tensor **ret0, sg_tensor **ret1) {
    (void)ks;
    return math_ad(query, key, value, attn_mask, dropout_p, dropout_mask, is_causal, scale,
                   enable_gqa, false, ret0, ret1);
}

sg_status sg_cpu_register_attention_ad(void) {
    SG_REG_DECOMP(aten_scaled_dot_product_attention, sdpa_ad);
    SG_REG_DECOMP(aten__scaled_dot_product_attention_math, sdpa_math_ad);
    return SG_OK;
}
