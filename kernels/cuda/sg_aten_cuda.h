/* sg_aten_cuda.h: the aten library with its CUDA kernels (and its CPU ones). */
#ifndef SG_ATEN_CUDA_H
#define SG_ATEN_CUDA_H

#include "sg_aten_cpu.h"
#include "sg_gemm_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defines the aten ops, registers every CPU kernel (sg_aten_cpu_init) and every CUDA kernel.
 * Call once before any op. Works without a GPU: the CUDA kernels are then never reached, as no
 * CUDA tensor can be made. */
sg_status sg_aten_cuda_init(void);

/* Whether float32 matrix products on CUDA (mm, addmm, bmm, baddbmm and what is built on them:
 * matmul, linear, scaled_dot_product_attention) may round their inputs to TF32 on tensor cores,
 * as torch.backends.cuda.matmul.allow_tf32. Off by default (full float32 precision); the switch
 * is process-wide and takes effect for the products launched after it. */
sg_status sg_cuda_set_allow_tf32(bool allow);
bool      sg_cuda_allow_tf32(void);

/* aten::mm on CUDA through cuBLASLt's algorithm cfg (a decision table's choice, docs/gemm.md;
 * NULL: the heuristic's), with mm's checks and a new result in *ret. Where cuBLASLt refuses cfg
 * for the problem, the heuristic's algorithm runs: the result is the same. */
sg_status sg_cuda_mm_lt(const sg_gemm_lt_config *cfg, sg_keyset ks, sg_tensor *self,
                        sg_tensor *mat2, sg_tensor **ret);
/* aten::addmm and aten::bmm likewise. addmm adds a bias row (self broadcast over the rows, beta
 * 1: linear's bias) in cuBLASLt's epilogue, as its CUDA kernel does. */
sg_status sg_cuda_addmm_lt(const sg_gemm_lt_config *cfg, sg_keyset ks, sg_tensor *self,
                           sg_tensor *mat1, sg_tensor *mat2, sg_scalar beta, sg_scalar alpha,
                           sg_tensor **ret);
sg_status sg_cuda_bmm_lt(const sg_gemm_lt_config *cfg, sg_keyset ks, sg_tensor *self,
                         sg_tensor *mat2, sg_tensor **ret);

/* aten::mm, addmm and bmm on CUDA through cuBLAS (cublasGemmEx: PyTorch's eager kernels, with
 * cuBLAS's own choice of kernel, which can differ from cuBLASLt's heuristic), where a decision
 * table picks it. Checks and result as
 * sg_cuda_mm_lt; where cuBLAS declines the layout, cuBLASLt runs. addmm copies self into the
 * result first (cuBLAS has no bias epilogue). */
sg_status sg_cuda_mm_cublas(sg_keyset ks, sg_tensor *self, sg_tensor *mat2, sg_tensor **ret);
sg_status sg_cuda_addmm_cublas(sg_keyset ks, sg_tensor *self, sg_tensor *mat1, sg_tensor *mat2,
                               sg_scalar beta, sg_scalar alpha, sg_tensor **ret);
sg_status sg_cuda_bmm_cublas(sg_keyset ks, sg_tensor *self, sg_tensor *mat2, sg_tensor **ret);

typedef enum sg_cuda_gemm_op { SG_CUDA_GEMM_MM, SG_CUDA_GEMM_ADDMM, SG_CUDA_GEMM_BMM } sg_cuda_gemm_op;

/* For tuners and benchmarks, the functions above by op: cuBLAS where blas, else cuBLASLt with
 * cfg (NULL: its heuristic); self, beta and alpha are addmm's (the others ignore them), a and b
 * the operands. */
sg_status sg_cuda_gemm(sg_cuda_gemm_op op, const sg_gemm_lt_config *cfg, bool blas,
                       sg_tensor *self, sg_tensor *a, sg_tensor *b, sg_scalar beta,
                       sg_scalar alpha, sg_tensor **ret);

/* For tuners: the configurations of the first `cap` algorithms cuBLASLt's heuristic offers for
 * the problem op would run on these arguments (self, beta and alpha: addmm's; a and b: the
 * operands), into cfg[0..*got); the first is what runs without a table. *got is 0 where the
 * problem does not go to cuBLASLt (integers, an empty product, a layout it cannot take, no
 * algorithm). Nothing is computed. */
sg_status sg_cuda_gemm_lt_candidates(sg_cuda_gemm_op op, sg_tensor *self, sg_tensor *a,
                                     sg_tensor *b, sg_scalar beta, sg_scalar alpha, int32_t cap,
                                     sg_gemm_lt_config *cfg, int32_t *got);

#ifdef __cplusplus
}
#endif
#endif
