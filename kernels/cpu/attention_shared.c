/* attention_shared.c: scaled_dot_product_attention's checks and dropout step, one copy for the
 * CPU and CUDA kernels (sg_attention.h). */
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
    if (qt != SG_FLOAT16 && qt != SG_BFLOAT16 && qt != SG_FLOAT32 && qt != SG_FLOAT64)
        return sg_error(SG_EUNSUPPORTED, "scaled_dot_product_attention: expected query, key and "
                                         "value of a floating dtype, but got %s",
                        sg_meta_type_name(qt));
    if (is_causal && mask)
        return sg_error(SG_EINVAL, "_scaled_dot_product_attention: Explicit attn_mask should not "
                                   "be set when is_causal=True");
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
