/* sg_checks.h: argument checks every family of kernels makes, worded as aten words them, one
 * copy for the CPU kernels and the CUDA ones (plain C with C++ guards). */
#ifndef SG_CHECKS_H
#define SG_CHECKS_H

#include "sg_iter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* aten's "\"kernel\" not implemented for 'Type'": kernel names the backend's kernel
 * ("arange_cpu", "arange_cuda"), so the caller passes it. */
sg_status sg_not_implemented(const char *kernel, sg_dtype t);
/* *dim wrapped into [0, ndim) (a 0-dim tensor takes dims -1 and 0), with aten's message
 * prefixed by op. */
sg_status sg_check_dim(const char *op, int64_t *dim, int64_t ndim);

#ifdef __cplusplus
}
#endif
#endif
