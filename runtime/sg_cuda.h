/* sg_cuda.h: the CUDA backend's per-thread state. Every call works in a build without CUDA and
 * on a machine without a GPU: it then fails with SG_EDEVICE and a message that says why. */
#ifndef SG_CUDA_H
#define SG_CUDA_H

#include "sg_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the CUDA backend can be used; *why (if given) says why not. */
bool sg_cuda_available(const char **why);

#ifdef __cplusplus
}
#endif
#endif
