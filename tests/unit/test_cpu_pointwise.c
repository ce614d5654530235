/* test_cpu_pointwise.c: elementwise CPU kernels through the generated aten API: broadcasting,
 * aten's type promotion (wrapped numbers included), division modes, NaN propagation,
 * 16-bit floats, strided and overlapping inputs, out= resizing and casting rules, and the
 * errors aten gives. Expected values are worked out by hand here; tests/data holds PyTorch's
 * own outputs for the wider sweep (test_cpu_reference). */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "sg_iter.h" /* aten's type names */
#include "aten.h"

#include <math.h>
#include <string.h>



static bool all_eq(const sg_tensor *t, const double *want, int64_t n) {
    if (!t || sg_tensor_numel(t) != n) return false;
    for (int64_t i = 0; i < n; i++) {
        double g = at(t, i);
        if (!(g == want[i] || (isnan(g) && isnan(want[i])) || fabs(g - want[i]) < 1e-6)) {
            fprintf(stderr, "  element %lld: got %g, want %g\n", (long long)i, g, want[i]);
            return false;
        }
    }
    return true;
}

static void test_add_broadcast_promotion(void) {
    int64_t    s23[2] = {2, 3}, s3[1] = {3};
    double     a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30};
    sg_tensor *x = make(SG_FLOAT32, s23, 2, a), *y = make(SG_INT64, s3, 1, b), *r = NULL;
    /* float32 [2,3] + 2 * int64 [3] -> float32 [2,3] */
    CHECK(aten_add_Tensor(x, y, sg_scalar_int(2), &r) == SG_OK);
    CHECK(r && r->dtype == SG_FLOAT32 && r->ndim == 2 && r->sizes[1] == 3);
    double want[6] = {21, 42, 63, 24, 45, 66};
    CHECK(all_eq(r, want, 6));
    sg_tensor_release(r);
    /* int64 tensor + a float wrapped number -> float32 (the default dtype) */
    CHECK(aten_add_Scalar(y, sg_scalar_float(0.5), sg_scalar_int(1), &r) == SG_OK);
    CHECK(r && r->dtype == SG_FLOAT32);
    double want2[3] = {10.5, 20.5, 30.5};
    CHECK(all_eq(r, want2, 3));
    sg_tensor_release(r);
    /* int32 tensor + int64 wrapped number stays int32; + int64 0-dim tensor stays int32 too */
    sg_tensor *i32 = make(SG_INT32, s3, 1, b);
    CHECK(aten_mul_Scalar(i32, sg_scalar_int(3), &r) == SG_OK && r->dtype == SG_INT32);
    sg_tensor_release(r);
    sg_tensor *z0 = make(SG_INT64, NULL, 0, (double[]){7});
    CHECK(aten_mul_Tensor(i32, z0, &r) == SG_OK && r->dtype == SG_INT32);
    double want3[3] = {70, 140, 210};
    CHECK(all_eq(r, want3, 3));
    sg_tensor_release(r);
    /* but a float 0-dim tensor raises the category: float32 */
    sg_tensor *f0 = make(SG_FLOAT64, NULL, 0, (double[]){0.5});
    CHECK(aten_mul_Tensor(i32, f0, &r) == SG_OK && r->dtype == SG_FLOAT64);
    sg_tensor_release(r);
    /* float alpha with integral inputs is refused */
    CHECK(aten_add_Tensor(i32, i32, sg_scalar_float(1.5), &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "alpha must not be a floating point number") != NULL);
    /* shapes that do not broadcast */
    int64_t s4[1] = {4};
    sg_tensor *w = make(SG_FLOAT32, s4, 1, a);
    CHECK(aten_add_Tensor(x, w, sg_scalar_int(1), &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "add: the size of tensor a [2, 3] must match the size of tensor b "
                               "[4] at a non-singleton dimension");
    sg_tensor_release(w);
    sg_tensor_release(f0);
    sg_tensor_release(z0);
    sg_tensor_release(i32);
    sg_tensor_release(x);
    sg_tensor_release(y);
}

