/* sg_norm_shape.h: the norms' argument checks and parameter dtypes, shared by the CPU kernels
 * (norm.c) and the CUDA ones (kernels/cuda/norm.cu), so both give aten's messages from one
 * place. */
#ifndef SG_NORM_SHAPE_H
#define SG_NORM_SHAPE_H

#include "sg_checks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* aten's group_norm checks: weight and bias of C elements, C divisible by groups. */
sg_status sg_norm_check_group_inputs(const sg_tensor *input, const sg_tensor *w,
                                     const sg_tensor *b, int64_t C, int64_t groups);
/* aten's _check_layer_norm_inputs (and _check_rms_norm_inputs: bias NULL): M rows of N. */
sg_status sg_norm_check_inputs(const sg_tensor *input, sg_int_list ns, const sg_tensor *w,
                               const sg_tensor *b, int64_t *M, int64_t *N);
/* Whether t is a floating dtype the norms take. */
bool sg_norm_is_float(sg_dtype t);
/* aten's is_mixed_type / check_mixed_data_type: the parameters are "mixed" where the first one
 * given (weight, else bias) differs in dtype from the input; then every parameter must be
 * float32 and the input float16 or bfloat16, and the statistics are float32. Otherwise every
 * parameter must have the input's dtype. *pd gets the dtype of mean and rstd. */
sg_status sg_norm_param_dtype(const sg_tensor *x, const sg_tensor *w, const sg_tensor *b,
                              sg_dtype *pd);
/* Whether two shapes are equal. */
bool sg_norm_shape_eq(const int64_t *a, int32_t na, const int64_t *b, int32_t nb);

/* native_layer_norm's checks: the parameters' dtypes (*pt: the statistics'), M rows of N, a
 * floating input; stat gets the statistics' shape (input's rank). */
sg_status sg_norm_layer_checks(const sg_tensor *input, sg_int_list ns, const sg_tensor *w,
                               const sg_tensor *b, sg_dtype *pt, int64_t *M, int64_t *N,
                               int64_t *stat);
/* native_group_norm's checks: the group shapes, the parameters' dtypes (*pt: the
 * statistics'), N * C * HxW elements, a floating input. */
sg_status sg_norm_group_checks(const sg_tensor *input, const sg_tensor *w, const sg_tensor *b,
                               int64_t N, int64_t C, int64_t HxW, int64_t group, sg_dtype *pt);
/* _fused_rms_norm's checks: M rows of N, a floating input; stat gets rstd's shape. */
sg_status sg_norm_rms_checks(const sg_tensor *input, sg_int_list ns, const sg_tensor *w,
                             int64_t *M, int64_t *N, int64_t *stat);
/* aten's rms_norm_composite, which _fused_rms_norm is on the CPU (and Meta), by dispatched ops:
 * the mean of squares over the last ns.len dims whatever their sizes, a weight that
 * broadcasts, no shape checks. The fused kernels serve the inputs rms_norm's checks allow;
 * this the rest. */
sg_status sg_norm_rms_composite(sg_tensor *input, sg_int_list ns, sg_tensor *weight,
                                const double *eps, sg_tensor **out, sg_tensor **rstd_out);

#ifdef __cplusplus
}
#endif
#endif
