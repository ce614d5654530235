/* table_test.c: the generated decision table of tests/dsl/table.yaml on CPU tensors (built and
 * run by tests/dsl_table.sh with the generated LIB_dsl.c included): each call finds its class
 * by dtype, operand layout, M range, N and K, or none; the template's test takes only the point
 * asked for; its points are named as the table names them; the overrides decline CPU tensors;
 * the public entry refuses a point out of range and tensors off CUDA. my_mm_lt is the table's
 * cuBLASLt function, which CPU tensors never reach. bmm_table's finder also picks by the batch
 * range, and finds a float32 class only while my_allow_tf32 says yes. */
#include "dslt_dsl.c"
#include "check.h"
#include "gemm_operands.h"

#include <stdio.h>
#include <string.h>

static int lt_calls;

sg_status my_mm_lt(const sg_gemm_lt_config *cfg, sg_keyset ks, sg_tensor *self, sg_tensor *mat2,
                   sg_tensor **ret) {
    (void)cfg, (void)ks, (void)self, (void)mat2;
    lt_calls++;
    *ret = NULL;
    return SG_EUNSUPPORTED;
}

sg_status my_bmm_lt(const sg_gemm_lt_config *cfg, sg_keyset ks, sg_tensor *self, sg_tensor *mat2,
                    sg_tensor **ret) {
    (void)cfg, (void)ks, (void)self, (void)mat2;
    lt_calls++;
    *ret = NULL;
    return SG_EUNSUPPORTED;
}

/* never reached on CPU tensors: the predicate declines them */
sg_status my_cols_cublas(sg_keyset ks, sg_tensor *self, sg_tensor *mat2, int64_t cols,
                         sg_tensor **ret) {
    (void)ks, (void)self, (void)mat2, (void)cols;
    *ret = NULL;
    return SG_EUNSUPPORTED;
}

sg_status my_cols_lt(const sg_gemm_lt_config *cfg, sg_keyset ks, sg_tensor *self,
                     sg_tensor *mat2, int64_t cols, sg_tensor **ret) {
    (void)cfg, (void)ks, (void)self, (void)mat2, (void)cols;
    lt_calls++;
    *ret = NULL;
    return SG_EUNSUPPORTED;
}

static bool tf32_allowed;
static int  tf32_asked;

bool my_allow_tf32(void) {
    tf32_asked++;
    return tf32_allowed;
}

static sg_tensor *make(int64_t rows, int64_t cols, sg_dtype dt) {
    int64_t    sizes[2] = {rows, cols};
    sg_tensor *t = NULL;
    if (sg_tensor_empty(sizes, 2, dt, (sg_device){SG_DEV_CPU, 0}, &t) != SG_OK) return NULL;
    return t;
}

/* bmm_table's class of a batch x m x 128 by batch x 128 x 256 product (B columns contiguous
 * where bt), or NULL */
static const sg_gemm_rule *bmm_find(int64_t batch, int64_t m, sg_dtype dt, bool bt) {
    sg_tensor *a = gemm_operand(batch, m, 128, dt, false);
    sg_tensor *b = gemm_operand(batch, 128, 256, dt, bt);
    CHECK(a && b);
    const sg_gemm_rule *r = a && b ? sg_dslg_bmm_table_find(a, b, 90) : NULL;
    sg_tensor_release(a);
    sg_tensor_release(b);
    return r;
}

