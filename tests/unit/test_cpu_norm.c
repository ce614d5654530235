/* test_cpu_norm.c: normalisation on the CPU through the generated aten API: native_layer_norm
 * (output, mean and rstd with aten's shapes and dtypes), layer_norm, rms_norm and
 * _fused_rms_norm (eps None as aten's opmath epsilon), native_group_norm and group_norm;
 * weights and biases, strided inputs, float16/bfloat16 with and without float32 parameters,
 * float64, and aten's errors. Expected values are small hand-worked cases, written out as the
 * formulas they come from. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"
#include "dtype.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* ---- helpers --------------------------------------------------------------------------------- */




static bool close_to(const sg_tensor *t, const double *want, int64_t n, double tol) {
    if (!t || sg_tensor_numel(t) != n) return false;
    for (int64_t i = 0; i < n; i++) {
        double g = at(t, i), w = want[i];
        if (!(g == w || fabs(g - w) <= tol * (1 + fabs(w)))) {
            fprintf(stderr, "  element %lld: got %.9g, want %.9g\n", (long long)i, g, w);
            return false;
        }
    }
    return true;
}

#define SHAPE(t, ...) shape_is(t, (int64_t[]){__VA_ARGS__}, sizeof((int64_t[]){__VA_ARGS__}) / 8)
#define REL(t) sg_tensor_release(t)
#define LIST(...) ((sg_int_list){(int64_t[]){__VA_ARGS__}, sizeof((int64_t[]){__VA_ARGS__}) / 8})

/* (x - mean) * rstd * w[j] + b[j] over rows of n, biased variance: the formula the expectations
 * of layer and group norm come from (w, b, mean, rstd may be NULL) */
static void ref_norm(const double *x, int64_t rows, int64_t n, double eps, const double *w,
                     const double *b, double *y, double *mean, double *rstd) {
    for (int64_t r = 0; r < rows; r++) {
        double mu = 0, var = 0;
        for (int64_t j = 0; j < n; j++) mu += x[r * n + j];
        mu /= (double)n;
        for (int64_t j = 0; j < n; j++) var += (x[r * n + j] - mu) * (x[r * n + j] - mu);
        var /= (double)n;
        double rs = 1 / sqrt(var + eps);
        for (int64_t j = 0; j < n; j++) y[r * n + j] = (x[r * n + j] - mu) * rs;
        if (mean) mean[r] = mu;
        if (rstd) rstd[r] = rs;
    }
    if (w || b)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t j = 0; j < n; j++)
                y[r * n + j] = y[r * n + j] * (w ? w[j] : 1) + (b ? b[j] : 0);
}

/* ---- layer norm ------------------------------------------------------------------------------ */

