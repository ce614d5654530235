/* sg_dlpack.h: DLPack import and export, without copies.
 *
 * The structs below are DLPack's ABI (version 1.0 of the specification), declared under our own
 * names so that this header never clashes with a dlpack.h the user includes as well: an
 * sg_dl_tensor * and a DLTensor * may be cast into each other freely. Size and offset asserts pin
 * every layout.
 *
 * Ownership, in both directions, is DLPack's: a managed tensor belongs to whoever holds it until
 * that holder calls its deleter, exactly once. The runtime keeps the addresses of its live
 * exports and imports, so that a second call of an export's deleter does nothing but leave
 * SG_ESTATE, and a second import of a managed tensor a tensor owns already is refused.
 * - Export (sg_tensor_to_dlpack*) gives the caller a managed tensor that holds one reference to
 *   the tensor; its deleter drops that reference and frees the managed tensor.
 * - Import (sg_tensor_from_dlpack*) gives the tensor the managed tensor on success: the storage
 *   calls m->deleter(m) once its last view goes away. On failure nothing was taken: the caller
 *   still owns m and must call its deleter itself.
 *
 * Rationale: an imported tensor keeps the producer's memory alive through its storage, not
 * through a copy, so views of it, and managed tensors exported from those views again, chain
 * their references; the producer's deleter runs once, after the last of them is released.
 */
#ifndef SG_DLPACK_H
#define SG_DLPACK_H

#include "sg_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The DLPack version this runtime produces; it reads any 1.x. */
#define SG_DLPACK_MAJOR 1
#define SG_DLPACK_MINOR 0

/* ---- the ABI ----------------------------------------------------------------------------- */

/* DLDeviceType. Rationale: a C enum's size is the compiler's choice, so the structs hold these
 * values in an int32_t, as DLPack's C++ declaration (enum : int32_t) fixes them. */
typedef enum sg_dl_device_type {
    SG_DL_CPU          = 1,
    SG_DL_CUDA         = 2,
    SG_DL_CUDA_HOST    = 3,  /* pinned host memory (cudaMallocHost) */
    SG_DL_OPENCL       = 4,
    SG_DL_VULKAN       = 7,
    SG_DL_METAL        = 8,
    SG_DL_VPI          = 9,
    SG_DL_ROCM         = 10,
    SG_DL_ROCM_HOST    = 11,
    SG_DL_EXT_DEV      = 12, /* reserved for extensions */
    SG_DL_CUDA_MANAGED = 13, /* unified memory (cudaMallocManaged) */
    SG_DL_ONEAPI       = 14,
    SG_DL_WEBGPU       = 15,
    SG_DL_HEXAGON      = 16,
    SG_DL_MAIA         = 17,
} sg_dl_device_type;

/* DLDataTypeCode: stored in a uint8_t. */
typedef enum sg_dl_type_code {
    SG_DL_INT           = 0,
    SG_DL_UINT          = 1,
    SG_DL_FLOAT         = 2,
    SG_DL_OPAQUE_HANDLE = 3,
    SG_DL_BFLOAT        = 4,
    SG_DL_COMPLEX       = 5, /* bits count both parts: complex64 is 64 */
    SG_DL_BOOL          = 6,
} sg_dl_type_code;

/* DLDevice. */
typedef struct sg_dl_device {
    int32_t device_type; /* sg_dl_device_type */
    int32_t device_id;   /* 0 for the CPU */
} sg_dl_device;

/* DLDataType: `lanes` elements of `bits` bits each, of kind `code`. */
typedef struct sg_dl_data_type {
    uint8_t  code;  /* sg_dl_type_code */
    uint8_t  bits;
    uint16_t lanes; /* 1 for scalars; this runtime handles no vector types */
} sg_dl_data_type;

/* DLTensor. The first element lies at (char *)data + byte_offset. */
typedef struct sg_dl_tensor {
    void           *data;
    sg_dl_device    device;
    int32_t         ndim;
    sg_dl_data_type dtype;
    int64_t        *shape;       /* ndim entries */
    int64_t        *strides;     /* ndim entries, in elements; NULL: compact row-major */
    uint64_t        byte_offset;
} sg_dl_tensor;

