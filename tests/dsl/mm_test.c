/* mm_test.c: the generated predicates of tests/dsl/mm.yaml, outputs with their own sizes, run
 * on CPU tensors (built and run by tests/dsl_artifacts.sh with the generated LIB_dsl.c
 * included). What it shows: aten::mm's declaration takes matching matrices at the point of
 * their dtype; a size expression that is negative, or whose guard fails (an overflow), at the
 * point makes the predicate false there, while the same arguments pass at a point where the
 * size can be had; an int32 numel assumed for the output gates the product of its sizes; the
 * predicate is false for CPU tensors. */
#include "dslm_dsl.c"
#include "check.h"

#include <stdio.h>

static sg_tensor *make(int64_t rows, int64_t cols, sg_dtype dt) {
    int64_t sizes[2] = {rows, cols};
    sg_tensor *t = NULL;
    if (sg_tensor_empty(sizes, 2, dt, (sg_device){SG_DEV_CPU, 0}, &t) != SG_OK) return NULL;
    return t;
}

int main(void) {
    sg_tensor *a = make(4, 8, SG_FLOAT32), *b = make(8, 16, SG_FLOAT32);
    sg_tensor *c = make(7, 16, SG_FLOAT32);
    sg_tensor *ab = make(4, 8, SG_BFLOAT16), *bb = make(8, 16, SG_BFLOAT16);
    sg_tensor *s1 = make(4, 1, SG_FLOAT32), *s2 = make(4, 2, SG_FLOAT32);
    CHECK(a && b && c && ab && bb && s1 && s2);
    /* aten::mm: 0 float32, 1 bfloat16 */
    CHECK(sg_dslg_mm_triton_when(a, b, 90) == 0);
    CHECK(sg_dslg_mm_triton_when(ab, bb, 90) == 1);
    CHECK(sg_dslg_mm_triton_when(a, c, 90) == -1);  /* 8 columns, 7 rows */
    CHECK(sg_dslg_mm_triton_when(a, bb, 90) == -1); /* dtypes differ */
    CHECK(sg_dslg_mm_triton_when(a, b, 80) == -1);  /* another capability */
    CHECK(!sg_dslg_mm_triton_pred(NULL, 0, a, b));  /* CPU tensors */
    /* my::mm_cols, sizes [self.size(0), cols * S, 1]; the point is S = self.size(1) */
    CHECK(sg_dslg_mm_cols_triton_when(s1, b, 3, 90) == 0);
    CHECK(sg_dslg_mm_cols_triton_when(s2, b, 3, 90) == 1);
    CHECK(sg_dslg_mm_cols_triton_when(s1, b, 0, 90) == 0);   /* an empty output */
    CHECK(sg_dslg_mm_cols_triton_when(s1, b, -1, 90) == -1); /* a negative size */
    CHECK(sg_dslg_mm_cols_triton_when(s2, b, -1, 90) == -1);
    int64_t big = INT64_MAX / 2 + 1; /* cols * 2 overflows, cols * 1 does not */
    CHECK(sg_dslg_mm_cols_triton_when(s2, b, big, 90) == -1);
    CHECK(sg_dslg_mm_cols_triton_when(s1, b, big, 90) == 0);
    /* at S=2 the sidecar says the compiler assumed an int32 numel (tests/dsl_artifacts.sh):
     * 4 x 2^29 x 1 elements do not fit, 4 x 2^28 x 1 do */
    CHECK(sg_dslg_mm_cols_triton_when(s2, b, INT64_C(1) << 27, 90) == 1);
    CHECK(sg_dslg_mm_cols_triton_when(s2, b, INT64_C(1) << 28, 90) == -1);
    CHECK(sg_dslg_mm_cols_triton_when(s1, b, INT64_C(1) << 29, 90) == 0); /* no such gate */
    CHECK(!sg_dslg_mm_cols_triton_pred(NULL, 0, s1, b, 3));
    sg_tensor *ts[] = {a, b, c, ab, bb, s1, s2};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) sg_tensor_release(ts[i]);
    return check_result("mm_test");
}
