/* sg_tensor.h: refcounted tensors over refcounted storage, and the devices they live on.
 *
 * A tensor is a view: dtype, device, sizes, strides (in elements) and an offset (in elements)
 * into a storage that views share. Creating a view never copies. Every tensor carries the
 * dispatch keys its device selects (`keys`), computed once at creation, so that dispatch reads
 * one word per tensor argument.
 *
 * Ownership: functions that return a tensor through an out-pointer give the caller one
 * reference; sg_tensor_release drops one. Arguments are borrowed.
 *
 * Memory: CPU storage is 64-byte aligned. CUDA storage comes from CUDA's stream-ordered pool
 * (cudaMallocAsync on the thread's current stream). Meta storage holds no memory. A backend
 * author supplies allocation and copies for PrivateUse1..3 through sg_device_impl_register.
 */
#ifndef SG_TENSOR_H
#define SG_TENSOR_H

#include "sg_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t sg_keyset; /* a set of dispatch keys: see sg_dispatch.h */
typedef struct sg_ag_meta sg_ag_meta; /* a tensor's autograd state: see sg_autograd.h */

enum { SG_MAX_DIMS = 64 };

/* Storage flags. */
enum {
    SG_STORAGE_READ_ONLY = 1u << 0, /* imported read-only (DLPack): ops may not write it */
};

/* Tensor flags beyond the storage's (sg_tensor.flags, bits 7 down). */
enum {
    SG_TENSOR_WRAPPED_NUMBER = 1u << 7, /* a Scalar made a 0-dim tensor: type promotion ranks
                                           it below every tensor (aten's wrapped numbers) */
};

typedef struct sg_storage sg_storage;
struct sg_storage {
    int32_t    refs;   /* atomically updated; read it through nothing but the API */
    uint32_t   flags;  /* SG_STORAGE_* */
    sg_device  device;
    /* In-place changes so far (sg_tensor_version, sg_autograd.h). Rationale: on the storage,
     * so that every view of it shares one counter, as PyTorch's views share theirs. */
    uint32_t   version;
    void      *data;   /* NULL for Meta; may be NULL for zero bytes */
    size_t     nbytes;
    /* Who frees data: the device's allocator (release NULL) or the owner of imported memory
     * (release is called; it frees data, not the sg_storage). */
    void     (*release)(sg_storage *s);
    void      *ctx;    /* the allocator's or the importer's */
};

typedef struct sg_tensor sg_tensor;
struct sg_tensor {
    int32_t     refs;
    uint8_t     dtype;    /* sg_dtype */
    uint8_t     flags;    /* the storage's flags (all of them fit in 8 bits) */
    sg_device   device;
    sg_keyset   keys;     /* the dispatch keys this tensor selects */
    int64_t     offset;   /* in elements */
    sg_storage *storage;
    int32_t     ndim;
    int32_t     cap;      /* room for this many dims (sg_tensor_resize_ stays within it) */
    int64_t    *sizes;    /* ndim entries, followed in memory by strides */
    int64_t    *strides;  /* ndim entries, in elements */
    sg_ag_meta *ag;       /* autograd state (sg_autograd.h); NULL: none, as for most tensors */
};

#ifndef __cplusplus
/* Rationale: these cross the ABI (generated code and kernels read them directly). */
_Static_assert(sizeof(sg_device) == 2, "sg_device is c10::Device's two bytes");
_Static_assert(sizeof(sg_tensor) == 64 && offsetof(sg_tensor, keys) == 8 &&
                   offsetof(sg_tensor, storage) == 24 && offsetof(sg_tensor, sizes) == 40 &&
                   offsetof(sg_tensor, ag) == 56,
               "sg_tensor layout");
_Static_assert(offsetof(sg_storage, version) == 12 && offsetof(sg_storage, data) == 16,
               "sg_storage layout");
#endif

/* ---- creating and releasing --------------------------------------------------------------- */

