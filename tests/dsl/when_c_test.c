/* when_c_test.c: a declaration's `when_c` function (tests/dsl/when_c_gate.c, linked beside the
 * generated code) ANDed into its predicate, on CPU tensors through the pure _when function, as
 * when_test.c does. Built and run by tests/dsl_artifacts.sh with the generated dslc_dsl.c
 * included. What it shows: where every generated gate holds, the C function decides (a weight
 * that overlaps the input declines, one apart takes its point); it gets the call's arguments;
 * it runs only after `when`, the compiler's assumptions and the capability held, at most once
 * per test; and the override's predicate declines CPU tensors without calling it. */
#include "dslc_dsl.c"
#include "check.h"

#include <stdio.h>

extern int rms_gate_calls;
extern const sg_tensor *rms_gate_input;
extern int64_t rms_gate_shape0;

static int when(sg_tensor *x, sg_tensor *w, int32_t cap) {
    double eps = 1e-6;
    int64_t shape[1] = {2048};
    return sg_dslg_rms_norm_triton_when(x, (sg_int_list){shape, 1}, w, &eps, cap);
}

int main(void) {
    sg_device cpu = {SG_DEV_CPU, 0};
    sg_tensor *x = NULL, *w = NULL, *wx = NULL, *wlast = NULL, *xo = NULL;
    CHECK(sg_tensor_empty((int64_t[]){4, 2048}, 2, SG_FLOAT32, cpu, &x) == SG_OK);
    CHECK(sg_tensor_empty((int64_t[]){2048}, 1, SG_FLOAT32, cpu, &w) == SG_OK);
    /* weights that are views of the input: its first row, its last */
    CHECK(sg_tensor_as_strided(x, (int64_t[]){2048}, (int64_t[]){1}, 1, 0, &wx) == SG_OK);
    CHECK(sg_tensor_as_strided(x, (int64_t[]){2048}, (int64_t[]){1}, 1, 3 * 2048, &wlast) == SG_OK);
    if (!x || !w || !wx || !wlast) return 1;

    /* the C function says yes: the point f32/2048 (index 1) is taken, with one call although
     * the point f32/1024 was tried first (its `when` failed before the C function) */
    CHECK(when(x, w, 90) == 1);
    CHECK(rms_gate_calls == 1);
    CHECK(rms_gate_input == x && rms_gate_shape0 == 2048);
    /* the same gates hold, and the C function says no: declined, and no other point is tried */
    CHECK(when(x, wx, 90) == -1);
    CHECK(rms_gate_calls == 2);
    CHECK(when(x, wlast, 90) == -1);
    CHECK(rms_gate_calls == 3);
    /* the generated gates run first: no weight, another capability, a misaligned view (the
     * compiler's 16-byte assumption) decline without calling it */
    CHECK(when(x, NULL, 90) == -1);
    CHECK(when(x, w, 80) == -1);
    CHECK(sg_tensor_as_strided(x, (int64_t[]){2, 2048}, (int64_t[]){2048, 1}, 2, 1, &xo) == SG_OK);
    CHECK(when(xo, w, 90) == -1);
    CHECK(rms_gate_calls == 3);
    /* the override's predicate: false for CPU tensors before anything else */
    int64_t n1[1] = {2048};
    CHECK(!sg_dslg_rms_norm_triton_pred(NULL, 0, x, (sg_int_list){n1, 1}, w, NULL));
    CHECK(rms_gate_calls == 3);
    /* and it says yes again for a weight apart from the input */
    CHECK(when(x, w, 90) == 1);
    CHECK(rms_gate_calls == 4);
    sg_tensor *ts[] = {x, w, wx, wlast, xo};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) sg_tensor_release(ts[i]);
    return check_result("when_c_test");
}