/* DLManagedTensor (before DLPack 1.0; it has no version and no flags). */
typedef struct sg_dl_managed_tensor sg_dl_managed_tensor;
struct sg_dl_managed_tensor {
    sg_dl_tensor dl_tensor;
    void        *manager_ctx; /* the producer's */
    void       (*deleter)(sg_dl_managed_tensor *self);
};

/* DLPackVersion. */
typedef struct sg_dl_version {
    uint32_t major;
    uint32_t minor;
} sg_dl_version;

/* DLManagedTensorVersioned flags. */
#define SG_DLPACK_FLAG_READ_ONLY              (UINT64_C(1) << 0) /* the consumer may not write */
#define SG_DLPACK_FLAG_IS_COPIED              (UINT64_C(1) << 1) /* a copy the consumer owns */
#define SG_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED (UINT64_C(1) << 2) /* sub-byte elements padded */

/* DLManagedTensorVersioned (DLPack 1.0 and later). */
typedef struct sg_dl_managed_tensor_versioned sg_dl_managed_tensor_versioned;
struct sg_dl_managed_tensor_versioned {
    sg_dl_version version;
    void         *manager_ctx;
    /* May be NULL where the producer has nothing to free. */
    void        (*deleter)(sg_dl_managed_tensor_versioned *self);
    uint64_t      flags;      /* SG_DLPACK_FLAG_* */
    sg_dl_tensor  dl_tensor;
};

/* The layouts DLPack fixes, checked where they are spelled out: on 64-bit targets (x86-64,
 * aarch64: LP64). Rationale: 32-bit ABIs disagree on int64_t's alignment inside a struct, so
 * there the compiler's layout is trusted. */
#ifdef __cplusplus
#define SG_DL_ASSERT_(c, m) static_assert(c, m)
#else
#define SG_DL_ASSERT_(c, m) _Static_assert(c, m)
#endif
SG_DL_ASSERT_(sizeof(sg_dl_device) == 8, "DLDevice is 8 bytes");
SG_DL_ASSERT_(offsetof(sg_dl_device, device_id) == 4, "DLDevice.device_id");
SG_DL_ASSERT_(sizeof(sg_dl_data_type) == 4, "DLDataType is 4 bytes");
SG_DL_ASSERT_(offsetof(sg_dl_data_type, bits) == 1, "DLDataType.bits");
SG_DL_ASSERT_(offsetof(sg_dl_data_type, lanes) == 2, "DLDataType.lanes");
SG_DL_ASSERT_(sizeof(sg_dl_version) == 8, "DLPackVersion is 8 bytes");
SG_DL_ASSERT_(offsetof(sg_dl_version, minor) == 4, "DLPackVersion.minor");
#if UINTPTR_MAX == UINT64_MAX
SG_DL_ASSERT_(offsetof(sg_dl_tensor, device) == 8, "DLTensor.device");
SG_DL_ASSERT_(offsetof(sg_dl_tensor, ndim) == 16, "DLTensor.ndim");
SG_DL_ASSERT_(offsetof(sg_dl_tensor, dtype) == 20, "DLTensor.dtype");
SG_DL_ASSERT_(offsetof(sg_dl_tensor, shape) == 24, "DLTensor.shape");
SG_DL_ASSERT_(offsetof(sg_dl_tensor, strides) == 32, "DLTensor.strides");
SG_DL_ASSERT_(offsetof(sg_dl_tensor, byte_offset) == 40, "DLTensor.byte_offset");
SG_DL_ASSERT_(sizeof(sg_dl_tensor) == 48, "DLTensor is 48 bytes");
SG_DL_ASSERT_(offsetof(sg_dl_managed_tensor, dl_tensor) == 0, "DLManagedTensor.dl_tensor");
SG_DL_ASSERT_(offsetof(sg_dl_managed_tensor, manager_ctx) == 48, "DLManagedTensor.manager_ctx");
SG_DL_ASSERT_(offsetof(sg_dl_managed_tensor, deleter) == 56, "DLManagedTensor.deleter");
SG_DL_ASSERT_(sizeof(sg_dl_managed_tensor) == 64, "DLManagedTensor is 64 bytes");
SG_DL_ASSERT_(offsetof(sg_dl_managed_tensor_versioned, version) == 0,
              "DLManagedTensorVersioned.version");
