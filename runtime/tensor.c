/* tensor.c: creating, releasing and describing tensors. Views are in view.c, copies in copy.c. */
#include "rt_internal.h"
#include "sg_dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Checks what every creation checks: rank, sizes, dtype. */
static sg_status check_shape(const char *fn, const int64_t *sizes, int32_t ndim, sg_dtype dtype) {
    if (ndim < 0 || ndim > SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "%s: %d dimensions (at most %d)", fn, ndim, SG_MAX_DIMS);
    if (!sg_dtype_valid((int)dtype)) return sg_error(SG_EINVAL, "%s: no dtype %d", fn, (int)dtype);
    for (int32_t i = 0; i < ndim; i++)
        if (sizes[i] < 0)
            return sg_error(SG_EINVAL, "%s: negative size %lld at dimension %d", fn,
                            (long long)sizes[i], i);
    return SG_OK;
}

int64_t sg__span_elems(const int64_t *sizes, const int64_t *strides, int32_t ndim) {
    int64_t span = 1;
    for (int32_t i = 0; i < ndim; i++) {
        if (sizes[i] == 0) return 0;
        span += (sizes[i] - 1) * strides[i];
    }
    return span;
}

/* Headers with room for 4 dims (nearly all) are kept on a short per-thread list when released
 * and reused. Rationale: malloc and free were most of the cost of a 1-element op. */
enum { SMALL_CAP = 4, KEEP_MAX = 64 };
static _Thread_local sg_tensor *kept;
static _Thread_local int        nkept;

static sg_tensor *header_new(int32_t cap) {
    if (cap == SMALL_CAP && kept) {
        sg_tensor *t = kept;
        kept = *(sg_tensor **)t;
        nkept--;
        return t;
    }
    return malloc(sizeof(sg_tensor) + 2 * (size_t)cap * sizeof(int64_t));
}

static void header_free(sg_tensor *t) {
    if (t->cap == SMALL_CAP && nkept < KEEP_MAX) {
        *(sg_tensor **)t = kept;
        kept = t;
        nkept++;
        return;
    }
    free(t);
}

void sg__tensor_cache_flush(void) {
    while (kept) {
        sg_tensor *next = *(sg_tensor **)kept;
        free(kept);
        kept = next;
    }
    nkept = 0;
}

sg_status sg__tensor_new(sg_storage *s, sg_dtype dtype, const int64_t *sizes,
                         const int64_t *strides, int32_t ndim, int64_t offset, sg_tensor **out) {
    /* Rationale: one allocation holds the header and its dims, so a view costs one malloc;
     * room for 4 dims at least, so an out= tensor can be resized to a few more in place. */
    int32_t    cap = ndim > SMALL_CAP ? ndim : SMALL_CAP;
    sg_tensor *t = header_new(cap);
    *out = NULL;
    if (!t) return sg_error(SG_ENOMEM, "out of memory");
    t->refs = 1;
    t->dtype = (uint8_t)dtype;
    t->flags = (uint8_t)(s->flags & SG_STORAGE_READ_ONLY);
    t->device = s->device;
    t->keys = sg_keyset_of_device(s->device);
    t->offset = offset;
    t->storage = s;
    t->ndim = ndim;
    t->cap = cap;
    t->sizes = (int64_t *)(t + 1);
    t->strides = t->sizes + cap;
    if (ndim) {
        memcpy(t->sizes, sizes, (size_t)ndim * sizeof *sizes);
        memcpy(t->strides, strides, (size_t)ndim * sizeof *strides);
    }
    __atomic_fetch_add(&s->refs, 1, __ATOMIC_RELAXED);
    *out = t;
    return SG_OK;
}

/* Bytes for n elements of dtype, or false on overflow. */
static bool bytes_of(int64_t n, sg_dtype dtype, size_t *out) {
    size_t es = sg_dtype_size(dtype);
    if (n < 0 || (uint64_t)n > SIZE_MAX / es) return false;
    *out = (size_t)n * es;
    return true;
}

