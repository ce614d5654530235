/* attention.cu: scaled_dot_product_attention and _scaled_dot_product_attention_math on CUDA,
 * composed from dispatched aten ops as aten's math path composes them:
 *     out = softmax(q . k^T * scale + mask) . v
 * The CPU's kernel (kernels/cpu/attention.c) is the specification; it is registered for the CPU
 * key only and runs its softmax pass on host memory, so CUDA needs its own. Here every step is
 * an op of the CUDA backend: matmul (over this backend's bmm, cuBLASLt), mul_ for the scale,
 * full + triu_ + masked_fill_ for the causal mask, logical_not + masked_fill_ for a bool mask,
 * add_ for a float mask, _softmax, and amax + eq + masked_fill_ to give zeros for rows whose
 * scores are all -inf (aten's _safe_softmax). Semantics as the CPU's:
 *  - float16 and bfloat16 are computed in float32 and rounded once at the end, float64 in
 *    float64;
 *  - scale None is 1 / sqrt(E); is_causal keeps j <= i (top-left aligned) and refuses an
 *    explicit mask beside it; a bool mask says who takes part (sdpa) or is added as 0/1
 *    (_scaled_dot_product_attention_math called directly); a float mask is added;
 *  - enable_gqa repeats each key/value head for Hq / Hkv consecutive query heads;
 *  - dropout_p > 0 drops weights after the softmax, by the shared step of sg_attention.h
 *    (bernoulli on this backend's Philox generator, or the dropout_mask given). */
#include "cu.cuh"
#include "sg_attention.h"

#include <math.h>

