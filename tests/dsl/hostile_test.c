/* hostile_test.c: the predicate of tests/dsl/hostile.yaml run on CPU tensors, for what the
 * generator adds to its `when`: an i32 parameter (a = stream - 1) must fit in int32, or the
 * call declines (the kernel was compiled for a 32-bit value and would truncate it); the
 * bounds are inclusive. Built and run by tests/dsl_artifacts.sh with the generated
 * LIB_dsl.c included, so its static functions are in reach. */
#include "dslh_dsl.c"
#include "check.h"

#include <stdio.h>

bool hostile_gate(sg_tensor *p, sg_tensor *ok, sg_int_list sizes, int64_t i, const double *st,
                  bool device, int64_t grid, int64_t capability, int64_t stream, int64_t args,
                  int64_t g, int64_t d, int64_t k) {
    (void)p, (void)ok, (void)sizes, (void)i, (void)st, (void)device, (void)grid;
    (void)capability, (void)stream, (void)args, (void)g, (void)d, (void)k;
    return true;
}

static sg_tensor  *p, *ok;
static const double half = 0.5;

static int when(int64_t stream) {
    int64_t n[1] = {64};
    return sg_dslg_hostile_when(p, ok, (sg_int_list){n, 1}, 2, &half, true, 1, 1, stream, 0, 0,
                                1, 1, 90);
}

int main(void) {
    int64_t sizes[2] = {64, 64};
    CHECK(sg_tensor_empty(sizes, 2, SG_FLOAT32, (sg_device){SG_DEV_CPU, 0}, &p) == SG_OK);
    CHECK(sg_tensor_empty(sizes, 2, SG_FLOAT32, (sg_device){SG_DEV_CPU, 0}, &ok) == SG_OK);
    if (!p || !ok) return 1;
    CHECK(when(5) == 0);                                  /* a = 4 */
    CHECK(when((int64_t)INT32_MAX + 1) == 0);             /* a = INT32_MAX */
    CHECK(when((int64_t)INT32_MAX + 2) == -1);            /* a = INT32_MAX + 1 */
    CHECK(when((int64_t)INT32_MIN + 1) == 0);             /* a = INT32_MIN */
    CHECK(when((int64_t)INT32_MIN) == -1);                /* a = INT32_MIN - 1 */
    CHECK(when(INT64_MIN) == -1);                         /* stream - 1 overflows: false */
    sg_tensor_release(p);
    sg_tensor_release(ok);
    return check_result("hostile_test");
}
