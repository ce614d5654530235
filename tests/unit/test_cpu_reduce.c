/* test_cpu_reduce.c: reductions, cumsum and softmax on the CPU through the generated aten API:
 * dim lists (None, empty, negative, repeated, out of range), keepdim, dtype arguments and
 * defaults, NaN and first-occurrence rules, empty and 0-dim inputs, non-contiguous inputs,
 * float16, out= variants, aten's error messages, and large inputs that take the parallel
 * paths (checked against sums in long double). Expected values are worked out by hand. */
#include "check.h"
#include "cpu_tensors.h"
#include "dtype.h"
#include "sg_aten_cpu.h"
#include "aten.h"

#include <math.h>
#include <string.h>




static bool close_to(double g, double w, double tol) {
    if (isnan(w)) return isnan(g);
    if (isinf(w)) return g == w;
    return fabs(g - w) <= tol * (1 + fabs(w));
}

static bool all_near(const sg_tensor *t, const double *want, int64_t n, double tol) {
    if (!t || sg_tensor_numel(t) != n) {
        fprintf(stderr, "  numel %lld, want %lld\n", t ? (long long)sg_tensor_numel(t) : -1LL,
                (long long)n);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        double g = at(t, i);
        if (!close_to(g, want[i], tol)) {
            fprintf(stderr, "  element %lld: got %.17g, want %.17g\n", (long long)i, g, want[i]);
            return false;
        }
    }
    return true;
}
static bool all_eq(const sg_tensor *t, const double *want, int64_t n) {
    return all_near(t, want, n, 1e-6);
}


static bool err_is(const char *want) {
    if (strcmp(sg_last_error(), want) == 0) return true;
    fprintf(stderr, "  error: %s\n  want:  %s\n", sg_last_error(), want);
    return false;
}

/* an int[] argument: L(0, -1) */
#define L(...)                                                                                 \
    ((sg_int_list){(const int64_t[]){__VA_ARGS__},                                             \
                   (int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))})
static const sg_int_list none_list = {NULL, 0};

/* ---- sum ------------------------------------------------------------------------------------ */

