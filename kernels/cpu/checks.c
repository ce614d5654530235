/* checks.c: the argument checks shared by every family of kernels (sg_checks.h). */
#include "sg_checks.h"

#include <float.h>
#include <math.h>

sg_status sg_not_implemented(const char *kernel, sg_dtype t) {
    return sg_error(SG_EUNSUPPORTED, "\"%s\" not implemented for '%s'", kernel,
                    sg_dtype_c10_name(t));
}

sg_status sg_check_dim(const char *op, int64_t *dim, int64_t ndim) {
    int64_t n = ndim > 0 ? ndim : 1;
    if (*dim < -n || *dim >= n)
        return sg_error(SG_EINVAL,
                        "%s: dimension out of range (expected to be in range of [%lld, %lld], "
                        "but got %lld)",
                        op, (long long)-n, (long long)(n - 1), (long long)*dim);
    if (*dim < 0) *dim += n;
    return SG_OK;
}

sg_status sg_check_wrap_dim(int64_t *dim, int32_t ndim) {
    int64_t d = *dim;
    if (sg_wrap_dim(dim, ndim)) return SG_OK;
    int32_t n = ndim > 0 ? ndim : 1;
    return sg_error(SG_EINVAL, "Dimension out of range (expected to be in range of [%d, %d], "
                               "but got %lld)",
                    -n, n - 1, (long long)d);
}

sg_status sg_check_out_dtype(const sg_tensor *out, sg_dtype want) {
    if ((sg_dtype)out->dtype == want) return SG_OK;
    return sg_error(SG_EINVAL, "Expected out tensor to have dtype %s, but got %s instead",
                    sg_meta_type_name(want), sg_meta_type_name((sg_dtype)out->dtype));
}

bool sg_scalar_overflows(sg_scalar v, sg_dtype t) {
    if (t == SG_BOOL || v.kind == SG_SCALAR_BOOL) return false;
    if (v.kind == SG_SCALAR_COMPLEX && !sg_dtype_is_complex(t) && v.u.c.im != 0) return true;
    if (sg_dtype_is_integral(t, false)) {
        /* aten's bounds (uint8's low one is -255): a new integral dtype needs its own here */
        _Static_assert(SG_DTYPE__COUNT == 12, "lo and hi need a row for a new integral dtype");
        static const double lo[] = {[SG_UINT8] = -255.0, [SG_INT8] = INT8_MIN,
                                    [SG_INT16] = INT16_MIN, [SG_INT32] = INT32_MIN,
                                    [SG_INT64] = -9.2233720368547758e18};
        static const double hi[] = {[SG_UINT8] = UINT8_MAX, [SG_INT8] = INT8_MAX,
                                    [SG_INT16] = INT16_MAX, [SG_INT32] = INT32_MAX,
                                    [SG_INT64] = 9.2233720368547758e18};
        if (v.kind == SG_SCALAR_INT)
            return t != SG_INT64 && ((double)v.u.i < lo[t] || (double)v.u.i > hi[t]);
        double d = sg_scalar_to_double(v);
        return !isfinite(d) || d < lo[t] || d > hi[t];
    }
    if (v.kind == SG_SCALAR_INT) return false;
    double d = sg_scalar_to_double(v);
    if (isinf(d) || isnan(d) || t == SG_FLOAT64 || t == SG_COMPLEX128) return false;
    double max = t == SG_FLOAT16 ? 65504.0 : t == SG_BFLOAT16 ? 3.3895313892515355e38 : FLT_MAX;
    return fabs(d) > max;
}

bool sg_may_overlap(const sg_tensor *a, const sg_tensor *b) {
    if (a->storage->data != b->storage->data || !a->storage->data) return false;
    int64_t ea = (int64_t)sg_dtype_size(dtype_of(a)), eb = (int64_t)sg_dtype_size(dtype_of(b));
    int64_t sa = sg_tensor_span(a), sb = sg_tensor_span(b);
    if (!sa || !sb) return false;
    int64_t a0 = a->offset * ea, a1 = a0 + sa * ea, b0 = b->offset * eb, b1 = b0 + sb * eb;
    return a0 < b1 && b0 < a1;
}

bool sg_same_view(const sg_tensor *a, const sg_tensor *b) {
    if (a == b) return true;
    if (a->storage->data != b->storage->data || a->offset != b->offset || a->ndim != b->ndim ||
        a->dtype != b->dtype)
        return false;
    for (int32_t i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i] || (a->sizes[i] > 1 && a->strides[i] != b->strides[i]))
            return false;
    return true;
}