static void test_div(void) {
    int64_t    s4[1] = {4};
    double     a[4] = {7, -7, 7, -7}, b[4] = {2, 2, -2, -2};
    sg_tensor *x = make(SG_INT64, s4, 1, a), *y = make(SG_INT64, s4, 1, b), *r = NULL;
    CHECK(aten_div_Tensor(x, y, &r) == SG_OK && r->dtype == SG_FLOAT32);
    CHECK(all_eq(r, (double[]){3.5, -3.5, -3.5, 3.5}, 4));
    sg_tensor_release(r);
    CHECK(aten_div_Tensor_mode(x, y, "trunc", &r) == SG_OK && r->dtype == SG_INT64);
    CHECK(all_eq(r, (double[]){3, -3, -3, 3}, 4));
    sg_tensor_release(r);
    CHECK(aten_div_Tensor_mode(x, y, "floor", &r) == SG_OK);
    CHECK(all_eq(r, (double[]){3, -4, -4, 3}, 4));
    sg_tensor_release(r);
    CHECK(aten_div_Tensor_mode(x, y, "round", &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "rounding_mode to be one of None, 'trunc', or 'floor'") != NULL);
    sg_tensor *zero = make(SG_INT64, s4, 1, (double[]){1, 0, 1, 1});
    CHECK(aten_div_Tensor_mode(x, zero, "trunc", &r) == SG_EINVAL && r == NULL);
    CHECK(strstr(sg_last_error(), "ZeroDivisionError") != NULL);
    /* floats: floor division of negative values, and x / 0 */
    sg_tensor *fx = make(SG_FLOAT64, s4, 1, (double[]){7.5, -7.5, 1, -1});
    sg_tensor *fy = make(SG_FLOAT64, s4, 1, (double[]){2, 2, 0, 0});
    CHECK(aten_div_Tensor_mode(fx, fy, "floor", &r) == SG_OK);
    CHECK(all_eq(r, (double[]){3, -4, INFINITY, -INFINITY}, 4));
    sg_tensor_release(r);
    CHECK(aten_div_Scalar(fx, sg_scalar_int(2), &r) == SG_OK);
    CHECK(all_eq(r, (double[]){3.75, -3.75, 0.5, -0.5}, 4));
    sg_tensor_release(r);
    /* div_.Scalar_mode: in place, and its autogen out variant built on it */
    CHECK(aten_div__Scalar_mode(x, sg_scalar_int(2), "floor", &r) == SG_OK && r == x);
    CHECK(all_eq(x, (double[]){3, -4, 3, -4}, 4));
    sg_tensor_release(r);
    sg_tensor *o = make(SG_INT64, s4, 1, NULL);
    CHECK(aten_div_Scalar_mode_out(x, sg_scalar_int(2), "trunc", o, &r) == SG_OK && r == o);
    CHECK(all_eq(o, (double[]){1, -2, 1, -2}, 4));
    sg_tensor_release(r);
    sg_tensor_release(o);
    sg_tensor_release(fx);
    sg_tensor_release(fy);
    sg_tensor_release(zero);
    sg_tensor_release(x);
    sg_tensor_release(y);
}

