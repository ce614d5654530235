/* checks.c: the argument checks shared by every family of kernels (sg_checks.h). */
#include "sg_checks.h"

sg_status sg_not_implemented(const char *kernel, sg_dtype t) {
    return sg_error(SG_EUNSUPPORTED, "\"%s\" not implemented for '%s'", kernel,
                    sg_aten_type_name(t));
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
