/* test_rt_gemm_table.c: sg_gemm_rule_find (runtime/sg_gemm_table.h) over a table sorted as the
 * generator sorts it: the binary search lands on a class's group (dtype, layout, n, k), the
 * scan within it picks the class whose batch and m ranges hold the call, edges included; a
 * group absent (before the first, between two, after the last) finds nothing, as do operands
 * of two dtypes or a layout the table cannot name. */
#include "check.h"
#include "gemm_operands.h"
#include "sg_gemm_table.h"

#include <stdint.h>

#define R(dt, lay, n_, k_, blo, bhi, mlo, mhi, idx)                                            \
    {.dtype = dt, .layout = lay, .n = n_, .k = k_, .batch_lo = blo, .batch_hi = bhi,           \
     .m_lo = mlo, .m_hi = mhi, .use = SG_GEMM_USE_CUBLASLT, .index = idx}

/* sorted by (dtype, layout, n, k, batch_lo, m_lo); no two classes of a group share a point */
static const sg_gemm_rule rules[] = {
    R(SG_FLOAT16, SG_GEMM_NN, 256, 128, 1, 1, 1, 1000, 0),
    R(SG_FLOAT32, SG_GEMM_NN, 64, 64, 1, INT64_MAX, 1, 64, 1),
    R(SG_FLOAT32, SG_GEMM_NN, 256, 128, 1, 4, 1, 64, 2),
    R(SG_FLOAT32, SG_GEMM_NN, 256, 128, 1, 4, 65, 512, 3),
    R(SG_FLOAT32, SG_GEMM_NN, 256, 128, 5, 8, 1, 512, 4),
    R(SG_FLOAT32, SG_GEMM_NN, 256, 128, 9, 64, 100, 200, 5),
    R(SG_FLOAT32, SG_GEMM_NN, 512, 128, 2, 2, 8, 8, 7),
    R(SG_FLOAT32, SG_GEMM_NT, 256, 128, 1, 64, 1, 512, 6),
};
enum { NRULES = sizeof rules / sizeof rules[0] };

/* the index of the class of a batch x m x k by batch x k x n product (a, b row-major unless
 * at, bt), -1 where none; the batch passed is `batch`, whatever the tensors' first dim */
static int find(sg_dtype da, sg_dtype db, bool at, bool bt, int64_t batch, int64_t m, int64_t n,
                int64_t k) {
    sg_tensor *a = gemm_operand(1, m, k, da, at), *b = gemm_operand(1, k, n, db, bt);
    CHECK(a && b);
    const sg_gemm_rule *r = a && b ? sg_gemm_rule_find(rules, NRULES, a, b, batch, m, n, k)
                                   : NULL;
    sg_tensor_release(a);
    sg_tensor_release(b);
    return r ? r->index : -1;
}

static int f32(int64_t batch, int64_t m, int64_t n, int64_t k) {
    return find(SG_FLOAT32, SG_FLOAT32, false, false, batch, m, n, k);
}

