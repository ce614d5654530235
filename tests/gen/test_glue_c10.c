/* test_glue_c10.c: the glue of tests/data/c10_custom_annotations.yaml (custom ops with alias
 * annotations on types other than Tensor, as c10 accepts them) and of
 * tests/data/c10_custom_dup_args.yaml (one argument name used twice): it compiled, the library
 * defines its ops, a typed call reaches a typed kernel with the values as given (each of the
 * arguments that share a name in its own parameter), and an annotated int does not make the
 * op an out operator (only its Tensor is written). */
#include "check.h"
#include "c10ops.h"

static int64_t seen_n;

static sg_status count_cpu(sg_keyset ks, sg_tensor *self, int64_t n, const char *tag,
                           sg_int_list dims) {
    (void)ks, (void)self, (void)tag;
    seen_n = n + dims.len;
    return SG_OK;
}

static sg_tensor *seen_a, *seen_b;

static sg_status dup_cpu(sg_keyset ks, sg_tensor *a, sg_tensor *b, int64_t n, sg_tensor **ret) {
    (void)ks;
    seen_a = a, seen_b = b, seen_n = n;
    *ret = NULL;
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
    /* c10ops::dup(Tensor x, Tensor x, *, int x=1): three parameters, in order */
    sg_tensor *u = NULL, *r = NULL;
    CHECK(sg_tensor_from_blob(data, sizes, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &u) ==
          SG_OK);
    sg_handle *hd = NULL;
    CHECK(sg_op_find("c10ops::dup", NULL, &op) == SG_OK && sg_op_nargs(op) == 3);
    CHECK(c10ops_dup_register(SG_KEY_CPU, dup_cpu, &hd) == SG_OK);
    CHECK(c10ops_dup(t, u, 7, &r) == SG_OK && seen_a == t && seen_b == u && seen_n == 7);
    sg_tensor_release(u);
    sg_tensor_release(t);
    sg_runtime_shutdown();
    return check_result("test_glue_c10");
}
