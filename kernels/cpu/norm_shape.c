/* norm_shape.c: the norms' argument checks and parameter dtypes, and rms_norm's composite
 * (sg_norm_shape.h). */
#include "sg_norm_shape.h"

#include "cpu.h"

#include <float.h>
#include <stdio.h>

sg_status sg_norm_check_group_inputs(const sg_tensor *input, const sg_tensor *w,
                                     const sg_tensor *b, int64_t C, int64_t groups) {
    char x[256], y[256];
    if (groups <= 0)
        return sg_error(SG_EINVAL, "Expected num groups to be greater than 0, got %lld",
                        (long long)groups);
    if (C % groups != 0)
        return sg_error(SG_EINVAL, "Expected number of channels in input to be divisible by "
                                   "num_groups, but got input of shape %s and num_groups=%lld",
                        sg_shape_str(input->sizes, input->ndim, x, sizeof x), (long long)groups);
    if (w && !(w->ndim == 1 && w->sizes[0] == C))
        return sg_error(SG_EINVAL, "Expected weight to be a vector of size equal to the number of "
                                   "channels in input, but got weight of shape %s and input of "
                                   "shape %s",
                        sg_shape_str(w->sizes, w->ndim, x, sizeof x),
                        sg_shape_str(input->sizes, input->ndim, y, sizeof y));
    if (b && !(b->ndim == 1 && b->sizes[0] == C))
        return sg_error(SG_EINVAL, "Expected bias to be a vector of size equal to the number of "
                                   "channels in input, but got bias of shape %s and input of "
                                   "shape %s",
                        sg_shape_str(b->sizes, b->ndim, x, sizeof x),
                        sg_shape_str(input->sizes, input->ndim, y, sizeof y));
    return SG_OK;
}

/* aten's _check_layer_norm_inputs (and _check_rms_norm_inputs: bias NULL): M rows of N. */
sg_status sg_norm_check_inputs(const sg_tensor *input, sg_int_list ns, const sg_tensor *w,
                               const sg_tensor *b, int64_t *M, int64_t *N) {
    char x[256], y[256];
    if (ns.len < 1)
        return sg_error(SG_EINVAL, "Expected normalized_shape to be at least 1-dimensional, i.e., "
                                   "containing at least one element, but got normalized_shape = "
                                   "[]");
    if (w && !sg_norm_shape_eq(w->sizes, w->ndim, ns.items, ns.len))
        return sg_error(SG_EINVAL, "Expected weight to be of same shape as normalized_shape, but "
                                   "got weight of shape %s and normalized_shape = %s",
                        sg_shape_str(w->sizes, w->ndim, x, sizeof x),
                        sg_shape_str(ns.items, ns.len, y, sizeof y));
    if (b && !sg_norm_shape_eq(b->sizes, b->ndim, ns.items, ns.len))
        return sg_error(SG_EINVAL, "Expected bias to be of same shape as normalized_shape, but "
                                   "got bias of shape %s and normalized_shape = %s",
                        sg_shape_str(b->sizes, b->ndim, x, sizeof x),
                        sg_shape_str(ns.items, ns.len, y, sizeof y));
    int32_t axis = input->ndim - ns.len;
    if (axis < 0 || !sg_norm_shape_eq(input->sizes + axis, ns.len, ns.items, ns.len)) {
        char   want[256];
        size_t o = (size_t)snprintf(want, sizeof want, "[*");
        for (int32_t i = 0; i < ns.len && o < sizeof want; i++)
            o += (size_t)snprintf(want + o, sizeof want - o, ", %lld", (long long)ns.items[i]);
        if (o < sizeof want) snprintf(want + o, sizeof want - o, "]");
        return sg_error(SG_EINVAL, "Given normalized_shape=%s, expected input with shape %s, but "
                                   "got input of size%s",
                        sg_shape_str(ns.items, ns.len, x, sizeof x), want,
                        sg_shape_str(input->sizes, input->ndim, y, sizeof y));
    }
    *M = 1, *N = 1;
    for (int32_t i = 0; i < axis; i++) *M *= input->sizes[i];
    for (int32_t i = axis; i < input->ndim; i++) *N *= input->sizes[i];
    return SG_OK;
}

bool sg_norm_is_float(sg_dtype t) {
    return sg_dtype_is_floating(t);
}

/* aten's is_mixed_type / check_mixed_data_type: the parameters are "mixed" where the first one
 * given (weight, else bias) differs in dtype from the input; then every parameter must be
 * float32 and the input float16 or bfloat16, and the statistics are float32. Otherwise every
 * parameter must have the input's dtype. *pd gets the dtype of mean and rstd. */
sg_status sg_norm_param_dtype(const sg_tensor *x, const sg_tensor *w, const sg_tensor *b,
                              sg_dtype *pd) {
    sg_dtype         xt = dtype_of(x);
    const sg_tensor *first = w ? w : b, *ps[2] = {w, b};
    if (first && first->dtype != xt) {
        for (int i = 0; i < 2; i++)
            if (ps[i] && ps[i]->dtype != SG_FLOAT32)
                return sg_error(SG_EINVAL, "mixed dtype (CPU): expect parameter to have scalar "
                                           "type of Float");
        if (xt != SG_FLOAT16 && xt != SG_BFLOAT16)
            return sg_error(SG_EINVAL, "mixed dtype (CPU): all inputs must share same datatype.");
        *pd = SG_FLOAT32;
        return SG_OK;
    }
    for (int i = 0; i < 2; i++)
        if (ps[i] && ps[i]->dtype != xt)
            return sg_error(SG_EINVAL, "expected scalar type %s but found %s", sg_dtype_c10_name(xt),
                            sg_dtype_c10_name(dtype_of(ps[i])));
    *pd = xt;
    return SG_OK;
}

