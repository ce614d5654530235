/* sg_index_shape.h: the indexing, joining and selection ops' argument checks and result shapes,
 * shared by the CPU kernels (index.c) and the CUDA ones (kernels/cuda/index.cu, sort.cu,
 * pointwise_select.cu), so both give aten's messages from one place. Device checks stay with
 * each backend (their messages name the device). */
#ifndef SG_INDEX_SHAPE_H
#define SG_INDEX_SHAPE_H

#include "sg_checks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* aten's assert_no_overlap between a written tensor and an input. */
sg_status sg_index_no_overlap(const char *op, const sg_tensor *out, const sg_tensor *in);
/* aten's assert_no_internal_overlap of a written tensor. */
sg_status sg_index_no_internal_overlap(const char *op, const sg_tensor *t);
/* An out= tensor of a structured op made ready for its meta's result, once its device is
 * checked: of the dtype (exactly, or one it casts to), resized where its shape differs, with
 * no internal overlap. */
sg_status sg_index_out_ready(const char *op, sg_tensor *out, const sg_meta *m, bool exact);
/* m = sizes, dtype t, device d */
void      sg_index_meta_of(sg_meta *m, const int64_t *sizes, int32_t n, sg_dtype t, sg_device d);
/* A Scalar as one element of dtype t (into buf), checked as aten's to<T>() is; converted on
 * the host by the CPU's cast, so the bytes are the CPU's. */
sg_status sg_index_scalar_bytes(const char *op, sg_scalar v, sg_dtype t, void *buf);
/* scatter's reduce argument: *mode 0 none, 1 add, 2 multiply. */
sg_status sg_index_reduce_of(const char *reduce, int *mode);

/* stack's checks: a non-empty list of tensors of one shape; *dim wrapped for rank + 1. */
sg_status sg_index_stack_check(sg_tensor_list ts, int64_t *dim);
/* index_select's checks (*dim wrapped, a vector index of int32 or int64, out of self's dtype)
 * and its result m: self's shape with dim of the index's length. */
sg_status sg_index_select_check(const char *op, const sg_tensor *self, int64_t *dim,
                                const sg_tensor *index, const sg_tensor *out, sg_meta *m);
/* embedding's checks of weight and indices. */
sg_status sg_index_embedding_check(const sg_tensor *weight, const sg_tensor *indices);

/* masked_fill's result shape: self and mask broadcast. */
sg_status sg_index_masked_fill_shape(const sg_tensor *self, const sg_tensor *mask, int64_t *shape,
                                     int32_t *n);
/* masked_fill_'s checks: a bool mask that broadcasts to self's shape. */
sg_status sg_index_masked_fill_check(const sg_tensor *self, const sg_tensor *mask);
/* masked_fill's value tensor: 0-dim. */
sg_status sg_index_masked_fill_value_check(const sg_tensor *value);

/* aten's clamp result type: self's dtype where floating, else promoted with the bounds. */
sg_status sg_index_clamp_type(const sg_tensor *self, const sg_scalar *lo, const sg_scalar *hi,
                              sg_dtype *r);
/* clamp.Tensor's checks (a bound given, no complex self) and the broadcast shape of self and
 * the bounds given. */
sg_status sg_index_clamp_shape(const char *op, const sg_tensor *self, const sg_tensor *lo,
                               const sg_tensor *hi, int64_t *shape, int32_t *n);

#ifdef __cplusplus
}
#endif
#endif
