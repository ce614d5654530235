/* gemm_operands.h: the CPU operands the decision-table tests look up (tests/dsl/table_test.c,
 * tests/unit/test_rt_gemm_table.c): layouts and sizes only, no values. */
#ifndef SG_TEST_GEMM_OPERANDS_H
#define SG_TEST_GEMM_OPERANDS_H

#include "sg_tensor.h"

#include <stdbool.h>

/* batch x rows x cols, rows contiguous, or columns where t; NULL where it cannot be had */
static inline sg_tensor *gemm_operand(int64_t batch, int64_t rows, int64_t cols, sg_dtype dt,
                                      bool t) {
    int64_t    sizes[3] = {batch, t ? cols : rows, t ? rows : cols};
    sg_tensor *x = NULL, *v = NULL;
    if (sg_tensor_empty(sizes, 3, dt, (sg_device){SG_DEV_CPU, 0}, &x) != SG_OK) return NULL;
    if (!t) return x;
    if (sg_tensor_transpose(x, 1, 2, &v) != SG_OK) v = NULL;
    sg_tensor_release(x);
    return v;
}

#endif
