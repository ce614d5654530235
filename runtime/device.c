/* device.c: the device implementations (CPU and Meta here, CUDA in cuda.c, PrivateUse ones from
 * backend authors) and the storage they allocate. */
#include "rt_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- CPU: 64-byte aligned host memory --------------------------------------------------- */

static int cpu_count(const char **why) {
    (void)why;
    return 1;
}

static sg_status cpu_alloc(sg_device dev, size_t nbytes, void **data, void **ctx) {
    (void)dev;
    *ctx = NULL;
    /* aligned_alloc wants a multiple of the alignment; zero bytes still get a real pointer */
    size_t n = (nbytes + 63) & ~(size_t)63;
    if (n < nbytes) return sg_error(SG_ENOMEM, "cannot allocate %zu bytes on cpu", nbytes);
    *data = aligned_alloc(64, n ? n : 64);
    if (!*data) return sg_error(SG_ENOMEM, "cannot allocate %zu bytes on cpu", nbytes);
    return SG_OK;
}

static void cpu_free(sg_device dev, void *data, void *ctx) {
    (void)dev, (void)ctx;
    free(data);
}

static sg_status cpu_copy_from_host(sg_device d, void *dst, const void *src, size_t n) {
    (void)d;
    if (n) memmove(dst, src, n);
    return SG_OK;
}

static sg_status cpu_copy_to_host(void *dst, sg_device d, const void *src, size_t n) {
    (void)d;
    if (n) memmove(dst, src, n);
    return SG_OK;
}

static sg_status cpu_memset_zero(sg_device d, void *dst, size_t n) {
    (void)d;
    if (n) memset(dst, 0, n);
    return SG_OK;
}

static const sg_device_impl cpu_impl = {
    .size = sizeof(sg_device_impl),
    .name = "cpu",
    .count = cpu_count,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_from_host = cpu_copy_from_host,
    .copy_to_host = cpu_copy_to_host,
    .memset_zero = cpu_memset_zero,
};

/* ---- Meta: shapes only ------------------------------------------------------------------ */

static sg_status meta_alloc(sg_device dev, size_t nbytes, void **data, void **ctx) {
    (void)dev, (void)nbytes;
    *data = NULL;
    *ctx = NULL;
    return SG_OK;
}

static void meta_free(sg_device dev, void *data, void *ctx) { (void)dev, (void)data, (void)ctx; }

static sg_status meta_copy(void) {
    return sg_error(SG_EUNSUPPORTED, "meta tensors hold no data: nothing can be copied to or "
                                     "from them");
}
static sg_status meta_copy_from_host(sg_device d, void *dst, const void *src, size_t n) {
    (void)d, (void)dst, (void)src, (void)n;
    return meta_copy();
}
static sg_status meta_copy_to_host(void *dst, sg_device d, const void *src, size_t n) {
    (void)d, (void)dst, (void)src, (void)n;
    return meta_copy();
}

static sg_status meta_zero(sg_device d, void *dst, size_t n) {
    (void)d, (void)dst, (void)n;
    return SG_OK;
}

static const sg_device_impl meta_impl = {
    .size = sizeof(sg_device_impl),
    .name = "meta",
    .count = cpu_count,
    .alloc = meta_alloc,
    .free = meta_free,
    .copy_from_host = meta_copy_from_host,
    .copy_to_host = meta_copy_to_host,
    .memset_zero = meta_zero,
};

/* ---- the registry ----------------------------------------------------------------------- */

/* PrivateUse slots: each a copy of what its backend registered, written once under the lock
 * and published with one atomic store, read without a lock. */
static sg_device_impl        private_copies[SG_DEV__COUNT];
static const sg_device_impl *private_impls[SG_DEV__COUNT];
static pthread_mutex_t       register_lock = PTHREAD_MUTEX_INITIALIZER;