static void test_compare_minmax_unary(void) {
    int64_t    s4[1] = {4};
    sg_tensor *x = make(SG_FLOAT32, s4, 1, (double[]){1, NAN, 3, -2});
    sg_tensor *y = make(SG_FLOAT32, s4, 1, (double[]){2, 0, 3, -5});
    sg_tensor *r = NULL;
    CHECK(aten_lt_Tensor(x, y, &r) == SG_OK && r->dtype == SG_BOOL);
    CHECK(all_eq(r, (double[]){1, 0, 0, 0}, 4));
    sg_tensor_release(r);
    CHECK(aten_eq_Scalar(x, sg_scalar_int(3), &r) == SG_OK);
    CHECK(all_eq(r, (double[]){0, 0, 1, 0}, 4));
    sg_tensor_release(r);
    CHECK(aten_maximum(x, y, &r) == SG_OK);
    CHECK(all_eq(r, (double[]){2, NAN, 3, -2}, 4)); /* NaN propagates */
    sg_tensor_release(r);
    CHECK(aten_minimum(x, y, &r) == SG_OK);
    CHECK(all_eq(r, (double[]){1, NAN, 3, -5}, 4));
    sg_tensor_release(r);
    CHECK(aten_neg(y, &r) == SG_OK && all_eq(r, (double[]){-2, -0.0, -3, 5}, 4));
    sg_tensor_release(r);
    CHECK(aten_abs(y, &r) == SG_OK && all_eq(r, (double[]){2, 0, 3, 5}, 4));
    sg_tensor_release(r);
    CHECK(aten_relu(y, &r) == SG_OK && all_eq(r, (double[]){2, 0, 3, 0}, 4));
    sg_tensor_release(r);
    CHECK(aten_sigmoid(y, &r) == SG_OK && fabs(at(r, 0) - 1 / (1 + exp(-2.0))) < 1e-6);
    sg_tensor_release(r);
    CHECK(aten_gelu(y, "tanh", &r) == SG_OK && fabs(at(r, 0) - 1.9545977) < 1e-5);
    sg_tensor_release(r);
    CHECK(aten_gelu(y, "none", &r) == SG_OK && fabs(at(r, 0) - 1.9544997) < 1e-5);
    sg_tensor_release(r);
    CHECK(aten_gelu(y, "fast", &r) == SG_EINVAL);
    /* integers become float32 for floating functions */
    sg_tensor *iv = make(SG_INT64, s4, 1, (double[]){0, 1, 4, 9});
    CHECK(aten_sqrt(iv, &r) == SG_OK && r->dtype == SG_FLOAT32 && all_eq(r, (double[]){0, 1, 2, 3}, 4));
    sg_tensor_release(r);
    CHECK(aten_floor(iv, &r) == SG_OK && r->dtype == SG_INT64);
    sg_tensor_release(r);
    /* bool: no negation */
    sg_tensor *bv = make(SG_BOOL, s4, 1, (double[]){1, 0, 1, 0});
    CHECK(aten_neg(bv, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "Negation, the `-` operator, on a bool tensor is not supported") != NULL);
    CHECK(aten_sub_Tensor(bv, bv, sg_scalar_int(1), &r) == SG_EINVAL);
    CHECK(aten_logical_not(bv, &r) == SG_OK && r->dtype == SG_BOOL && all_eq(r, (double[]){0, 1, 0, 1}, 4));
    sg_tensor_release(r);
    CHECK(aten_logical_and(bv, iv, &r) == SG_OK && all_eq(r, (double[]){0, 0, 1, 0}, 4));
    sg_tensor_release(r);
    sg_tensor_release(bv);
    sg_tensor_release(iv);
    sg_tensor_release(x);
    sg_tensor_release(y);
}