bool sg_norm_shape_eq(const int64_t *a, int32_t na, const int64_t *b, int32_t nb) {
    if (na != nb) return false;
    for (int32_t i = 0; i < na; i++)
        if (a[i] != b[i]) return false;
    return true;
}

/* the statistics' shape: input's, with size 1 over the normalized dims */
static void stat_shape(const sg_tensor *input, int32_t nnorm, int64_t *stat) {
    int32_t axis = input->ndim - nnorm;
    for (int32_t i = 0; i < input->ndim; i++) stat[i] = i < axis ? input->sizes[i] : 1;
}

sg_status sg_norm_layer_checks(const sg_tensor *input, sg_int_list ns, const sg_tensor *w,
                               const sg_tensor *b, sg_dtype *pt, int64_t *M, int64_t *N,
                               int64_t *stat) {
    sg_status st;
    if ((st = sg_norm_param_dtype(input, w, b, pt)) ||
        (st = sg_norm_check_inputs(input, ns, w, b, M, N)))
        return st;
    if (!sg_norm_is_float(dtype_of(input)))
        return sg_not_implemented("LayerNormKernelImpl", dtype_of(input));
    stat_shape(input, ns.len, stat);
    return SG_OK;
}

sg_status sg_norm_group_checks(const sg_tensor *input, const sg_tensor *w, const sg_tensor *b,
                               int64_t N, int64_t C, int64_t HxW, int64_t group, sg_dtype *pt) {
    sg_status st;
    if ((st = sg_norm_check_group_inputs(input, w, b, C, group)) ||
        (st = sg_norm_param_dtype(input, w, b, pt)))
        return st;
    if (N < 0 || C < 0 || HxW < 0 || sg_tensor_numel(input) != N * C * HxW)
        return sg_error(SG_EINVAL, "Expected X.numel() == N * C * HxW to be true, but got false.  "
                                   "(Could this error message be improved?  If so, please report "
                                   "an enhancement request to PyTorch.)");
    if (!sg_norm_is_float(dtype_of(input)))
        return sg_not_implemented("GroupNormKernelImpl", dtype_of(input));
    return SG_OK;
}

sg_status sg_norm_rms_checks(const sg_tensor *input, sg_int_list ns, const sg_tensor *w,
                             int64_t *M, int64_t *N, int64_t *stat) {
    sg_status st = sg_norm_check_inputs(input, ns, w, NULL, M, N);
    if (st) return st;
    if (!sg_norm_is_float(dtype_of(input)))
        return sg_not_implemented("rms_norm", dtype_of(input));
    stat_shape(input, ns.len, stat);
    return SG_OK;
}

sg_status sg_norm_rms_composite(sg_tensor *input, sg_int_list ns, sg_tensor *weight,
                                const double *eps, sg_tensor **out, sg_tensor **rstd_out) {
    sg_dtype xt = dtype_of(input);
    *out = NULL;
    if (rstd_out) *rstd_out = NULL;
    if (!sg_norm_is_float(xt)) return sg_not_implemented("rms_norm", xt);
    if (ns.len > SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "rms_norm: normalized_shape has %d dims, more than %d",
                        ns.len, SG_MAX_DIMS);
    int64_t dims[SG_MAX_DIMS];
    for (int32_t i = 0; i < ns.len; i++) dims[i] = (int64_t)input->ndim - i - 1;
    sg_int_list dl = {dims, ns.len};
    sg_dtype    acc = xt == SG_FLOAT64 ? SG_FLOAT64 : SG_FLOAT32;
    /* eps as aten's rms_norm_composite holds it: in the input's own dtype (its scalar_t) */
    double      e = sg_round_to(xt, eps ? *eps : acc == SG_FLOAT64 ? DBL_EPSILON : FLT_EPSILON);
    sg_tensor  *x = NULL, *sq = NULL, *ms = NULL, *rstd = NULL, *y = NULL, *t = NULL;
    sg_status   st = sg_cast(input, acc, &x);
    if (!st) st = aten_pow_Tensor_Scalar(x, sg_scalar_int(2), &sq);
    if (!st) st = aten_mean_dim(sq, &dl, true, NULL, &ms);
    if (!st) st = aten_add__Scalar(ms, sg_scalar_float(e), sg_scalar_int(1), &t);
    sg_tensor_release(t), t = NULL;
    if (!st) st = aten_rsqrt(ms, &rstd);
    if (!st) st = aten_mul_Tensor(x, rstd, &t);
    if (!st) st = sg_cast(t, xt, &y);
    sg_tensor_release(t), t = NULL;
    if (!st && weight) {
        st = aten_mul_Tensor(y, weight, &t);
        sg_tensor_release(y), y = NULL;
        if (!st) st = sg_cast(t, xt, &y);
        sg_tensor_release(t);
    }
    sg_tensor_release(ms), sg_tensor_release(sq), sg_tensor_release(x);
    if (st) {
        sg_tensor_release(y), sg_tensor_release(rstd);
        return st;
    }
    *out = y;
    if (rstd_out) *rstd_out = rstd;
    else sg_tensor_release(rstd);
    return SG_OK;
}