static void test_bmm(void) {
    const sg_gemm_rule *r;
    /* bfloat16 nn: m [1, 64] by batch [1, 4] (algo 7) and [5, 64] (heuristic), m [65, 512] at
     * batch [1, 64] (algo 8) */
    CHECK((r = bmm_find(2, 32, SG_BFLOAT16, false)) && r->use == SG_GEMM_USE_CUBLASLT &&
          sg_dslg_bmm_table_lt[r->index].algo == 7);
    CHECK((r = bmm_find(1, 1, SG_BFLOAT16, false)) && r->batch_hi == 4);
    CHECK((r = bmm_find(4, 64, SG_BFLOAT16, false)) && r->batch_hi == 4 && r->m_hi == 64);
    CHECK((r = bmm_find(5, 32, SG_BFLOAT16, false)) && r->use == SG_GEMM_USE_HEURISTIC &&
          r->batch_lo == 5);
    CHECK((r = bmm_find(64, 64, SG_BFLOAT16, false)) && r->use == SG_GEMM_USE_HEURISTIC);
    CHECK((r = bmm_find(3, 100, SG_BFLOAT16, false)) && r->use == SG_GEMM_USE_CUBLASLT &&
          sg_dslg_bmm_table_lt[r->index].algo == 8);
    CHECK((r = bmm_find(64, 512, SG_BFLOAT16, false)) && sg_dslg_bmm_table_lt[r->index].algo == 8);
    CHECK(!bmm_find(65, 32, SG_BFLOAT16, false));  /* a batch past every range */
    CHECK(!bmm_find(65, 100, SG_BFLOAT16, false));
    CHECK(!bmm_find(2, 513, SG_BFLOAT16, false));  /* an M past every range */
    /* nt: a class without `batch` holds every batch */
    CHECK((r = bmm_find(1, 8, SG_BFLOAT16, true)) && r->layout == SG_GEMM_NT &&
          r->batch_lo == 1 && r->batch_hi == INT64_MAX);
    CHECK((r = bmm_find(1000, 8, SG_BFLOAT16, true)) && r->layout == SG_GEMM_NT);
    /* float32: only while TF32 is allowed, and asked only for float32 calls */
    tf32_allowed = false;
    tf32_asked = 0;
    CHECK(!bmm_find(2, 32, SG_FLOAT32, false));
    CHECK(tf32_asked == 1);
    CHECK(bmm_find(2, 32, SG_BFLOAT16, false) && tf32_asked == 1);
    tf32_allowed = true;
    CHECK((r = bmm_find(2, 32, SG_FLOAT32, false)) && r->dtype == SG_FLOAT32 &&
          sg_dslg_bmm_table_lt[r->index].algo == 9);
    CHECK(!bmm_find(9, 32, SG_FLOAT32, false)); /* past its batch range */
    tf32_allowed = false;
    CHECK(!bmm_find(2, 32, SG_FLOAT32, false));
    /* cols_table: M [1, 8] is cuBLAS's, [9, 64] a cuBLASLt algorithm's */
    sg_tensor *a4 = make(4, 128, SG_BFLOAT16), *a16 = make(16, 128, SG_BFLOAT16);
    sg_tensor *b2 = make(128, 256, SG_BFLOAT16);
    CHECK(a4 && a16 && b2);
    CHECK((r = sg_dslg_cols_table_find(a4, b2, 3, 90)) && r->use == SG_GEMM_USE_CUBLAS);
    CHECK((r = sg_dslg_cols_table_find(a16, b2, 3, 90)) && r->use == SG_GEMM_USE_CUBLASLT &&
          sg_dslg_cols_table_lt[r->index].algo == 5);
    sg_tensor_release(a4), sg_tensor_release(a16), sg_tensor_release(b2);
    /* mm's table has no batch: its classes are batch 1 */
    CHECK(sg_dslg_mm_table_rules[0].batch_lo == 1 && sg_dslg_mm_table_rules[0].batch_hi == 1);
}

/* t's transpose, a view (columns contiguous) */
static sg_tensor *transposed(sg_tensor *t) {
    sg_tensor *v = NULL;
    if (sg_tensor_transpose(t, 0, 1, &v) != SG_OK) return NULL;
    return v;
}