static void test_layer_norm(void) {
    int64_t    s23[2] = {2, 3}, s3[1] = {3};
    double     xv[6] = {1, 2, 3, 4, 6, 8}, wv[3] = {1, 2, 3}, bv[3] = {0.5, 0, -1};
    double     y[6], mean[2], rstd[2];
    sg_tensor *x = make(SG_FLOAT32, s23, 2, xv), *w = make(SG_FLOAT32, s3, 1, wv);
    sg_tensor *b = make(SG_FLOAT32, s3, 1, bv), *o = NULL, *m = NULL, *r = NULL;
    /* row 0: mean 2, var 2/3; row 1: mean 6, var 8/3 */
    ref_norm(xv, 2, 3, 1e-5, NULL, NULL, y, mean, rstd);
    CHECK(fabs(mean[0] - 2) < 1e-12 && fabs(rstd[0] - 1 / sqrt(2.0 / 3 + 1e-5)) < 1e-12);
    CHECK(aten_native_layer_norm(x, LIST(3), NULL, NULL, 1e-5, &o, &m, &r) == SG_OK);
    CHECK(SHAPE(o, 2, 3) && SHAPE(m, 2, 1) && SHAPE(r, 2, 1));
    CHECK(o->dtype == SG_FLOAT32 && m->dtype == SG_FLOAT32 && r->dtype == SG_FLOAT32);
    CHECK(close_to(o, y, 6, 1e-6) && close_to(m, mean, 2, 1e-7) && close_to(r, rstd, 2, 1e-6));
    REL(o), REL(m), REL(r);
    /* with weight and bias, natively and through layer_norm */
    ref_norm(xv, 2, 3, 1e-5, wv, bv, y, mean, rstd);
    CHECK(aten_native_layer_norm(x, LIST(3), w, b, 1e-5, &o, &m, &r) == SG_OK);
    CHECK(close_to(o, y, 6, 1e-6));
    REL(o), REL(m), REL(r);
    CHECK(aten_layer_norm(x, LIST(3), w, b, 1e-5, true, &o) == SG_OK && close_to(o, y, 6, 1e-6));
    REL(o);
    /* weight only; bias only */
    ref_norm(xv, 2, 3, 1e-5, wv, NULL, y, NULL, NULL);
    CHECK(aten_layer_norm(x, LIST(3), w, NULL, 1e-5, true, &o) == SG_OK && close_to(o, y, 6, 1e-6));
    REL(o);
    ref_norm(xv, 2, 3, 1e-5, NULL, bv, y, NULL, NULL);
    CHECK(aten_layer_norm(x, LIST(3), NULL, b, 1e-5, true, &o) == SG_OK && close_to(o, y, 6, 1e-6));
    REL(o);
    /* a large eps shows it is added to the variance */
    ref_norm(xv, 2, 3, 2.0, NULL, NULL, y, mean, rstd);
    CHECK(aten_native_layer_norm(x, LIST(3), NULL, NULL, 2.0, &o, &m, &r) == SG_OK);
    CHECK(close_to(o, y, 6, 1e-6) && close_to(r, rstd, 2, 1e-6));
    REL(o), REL(m), REL(r);
    /* two normalised dims over a 3-D input: mean/rstd [2, 1, 1] */
    int64_t s223[3] = {2, 2, 3};
    double  x3[12] = {1, 2, 3, 4, 6, 8, 0, 0, 1, 1, 2, 2}, y3[12], m3[2], r3[2];
    ref_norm(x3, 2, 6, 1e-5, NULL, NULL, y3, m3, r3);
    sg_tensor *t3 = make(SG_FLOAT64, s223, 3, x3);
    CHECK(aten_native_layer_norm(t3, LIST(2, 3), NULL, NULL, 1e-5, &o, &m, &r) == SG_OK);
    CHECK(SHAPE(m, 2, 1, 1) && SHAPE(r, 2, 1, 1) && m->dtype == SG_FLOAT64);
    CHECK(close_to(o, y3, 12, 1e-14) && close_to(m, m3, 2, 1e-15) && close_to(r, r3, 2, 1e-14));
    REL(o), REL(m), REL(r);
    /* a strided input: the transpose of a [3, 2] tensor */
    int64_t    s32[2] = {3, 2};
    sg_tensor *xt0 = make(SG_FLOAT32, s32, 2, (double[]){1, 4, 2, 6, 3, 8}), *xt = NULL;
    CHECK(sg_tensor_transpose(xt0, 0, 1, &xt) == SG_OK && !sg_tensor_is_contiguous(xt));
    ref_norm(xv, 2, 3, 1e-5, wv, bv, y, NULL, NULL);
    CHECK(aten_layer_norm(xt, LIST(3), w, b, 1e-5, true, &o) == SG_OK && close_to(o, y, 6, 1e-6));
    CHECK(sg_tensor_is_contiguous(o));
    REL(o), REL(xt), REL(xt0);
    /* float16: computed in float32; statistics in float16, or float32 with float32 params */
    sg_tensor *xh = make(SG_FLOAT16, s23, 2, xv), *wh = make(SG_FLOAT16, s3, 1, wv);
    ref_norm(xv, 2, 3, 1e-5, wv, NULL, y, mean, rstd);
    CHECK(aten_native_layer_norm(xh, LIST(3), wh, NULL, 1e-5, &o, &m, &r) == SG_OK);
    CHECK(o->dtype == SG_FLOAT16 && m->dtype == SG_FLOAT16 && r->dtype == SG_FLOAT16);
    CHECK(close_to(o, y, 6, 1e-3) && close_to(m, mean, 2, 1e-3) && close_to(r, rstd, 2, 1e-3));
    REL(o), REL(m), REL(r);
    CHECK(aten_native_layer_norm(xh, LIST(3), w, b, 1e-5, &o, &m, &r) == SG_OK);
    CHECK(o->dtype == SG_FLOAT16 && m->dtype == SG_FLOAT32 && r->dtype == SG_FLOAT32);
    CHECK(close_to(r, rstd, 2, 1e-6));
    REL(o), REL(m), REL(r);
    sg_tensor *xb = make(SG_BFLOAT16, s23, 2, xv);
    CHECK(aten_layer_norm(xb, LIST(3), NULL, NULL, 1e-5, true, &o) == SG_OK);
    ref_norm(xv, 2, 3, 1e-5, NULL, NULL, y, NULL, NULL);
    CHECK(o->dtype == SG_BFLOAT16 && close_to(o, y, 6, 8e-3));
    REL(o), REL(xb);
    /* errors */
    int64_t    s2[1] = {2};
    sg_tensor *w2 = make(SG_FLOAT32, s2, 1, NULL);
    CHECK(aten_layer_norm(x, LIST(3), w2, NULL, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected weight to be of same shape as normalized_shape, but got "
                               "weight of shape [2] and normalized_shape = [3]");
    CHECK(aten_layer_norm(x, LIST(3), NULL, w2, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected bias to be of same shape as normalized_shape, but got "
                               "bias of shape [2] and normalized_shape = [3]");
    CHECK(aten_layer_norm(x, LIST(4), NULL, NULL, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Given normalized_shape=[4], expected input with shape [*, 4], but "
                               "got input of size[2, 3]");
    CHECK(aten_layer_norm(x, LIST(2, 2, 3), NULL, NULL, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Given normalized_shape=[2, 2, 3], expected input with shape [*, "
                               "2, 2, 3], but got input of size[2, 3]");
    CHECK(aten_layer_norm(x, (sg_int_list){NULL, 0}, NULL, NULL, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected normalized_shape to be at least 1-dimensional, i.e., "
                               "containing at least one element, but got normalized_shape = []");
    sg_tensor *xi = make(SG_INT64, s23, 2, xv);
    CHECK(aten_layer_norm(xi, LIST(3), NULL, NULL, 1e-5, true, &o) == SG_EUNSUPPORTED);
    CHECK_STR(sg_last_error(), "\"LayerNormKernelImpl\" not implemented for 'Long'");
    /* aten's mixed-type rules: "mixed" where the first parameter given differs from the input */
    sg_tensor *wd = make(SG_FLOAT64, s3, 1, wv);
    CHECK(aten_layer_norm(x, LIST(3), wd, NULL, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "mixed dtype (CPU): expect parameter to have scalar type of Float");
    sg_tensor *bb = make(SG_BFLOAT16, s3, 1, bv);
    CHECK(aten_layer_norm(xh, LIST(3), w, bb, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "mixed dtype (CPU): expect parameter to have scalar type of Float");
    CHECK(aten_layer_norm(xh, LIST(3), wh, b, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "expected scalar type Half but found Float");
    sg_tensor *xd = make(SG_FLOAT64, s23, 2, xv);
    CHECK(aten_layer_norm(xd, LIST(3), w, NULL, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "mixed dtype (CPU): all inputs must share same datatype.");
    REL(xd);
    /* a float32 bias alone makes a float16 input mixed too */
    CHECK(aten_native_layer_norm(xh, LIST(3), NULL, b, 1e-5, &o, &m, &r) == SG_OK);
    CHECK(o->dtype == SG_FLOAT16 && m->dtype == SG_FLOAT32 && r->dtype == SG_FLOAT32);
    REL(o), REL(m), REL(r);
    REL(bb), REL(wd), REL(xi), REL(w2), REL(xh), REL(wh), REL(t3), REL(x), REL(w), REL(b);
}

/* ---- rms norm -------------------------------------------------------------------------------- */

static void test_rms_norm(void) {
    int64_t    s24[2] = {2, 4}, s4[1] = {4};
    double     xv[8] = {1, 2, 3, 4, 0, 0, 0, 0}, wv[4] = {1, 0.5, -1, 2};
    sg_tensor *x = make(SG_FLOAT32, s24, 2, xv), *o = NULL, *r = NULL;
    /* eps None: float32's epsilon; row 0: mean of squares 7.5 */
    double r0 = 1 / sqrt(7.5 + (double)FLT_EPSILON), rz = 1 / sqrt((double)FLT_EPSILON);
    double want[8] = {r0, 2 * r0, 3 * r0, 4 * r0, 0, 0, 0, 0};
    CHECK(aten_rms_norm(x, LIST(4), NULL, NULL, &o) == SG_OK && o->dtype == SG_FLOAT32);
    CHECK(SHAPE(o, 2, 4) && close_to(o, want, 8, 1e-6));
    REL(o);
    CHECK(aten__fused_rms_norm(x, LIST(4), NULL, NULL, &o, &r) == SG_OK);
    CHECK(SHAPE(r, 2, 1) && r->dtype == SG_FLOAT32 && close_to(r, (double[]){r0, rz}, 2, 1e-6));
    REL(o), REL(r);
    /* explicit eps and a weight */
    double eps = 0.5, e0 = 1 / sqrt(8.0);
    sg_tensor *w = make(SG_FLOAT32, s4, 1, wv);
    CHECK(aten_rms_norm(x, LIST(4), w, &eps, &o) == SG_OK);
    CHECK(close_to(o, (double[]){e0, e0, -3 * e0, 8 * e0, 0, 0, 0, 0}, 8, 1e-6));
    REL(o);
    /* normalising both dims: one row of 8, mean of squares 30 / 8 */
    double a = 1 / sqrt(3.75 + (double)FLT_EPSILON);
    CHECK(aten_rms_norm(x, LIST(2, 4), NULL, NULL, &o) == SG_OK);
    CHECK(close_to(o, (double[]){a, 2 * a, 3 * a, 4 * a, 0, 0, 0, 0}, 8, 1e-6));
    REL(o);
    /* float16: widened to float32, eps float32's (2^-23), not float16's; rstd in float32 */
    sg_tensor *xh = make(SG_FLOAT16, s24, 2, xv);
    CHECK(aten__fused_rms_norm(xh, LIST(4), NULL, NULL, &o, &r) == SG_OK);
    CHECK(o->dtype == SG_FLOAT16 && r->dtype == SG_FLOAT32);
    CHECK(close_to(r, (double[]){r0, rz}, 2, 1e-6) && close_to(o, want, 8, 1e-3));
    REL(o), REL(r);
    /* float16 input with a float16 weight */
    sg_tensor *wh = make(SG_FLOAT16, s4, 1, wv);
    CHECK(aten_rms_norm(xh, LIST(4), wh, NULL, &o) == SG_OK && o->dtype == SG_FLOAT16);
    CHECK(close_to(o, (double[]){r0, r0, -3 * r0, 8 * r0, 0, 0, 0, 0}, 8, 1e-3));
    REL(o);
    /* float64: eps float64's epsilon, rstd float64 */
    sg_tensor *xd = make(SG_FLOAT64, s24, 2, xv);
    CHECK(aten__fused_rms_norm(xd, LIST(4), NULL, NULL, &o, &r) == SG_OK);
    CHECK(r->dtype == SG_FLOAT64 && close_to(r, (double[]){1 / sqrt(7.5 + DBL_EPSILON),
                                                            1 / sqrt(DBL_EPSILON)},
                                             2, 1e-15));
    REL(o), REL(r);
    /* a float64 weight on a float32 input: multiplied in float64, returned as float32 */
    sg_tensor *wd = make(SG_FLOAT64, s4, 1, wv);
    CHECK(aten_rms_norm(x, LIST(4), wd, NULL, &o) == SG_OK && o->dtype == SG_FLOAT32);
    CHECK(close_to(o, (double[]){r0, r0, -3 * r0, 8 * r0, 0, 0, 0, 0}, 8, 1e-6));
    REL(o);
    /* a strided input */
    int64_t    s42[2] = {4, 2};
    sg_tensor *xt0 = make(SG_FLOAT32, s42, 2, (double[]){1, 0, 2, 0, 3, 0, 4, 0}), *xt = NULL;
    CHECK(sg_tensor_transpose(xt0, 0, 1, &xt) == SG_OK);
    CHECK(aten_rms_norm(xt, LIST(4), NULL, NULL, &o) == SG_OK && close_to(o, want, 8, 1e-6));
    REL(o), REL(xt), REL(xt0);
    /* errors */
    int64_t    s3[1] = {3};
    sg_tensor *w3 = make(SG_FLOAT32, s3, 1, NULL), *xi = make(SG_INT64, s24, 2, xv);
    CHECK(aten_rms_norm(x, LIST(4), w3, NULL, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected weight to be of same shape as normalized_shape, but got "
                               "weight of shape [3] and normalized_shape = [4]");
    CHECK(aten_rms_norm(x, LIST(3), NULL, NULL, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Given normalized_shape=[3], expected input with shape [*, 3], but "
                               "got input of size[2, 4]");
    CHECK(aten_rms_norm(xi, LIST(4), NULL, NULL, &o) == SG_EUNSUPPORTED);
    CHECK_STR(sg_last_error(), "\"rms_norm\" not implemented for 'Long'");
    REL(w3), REL(xi), REL(wd), REL(xd), REL(wh), REL(xh), REL(w), REL(x);
}

/* ---- group norm ------------------------------------------------------------------------------ */

static void test_group_norm(void) {
    /* N = 2, C = 4, HxW = 2, G = 2: each group is 2 channels x 2 positions */
    int64_t s242[3] = {2, 4, 2}, s4[1] = {4};
    double  xv[16] = {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 4, -1, 1, 2, -2};
    double  wv[4] = {1, 2, 3, 4}, bv[4] = {0, 1, 0, -1};
    double  y[16], mean[4], rstd[4];
    /* groups are contiguous runs of 4: the rows of a [4, 4] layer norm */
    ref_norm(xv, 4, 4, 1e-5, NULL, NULL, y, mean, rstd);
    CHECK(fabs(mean[0] - 2.5) < 1e-12 && fabs(mean[2] - 1) < 1e-12 && fabs(mean[3]) < 1e-12);
    CHECK(fabs(rstd[2] - 1 / sqrt(3 + 1e-5)) < 1e-12);
    double yw[16];
    for (int i = 0; i < 16; i++) yw[i] = y[i] * wv[(i / 2) % 4] + bv[(i / 2) % 4];
    sg_tensor *x = make(SG_FLOAT32, s242, 3, xv), *w = make(SG_FLOAT32, s4, 1, wv);
    sg_tensor *b = make(SG_FLOAT32, s4, 1, bv), *o = NULL, *m = NULL, *r = NULL;
    CHECK(aten_native_group_norm(x, NULL, NULL, 2, 4, 2, 2, 1e-5, &o, &m, &r) == SG_OK);
    CHECK(SHAPE(o, 2, 4, 2) && SHAPE(m, 2, 2) && SHAPE(r, 2, 2) && m->dtype == SG_FLOAT32);
    CHECK(close_to(o, y, 16, 1e-6) && close_to(m, mean, 4, 1e-7) && close_to(r, rstd, 4, 1e-6));
    REL(o), REL(m), REL(r);
    CHECK(aten_native_group_norm(x, w, b, 2, 4, 2, 2, 1e-5, &o, &m, &r) == SG_OK);
    CHECK(close_to(o, yw, 16, 1e-6));
    REL(o), REL(m), REL(r);
    CHECK(aten_group_norm(x, 2, w, b, 1e-5, true, &o) == SG_OK && close_to(o, yw, 16, 1e-6));
    REL(o);
    /* 4-D [2, 4, 1, 2]: HxW is the product of the trailing dims */
    int64_t    s4d[4] = {2, 4, 1, 2};
    sg_tensor *x4 = make(SG_FLOAT64, s4d, 4, xv), *w4 = make(SG_FLOAT64, s4, 1, wv);
    sg_tensor *b4 = make(SG_FLOAT64, s4, 1, bv);
    CHECK(aten_group_norm(x4, 2, w4, b4, 1e-5, true, &o) == SG_OK);
    CHECK(SHAPE(o, 2, 4, 1, 2) && o->dtype == SG_FLOAT64 && close_to(o, yw, 16, 1e-14));
    REL(o);
    /* one group per channel (instance norm) and one group for all (layer norm over C, HxW) */
    double yi[16], yl[16];
    ref_norm(xv, 8, 2, 1e-5, NULL, NULL, yi, NULL, NULL);
    ref_norm(xv, 2, 8, 1e-5, NULL, NULL, yl, NULL, NULL);
    CHECK(aten_group_norm(x4, 4, NULL, NULL, 1e-5, true, &o) == SG_OK && close_to(o, yi, 16, 1e-9));
    REL(o);
    CHECK(aten_group_norm(x4, 1, NULL, NULL, 1e-5, true, &o) == SG_OK);
    CHECK(close_to(o, yl, 16, 1e-12));
    REL(o);
    /* a strided input: the transpose of a [2, 2, 4] tensor */
    int64_t    s224[3] = {2, 2, 4};
    double     tv[16];
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < 4; c++)
            for (int j = 0; j < 2; j++) tv[n * 8 + j * 4 + c] = xv[n * 8 + c * 2 + j];
    sg_tensor *xt0 = make(SG_FLOAT32, s224, 3, tv), *xt = NULL;
    CHECK(sg_tensor_transpose(xt0, 1, 2, &xt) == SG_OK && SHAPE(xt, 2, 4, 2));
    CHECK(aten_group_norm(xt, 2, w, b, 1e-5, true, &o) == SG_OK && close_to(o, yw, 16, 1e-6));
    REL(o), REL(xt), REL(xt0);
    /* float16 input with float32 parameters: mean/rstd float32 */
    sg_tensor *xh = make(SG_FLOAT16, s242, 3, xv);
    CHECK(aten_native_group_norm(xh, w, b, 2, 4, 2, 2, 1e-5, &o, &m, &r) == SG_OK);
    CHECK(o->dtype == SG_FLOAT16 && m->dtype == SG_FLOAT32 && close_to(o, yw, 16, 2e-3));
    REL(o), REL(m), REL(r);
    /* errors */
    CHECK(aten_group_norm(x, 3, NULL, NULL, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected number of channels in input to be divisible by "
                               "num_groups, but got input of shape [2, 4, 2] and num_groups=3");
    CHECK(aten_group_norm(x, 0, NULL, NULL, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected num groups to be greater than 0, got 0");
    int64_t    s3[1] = {3};
    sg_tensor *w3 = make(SG_FLOAT32, s3, 1, NULL);
    CHECK(aten_group_norm(x, 2, w3, NULL, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected weight to be a vector of size equal to the number of "
                               "channels in input, but got weight of shape [3] and input of "
                               "shape [2, 4, 2]");
    CHECK(aten_group_norm(x, 2, NULL, w3, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected bias to be a vector of size equal to the number of "
                               "channels in input, but got bias of shape [3] and input of shape "
                               "[2, 4, 2]");
    sg_tensor *x1 = make(SG_FLOAT32, s4, 1, NULL);
    CHECK(aten_group_norm(x1, 1, NULL, NULL, 1e-5, true, &o) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Dimension out of range (expected to be in range of [-1, 0], but "
                               "got 1)");
    CHECK(aten_native_group_norm(x, NULL, NULL, 2, 4, 3, 2, 1e-5, &o, &m, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected X.numel() == N * C * HxW to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report an "
                               "enhancement request to PyTorch.)");
    sg_tensor *xi = make(SG_INT64, s242, 3, xv);
    CHECK(aten_group_norm(xi, 2, NULL, NULL, 1e-5, true, &o) == SG_EUNSUPPORTED);
    CHECK_STR(sg_last_error(), "\"GroupNormKernelImpl\" not implemented for 'Long'");
    REL(xi), REL(x1), REL(w3), REL(xh), REL(x4), REL(w4), REL(b4), REL(x), REL(w), REL(b);
}

/* a larger layer norm: rows long enough for the pairwise sums and the threads */
static void test_large(void) {
    int64_t    M = 64, N = 3000, s[2] = {64, 3000};
    double    *xv = malloc((size_t)(M * N) * sizeof *xv), *y = malloc((size_t)(M * N) * sizeof *y);
    double     mean[64], rstd[64];
    uint64_t   st = 88172645463325252u;
    for (int64_t i = 0; i < M * N; i++) {
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        xv[i] = 100 + (double)(st >> 40) / 16777216.0; /* offset: tests the two-pass variance */
    }
    ref_norm(xv, M, N, 1e-5, NULL, NULL, y, mean, rstd);
    sg_tensor *x = make(SG_FLOAT32, s, 2, xv), *o = NULL, *m = NULL, *r = NULL;
    /* the reference from the float32 values the kernel sees */
    for (int64_t i = 0; i < M * N; i++) xv[i] = (float)xv[i];
    ref_norm(xv, M, N, 1e-5, NULL, NULL, y, mean, rstd);
    CHECK(aten_native_layer_norm(x, LIST(3000), NULL, NULL, 1e-5, &o, &m, &r) == SG_OK);
    /* y = x * rstd + (-rstd * mean) as aten computes it: |x * rstd| ~ 350 here, so float32
     * rounding leaves ~4e-5 absolute in y; the statistics themselves are much tighter */
    CHECK(close_to(o, y, M * N, 1e-4) && close_to(m, mean, M, 3e-7) && close_to(r, rstd, M, 1e-5));
    REL(o), REL(m), REL(r), REL(x);
    free(xv), free(y);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    test_layer_norm();
    test_rms_norm();
    test_group_norm();
    test_large();
    sg_runtime_shutdown();
    return check_result("test_cpu_norm");
}
