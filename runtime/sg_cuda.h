/* sg_cuda.h: the CUDA backend's per-thread state: the current device and, per device, the
 * current stream. Every call works in a build without CUDA and on a machine without a GPU: it
 * then fails with SG_EDEVICE and a message that says why.
 *
 * Streams: the runtime queues all its CUDA work (allocation, copies, zeroing, and later kernels)
 * on the calling thread's current stream of the device concerned, as PyTorch does. Memory is
 * allocated from CUDA's stream-ordered pool on that stream and freed on the same stream, so a
 * stream passed to sg_cuda_set_stream must outlive every tensor allocated while it was current.
 * Memory used on another stream than the one it was allocated on needs the user's
 * synchronisation (an event, or sg_cuda_synchronize) before the tensor is released.
 *
 * The generic calls of sg_backend.h (sg_device_current, sg_device_set_current, sg_stream_set,
 * sg_device_synchronize, sg_event_*) reach the same per-thread state through CUDA's
 * sg_device_impl hooks, so code written for any device type drives CUDA too.
 *
 * Rationale: no CUDA header is included here, so C programs without the toolkit can use this
 * header; a stream crosses as void * (a cudaStream_t is a pointer to an opaque struct).
 */
#ifndef SG_CUDA_H
#define SG_CUDA_H

#include "sg_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the CUDA backend can be used: the build has it, a driver loads and at least one GPU
 * is found. Where not, *why (if given) says why: "this build has no CUDA support", or CUDA's
 * own text ("no CUDA-capable device is detected", ...). The answer is found once per process. */
bool sg_cuda_available(const char **why);

/* The number of CUDA devices (0 where the backend is unavailable). Same as
 * sg_device_count(SG_DEV_CUDA, NULL). */
int sg_cuda_device_count(void);

/* Makes device `index` the calling thread's current CUDA device (cudaSetDevice: CUDA keeps it
 * per host thread, so other threads are unaffected). SG_EDEVICE where the index is out of range
 * or the backend unavailable. */
sg_status sg_cuda_set_device(int index);
/* The calling thread's current CUDA device (0 until set); -1 where the backend is unavailable. */
int sg_cuda_current_device(void);

/* Makes `stream` (a cudaStream_t of the current device, or NULL for the legacy default stream)
 * the calling thread's current stream of its current device. Each thread starts with NULL on
 * every device. The stream stays the caller's: it is not retained or destroyed here, and must
 * outlive the memory allocated on it (see above). SG_EINVAL where the stream belongs to
 * another device (with a CUDA runtime that can tell), SG_EDEVICE where CUDA is unavailable. */
sg_status sg_cuda_set_stream(void *stream);
/* The calling thread's current stream of its current device (a cudaStream_t; NULL: the legacy
 * default stream, also where the backend is unavailable). */
void *sg_cuda_current_stream(void);

/* Waits until the work queued on the calling thread's current stream of its current device has
 * finished; reports any error that work raised (SG_EDEVICE). */
sg_status sg_cuda_synchronize(void);

#ifdef __cplusplus
}
#endif
#endif
