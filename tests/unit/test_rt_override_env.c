#define _POSIX_C_SOURCE 200809L /* setenv */
/* test_rt_override_env.c: SG_DISABLE_OVERRIDES=1 in the environment switches overrides off
 * (read once, when the first table is built), and the API switches them back on. */
#include "check.h"
#include "sg_runtime.h"

#include <stdlib.h>

static const char *ran;

static sg_status kernel(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                        int32_t nrets, void *ctx) {
    (void)op, (void)ks, (void)args, (void)rets, (void)nrets;
    ran = ctx;
    return SG_OK;
}

static bool always(void *ctx, const sg_op *op, sg_keyset ks, const sg_any *args, int32_t nargs) {
    (void)ctx, (void)op, (void)ks, (void)args, (void)nargs;
    return true;
}

int main(void) {
    setenv("SG_DISABLE_OVERRIDES", "1", 1);
    sg_op     *op;
    sg_handle *k, *o;
    float      data[2];
    int64_t    n[1] = {2};
    sg_tensor *t;
    CHECK(sg_op_define("env::f(Tensor x) -> ()", &op) == SG_OK);
    CHECK(sg_tensor_from_blob(data, n, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &t) == SG_OK);
    CHECK(sg_op_impl(op, SG_KEY_CPU, (sg_kernel){NULL, kernel, (void *)"stock"}, &k) == SG_OK);
    CHECK(sg_op_override(op, SG_KEY_CPU, 0, always, kernel, (void *)"override", &o) == SG_OK);
    CHECK(!sg_overrides_enabled());
    sg_any arg = sg_any_tensor(t);
    CHECK(sg_op_call_boxed(op, &arg, 1, NULL, 0) == SG_OK);
    CHECK_STR(ran, "stock");
    CHECK(sg_op_entry(op, SG_KEY_CPU).kind == SG_ENTRY_KERNEL);
    sg_overrides_set_enabled(true);
    CHECK(sg_op_call_boxed(op, &arg, 1, NULL, 0) == SG_OK);
    CHECK_STR(ran, "override");
    sg_tensor_release(t);
    sg_runtime_shutdown();
    return check_result("test_rt_override_env");
}
