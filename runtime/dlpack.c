/* dlpack.c: DLPack export and import without copies (sg_dlpack.h). */
#include "sg_dlpack.h"
#include "rt_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- who holds which managed tensor ------------------------------------------------------
 * Sets of addresses: the managed tensors this runtime exported and whose deleter has not
 * run yet, and the managed tensors it imported whose tensor is still alive. Rationale: DLPack
 * passes ownership by convention only; these sets are what lets a second call of an export's
 * deleter, or a second import of a managed tensor that a tensor owns already, be refused with
 * an error instead of freeing or handing the producer's memory to two owners. An address is
 * only known while it is live: a managed tensor freed and then used again is beyond them (ASan
 * reports that). Exports and imports are rare next to ops, so one lock serves both. */
typedef struct live_node {
    const void       *p;
    struct live_node *next;
} live_node;

enum { LIVE_BUCKETS = 256 };
typedef struct live_set {
    live_node *b[LIVE_BUCKETS];
} live_set;

/* Exports are kept by kind (versioned, legacy): a managed tensor is only read as the kind it
 * was made. */
static live_set        exports_v, exports_l, imports;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static live_node **live_find(live_set *set, const void *p) {
    uintptr_t   h = (uintptr_t)p;
    live_node **at = &set->b[((h >> 4) ^ (h >> 12)) % LIVE_BUCKETS];
    while (*at && (*at)->p != p) at = &(*at)->next;
    return at;
}

/* Adds p; false where it is there already (*had set) or memory ran out (*had clear). */
static bool live_add(live_set *set, const void *p, bool *had) {
    live_node *n = malloc(sizeof *n);
    pthread_mutex_lock(&live_lock);
    live_node **at = live_find(set, p);
    *had = *at != NULL;
    if (!*had && n) {
        n->p = p;
        n->next = NULL;
        *at = n;
        n = NULL;
    }
    bool added = !*had && !n;
    pthread_mutex_unlock(&live_lock);
    if (!added) free(n);
    return added;
}

/* Removes p; false where it was not there. */
static bool live_remove(live_set *set, const void *p) {
    pthread_mutex_lock(&live_lock);
    live_node **at = live_find(set, p), *n = *at;
    if (n) *at = n->next;
    pthread_mutex_unlock(&live_lock);
    free(n);
    return n != NULL;
}

/* ---- the two tables both directions read ------------------------------------------------- */

/* sg_dtype -> DLPack type; lanes 0 marks a number that is no dtype. Import searches it. bool
 * is one byte per element, as PyTorch's. */