static void test_layouts_and_out(void) {
    int64_t    s23[2] = {2, 3};
    double     a[6] = {1, 2, 3, 4, 5, 6};
    sg_tensor *x = make(SG_FLOAT32, s23, 2, a), *xt = NULL, *r = NULL;
    /* a transposed (non-contiguous) input */
    CHECK(sg_tensor_transpose(x, 0, 1, &xt) == SG_OK);
    CHECK(aten_mul_Tensor(xt, xt, &r) == SG_OK && r->sizes[0] == 3);
    CHECK(all_eq(r, (double[]){1, 16, 4, 25, 9, 36}, 6));
    sg_tensor_release(r);
    /* in place through an overlapping view: x[:, 1:] += x[:, :2] reads what it writes */
    sg_tensor *left = NULL, *right = NULL;
    CHECK(sg_tensor_slice(x, 1, 0, 2, 1, &left) == SG_OK && sg_tensor_slice(x, 1, 1, 3, 1, &right) == SG_OK);
    CHECK(aten_add__Tensor(right, left, sg_scalar_int(1), &r) == SG_OK && r == right);
    sg_tensor_release(r);
    CHECK(all_eq(x, (double[]){1, 3, 5, 4, 9, 11}, 6));
    /* out= of the wrong shape is resized; of a narrower category it is refused */
    int64_t    s1[1] = {1};
    sg_tensor *out = make(SG_FLOAT64, s1, 1, a);
    CHECK(aten_add_out(x, x, sg_scalar_int(1), out, &r) == SG_OK && r == out);
    CHECK(out->ndim == 2 && out->sizes[0] == 2 && out->sizes[1] == 3);
    CHECK(all_eq(out, (double[]){2, 6, 10, 8, 18, 22}, 6));
    sg_tensor_release(r);
    sg_tensor *iout = make(SG_INT64, s23, 2, a);
    CHECK(aten_add_out(x, x, sg_scalar_int(1), iout, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "add: result type Float can't be cast to the desired output type Long");
    /* float16: computed in float32, stored in float16 */
    sg_tensor *h = NULL;
    CHECK(sg_tensor_empty(s23, 2, SG_FLOAT16, SG_CPU, &h) == SG_OK);
    CHECK(aten_mul_out(x, x, h, &r) == SG_OK && r == h);
    sg_tensor_release(r);
    CHECK(((uint16_t *)sg_tensor_data(h))[5] == 0x5790); /* 121 in binary16 */
    /* a float16 op into a float32 out=: computed in float16's precision and widened on store,
     * as aten does (sin(1) rounds to 0.84130859375 in binary16) */
    sg_tensor *one = make(SG_FLOAT16, s1, 1, (double[]){1}), *f = NULL, *g = NULL;
    CHECK(sg_tensor_empty(s1, 1, SG_FLOAT32, SG_CPU, &f) == SG_OK);
    CHECK(aten_sin_out(one, f, &g) == SG_OK && g == f);
    CHECK(*(float *)sg_tensor_data(f) == 0.84130859375f);
    sg_tensor_release(g), sg_tensor_release(f), sg_tensor_release(one);
    sg_tensor_release(h);
    sg_tensor_release(iout);
    sg_tensor_release(out);
    sg_tensor_release(left);
    sg_tensor_release(right);
    sg_tensor_release(xt);
    sg_tensor_release(x);
}

static void test_large_parallel(void) {
    int64_t    n[1] = {1 << 20};
    sg_tensor *x = NULL, *r = NULL;
    CHECK(sg_tensor_empty(n, 1, SG_FLOAT32, SG_CPU, &x) == SG_OK);
    float *p = sg_tensor_data(x);
    for (int64_t i = 0; i < n[0]; i++) p[i] = (float)(i % 1000);
    CHECK(aten_add_Scalar(x, sg_scalar_int(1), sg_scalar_int(1), &r) == SG_OK);
    bool ok = true;
    const float *q = sg_tensor_data(r);
    for (int64_t i = 0; i < n[0] && ok; i++) ok = q[i] == (float)(i % 1000) + 1;
    CHECK(ok);
    sg_tensor_release(r);
    sg_tensor_release(x);
}

/* The distance in ulps between float f and the exact value x (rounded once to float). */
static double ulps(float f, double x) {
    float  r = (float)x;
    double ulp = fabs((double)nextafterf(r, INFINITY) - (double)r);
    return ulp > 0 ? fabs((double)f - x) / ulp : 0;
}

/* float32 exp (and sigmoid, built on it) against double-precision libm over 2^20 inputs spread
 * over exp's whole range, and its special values: the vectorised builds (AVX-512, AVX2, the
 * baseline: whichever this CPU runs) promise 1 ulp; 2 are allowed here. */
static void test_exp_accuracy(void) {
    enum { N = 1 << 20 };
    int64_t    n = N;
    sg_tensor *x, *y = NULL, *s = NULL;
    CHECK(sg_tensor_empty(&n, 1, SG_FLOAT32, SG_CPU, &x) == SG_OK);
    float *p = sg_tensor_data(x);
    for (int i = 0; i < N - 6; i++) p[i] = -104.0f + (float)i * (193.0f / (float)N);
    p[N - 6] = NAN, p[N - 5] = INFINITY, p[N - 4] = -INFINITY, p[N - 3] = 0.0f;
    p[N - 2] = -0.0f, p[N - 1] = 88.72f;
    CHECK(aten_exp(x, &y) == SG_OK);
    CHECK(aten_sigmoid(x, &s) == SG_OK);
    const float *e = sg_tensor_data(y), *g = sg_tensor_data(s);
    double       worst = 0, worst_sig = 0;
    for (int i = 0; i < N; i++) {
        if (isnan(p[i])) {
            CHECK(isnan(e[i]) && isnan(g[i]));
            continue;
        }
        double u = ulps(e[i], exp((double)p[i]));
        if (u > worst) worst = u;
        /* below -88.7, e^-x overflows float32 and sigmoid flushes to 0 (as aten's float
         * sigmoid does), while the exact value is subnormal */
        double v = p[i] > -87.0f ? ulps(g[i], 1.0 / (1.0 + exp(-(double)p[i]))) : 0;
        if (v > worst_sig) worst_sig = v;
    }
    CHECK(worst <= 2.0);
    if (worst_sig > 4.0) fprintf(stderr, "sigmoid: %.1f ulp\n", worst_sig);
    CHECK(worst_sig <= 4.0);
    CHECK(e[N - 5] == INFINITY && e[N - 4] == 0.0f && e[N - 3] == 1.0f && e[N - 2] == 1.0f);
    sg_tensor_release(x);
    sg_tensor_release(y);
    sg_tensor_release(s);
}

/* aten's three spellings of each dtype in messages (promote.c expands them from the dtype
 * table), written out as aten prints them. */
static void test_type_names(void) {
    static const struct {
        sg_dtype    t;
        const char *c10, *cpp, *meta;
    } want[] = {
        {SG_UINT8, "Byte", "uint8_t", "unsigned char"},
        {SG_INT8, "Char", "int8_t", "signed char"},
        {SG_INT16, "Short", "int16_t", "short int"},
        {SG_INT32, "Int", "int", "int"},
        {SG_INT64, "Long", "int64_t", "long int"},
        {SG_FLOAT16, "Half", "c10::Half", "c10::Half"},
        {SG_FLOAT32, "Float", "float", "float"},
        {SG_FLOAT64, "Double", "double", "double"},
        {SG_COMPLEX64, "ComplexFloat", "c10::complex<float>", "c10::complex<float>"},
        {SG_COMPLEX128, "ComplexDouble", "c10::complex<double>", "c10::complex<double>"},
        {SG_BOOL, "Bool", "bool", "bool"},
        {SG_BFLOAT16, "BFloat16", "c10::BFloat16", "c10::BFloat16"},
    };
    CHECK(sizeof want / sizeof want[0] == SG_DTYPE__COUNT);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK_STR(sg_dtype_c10_name(want[i].t), want[i].c10);
        CHECK_STR(sg_cpp_type_name(want[i].t), want[i].cpp);
        CHECK_STR(sg_meta_type_name(want[i].t), want[i].meta);
    }
    CHECK_STR(sg_dtype_c10_name((sg_dtype)8), "?");
    CHECK_STR(sg_cpp_type_name((sg_dtype)SG_DTYPE__END), "?");
    CHECK_STR(sg_meta_type_name((sg_dtype)-1), "?");
}