/* A new tensor over fresh storage; sizes, strides and dtype checked by the caller. */
static sg_status empty_checked(const char *fn, const int64_t *sizes, const int64_t *strides,
                               int32_t ndim, sg_dtype dtype, sg_device dev, sg_tensor **out) {
    size_t nbytes;
    if (!bytes_of(sg__span_elems(sizes, strides, ndim), dtype, &nbytes))
        return sg_error(SG_EINVAL, "%s: the tensor is too large", fn);
    sg_storage *s;
    sg_status   st = sg__storage_new(dev, nbytes, &s);
    if (st) return st;
    st = sg__tensor_new(s, dtype, sizes, strides, ndim, 0, out);
    sg__storage_release(s);
    return st;
}

sg_status sg_tensor_empty_strided(const int64_t *sizes, const int64_t *strides, int32_t ndim,
                                  sg_dtype dtype, sg_device dev, sg_tensor **out) {
    *out = NULL;
    sg_status st = check_shape("empty_strided", sizes, ndim, dtype);
    if (st) return st;
    for (int32_t i = 0; i < ndim; i++)
        if (strides[i] < 0)
            return sg_error(SG_EINVAL, "empty_strided: negative stride %lld at dimension %d",
                            (long long)strides[i], i);
    return empty_checked("empty_strided", sizes, strides, ndim, dtype, dev, out);
}

/* Contiguous strides for sizes; false where the element count overflows. */
static bool contiguous_strides(const int64_t *sizes, int32_t ndim, int64_t *strides) {
    int64_t acc = 1;
    for (int32_t i = ndim - 1; i >= 0; i--) {
        strides[i] = acc;
        int64_t s = sizes[i] > 1 ? sizes[i] : 1;
        if (acc > INT64_MAX / s) return false;
        acc *= s;
    }
    return true;
}

sg_status sg_tensor_empty(const int64_t *sizes, int32_t ndim, sg_dtype dtype, sg_device dev,
                          sg_tensor **out) {
    int64_t   strides[SG_MAX_DIMS];
    sg_status st = check_shape("empty", sizes, ndim, dtype);
    *out = NULL;
    if (st) return st;
    if (!contiguous_strides(sizes, ndim, strides))
        return sg_error(SG_EINVAL, "empty: the tensor is too large");
    return empty_checked("empty", sizes, strides, ndim, dtype, dev, out);
}

sg_status sg_tensor_zeros(const int64_t *sizes, int32_t ndim, sg_dtype dtype, sg_device dev,
                          sg_tensor **out) {
    sg_status st = sg_tensor_empty(sizes, ndim, dtype, dev, out);
    if (st) return st;
    sg_storage *s = (*out)->storage;
    const sg_device_impl *impl = sg__device_impl((sg_device_type)dev.type);
    if (s->nbytes == 0 || !s->data) return SG_OK;
    if (impl->memset_zero) {
        st = impl->memset_zero(dev, s->data, s->nbytes);
    } else {
        void *zeros = calloc(1, s->nbytes);
        st = zeros ? impl->copy_from_host(dev, s->data, zeros, s->nbytes)
                   : sg_error(SG_ENOMEM, "out of memory");
        free(zeros);
    }
    if (st) {
        sg_tensor_release(*out);
        *out = NULL;
    }
    return st;
}

/* The release of memory whose owner gave no release function: the owner frees it. */
static void keep(sg_storage *s) { (void)s; }

sg_status sg_tensor_from_blob(void *data, const int64_t *sizes, const int64_t *strides,
                              int32_t ndim, sg_dtype dtype, sg_device dev, uint32_t flags,
                              void (*release)(sg_storage *s), void *ctx, sg_tensor **out) {
    int64_t   own[SG_MAX_DIMS];
    sg_status st = check_shape("from_blob", sizes, ndim, dtype);
    *out = NULL;
    if (st) return st;
    if ((unsigned)dev.type >= SG_DEV__COUNT)
        return sg_error(SG_EINVAL, "from_blob: device type %d does not exist", dev.type);
    if (!strides) {
        if (!contiguous_strides(sizes, ndim, own))
            return sg_error(SG_EINVAL, "from_blob: the tensor is too large");
        strides = own;
    }
    for (int32_t i = 0; i < ndim; i++)
        if (strides[i] < 0)
            return sg_error(SG_EINVAL, "from_blob: negative stride %lld at dimension %d (views "
                                       "with negative strides are not supported)",
                            (long long)strides[i], i);
    size_t nbytes;
    if (!bytes_of(sg__span_elems(sizes, strides, ndim), dtype, &nbytes))
        return sg_error(SG_EINVAL, "from_blob: the tensor is too large");
    sg_storage *s = calloc(1, sizeof *s);
    if (!s) return sg_error(SG_ENOMEM, "out of memory");
    s->refs = 1;
    s->flags = flags;
    s->device = dev;
    s->data = data;
    s->nbytes = nbytes;
    s->release = release ? release : keep;
    s->ctx = ctx;
    st = sg__tensor_new(s, dtype, sizes, strides, ndim, 0, out);
    if (st) s->release = keep; /* the caller keeps its memory when no tensor was made */
    sg__storage_release(s);
    return st;
}

