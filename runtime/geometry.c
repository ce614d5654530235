/* geometry.c: the checks every tensor's sizes, strides and offset pass where the tensor is made
 * (rt_internal.h). Rationale: kernels compute offsets from a tensor's geometry per element and
 * unchecked; checking once here, with every product and sum overflow-checked, is what lets them.
 */
#include "rt_internal.h"

#include <stdio.h>

const char *sg__shape_str(char *buf, size_t n, const int64_t *v, int32_t ndim) {
    size_t k = 0;
    int    w = snprintf(buf, n, "[");
    for (int32_t i = 0; v && w >= 0 && (size_t)w < n - k && i < ndim; i++) {
        k += (size_t)w;
        w = snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)v[i]);
    }
    if (w >= 0 && (size_t)w < n - k) {
        k += (size_t)w;
        snprintf(buf + k, n - k, "]");
    }
    return buf;
}

static sg_status too_large(const char *fn, const int64_t *sizes, const int64_t *strides,
                           int32_t ndim, int64_t offset) {
    char a[256], b[256];
    return sg_error(SG_EINVAL,
                    "%s: the tensor is too large: sizes %s, strides %s and storage offset %lld "
                    "reach past what 64-bit byte offsets can address",
                    fn, sg__shape_str(a, sizeof a, sizes, ndim),
                    sg__shape_str(b, sizeof b, strides, ndim), (long long)offset);
}

sg_status sg__geometry(const char *fn, const int64_t *sizes, const int64_t *strides, int32_t ndim,
                       int64_t offset, size_t itemsize, sg__extent *out) {
    if (ndim < 0) return sg_error(SG_EINVAL, "%s: ndim %d is negative", fn, ndim);
    if (ndim > SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "%s: %d dimensions (at most %d)", fn, ndim, SG_MAX_DIMS);
    if (ndim && !sizes) return sg_error(SG_EINVAL, "%s: sizes is NULL with ndim %d", fn, ndim);
    if (ndim && !strides)
        return sg_error(SG_EINVAL, "%s: strides is NULL with ndim %d", fn, ndim);
    if (offset < 0)
        return sg_error(SG_EINVAL, "%s: negative storage offset %lld", fn, (long long)offset);
    int64_t numel = 1, span = 1, step, es = (int64_t)itemsize, bytes;
    bool    ok = itemsize <= INT64_MAX;
    for (int32_t i = 0; i < ndim; i++) {
        if (sizes[i] < 0)
            return sg_error(SG_EINVAL, "%s: negative size %lld at dimension %d", fn,
                            (long long)sizes[i], i);
        if (strides[i] < 0)
            return sg_error(SG_EINVAL,
                            "%s: negative stride %lld at dimension %d (negative strides are not "
                            "supported)",
                            fn, (long long)strides[i], i);
        ok = ok && sg__mul(numel, sizes[i], &numel);
        if (sizes[i]) ok = ok && sg__mul(sizes[i] - 1, strides[i], &step) && sg__add(span, step, &span);
    }
    /* An empty view may start anywhere (PyTorch's rule), but its offset in bytes must still be
     * a number: sg_tensor_data computes it. */
    ok = ok && sg__mul(numel, es, &bytes) && sg__mul(offset, es, &step);
    if (ok && numel == 0) {
        span = 0;
        bytes = 0;
    } else if (ok) {
        ok = sg__add(offset, span, &bytes) && sg__mul(bytes, es, &bytes);
    }
    if (!ok) return too_large(fn, sizes, strides, ndim, offset);
    out->numel = numel;
    out->span = span;
    out->need = bytes;
    return SG_OK;
}

/* sg__contiguous_strides' refusal, out of line so the common path keeps a small frame. */
static SG_COLD sg_status contiguous_error(const char *fn, const int64_t *sizes, int32_t ndim) {
    for (int32_t i = ndim - 1; i >= 0; i--)
        if (sizes[i] < 0)
            return sg_error(SG_EINVAL, "%s: negative size %lld at dimension %d", fn,
                            (long long)sizes[i], i);
    char a[256];
    return sg_error(SG_EINVAL, "%s: the tensor is too large: sizes %s hold more than 2^63 bytes",
                    fn, sg__shape_str(a, sizeof a, sizes, ndim));
}

sg_status sg__contiguous_strides(const char *fn, const int64_t *sizes, int32_t ndim,
                                 size_t itemsize, int64_t *strides, sg__extent *out) {
    int64_t acc = 1, numel = 1, bytes;
    bool    ok = itemsize <= INT64_MAX;
    for (int32_t i = ndim - 1; i >= 0; i--) {
        int64_t n = sizes[i];
        if (n < 0) return contiguous_error(fn, sizes, ndim);
        strides[i] = acc;
        ok = ok && sg__mul(acc, n > 1 ? n : 1, &acc);
        numel = n ? numel : 0;
    }
    if (!ok || !sg__mul(numel ? acc : 0, (int64_t)itemsize, &bytes))
        return contiguous_error(fn, sizes, ndim);
    out->numel = numel ? acc : 0;
    out->span = out->numel;
    out->need = bytes;
    return SG_OK;
}

sg_status sg__check_in_storage(const char *fn, const int64_t *sizes, const int64_t *strides,
                               int32_t ndim, int64_t offset, size_t itemsize,
                               const sg__extent *e, const sg_storage *s) {
    char a[256], b[256];
    if ((uint64_t)e->need <= s->nbytes) return SG_OK;
    return sg_error(SG_EINVAL,
                    "%s: sizes %s, strides %s, storage offset %lld and itemsize %zu need a "
                    "storage of %lld bytes, but it has %zu",
                    fn, sg__shape_str(a, sizeof a, sizes, ndim),
                    sg__shape_str(b, sizeof b, strides, ndim), (long long)offset, itemsize,
                    (long long)e->need, s->nbytes);
}