static void test_sum(void) {
    int64_t    s23[2] = {2, 3};
    double     v[6] = {1, 2, 3, 4, 5, 6};
    sg_tensor *x = make(SG_FLOAT32, s23, 2, v), *r = NULL;
    CHECK(aten_sum(x, NULL, &r) == SG_OK && r->ndim == 0 && r->dtype == SG_FLOAT32);
    CHECK(all_eq(r, (double[]){21}, 1));
    sg_tensor_release(r);
    sg_int_list d0 = L(0), dm1 = L(-1), d01 = L(0, 1), d10 = L(-1, 0);
    CHECK(aten_sum_dim_IntList(x, &d0, false, NULL, &r) == SG_OK && shape_is(r, (int64_t[]){3}, 1));
    CHECK(all_eq(r, (double[]){5, 7, 9}, 3));
    sg_tensor_release(r);
    CHECK(aten_sum_dim_IntList(x, &dm1, true, NULL, &r) == SG_OK &&
          shape_is(r, (int64_t[]){2, 1}, 2));
    CHECK(all_eq(r, (double[]){6, 15}, 2));
    sg_tensor_release(r);
    CHECK(aten_sum_dim_IntList(x, &d01, false, NULL, &r) == SG_OK && r->ndim == 0);
    CHECK(all_eq(r, (double[]){21}, 1));
    sg_tensor_release(r);
    CHECK(aten_sum_dim_IntList(x, &d10, true, NULL, &r) == SG_OK &&
          shape_is(r, (int64_t[]){1, 1}, 2));
    sg_tensor_release(r);
    /* None and [] both reduce every dim */
    CHECK(aten_sum_dim_IntList(x, NULL, true, NULL, &r) == SG_OK &&
          shape_is(r, (int64_t[]){1, 1}, 2));
    sg_tensor_release(r);
    CHECK(aten_sum_dim_IntList(x, &none_list, false, NULL, &r) == SG_OK && r->ndim == 0);
    CHECK(all_eq(r, (double[]){21}, 1));
    sg_tensor_release(r);
    /* dtype argument */
    sg_dtype f64 = SG_FLOAT64, i64 = SG_INT64;
    CHECK(aten_sum(x, &f64, &r) == SG_OK && r->dtype == SG_FLOAT64 && all_eq(r, (double[]){21}, 1));
    sg_tensor_release(r);
    /* the input is cast first: 0.5 + 1.5 + 2.5 as int64 is 0 + 1 + 2 */
    sg_tensor *h = make(SG_FLOAT32, (int64_t[]){3}, 1, (double[]){0.5, 1.5, 2.5});
    CHECK(aten_sum(h, &i64, &r) == SG_OK && r->dtype == SG_INT64 && all_eq(r, (double[]){3}, 1));
    sg_tensor_release(r);
    sg_tensor_release(h);
    /* errors: a dim out of range, a dim twice */
    sg_int_list d2 = L(2), d00 = L(0, -2);
    CHECK(aten_sum_dim_IntList(x, &d2, false, NULL, &r) == SG_EINVAL);
    CHECK(err_is("Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
    CHECK(aten_sum_dim_IntList(x, &d00, false, NULL, &r) == SG_EINVAL);
    CHECK(err_is("dim 0 appears multiple times in the list of dims"));
    /* a transposed (non-contiguous) input */
    sg_tensor *xt = NULL;
    CHECK(sg_tensor_transpose(x, 0, 1, &xt) == SG_OK);
    CHECK(aten_sum_dim_IntList(xt, &d0, false, NULL, &r) == SG_OK &&
          all_eq(r, (double[]){6, 15}, 2));
    sg_tensor_release(r);
    CHECK(aten_sum_dim_IntList(xt, &dm1, false, NULL, &r) == SG_OK &&
          all_eq(r, (double[]){5, 7, 9}, 3));
    sg_tensor_release(r);
    sg_tensor_release(xt);
    /* a sliced input: every other column */
    sg_tensor *xs = NULL;
    CHECK(sg_tensor_slice(x, 1, 0, 3, 2, &xs) == SG_OK);
    CHECK(aten_sum_dim_IntList(xs, &dm1, false, NULL, &r) == SG_OK &&
          all_eq(r, (double[]){4, 10}, 2));
    sg_tensor_release(r);
    sg_tensor_release(xs);
    /* out=: resized; a dtype argument that disagrees with it is refused */
    sg_tensor *out = make(SG_FLOAT32, (int64_t[]){5}, 1, v);
    CHECK(aten_sum_IntList_out(x, &d0, false, NULL, out, &r) == SG_OK && r == out);
    CHECK(shape_is(out, (int64_t[]){3}, 1) && all_eq(out, (double[]){5, 7, 9}, 3));
    sg_tensor_release(r);
    CHECK(aten_sum_IntList_out(x, &d0, false, &i64, out, &r) == SG_EINVAL);
    CHECK(err_is("Expected out tensor to have dtype long int, but got float instead"));
    /* an out= of another dtype without a dtype argument: the result is in its dtype */
    sg_tensor *out64 = make(SG_FLOAT64, (int64_t[]){3}, 1, v);
    CHECK(aten_sum_IntList_out(x, &d0, false, NULL, out64, &r) == SG_OK &&
          all_eq(out64, (double[]){5, 7, 9}, 3));
    sg_tensor_release(r);
    sg_tensor_release(out64);
    sg_tensor_release(out);
    sg_tensor_release(x);
}

static void test_sum_dtypes_edges(void) {
    sg_tensor *r = NULL;
    /* integers and bools sum to int64 */
    sg_tensor *i32 = make(SG_INT32, (int64_t[]){4}, 1, (double[]){1, -2, 3, 2147483647});
    CHECK(aten_sum(i32, NULL, &r) == SG_OK && r->dtype == SG_INT64);
    CHECK(all_eq(r, (double[]){2147483649.0}, 1)); /* no int32 overflow */
    sg_tensor_release(r);
    sg_tensor *b = make(SG_BOOL, (int64_t[]){5}, 1, (double[]){1, 0, 1, 1, 0});
    CHECK(aten_sum(b, NULL, &r) == SG_OK && r->dtype == SG_INT64 && all_eq(r, (double[]){3}, 1));
    sg_tensor_release(r);
    sg_tensor *u8 = make(SG_UINT8, (int64_t[]){3}, 1, (double[]){200, 200, 200});
    CHECK(aten_sum(u8, NULL, &r) == SG_OK && r->dtype == SG_INT64 && all_eq(r, (double[]){600}, 1));
    sg_tensor_release(r);
    /* but uint8 with dtype uint8 wraps, as a cast then a sum does */
    sg_dtype u8t = SG_UINT8;
    CHECK(aten_sum(u8, &u8t, &r) == SG_OK && r->dtype == SG_UINT8 &&
          all_eq(r, (double[]){600 - 512}, 1));
    sg_tensor_release(r);
    /* int64 wraps around */
    sg_tensor *big = NULL;
    CHECK(sg_tensor_empty((int64_t[]){2}, 1, SG_INT64, SG_CPU, &big) == SG_OK);
    ((int64_t *)sg_tensor_data(big))[0] = INT64_MAX;
    ((int64_t *)sg_tensor_data(big))[1] = 1;
    CHECK(aten_sum(big, NULL, &r) == SG_OK && *(int64_t *)sg_tensor_data(r) == INT64_MIN);
    sg_tensor_release(r);
    sg_tensor_release(big);
    /* empty: 0, of any shape left */
    sg_tensor *e = make(SG_FLOAT32, (int64_t[]){0}, 1, NULL);
    CHECK(aten_sum(e, NULL, &r) == SG_OK && r->ndim == 0 && all_eq(r, (double[]){0}, 1));
    sg_tensor_release(r);
    sg_tensor *e03 = make(SG_INT32, (int64_t[]){0, 3}, 2, NULL);
    sg_int_list d0 = L(0), d1 = L(1);
    CHECK(aten_sum_dim_IntList(e03, &d0, false, NULL, &r) == SG_OK &&
          shape_is(r, (int64_t[]){3}, 1));
    CHECK(r->dtype == SG_INT64 && all_eq(r, (double[]){0, 0, 0}, 3));
    sg_tensor_release(r);
    CHECK(aten_sum_dim_IntList(e03, &d1, true, NULL, &r) == SG_OK &&
          shape_is(r, (int64_t[]){0, 1}, 2));
    sg_tensor_release(r);
    /* 0-dim: dims 0 and -1 are allowed */
    sg_tensor *z = make(SG_FLOAT64, NULL, 0, (double[]){2.5});
    sg_int_list dm1 = L(-1), d00 = L(0, 0);
    CHECK(aten_sum_dim_IntList(z, &dm1, true, NULL, &r) == SG_OK && r->ndim == 0 &&
          all_eq(r, (double[]){2.5}, 1));
    sg_tensor_release(r);
    CHECK(aten_sum_dim_IntList(z, &d1, false, NULL, &r) == SG_EINVAL);
    CHECK(err_is("Dimension out of range (expected to be in range of [-1, 0], but got 1)"));
    CHECK(aten_sum_dim_IntList(z, &d00, false, NULL, &r) == SG_EINVAL);
    CHECK(err_is("dim 0 appears multiple times in the list of dims"));
    /* float16: accumulated in float32 (in float16, 4096 ones would stop at 2048) */
    double *ones = malloc(4096 * sizeof *ones);
    for (int i = 0; i < 4096; i++) ones[i] = 1;
    sg_tensor *h = make(SG_FLOAT16, (int64_t[]){4096}, 1, ones);
    CHECK(aten_sum(h, NULL, &r) == SG_OK && r->dtype == SG_FLOAT16 &&
          all_eq(r, (double[]){4096}, 1));
    sg_tensor_release(r);
    sg_tensor *bh = make(SG_BFLOAT16, (int64_t[]){4096}, 1, ones);
    CHECK(aten_sum(bh, NULL, &r) == SG_OK && r->dtype == SG_BFLOAT16 &&
          all_eq(r, (double[]){4096}, 1));
    sg_tensor_release(r);
    sg_dtype f32 = SG_FLOAT32;
    CHECK(aten_sum(h, &f32, &r) == SG_OK && r->dtype == SG_FLOAT32 &&
          all_eq(r, (double[]){4096}, 1));
    sg_tensor_release(r);
    free(ones);
    sg_tensor_release(bh);
    sg_tensor_release(h);
    sg_tensor_release(z);
    sg_tensor_release(e03);
    sg_tensor_release(e);
    sg_tensor_release(u8);
    sg_tensor_release(b);
    sg_tensor_release(i32);
}

/* ---- mean, prod ----------------------------------------------------------------------------- */

static void test_mean_prod(void) {
    int64_t    s23[2] = {2, 3};
    double     v[6] = {1, 2, 3, 4, 5, 6};
    sg_tensor *x = make(SG_FLOAT32, s23, 2, v), *r = NULL;
    CHECK(aten_mean(x, NULL, &r) == SG_OK && r->ndim == 0 && all_eq(r, (double[]){3.5}, 1));
    sg_tensor_release(r);
    sg_int_list d0 = L(0), dm1 = L(-1);
    CHECK(aten_mean_dim(x, &d0, false, NULL, &r) == SG_OK &&
          all_eq(r, (double[]){2.5, 3.5, 4.5}, 3));
    sg_tensor_release(r);
    CHECK(aten_mean_dim(x, &dm1, true, NULL, &r) == SG_OK && shape_is(r, (int64_t[]){2, 1}, 2));
    CHECK(all_eq(r, (double[]){2, 5}, 2));
    sg_tensor_release(r);
    /* integers: no inferred dtype; an explicit floating one is fine */
    sg_tensor *xi = make(SG_INT64, s23, 2, v), *xi32 = make(SG_INT32, s23, 2, v);
    CHECK(aten_mean(xi, NULL, &r) == SG_EINVAL);
    CHECK(err_is("mean(): could not infer output dtype. Input dtype must be either a floating "
                 "point or complex dtype. Got: Long"));
    CHECK(aten_mean_dim(xi32, &d0, false, NULL, &r) == SG_EINVAL);
    CHECK(err_is("mean(): could not infer output dtype. Input dtype must be either a floating "
                 "point or complex dtype. Got: Int"));
    sg_dtype i32 = SG_INT32, f64 = SG_FLOAT64;
    CHECK(aten_mean(x, &i32, &r) == SG_EINVAL);
    CHECK(err_is("mean(): could not infer output dtype. Optional dtype must be either a floating "
                 "point or complex dtype. Got: Int"));
    CHECK(aten_mean(xi, &f64, &r) == SG_OK && r->dtype == SG_FLOAT64 &&
          all_eq(r, (double[]){3.5}, 1));
    sg_tensor_release(r);
    /* empty: NaN */
    sg_tensor *e = make(SG_FLOAT32, (int64_t[]){0}, 1, NULL);
    CHECK(aten_mean(e, NULL, &r) == SG_OK && isnan(at(r, 0)));
    sg_tensor_release(r);
    /* out= variants */
    sg_tensor *out = make(SG_FLOAT64, (int64_t[]){1}, 1, v);
    CHECK(aten_mean_dtype_out(x, NULL, out, &r) == SG_OK && r == out && out->ndim == 0);
    CHECK(all_eq(out, (double[]){3.5}, 1));
    sg_tensor_release(r);
    CHECK(aten_mean_out(x, &d0, true, NULL, out, &r) == SG_OK &&
          shape_is(out, (int64_t[]){1, 3}, 2));
    CHECK(all_eq(out, (double[]){2.5, 3.5, 4.5}, 3));
    sg_tensor_release(r);
    sg_tensor_release(out);
    /* float16 mean: 1000 values of 0.1 average to 0.1 (rounded to float16 once) */
    double *tenth = malloc(1000 * sizeof *tenth);
    for (int i = 0; i < 1000; i++) tenth[i] = 0.1;
    sg_tensor *h = make(SG_FLOAT16, (int64_t[]){1000}, 1, tenth);
    CHECK(aten_mean(h, NULL, &r) == SG_OK && r->dtype == SG_FLOAT16);
    CHECK(*(uint16_t *)sg_tensor_data(r) == *(uint16_t *)sg_tensor_data(h));
    sg_tensor_release(r);
    free(tenth);
    sg_tensor_release(h);

    /* prod */
    CHECK(aten_prod(x, NULL, &r) == SG_OK && r->dtype == SG_FLOAT32 &&
          all_eq(r, (double[]){720}, 1));
    sg_tensor_release(r);
    CHECK(aten_prod(xi32, NULL, &r) == SG_OK && r->dtype == SG_INT64 &&
          all_eq(r, (double[]){720}, 1));
    sg_tensor_release(r);
    CHECK(aten_prod_dim_int(x, 1, false, NULL, &r) == SG_OK && all_eq(r, (double[]){6, 120}, 2));
    sg_tensor_release(r);
    CHECK(aten_prod_dim_int(x, -2, true, &f64, &r) == SG_OK && r->dtype == SG_FLOAT64);
    CHECK(shape_is(r, (int64_t[]){1, 3}, 2) && all_eq(r, (double[]){4, 10, 18}, 3));
    sg_tensor_release(r);
    CHECK(aten_prod_dim_int(x, 2, false, NULL, &r) == SG_EINVAL);
    CHECK(err_is("Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
    CHECK(aten_prod(e, NULL, &r) == SG_OK && all_eq(r, (double[]){1}, 1));
    sg_tensor_release(r);
    sg_tensor *b = make(SG_BOOL, (int64_t[]){3}, 1, (double[]){1, 1, 0});
    CHECK(aten_prod(b, NULL, &r) == SG_OK && r->dtype == SG_INT64 && all_eq(r, (double[]){0}, 1));
    sg_tensor_release(r);
    sg_tensor *iout = make(SG_INT32, (int64_t[]){2}, 1, v);
    CHECK(aten_prod_int_out(xi32, 1, false, NULL, iout, &r) == SG_OK &&
          all_eq(iout, (double[]){6, 120}, 2));
    sg_tensor_release(r);
    sg_tensor_release(iout);
    sg_tensor_release(b);
    sg_tensor_release(e);
    sg_tensor_release(xi);
    sg_tensor_release(xi32);
    sg_tensor_release(x);
}

/* ---- amax, amin, max(), min() --------------------------------------------------------------- */

static void test_extrema(void) {
    int64_t    s23[2] = {2, 3};
    sg_tensor *x = make(SG_FLOAT32, s23, 2, (double[]){1, 5, -2, 7, NAN, 0}), *r = NULL;
    sg_int_list d0 = L(0), d1 = L(1), dm1 = L(-1);
    CHECK(aten_amax(x, d0, false, &r) == SG_OK && all_eq(r, (double[]){7, NAN, 0}, 3));
    sg_tensor_release(r);
    CHECK(aten_amax(x, dm1, true, &r) == SG_OK && shape_is(r, (int64_t[]){2, 1}, 2));
    CHECK(all_eq(r, (double[]){5, NAN}, 2)); /* NaN wins */
    sg_tensor_release(r);
    CHECK(aten_amin(x, d1, false, &r) == SG_OK && all_eq(r, (double[]){-2, NAN}, 2));
    sg_tensor_release(r);
    CHECK(aten_amin(x, none_list, false, &r) == SG_OK && r->ndim == 0 && isnan(at(r, 0)));
    sg_tensor_release(r);
    CHECK(aten_max(x, &r) == SG_OK && r->ndim == 0 && isnan(at(r, 0)));
    sg_tensor_release(r);
    /* without NaN */
    sg_tensor *y = make(SG_INT32, s23, 2, (double[]){3, -8, 4, 4, 9, -1});
    CHECK(aten_max(y, &r) == SG_OK && r->dtype == SG_INT32 && all_eq(r, (double[]){9}, 1));
    sg_tensor_release(r);
    CHECK(aten_min(y, &r) == SG_OK && all_eq(r, (double[]){-8}, 1));
    sg_tensor_release(r);
    CHECK(aten_amax(y, d1, false, &r) == SG_OK && all_eq(r, (double[]){4, 9}, 2));
    sg_tensor_release(r);
    sg_tensor *yt = NULL;
    CHECK(sg_tensor_transpose(y, 0, 1, &yt) == SG_OK);
    CHECK(aten_amin(yt, d1, false, &r) == SG_OK && all_eq(r, (double[]){3, -8, -1}, 3));
    sg_tensor_release(r);
    sg_tensor_release(yt);
    /* bool: any / all */
    sg_tensor *b = make(SG_BOOL, (int64_t[]){3}, 1, (double[]){0, 1, 0});
    CHECK(aten_max(b, &r) == SG_OK && r->dtype == SG_BOOL && all_eq(r, (double[]){1}, 1));
    sg_tensor_release(r);
    CHECK(aten_amin(b, none_list, false, &r) == SG_OK && all_eq(r, (double[]){0}, 1));
    sg_tensor_release(r);
    /* float16, with infinities */
    sg_tensor *h = make(SG_FLOAT16, (int64_t[]){4}, 1, (double[]){-INFINITY, 3.5, -65504, 0.25});
    CHECK(aten_max(h, &r) == SG_OK && r->dtype == SG_FLOAT16 && all_eq(r, (double[]){3.5}, 1));
    sg_tensor_release(r);
    CHECK(aten_min(h, &r) == SG_OK && all_eq(r, (double[]){-INFINITY}, 1));
    sg_tensor_release(r);
    /* 0-dim */
    sg_tensor *z = make(SG_FLOAT64, NULL, 0, (double[]){-3});
    CHECK(aten_amax(z, d0, false, &r) == SG_OK && r->ndim == 0 && all_eq(r, (double[]){-3}, 1));
    sg_tensor_release(r);
    CHECK(aten_max(z, &r) == SG_OK && all_eq(r, (double[]){-3}, 1));
    sg_tensor_release(r);
    /* empty: errors, as aten's */
    sg_tensor *e = make(SG_FLOAT32, (int64_t[]){2, 0}, 2, NULL);
    CHECK(aten_max(e, &r) == SG_EINVAL);
    CHECK(err_is("max(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                 "the reduction dim with the 'dim' argument."));
    CHECK(aten_min(e, &r) == SG_EINVAL);
    CHECK(err_is("min(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                 "the reduction dim with the 'dim' argument."));
    CHECK(aten_amax(e, none_list, false, &r) == SG_EINVAL);
    CHECK(err_is("amax(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                 "the reduction dim with the 'dim' argument."));
    CHECK(aten_amax(e, dm1, false, &r) == SG_EINVAL);
    CHECK(err_is("amax(): Expected reduction dim -1 to have non-zero size."));
    /* but reducing the non-empty dim of an empty tensor is fine: an empty result */
    CHECK(aten_amin(e, d0, false, &r) == SG_OK && shape_is(r, (int64_t[]){0}, 1));
    sg_tensor_release(r);
    /* out= dtype must match */
    sg_tensor *o64 = make(SG_FLOAT64, (int64_t[]){3}, 1, (double[]){0, 0, 0});
    CHECK(aten_amax_out(x, d0, false, o64, &r) == SG_EINVAL);
    CHECK(err_is("Expected the dtype for input and out to match, but got Float for input's dtype "
                 "and Double for out's dtype."));
    /* max.unary_out casts into a wider out= */
    CHECK(aten_max_unary_out(y, o64, &r) == SG_OK && r == o64 && o64->ndim == 0);
    CHECK(all_eq(o64, (double[]){9}, 1));
    sg_tensor_release(r);
    sg_tensor_release(o64);
    sg_tensor_release(e);
    sg_tensor_release(z);
    sg_tensor_release(h);
    sg_tensor_release(b);
    sg_tensor_release(y);
    sg_tensor_release(x);
}

/* ---- max.dim, min.dim, argmax, argmin ------------------------------------------------------- */

static void test_indices(void) {
    int64_t    s23[2] = {2, 3};
    sg_tensor *x = make(SG_FLOAT32, s23, 2, (double[]){4, 9, 9, 2, 2, 1});
    sg_tensor *vals = NULL, *idx = NULL, *r = NULL;
    CHECK(aten_max_dim(x, 1, false, &vals, &idx) == SG_OK);
    CHECK(vals->dtype == SG_FLOAT32 && idx->dtype == SG_INT64 && shape_is(idx, (int64_t[]){2}, 1));
    CHECK(all_eq(vals, (double[]){9, 2}, 2) &&
          all_eq(idx, (double[]){1, 0}, 2)); /* first occurrence */
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_min_dim(x, -1, true, &vals, &idx) == SG_OK && shape_is(idx, (int64_t[]){2, 1}, 2));
    CHECK(all_eq(vals, (double[]){4, 1}, 2) && all_eq(idx, (double[]){0, 2}, 2));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_max_dim(x, 0, false, &vals, &idx) == SG_OK);
    CHECK(all_eq(vals, (double[]){4, 9, 9}, 3) && all_eq(idx, (double[]){0, 0, 0}, 3));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    /* NaN wins, at its first position */
    sg_tensor *n = make(SG_FLOAT64, (int64_t[]){5}, 1, (double[]){1, NAN, 7, NAN, 3});
    CHECK(aten_max_dim(n, 0, false, &vals, &idx) == SG_OK && isnan(at(vals, 0)) &&
          all_eq(idx, (double[]){1}, 1));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_min_dim(n, 0, false, &vals, &idx) == SG_OK && isnan(at(vals, 0)) &&
          all_eq(idx, (double[]){1}, 1));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_argmax(n, NULL, false, &r) == SG_OK && all_eq(r, (double[]){1}, 1));
    sg_tensor_release(r);
    /* argmax: dim None is the flat index; keepdim gives ones */
    CHECK(aten_argmax(x, NULL, false, &r) == SG_OK && r->ndim == 0 && r->dtype == SG_INT64);
    CHECK(all_eq(r, (double[]){1}, 1));
    sg_tensor_release(r);
    CHECK(aten_argmin(x, NULL, true, &r) == SG_OK && shape_is(r, (int64_t[]){1, 1}, 2));
    CHECK(all_eq(r, (double[]){5}, 1));
    sg_tensor_release(r);
    int64_t d = -2;
    CHECK(aten_argmax(x, &d, false, &r) == SG_OK && all_eq(r, (double[]){0, 0, 0}, 3));
    sg_tensor_release(r);
    /* a transposed input: indices count in its own (logical) order */
    sg_tensor *xt = NULL;
    CHECK(sg_tensor_transpose(x, 0, 1, &xt) == SG_OK); /* [[4, 2], [9, 2], [9, 1]] */
    CHECK(aten_argmax(xt, NULL, false, &r) == SG_OK && all_eq(r, (double[]){2}, 1));
    sg_tensor_release(r);
    CHECK(aten_argmin(xt, NULL, false, &r) == SG_OK && all_eq(r, (double[]){5}, 1));
    sg_tensor_release(r);
    d = 1;
    CHECK(aten_argmin(xt, &d, false, &r) == SG_OK && all_eq(r, (double[]){1, 1, 1}, 3));
    sg_tensor_release(r);
    CHECK(aten_max_dim(xt, 0, false, &vals, &idx) == SG_OK);
    CHECK(all_eq(vals, (double[]){9, 2}, 2) && all_eq(idx, (double[]){1, 0}, 2));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    sg_tensor_release(xt);
    /* integers and bool (max.dim takes bool, argmax does not) */
    sg_tensor *iv = make(SG_INT16, (int64_t[]){4}, 1, (double[]){-5, 3, 3, -7});
    CHECK(aten_argmax(iv, NULL, false, &r) == SG_OK && all_eq(r, (double[]){1}, 1));
    sg_tensor_release(r);
    CHECK(aten_min_dim(iv, 0, false, &vals, &idx) == SG_OK && vals->dtype == SG_INT16);
    CHECK(all_eq(vals, (double[]){-7}, 1) && all_eq(idx, (double[]){3}, 1));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    sg_tensor *b = make(SG_BOOL, (int64_t[]){3}, 1, (double[]){0, 1, 1});
    CHECK(aten_max_dim(b, 0, false, &vals, &idx) == SG_OK && all_eq(idx, (double[]){1}, 1));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_argmax(b, NULL, false, &r) == SG_EUNSUPPORTED);
    CHECK(err_is("\"argmax_cpu\" not implemented for 'Bool'"));
    /* float16 */
    sg_tensor *h = make(SG_FLOAT16, (int64_t[]){3}, 1, (double[]){0.5, -1, 0.75});
    CHECK(aten_max_dim(h, 0, true, &vals, &idx) == SG_OK && vals->dtype == SG_FLOAT16);
    CHECK(all_eq(vals, (double[]){0.75}, 1) && all_eq(idx, (double[]){2}, 1));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    /* 0-dim */
    sg_tensor *z = make(SG_FLOAT32, NULL, 0, (double[]){8});
    CHECK(aten_max_dim(z, -1, false, &vals, &idx) == SG_OK && vals->ndim == 0 &&
          all_eq(idx, (double[]){0}, 1));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_max_dim(z, 1, false, &vals, &idx) == SG_EINVAL);
    CHECK(err_is("Dimension out of range (expected to be in range of [-1, 0], but got 1)"));
    /* empty */
    sg_tensor *e = make(SG_FLOAT32, (int64_t[]){3, 0}, 2, NULL);
    CHECK(aten_max_dim(e, -1, false, &vals, &idx) == SG_EINVAL);
    CHECK(err_is("max(): Expected reduction dim 1 to have non-zero size."));
    CHECK(aten_max_dim(e, 0, false, &vals, &idx) == SG_OK && shape_is(idx, (int64_t[]){0}, 1));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_argmax(e, NULL, false, &r) == SG_EINVAL);
    CHECK(err_is("argmax(): Expected reduction dim to be specified for input.numel() == 0."));
    /* out= variants: resized; the dtypes must be the input's and int64 */
    sg_tensor *ov = make(SG_FLOAT32, (int64_t[]){1}, 1, (double[]){0});
    sg_tensor *oi = make(SG_INT64, (int64_t[]){1}, 1, (double[]){0});
    sg_tensor *rv = NULL, *ri = NULL;
    CHECK(aten_max_dim_max(x, 1, false, ov, oi, &rv, &ri) == SG_OK && rv == ov && ri == oi);
    CHECK(all_eq(ov, (double[]){9, 2}, 2) && all_eq(oi, (double[]){1, 0}, 2));
    sg_tensor_release(rv);
    sg_tensor_release(ri);
    CHECK(aten_max_dim_max(x, 1, false, ov, ov, &rv, &ri) == SG_EINVAL);
    CHECK(err_is("Expected out tensor to have dtype long int, but got float instead"));
    CHECK(aten_argmax_out(x, NULL, false, ov, &r) == SG_EINVAL);
    CHECK(err_is("Expected out tensor to have dtype long int, but got float instead"));
    CHECK(aten_argmax_out(x, NULL, false, oi, &r) == SG_OK && oi->ndim == 0 &&
          all_eq(oi, (double[]){1}, 1));
    sg_tensor_release(r);
    sg_tensor_release(ov);
    sg_tensor_release(oi);
    sg_tensor_release(e);
    sg_tensor_release(z);
    sg_tensor_release(h);
    sg_tensor_release(b);
    sg_tensor_release(iv);
    sg_tensor_release(n);
    sg_tensor_release(x);
}

/* ---- var, std ------------------------------------------------------------------------------- */

static void test_var_std(void) {
    sg_tensor *x = make(SG_FLOAT32, (int64_t[]){2, 4}, 2, (double[]){1, 2, 3, 4, 2, 2, 2, 10});
    sg_tensor *r = NULL;
    sg_int_list d1 = L(1), d0 = L(0);
    /* row 0: mean 2.5, squared deviations 5; row 1: mean 4, squared deviations 48 */
    CHECK(aten_var_dim(x, &d1, true, false, &r) == SG_OK && all_eq(r, (double[]){5.0 / 3, 16}, 2));
    sg_tensor_release(r);
    CHECK(aten_var_dim(x, &d1, false, true, &r) == SG_OK && shape_is(r, (int64_t[]){2, 1}, 2));
    CHECK(all_eq(r, (double[]){1.25, 12}, 2));
    sg_tensor_release(r);
    CHECK(aten_std_dim(x, &d1, true, false, &r) == SG_OK &&
          all_eq(r, (double[]){sqrt(5.0 / 3), 4}, 2));
    sg_tensor_release(r);
    sg_scalar c2 = sg_scalar_int(2), c15 = sg_scalar_float(1.5);
    CHECK(aten_var_correction(x, &d1, &c2, false, &r) == SG_OK &&
          all_eq(r, (double[]){2.5, 24}, 2));
    sg_tensor_release(r);
    CHECK(aten_var_correction(x, &d1, &c15, false, &r) == SG_OK &&
          all_eq(r, (double[]){2, 19.2}, 2));
    sg_tensor_release(r);
    /* correction None is 1; dim None is every dim: mean 3.25, squared deviations 57.5 */
    CHECK(aten_var_correction(x, NULL, NULL, false, &r) == SG_OK && r->ndim == 0);
    CHECK(all_eq(r, (double[]){57.5 / 7}, 1));
    sg_tensor_release(r);
    CHECK(aten_var(x, false, &r) == SG_OK && all_eq(r, (double[]){57.5 / 8}, 1));
    sg_tensor_release(r);
    CHECK(aten_std(x, true, &r) == SG_OK && all_eq(r, (double[]){sqrt(57.5 / 7)}, 1));
    sg_tensor_release(r);
    CHECK(aten_var_dim(x, &d0, true, false, &r) == SG_OK &&
          all_eq(r, (double[]){0.5, 0, 0.5, 18}, 4));
    sg_tensor_release(r);
    /* a transposed input */
    sg_tensor *xt = NULL;
    CHECK(sg_tensor_transpose(x, 0, 1, &xt) == SG_OK);
    CHECK(aten_var_dim(xt, &d0, true, false, &r) == SG_OK && all_eq(r, (double[]){5.0 / 3, 16}, 2));
    sg_tensor_release(r);
    sg_tensor_release(xt);
    /* one element with correction 1: 0/0; empty: NaN */
    sg_tensor *one = make(SG_FLOAT64, (int64_t[]){1}, 1, (double[]){3});
    CHECK(aten_var(one, true, &r) == SG_OK && isnan(at(r, 0)));
    sg_tensor_release(r);
    CHECK(aten_var(one, false, &r) == SG_OK && all_eq(r, (double[]){0}, 1));
    sg_tensor_release(r);
    sg_tensor *e = make(SG_FLOAT32, (int64_t[]){0}, 1, NULL);
    CHECK(aten_std(e, true, &r) == SG_OK && isnan(at(r, 0)));
    sg_tensor_release(r);
    /* two-pass accuracy: a large offset does not swamp a small spread */
    sg_tensor *off = make(SG_FLOAT32, (int64_t[]){4}, 1,
                          (double[]){1e6 + 1, 1e6 + 2, 1e6 + 3, 1e6 + 4});
    CHECK(aten_var(off, true, &r) == SG_OK && all_eq(r, (double[]){5.0 / 3}, 1));
    sg_tensor_release(r);
    /* float16 in, float16 out */
    sg_tensor *h = make(SG_FLOAT16, (int64_t[]){4}, 1, (double[]){1, 2, 3, 4});
    CHECK(aten_var(h, false, &r) == SG_OK && r->dtype == SG_FLOAT16 &&
          all_eq(r, (double[]){1.25}, 1));
    sg_tensor_release(r);
    /* integers are refused */
    sg_tensor *xi = make(SG_INT64, (int64_t[]){3}, 1, (double[]){1, 2, 3});
    CHECK(aten_var(xi, true, &r) == SG_EINVAL);
    CHECK(err_is("std and var only support floating point and complex dtypes"));
    /* out= */
    sg_tensor *o = make(SG_FLOAT64, (int64_t[]){1}, 1, (double[]){0});
    CHECK(aten_std_out(x, &d1, false, true, o, &r) == SG_OK && r == o &&
          shape_is(o, (int64_t[]){2, 1}, 2));
    CHECK(all_eq(o, (double[]){sqrt(1.25), sqrt(12)}, 2));
    sg_tensor_release(r);
    CHECK(aten_var_correction_out(x, &d1, &c2, false, o, &r) == SG_OK &&
          all_eq(o, (double[]){2.5, 24}, 2));
    sg_tensor_release(r);
    sg_tensor_release(o);
    sg_tensor_release(xi);
    sg_tensor_release(h);
    sg_tensor_release(off);
    sg_tensor_release(e);
    sg_tensor_release(one);
    sg_tensor_release(x);
}

/* ---- logsumexp ------------------------------------------------------------------------------ */

static void test_logsumexp(void) {
    sg_tensor *x = make(SG_FLOAT32, (int64_t[]){2, 2}, 2, (double[]){0, 0, 1000, 1000});
    sg_tensor *r = NULL;
    sg_int_list d1 = L(1), d0 = L(0), dm1 = L(-1);
    CHECK(aten_logsumexp(x, d1, false, &r) == SG_OK &&
          all_eq(r, (double[]){log(2.0), 1000 + log(2.0)}, 2));
    sg_tensor_release(r);
    CHECK(aten_logsumexp(x, d0, true, &r) == SG_OK && shape_is(r, (int64_t[]){1, 2}, 2));
    CHECK(all_eq(r, (double[]){1000, 1000}, 2));
    sg_tensor_release(r);
    CHECK(aten_logsumexp(x, none_list, true, &r) == SG_OK && shape_is(r, (int64_t[]){1, 1}, 2));
    CHECK(all_eq(r, (double[]){1000 + log(2.0)}, 1));
    sg_tensor_release(r);
    /* no dims without keepdim: aten cannot add its kept max to the 0-d sum, and refuses */
    CHECK(aten_logsumexp(x, none_list, false, &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "doesn't match the broadcast shape [1, 1]") != NULL);
    /* -inf everywhere stays -inf (no NaN); +inf gives +inf; NaN propagates */
    sg_tensor *y = make(SG_FLOAT64, (int64_t[]){3, 2}, 2,
                        (double[]){-INFINITY, -INFINITY, INFINITY, 1, NAN, 1});
    CHECK(aten_logsumexp(y, dm1, false, &r) == SG_OK &&
          all_eq(r, (double[]){-INFINITY, INFINITY, NAN}, 3));
    sg_tensor_release(r);
    /* integers become float32 */
    sg_tensor *xi = make(SG_INT64, (int64_t[]){2}, 1, (double[]){1, 1});
    CHECK(aten_logsumexp(xi, d0, false, &r) == SG_OK && r->dtype == SG_FLOAT32);
    CHECK(all_eq(r, (double[]){1 + log(2.0)}, 1));
    sg_tensor_release(r);
    /* empty: -inf */
    sg_tensor *e = make(SG_FLOAT32, (int64_t[]){0, 2}, 2, NULL);
    CHECK(aten_logsumexp(e, d0, false, &r) == SG_OK &&
          all_eq(r, (double[]){-INFINITY, -INFINITY}, 2));
    sg_tensor_release(r);
    /* out= must be floating */
    sg_tensor *oi = make(SG_INT64, (int64_t[]){2}, 1, (double[]){0, 0});
    CHECK(aten_logsumexp_out(x, d1, false, oi, &r) == SG_EINVAL);
    CHECK(err_is("logsumexp(): Expected floating point type for result tensor, but got: Long"));
    sg_tensor *of = make(SG_FLOAT64, (int64_t[]){2}, 1, (double[]){0, 0});
    CHECK(aten_logsumexp_out(x, d1, false, of, &r) == SG_OK &&
          all_eq(of, (double[]){log(2.0), 1000 + log(2.0)}, 2));
    sg_tensor_release(r);
    /* float16 */
    sg_tensor *h = make(SG_FLOAT16, (int64_t[]){2}, 1, (double[]){3, 3});
    CHECK(aten_logsumexp(h, d0, false, &r) == SG_OK && r->dtype == SG_FLOAT16);
    CHECK(all_near(r, (double[]){3 + log(2.0)}, 1, 1e-3));
    sg_tensor_release(r);
    sg_tensor_release(h);
    sg_tensor_release(of);
    sg_tensor_release(oi);
    sg_tensor_release(e);
    sg_tensor_release(xi);
    sg_tensor_release(y);
    sg_tensor_release(x);
}

/* ---- cumsum --------------------------------------------------------------------------------- */

static void test_cumsum(void) {
    sg_tensor *x = make(SG_FLOAT32, (int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 4, 5, 6}), *r = NULL;
    CHECK(aten_cumsum(x, 1, NULL, &r) == SG_OK && shape_is(r, (int64_t[]){2, 3}, 2));
    CHECK(all_eq(r, (double[]){1, 3, 6, 4, 9, 15}, 6));
    sg_tensor_release(r);
    CHECK(aten_cumsum(x, -2, NULL, &r) == SG_OK && all_eq(r, (double[]){1, 2, 3, 5, 7, 9}, 6));
    sg_tensor_release(r);
    CHECK(aten_cumsum(x, 2, NULL, &r) == SG_EINVAL);
    CHECK(err_is("Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
    /* transposed */
    sg_tensor *xt = NULL;
    CHECK(sg_tensor_transpose(x, 0, 1, &xt) == SG_OK);
    CHECK(aten_cumsum(xt, 0, NULL, &r) == SG_OK && all_eq(r, (double[]){1, 4, 3, 9, 6, 15}, 6));
    sg_tensor_release(r);
    CHECK(aten_cumsum(xt, 1, NULL, &r) == SG_OK && all_eq(r, (double[]){1, 5, 2, 7, 3, 9}, 6));
    sg_tensor_release(r);
    /* integers: int64 by default; in place keeps the dtype */
    sg_tensor *i32 = make(SG_INT32, (int64_t[]){4}, 1, (double[]){1, 2, 3, 2147483647});
    CHECK(aten_cumsum(i32, 0, NULL, &r) == SG_OK && r->dtype == SG_INT64);
    CHECK(all_eq(r, (double[]){1, 3, 6, 2147483653.0}, 4));
    sg_tensor_release(r);
    CHECK(aten_cumsum_(i32, 0, NULL, &r) == SG_OK && r == i32 && i32->dtype == SG_INT32);
    CHECK(all_eq(i32, (double[]){1, 3, 6, (double)(int32_t)(6u + 2147483647u)}, 4));
    sg_tensor_release(r);
    sg_dtype f64 = SG_FLOAT64, i64 = SG_INT64;
    CHECK(aten_cumsum_(i32, 0, &i64, &r) == SG_EINVAL);
    CHECK(err_is("Expected out tensor to have dtype long int, but got int instead"));
    CHECK(aten_cumsum(x, 1, &f64, &r) == SG_OK && r->dtype == SG_FLOAT64 &&
          all_eq(r, (double[]){1, 3, 6, 4, 9, 15}, 6));
    sg_tensor_release(r);
    sg_tensor *b = make(SG_BOOL, (int64_t[]){3}, 1, (double[]){1, 0, 1});
    CHECK(aten_cumsum(b, 0, NULL, &r) == SG_OK && r->dtype == SG_INT64 &&
          all_eq(r, (double[]){1, 1, 2}, 3));
    sg_tensor_release(r);
    /* a bool result, asked for by dtype=, in place or out=, aten's kernel has not */
    sg_dtype bl = SG_BOOL;
    CHECK(aten_cumsum(b, 0, &bl, &r) == SG_EUNSUPPORTED && !r);
    CHECK(err_is("\"cumsum_out_cpu\" not implemented for 'Bool'"));
    CHECK(aten_cumsum_(b, 0, NULL, &r) == SG_EUNSUPPORTED && !r);
    CHECK(err_is("\"cumsum_out_cpu\" not implemented for 'Bool'"));
    CHECK(all_eq(b, (double[]){1, 0, 1}, 3));
    /* in place on a non-contiguous view */
    sg_tensor *y = make(SG_FLOAT64, (int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 4, 5, 6}), *yt = NULL;
    CHECK(sg_tensor_transpose(y, 0, 1, &yt) == SG_OK);
    CHECK(aten_cumsum_(yt, 0, NULL, &r) == SG_OK && r == yt);
    CHECK(all_eq(y, (double[]){1, 3, 6, 4, 9, 15}, 6));
    sg_tensor_release(r);
    /* out= */
    sg_tensor *o = make(SG_FLOAT32, (int64_t[]){1}, 1, (double[]){0});
    CHECK(aten_cumsum_out(x, 0, NULL, o, &r) == SG_OK && shape_is(o, (int64_t[]){2, 3}, 2));
    CHECK(all_eq(o, (double[]){1, 2, 3, 5, 7, 9}, 6));
    sg_tensor_release(r);
    CHECK(aten_cumsum_out(x, 0, &f64, o, &r) == SG_EINVAL);
    CHECK(err_is("Expected out tensor to have dtype double, but got float instead"));
    /* 0-dim, empty, float16 */
    sg_tensor *z = make(SG_FLOAT32, NULL, 0, (double[]){4});
    CHECK(aten_cumsum(z, -1, NULL, &r) == SG_OK && r->ndim == 0 && all_eq(r, (double[]){4}, 1));
    sg_tensor_release(r);
    sg_tensor *e = make(SG_FLOAT32, (int64_t[]){0, 3}, 2, NULL);
    CHECK(aten_cumsum(e, 0, NULL, &r) == SG_OK && shape_is(r, (int64_t[]){0, 3}, 2));
    sg_tensor_release(r);
    double *ones = malloc(3000 * sizeof *ones);
    for (int i = 0; i < 3000; i++) ones[i] = 1;
    sg_tensor *h = make(SG_FLOAT16, (int64_t[]){3000}, 1, ones);
    CHECK(aten_cumsum(h, 0, NULL, &r) == SG_OK && r->dtype == SG_FLOAT16);
    CHECK(at(r, 2999) == 3000); /* float32 accumulator: 2049 and on round to even */
    CHECK(at(r, 2048) == 2048 && at(r, 2049) == 2050);
    sg_tensor_release(r);
    free(ones);
    sg_tensor_release(h);
    sg_tensor_release(e);
    sg_tensor_release(z);
    sg_tensor_release(o);
    sg_tensor_release(yt);
    sg_tensor_release(y);
    sg_tensor_release(b);
    sg_tensor_release(i32);
    sg_tensor_release(xt);
    sg_tensor_release(x);
}

/* ---- softmax -------------------------------------------------------------------------------- */

static void test_softmax(void) {
    sg_tensor *x = make(SG_FLOAT32, (int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 1000, 1000, 1000});
    sg_tensor *r = NULL;
    double     s = exp(-2.0) + exp(-1.0) + 1;
    double     p0 = exp(-2.0) / s, p1 = exp(-1.0) / s, p2 = 1 / s;
    CHECK(aten_softmax_int(x, 1, NULL, &r) == SG_OK && r->dtype == SG_FLOAT32);
    CHECK(all_near(r, (double[]){p0, p1, p2, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 6, 1e-6)); /* stable */
    sg_tensor_release(r);
    CHECK(aten__softmax(x, -1, false, &r) == SG_OK &&
          all_near(r, (double[]){p0, p1, p2, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 6, 1e-6));
    sg_tensor_release(r);
    CHECK(aten_log_softmax_int(x, 1, NULL, &r) == SG_OK);
    double l3 = -log(3.0);
    CHECK(all_near(r, (double[]){log(p0), log(p1), log(p2), l3, l3, l3}, 6, 1e-6));
    sg_tensor_release(r);
    /* over dim 0: columns [1, 1000] etc. */
    CHECK(aten_softmax_int(x, 0, NULL, &r) == SG_OK);
    double q = 1 / (1 + exp(999.0)), q2 = 1 / (1 + exp(998.0)), q3 = 1 / (1 + exp(997.0));
    CHECK(all_near(r, (double[]){q, q2, q3, 1, 1, 1}, 6, 1e-6));
    sg_tensor_release(r);
    CHECK(aten__log_softmax(x, 0, false, &r) == SG_OK);
    CHECK(all_near(r, (double[]){-999, -998, -997, 0, 0, 0}, 6, 1e-6));
    sg_tensor_release(r);
    /* dtype: the input converted first */
    sg_dtype f64 = SG_FLOAT64;
    CHECK(aten_softmax_int(x, 1, &f64, &r) == SG_OK && r->dtype == SG_FLOAT64);
    CHECK(all_near(r, (double[]){p0, p1, p2, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 6, 1e-12));
    sg_tensor_release(r);
    /* a transposed input, over each dim */
    sg_tensor *xt = NULL;
    CHECK(sg_tensor_transpose(x, 0, 1, &xt) == SG_OK);
    CHECK(aten_softmax_int(xt, 0, NULL, &r) == SG_OK && shape_is(r, (int64_t[]){3, 2}, 2));
    CHECK(all_near(r, (double[]){p0, 1.0 / 3, p1, 1.0 / 3, p2, 1.0 / 3}, 6, 1e-6));
    sg_tensor_release(r);
    sg_tensor_release(xt);
    /* a middle dim of a 3-d tensor: [2, 2, 2] over dim 1 */
    sg_tensor *c = make(SG_FLOAT64, (int64_t[]){2, 2, 2}, 3, (double[]){0, 1, 0, 3, 5, 5, 5, 5});
    CHECK(aten_softmax_int(c, 1, NULL, &r) == SG_OK);
    double e2 = 1 / (1 + exp(2.0));
    CHECK(all_near(r, (double[]){0.5, e2, 0.5, 1 - e2, 0.5, 0.5, 0.5, 0.5}, 8, 1e-12));
    sg_tensor_release(r);
    /* -inf entries take no weight; a row of -inf is NaN, as aten's */
    sg_tensor *m = make(SG_FLOAT32, (int64_t[]){2, 2}, 2,
                        (double[]){-INFINITY, 0, -INFINITY, -INFINITY});
    CHECK(aten_softmax_int(m, 1, NULL, &r) == SG_OK && at(r, 0) == 0 && at(r, 1) == 1);
    CHECK(isnan(at(r, 2)) && isnan(at(r, 3)));
    sg_tensor_release(r);
    /* _safe_softmax: that row gives zeros; a row with a NaN keeps its NaN; dtype as softmax's */
    sg_tensor *mn = make(SG_FLOAT32, (int64_t[]){3, 2}, 2,
                         (double[]){-INFINITY, 0, -INFINITY, -INFINITY, NAN, -INFINITY});
    CHECK(aten__safe_softmax(mn, 1, NULL, &r) == SG_OK && r->dtype == SG_FLOAT32);
    CHECK(r && at(r, 0) == 0 && at(r, 1) == 1 && at(r, 2) == 0 && at(r, 3) == 0);
    CHECK(r && isnan(at(r, 4)) && isnan(at(r, 5)));
    sg_tensor_release(r);
    CHECK(aten__safe_softmax(mn, 0, &f64, &r) == SG_OK && r->dtype == SG_FLOAT64);
    CHECK(r && at(r, 1) == 1 && isnan(at(r, 0)) && at(r, 3) == 0 && at(r, 5) == 0);
    sg_tensor_release(r);
    sg_tensor_release(mn);
    /* 0-dim and empty */
    sg_tensor *z = make(SG_FLOAT32, NULL, 0, (double[]){-7});
    CHECK(aten_softmax_int(z, 0, NULL, &r) == SG_OK && r->ndim == 0 && all_eq(r, (double[]){1}, 1));
    sg_tensor_release(r);
    CHECK(aten_log_softmax_int(z, -1, NULL, &r) == SG_OK && all_eq(r, (double[]){0}, 1));
    sg_tensor_release(r);
    sg_tensor *e = make(SG_FLOAT32, (int64_t[]){0, 4}, 2, NULL);
    CHECK(aten_softmax_int(e, 1, NULL, &r) == SG_OK && shape_is(r, (int64_t[]){0, 4}, 2));
    sg_tensor_release(r);
    /* float16: computed in float32 */
    sg_tensor *h = make(SG_FLOAT16, (int64_t[]){3}, 1, (double[]){1, 2, 3});
    CHECK(aten_softmax_int(h, 0, NULL, &r) == SG_OK && r->dtype == SG_FLOAT16);
    CHECK(all_near(r, (double[]){p0, p1, p2}, 3, 1e-3));
    sg_tensor_release(r);
    /* errors: half_to_float (refused on the CPU, as aten does), integers, a bad dim, out= dtype */
    CHECK(aten__softmax(h, 0, true, &r) == SG_EUNSUPPORTED);
    CHECK(err_is("softmax with half to float conversion is not supported on CPU"));
    sg_tensor *xi = make(SG_INT64, (int64_t[]){3}, 1, (double[]){1, 2, 3});
    CHECK(aten_softmax_int(xi, 0, NULL, &r) == SG_EUNSUPPORTED);
    CHECK(err_is("\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"));
    CHECK(aten_softmax_int(xi, 0, &f64, &r) == SG_OK &&
          all_near(r, (double[]){p0, p1, p2}, 3, 1e-12));
    sg_tensor_release(r);
    CHECK(aten_log_softmax_int(x, 2, NULL, &r) == SG_EINVAL);
    CHECK(err_is("Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
    sg_tensor *o = make(SG_FLOAT64, (int64_t[]){1}, 1, (double[]){0});
    CHECK(aten__softmax_out(x, 1, false, o, &r) == SG_EINVAL);
    CHECK(err_is("Expected out tensor to have dtype float, but got double instead"));
    CHECK(aten_softmax_int_out(x, 1, &f64, o, &r) == SG_OK && r == o &&
          shape_is(o, (int64_t[]){2, 3}, 2));
    CHECK(all_near(o, (double[]){p0, p1, p2, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 6, 1e-12));
    sg_tensor_release(r);
    /* in place through out= = self */
    sg_tensor *w = make(SG_FLOAT32, (int64_t[]){3}, 1, (double[]){1, 2, 3});
    CHECK(aten__log_softmax_out(w, 0, false, w, &r) == SG_OK && r == w);
    CHECK(all_near(w, (double[]){log(p0), log(p1), log(p2)}, 3, 1e-6));
    sg_tensor_release(r);
    sg_tensor_release(w);
    sg_tensor_release(o);
    sg_tensor_release(xi);
    sg_tensor_release(h);
    sg_tensor_release(e);
    sg_tensor_release(z);
    sg_tensor_release(m);
    sg_tensor_release(c);
    sg_tensor_release(x);
}

/* ---- large inputs: the vectorised and parallel paths ---------------------------------------- */

static uint64_t rng = 88172645463325252ull;
static double uniform(void) { /* xorshift64, in [-1, 1) */
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 4503599627370496.0 - 1;
}

static sg_tensor *random_f32(const int64_t *sizes, int32_t n) {
    sg_tensor *t = NULL;
    CHECK(sg_tensor_empty(sizes, n, SG_FLOAT32, SG_CPU, &t) == SG_OK);
    float  *p = sg_tensor_data(t);
    int64_t k = sg_tensor_numel(t);
    for (int64_t i = 0; i < k; i++) p[i] = (float)(uniform() * 10 + 1);
    return t;
}

/* sums of t [a, b] (contiguous float32) along dim, in long double */
static void ref_sums(const sg_tensor *t, int dim, long double *out) {
    int64_t a = t->sizes[0], b = t->sizes[1];
    const float *p = sg_tensor_data(t);
    for (int64_t i = 0; i < (dim ? a : b); i++) out[i] = 0;
    for (int64_t i = 0; i < a; i++)
        for (int64_t j = 0; j < b; j++) out[dim ? i : j] += p[i * b + j];
}

static bool sums_match(const sg_tensor *r, const long double *want, int64_t n, double tol) {
    for (int64_t i = 0; i < n; i++)
        if (!(fabsl((long double)at(r, i) - want[i]) <= tol * fabsl(want[i]))) {
            fprintf(stderr, "  sum %lld: got %.9g, want %.9Lg\n", (long long)i, at(r, i), want[i]);
            return false;
        }
    return true;
}

static void test_large(void) {
    sg_tensor *r = NULL;
    /* a million float32 values: within float32 rounding of the exact sum */
    sg_tensor  *big = random_f32((int64_t[]){1, 1000000}, 2);
    long double want[1];
    ref_sums(big, 1, want);
    CHECK(aten_sum(big, NULL, &r) == SG_OK && sums_match(r, want, 1, 1e-6));
    sg_tensor_release(r);
    CHECK(aten_mean(big, NULL, &r) == SG_OK && close_to(at(r, 0), (double)(want[0] / 1e6), 1e-6));
    sg_tensor_release(r);
    /* 1e6 copies of 0.1f: a float32 running sum would be off by about 1% */
    sg_tensor *tenth = NULL;
    CHECK(sg_tensor_empty((int64_t[]){1000000}, 1, SG_FLOAT32, SG_CPU, &tenth) == SG_OK);
    for (int64_t i = 0; i < 1000000; i++) ((float *)sg_tensor_data(tenth))[i] = 0.1f;
    CHECK(aten_sum(tenth, NULL, &r) == SG_OK && close_to(at(r, 0), 1e6 * (double)0.1f, 1e-7));
    sg_tensor_release(r);
    sg_tensor_release(tenth);

    /* rows (inner reduction, parallel over outputs) and columns (outer reduction) */
    sg_tensor  *m = random_f32((int64_t[]){512, 3000}, 2);
    long double rows[512], cols[3000];
    ref_sums(m, 1, rows);
    ref_sums(m, 0, cols);
    sg_int_list d0 = L(0), d1 = L(1);
    CHECK(aten_sum_dim_IntList(m, &d1, false, NULL, &r) == SG_OK && sums_match(r, rows, 512, 1e-6));
    sg_tensor_release(r);
    CHECK(aten_sum_dim_IntList(m, &d0, false, NULL, &r) == SG_OK &&
          sums_match(r, cols, 3000, 1e-6));
    sg_tensor_release(r);
    /* the same through a transposed view: the roles swap */
    sg_tensor *mt = NULL;
    CHECK(sg_tensor_transpose(m, 0, 1, &mt) == SG_OK);
    CHECK(aten_sum_dim_IntList(mt, &d0, false, NULL, &r) == SG_OK &&
          sums_match(r, rows, 512, 1e-6));
    sg_tensor_release(r);
    CHECK(aten_sum_dim_IntList(mt, &d1, false, NULL, &r) == SG_OK &&
          sums_match(r, cols, 3000, 1e-6));
    sg_tensor_release(r);
    sg_tensor_release(mt);

    /* few outputs over long rows (per-thread partials), and few long columns */
    sg_tensor  *w = random_f32((int64_t[]){3, 400000},
                               2), *tall = random_f32((int64_t[]){400000, 3}, 2);
    long double w3[3], t3[3];
    ref_sums(w, 1, w3);
    ref_sums(tall, 0, t3);
    CHECK(aten_sum_dim_IntList(w, &d1, false, NULL, &r) == SG_OK && sums_match(r, w3, 3, 1e-6));
    sg_tensor_release(r);
    CHECK(aten_sum_dim_IntList(tall, &d0, false, NULL, &r) == SG_OK && sums_match(r, t3, 3, 1e-6));
    sg_tensor_release(r);
    sg_tensor *wide = random_f32((int64_t[]){200000, 40}, 2);
    long double w40[40];
    ref_sums(wide, 0, w40);
    CHECK(aten_sum_dim_IntList(wide, &d0, false, NULL, &r) == SG_OK &&
          sums_match(r, w40, 40, 1e-6));
    sg_tensor_release(r);

    /* max and argmax over long rows: ties far apart keep the first */
    float *p = sg_tensor_data(w);
    p[123] = 50, p[390000] = 50;                     /* row 0 */
    p[400000 + 399999] = 60;                         /* row 1 */
    p[800000 + 5] = NAN, p[800000 + 300000] = NAN;   /* row 2 */
    sg_tensor *vals = NULL, *idx = NULL;
    CHECK(aten_max_dim(w, 1, false, &vals, &idx) == SG_OK);
    CHECK(at(vals, 0) == 50 && at(vals, 1) == 60 && isnan(at(vals, 2)));
    CHECK(all_eq(idx, (double[]){123, 399999, 5}, 3));
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_argmax(w, NULL, false, &r) == SG_OK && all_eq(r, (double[]){800005}, 1));
    sg_tensor_release(r);
    p[800000 + 5] = 0, p[800000 + 300000] = 0;
    CHECK(aten_amax(w, none_list, false, &r) == SG_OK && all_eq(r, (double[]){60}, 1));
    sg_tensor_release(r);
    p[250000] = -70, p[350000] = -70;
    CHECK(aten_argmin(w, NULL, true, &r) == SG_OK && all_eq(r, (double[]){250000}, 1));
    sg_tensor_release(r);
    /* max over the columns of a tall matrix (outer reduction with indices) */
    float *q = sg_tensor_data(tall);
    q[3 * 100 + 1] = 99, q[3 * 300000 + 1] = 99, q[3 * 7 + 2] = -99;
    CHECK(aten_max_dim(tall, 0, false, &vals, &idx) == SG_OK && at(vals, 1) == 99 &&
          at(idx, 1) == 100);
    sg_tensor_release(vals);
    sg_tensor_release(idx);
    CHECK(aten_min_dim(tall, 0, false, &vals, &idx) == SG_OK && at(vals, 2) == -99 &&
          at(idx, 2) == 7);
    sg_tensor_release(vals);
    sg_tensor_release(idx);

    /* NaN inside the vectorised blocks of long lines, for each floating dtype; and long
     * integer lines (lanes of their own type) */
    sg_dtype fts[4] = {SG_FLOAT32, SG_FLOAT64, SG_FLOAT16, SG_BFLOAT16};
    double  *vv = malloc(10000 * sizeof *vv);
    for (int i = 0; i < 10000; i++) vv[i] = (i * 37) % 100 - 50;
    for (int k = 0; k < 4; k++) {
        sg_tensor *f = make(fts[k], (int64_t[]){10000}, 1, vv);
        CHECK(aten_amax(f, none_list, false, &r) == SG_OK && at(r, 0) == 49);
        sg_tensor_release(r);
        CHECK(aten_amin(f, none_list, false, &r) == SG_OK && at(r, 0) == -50);
        sg_tensor_release(r);
        put(fts[k], (char *)sg_tensor_data(f) + 6001 * (int64_t)sg_dtype_size(fts[k]), NAN);
        CHECK(aten_amax(f, none_list, false, &r) == SG_OK && isnan(at(r, 0)));
        sg_tensor_release(r);
        CHECK(aten_min(f, &r) == SG_OK && isnan(at(r, 0)));
        sg_tensor_release(r);
        CHECK(aten_argmin(f, NULL, false, &r) == SG_OK && at(r, 0) == 6001);
        sg_tensor_release(r);
        sg_tensor_release(f);
    }
    sg_dtype its[4] = {SG_INT32, SG_INT16, SG_INT8, SG_UINT8};
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < 10000; i++) vv[i] = (i * 37) % 100 + (its[k] == SG_UINT8 ? 100 : -50);
        vv[7777] = its[k] == SG_UINT8 ? 255 : 127;
        sg_tensor *f = make(its[k], (int64_t[]){10000}, 1, vv);
        CHECK(aten_max(f, &r) == SG_OK && at(r, 0) == vv[7777]);
        sg_tensor_release(r);
        CHECK(aten_argmax(f, NULL, false, &r) == SG_OK && at(r, 0) == 7777);
        sg_tensor_release(r);
        CHECK(aten_amin(f, none_list, false, &r) == SG_OK &&
              at(r, 0) == (its[k] == SG_UINT8 ? 100 : -50));
        sg_tensor_release(r);
        sg_tensor_release(f);
    }
    free(vv);

    /* var and softmax on a large tensor */
    sg_tensor *v = NULL;
    CHECK(sg_tensor_empty((int64_t[]){1 << 20}, 1, SG_FLOAT32, SG_CPU, &v) == SG_OK);
    float *pv = sg_tensor_data(v);
    for (int64_t i = 0; i < (1 << 20); i++) pv[i] = (float)(i % 2); /* var: 0.25 * n / (n - 1) */
    CHECK(aten_var(v, true, &r) == SG_OK && close_to(at(r, 0), 0.25 * 1048576.0 / 1048575.0, 1e-6));
    sg_tensor_release(r);
    sg_tensor *sm = random_f32((int64_t[]){64, 1000}, 2);
    CHECK(aten_softmax_int(sm, 0, NULL, &r) == SG_OK);
    bool ok = true;
    for (int64_t j = 0; j < 1000 && ok; j += 37) {
        double tot = 0;
        for (int64_t i = 0; i < 64; i++) tot += at(r, i * 1000 + j);
        ok = fabs(tot - 1) < 1e-5;
    }
    CHECK(ok);
    sg_tensor_release(r);
    CHECK(aten_softmax_int(sm, 1, NULL, &r) == SG_OK);
    ok = true;
    for (int64_t i = 0; i < 64 && ok; i++) {
        double tot = 0;
        for (int64_t j = 0; j < 1000; j++) tot += at(r, i * 1000 + j);
        ok = fabs(tot - 1) < 1e-5;
    }
    CHECK(ok);
    sg_tensor_release(r);
    /* cumsum along both dims of a large matrix */
    CHECK(aten_cumsum(m, 0, NULL, &r) == SG_OK);
    ok = true;
    for (int64_t j = 0; j < 3000 &&
         ok; j += 101) ok = close_to(at(r, 511 * 3000 + j), (double)cols[j], 1e-6);
    CHECK(ok);
    sg_tensor_release(r);
    CHECK(aten_cumsum(m, 1, NULL, &r) == SG_OK);
    ok = true;
    for (int64_t i = 0; i < 512 &&
         ok; i += 7) ok = close_to(at(r, i * 3000 + 2999), (double)rows[i], 1e-6);
    CHECK(ok);
    sg_tensor_release(r);
    sg_tensor_release(sm);
    sg_tensor_release(v);
    sg_tensor_release(wide);
    sg_tensor_release(tall);
    sg_tensor_release(w);
    sg_tensor_release(m);
    sg_tensor_release(big);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    test_sum();
    test_sum_dtypes_edges();
    test_mean_prod();
    test_extrema();
    test_indices();
    test_var_std();
    test_logsumexp();
    test_cumsum();
    test_softmax();
    test_large();
    sg_runtime_shutdown();
    return check_result("test_cpu_reduce");
}
