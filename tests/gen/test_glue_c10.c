/* test_glue_c10.c: the glue of tests/data/c10_custom_annotations.yaml (custom ops with alias
 * annotations on types other than Tensor, as c10 accepts them): it compiled, the library
 * defines its ops, a typed call reaches a typed kernel with the values as given, and an
 * annotated int does not make the op an out operator (only its Tensor is written). */
#include "check.h"
#include "c10ops.h"

static int64_t seen_n;

static sg_status count_cpu(sg_keyset ks, sg_tensor *self, int64_t n, const char *tag,
                           sg_int_list dims) {
    (void)ks, (void)self, (void)tag;
    seen_n = n + dims.len;
    return SG_OK;
}

int main(void) {
    CHECK(c10ops_init() == SG_OK);
    sg_op *op = NULL;
    CHECK(sg_op_find("c10ops::count", NULL, &op) == SG_OK && sg_op_nargs(op) == 4);
    CHECK(sg_op_find("c10ops::scale", NULL, &op) == SG_OK && sg_op_nargs(op) == 3);
    CHECK(c10ops_find("c10ops::pick", "") != NULL);
    float      data[2] = {1, 2};
    int64_t    sizes[1] = {2}, dims[2] = {0, 1};
    sg_tensor *t = NULL;
    CHECK(sg_tensor_from_blob(data, sizes, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &t) ==
          SG_OK);
    sg_handle *h = NULL;
    CHECK(c10ops_count_register(SG_KEY_CPU, count_cpu, &h) == SG_OK);
    sg_int_list l = {dims, 2};
    CHECK(c10ops_count(t, 40, "x", l) == SG_OK && seen_n == 42);
    sg_tensor_release(t);
    sg_runtime_shutdown();
    return check_result("test_glue_c10");
}
