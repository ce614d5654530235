/* sg_reduce_shape.h: the reductions' argument checks, dims and result shapes, shared by the CPU
 * kernels (reduce.c) and the CUDA ones (kernels/cuda/reduce*.cu), so both give aten's messages
 * from one place. The loops, and the device checks (their messages name the device), stay with
 * each backend. */
#ifndef SG_REDUCE_SHAPE_H
#define SG_REDUCE_SHAPE_H

#include "sg_checks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The dims reduced: mask[d] for each of self's dims. */
typedef struct sg_rdims {
    bool mask[SG_MAX_DIMS];
} sg_rdims;

/* ---- dims and shapes ------------------------------------------------------------------------- */

/* From a dim list (sg_reduce_dims); NULL, like [], reduces every dim. */
sg_status sg_reduce_dims_list(const sg_tensor *t, const sg_int_list *l, sg_rdims *r);
/* One dim, already wrapped. */
void      sg_reduce_dims_one(const sg_tensor *t, int64_t dim, sg_rdims *r);
/* The result's sizes: t's, less (or with size 1 at, for keepdim) the reduced dims. */
void      sg_reduce_shape(const sg_tensor *t, const sg_rdims *r, bool keepdim, int64_t *sizes,
                          int32_t *n);
/* Gives out the reduced shape (out= tensors are resized as aten resizes them). */
sg_status sg_reduce_shape_out(sg_tensor *out, const sg_tensor *self, const sg_rdims *r,
                              bool keepdim);
/* A fresh result of the reduced shape on device dev. */
sg_status sg_reduce_new_result(const sg_tensor *self, const sg_rdims *r, bool keepdim,
                               sg_dtype dtype, sg_device dev, sg_tensor **out);
/* A view of t (the result, in its final shape) with size 1 at the reduced dims of an input of
 * rank ndim: the keepdim form the iterator writes through. */
sg_status sg_reduce_keepdim_view(sg_tensor *t, const sg_rdims *r, int32_t ndim, bool keepdim,
                                 sg_tensor **out);
/* The result's dtype for sum/prod/cumsum without a dtype argument. */
sg_dtype  sg_reduce_int_to_long(sg_dtype t);

/* ---- results --------------------------------------------------------------------------------- */

/* The last step of an out= kernel: the reference it returns. */
sg_status sg_reduce_give(sg_status st, sg_tensor *out, sg_tensor **ret);
/* A functional kernel's result: out on success, released on failure. */
sg_status sg_reduce_give_new(sg_status st, sg_tensor *out, sg_tensor **ret);

/* ---- checks ---------------------------------------------------------------------------------- */

/* op's "not implemented" for a complex t. */
sg_status sg_reduce_no_complex(const char *op, const sg_tensor *t);
/* aten's zero_numel_check_dims: a reduction without an identity needs non-empty dims. */
sg_status sg_reduce_check_nonempty(const char *fn, const sg_tensor *self, const int64_t *dims,
                                   int32_t n);
/* sum.dim_IntList's checks (out's dtype where dtype is given) and dims. */
sg_status sg_reduce_sum_args(const sg_tensor *self, const sg_int_list *dim,
                             const sg_dtype *dtype, const sg_tensor *out, sg_rdims *r);
/* mean's: a floating (or complex) dtype only, never inferred from integers. */
sg_status sg_reduce_mean_dtype(const sg_tensor *self, const sg_dtype *dtype);
/* mean.out's checks and dims. */
sg_status sg_reduce_mean_args(const sg_tensor *self, const sg_int_list *dim,
                              const sg_dtype *dtype, const sg_tensor *out, sg_rdims *r);
/* prod.int_out's checks and dims; *dim is wrapped. */
sg_status sg_reduce_prod_args(const sg_tensor *self, int64_t *dim, const sg_dtype *dtype,
                              const sg_tensor *out, sg_rdims *r);
/* amax/amin.out's checks and dims; fn is "amax()" or "amin()". */
sg_status sg_reduce_amax_args(const char *fn, const sg_tensor *self, sg_int_list dim,
                              const sg_tensor *out, sg_rdims *r);
/* max()/min() into out: checks, and every dim; fn is "max()" or "min()". An empty self is
 * allowed (aten's max.unary_out writes the reduction's identity: -inf, the dtype's least, ...);
 * the functional max() refuses it itself. */
sg_status sg_reduce_all_args(const char *fn, const sg_tensor *self, const sg_tensor *out,
                             sg_rdims *r);
/* max.dim / min.dim: *dim wrapped, and not empty. */
sg_status sg_reduce_dim_check(const char *fn, const sg_tensor *self, int64_t *dim);
/* max.dim_max / min.dim_min's checks and dims. */
sg_status sg_reduce_max_dim_args(const char *fn, const sg_tensor *self, int64_t dim,
                                 const sg_tensor *values, const sg_tensor *indices, sg_rdims *r);
/* argmax / argmin's dims: dim None flattens. */
sg_status sg_reduce_arg_dims(const char *fn, const sg_tensor *self, const int64_t *dim,
                             sg_rdims *r);
/* argmax/argmin.out's checks and dims; kernel names the backend's ("argmax_cpu") for bool. */
sg_status sg_reduce_argmax_args(const char *fn, const char *kernel, const sg_tensor *self,
                                const int64_t *dim, const sg_tensor *out, sg_rdims *r);
/* The arg reductions' outputs shaped (values may be NULL) and *x the input they read: self, or
 * a contiguous copy where several dims are reduced, so that positions count along them in
 * order. */
sg_status sg_reduce_arg_prepare(const char *op, sg_tensor *self, const sg_rdims *r, bool keepdim,
                                sg_tensor *values, sg_tensor *indices, sg_tensor **x);
/* var/std's checks and dims, and out shaped. */
sg_status sg_reduce_var_args(const char *op, const sg_tensor *self, const sg_int_list *dim,
                             bool keepdim, sg_tensor *out, sg_rdims *r);
/* logsumexp's checks and dims, and out shaped. */
sg_status sg_reduce_lse_args(const sg_tensor *self, sg_int_list dim, bool keepdim,
                             sg_tensor *out, sg_rdims *r);
/* cumsum.out's and cumsum_'s (inplace: out is self) checks; *dim is wrapped. */
sg_status sg_reduce_cumsum_args(const sg_tensor *self, int64_t *dim, const sg_dtype *dtype,
                                const sg_tensor *out, bool inplace);
/* out resized to self's shape where it differs, and self seen along dim (wrapped) as
 * [outer, len, inner]: the lines a scan or a softmax runs along. */
sg_status sg_reduce_lines(const sg_tensor *self, int64_t dim, sg_tensor *out, int64_t *outer,
                          int64_t *len, int64_t *inner);

#ifdef __cplusplus
}
#endif
#endif
