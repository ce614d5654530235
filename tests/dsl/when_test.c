/* when_test.c: the generated predicates of tests/dsl/rms_norm.yaml run on CPU tensors (the
 * _when functions are pure: they read tensor descriptions, never the device). Built and run
 * by tests/dsl_artifacts.sh with the generated LIB_dsl.c included, so its static functions are
 * in reach. What it shows: the matching point and only it is found; what the compiler assumed
 * (16-byte alignment) and the launch needs declines a call it does not hold for; dims wrap as
 * aten's; an empty tensor, a missing weight and an out-of-range index decline without a
 * fault; another capability declines; the predicate is false for CPU tensors before it asks
 * anything of a device. */
#include "dslt_dsl.c"
#include "check.h"

#include <stdio.h>

static sg_tensor *make(int64_t rows, int64_t n, sg_dtype dt) {
    int64_t sizes[2] = {rows, n};
    sg_tensor *t = NULL;
    if (sg_tensor_empty(sizes, 2, dt, (sg_device){SG_DEV_CPU, 0}, &t) != SG_OK) return NULL;
    return t;
}

static int when(sg_tensor *x, int64_t n, sg_tensor *w, const double *eps, int32_t cap) {
    int64_t shape[1] = {n};
    return sg_dslg_rms_norm_triton_when(x, (sg_int_list){shape, 1}, w, eps, cap);
}

int main(void) {
    double eps = 1e-6;
    sg_tensor *x = make(4, 2048, SG_FLOAT32), *w = make(1, 2048, SG_FLOAT32);
    sg_tensor *wv = NULL, *xb = make(4, 1024, SG_BFLOAT16), *wb = make(1, 1024, SG_BFLOAT16);
    CHECK(x && w && xb && wb);
    int64_t n1[1] = {2048};
    CHECK(sg_tensor_as_strided(w, n1, (int64_t[]){1}, 1, 0, &wv) == SG_OK);
    /* the artifacts of the declaration: 0 f32/1024, 1 f32/2048, 2 bf16/1024, 3 bf16/2048 */
    CHECK(when(x, 2048, wv, &eps, 90) == 1);
    CHECK(when(x, 2048, wv, NULL, 90) == 1);            /* eps None: the default */
    CHECK(when(xb, 1024, wb, &eps, 90) == 2);           /* bfloat16 */
    CHECK(when(xb, 2048, wb, &eps, 90) == -1);          /* the weight has 1024 elements */
    CHECK(when(x, 2048, wv, &eps, 80) == -1);           /* another capability */
    CHECK(when(x, 2048, wv, &eps, 0) == -1);            /* unknown capability */
    CHECK(when(x, 4096, wv, &eps, 90) == -1);           /* a size no point has */
    CHECK(when(x, 2048, NULL, &eps, 90) == -1);         /* no weight: declines, no fault */
    CHECK(when(x, 2048, xb, &eps, 90) == -1);           /* a weight of another dtype */
    /* a misaligned view (storage offset 1 float): the compiler assumed 16 bytes */
    sg_tensor *xo = NULL, *xm = NULL;
    CHECK(sg_tensor_as_strided(x, (int64_t[]){2, 2048}, (int64_t[]){2048, 1}, 2, 1, &xo) == SG_OK);
    CHECK(when(xo, 2048, wv, &eps, 90) == -1);
    /* offset of 4 floats: 16 bytes, aligned again */
    CHECK(sg_tensor_as_strided(x, (int64_t[]){2, 2048}, (int64_t[]){2048, 1}, 2, 4, &xm) == SG_OK);
    CHECK(when(xm, 2048, wv, &eps, 90) == 1);
    /* not contiguous: a transposed view */
    sg_tensor *xt = NULL;
    CHECK(sg_tensor_as_strided(x, (int64_t[]){2048, 4}, (int64_t[]){1, 2048}, 2, 0, &xt) == SG_OK);
    CHECK(when(xt, 4, wv, &eps, 90) == -1);
    /* empty and 0-dim tensors: size(-1) out of range or numel 0, no fault */
    sg_tensor *e = make(0, 2048, SG_FLOAT32), *s0 = NULL;
    CHECK(when(e, 2048, wv, &eps, 90) == 1); /* zero rows: a zero grid, which launches nothing */
    CHECK(sg_tensor_empty(NULL, 0, SG_FLOAT32, (sg_device){SG_DEV_CPU, 0}, &s0) == SG_OK);
    CHECK(when(s0, 2048, wv, &eps, 90) == -1);
    /* normalized_shape of another length, or empty: the index is out of range, no fault */
    CHECK(sg_dslg_rms_norm_triton_when(x, (sg_int_list){NULL, 0}, wv, &eps, 90) == -1);
    /* the predicate: false for CPU tensors, before any device query */
    CHECK(!sg_dslg_rms_norm_triton_pred(NULL, 0, x, (sg_int_list){n1, 1}, wv, &eps));
    CHECK(!sg_dslg_rms_norm_triton_pred(NULL, 0, NULL, (sg_int_list){n1, 1}, wv, &eps));
    sg_tensor *ts[] = {x, w, wv, xb, wb, xo, xm, xt, e, s0};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) sg_tensor_release(ts[i]);
    return check_result("when_test");
}