namespace {

/* Tensors to release at the end. */
struct pool {
    sg_tensor *t[32];
    int        n = 0;
    sg_tensor *keep(sg_tensor *x) {
        if (n < (int)(sizeof t / sizeof t[0])) t[n++] = x;
        return x;
    }
    ~pool() {
        while (n) sg_tensor_release(t[--n]);
    }
};

/* t repeated `rep` times along dim -3, each head kept together (repeat_interleave). */
sg_status repeat_heads(pool &p, sg_tensor *t, int64_t rep, sg_tensor **out) {
    int32_t    n = t->ndim;
    int64_t    sizes[SG_MAX_DIMS + 1];
    sg_tensor *u, *e, *c;
    sg_status  st;
    if ((st = sg_tensor_unsqueeze(t, n - 2, &u))) return st; /* [..., H, 1, S, E] */
    p.keep(u);
    memcpy(sizes, u->sizes, (size_t)(n + 1) * sizeof *sizes);
    sizes[n - 2] = rep;
    if ((st = sg_tensor_expand(u, sizes, n + 1, &e))) return st;
    p.keep(e);
    if ((st = sg_tensor_contiguous(e, &c))) return st;
    p.keep(c);
    memcpy(sizes, t->sizes, (size_t)n * sizeof *sizes);
    sizes[n - 3] *= rep;
    if ((st = sg_tensor_view(c, sizes, n, out))) return st;
    p.keep(*out);
    return SG_OK;
}

/* aten's pre_process_group_query_attention_input. */
sg_status gqa(pool &p, const sg_tensor *q, sg_tensor **k, sg_tensor **v) {
    const sg_tensor *ts[3] = {q, *k, *v}; /* aten reads size(-3) of each */
    for (int i = 0; i < 3; i++)
        if (ts[i]->ndim < 3)
            return sg_error(SG_EINVAL, "Dimension out of range (expected to be in range of [-%d, "
                                       "%d], but got -3)",
                            ts[i]->ndim, ts[i]->ndim - 1);
    int64_t hq = q->sizes[q->ndim - 3], hk = (*k)->sizes[(*k)->ndim - 3],
            hv = (*v)->sizes[(*v)->ndim - 3];
    if (hq == hk && hk == hv) return SG_OK;
    if (hk == 0 || hv == 0 || hq % hk || hq % hv)
        return sg_error(SG_EINVAL, /* aten's words, cut short as in aten */
                        "Number of heads in key and value must divide the number of heads in ");
    sg_status st;
    if (hq != hk && (st = repeat_heads(p, *k, hq / hk, k))) return st;
    if (hq != hv && (st = repeat_heads(p, *v, hq / hv, v))) return st;
    return SG_OK;
}

/* The mask must broadcast to the scores' shape without growing it (as an in-place add takes
 * it), with the CPU's messages. */
sg_status mask_fits(const sg_tensor *mask, const sg_tensor *scores) {
    char    a[256], b[256];
    int32_t n = scores->ndim > mask->ndim ? scores->ndim : mask->ndim;
    int64_t shape[SG_MAX_DIMS];
    if (n > SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "scaled_dot_product_attention: attn_mask has too many dims");
    for (int32_t i = n - 1; i >= 0; i--) {
        int32_t is = i - (n - scores->ndim), im = i - (n - mask->ndim);
        int64_t ss = is >= 0 ? scores->sizes[is] : 1, sm = im >= 0 ? mask->sizes[im] : 1;
        if (ss != sm && ss != 1 && sm != 1)
            return sg_error(SG_EINVAL, "The size of tensor a (%lld) must match the size of tensor "
                                       "b (%lld) at non-singleton dimension %d",
                            (long long)ss, (long long)sm, i);
        shape[i] = ss == 1 ? sm : ss;
    }
    bool same = n == scores->ndim;
    for (int32_t i = 0; same && i < n; i++) same = shape[i] == scores->sizes[i];
    if (!same)
        return sg_error(SG_EINVAL, "output with shape %s doesn't match the broadcast shape %s",
                        sg_shape_str(scores->sizes, scores->ndim, a, sizeof a),
                        sg_shape_str(shape, n, b, sizeof b));
    return SG_OK;
}

/* Calls an in-place op and drops the extra reference it returns. */
template <class F> sg_status inplace(F &&f) {
    sg_tensor *same = nullptr;
    sg_status  st = f(&same);
    sg_tensor_release(same);
    return st;
}

/* out (and attn where wanted); bool_allows: a bool mask says who takes part (sdpa) rather than
 * being added as 0/1 (_scaled_dot_product_attention_math). */
sg_status attention(sg_tensor *q, sg_tensor *k, sg_tensor *v, sg_tensor *mask, double dropout_p,
                    sg_tensor *dropout_mask, bool is_causal, const double *scale, bool enable_gqa,
                    bool bool_allows, sg_tensor **out, sg_tensor **attn_out) {
    sg_status st = sg_attn_check(q, k, v, mask, is_causal);
    if (st) return st;
    sg_dtype qt = dtype_of(q);
    sg_cu_guard guard(q->device);
    sg_dtype    cd = qt == SG_FLOAT64 ? SG_FLOAT64 : SG_FLOAT32;
    pool        p;
    sg_tensor  *qc, *kc, *vc, *kt, *s, *scores, *probs, *o, *a, *vd;
    const sg_scalar ninf = sg_scalar_float(-INFINITY);
    if ((st = sg_cast(q, cd, &qc))) return st;
    p.keep(qc);
    if ((st = sg_cast(k, cd, &kc))) return st;
    p.keep(kc);
    if ((st = sg_cast(v, cd, &vc))) return st;
    p.keep(vc);
    if (enable_gqa && (st = gqa(p, qc, &kc, &vc))) return st;
    if ((st = sg_tensor_transpose(kc, -2, -1, &kt))) return st;
    p.keep(kt);
    if ((st = aten_matmul(qc, kt, &s))) return st;
    p.keep(s);
    if ((st = sg_tensor_contiguous(s, &scores))) return st; /* a fresh tensor: ours to write */
    p.keep(scores);
    int32_t nd = scores->ndim;
    int64_t L = scores->sizes[nd - 2], S = scores->sizes[nd - 1];
    double  sc = scale ? *scale : 1.0 / sqrt((double)q->sizes[q->ndim - 1]);
    if (sc != 1.0 && (st = inplace([&](sg_tensor **r) {
                          return aten_mul__Scalar(scores, sg_scalar_float(sc), r);
                      })))
        return st;
    bool maybe_empty_rows = false; /* whether a row may be all -inf (masks can do that) */
    if (is_causal) {
        /* True above the diagonal: the positions j > i that causal attention leaves out */
        int64_t     sizes[2] = {L, S};
        sg_dtype    bt = SG_BOOL;
        sg_device   dev = scores->device;
        sg_tensor  *m;
        if ((st = aten_full(sg_int_list{sizes, 2}, sg_scalar_bool(true), &bt, nullptr, &dev,
                            nullptr, &m)))
            return st;
        p.keep(m);
        if ((st = inplace([&](sg_tensor **r) { return aten_triu_(m, 1, r); })) ||
            (st = inplace([&](sg_tensor **r) {
                 return aten_masked_fill__Scalar(scores, m, ninf, r);
             })))
            return st;
    } else if (mask) {
        if ((st = mask_fits(mask, scores))) return st;
        maybe_empty_rows = true;
        if (mask->dtype == SG_BOOL && bool_allows) {
            sg_tensor *drop;
            if ((st = aten_logical_not(mask, &drop))) return st;
            p.keep(drop);
            if ((st = inplace([&](sg_tensor **r) {
                     return aten_masked_fill__Scalar(scores, drop, ninf, r);
                 })))
                return st;
        } else {
            sg_tensor *mc;
            if ((st = sg_cast(mask, cd, &mc))) return st;
            p.keep(mc);
            if ((st = inplace([&](sg_tensor **r) {
                     return aten_add__Tensor(scores, mc, sg_scalar_int(1), r);
                 })))
                return st;
        }
    }
    if ((st = aten__softmax(scores, -1, false, &probs))) return st;
    p.keep(probs);
    if (maybe_empty_rows && sg_tensor_numel(scores) > 0) {
        /* softmax of a row of -inf is NaN; aten's _safe_softmax gives zeros there (a row with a
         * NaN score keeps its NaN: its max is NaN, not -inf) */
        int64_t    last = -1;
        sg_tensor *mx, *empty;
        if ((st = aten_amax(scores, sg_int_list{&last, 1}, true, &mx))) return st;
        p.keep(mx);
        if ((st = aten_eq_Scalar(mx, ninf, &empty))) return st;
        p.keep(empty);
        if ((st = inplace([&](sg_tensor **r) {
                 return aten_masked_fill__Scalar(probs, empty, sg_scalar_int(0), r);
             })))
            return st;
    }
    if ((st = sg_attn_dropout(probs, vc, dropout_p, dropout_mask, &a, &vd))) return st;
    p.keep(a);
    p.keep(vd);
    if ((st = aten_matmul(a, vd, &o))) return st;
    p.keep(o);
    if ((st = sg_cast(o, qt, out))) return st;
    if (attn_out && (st = sg_cast(dropout_mask ? probs : a, qt, attn_out))) {
        sg_tensor_release(*out);
        *out = nullptr;
    }
    return st;
}

sg_status sdpa_fn(sg_keyset ks, sg_tensor *query, sg_tensor *key, sg_tensor *value,
                  sg_tensor *attn_mask, double dropout_p, bool is_causal, const double *scale,
                  bool enable_gqa, sg_tensor **ret) {
    (void)ks;
    return attention(query, key, value, attn_mask, dropout_p, nullptr, is_causal, scale,
                     enable_gqa, true, ret, nullptr);
}

sg_status sdpa_math_fn(sg_keyset ks, sg_tensor *query, sg_tensor *key, sg_tensor *value,
                       sg_tensor *attn_mask, double dropout_p, bool is_causal,
                       sg_tensor *dropout_mask, const double *scale, bool enable_gqa,
                       sg_tensor **ret0, sg_tensor **ret1) {
    (void)ks;
    return attention(query, key, value, attn_mask, dropout_p, dropout_mask, is_causal, scale,
                     enable_gqa, false, ret0, ret1);
}

} // namespace

extern "C" sg_status sg_cu_register_attention(void) {
    SG_CU_REG(aten_scaled_dot_product_attention, sdpa_fn);
    SG_CU_REG(aten__scaled_dot_product_attention_math, sdpa_math_fn);
    return SG_OK;
}