sg_status sg_tensor_resize_(sg_tensor *t, const int64_t *sizes, int32_t ndim) {
    int64_t   strides[SG_MAX_DIMS];
    sg_status st = check_shape("resize_", sizes, ndim, (sg_dtype)t->dtype);
    if (st) return st;
    if (ndim > t->cap)
        return sg_error(SG_EUNSUPPORTED, "resize_: a tensor made with %d dimensions cannot be "
                                         "resized to %d",
                        t->ndim, ndim);
    if (!contiguous_strides(sizes, ndim, strides))
        return sg_error(SG_EINVAL, "resize_: the tensor is too large");
    size_t nbytes;
    if (!bytes_of(sg__span_elems(sizes, strides, ndim), (sg_dtype)t->dtype, &nbytes))
        return sg_error(SG_EINVAL, "resize_: the tensor is too large");
    size_t have = t->storage->nbytes > (size_t)t->offset * sg_dtype_size((sg_dtype)t->dtype)
                      ? t->storage->nbytes - (size_t)t->offset * sg_dtype_size((sg_dtype)t->dtype)
                      : 0;
    if (nbytes > have) {
        sg_storage *s;
        if ((st = sg__storage_new(t->device, nbytes, &s))) return st;
        sg__storage_release(t->storage);
        t->storage = s;
        t->offset = 0;
    }
    t->ndim = ndim;
    if (ndim) {
        memcpy(t->sizes, sizes, (size_t)ndim * sizeof *sizes);
        memcpy(t->strides, strides, (size_t)ndim * sizeof *strides);
    }
    return SG_OK;
}

void sg_tensor_release(sg_tensor *t) {
    if (!t || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    sg__storage_release(t->storage);
    header_free(t);
}

int64_t sg_tensor_span(const sg_tensor *t) { return sg__span_elems(t->sizes, t->strides, t->ndim); }

int64_t sg_tensor_numel(const sg_tensor *t) {
    int64_t n = 1;
    for (int32_t i = 0; i < t->ndim; i++) n *= t->sizes[i];
    return n;
}

size_t sg_tensor_nbytes(const sg_tensor *t) {
    return (size_t)sg_tensor_numel(t) * sg_dtype_size((sg_dtype)t->dtype);
}

bool sg_tensor_is_contiguous(const sg_tensor *t) {
    int64_t expected = 1;
    for (int32_t i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] == 0) return true;
        if (t->sizes[i] != 1 && t->strides[i] != expected) return false;
        expected *= t->sizes[i];
    }
    return true;
}

void sg_tensor_describe(const sg_tensor *t, char *buf, size_t n) {
    size_t k = 0;
    if (!n) return;
    buf[0] = '\0';
#define PUT(...)                                                              \
    do {                                                                      \
        int w_ = snprintf(buf + k, n - k, __VA_ARGS__);                       \
        if (w_ < 0 || (size_t)w_ >= n - k) return;                            \
        k += (size_t)w_;                                                      \
    } while (0)
    PUT("%s[", sg_dtype_name((sg_dtype)t->dtype));
    for (int32_t i = 0; i < t->ndim; i++) PUT("%s%lld", i ? ", " : "", (long long)t->sizes[i]);
    if (t->device.type == SG_DEV_CPU || t->device.type == SG_DEV_META)
        PUT("] on %s", sg_device_type_name((sg_device_type)t->device.type));
    else
        PUT("] on %s:%d", sg_device_type_name((sg_device_type)t->device.type), t->device.index);
#undef PUT
}
