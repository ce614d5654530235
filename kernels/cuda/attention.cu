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
    if (enable_gqa) {
        if ((st = sg_attn_gqa(qc, kc, vc, &kc, &vc))) return st;
        p.keep(kc);
        p.keep(vc);
    }
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
        if ((st = sg_attn_mask_fits(mask, scores))) return st;
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
    return sg_attn_outputs(o, dropout_mask ? probs : a, qt, out, attn_out);
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