/* Every fallible call below refuses, with SG_EINVAL and a message naming the call and the
 * argument, a NULL tensor, out-pointer, or sizes/strides with ndim > 0 (*out is then NULL);
 * ndim outside 0..SG_MAX_DIMS; negative sizes, strides or offsets; an invalid dtype or device
 * type; and a geometry whose element count, span or bytes overflow int64. Every tensor made
 * (views included) lies inside its storage, so offsets a kernel computes from it fit in int64.
 * docs/runtime.md ("Misuse") lists what is checked. */

/* A new tensor with fresh, uninitialised, contiguous storage. */
sg_status sg_tensor_empty(const int64_t *sizes, int32_t ndim, sg_dtype dtype, sg_device dev,
                          sg_tensor **out);
/* Same, with strides given (storage covers exactly the elements they reach). */
sg_status sg_tensor_empty_strided(const int64_t *sizes, const int64_t *strides, int32_t ndim,
                                  sg_dtype dtype, sg_device dev, sg_tensor **out);
/* A new tensor filled with zeros. */
sg_status sg_tensor_zeros(const int64_t *sizes, int32_t ndim, sg_dtype dtype, sg_device dev,
                          sg_tensor **out);
/* A tensor over memory the caller owns. When the last view goes away, release(s) is called (if
 * given) to free the memory (s->data, s->ctx); the sg_storage itself is freed by the runtime.
 * strides NULL means contiguous. data may be NULL only where there are no elements (or on
 * Meta); flags other than SG_STORAGE_READ_ONLY are refused. */
sg_status sg_tensor_from_blob(void *data, const int64_t *sizes, const int64_t *strides,
                              int32_t ndim, sg_dtype dtype, sg_device dev, uint32_t flags,
                              void (*release)(sg_storage *s), void *ctx, sg_tensor **out);

static inline sg_tensor *sg_tensor_retain(sg_tensor *t) {
    if (t) __atomic_fetch_add(&t->refs, 1, __ATOMIC_RELAXED);
    return t;
}
/* NULL is a no-op. A release without a reference (the count found below zero, as where a tensor
 * is released twice) frees nothing and leaves SG_ESTATE in the error slot; it is found while the
 * header is kept for reuse, and under ASan (where nothing is kept) ASan reports it. */
void sg_tensor_release(sg_tensor *t);

/* ---- reading ------------------------------------------------------------------------------ */

/* These answer for NULL: numel, span and nbytes 0, is_contiguous false, describe "(null
 * tensor)". */
int64_t sg_tensor_numel(const sg_tensor *t);
/* How many storage elements past its offset the view reaches (0 when empty). */
int64_t sg_tensor_span(const sg_tensor *t);
size_t  sg_tensor_nbytes(const sg_tensor *t); /* numel * element size */
/* The address of element [0, 0, ...] (NULL on Meta). t must not be NULL: kernels call this per
 * tensor on their hot path, so it checks nothing. */
static inline void *sg_tensor_data(const sg_tensor *t) {
    return t->storage->data
               ? (char *)t->storage->data + t->offset * (int64_t)sg_dtype_size((sg_dtype)t->dtype)
               : NULL;
}
bool    sg_tensor_is_contiguous(const sg_tensor *t);
/* Whether the elements fill a span exactly once, in some order of the dims (c10's
 * is_non_overlapping_and_dense: a permuted contiguous tensor is; an expanded or a sliced one
 * is not). */
bool    sg_tensor_is_dense(const sg_tensor *t);
/* Whether a dim of more than one element has stride 0 (c10's has_internal_overlap "yes": a
 * broadcast view), so that writing it would write one place twice. */
bool    sg_tensor_overlaps(const sg_tensor *t);
/* Whether the tensor may be written (false for read-only imports). t must not be NULL (the
 * dispatcher asks this per tensor argument). */
static inline bool sg_tensor_writable(const sg_tensor *t) {
    return !(t->flags & SG_STORAGE_READ_ONLY);
}
/* "float32[2, 3] on cpu", for messages. Writes at most n bytes, NUL included (none where buf is
 * NULL). */
void    sg_tensor_describe(const sg_tensor *t, char *buf, size_t n);

