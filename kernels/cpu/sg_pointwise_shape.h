/* sg_pointwise_shape.h: the elementwise ops' result types and argument checks, shared by the
 * CPU kernels (pointwise.c, index.c) and the CUDA ones (kernels/cuda/pointwise*.cu), so both
 * give aten's messages from one place. */
#ifndef SG_POINTWISE_SHAPE_H
#define SG_POINTWISE_SHAPE_H

#include "sg_checks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The promoted dtype of up to three tensors (NULL skipped), wrapped numbers ranked lowest. */
sg_dtype  sg_pointwise_result(const sg_tensor *a, const sg_tensor *b, const sg_tensor *c);
/* add's and sub's checks: *r the result dtype, *af and *ai alpha's value (as aten checks it:
 * no float alpha for integers, a bool alpha only for bool results); sub refuses bools. */
sg_status sg_pointwise_add_args(const char *op, const sg_tensor *self, const sg_tensor *other,
                                sg_scalar alpha, bool sub, sg_dtype *r, double *af,
                                int64_t *ai);
/* div's rounding_mode: *mode 0 none, 1 trunc, 2 floor. */
sg_status sg_pointwise_div_mode(const char *rounding, int *mode);
/* div's result dtype: the promoted one, float32 for true division (mode 0) of integers. */
sg_dtype  sg_pointwise_div_result(const sg_tensor *a, const sg_tensor *b, int mode);
/* where's checks (a bool or uint8 condition, out of the result dtype) and *r its result dtype;
 * out may be NULL. */
sg_status sg_pointwise_where_args(const sg_tensor *cond, const sg_tensor *self,
                                  const sg_tensor *other, const sg_tensor *out, sg_dtype *r);
/* clamp(Scalar)'s checks (a bound given) and *r its result dtype. */
sg_status sg_pointwise_clamp_scalar_type(const sg_tensor *self, const sg_scalar *lo,
                                         const sg_scalar *hi, sg_dtype *r);
/* The dtype rules of aten's dtype-keeping unary ops (floor, ceil, round, sign, neg, abs, silu,
 * gelu, clamp_min, clamp_max), one table for the CPU and CUDA kernels: whether self's dtype r
 * has a kernel (dev names it in the message: "cpu", "cuda"), and an out= (NULL: none) of
 * exactly r, as aten's out= checks for these ops ask. */
sg_status sg_pointwise_keep_args(const char *op, const char *dev, sg_dtype r,
                                 const sg_tensor *out);
/* An in-place binary op's shape: self and other broadcast to self's own sizes (self is not
 * resized), with aten's message where they do not. */
sg_status sg_pointwise_inplace_shape(const char *op, const sg_tensor *self,
                                     const sg_tensor *other);

#ifdef __cplusplus
}
#endif
#endif