SG_DL_ASSERT_(offsetof(sg_dl_managed_tensor_versioned, manager_ctx) == 8,
              "DLManagedTensorVersioned.manager_ctx");
SG_DL_ASSERT_(offsetof(sg_dl_managed_tensor_versioned, deleter) == 16,
              "DLManagedTensorVersioned.deleter");
SG_DL_ASSERT_(offsetof(sg_dl_managed_tensor_versioned, flags) == 24,
              "DLManagedTensorVersioned.flags");
SG_DL_ASSERT_(offsetof(sg_dl_managed_tensor_versioned, dl_tensor) == 32,
              "DLManagedTensorVersioned.dl_tensor");
SG_DL_ASSERT_(sizeof(sg_dl_managed_tensor_versioned) == 80,
              "DLManagedTensorVersioned is 80 bytes");
#endif
#undef SG_DL_ASSERT_

/* ---- export ------------------------------------------------------------------------------ */

/* A DLPack 1.0 managed tensor over t's memory, without a copy. *out holds one reference to t
 * (t itself stays the caller's); (*out)->deleter drops it and frees *out. data is the address of
 * t's first element and byte_offset is 0; shape and strides (always given, in elements) live in
 * memory *out owns. A read-only t is exported with SG_DLPACK_FLAG_READ_ONLY.
 * Rationale: data at the first element with byte_offset 0, as PyTorch exports, because some
 * consumers (CUDA ones in particular) refuse a non-zero byte_offset.
 * Fails (*out NULL) with SG_EUNSUPPORTED for a Meta or PrivateUse tensor, which DLPack cannot
 * describe, SG_EINVAL for NULL arguments and SG_ENOMEM. The deleter called again for the same
 * managed tensor frees nothing and leaves SG_ESTATE in the error slot. */
sg_status sg_tensor_to_dlpack_versioned(sg_tensor *t, sg_dl_managed_tensor_versioned **out);

/* The same as a legacy (pre-1.0) managed tensor. A read-only t is refused with SG_EINVAL: the
 * legacy struct has no flag to say so, and its consumer would write the memory. */
sg_status sg_tensor_to_dlpack(sg_tensor *t, sg_dl_managed_tensor **out);

/* ---- import ------------------------------------------------------------------------------ */

/* A tensor over m's memory, without a copy. On success the tensor owns m: its storage calls
 * m->deleter(m) (where not NULL) once the last view of it is released. On failure (*out NULL)
 * m is untouched and still the caller's, who must call its deleter.
 * Accepted: version 1.x (a newer minor is read as 1.0); CPU and CUDA devices; the dtypes of
 * sg_dtype with lanes 1; strides NULL (compact row-major) or non-negative; any byte_offset that
 * leaves the first element aligned as its C type (its size; 8 bytes for complex128), folded into
 * the storage's data pointer. SG_DLPACK_FLAG_READ_ONLY makes the storage SG_STORAGE_READ_ONLY,
 * so the dispatcher refuses to bind it to an argument an op writes; SG_DLPACK_FLAG_IS_COPIED
 * needs nothing.
 * Refused with SG_EUNSUPPORTED, as valid DLPack this runtime cannot hold: a newer major version,
 * another device type (the message names it), an unknown dtype or lanes != 1, ndim above
 * SG_MAX_DIMS, negative strides (our views have none). Refused with SG_EINVAL, as malformed:
 * version 0.x, ndim < 0, negative sizes, NULL shape (ndim > 0) or data (numel > 0), a CPU
 * device id other than 0, a CUDA device id outside 0..127, a misaligned first element, sizes
 * and strides that overflow or reach past the end of the address space, and, where m is an
 * export of this runtime, data + byte_offset and the elements reaching outside the exported
 * tensor's storage, or m being a legacy export of this runtime (sg_tensor_to_dlpack; and for
 * sg_tensor_from_dlpack, a versioned one). Refused with SG_ESTATE: m imported already by a
 * tensor still alive (its deleter is that tensor's). */
sg_status sg_tensor_from_dlpack_versioned(sg_dl_managed_tensor_versioned *m, sg_tensor **out);

/* The same for a legacy managed tensor, which is always writable. */
sg_status sg_tensor_from_dlpack(sg_dl_managed_tensor *m, sg_tensor **out);

#ifdef __cplusplus
}
#endif
#endif