/* ---- views (share storage, never copy) ---------------------------------------------------- */

/* offset is the absolute storage offset in elements (as PyTorch's), not relative to t's. */
sg_status sg_tensor_as_strided(sg_tensor *t, const int64_t *sizes, const int64_t *strides,
                               int32_t ndim, int64_t offset, sg_tensor **out);
/* The same geometry given to t itself, in place (the in-place view ops: as_strided_,
 * unsqueeze_, transpose_): checked as sg_tensor_as_strided checks it. t's sizes and strides
 * arrays may move (to hold more dims), so pointers to them taken before are stale. */
sg_status sg_tensor_as_strided_(sg_tensor *t, const int64_t *sizes, const int64_t *strides,
                                int32_t ndim, int64_t offset);
/* The same elements with new sizes; one size may be -1. Fails where the strides cannot express
 * it without a copy (as PyTorch's view does). */
sg_status sg_tensor_view(sg_tensor *t, const int64_t *sizes, int32_t ndim, sg_tensor **out);
sg_status sg_tensor_transpose(sg_tensor *t, int64_t dim0, int64_t dim1, sg_tensor **out);
sg_status sg_tensor_permute(sg_tensor *t, const int64_t *dims, int32_t ndim, sg_tensor **out);
/* Elements start, start+step, ... below end along dim (negative start/end count from the end;
 * they are clamped as Python slices are). step > 0. */
sg_status sg_tensor_slice(sg_tensor *t, int64_t dim, int64_t start, int64_t end, int64_t step,
                          sg_tensor **out);
/* Index `index` of dim, dropping the dim. */
sg_status sg_tensor_select(sg_tensor *t, int64_t dim, int64_t index, sg_tensor **out);
/* Broadcast to sizes (stride 0 where a size-1 or new leading dim grows); -1 keeps a size. */
sg_status sg_tensor_expand(sg_tensor *t, const int64_t *sizes, int32_t ndim, sg_tensor **out);
sg_status sg_tensor_unsqueeze(sg_tensor *t, int64_t dim, sg_tensor **out);
sg_status sg_tensor_squeeze(sg_tensor *t, int64_t dim, sg_tensor **out);

/* ---- copies ------------------------------------------------------------------------------- */

/* dst[...] = src[...], elementwise, any strides, any pair of devices. Unlike PyTorch's copy_,
 * sizes and dtype must be equal (no broadcasting, no conversion). Fails with SG_EREADONLY for a
 * read-only dst and SG_EINVAL for a dst with overlapping elements (an expanded view); meta to
 * meta does nothing, meta to or from a device with memory is SG_EUNSUPPORTED. */
sg_status sg_tensor_copy_(sg_tensor *dst, const sg_tensor *src);
/* Gives t new sizes, contiguous, in place (an out= argument being resized): the storage is
 * replaced with a larger one of t's device where the new size needs more bytes; t's sizes and
 * strides arrays may move (to hold more dims). Views of the old storage keep it. */
sg_status sg_tensor_resize_(sg_tensor *t, const int64_t *sizes, int32_t ndim);
/* The same where t's sizes differ from sizes, else nothing (its strides stay): how an out=
 * argument is given the result's shape, as aten's resize_output does. */
sg_status sg_tensor_resize_out_(sg_tensor *t, const int64_t *sizes, int32_t ndim);
/* The same, and where t is resized it takes strides (NULL: contiguous; they must be dense in
 * some order), its storage offset kept: an out= given the layout the op gives a new result,
 * as aten's structured resize_out does. */
sg_status sg_tensor_resize_out_strided_(sg_tensor *t, const int64_t *sizes,
                                        const int64_t *strides, int32_t ndim);
/* dst = src into an out= argument: dst resized to src's sizes first where they differ. */
sg_status sg_tensor_copy_out_(sg_tensor *dst, const sg_tensor *src);
/* A contiguous copy (or a new reference where t is contiguous already). */
sg_status sg_tensor_contiguous(sg_tensor *t, sg_tensor **out);
/* t on another device: a new reference where it is there already, otherwise a copy with the
 * same sizes and strides. */