#define DL_TYPE(NAME, NUM, KIND, SIZE, CTYPE, SUF, DL, ...) \
    [SG_##NAME] = {SG_DL_##DL, 8 * (SIZE), 1},
static const sg_dl_data_type dl_types[SG_DTYPE__END] = {SG_DTYPES(DL_TYPE)};
#undef DL_TYPE

/* sg_device_type -> DLPack device type; 0 where DLPack has none (Meta, PrivateUse). */
static const int32_t dl_devices[SG_DEV__COUNT] = {
    [SG_DEV_CPU]  = SG_DL_CPU,
    [SG_DEV_CUDA] = SG_DL_CUDA,
};
_Static_assert(SG_DEV__COUNT == 6, "dl_devices needs an entry for each new sg_device_type");

/* The specification's names, for messages: that is what the producer's author knows. */
static const char *dl_device_name(int32_t t) {
    static const char *const names[] = {
        [SG_DL_CPU] = "kDLCPU",           [SG_DL_CUDA] = "kDLCUDA",
        [SG_DL_CUDA_HOST] = "kDLCUDAHost", [SG_DL_OPENCL] = "kDLOpenCL",
        [SG_DL_VULKAN] = "kDLVulkan",     [SG_DL_METAL] = "kDLMetal",
        [SG_DL_VPI] = "kDLVPI",           [SG_DL_ROCM] = "kDLROCM",
        [SG_DL_ROCM_HOST] = "kDLROCMHost", [SG_DL_EXT_DEV] = "kDLExtDev",
        [SG_DL_CUDA_MANAGED] = "kDLCUDAManaged", [SG_DL_ONEAPI] = "kDLOneAPI",
        [SG_DL_WEBGPU] = "kDLWebGPU",     [SG_DL_HEXAGON] = "kDLHexagon",
        [SG_DL_MAIA] = "kDLMAIA",
    };
    const char *n = t >= 0 && (size_t)t < sizeof names / sizeof *names ? names[t] : NULL;
    return n ? n : "an unknown device type";
}

static const char *dl_code_name(unsigned c) {
    static const char *const names[] = {"kDLInt",   "kDLUInt",    "kDLFloat", "kDLOpaqueHandle",
                                        "kDLBfloat", "kDLComplex", "kDLBool"};
    return c < sizeof names / sizeof *names ? names[c] : "an unknown type code";
}

/* ---- export ------------------------------------------------------------------------------ */

/* What an exported managed tensor owns, in one allocation. manager_ctx is the tensor it holds a
 * reference to; dims holds shape, then strides. */
typedef struct export_v {
    sg_dl_managed_tensor_versioned m; /* first, so the deleter's self is the allocation */
    int64_t                        dims[];
} export_v;

typedef struct export_legacy {
    sg_dl_managed_tensor m;
    int64_t              dims[];
} export_legacy;

/* A deleter called for a managed tensor that is no live export of ours: reported, not freed. */
static void delete_refused(const char *fn) {
    sg_error(SG_ESTATE, "%s: the managed tensor was deleted already (its deleter runs once)", fn);
}

static void delete_versioned(sg_dl_managed_tensor_versioned *self) {
    if (!self) return;
    if (!live_remove(&exports_v, self)) {
        delete_refused("to_dlpack_versioned's deleter");
        return;
    }
    sg_tensor_release(self->manager_ctx);
    free((export_v *)self);
}

static void delete_legacy(sg_dl_managed_tensor *self) {
    if (!self) return;
    if (!live_remove(&exports_l, self)) {
        delete_refused("to_dlpack's deleter");
        return;
    }
    sg_tensor_release(self->manager_ctx);
    free((export_legacy *)self);
}

/* Records a new export h (fn's); on failure frees it and drops its reference. */
static sg_status export_live(const char *fn, live_set *set, void *h, sg_tensor *t) {
    bool had;
    if (live_add(set, h, &had)) return SG_OK;
    sg_tensor_release(t);
    free(h);
    return sg_error(SG_ENOMEM, "%s: out of memory", fn);
}

/* Fills dl from t but for shape and strides; fails where DLPack cannot describe t. */
static sg_status describe(const char *fn, const sg_tensor *t, void *out, sg_dl_tensor *dl) {
    if (!t || !out)
        return sg_error(SG_EINVAL, "%s: the tensor and the out-pointer are required", fn);
    sg_device_type dt = (sg_device_type)t->device.type;
    if (dt == SG_DEV_META)
        return sg_error(SG_EUNSUPPORTED, "%s: a meta tensor holds no memory, so DLPack cannot "
                                         "export it", fn);
    if ((unsigned)dt >= SG_DEV__COUNT || !dl_devices[dt])
        return sg_error(SG_EUNSUPPORTED, "%s: DLPack has no device type for %s tensors, so they "
                                         "cannot be exported", fn, sg_device_type_name(dt));
    if (!sg_dtype_valid(t->dtype)) return sg_error(SG_EINVAL, "%s: no dtype %d", fn, t->dtype);
    if (!dl_types[t->dtype].lanes) /* a dtype added without its row in dl_types */
        return sg_error(SG_EUNSUPPORTED, "%s: %s has no DLPack type", fn,
                        sg_dtype_name((sg_dtype)t->dtype));
    /* Rationale: data at the first element and byte_offset 0, as PyTorch exports, because
     * consumers of CUDA memory often refuse a non-zero byte_offset. */
    dl->data = sg_tensor_data(t);
    dl->device = (sg_dl_device){dl_devices[dt], dt == SG_DEV_CPU ? 0 : t->device.index};
    dl->ndim = t->ndim;
    dl->dtype = dl_types[t->dtype];
    dl->shape = dl->strides = NULL;
    dl->byte_offset = 0;
    return SG_OK;
}

/* Points dl's shape and strides at dims (2 * ndim entries the managed tensor owns). Rationale:
 * strides are always given, since DLPack 1.2 forbids NULL ones and older consumers accept them. */
static void fill_dims(const sg_tensor *t, sg_dl_tensor *dl, int64_t *dims) {
    size_t n = (size_t)t->ndim;
    if (n) {
        memcpy(dims, t->sizes, n * sizeof *dims);
        memcpy(dims + n, t->strides, n * sizeof *dims);
    }
    dl->shape = dims;
    dl->strides = dims + n;
}

sg_status sg_tensor_to_dlpack_versioned(sg_tensor *t, sg_dl_managed_tensor_versioned **out) {
    const char  *fn = "to_dlpack_versioned";
    sg_dl_tensor dl;
    if (out) *out = NULL;
    sg_status st = describe(fn, t, out, &dl);
    if (st) return st;
    export_v *h = malloc(sizeof *h + 2 * (size_t)t->ndim * sizeof(int64_t));
    if (!h) return sg_error(SG_ENOMEM, "%s: out of memory", fn);
    h->m.version = (sg_dl_version){SG_DLPACK_MAJOR, SG_DLPACK_MINOR};
    h->m.manager_ctx = sg_tensor_retain(t);
    h->m.deleter = delete_versioned;
    h->m.flags = sg_tensor_writable(t) ? 0 : SG_DLPACK_FLAG_READ_ONLY;
    h->m.dl_tensor = dl;
    fill_dims(t, &h->m.dl_tensor, h->dims);
    if ((st = export_live(fn, &exports_v, h, t))) return st;
    *out = &h->m;
    return SG_OK;
}

sg_status sg_tensor_to_dlpack(sg_tensor *t, sg_dl_managed_tensor **out) {
    const char  *fn = "to_dlpack";
    sg_dl_tensor dl;
    if (out) *out = NULL;
    sg_status st = describe(fn, t, out, &dl);
    if (st) return st;
    if (!sg_tensor_writable(t))
        return sg_error(SG_EINVAL, "%s: the tensor is read-only and a legacy DLManagedTensor "
                                   "cannot say so; use sg_tensor_to_dlpack_versioned", fn);
    export_legacy *h = malloc(sizeof *h + 2 * (size_t)t->ndim * sizeof(int64_t));
    if (!h) return sg_error(SG_ENOMEM, "%s: out of memory", fn);
    h->m.dl_tensor = dl;
    h->m.manager_ctx = sg_tensor_retain(t);
    h->m.deleter = delete_legacy;
    fill_dims(t, &h->m.dl_tensor, h->dims);
    if ((st = export_live(fn, &exports_l, h, t))) return st;
    *out = &h->m;
    return SG_OK;
}

/* ---- import ------------------------------------------------------------------------------ */

/* The storage's release: hands the managed tensor back to its producer (after it leaves the
 * set of imports, since the deleter may free it and a new one may take its address). */
static void release_versioned(sg_storage *s) {
    sg_dl_managed_tensor_versioned *m = s->ctx;
    live_remove(&imports, m);
    if (m->deleter) m->deleter(m);
}

static void release_legacy(sg_storage *s) {
    sg_dl_managed_tensor *m = s->ctx;
    live_remove(&imports, m);
    if (m->deleter) m->deleter(m);
}

/* Where m is a live export of this runtime of the kind asked for, the tensor it holds (its
 * memory is known); *other says whether it is a live export of the other kind. */
static const sg_tensor *exported_tensor(const void *m, bool versioned, bool *other) {
    const sg_tensor *t = NULL;
    pthread_mutex_lock(&live_lock);
    if (*live_find(versioned ? &exports_v : &exports_l, m))
        t = versioned ? ((const sg_dl_managed_tensor_versioned *)m)->manager_ctx
                      : ((const sg_dl_managed_tensor *)m)->manager_ctx;
    *other = *live_find(versioned ? &exports_l : &exports_v, m) != NULL;
    pthread_mutex_unlock(&live_lock);
    return t;
}

/* Checks dl and makes a tensor over its memory whose storage calls release(ctx) at the end.
 * Every check comes before sg_tensor_from_blob, so a failure leaves m with the caller. */
static sg_status import(const char *fn, const sg_dl_tensor *dl, uint32_t flags,
                        void (*release)(sg_storage *s), void *ctx, const sg_tensor *known,
                        sg_tensor **out) {
    int64_t  own[SG_MAX_DIMS];
    int32_t  ndim = dl->ndim;
    sg_dtype dtype = SG_DTYPE__END;

    if (ndim < 0 || ndim > SG_MAX_DIMS)
        return sg_error(ndim < 0 ? SG_EINVAL : SG_EUNSUPPORTED,
                        "%s: ndim %d is out of range (0 to %d)", fn, ndim, SG_MAX_DIMS);

    if (dl->dtype.lanes != 1)
        return sg_error(SG_EUNSUPPORTED, "%s: vector dtypes are not supported (lanes %u, "
                                         "expected 1)", fn, (unsigned)dl->dtype.lanes);
    for (int d = 0; d < SG_DTYPE__END; d++)
        if (dl_types[d].lanes && dl_types[d].code == dl->dtype.code &&
            dl_types[d].bits == dl->dtype.bits)
            dtype = (sg_dtype)d;
    if (dtype == SG_DTYPE__END)
        return sg_error(SG_EUNSUPPORTED, "%s: no dtype for %s (code %u) of %u bits", fn,
                        dl_code_name(dl->dtype.code), (unsigned)dl->dtype.code,
                        (unsigned)dl->dtype.bits);

    sg_device dev = {SG_DEV__COUNT, 0};
    for (int d = 0; d < SG_DEV__COUNT; d++)
        if (dl_devices[d] && dl_devices[d] == dl->device.device_type) dev.type = (int8_t)d;
    if (dev.type == SG_DEV__COUNT)
        return sg_error(SG_EUNSUPPORTED, "%s: device type %s (%d) is not supported: only kDLCPU "
                                         "and kDLCUDA are", fn,
                        dl_device_name(dl->device.device_type), (int)dl->device.device_type);
    if (dev.type == SG_DEV_CPU && dl->device.device_id != 0)
        return sg_error(SG_EINVAL, "%s: device id %d for kDLCPU (the CPU is device 0)", fn,
                        (int)dl->device.device_id);
    if (dev.type != SG_DEV_CPU) {
        if (dl->device.device_id < 0 || dl->device.device_id > INT8_MAX)
            return sg_error(SG_EINVAL, "%s: device id %d is out of range (0 to %d)", fn,
                            (int)dl->device.device_id, INT8_MAX);
        dev.index = (int8_t)dl->device.device_id;
    }

    if (ndim && !dl->shape) return sg_error(SG_EINVAL, "%s: shape is NULL with ndim %d", fn, ndim);
    bool empty = false;
    for (int32_t i = 0; i < ndim; i++) {
        if (dl->shape[i] < 0)
            return sg_error(SG_EINVAL, "%s: negative size %lld at dimension %d", fn,
                            (long long)dl->shape[i], i);
        empty |= dl->shape[i] == 0;
    }

    /* NULL strides: compact row-major (DLPack before 1.2). */
    const int64_t *strides = dl->strides;
    if (!strides) {
        int64_t acc = 1;
        for (int32_t i = ndim - 1; i >= 0; i--) {
            own[i] = acc;
            if (__builtin_mul_overflow(acc, dl->shape[i] > 1 ? dl->shape[i] : 1, &acc))
                return sg_error(SG_EINVAL, "%s: the tensor is too large", fn);
        }
        strides = own;
    }
    /* The elements reached, checked for overflow here since the producer is not trusted. */
    int64_t span = 1, es = (int64_t)sg_dtype_size(dtype), bytes;
    for (int32_t i = 0; i < ndim; i++) {
        int64_t step;
        if (strides[i] < 0)
            return sg_error(SG_EUNSUPPORTED, "%s: negative stride %lld at dimension %d: views "
                                             "with negative strides are not supported", fn,
                            (long long)strides[i], i);
        if (!empty && (__builtin_mul_overflow(dl->shape[i] - 1, strides[i], &step) ||
                       __builtin_add_overflow(span, step, &span)))
            return sg_error(SG_EINVAL, "%s: the tensor is too large", fn);
    }
    if (!empty && __builtin_mul_overflow(span, es, &bytes))
        return sg_error(SG_EINVAL, "%s: the tensor is too large", fn);

    /* Rationale: byte_offset is folded into the storage's data pointer, so the storage starts at
     * the first element and offsets need not be whole elements before the view is made. */
    /* Addresses as integers until the last step: a bad byte_offset must not make a pointer
     * outside its object, which is undefined even where it is never read. */
    uintptr_t first = (uintptr_t)dl->data;
    if (!empty) {
        if (!first) return sg_error(SG_EINVAL, "%s: data is NULL in a non-empty tensor", fn);
        if (dl->byte_offset > UINTPTR_MAX - first)
            return sg_error(SG_EINVAL, "%s: byte_offset %llu overflows the address space", fn,
                            (unsigned long long)dl->byte_offset);
        first += (uintptr_t)dl->byte_offset;
        if ((uintptr_t)bytes > UINTPTR_MAX - first)
            return sg_error(SG_EINVAL, "%s: data + byte_offset %llu + %lld bytes of elements "
                                       "overflows the address space", fn,
                            (unsigned long long)dl->byte_offset, (long long)bytes);
        /* Where the memory is a tensor of ours, its bounds are known and checked. */
        const sg_storage *ks = known ? known->storage : NULL;
        uintptr_t         k0 = ks ? (uintptr_t)ks->data : 0;
        if (k0 && (first < k0 || first - k0 > ks->nbytes ||
                   (uint64_t)bytes > ks->nbytes - (first - k0)))
            return sg_error(SG_EINVAL, "%s: data + byte_offset %llu and %lld bytes of elements "
                                       "reach outside the %zu bytes of the exported tensor's "
                                       "storage", fn,
                            (unsigned long long)dl->byte_offset, (long long)bytes, ks->nbytes);
        /* An element needs no more alignment than its C type has (complex128: two doubles). */
        uintptr_t align = (uintptr_t)(es > 8 ? 8 : es);
        if (first % align)
            return sg_error(SG_EINVAL, "%s: the first element (data + byte_offset %llu) is not "
                                       "aligned to %u bytes for %s", fn,
                            (unsigned long long)dl->byte_offset, (unsigned)align,
                            sg_dtype_name(dtype));
    } else if (first) {
        first += (uintptr_t)dl->byte_offset; /* never read; kept so that a re-export shows the
                                                same address */
    }

    return sg_tensor_from_blob((void *)first, dl->shape, strides, ndim, dtype, dev, flags, release, ctx,
                               out);
}

/* Records m as imported; refuses a managed tensor that a live tensor owns already. */
static sg_status claim(const char *fn, const void *m) {
    bool had;
    if (live_add(&imports, m, &had)) return SG_OK;
    return had ? sg_error(SG_ESTATE, "%s: the managed tensor was imported already: the tensor "
                                     "made from it owns it (and its deleter)", fn)
               : sg_error(SG_ENOMEM, "%s: out of memory", fn);
}

/* Refuses an export of ours of the other kind, before any of its fields is read as this one. */
static sg_status check_kind(const char *fn, const void *m, bool versioned) {
    bool other;
    exported_tensor(m, versioned, &other);
    if (!other) return SG_OK;
    return sg_error(SG_EINVAL, "%s: this is a %s managed tensor (made by %s)", fn,
                    versioned ? "legacy" : "versioned",
                    versioned ? "sg_tensor_to_dlpack" : "sg_tensor_to_dlpack_versioned");
}

/* Imports m (fn's): claims it, checks it, and gives the claim back where that fails. */
static sg_status import_managed(const char *fn, const void *m, bool versioned,
                                const sg_dl_tensor *dl, uint32_t flags,
                                void (*release)(sg_storage *s), sg_tensor **out) {
    bool             other;
    const sg_tensor *known = exported_tensor(m, versioned, &other);
    sg_status        st = claim(fn, m);
    if (st) return st;
    st = import(fn, dl, flags, release, (void *)m, known, out);
    if (st) live_remove(&imports, m);
    return st;
}

sg_status sg_tensor_from_dlpack_versioned(sg_dl_managed_tensor_versioned *m, sg_tensor **out) {
    const char *fn = "from_dlpack_versioned";
    if (out) *out = NULL;
    if (!m || !out)
        return sg_error(SG_EINVAL, "%s: the managed tensor and the out-pointer are required", fn);
    sg_status st = check_kind(fn, m, true);
    if (st) return st;
    if (m->version.major > SG_DLPACK_MAJOR)
        return sg_error(SG_EUNSUPPORTED, "%s: DLPack %u.x is newer than the %d.x this runtime "
                                         "reads", fn, (unsigned)m->version.major, SG_DLPACK_MAJOR);
    if (m->version.major < 1)
        return sg_error(SG_EINVAL, "%s: version %u.%u, but versioned managed tensors begin with "
                                   "DLPack 1.0", fn, (unsigned)m->version.major,
                        (unsigned)m->version.minor);
    /* A newer minor version keeps the layout; what it adds (new dtype codes) is refused below. */
    uint32_t flags = (m->flags & SG_DLPACK_FLAG_READ_ONLY) ? SG_STORAGE_READ_ONLY : 0;
    return import_managed(fn, m, true, &m->dl_tensor, flags, release_versioned, out);
}

sg_status sg_tensor_from_dlpack(sg_dl_managed_tensor *m, sg_tensor **out) {
    const char *fn = "from_dlpack";
    if (out) *out = NULL;
    if (!m || !out)
        return sg_error(SG_EINVAL, "%s: the managed tensor and the out-pointer are required", fn);
    sg_status st = check_kind(fn, m, false);
    return st ? st : import_managed(fn, m, false, &m->dl_tensor, 0, release_legacy, out);
}
