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
/* *dim wrapped as sg_check_dim does, with aten's bare message (maybe_wrap_dim's, no prefix). */
sg_status sg_check_wrap_dim(int64_t *dim, int32_t ndim);
/* A structured op's out= must have the dtype its meta function computed. */
sg_status sg_check_out_dtype(const sg_tensor *out, sg_dtype want);

/* c10's checked_convert of a Scalar to dtype t: whether the value overflows it. */
bool      sg_scalar_overflows(sg_scalar v, sg_dtype t);
/* Whether two views over one storage reach a common byte (a coarse test on their spans). */
bool      sg_may_overlap(const sg_tensor *a, const sg_tensor *b);
/* Whether two tensors are the same view of the same bytes. */
bool      sg_same_view(const sg_tensor *a, const sg_tensor *b);

#ifdef __cplusplus
}
#endif
#endif
