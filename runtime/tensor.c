/* tensor.c: creating, releasing and describing tensors. Views are in view.c, copies in copy.c. */
#include "rt_internal.h"
#include "sg_dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What every creation checks before its strides are worked out: the out-pointer, the rank, the
 * sizes pointer and the dtype (the geometry itself is sg__geometry's). */
static sg_status check_new(const char *fn, const int64_t *sizes, int32_t ndim, sg_dtype dtype,
                           sg_tensor **out) {
    if (!out) return sg_error(SG_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (ndim < 0) return sg_error(SG_EINVAL, "%s: ndim %d is negative", fn, ndim);
    if (ndim > SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "%s: %d dimensions (at most %d)", fn, ndim, SG_MAX_DIMS);
    if (ndim && !sizes) return sg_error(SG_EINVAL, "%s: sizes is NULL with ndim %d", fn, ndim);
    if (!sg__dtype_size((int)dtype)) return sg_error(SG_EINVAL, "%s: no dtype %d", fn, (int)dtype);
    return SG_OK;
}

/* For a geometry sg__geometry accepted, so no sum or product here overflows. */
int64_t sg__span_elems(const int64_t *sizes, const int64_t *strides, int32_t ndim) {
    int64_t span = 1;
    for (int32_t i = 0; i < ndim; i++) {
        if (sizes[i] == 0) return 0;
        span += (sizes[i] - 1) * strides[i];
    }
    return span;
}

/* Headers with room for 4 dims (nearly all) are kept on a short per-thread list when released
 * and reused. Rationale: malloc and free were most of the cost of a 1-element op.
 * The list is linked through the storage field, so a kept header's refs stays 0 and a second
 * release of it is detected (sg_tensor_release). Off under ASan (SG_RT_KEEP). */
enum { SMALL_CAP = 4, KEEP_MAX = 64 };
static _Thread_local sg_tensor *kept;
static _Thread_local int        nkept;

static sg_tensor *next_kept(const sg_tensor *t) { return (sg_tensor *)(void *)t->storage; }

static sg_tensor *header_new(int32_t cap) {
    if (SG_RT_KEEP && cap == SMALL_CAP && kept) {
        sg_tensor *t = kept;
        kept = next_kept(t);
        nkept--;
        return t; /* its ag is NULL: a header is released without autograd state */
    }
    sg_tensor *t = malloc(sizeof(sg_tensor) + 2 * (size_t)cap * sizeof(int64_t));
    if (t) t->ag = NULL;
    return t;
}

/* Whether t's dims are in its header's own allocation (else sg__reserve_dims moved them). */
static bool dims_inline(const sg_tensor *t) { return t->sizes == (int64_t *)(void *)(t + 1); }

static void header_free(sg_tensor *t) {
    if (!dims_inline(t)) {
        free(t->sizes);
        free(t);
        return;
    }
    if (SG_RT_KEEP && t->cap == SMALL_CAP && nkept < KEEP_MAX) {
        t->storage = (sg_storage *)(void *)kept;
        kept = t;
        nkept++;
        return;
    }
    free(t);
}

void sg__tensor_cache_flush(void) {
    while (kept) {
        sg_tensor *next = next_kept(kept);
        free(kept);
        kept = next;
    }
    nkept = 0;
}

/* A header with refs 1 and the geometry given, over storage s (not retained here; NULL: none). */
static sg_status header_make(sg_storage *s, sg_dtype dtype, sg_device dev, uint8_t flags,
                             const int64_t *sizes, const int64_t *strides, int32_t ndim,
                             int64_t offset, sg_tensor **out) {
    /* Rationale: one allocation holds the header and its dims, so a view costs one malloc;
     * room for 4 dims at least, so an out= tensor can be resized to a few more in place. */
    int32_t    cap = ndim > SMALL_CAP ? ndim : SMALL_CAP;
    sg_tensor *t = header_new(cap);
    *out = NULL;
    if (!t) return sg_error(SG_ENOMEM, "out of memory");
    *t = (sg_tensor){.refs = 1, .dtype = (uint8_t)dtype, .flags = flags, .device = dev,
                     .keys = sg__keyset_of_device(dev), .offset = offset, .storage = s,
                     .ndim = ndim, .cap = cap, .ag = NULL};
    t->sizes = (int64_t *)(t + 1);
    t->strides = t->sizes + cap;
    /* a loop, not memcpy: nearly every tensor has a few dims, fewer than a call costs */
    for (int32_t i = 0; i < ndim; i++) t->sizes[i] = sizes[i], t->strides[i] = strides[i];
    *out = t;
    return SG_OK;
}

sg_status sg__tensor_new(sg_storage *s, sg_dtype dtype, const int64_t *sizes,
                         const int64_t *strides, int32_t ndim, int64_t offset, sg_tensor **out) {
    sg_status st = header_make(s, dtype, s->device, (uint8_t)(s->flags & SG_STORAGE_READ_ONLY),
                               sizes, strides, ndim, offset, out);
    if (!st) __atomic_fetch_add(&s->refs, 1, __ATOMIC_RELAXED);
    return st;
}

sg_status sg__tensor_meta(const sg_tensor *t, sg_tensor **out) {
    sg_status st = header_make(NULL, (sg_dtype)t->dtype, t->device, t->flags, t->sizes,
                               t->strides, t->ndim, t->offset, out);
    if (!st) (*out)->keys = t->keys;
    return st;
}

/* A new tensor over fresh storage for a geometry its caller checked (sg__geometry or
 * sg__contiguous_strides), e its extent. */
static sg_status empty_checked(const char *fn, const int64_t *sizes, const int64_t *strides,
                               int32_t ndim, sg_dtype dtype, sg_device dev, const sg__extent *e,
                               sg_tensor **out) {
    sg_storage *s;
    sg_status   st = sg__storage_new(dev, (size_t)e->need, &s);
    if (st) return sg_error(st, "%s: %s", fn, sg_last_error());
    /* the header takes over the new storage's one reference */
    st = header_make(s, dtype, dev, 0, sizes, strides, ndim, 0, out);
    if (st) sg__storage_release(s);
    return st;
}

sg_status sg_tensor_empty_strided(const int64_t *sizes, const int64_t *strides, int32_t ndim,
                                  sg_dtype dtype, sg_device dev, sg_tensor **out) {
    const char *fn = "empty_strided";
    sg__extent  e;
    sg_status   st = check_new(fn, sizes, ndim, dtype, out);
    if (st || (st = sg__geometry(fn, sizes, strides, ndim, 0, sg_dtype_size(dtype), &e)))
        return st;
    return empty_checked(fn, sizes, strides, ndim, dtype, dev, &e, out);
}

/* empty, with its failures reported as fn's. */
static sg_status empty(const char *fn, const int64_t *sizes, int32_t ndim, sg_dtype dtype,
                       sg_device dev, sg_tensor **out) {
    int64_t    strides[SG_MAX_DIMS];
    sg__extent e;
    sg_status  st = check_new(fn, sizes, ndim, dtype, out);
    if (st || (st = sg__contiguous_strides(fn, sizes, ndim, sg__dtype_size(dtype), strides, &e)))
        return st;
    return empty_checked(fn, sizes, strides, ndim, dtype, dev, &e, out);
}

sg_status sg_tensor_empty(const int64_t *sizes, int32_t ndim, sg_dtype dtype, sg_device dev,
                          sg_tensor **out) {
    return empty("empty", sizes, ndim, dtype, dev, out);
}

sg_status sg_tensor_zeros(const int64_t *sizes, int32_t ndim, sg_dtype dtype, sg_device dev,
                          sg_tensor **out) {
    sg_status st = empty("zeros", sizes, ndim, dtype, dev, out);
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
        return sg_error(st, "zeros: %s", sg_last_error());
    }
    return SG_OK;
}

/* The release of memory whose owner gave no release function: the owner frees it. */
static void keep(sg_storage *s) { (void)s; }

sg_status sg_tensor_from_blob(void *data, const int64_t *sizes, const int64_t *strides,
                              int32_t ndim, sg_dtype dtype, sg_device dev, uint32_t flags,
                              void (*release)(sg_storage *s), void *ctx, sg_tensor **out) {
    const char *fn = "from_blob";
    int64_t     own[SG_MAX_DIMS];
    sg__extent  e;
    sg_status   st = check_new(fn, sizes, ndim, dtype, out);
    if (st) return st;
    if ((unsigned)dev.type >= SG_DEV__COUNT)
        return sg_error(SG_EINVAL, "%s: device type %d does not exist", fn, dev.type);
    if (flags & ~(uint32_t)SG_STORAGE_READ_ONLY)
        return sg_error(SG_EINVAL, "%s: unknown storage flags 0x%x (only SG_STORAGE_READ_ONLY "
                                   "is defined)", fn, flags & ~(unsigned)SG_STORAGE_READ_ONLY);
    st = strides ? sg__geometry(fn, sizes, strides, ndim, 0, sg_dtype_size(dtype), &e)
                 : sg__contiguous_strides(fn, sizes, ndim, sg_dtype_size(dtype), own, &e);
    if (st) return st;
    if (!strides) strides = own;
    if (!data && e.need && dev.type != SG_DEV_META)
        return sg_error(SG_EINVAL, "%s: data is NULL for a tensor of %lld elements", fn,
                        (long long)e.numel);
    sg_storage *s = calloc(1, sizeof *s);
    if (!s) return sg_error(SG_ENOMEM, "out of memory");
    s->refs = 1;
    s->flags = flags;
    s->device = dev;
    s->data = data;
    s->nbytes = (size_t)e.need;
    s->release = release ? release : keep;
    s->ctx = ctx;
    st = sg__tensor_new(s, dtype, sizes, strides, ndim, 0, out);
    if (st) s->release = keep; /* the caller keeps its memory when no tensor was made */
    sg__storage_release(s);
    return st;
}

/* Makes room for ndim dims in t. Rationale: a header holds its dims in its own allocation, so a
 * view costs one malloc; the rare in-place resize or view past that room moves them to an
 * allocation of their own (freed with the header) instead of refusing. */
sg_status sg__reserve_dims(const char *fn, sg_tensor *t, int32_t ndim) {
    if (ndim <= t->cap) return SG_OK;
    int64_t *d = malloc(2 * (size_t)ndim * sizeof *d);
    if (!d) return sg_error(SG_ENOMEM, "%s: out of memory", fn);
    if (t->ndim) {
        memcpy(d, t->sizes, (size_t)t->ndim * sizeof *d);
        memcpy(d + ndim, t->strides, (size_t)t->ndim * sizeof *d);
    }
    if (!dims_inline(t)) free(t->sizes);
    t->sizes = d;
    t->strides = d + ndim;
    t->cap = ndim;
    return SG_OK;
}

sg_status sg_tensor_resize_out_(sg_tensor *t, const int64_t *sizes, int32_t ndim) {
    return sg_tensor_resize_out_strided_(t, sizes, NULL, ndim);
}

sg_status sg_tensor_resize_out_strided_(sg_tensor *t, const int64_t *sizes,
                                        const int64_t *strides, int32_t ndim) {
    bool same = t && sizes && t->ndim == ndim;
    for (int32_t d = 0; same && d < ndim; d++) same = t->sizes[d] == sizes[d];
    if (same) return SG_OK;
    sg_status st = sg_tensor_resize_(t, sizes, ndim);
    if (!st && strides) st = sg_tensor_as_strided_(t, sizes, strides, ndim, t->offset);
    return st;
}

sg_status sg_tensor_resize_(sg_tensor *t, const int64_t *sizes, int32_t ndim) {
    const char *fn = "resize_";
    int64_t     strides[SG_MAX_DIMS];
    sg__extent  e;
    sg_status   st;
    if (!t) return sg_error(SG_EINVAL, "%s: the tensor is NULL", fn);
    size_t es = sg_dtype_size((sg_dtype)t->dtype);
    if ((st = check_new(fn, sizes, ndim, (sg_dtype)t->dtype, &(sg_tensor *){NULL})) ||
        (st = sg__contiguous_strides(fn, sizes, ndim, es, strides, &e)) ||
        (st = sg__reserve_dims(fn, t, ndim)))
        return st;
    /* The view keeps its offset where the storage holds it there, else it gets new storage. */
    int64_t at = 0;
    bool    fits = e.numel == 0 || (sg__add(t->offset, e.span, &at) &&
                                    sg__mul(at, (int64_t)es, &at) &&
                                    (uint64_t)at <= t->storage->nbytes);
    if (!fits) {
        sg_storage *s;
        if ((st = sg__storage_new(t->device, (size_t)e.need, &s))) return st;
        s->version = t->storage->version; /* saved values compare against it (autograd) */
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

static SG_COLD void released_twice(int32_t r) {
    sg_error(SG_ESTATE, "sg_tensor_release: the tensor was released already (its reference "
                        "count is %d): a release without a reference",
             (int)r + 1);
}

/* Rationale: the count is checked below zero, not only at zero, for a branch on the common path:
 * a header released once too often (while kept for reuse, its refs stays 0) is reported, not
 * freed twice. */
void sg_tensor_release(sg_tensor *t) {
    if (!t) return;
    int32_t r = sg__unref(&t->refs);
    if (SG_LIKELY(r != 0)) {
        if (SG_UNLIKELY(r < 0)) released_twice(r);
        return;
    }
    if (SG_UNLIKELY(t->ag)) sg__ag_meta_free(t);
    sg__storage_release(t->storage);
    header_free(t);
}

/* A tensor made by this runtime has a numel and a byte size that fit in int64 (sg__geometry);
 * the checks below keep that true of a tensor whose fields a caller wrote itself. */
int64_t sg_tensor_span(const sg_tensor *t) {
    int64_t span = 1, step;
    if (!t) return 0;
    for (int32_t i = 0; i < t->ndim; i++)
        if (t->sizes[i] == 0) return 0;
    for (int32_t i = 0; i < t->ndim; i++)
        if (!sg__mul(t->sizes[i] - 1, t->strides[i], &step) || !sg__add(span, step, &span))
            return INT64_MAX;
    return span;
}

int64_t sg_tensor_numel(const sg_tensor *t) {
    int64_t n = 1;
    if (!t) return 0;
    for (int32_t i = 0; i < t->ndim; i++)
        if (!sg__mul(n, t->sizes[i], &n)) return INT64_MAX;
    return n;
}

size_t sg_tensor_nbytes(const sg_tensor *t) {
    int64_t n;
    if (!t) return 0;
    return sg__mul(sg_tensor_numel(t), (int64_t)sg_dtype_size((sg_dtype)t->dtype), &n)
               ? (size_t)n
               : SIZE_MAX;
}

bool sg_tensor_is_contiguous(const sg_tensor *t) {
    int64_t expected = 1;
    if (!t) return false;
    for (int32_t i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] == 0) return true;
        if (t->sizes[i] != 1 && t->strides[i] != expected) return false;
        if (!sg__mul(expected, t->sizes[i], &expected)) return false;
    }
    return true;
}

bool sg_tensor_is_dense(const sg_tensor *t) {
    if (!t) return false;
    int32_t perm[SG_MAX_DIMS], n = t->ndim;
    if (n == 1) return t->sizes[0] < 2 || t->strides[0] == 1;
    for (int32_t i = 0; i < n; i++) perm[i] = i;
    for (int32_t i = 1; i < n; i++) /* insertion sort: sizes below 2 last, the rest by stride */
        for (int32_t j = i; j > 0; j--) {
            int32_t a = perm[j], b = perm[j - 1];
            bool    less = t->sizes[a] >= 2 && (t->sizes[b] < 2 || t->strides[a] < t->strides[b]);
            if (!less) break;
            perm[j] = b, perm[j - 1] = a;
        }
    int64_t require = 1;
    for (int32_t i = 0; i < n; i++) {
        int64_t size = t->sizes[perm[i]];
        if (size < 2) return true;
        if (t->strides[perm[i]] != require) return false;
        require *= size;
    }
    return true;
}

bool sg_tensor_overlaps(const sg_tensor *t) {
    for (int32_t i = 0; t && i < t->ndim; i++)
        if (t->sizes[i] > 1 && t->strides[i] == 0) return true;
    return false;
}

void sg_tensor_describe(const sg_tensor *t, char *buf, size_t n) {
    size_t k = 0;
    if (!buf || !n) return;
    buf[0] = '\0';
#define PUT(...)                                                              \
    do {                                                                      \
        int w_ = snprintf(buf + k, n - k, __VA_ARGS__);                       \
        if (w_ < 0 || (size_t)w_ >= n - k) return;                            \
        k += (size_t)w_;                                                      \
    } while (0)
    if (!t) {
        PUT("(null tensor)");
        return;
    }
    PUT("%s[", sg_dtype_name((sg_dtype)t->dtype));
    for (int32_t i = 0; i < t->ndim; i++) PUT("%s%lld", i ? ", " : "", (long long)t->sizes[i]);
    if (t->device.type == SG_DEV_CPU || t->device.type == SG_DEV_META)
        PUT("] on %s", sg_device_type_name((sg_device_type)t->device.type));
    else
        PUT("] on %s:%d", sg_device_type_name((sg_device_type)t->device.type), t->device.index);
#undef PUT
}