int main(void) {
    /* within the group (float32, nn, 256, 128): each class, by its batch and m ranges */
    CHECK(f32(1, 1, 256, 128) == 2);
    CHECK(f32(4, 64, 256, 128) == 2);  /* both upper edges */
    CHECK(f32(4, 65, 256, 128) == 3);  /* m one past: the next class in m */
    CHECK(f32(1, 512, 256, 128) == 3);
    CHECK(f32(5, 1, 256, 128) == 4);   /* batch one past: the next class in batch */
    CHECK(f32(8, 512, 256, 128) == 4);
    CHECK(f32(9, 100, 256, 128) == 5); /* the group's last class, at its lower edges */
    CHECK(f32(64, 200, 256, 128) == 5);
    CHECK(f32(9, 99, 256, 128) == -1); /* holes in the group: no class holds them */
    CHECK(f32(9, 201, 256, 128) == -1);
    CHECK(f32(65, 150, 256, 128) == -1);
    CHECK(f32(4, 513, 256, 128) == -1);
    CHECK(f32(0, 1, 256, 128) == -1);  /* below every batch range */
    /* a class over every batch */
    CHECK(f32(1, 64, 64, 64) == 1);
    CHECK(f32(INT64_MAX, 1, 64, 64) == 1);
    CHECK(f32(3, 65, 64, 64) == -1);
    /* a one-point class, a group of its own */
    CHECK(f32(2, 8, 512, 128) == 7);
    CHECK(f32(1, 8, 512, 128) == -1 && f32(3, 8, 512, 128) == -1 && f32(2, 9, 512, 128) == -1);
    /* groups absent: before the first rule, between two, after the last */
    CHECK(find(SG_FLOAT16, SG_FLOAT16, false, false, 1, 8, 128, 128) == -1);
    CHECK(find(SG_FLOAT16, SG_FLOAT16, false, false, 1, 8, 256, 128) == 0);
    CHECK(find(SG_FLOAT16, SG_FLOAT16, false, false, 2, 8, 256, 128) == -1); /* batch 1 only */
    CHECK(f32(1, 8, 128, 128) == -1);  /* between float16's and float32's */
    CHECK(f32(1, 8, 256, 64) == -1);   /* between two float32 nn groups */
    CHECK(f32(1, 8, 1024, 128) == -1); /* between float32 nn's and nt's */
    CHECK(find(SG_FLOAT32, SG_FLOAT32, false, true, 1, 8, 1024, 128) == -1); /* past the last */
    CHECK(find(SG_BFLOAT16, SG_BFLOAT16, false, false, 1, 8, 256, 128) == -1);
    /* the layout picks the group: nt's class, and no tn or tt class */
    CHECK(find(SG_FLOAT32, SG_FLOAT32, false, true, 64, 512, 256, 128) == 6);
    CHECK(find(SG_FLOAT32, SG_FLOAT32, false, true, 65, 512, 256, 128) == -1);
    CHECK(find(SG_FLOAT32, SG_FLOAT32, true, false, 1, 8, 256, 128) == -1);
    CHECK(find(SG_FLOAT32, SG_FLOAT32, true, true, 1, 8, 256, 128) == -1);
    /* operands of two dtypes, a missing operand, an empty table */
    CHECK(find(SG_FLOAT32, SG_FLOAT16, false, false, 1, 8, 256, 128) == -1);
    sg_tensor *a = gemm_operand(1, 8, 128, SG_FLOAT32, false);
    sg_tensor *b = gemm_operand(1, 128, 256, SG_FLOAT32, false);
    CHECK(a && b);
    CHECK(sg_gemm_rule_find(rules, NRULES, a, b, 1, 8, 256, 128) == &rules[2]);
    CHECK(!sg_gemm_rule_find(rules, NRULES, NULL, b, 1, 8, 256, 128));
    CHECK(!sg_gemm_rule_find(rules, 0, a, b, 1, 8, 256, 128));
    CHECK(sg_gemm_rule_find(rules + 2, 1, a, b, 2, 8, 256, 128) == &rules[2]); /* one rule */
    CHECK(!sg_gemm_rule_find(rules + 3, 1, a, b, 1, 8, 256, 128));
    /* A with neither rows nor columns contiguous (every other element) */
    int64_t    sizes[2] = {8, 128}, strides[2] = {512, 2};
    sg_tensor *g = NULL;
    CHECK(sg_tensor_empty_strided(sizes, strides, 2, SG_FLOAT32, (sg_device){SG_DEV_CPU, 0}, &g) ==
          SG_OK);
    CHECK(g && sg_gemm_layout_of(g, b) == -1);
    CHECK(g && !sg_gemm_rule_find(rules, NRULES, g, b, 1, 8, 256, 128));
    sg_tensor_release(g);
    sg_tensor_release(a);
    sg_tensor_release(b);
    return check_result("test_rt_gemm_table");
}
