/* sg_gemm_table.h: decision tables for matrix products (docs/gemm.md). A table generated from a
 * tuner's measurements lists shape classes (dtype, operand layout, an M range, N, K) and what
 * runs each: a cuBLASLt algorithm chosen by measurement or a point of a DSL template. The
 * generated override finds the call's class here; a call in no class keeps the op's kernel
 * (cuBLASLt's heuristic). Pure functions: no allocation, no CUDA. */
#ifndef SG_GEMM_TABLE_H
#define SG_GEMM_TABLE_H

#include "sg_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How an operand's matrices (its last two dims, rows x cols) lie in memory: rows contiguous
 * (row-major, "n") or columns contiguous (its transpose is row-major, "t"). */
typedef enum sg_gemm_layout {
    SG_GEMM_NN = 0, /* A and B row-major */
    SG_GEMM_NT = 1, /* A row-major, B column-major (B = W^T of a row-major W, as linear's) */
    SG_GEMM_TN = 2,
    SG_GEMM_TT = 3,
} sg_gemm_layout;

/* cuBLASLt's algorithm: its id and the configuration attributes that pin it down
 * (CUBLASLT_ALGO_CONFIG_* and the two cluster/inner-shape ids), as a tuner read them. */
typedef struct sg_gemm_lt_config {
    int32_t algo, tile, stages, splitk, reduction, swizzle, custom, inner, cluster;
} sg_gemm_lt_config;

/* What serves a class: nothing (the op's kernel runs: cuBLASLt's heuristic), a cuBLASLt
 * configuration, cuBLAS with its own choice, or a point of the table's template t
 * (SG_GEMM_USE_TEMPLATE + t). */
enum {
    SG_GEMM_USE_HEURISTIC = 0,
    SG_GEMM_USE_CUBLASLT = 1,
    SG_GEMM_USE_CUBLAS = 2,
    SG_GEMM_USE_TEMPLATE = 3
};

/* A shape class and what serves it: `use` (above) and `index`, which of the backend's
 * configurations; the finder does not read them. A product with no batch (mm, addmm) has
 * batch 1. */
typedef struct sg_gemm_rule {
    int32_t dtype;  /* sg_dtype of both operands */
    int32_t layout; /* sg_gemm_layout */
    int64_t n, k;
    int64_t batch_lo, batch_hi; /* inclusive */
    int64_t m_lo, m_hi;         /* inclusive */
    int32_t use, index;
} sg_gemm_rule;

/* The layout of the pair: -1 where a matrix of either has neither rows nor columns
 * contiguous, or either has fewer than 2 dims. */
int32_t sg_gemm_layout_of(const sg_tensor *a, const sg_tensor *b);

/* The rule of rules[0..n) whose class holds the call (a and b's dtype, which must agree, their
 * layout, batch, m, n and k), or NULL. rules are sorted by (dtype, layout, n, k, batch_lo,
 * m_lo) and no two classes of one (dtype, layout, n, k) share a (batch, m): the generator
 * checks both. */
const sg_gemm_rule *sg_gemm_rule_find(const sg_gemm_rule *rules, size_t nrules,
                                      const sg_tensor *a, const sg_tensor *b, int64_t batch,
                                      int64_t m, int64_t n, int64_t k);

#ifdef __cplusplus
}
#endif
#endif
