/* sg_mm_shape.h: the matrix products' checks, result shapes and layout tests, shared by the
 * CPU kernels (linalg.c) and the CUDA ones (kernels/cuda/linalg.cu), so both give aten's
 * messages from one place. */
#ifndef SG_MM_SHAPE_H
#define SG_MM_SHAPE_H

#include "sg_checks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a Scalar (beta) is zero: then the input it scales is not read (NaN included). */
bool sg_mm_scalar_is_zero(sg_scalar s);
/* Whether the matrix products take this dtype. */
bool sg_mm_dtype_ok(sg_dtype t);
/* Whether a rows x cols matrix with these strides is row-major in BLAS's sense (unit column
 * stride, leading dimension >= max(1, cols)); *ld gets its leading dimension. Strides of
 * size-1 dims are never used, so they may be anything. */
bool sg_mm_row_major(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t *ld);
/* Checks an out= tensor against what the meta function computed, as aten's structured out
 * wrappers do (same dtype and device), and resizes it where its shape differs. */
sg_status sg_mm_out_prepare(sg_tensor *out, const sg_meta *m);
/* m = a contiguous result of these sizes and dtype on like's device. */
void sg_mm_meta_set(sg_meta *m, const sg_tensor *like, sg_dtype dtype, const int64_t *sizes,
                    int32_t n);
/* self expanded to sizes, with aten's expand_size message. */
sg_status sg_mm_expand_self(sg_tensor *self, const int64_t *sizes, int32_t n, sg_tensor **out);
/* mm's checks and result. */
sg_status sg_mm_meta(sg_tensor *self, sg_tensor *mat2, sg_meta *m);
/* addmm_impl_cpu_'s own check */
sg_status sg_mm_same_dtype_m1_m2(const sg_tensor *m1, const sg_tensor *m2);
/* bmm's checks and result. */
sg_status sg_mm_bmm_checks(const sg_tensor *b1, const sg_tensor *b2, sg_meta *m);
/* the kernel reads batch2 as batch1's type */
sg_status sg_mm_bmm_dtypes(const sg_tensor *b1, const sg_tensor *b2);
/* baddbmm's checks and result; *expanded gets self expanded to the result's shape. */
sg_status sg_mm_baddbmm_checks(sg_tensor *self, const sg_tensor *b1, const sg_tensor *b2,
                               sg_meta *m, sg_tensor **expanded);
/* addmm's checks and result (its meta function without beta and alpha) */
sg_status sg_mm_addmm_checks(sg_tensor *self, sg_tensor *mat1, sg_tensor *mat2, sg_meta *m);
/* beta and alpha as aten's kernels convert them, checked, to the type they accumulate in
 * (float for the 16-bit floats, else the result's dtype t), where a product of a (the first
 * operand, its last dim k) remains to compute: a value that does not fit is refused with
 * aten's message (an int8 addmm with beta 300). */
sg_status sg_mm_scalars_check(const char *op, sg_dtype t, const sg_tensor *a, sg_scalar beta,
                              sg_scalar alpha);
/* A Scalar as an integer, as Scalar::to<int64_t>() gives it (floats truncate, saturating). */
int64_t   sg_mm_scalar_to_int(sg_scalar s);
/* Whether t's matrices (its last two dims) are each row- or column-major. */
bool      sg_mm_matrix_ok(const sg_tensor *t);
/* Whether t's matrices can be C of a gemm as they are: sg_mm_matrix_ok, and distinct
 * matrices of a batch apart. */
bool      sg_mm_gemm_layout_ok(const sg_tensor *t);

/* The out kernels' checks before they compute, out checked and resized as the meta function
 * says; addmm and baddbmm give *expanded, self expanded to the result (NULL on failure). */
sg_status sg_mm_mm_prepare(sg_tensor *self, sg_tensor *mat2, sg_tensor *out);
sg_status sg_mm_addmm_prepare(sg_tensor *self, sg_tensor *mat1, sg_tensor *mat2, sg_tensor *out,
                              sg_tensor **expanded);
sg_status sg_mm_bmm_prepare(sg_tensor *self, sg_tensor *mat2, sg_tensor *out);
sg_status sg_mm_baddbmm_prepare(sg_tensor *self, sg_tensor *b1, sg_tensor *b2, sg_tensor *out,
                                sg_tensor **expanded);

#ifdef __cplusplus
}
#endif
#endif
