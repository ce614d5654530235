/* hostile_test.c: the predicate of tests/dsl/hostile.yaml run on CPU tensors, for what the
 * generator adds to its `when`: an i32 parameter (a = stream - 1) must fit in int32, or the
 * call declines (the kernel was compiled for a 32-bit value and would truncate it); the
 * bounds are inclusive. Built and run by tests/dsl_artifacts.sh with the generated
 * LIB_dsl.c included, so its static functions are in reach. */
#include "dslh_dsl.c"

#include <stdio.h>

bool hostile_gate(sg_tensor *p, sg_tensor *ok, sg_int_list sizes, int64_t i, const double *st,
                  bool device, int64_t grid, int64_t capability, int64_t stream, int64_t args,
                  int64_t g, int64_t d, int64_t k) {
    (void)p, (void)ok, (void)sizes, (void)i, (void)st, (void)device, (void)grid;
    (void)capability, (void)stream, (void)args, (void)g, (void)d, (void)k;
    return true;
}

static int         failures;
static sg_tensor  *p, *ok;
static const double half = 0.5;

static int when(int64_t stream) {
    int64_t n[1] = {64};
    return sg_dslg_hostile_when(p, ok, (sg_int_list){n, 1}, 2, &half, true, 1, 1, stream, 0, 0,
                                1, 1, 90);
}

#define EXPECT(c)                                                                 \
    do {                                                                          \
        if (!(c)) {                                                               \
            failures++;                                                           \
            fprintf(stderr, "hostile_test.c:%d: check failed: %s\n", __LINE__, #c); \
        }                                                                         \
    } while (0)

int main(void) {
    int64_t sizes[2] = {64, 64};
    EXPECT(sg_tensor_empty(sizes, 2, SG_FLOAT32, (sg_device){SG_DEV_CPU, 0}, &p) == SG_OK);
    EXPECT(sg_tensor_empty(sizes, 2, SG_FLOAT32, (sg_device){SG_DEV_CPU, 0}, &ok) == SG_OK);
    if (!p || !ok) return 1;
    EXPECT(when(5) == 0);                                  /* a = 4 */
    EXPECT(when((int64_t)INT32_MAX + 1) == 0);             /* a = INT32_MAX */
    EXPECT(when((int64_t)INT32_MAX + 2) == -1);            /* a = INT32_MAX + 1 */
    EXPECT(when((int64_t)INT32_MIN + 1) == 0);             /* a = INT32_MIN */
    EXPECT(when((int64_t)INT32_MIN) == -1);                /* a = INT32_MIN - 1 */
    EXPECT(when(INT64_MIN) == -1);                         /* stream - 1 overflows: false */
    sg_tensor_release(p);
    sg_tensor_release(ok);
    printf("hostile_test: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