int main(void) {
    sg_tensor *a8 = make(8, 128, SG_BFLOAT16), *a32 = make(32, 128, SG_BFLOAT16);
    sg_tensor *a64 = make(64, 128, SG_BFLOAT16), *a65 = make(65, 128, SG_BFLOAT16);
    sg_tensor *a2000 = make(2000, 128, SG_BFLOAT16), *b = make(128, 256, SG_BFLOAT16);
    sg_tensor *bt_src = make(256, 128, SG_BFLOAT16), *bt = bt_src ? transposed(bt_src) : NULL;
    sg_tensor *h = make(32, 128, SG_FLOAT16), *hb = make(128, 256, SG_FLOAT16);
    sg_tensor *b300 = make(128, 300, SG_BFLOAT16), *f = make(32, 128, SG_FLOAT32);
    CHECK(a8 && a32 && a64 && a65 && a2000 && b && bt && h && hb && b300 && f);
    const sg_gemm_rule *r;
    /* bfloat16 nn: [1, 16] cuBLASLt, [17, 64] the template, [65, 1000] the heuristic */
    CHECK((r = sg_dslg_mm_table_find(a8, b, 90)) && r->use == SG_GEMM_USE_CUBLASLT &&
          r->m_lo == 1);
    CHECK((r = sg_dslg_mm_table_find(a32, b, 90)) && r->use == SG_GEMM_USE_TEMPLATE &&
          r->m_hi == 64);
    CHECK((r = sg_dslg_mm_table_find(a64, b, 90)) && r->use == SG_GEMM_USE_TEMPLATE);
    CHECK((r = sg_dslg_mm_table_find(a65, b, 90)) && r->use == SG_GEMM_USE_HEURISTIC);
    CHECK(!sg_dslg_mm_table_find(a2000, b, 90));  /* past every M range */
    CHECK(!sg_dslg_mm_table_find(a32, b300, 90)); /* an N no class has */
    CHECK(!sg_dslg_mm_table_find(f, b, 90));      /* dtypes differ */
    /* B transposed: nt, its own class and its own algorithm */
    CHECK((r = sg_dslg_mm_table_find(a32, bt, 90)) && r->use == SG_GEMM_USE_CUBLASLT &&
          r->layout == SG_GEMM_NT);
    CHECK(r && sg_dslg_mm_table_lt[r->index].algo == 21 &&
           sg_dslg_mm_table_lt[r->index].splitk == 2);
    CHECK((r = sg_dslg_mm_table_find(a8, b, 90)) && sg_dslg_mm_table_lt[r->index].algo == 66 &&
           sg_dslg_mm_table_lt[r->index].cluster == 4);
    /* float16: the template's point 6, {float16, 128, 4}, at sm_90: its artifact 2 * 6 + 0 */
    CHECK((r = sg_dslg_mm_table_find(h, hb, 90)) && r->use == SG_GEMM_USE_TEMPLATE);
    CHECK(r && strcmp(dslt_dsl_point_mm_tpl((int32_t)(r->index / 2)),
                       "{dtype: float16, BM: 128, W: 4}") == 0);
    /* the template's test takes only the artifact asked for, and only where it fits */
    CHECK(r && sg_dslg_mm_tpl_when(h, hb, 90, (int)r->index) == (int)r->index);
    CHECK(r && r->index == 12);
    CHECK(sg_dslg_mm_tpl_when(h, hb, 90, 2) == -1);      /* {bfloat16, 64, 8}: not float16 */
    CHECK(sg_dslg_mm_tpl_when(a32, b, 90, 2) == 2);       /* bfloat16, 64, 8 at sm_90 */
    CHECK(sg_dslg_mm_tpl_when(a32, b, 100, 3) == 3);      /* ... at sm_100 */
    CHECK(sg_dslg_mm_tpl_when(a32, b, 90, 3) == -1);      /* the sm_100 artifact at sm_90 */
    CHECK(sg_dslg_mm_tpl_when(a32, bt, 90, 2) == -1);     /* not contiguous */
    CHECK(dslt_dsl_point_mm_tpl(0) && !dslt_dsl_point_mm_tpl(8) && !dslt_dsl_point_mm_tpl(-1));
    CHECK(strcmp(dslt_dsl_point_mm_tpl(7), "{dtype: float16, BM: 128, W: 8}") == 0);
    /* CPU tensors: the table declines, and the entries refuse */
    CHECK(!sg_dslg_mm_table_pred(NULL, 0, a8, b));
    sg_tensor *out = NULL;
    CHECK(dslt_dsl_run_mm_tpl(8, a32, b, &out) == SG_EINVAL && !out);
    CHECK(dslt_dsl_run_mm_tpl(0, a32, b, &out) == SG_EINVAL && !out); /* not on a CUDA device */
    test_bmm();
    CHECK(lt_calls == 0);
    sg_tensor *ts[] = {a8, a32, a64, a65, a2000, b, bt_src, bt, h, hb, b300, f};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) sg_tensor_release(ts[i]);
    return check_result("table_test");
}