const sg_device_impl *sg__device_impl(sg_device_type t) {
    switch (t) {
    case SG_DEV_CPU: return &cpu_impl;
    case SG_DEV_META: return &meta_impl;
    case SG_DEV_CUDA: return sg__cuda_impl();
    case SG_DEV_PRIVATEUSE1:
    case SG_DEV_PRIVATEUSE2:
    case SG_DEV_PRIVATEUSE3: return __atomic_load_n(&private_impls[t], __ATOMIC_ACQUIRE);
    default: return NULL;
    }
}

sg_status sg_device_impl_register(sg_device_type type, const sg_device_impl *impl) {
    if (type != SG_DEV_PRIVATEUSE1 && type != SG_DEV_PRIVATEUSE2 && type != SG_DEV_PRIVATEUSE3)
        return sg_error(SG_EINVAL, "sg_device_impl_register: %s is built in; only the "
                                   "PrivateUse device types take an implementation",
                        sg_device_type_name(type));
    if (!impl || !impl->count || !impl->alloc || !impl->free || !impl->copy_from_host ||
        !impl->copy_to_host)
        return sg_error(SG_EINVAL, "sg_device_impl_register: count, alloc, free, "
                                   "copy_from_host and copy_to_host are required");
    size_t size = impl->size ? impl->size : SG_DEVICE_IMPL_SIZE_V1;
    if (size < SG_DEVICE_IMPL_SIZE_V1)
        return sg_error(SG_EINVAL, "sg_device_impl_register: size %u is smaller than the "
                                   "first layout's %zu (set it to sizeof(sg_device_impl), or 0)",
                        (unsigned)impl->size, (size_t)SG_DEVICE_IMPL_SIZE_V1);
    /* entries past what the runtime knows (a newer header) are optional by contract: dropped */
    if (size > sizeof(sg_device_impl)) size = sizeof(sg_device_impl);
    pthread_mutex_lock(&register_lock);
    sg_status st = SG_OK;
    if (private_impls[type]) {
        st = sg_error(SG_EEXISTS, "sg_device_impl_register: %s has an implementation already",
                      sg_device_type_name(type));
    } else {
        sg_device_impl *c = &private_copies[type];
        memset(c, 0, sizeof *c);
        memcpy(c, impl, size);
        c->size = (uint32_t)sizeof *c;
        bool ev = c->event_create || c->event_destroy || c->event_record || c->event_wait ||
                  c->event_synchronize;
        if (ev && !(c->event_create && c->event_destroy && c->event_record && c->event_wait &&
                    c->event_synchronize))
            st = sg_error(SG_EINVAL, "sg_device_impl_register: event_create, event_destroy, "
                                     "event_record, event_wait and event_synchronize come "
                                     "together: give all five or none");
        else
            __atomic_store_n(&private_impls[type], c, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&register_lock);
    return st;
}

int sg_device_count(sg_device_type type, const char **why) {
    const sg_device_impl *impl = sg__device_impl(type);
    if (!impl) {
        if (why)
            *why = (unsigned)type < SG_DEV__COUNT ? "no implementation is registered for it"
                                                  : "no such device type";
        return 0;
    }
    return impl->count(why);
}

sg_status sg_device_check(sg_device dev) {
    const char *why = "";
    if ((unsigned)dev.type >= SG_DEV__COUNT)
        return sg_error(SG_EINVAL, "device type %d does not exist", dev.type);
    int n = sg_device_count((sg_device_type)dev.type, &why);
    if (SG_LIKELY(n > 0 && dev.index >= 0 && dev.index < n)) return SG_OK;
    const char *name = sg_device_type_name((sg_device_type)dev.type);
    if (n == 0) return sg_error(SG_EDEVICE, "the %s backend is unavailable: %s", name, why);
    return sg_error(SG_EDEVICE, "device %s:%d does not exist (%d %s device%s found)", name,
                    dev.index, n, name, n == 1 ? "" : "s");
}

/* ---- storage ---------------------------------------------------------------------------- */

/* Small CPU storage lives in one block with its header: [sg_storage | data at +64].
 * Rationale: a small op's output cost three allocations (header, data, tensor); this is one of
 * them less, and the data stays 64-byte aligned. */
enum { INLINE_MAX = 4096, INLINE_AT = 64, STORAGE_INLINE = 1u << 8, STORAGE_BLOCK = 1u << 9 };
_Static_assert(sizeof(sg_storage) <= INLINE_AT, "the storage header fits before its data");

/* Blocks of one size, INLINE_AT + KEEP_BYTES (STORAGE_BLOCK), hold the smallest inline storages
 * and the headers of all others (device memory, large CPU memory); a released one is kept per
 * thread for reuse, as tensor headers are (tensor.c), linked through ctx, so a kept storage's
 * refs stays 0 and a second release of it is detected. Off under ASan (SG_RT_KEEP).
 * Rationale: one size serves both, so a thread that allocates on the GPU reuses its headers
 * as one on the CPU reuses its small storages. */
enum { KEEP_BYTES = 64, KEEP_MAX = 64 };
static _Thread_local sg_storage *kept;
static _Thread_local int         nkept;

void sg__storage_cache_flush(void) {
    while (kept) {
        sg_storage *next = kept->ctx;
        free(kept);
        kept = next;
    }
    nkept = 0;
}

/* A STORAGE_BLOCK block, zeroed up to its data: a kept one where there is one. */
static sg_storage *block_new(void) {
    sg_storage *s;
    if (SG_RT_KEEP && kept) {
        s = kept;
        kept = s->ctx;
        nkept--;
    } else if (!(s = aligned_alloc(64, INLINE_AT + KEEP_BYTES))) {
        return NULL;
    }
    memset(s, 0, sizeof *s);
    s->flags = STORAGE_BLOCK;
    return s;
}

static void block_free(sg_storage *s) {
    if (SG_RT_KEEP && nkept < KEEP_MAX) {
        s->ctx = kept;
        kept = s;
        nkept++;
    } else {
        free(s);
    }
}

sg_status sg__storage_new(sg_device dev, size_t nbytes, sg_storage **out) {
    *out = NULL;
    if (dev.type == SG_DEV_CPU && dev.index == 0 && nbytes <= INLINE_MAX) {
        sg_storage *s;
        if (nbytes <= KEEP_BYTES) {
            s = block_new();
        } else if ((s = aligned_alloc(64, INLINE_AT + ((nbytes + 63) & ~(size_t)63)))) {
            memset(s, 0, sizeof *s);
        }
        if (!s) return sg_error(SG_ENOMEM, "cannot allocate %zu bytes on cpu", nbytes);
        s->refs = 1;
        s->flags |= STORAGE_INLINE;
        s->device = dev;
        s->data = (char *)s + INLINE_AT;
        s->nbytes = nbytes;
        *out = s;
        return SG_OK;
    }
    sg_status st = sg_device_check(dev);
    if (st) return st;
    const sg_device_impl *impl = sg__device_impl((sg_device_type)dev.type);
    sg_storage *s = block_new();
    if (!s) return sg_error(SG_ENOMEM, "out of memory");
    st = impl->alloc(dev, nbytes, &s->data, &s->ctx);
    if (st) {
        block_free(s);
        return st;
    }
    s->refs = 1;
    s->device = dev;
    s->nbytes = nbytes;
    *out = s;
    return SG_OK;
}

static SG_COLD void released_twice(int32_t r) {
    sg_error(SG_ESTATE, "storage release: the storage was released already (its reference count "
                        "is %d)",
             (int)r + 1);
}

/* As sg_tensor_release: a count below zero is reported (SG_ESTATE), not freed again. */
void sg__storage_release(sg_storage *s) {
    if (!s) return;
    int32_t r = sg__unref(&s->refs);
    if (SG_LIKELY(r != 0)) {
        if (SG_UNLIKELY(r < 0)) released_twice(r);
        return;
    }
    if (!(s->flags & STORAGE_INLINE)) {
        if (s->release) {
            s->release(s);
        } else {
            const sg_device_impl *impl = sg__device_impl((sg_device_type)s->device.type);
            if (impl) impl->free(s->device, s->data, s->ctx);
        }
    }
    if (s->flags & STORAGE_BLOCK)
        block_free(s);
    else
        free(s);
}