/* In place, a comparison writes 1 or 0 in self's dtype (PyTorch's comparison meta takes the
 * written tensor's dtype); self cannot grow to the broadcast shape. */
static void test_compare_inplace(void) {
    int64_t    s23[2] = {2, 3}, s3[1] = {3};
    sg_tensor *x = make(SG_FLOAT32, s23, 2, (double[]){1, 2, 3, 4, 5, 6}), *r = NULL;
    sg_tensor *y = make(SG_INT64, s3, 1, (double[]){2, 2, 7});
    CHECK(aten_lt__Tensor(x, y, &r) == SG_OK && r == x && x->dtype == SG_FLOAT32);
    CHECK(all_eq(x, (double[]){1, 0, 1, 0, 0, 1}, 6));
    sg_tensor_release(r);
    CHECK(aten_eq__Scalar(x, sg_scalar_float(1.0), &r) == SG_OK && r == x);
    CHECK(all_eq(x, (double[]){1, 0, 1, 0, 0, 1}, 6));
    sg_tensor_release(r);
    sg_tensor *i = make(SG_INT32, s3, 1, (double[]){-1, 0, 5});
    CHECK(aten_ge__Scalar(i, sg_scalar_int(0), &r) == SG_OK && i->dtype == SG_INT32);
    CHECK(all_eq(i, (double[]){0, 1, 1}, 3));
    sg_tensor_release(r);
    CHECK(aten_ne__Tensor(i, x, &r) == SG_EINVAL && !r); /* i would grow to [2, 3] */
    CHECK(strstr(sg_last_error(), "ne_: output with shape [3] doesn't match the broadcast shape "
                                  "[2, 3]") != NULL);
    sg_tensor_release(i), sg_tensor_release(x), sg_tensor_release(y);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    test_compare_inplace();
    test_type_names();
    test_exp_accuracy();
    test_add_broadcast_promotion();
    test_div();
    test_compare_minmax_unary();
    test_layouts_and_out();
    test_large_parallel();
    sg_runtime_shutdown();
    return check_result("test_cpu_pointwise");
}
