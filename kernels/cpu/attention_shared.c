/* attention_shared.c: scaled_dot_product_attention's checks and its device-generic steps, one
 * copy for the CPU and CUDA kernels (sg_attention.h). */
#include "sg_attention.h"

#include "aten.h"

sg_status sg_attn_check(const sg_tensor *q, const sg_tensor *k, const sg_tensor *v,
                        const sg_tensor *mask, bool is_causal) {
    if (q->dtype != k->dtype || q->dtype != v->dtype)
        return sg_error(SG_EINVAL, "Expected query, key, and value to have the same dtype, but "
                                   "got query.dtype: %s key.dtype: %s and value.dtype: %s "
                                   "instead.",
                        sg_meta_type_name(dtype_of(q)), sg_meta_type_name(dtype_of(k)),
                        sg_meta_type_name(dtype_of(v)));
    if (!sg_device_eq(q->device, k->device) || !sg_device_eq(q->device, v->device))
        return sg_error(SG_EINVAL, "Expected query, key, and value to have the same device type, "
                                   "but got query.device: %s key.device: %s and value.device: %s "
                                   "instead.",
                        sg_device_type_name((sg_device_type)q->device.type),
                        sg_device_type_name((sg_device_type)k->device.type),
                        sg_device_type_name((sg_device_type)v->device.type));
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
        return sg_error(SG_EINVAL, "Expected query, key, and value to all be  at least 2 "
                                   "dimensional, but got query.dim: %d key.dim: %d and value.dim: "
                                   "%d instead.",
                        q->ndim, k->ndim, v->ndim);
    if (mask && mask->dtype != SG_BOOL && mask->dtype != SG_FLOAT32 && mask->dtype != q->dtype)
        return sg_error(SG_EINVAL, "Expected attn_mask dtype to be bool or float or to match query "
                                   "dtype, but got attn_mask.dtype: %s and  query.dtype: %s "
                                   "instead.",
                        sg_meta_type_name(dtype_of(mask)), sg_meta_type_name(dtype_of(q)));
    sg_dtype qt = dtype_of(q);
    if (!sg_dtype_is_floating(qt))
        return sg_error(SG_EUNSUPPORTED, "scaled_dot_product_attention: expected query, key and "
                                         "value of a floating dtype, but got %s",
                        sg_meta_type_name(qt));
    if (is_causal && mask)
        return sg_error(SG_EINVAL, "_scaled_dot_product_attention: Explicit attn_mask should not "
                                   "be set when is_causal=True");
    return SG_OK;
}

/* t repeated `rep` times along dim -3, each head kept together (repeat_interleave); the
 * intermediate views are released (the result holds the storage). */
static sg_status repeat_heads(sg_tensor *t, int64_t rep, sg_tensor **out) {
    int32_t    n = t->ndim;
    int64_t    sizes[SG_MAX_DIMS + 1];
    sg_tensor *u = NULL, *e = NULL, *c = NULL;
    sg_status  st;
    *out = NULL;
    if (!(st = sg_tensor_unsqueeze(t, n - 2, &u))) { /* [..., H, 1, S, E] */
        memcpy(sizes, u->sizes, (size_t)(n + 1) * sizeof *sizes);
        sizes[n - 2] = rep;
        st = sg_tensor_expand(u, sizes, n + 1, &e);
    }
    if (!st) st = sg_tensor_contiguous(e, &c);
    if (!st) {
        memcpy(sizes, t->sizes, (size_t)n * sizeof *sizes);
        sizes[n - 3] *= rep;
        st = sg_tensor_view(c, sizes, n, out);
    }
    sg_tensor_release(c);
    sg_tensor_release(e);
    sg_tensor_release(u);
    return st;
}

sg_status sg_attn_gqa(const sg_tensor *q, sg_tensor *k, sg_tensor *v, sg_tensor **ko,
                      sg_tensor **vo) {
    const sg_tensor *ts[3] = {q, k, v}; /* aten reads size(-3) of each */
    for (int i = 0; i < 3; i++)
        if (ts[i]->ndim < 3)
            return sg_error(SG_EINVAL, "Dimension out of range (expected to be in range of [-%d, "
                                       "%d], but got -3)",
                            ts[i]->ndim, ts[i]->ndim - 1);
    int64_t hq = q->sizes[q->ndim - 3], hk = k->sizes[k->ndim - 3], hv = v->sizes[v->ndim - 3];
    if (hq != hk || hk != hv) {
        if (hk == 0 || hv == 0 || hq % hk || hq % hv)
            return sg_error(SG_EINVAL, /* aten's words, cut short as in aten */
                            "Number of heads in key and value must divide the number of heads "
                            "in ");
    }
    sg_tensor *kr = NULL, *vr = NULL;
    sg_status  st = hq != hk ? repeat_heads(k, hq / hk, &kr) : SG_OK;
    if (!st && hq == hk) kr = sg_tensor_retain(k);
    if (!st) st = hq != hv ? repeat_heads(v, hq / hv, &vr) : SG_OK;
    if (!st && hq == hv) vr = sg_tensor_retain(v);
    if (st) {
        sg_tensor_release(kr);
        sg_tensor_release(vr);
        return st;
    }
    *ko = kr;
    *vo = vr;
    return SG_OK;
}

sg_status sg_attn_mask_fits(const sg_tensor *mask, const sg_tensor *scores) {
    char    a[256], b[256];
    int32_t n = scores->ndim > mask->ndim ? scores->ndim : mask->ndim; /* <= SG_MAX_DIMS */
    int64_t shape[SG_MAX_DIMS];
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

sg_status sg_attn_dropout(sg_tensor *probs, sg_tensor *v, double p, sg_tensor *dropout_mask,
                          sg_tensor **a, sg_tensor **vv) {
    sg_status  st = SG_OK;
    sg_tensor *t = NULL;
    *a = *vv = NULL;
    if (p > 1 && !dropout_mask) /* aten's dropout checks; the masked path does not */
        return sg_error(SG_EINVAL, "dropout probability has to be between 0 and 1, but got %g", p);
    if (p > 0 && dropout_mask) {
        /* aten scales v rather than the weights here */
        if (!(st = aten_logical_not(dropout_mask, &t)) &&
            !(st = aten_masked_fill_Scalar(probs, t, sg_scalar_int(0), a)))
            st = aten_mul_Scalar(v, sg_scalar_float(1.0 / (1.0 - p)), vv);
    } else if (p > 0 && p < 1) {
        sg_tensor *same = NULL;
        if (!(st = aten_bernoulli_p(probs, 1.0 - p, NULL, &t)) &&
            !(st = aten_div__Scalar(t, sg_scalar_float(1.0 - p), &same)))
            st = aten_mul_Tensor(probs, t, a);
        sg_tensor_release(same);
    } else if (p == 1) { /* aten's dropout multiplies by a zero there (NaN stays NaN) */
        st = aten_mul_Scalar(probs, sg_scalar_int(0), a);
    } else {
        *a = sg_tensor_retain(probs);
    }
    sg_tensor_release(t);
    if (!st && !*vv) *vv = sg_tensor_retain(v);
    if (st) {
        sg_tensor_release(*a);
        sg_tensor_release(*vv);
        *a = *vv = NULL;
    }
    return st;
}

sg_status sg_attn_outputs(sg_tensor *o, sg_tensor *w, sg_dtype qt, sg_tensor **out,
                          sg_tensor **attn_out) {
    sg_status st = sg_cast(o, qt, out);
    if (!st && attn_out && (st = sg_cast(w, qt, attn_out))) {
        sg_tensor_release(*out);
        *out = NULL;
    }
    return st;
}
