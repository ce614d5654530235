/* rt_internal.h: what the runtime's files share and users do not see. */
#ifndef SG_RT_INTERNAL_H
#define SG_RT_INTERNAL_H

#include "sg_tensor.h"

#include <pthread.h>

/* The implementation of a device type (CPU, CUDA, Meta, or a registered PrivateUse one), or NULL
 * where none is installed. */
const sg_device_impl *sg__device_impl(sg_device_type t);
/* The CUDA backend's implementation (in a build without the toolkit, one whose count() says
 * so). */
const sg_device_impl *sg__cuda_impl(void);

/* The name of a PrivateUse key (backend or Autograd) whose device type was renamed ("NPU",
 * "AutogradNPU"), or NULL (device_name.c). */
const char *sg__key_renamed(int key);

/* Drops one of the references counted at *refs; returns how many are left (below 0 where more
 * were dropped than taken). Rationale: the holder of the only reference is the one thread that
 * may change the count, so a count of 1 drops without a locked instruction; storing 0 keeps a
 * second release as detectable as after the atomic decrement. */
static inline int32_t sg__unref(int32_t *refs) {
    if (__atomic_load_n(refs, __ATOMIC_ACQUIRE) == 1) {
        __atomic_store_n(refs, 0, __ATOMIC_RELAXED);
        return 0;
    }
    return __atomic_sub_fetch(refs, 1, __ATOMIC_ACQ_REL);
}

/* Bytes per element of dtype t, 0 where t is no dtype: sg_dtype_valid and sg_dtype_size in one
 * load, for the paths that make every op's outputs. */
#define SG__DTYPE_SIZE_AT(NAME, NUM, KIND, SIZE, ...) [NUM] = SIZE,
static inline size_t sg__dtype_size(int t) {
    static const uint8_t size[SG_DTYPE__END] = {SG_DTYPES(SG__DTYPE_SIZE_AT)};
    return (unsigned)t < SG_DTYPE__END ? size[t] : 0;
}
#undef SG__DTYPE_SIZE_AT

/* The keys a tensor on a device of type t carries: its backend's and that backend's Autograd
 * key (sg_keyset_of_device), or none for no device type. */
extern const sg_keyset sg__device_keysets[SG_DEV__COUNT];
static inline sg_keyset sg__keyset_of_device(sg_device d) {
    return (unsigned)d.type < SG_DEV__COUNT ? sg__device_keysets[d.type] : 0;
}

/* Storage of nbytes on dev through its device implementation, with one reference. */
sg_status sg__storage_new(sg_device dev, size_t nbytes, sg_storage **out);
void      sg__storage_release(sg_storage *s);
/* A tensor header over s (a new reference to s is taken) with room for ndim dims, sizes and
 * strides copied in. */
sg_status sg__tensor_new(sg_storage *s, sg_dtype dtype, const int64_t *sizes,
                         const int64_t *strides, int32_t ndim, int64_t offset, sg_tensor **out);
/* A header holding t's metadata only (sizes, strides, offset, dtype, device; no storage, no
 * autograd state), for a value saved for its properties (sg_saved_init_meta): it keeps none of
 * t's elements alive. Never handed to an op (sg_tensor_data would have no storage to read). */
sg_status sg__tensor_meta(const sg_tensor *t, sg_tensor **out);
/* Frees t's autograd state (t->ag, not NULL) as t goes: drops its gradient and grad_fn
 * (autograd.c). */
void      sg__ag_meta_free(sg_tensor *t);
/* The number of storage elements a view reaches past its offset (0 when any size is 0), for a
 * geometry sg__geometry accepted (so nothing overflows). */
/* Makes room for ndim dims in t's header (its sizes and strides may move); fn names the call. */
sg_status sg__reserve_dims(const char *fn, sg_tensor *t, int32_t ndim);
int64_t   sg__span_elems(const int64_t *sizes, const int64_t *strides, int32_t ndim);

/* ---- checked arithmetic over sizes, strides and offsets (geometry.c) ----------------------
 * Every product and sum over a tensor's sizes, strides and offset goes through these, so a
 * geometry that overflows is refused where it is made and every later computation over a made
 * tensor (numel, span, nbytes, a kernel's offsets) fits in int64. True where the result fits. */
static inline bool sg__mul(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
static inline bool sg__add(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }

/* What sg__geometry finds of a geometry. */
typedef struct sg__extent {
    int64_t numel; /* elements */
    int64_t span;  /* storage elements reached past the offset (0 when empty) */
    int64_t need;  /* bytes of storage the view needs: (offset + span) * itemsize, 0 when empty */
} sg__extent;

/* Checks a geometry as every creation and view does: ndim in 0..SG_MAX_DIMS, sizes and strides
 * given where ndim > 0, no negative size, stride or offset, and numel * itemsize and
 * (offset + span) * itemsize within int64. Fails with SG_EINVAL and a message that starts with
 * fn. */
sg_status sg__geometry(const char *fn, const int64_t *sizes, const int64_t *strides, int32_t ndim,
                       int64_t offset, size_t itemsize, sg__extent *out);
/* Contiguous strides for sizes (ndim in range, sizes given) and their extent at offset 0: the
 * same checks as sg__geometry's, in one pass, for the commonest creation. */
sg_status sg__contiguous_strides(const char *fn, const int64_t *sizes, int32_t ndim,
                                 size_t itemsize, int64_t *strides, sg__extent *out);
/* SG_OK where a view of extent e fits in s; else an SG_EINVAL naming fn and the geometry
 * (PyTorch's setStorage check: an empty view fits anywhere). */
sg_status sg__check_in_storage(const char *fn, const int64_t *sizes, const int64_t *strides,
                               int32_t ndim, int64_t offset, size_t itemsize,
                               const sg__extent *e, const sg_storage *s);
/* "[2, 3]" into buf (cut short where buf is), for messages. */
const char *sg__shape_str(char *buf, size_t n, const int64_t *v, int32_t ndim);

/* Whether this build runs under AddressSanitizer. Rationale: there the per-thread caches of
 * tensor headers and small storages are off, so that a use after release, or a second release,
 * reaches freed memory and ASan reports it instead of the cache hiding it. */
#if defined(__SANITIZE_ADDRESS__)
#define SG_RT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SG_RT_ASAN 1
#endif
#endif
#ifndef SG_RT_ASAN
#define SG_RT_ASAN 0
#endif
#define SG_RT_KEEP (!SG_RT_ASAN)

/* Frees the calling thread's kept tensor headers and small storages (sg_runtime_shutdown). */
void sg__tensor_cache_flush(void);
void sg__storage_cache_flush(void);
/* Gives the calling thread's cached CUDA blocks back to the pool (cuda.c). */
void sg__cuda_cache_flush(void);
/* The stream a CUDA storage was allocated on, and is freed on (NULL: the legacy stream). */
void *sg__cuda_storage_stream(const sg_storage *s);

#endif
