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

/* Storage of nbytes on dev through its device implementation, with one reference. */
sg_status sg__storage_new(sg_device dev, size_t nbytes, sg_storage **out);
void      sg__storage_release(sg_storage *s);
/* A tensor header over s (a new reference to s is taken) with room for ndim dims, sizes and
 * strides copied in. */
sg_status sg__tensor_new(sg_storage *s, sg_dtype dtype, const int64_t *sizes,
                         const int64_t *strides, int32_t ndim, int64_t offset, sg_tensor **out);
/* The number of storage elements a view reaches past its offset (0 when any size is 0). */
int64_t   sg__span_elems(const int64_t *sizes, const int64_t *strides, int32_t ndim);

/* Frees the calling thread's kept tensor headers and small storages (sg_runtime_shutdown). */
void sg__tensor_cache_flush(void);
void sg__storage_cache_flush(void);
/* Gives the calling thread's cached CUDA blocks back to the pool (cuda.c). */
void sg__cuda_cache_flush(void);
/* The stream a CUDA storage was allocated on, and is freed on (NULL: the legacy stream). */
void *sg__cuda_storage_stream(const sg_storage *s);

#endif
