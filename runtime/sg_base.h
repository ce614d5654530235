/* sg_base.h: what every part of the runtime shares: statuses and the thread-local error slot,
 * dtypes (sg_dtypes.h), devices, layouts and memory formats.
 *
 * Errors: a fallible call returns an sg_status (SG_OK is 0) and, when it fails, leaves a
 * message in a slot of the calling thread; sg_last_error() reads it. Nothing in the library
 * prints, aborts or exits.
 */
#ifndef SG_BASE_H
#define SG_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sg_dtypes.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SG_LIKELY(x)   __builtin_expect(!!(x), 1)
#define SG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define SG_COLD __attribute__((noinline, cold))
#define SG_NOINLINE __attribute__((noinline))
#else
#define SG_LIKELY(x)   (x)
#define SG_UNLIKELY(x) (x)
#define SG_PRINTF(f, a)
#define SG_COLD
#define SG_NOINLINE
#endif

#define SG_RUNTIME_VERSION_MAJOR 0
#define SG_RUNTIME_VERSION_MINOR 4

/* ---- statuses and errors ----------------------------------------------------------------- */

typedef enum sg_status {
    SG_OK = 0,
    SG_EINVAL,       /* a bad argument: wrong type, shape, dtype, index, ... */
    SG_ENOMEM,       /* out of memory (host or device) */
    SG_ENOTFOUND,    /* no such op, overload or handle */
    SG_ENOKERNEL,    /* no kernel for the dispatch key the arguments select */
    SG_EDEVICE,      /* a device or driver error, or a backend that is unavailable */
    SG_EUNSUPPORTED, /* a valid request this build or backend does not support */
    SG_EEXISTS,      /* defined already, differently */
    SG_EREADONLY,    /* a read-only tensor bound to an argument the op writes */
    SG_ESTATE,       /* not allowed in the current state (a handle released twice, ...) */
    SG_STATUS__COUNT
} sg_status;

/* "SG_EINVAL" and so on. */
const char *sg_status_name(sg_status s);
/* The message of the calling thread's last failure ("" where none). Valid until the thread's
 * next failing call. */
const char *sg_last_error(void);
/* The status of that failure (SG_OK where none). */
sg_status   sg_last_status(void);
void        sg_error_clear(void);
/* Records a failure for the calling thread and returns s, so a kernel can write
 * `return sg_error(SG_EINVAL, "abs: expected a float tensor, got %s", ...)`. */
sg_status   sg_error(sg_status s, const char *fmt, ...) SG_PRINTF(2, 3);

/* The version this header describes and the sizes of the types that cross the ABI; returns
 * SG_OK where the library linked agrees, so a program can check before its first call.
 * SG_RUNTIME_CHECK_ABI() needs sg_runtime.h (it measures sg_tensor and sg_any). */
sg_status sg_runtime_check_abi(int major, int minor, size_t tensor_size, size_t any_size);
#define SG_RUNTIME_CHECK_ABI() \
    sg_runtime_check_abi(SG_RUNTIME_VERSION_MAJOR, SG_RUNTIME_VERSION_MINOR, sizeof(sg_tensor), \
                         sizeof(sg_any))

/* ---- devices ----------------------------------------------------------------------------- */

typedef enum sg_device_type {
    SG_DEV_CPU,
    SG_DEV_CUDA,
    SG_DEV_META,        /* shapes and dtypes only: no memory behind the tensor */
    SG_DEV_PRIVATEUSE1, /* devices a backend author plugs in (sg_device_impl_register) */
    SG_DEV_PRIVATEUSE2,
    SG_DEV_PRIVATEUSE3,
    SG_DEV__COUNT
} sg_device_type;

/* A device: a type and an index (CPU and Meta have index 0). Two bytes, as c10::Device. */
typedef struct sg_device {
    int8_t type;  /* sg_device_type */
    int8_t index;
} sg_device;

#define SG_CPU        ((sg_device){SG_DEV_CPU, 0})
#define SG_META       ((sg_device){SG_DEV_META, 0})
#define SG_CUDA(i)    ((sg_device){SG_DEV_CUDA, (int8_t)(i)})

static inline bool sg_device_eq(sg_device a, sg_device b) {
    return a.type == b.type && a.index == b.index;
}
const char *sg_device_type_name(sg_device_type t); /* "cpu", "cuda", "meta", "privateuseone" */

/* ---- layouts and memory formats (values are c10's) --------------------------------------- */

typedef enum sg_layout {
    SG_STRIDED = 0, SG_SPARSE_COO, SG_SPARSE_CSR, SG_MKLDNN, SG_SPARSE_CSC, SG_SPARSE_BSR,
    SG_SPARSE_BSC, SG_JAGGED
} sg_layout;

typedef enum sg_memory_format {
    SG_CONTIGUOUS_FORMAT = 0,
    SG_PRESERVE_FORMAT   = 1,
    SG_CHANNELS_LAST     = 2,
    SG_CHANNELS_LAST_3D  = 3
} sg_memory_format;

#ifdef __cplusplus
}
#endif
#endif