sg_status sg_tensor_to(sg_tensor *t, sg_device dev, sg_tensor **out);

/* ---- devices ------------------------------------------------------------------------------ */

/* What a device type needs to hold tensors: allocation and copies, and optionally its device
 * guard, streams and events (sg_backend.h's generic calls reach them). Entries marked optional
 * may be NULL (not supported). Copies are synchronous with respect to the host; `n` bytes,
 * contiguous.
 *
 * ABI: `size` is sizeof(sg_device_impl) as the backend was compiled, so the struct can grow:
 * entries are only ever appended, registration copies the part both sides know and treats the
 * rest as NULL. size 0 means the entries up to memset_zero (the first layout), so an
 * initialiser that leaves it out keeps working, without hooks. */
typedef struct sg_device_impl {
    uint32_t    size; /* sizeof(sg_device_impl), or 0: see above */
    const char *name;
    /* Number of devices of this type found (0: the backend is unavailable; *why says so). */
    int       (*count)(const char **why);
    sg_status (*alloc)(sg_device dev, size_t nbytes, void **data, void **ctx);
    void      (*free)(sg_device dev, void *data, void *ctx);
    sg_status (*copy_from_host)(sg_device dst_dev, void *dst, const void *src, size_t n);
    sg_status (*copy_to_host)(void *dst, sg_device src_dev, const void *src, size_t n);
    /* optional: between two devices of this type (else staged through the host) */
    sg_status (*copy_device)(sg_device dst_dev, void *dst, sg_device src_dev, const void *src,
                             size_t n);
    /* optional: n bytes of zeros (else zeros are copied from the host). May be asynchronous
     * where it is ordered before the device's later work from this thread (CUDA: the thread's
     * current stream), so later copies see the zeros. */
    sg_status (*memset_zero)(sg_device dev, void *dst, size_t n);

    /* ---- the device guard (optional; read where size covers them) ---- */
    /* The calling thread's current device index of this type. */
    sg_status (*get_device)(int8_t *index);
    /* Makes index the calling thread's current device of this type. */
    sg_status (*set_device)(int8_t index);

    /* ---- streams (optional): opaque handles, NULL is the device's default stream ---- */
    sg_status (*get_stream)(sg_device dev, void **stream); /* the thread's current one */
    sg_status (*set_stream)(sg_device dev, void *stream);
    /* Waits until the work queued on the thread's current stream of dev is done. */
    sg_status (*synchronize)(sg_device dev);

    /* ---- events (optional; all five or none) ---- */
    sg_status (*event_create)(sg_device dev, void **event);
    void      (*event_destroy)(sg_device dev, void *event);
    sg_status (*event_record)(sg_device dev, void *event, void *stream);
    /* stream (of dev) waits for the event without blocking the host */
    sg_status (*event_wait)(sg_device dev, void *event, void *stream);
    sg_status (*event_synchronize)(sg_device dev, void *event);
    /* optional even where events are given: sets *done without waiting */
    sg_status (*event_query)(sg_device dev, void *event, bool *done);
} sg_device_impl;

/* The size of the first layout (size 0). */
#define SG_DEVICE_IMPL_SIZE_V1 (offsetof(sg_device_impl, memset_zero) + sizeof(void (*)(void)))

/* Installs the implementation of a PrivateUse device type (CPU, CUDA and Meta are built in).
 * The struct is copied (size says how much of it there is); the name is kept by pointer and
 * must outlive the process's use of the device. Fails for a built-in type, a type that has an
 * implementation already, or a size the runtime cannot read. */
sg_status sg_device_impl_register(sg_device_type type, const sg_device_impl *impl);
/* Number of devices of a type (0 where unavailable; *why, if given, says why). */
int       sg_device_count(sg_device_type type, const char **why);
/* SG_OK where dev exists; otherwise an error that says why not. */
sg_status sg_device_check(sg_device dev);

#ifdef __cplusplus
}
#endif
#endif
