/* test_cpu_linalg.c: matrix products and attention on the CPU through the generated aten API:
 * mm, addmm (beta/alpha, broadcasting self, beta == 0 ignoring NaN, k == 0), bmm, baddbmm,
 * matmul's dim cases (dot, mv, folding, broadcast batch dims), linear, out= variants, strided
 * operands (transposed views, slices that need packing, column-major and staged outputs),
 * float16/bfloat16, integer wraparound, aten's errors, and scaled_dot_product_attention
 * (default and explicit scale, causal top-left, bool and float masks, fully masked rows, GQA,
 * broadcasting, the math variant's weights). Expected values are worked out by hand; larger
 * random products are checked against a naive triple loop in double. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"
#include "dtype.h"
#include "sdpa_dropout.h"

#include <math.h>
#include <string.h>

/* ---- helpers --------------------------------------------------------------------------------- */




static bool close_to(const sg_tensor *t, const double *want, int64_t n, double tol) {
    if (!t || sg_tensor_numel(t) != n) {
        fprintf(stderr, "  numel %lld, want %lld\n", t ? (long long)sg_tensor_numel(t) : -1LL,
                (long long)n);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        double g = at(t, i), w = want[i];
        bool   ok = g == w || (isnan(g) && isnan(w)) || fabs(g - w) <= tol * (1 + fabs(w));
        if (!ok) {
            fprintf(stderr, "  element %lld: got %.9g, want %.9g\n", (long long)i, g, w);
            return false;
        }
    }
    return true;
}


#define SHAPE(t, ...) shape_is(t, (int64_t[]){__VA_ARGS__}, sizeof((int64_t[]){__VA_ARGS__}) / 8)

static uint64_t rng = 0x9e3779b97f4a7c15u;
static double rnd(void) { /* uniform in [-1, 1) */
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

static sg_tensor *random_tensor(sg_dtype dt, const int64_t *sizes, int32_t n, double scale) {
    int64_t k = 1;
    for (int32_t i = 0; i < n; i++) k *= sizes[i];
    double *v = malloc((size_t)(k ? k : 1) * sizeof *v);
    for (int64_t i = 0; i < k; i++)
        v[i] = dt == SG_FLOAT32 || dt == SG_FLOAT64 ? rnd() * scale : floor(rnd() * scale);
    sg_tensor *t = make(dt, sizes, n, v);
    free(v);
    return t;
}

/* C = A . B in double, A [m, k] and B [k, n] read through at() (any strides) */
static double *naive_mm(const sg_tensor *a, const sg_tensor *b) {
    int64_t m = a->sizes[0], k = a->sizes[1], n = b->sizes[1];
    double *c = calloc((size_t)(m * n > 0 ? m * n : 1), sizeof *c);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) s += at(a, i * k + p) * at(b, p * n + j);
            c[i * n + j] = s;
        }
    return c;
}

/* matmul in double with numpy's broadcasting rules, for checking every dim case */
static double *naive_matmul(const sg_tensor *a, const sg_tensor *b, int64_t *out_n) {
    int32_t da = a->ndim, db = b->ndim;
    int64_t n = da > 1 ? a->sizes[da - 2] : 1, k = a->sizes[da - 1];
    int64_t p = db > 1 ? b->sizes[db - 1] : 1;
    int32_t ba = da > 2 ? da - 2 : 0, bb = db > 2 ? db - 2 : 0, nb = ba > bb ? ba : bb;
    int64_t bs[64], batch = 1;
    for (int32_t i = 0; i < nb; i++) {
        int32_t ia = i - (nb - ba), ib = i - (nb - bb);
        int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
        bs[i] = sa == 1 ? sb : sa;
        batch *= bs[i];
    }
    double *c = calloc((size_t)(batch * n * p > 0 ? batch * n * p : 1), sizeof *c);
    for (int64_t bi = 0; bi < batch; bi++) {
        /* the flat batch offsets of a and b */
        int64_t rest = bi, oa = 0, ob = 0, ma = 1, mb = 1;
        for (int32_t i = nb - 1; i >= 0; i--) {
            int64_t idx = rest % bs[i];
            rest /= bs[i];
            int32_t ia = i - (nb - ba), ib = i - (nb - bb);
            if (ia >= 0) oa += (a->sizes[ia] == 1 ? 0 : idx) * ma, ma *= a->sizes[ia];
            if (ib >= 0) ob += (b->sizes[ib] == 1 ? 0 : idx) * mb, mb *= b->sizes[ib];
        }
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < p; j++) {
                double s = 0;
                for (int64_t q = 0; q < k; q++)
                    s += at(a, oa * n * k + i * k + q) * at(b, ob * k * p + q * p + j);
                c[(bi * n + i) * p + j] = s;
            }
    }
    *out_n = batch * n * p;
    return c;
}

#define REL(t) sg_tensor_release(t)

/* ---- mm -------------------------------------------------------------------------------------- */

static void test_mm_basic(void) {
    int64_t    s23[2] = {2, 3}, s32[2] = {3, 2};
    double     a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
    double     want[4] = {58, 64, 139, 154};
    sg_dtype   types[] = {SG_FLOAT32, SG_FLOAT64, SG_INT64, SG_INT32, SG_INT16, SG_UINT8,
                          SG_FLOAT16, SG_BFLOAT16};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        sg_tensor *x = make(types[i], s23, 2, a), *y = make(types[i], s32, 2, b), *r = NULL;
        CHECK(aten_mm(x, y, &r) == SG_OK);
        CHECK(r && r->dtype == types[i] && SHAPE(r, 2, 2));
        if (types[i] == SG_UINT8) {
            double w8[4] = {58, 64, 139, 154};
            CHECK(close_to(r, w8, 4, 0));
        } else if (types[i] == SG_BFLOAT16) { /* 139 and 154 round to bfloat16's 8 bits */
            double wb[4] = {58, 64, 139, 154};
            CHECK(close_to(r, wb, 4, 4e-3));
        } else {
            CHECK(close_to(r, want, 4, 0));
        }
        REL(r), REL(x), REL(y);
    }
    /* int8 wraps around as aten's: 100 * 3 = 300 = 44 (mod 256) */
    int64_t    s11[2] = {1, 1};
    sg_tensor *x = make(SG_INT8, s11, 2, (double[]){100});
    sg_tensor *y = make(SG_INT8, s11, 2, (double[]){3});
    sg_tensor *r = NULL;
    CHECK(aten_mm(x, y, &r) == SG_OK && close_to(r, (double[]){44}, 1, 0));
    REL(r), REL(x), REL(y);
    /* int64 wraps too (no undefined behaviour under UBSan) */
    x = make(SG_INT64, s11, 2, (double[]){4611686018427387904.0}); /* 2^62 */
    y = make(SG_INT64, s11, 2, (double[]){4});
    CHECK(aten_mm(x, y, &r) == SG_OK && r && *(int64_t *)sg_tensor_data(r) == 0);
    REL(r), REL(x), REL(y);
    /* float16: 0.5 * 3 + 0.25 * 4 = 2.5 exactly, bits 0x4100 */
    int64_t s12[2] = {1, 2}, s21[2] = {2, 1};
    x = make(SG_FLOAT16, s12, 2, (double[]){0.5, 0.25});
    y = make(SG_FLOAT16, s21, 2, (double[]){3, 4});
    CHECK(aten_mm(x, y, &r) == SG_OK && r && *(uint16_t *)sg_tensor_data(r) == 0x4100);
    REL(r), REL(x), REL(y);
}

static void test_mm_strided(void) {
    /* A^T and B^T as views: [3, 2]^T . [2, 3]^T */
    int64_t    s32[2] = {3, 2}, s23[2] = {2, 3};
    double     at_[6] = {1, 4, 2, 5, 3, 6}, bt[6] = {7, 9, 11, 8, 10, 12};
    double     want[4] = {58, 64, 139, 154};
    sg_dtype   types[] = {SG_FLOAT32, SG_FLOAT64, SG_INT32, SG_FLOAT16};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        sg_tensor *a0 = make(types[i], s32, 2, at_), *b0 = make(types[i], s23, 2, bt);
        sg_tensor *a = NULL, *b = NULL, *r = NULL;
        CHECK(sg_tensor_transpose(a0, 0, 1, &a) == SG_OK);
        CHECK(sg_tensor_transpose(b0, 0, 1, &b) == SG_OK);
        CHECK(!sg_tensor_is_contiguous(a) && !sg_tensor_is_contiguous(b));
        CHECK(aten_mm(a, b, &r) == SG_OK && close_to(r, want, 4, 0));
        REL(r);
        /* one transposed, one not */
        sg_tensor *bc = make(types[i], s32, 2, (double[]){7, 8, 9, 10, 11, 12});
        CHECK(aten_mm(a, bc, &r) == SG_OK && close_to(r, want, 4, 0));
        REL(r), REL(bc), REL(a), REL(b), REL(a0), REL(b0);
    }
    /* neither rows nor columns contiguous: every other column of a [2, 6] (packed for BLAS) */
    int64_t    s26[2] = {2, 6};
    double     wide[12] = {1, -1, 2, -1, 3, -1, 4, -1, 5, -1, 6, -1};
    sg_tensor *w = make(SG_FLOAT32, s26, 2, wide), *a = NULL, *b = NULL, *r = NULL;
    CHECK(sg_tensor_slice(w, 1, 0, 6, 2, &a) == SG_OK && SHAPE(a, 2, 3));
    int64_t    s62[2] = {6, 2};
    double     tall[12] = {7, 8, 0, 0, 9, 10, 0, 0, 11, 12, 0, 0};
    sg_tensor *t = make(SG_FLOAT32, s62, 2, tall);
    CHECK(sg_tensor_slice(t, 0, 0, 6, 2, &b) == SG_OK && SHAPE(b, 3, 2));
    CHECK(aten_mm(a, b, &r) == SG_OK && close_to(r, want, 4, 0));
    REL(r), REL(a), REL(b), REL(w), REL(t);
    /* a column broadcast with stride 0 (expanded) as an operand */
    int64_t    s31[2] = {3, 1};
    sg_tensor *col = make(SG_FLOAT64, s31, 2, (double[]){1, 2, 3}), *e = NULL;
    int64_t    s33[2] = {3, 3};
    CHECK(sg_tensor_expand(col, s33, 2, &e) == SG_OK);
    sg_tensor *eye = make(SG_FLOAT64, s33, 2, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1});
    CHECK(aten_mm(eye, e, &r) == SG_OK);
    CHECK(close_to(r, (double[]){1, 1, 1, 2, 2, 2, 3, 3, 3}, 9, 0));
    REL(r), REL(e), REL(col), REL(eye);
}

static void test_mm_out(void) {
    int64_t    s23[2] = {2, 3}, s32[2] = {3, 2}, s22[2] = {2, 2}, s5[1] = {5};
    double     a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
    double     want[4] = {58, 64, 139, 154};
    sg_tensor *x = make(SG_FLOAT32, s23, 2, a), *y = make(SG_FLOAT32, s32, 2, b), *r = NULL;
    /* wrong shape: resized */
    sg_tensor *o = make(SG_FLOAT32, s5, 1, NULL);
    CHECK(aten_mm_out(x, y, o, &r) == SG_OK && r == o && SHAPE(o, 2, 2) && close_to(o, want, 4, 0));
    REL(r), REL(o);
    /* wrong dtype: aten's message */
    o = make(SG_FLOAT64, s22, 2, NULL);
    CHECK(aten_mm_out(x, y, o, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected out tensor to have dtype float, but got double instead");
    REL(o);
    /* a column-major out (a transposed view): written through its strides */
    sg_tensor *base = make(SG_FLOAT32, s22, 2, NULL), *ot = NULL;
    CHECK(sg_tensor_transpose(base, 0, 1, &ot) == SG_OK);
    CHECK(aten_mm_out(x, y, ot, &r) == SG_OK && close_to(ot, want, 4, 0));
    CHECK(close_to(base, (double[]){58, 139, 64, 154}, 4, 0));
    REL(r), REL(ot), REL(base);
    /* an out no gemm can write directly (every other column): staged, then copied */
    int64_t s24[2] = {2, 4};
    base = make(SG_FLOAT32, s24, 2, (double[]){-1, -1, -1, -1, -1, -1, -1, -1});
    sg_tensor *os = NULL;
    CHECK(sg_tensor_slice(base, 1, 0, 4, 2, &os) == SG_OK);
    CHECK(aten_mm_out(x, y, os, &r) == SG_OK && close_to(os, want, 4, 0));
    CHECK(close_to(base, (double[]){58, -1, 64, -1, 139, -1, 154, -1}, 8, 0));
    REL(r), REL(os), REL(base);
    /* out aliasing an input: computed aside, then written */
    sg_tensor *sq = make(SG_FLOAT64, s22, 2, (double[]){1, 2, 3, 4});
    CHECK(aten_mm_out(sq, sq, sq, &r) == SG_OK && close_to(sq, (double[]){7, 10, 15, 22}, 4, 0));
    REL(r), REL(sq);
    REL(x), REL(y);
}

static void test_mm_errors(void) {
    int64_t    s23[2] = {2, 3}, s45[2] = {4, 5}, s3[1] = {3}, s32[2] = {3, 2};
    sg_tensor *a = make(SG_FLOAT32, s23, 2, NULL), *b = make(SG_FLOAT32, s45, 2, NULL);
    sg_tensor *v = make(SG_FLOAT32, s3, 1, NULL), *r = NULL;
    CHECK(aten_mm(a, b, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
    CHECK(aten_mm(v, b, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "self must be a matrix");
    CHECK(aten_mm(a, v, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "mat2 must be a matrix");
    sg_tensor *d = make(SG_FLOAT64, s32, 2, NULL);
    CHECK(aten_mm(a, d, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(),
              "expected m1 and m2 to have the same dtype, but got: float != double");
    sg_tensor *h = make(SG_FLOAT16, s32, 2, NULL);
    CHECK(aten_mm(a, h, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(),
              "expected m1 and m2 to have the same dtype, but got: float != c10::Half");
    sg_tensor *ba = make(SG_BOOL, s23, 2, NULL), *bb = make(SG_BOOL, s32, 2, NULL);
    CHECK(aten_mm(ba, bb, &r) == SG_EUNSUPPORTED);
    CHECK_STR(sg_last_error(), "\"addmm_impl_cpu_\" not implemented for 'Bool'");
    CHECK(r == NULL);
    REL(a), REL(b), REL(v), REL(d), REL(h), REL(ba), REL(bb);
}

/* ---- addmm ----------------------------------------------------------------------------------- */

static void test_addmm(void) {
    int64_t    s23[2] = {2, 3}, s32[2] = {3, 2}, s2[1] = {2}, s22[2] = {2, 2};
    double     a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
    sg_tensor *x = make(SG_FLOAT32, s23, 2, a), *y = make(SG_FLOAT32, s32, 2, b), *r = NULL;
    /* self [2] broadcasts over rows: 2 * [1, 10] + 0.5 * [[58, 64], [139, 154]] */
    sg_tensor *bias = make(SG_FLOAT32, s2, 1, (double[]){1, 10});
    CHECK(aten_addmm(bias, x, y, sg_scalar_int(2), sg_scalar_float(0.5), &r) == SG_OK);
    CHECK(SHAPE(r, 2, 2) && close_to(r, (double[]){31, 52, 71.5, 97}, 4, 0));
    REL(r);
    /* beta = 0: self is not read, NaN there does not come through */
    sg_tensor *nan = make(SG_FLOAT32, s22, 2, (double[]){NAN, NAN, NAN, NAN});
    CHECK(aten_addmm(nan, x, y, sg_scalar_int(0), sg_scalar_int(1), &r) == SG_OK);
    CHECK(close_to(r, (double[]){58, 64, 139, 154}, 4, 0));
    REL(r);
    /* and a NaN-filled out with beta 0 (addmm.out) */
    CHECK(aten_addmm_out(nan, x, y, sg_scalar_float(0.0), sg_scalar_int(1), nan, &r) == SG_OK);
    CHECK(close_to(nan, (double[]){58, 64, 139, 154}, 4, 0));
    REL(r), REL(nan);
    /* in place: self = 1 * self + 1 * x.y */
    sg_tensor *acc = make(SG_FLOAT32, s22, 2, (double[]){1, 1, 1, 1});
    CHECK(aten_addmm_(acc, x, y, sg_scalar_int(1), sg_scalar_int(1), &r) == SG_OK && r == acc);
    CHECK(close_to(acc, (double[]){59, 65, 140, 155}, 4, 0));
    REL(r), REL(acc);
    /* k == 0: beta * self */
    int64_t    s20[2] = {2, 0}, s02[2] = {0, 2};
    sg_tensor *e1 = make(SG_FLOAT64, s20, 2, NULL), *e2 = make(SG_FLOAT64, s02, 2, NULL);
    sg_tensor *sd = make(SG_FLOAT64, s22, 2, (double[]){1, 2, 3, 4});
    CHECK(aten_addmm(sd, e1, e2, sg_scalar_int(3), sg_scalar_int(1), &r) == SG_OK);
    CHECK(close_to(r, (double[]){3, 6, 9, 12}, 4, 0));
    REL(r);
    CHECK(aten_mm(e1, e2, &r) == SG_OK && close_to(r, (double[]){0, 0, 0, 0}, 4, 0));
    REL(r), REL(e1), REL(e2), REL(sd);
    /* integers: beta and alpha as integers */
    sg_tensor *xi = make(SG_INT64, s23, 2, a), *yi = make(SG_INT64, s32, 2, b);
    sg_tensor *si = make(SG_INT64, s2, 1, (double[]){1, 10});
    CHECK(aten_addmm(si, xi, yi, sg_scalar_int(-1), sg_scalar_int(2), &r) == SG_OK);
    CHECK(r->dtype == SG_INT64 && close_to(r, (double[]){115, 118, 277, 298}, 4, 0));
    REL(r), REL(xi), REL(yi), REL(si);
    /* float16: computed in float32, alpha/beta applied before rounding */
    sg_tensor *xh = make(SG_FLOAT16, s23, 2, a), *yh = make(SG_FLOAT16, s32, 2, b);
    sg_tensor *sh = make(SG_FLOAT16, s2, 1, (double[]){0.5, 0.25});
    CHECK(aten_addmm(sh, xh, yh, sg_scalar_int(2), sg_scalar_float(0.5), &r) == SG_OK);
    CHECK(r->dtype == SG_FLOAT16 && close_to(r, (double[]){30, 32.5, 70.5, 77.5}, 4, 0));
    REL(r), REL(xh), REL(yh), REL(sh);
    /* errors, in aten's order and words */
    sg_tensor *dd = make(SG_FLOAT64, s2, 1, NULL);
    CHECK(aten_addmm(dd, x, y, sg_scalar_int(1), sg_scalar_int(1), &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "self and mat2 must have the same dtype, but got Double and Float");
    sg_tensor *x64 = make(SG_FLOAT64, s23, 2, a), *y64 = make(SG_FLOAT64, s32, 2, b);
    CHECK(aten_addmm(dd, x, y64, sg_scalar_int(1), sg_scalar_int(1), &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "mat1 and mat2 must have the same dtype, but got Float and Double");
    int64_t    s3[1] = {3};
    sg_tensor *b3 = make(SG_FLOAT64, s3, 1, NULL);
    CHECK(aten_addmm(b3, x64, y64, sg_scalar_int(1), sg_scalar_int(1), &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "The expanded size of the tensor (2) must match the existing size "
                               "(3) at non-singleton dimension 1.  Target sizes: [2, 2].  Tensor "
                               "sizes: [3]");
    CHECK(aten_addmm(dd, b3, y64, sg_scalar_int(1), sg_scalar_int(1), &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "mat1 must be a matrix, got 1-D tensor");
    /* in-place with a self of the wrong shape */
    CHECK(aten_addmm_(dd, x64, y64, sg_scalar_int(1), sg_scalar_int(1), &r) != SG_OK);
    REL(dd), REL(x64), REL(y64), REL(b3), REL(bias), REL(x), REL(y);
}

/* ---- bmm, baddbmm ---------------------------------------------------------------------------- */

static void test_bmm(void) {
    int64_t s223[3] = {2, 2, 3}, s232[3] = {2, 3, 2};
    double  a[12] = {1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0};
    double  b[12] = {7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6};
    double  want[8] = {58, 64, 139, 154, 1, 2, 3, 4};
    sg_dtype types[] = {SG_FLOAT32, SG_FLOAT64, SG_INT64, SG_BFLOAT16, SG_FLOAT16};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        sg_tensor *x = make(types[i], s223, 3, a), *y = make(types[i], s232, 3, b), *r = NULL;
        CHECK(aten_bmm(x, y, &r) == SG_OK && r->dtype == types[i] && SHAPE(r, 2, 2, 2));
        CHECK(close_to(r, want, 8, types[i] == SG_BFLOAT16 ? 4e-3 : 0));
        REL(r), REL(x), REL(y);
    }
    /* batch2 given as the transpose of a [2, 2, 3] tensor */
    double     bt[12] = {7, 9, 11, 8, 10, 12, 1, 3, 5, 2, 4, 6};
    sg_tensor *x = make(SG_FLOAT32, s223, 3, a), *y0 = make(SG_FLOAT32, s223, 3, bt), *y = NULL;
    sg_tensor *r = NULL;
    CHECK(sg_tensor_transpose(y0, 1, 2, &y) == SG_OK);
    CHECK(aten_bmm(x, y, &r) == SG_OK && close_to(r, want, 8, 0));
    REL(r);
    /* the batch dim innermost in memory: a permuted view */
    int64_t    s322[3] = {3, 2, 2};
    sg_tensor *p0 = make(SG_FLOAT64, s322, 3, (double[]){1, 5, 2, 6, 3, 7, 4, 8, 0, 0, 1, 1});
    sg_tensor *pv = NULL, *x64 = make(SG_FLOAT64, s223, 3, a);
    CHECK(sg_tensor_permute(p0, (int64_t[]){2, 0, 1}, 3, &pv) == SG_OK && SHAPE(pv, 2, 3, 2));
    /* batch 0: [[1,2,3],[4,5,6]] . [[1,2],[3,4],[0,1]]; batch 1: e1 . [[5,6],[7,8],[0,1]] */
    CHECK(aten_bmm(x64, pv, &r) == SG_OK);
    CHECK(close_to(r, (double[]){7, 13, 19, 34, 5, 6, 7, 8}, 8, 0));
    REL(r), REL(pv), REL(p0), REL(x64);
    /* errors */
    int64_t    s243[3] = {2, 4, 3}, s23[2] = {2, 3};
    sg_tensor *bad = make(SG_FLOAT32, s243, 3, NULL), *m2 = make(SG_FLOAT32, s23, 2, NULL);
    CHECK(aten_bmm(x, bad, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected size for first two dimensions of batch2 tensor to be: "
                               "[2, 3] but got: [2, 4].");
    CHECK(aten_bmm(m2, y, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "batch1 must be a 3D tensor");
    CHECK(aten_bmm(x, m2, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "batch2 must be a 3D tensor");
    sg_tensor *yd = make(SG_FLOAT64, s232, 3, b);
    CHECK(aten_bmm(x, yd, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "expected scalar type Float but found Double");
    /* bmm.out resizes, baddbmm with beta/alpha and a broadcast self */
    int64_t    s1[1] = {1};
    sg_tensor *o = make(SG_FLOAT32, s1, 1, NULL);
    CHECK(aten_bmm_out(x, y, o, &r) == SG_OK && SHAPE(o, 2, 2, 2) && close_to(o, want, 8, 0));
    REL(r), REL(o);
    int64_t    s12[2] = {1, 2};
    sg_tensor *self = make(SG_FLOAT32, s12, 2, (double[]){100, 200});
    CHECK(aten_baddbmm(self, x, y, sg_scalar_float(0.5), sg_scalar_int(2), &r) == SG_OK);
    CHECK(SHAPE(r, 2, 2, 2));
    CHECK(close_to(r, (double[]){166, 228, 328, 408, 52, 104, 56, 108}, 8, 0));
    REL(r);
    sg_tensor *sd = make(SG_FLOAT64, s12, 2, (double[]){1, 2});
    CHECK(aten_baddbmm(sd, x, y, sg_scalar_int(1), sg_scalar_int(1), &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Input dtypes must be the same, got: input double, batch1: float, "
                               "batch2: float");
    /* baddbmm_ in place, beta 0 ignoring NaN */
    int64_t    s222[3] = {2, 2, 2};
    sg_tensor *acc = make(SG_FLOAT32, s222, 3, (double[]){NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN});
    CHECK(aten_baddbmm_(acc, x, y, sg_scalar_int(0), sg_scalar_int(1), &r) == SG_OK && r == acc);
    CHECK(close_to(acc, want, 8, 0));
    REL(r), REL(acc), REL(self), REL(sd), REL(yd), REL(bad), REL(m2), REL(x), REL(y), REL(y0);
}

/* ---- matmul ---------------------------------------------------------------------------------- */

/* matmul(a, b) against the naive reference; shape checked too */
static void check_matmul(sg_tensor *a, sg_tensor *b, const int64_t *shape, int32_t n,
                         double tol) {
    sg_tensor *r = NULL;
    int64_t    cnt = 0;
    CHECK(aten_matmul(a, b, &r) == SG_OK);
    CHECK(shape_is(r, shape, n));
    double *want = naive_matmul(a, b, &cnt);
    CHECK(close_to(r, want, cnt, tol));
    free(want);
    /* matmul.out into a tensor of the wrong shape: resized */
    int64_t    s1[1] = {1};
    sg_tensor *o = make((sg_dtype)a->dtype, s1, 1, NULL), *ro = NULL;
    CHECK(aten_matmul_out(a, b, o, &ro) == SG_OK && ro == o && shape_is(o, shape, n));
    for (int64_t i = 0; r && i < sg_tensor_numel(r); i++) CHECK(at(o, i) == at(r, i));
    REL(ro), REL(o), REL(r);
}

static void test_matmul(void) {
    int64_t s3[1] = {3}, s23[2] = {2, 3}, s32[2] = {3, 2}, s4[1] = {4};
    /* 1-D . 1-D: the dot product, 0-dim */
    sg_tensor *u = make(SG_FLOAT32, s3, 1, (double[]){1, 2, 3});
    sg_tensor *v = make(SG_FLOAT32, s3, 1, (double[]){4, 5, 6}), *r = NULL;
    CHECK(aten_matmul(u, v, &r) == SG_OK && r->ndim == 0 && at(r, 0) == 32);
    REL(r);
    /* 2-D . 1-D and 1-D . 2-D */
    sg_tensor *m = make(SG_FLOAT32, s23, 2, (double[]){1, 2, 3, 4, 5, 6});
    CHECK(aten_matmul(m, u, &r) == SG_OK && SHAPE(r, 2) && close_to(r, (double[]){14, 32}, 2, 0));
    REL(r);
    sg_tensor *w = make(SG_FLOAT32, s32, 2, (double[]){1, 2, 3, 4, 5, 6});
    CHECK(aten_matmul(u, w, &r) == SG_OK && SHAPE(r, 2) && close_to(r, (double[]){22, 28}, 2, 0));
    REL(r);
    check_matmul(m, w, (int64_t[]){2, 2}, 2, 0);
    /* 3-D . 2-D folds into one mm; 3-D . 1-D folds into mv; 1-D . 3-D transposes */
    int64_t    s423[3] = {4, 2, 3}, s432[3] = {4, 3, 2};
    sg_tensor *t3 = random_tensor(SG_FLOAT64, s423, 3, 1);
    sg_tensor *t3b = random_tensor(SG_FLOAT64, s432, 3, 1);
    sg_tensor *m32 = random_tensor(SG_FLOAT64, s32, 2, 1);
    sg_tensor *v3 = random_tensor(SG_FLOAT64, s3, 1, 1);
    check_matmul(t3, m32, (int64_t[]){4, 2, 2}, 3, 1e-12);
    check_matmul(t3, v3, (int64_t[]){4, 2}, 2, 1e-12);
    check_matmul(v3, t3b, (int64_t[]){4, 2}, 2, 1e-12);
    /* 2-D . 3-D broadcasts the matrix over the batch (bmm) */
    sg_tensor *m23 = random_tensor(SG_FLOAT64, s23, 2, 1);
    check_matmul(m23, t3b, (int64_t[]){4, 2, 2}, 3, 1e-12);
    /* 3-D whose batch does not fold (batch dim innermost): goes through bmm */
    sg_tensor *perm = NULL;
    int64_t    s234[3] = {2, 3, 4};
    sg_tensor *base = random_tensor(SG_FLOAT64, s234, 3, 1);
    CHECK(sg_tensor_permute(base, (int64_t[]){2, 0, 1}, 3, &perm) == SG_OK);
    check_matmul(perm, m32, (int64_t[]){4, 2, 2}, 3, 1e-12);
    check_matmul(perm, v3, (int64_t[]){4, 2}, 2, 1e-12);
    sg_tensor *perm2 = NULL; /* [4, 3, 2] with the batch innermost, after a 1-D */
    int64_t    s324[3] = {3, 2, 4};
    sg_tensor *base2 = random_tensor(SG_FLOAT64, s324, 3, 1);
    CHECK(sg_tensor_permute(base2, (int64_t[]){2, 0, 1}, 3, &perm2) == SG_OK);
    check_matmul(v3, perm2, (int64_t[]){4, 2}, 2, 1e-12);
    check_matmul(m23, perm2, (int64_t[]){4, 2, 2}, 3, 1e-12);
    REL(perm2), REL(base2);
    /* broadcasting batch dims: [2, 1, 2, 3] . [3, 3, 2] -> [2, 3, 2, 2] */
    int64_t    s2123[4] = {2, 1, 2, 3}, s332[3] = {3, 3, 2};
    sg_tensor *b4 = random_tensor(SG_FLOAT64, s2123, 4, 1);
    sg_tensor *b3 = random_tensor(SG_FLOAT64, s332, 3, 1);
    check_matmul(b4, b3, (int64_t[]){2, 3, 2, 2}, 4, 1e-12);
    /* [1, 2, 3] . [4, 3, 2]: batch 1 broadcast */
    int64_t    s123[3] = {1, 2, 3};
    sg_tensor *one = random_tensor(SG_FLOAT64, s123, 3, 1);
    check_matmul(one, t3b, (int64_t[]){4, 2, 2}, 3, 1e-12);
    /* 1-D with a batched 4-D, and 4-D with 1-D */
    check_matmul(v3, b3, (int64_t[]){3, 2}, 2, 1e-12);
    int64_t    s2133[4] = {2, 1, 3, 3};
    sg_tensor *b43 = random_tensor(SG_FLOAT64, s2133, 4, 1);
    check_matmul(b43, v3, (int64_t[]){2, 1, 3}, 3, 1e-12);
    /* integers through the batched path */
    sg_tensor *i4 = random_tensor(SG_INT32, s2123, 4, 50);
    sg_tensor *i3 = random_tensor(SG_INT32, s332, 3, 50);
    check_matmul(i4, i3, (int64_t[]){2, 3, 2, 2}, 4, 0);
    REL(i4), REL(i3);
    /* errors */
    sg_tensor *z = make(SG_FLOAT32, NULL, 0, (double[]){1});
    CHECK(aten_matmul(z, m, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "both arguments to matmul need to be at least 1D, but they are 0D "
                               "and 2D");
    sg_tensor *v4 = make(SG_FLOAT32, s4, 1, NULL);
    CHECK(aten_matmul(u, v4, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "inconsistent tensor size, expected tensor [3] and src [4] to have "
                               "the same number of elements, but got 3 and 4 elements "
                               "respectively");
    CHECK(aten_matmul(m, v4, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "size mismatch, got input (2), mat (2x3), vec (4)");
    sg_tensor *v3d = make(SG_FLOAT64, s3, 1, NULL);
    CHECK(aten_matmul(m, v3d, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "expected scalar type Float but found Double");
    REL(v3d);
    sg_tensor *vd = make(SG_FLOAT64, s3, 1, NULL);
    CHECK(aten_matmul(u, vd, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "dot : expected both vectors to have same dtype, but found Float "
                               "and Double");
    int64_t    s332b[3] = {3, 3, 2}, s232[3] = {2, 3, 2};
    sg_tensor *c3 = make(SG_FLOAT64, s332b, 3, NULL), *bt = make(SG_FLOAT64, s232, 3, NULL);
    CHECK(aten_matmul(t3, bt, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "The size of tensor a (4) must match the size of tensor b (2) at "
                               "non-singleton dimension 0");
    CHECK(aten_matmul(t3, t3, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected size for first two dimensions of batch2 tensor to be: "
                               "[4, 3] but got: [4, 2].");
    CHECK(aten_matmul(t3, m23, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "mat1 and mat2 shapes cannot be multiplied (8x3 and 2x3)");
    REL(c3), REL(bt), REL(vd), REL(v4), REL(z);
    REL(u), REL(v), REL(m), REL(w), REL(t3), REL(t3b), REL(m32), REL(v3), REL(m23), REL(perm),
        REL(base), REL(b4), REL(b3), REL(one), REL(b43);
}

/* ---- linear ---------------------------------------------------------------------------------- */

static void test_linear(void) {
    int64_t    s23[2] = {2, 3}, s43[2] = {4, 3}, s4[1] = {4}, s3[1] = {3};
    sg_tensor *x = make(SG_FLOAT32, s23, 2, (double[]){1, 2, 3, 4, 5, 6});
    sg_tensor *w = make(SG_FLOAT32, s43, 2, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1});
    sg_tensor *b = make(SG_FLOAT32, s4, 1, (double[]){10, 20, 30, 40}), *r = NULL;
    /* y = x . w^T + b */
    CHECK(aten_linear(x, w, b, &r) == SG_OK && SHAPE(r, 2, 4));
    CHECK(close_to(r, (double[]){11, 22, 33, 46, 14, 25, 36, 55}, 8, 0));
    REL(r);
    CHECK(aten_linear(x, w, NULL, &r) == SG_OK);
    CHECK(close_to(r, (double[]){1, 2, 3, 6, 4, 5, 6, 15}, 8, 0));
    REL(r);
    /* 3-D input, contiguous (folded into addmm) and transposed (matmul, then bias added) */
    int64_t    s223[3] = {2, 2, 3}, s232[3] = {2, 3, 2};
    sg_tensor *x3 = make(SG_FLOAT32, s223, 3, (double[]){1, 2, 3, 4, 5, 6, 1, 1, 1, 0, 0, 0});
    CHECK(aten_linear(x3, w, b, &r) == SG_OK && SHAPE(r, 2, 2, 4));
    CHECK(close_to(r, (double[]){11, 22, 33, 46, 14, 25, 36, 55, 11, 21, 31, 43, 10, 20, 30, 40},
                   16, 0));
    REL(r);
    sg_tensor *x3t0 = make(SG_FLOAT32, s232, 3, (double[]){1, 4, 2, 5, 3, 6, 1, 0, 1, 0, 1, 0});
    sg_tensor *x3t = NULL;
    CHECK(sg_tensor_transpose(x3t0, 1, 2, &x3t) == SG_OK);
    CHECK(aten_linear(x3t, w, b, &r) == SG_OK && SHAPE(r, 2, 2, 4));
    CHECK(close_to(r, (double[]){11, 22, 33, 46, 14, 25, 36, 55, 11, 21, 31, 43, 10, 20, 30, 40},
                   16, 0));
    REL(r);
    /* a 1-D weight gives one output per row; a 1-D input one row */
    sg_tensor *w1 = make(SG_FLOAT32, s3, 1, (double[]){1, 1, 1});
    CHECK(aten_linear(x, w1, NULL, &r) == SG_OK && SHAPE(r, 2));
    CHECK(close_to(r, (double[]){6, 15}, 2, 0));
    REL(r);
    sg_tensor *x1 = make(SG_FLOAT32, s3, 1, (double[]){1, 2, 3});
    CHECK(aten_linear(x1, w, b, &r) == SG_OK && SHAPE(r, 4));
    CHECK(close_to(r, (double[]){11, 22, 33, 46}, 4, 0));
    REL(r);
    /* linear.out, with and without the addmm path */
    int64_t    s1[1] = {1};
    sg_tensor *o = make(SG_FLOAT32, s1, 1, NULL), *ro = NULL;
    CHECK(aten_linear_out(x, w, b, o, &ro) == SG_OK && ro == o && SHAPE(o, 2, 4));
    CHECK(close_to(o, (double[]){11, 22, 33, 46, 14, 25, 36, 55}, 8, 0));
    REL(ro), REL(o);
    o = make(SG_FLOAT32, s1, 1, NULL);
    CHECK(aten_linear_out(x3t, w, b, o, &ro) == SG_OK && ro == o && SHAPE(o, 2, 2, 4));
    CHECK(close_to(o, (double[]){11, 22, 33, 46, 14, 25, 36, 55, 11, 21, 31, 43, 10, 20, 30, 40},
                   16, 0));
    REL(ro), REL(o);
    /* errors */
    sg_tensor *z = make(SG_FLOAT32, NULL, 0, (double[]){1});
    CHECK(aten_linear(z, w, NULL, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "both arguments to linear need to be at least 1D, but they are 0D "
                               "and 2D");
    int64_t    s44[2] = {4, 4};
    sg_tensor *w44 = make(SG_FLOAT32, s44, 2, NULL);
    CHECK(aten_linear(x, w44, b, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x4)");
    REL(z), REL(w44), REL(x1), REL(w1), REL(x3t), REL(x3t0), REL(x3), REL(x), REL(w), REL(b);
}

/* ---- larger random products against a naive loop --------------------------------------------- */

static void check_random_mm(sg_dtype dt, int64_t m, int64_t k, int64_t n, bool ta, bool tb,
                            double tol) {
    int64_t    sa[2] = {ta ? k : m, ta ? m : k}, sb[2] = {tb ? n : k, tb ? k : n};
    sg_tensor *a0 = random_tensor(dt, sa, 2, dt == SG_FLOAT32 || dt == SG_FLOAT64 ? 1 : 100);
    sg_tensor *b0 = random_tensor(dt, sb, 2, dt == SG_FLOAT32 || dt == SG_FLOAT64 ? 1 : 100);
    sg_tensor *a = a0, *b = b0, *r = NULL;
    if (ta) CHECK(sg_tensor_transpose(a0, 0, 1, &a) == SG_OK);
    if (tb) CHECK(sg_tensor_transpose(b0, 0, 1, &b) == SG_OK);
    CHECK(aten_mm(a, b, &r) == SG_OK && SHAPE(r, m, n));
    double *want = naive_mm(a, b);
    /* float32: relative to the sum of |a||b|, which bounds the rounding of the sums */
    bool ok = r != NULL;
    for (int64_t i = 0; ok && i < m; i++)
        for (int64_t j = 0; ok && j < n; j++) {
            double mag = 0;
            for (int64_t p = 0; p < k; p++) mag += fabs(at(a, i * k + p) * at(b, p * n + j));
            double g = at(r, i * n + j), w = want[i * n + j];
            if (fabs(g - w) > tol * (mag + 1)) {
                fprintf(stderr, "  %s %lldx%lldx%lld [%lld,%lld]: got %.9g want %.9g\n",
                        sg_dtype_name(dt), (long long)m, (long long)k, (long long)n,
                        (long long)i, (long long)j, g, w);
                ok = false;
            }
        }
    CHECK(ok);
    free(want);
    if (ta) REL(a);
    if (tb) REL(b);
    REL(r), REL(a0), REL(b0);
}

static void test_random(void) {
    check_random_mm(SG_FLOAT32, 67, 129, 93, false, false, 1e-6);
    check_random_mm(SG_FLOAT32, 67, 129, 93, true, true, 1e-6);
    check_random_mm(SG_FLOAT64, 131, 70, 45, true, false, 1e-14);
    check_random_mm(SG_FLOAT64, 5, 300, 3, false, true, 1e-14);
    check_random_mm(SG_INT64, 33, 40, 17, true, false, 0);
    check_random_mm(SG_INT16, 9, 10, 11, false, false, 0); /* wraps modulo 2^16 */
    /* a batched product against per-batch naive loops */
    int64_t    s1[3] = {7, 20, 33}, s2[3] = {7, 33, 12};
    sg_tensor *a = random_tensor(SG_FLOAT32, s1, 3, 1), *b = random_tensor(SG_FLOAT32, s2, 3, 1);
    sg_tensor *r = NULL;
    int64_t    cnt = 0;
    CHECK(aten_bmm(a, b, &r) == SG_OK);
    double *want = naive_matmul(a, b, &cnt);
    CHECK(close_to(r, want, cnt, 1e-5));
    free(want);
    REL(r), REL(a), REL(b);
}

/* ---- scaled_dot_product_attention ------------------------------------------------------------ */

/* attention in double: q [B, L, E], k [B, S, E], v [B, S, Ev] (contiguous, same batch); mask
 * [L, S] of allow flags or NULL */
static double *naive_attention(const sg_tensor *q, const sg_tensor *k, const sg_tensor *v,
                               const bool *allow, bool causal, double scale) {
    int64_t B = q->sizes[0], L = q->sizes[1], E = q->sizes[2], S = k->sizes[1], Ev = v->sizes[2];
    double *o = calloc((size_t)(B * L * Ev), sizeof *o), *s = malloc((size_t)S * sizeof *s);
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < L; i++) {
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < S; j++) {
                double d = 0;
                for (int64_t e = 0; e < E; e++)
                    d += at(q, (b * L + i) * E + e) * at(k, (b * S + j) * E + e);
                s[j] = d * scale;
                if ((causal && j > i) || (allow && !allow[i * S + j])) s[j] = -INFINITY;
                if (s[j] > mx) mx = s[j];
            }
            if (mx == -INFINITY) continue; /* zeros */
            for (int64_t j = 0; j < S; j++) sum += (s[j] = exp(s[j] - mx));
            for (int64_t j = 0; j < S; j++)
                for (int64_t e = 0; e < Ev; e++)
                    o[(b * L + i) * Ev + e] += s[j] / sum * at(v, (b * S + j) * Ev + e);
        }
    free(s);
    return o;
}

static void test_sdpa(void) {
    int64_t    s122[3] = {1, 2, 2};
    sg_tensor *q = make(SG_FLOAT32, s122, 3, (double[]){1, 0, 0, 1});
    sg_tensor *k = make(SG_FLOAT32, s122, 3, (double[]){1, 0, 0, 1});
    sg_tensor *v = make(SG_FLOAT32, s122, 3, (double[]){1, 2, 3, 4}), *r = NULL;
    /* scale 1/sqrt(2): row 0 weighs key 0 by e^(1/sqrt 2) against 1 */
    double p = exp(1 / sqrt(2.0)) / (exp(1 / sqrt(2.0)) + 1);
    CHECK(aten_scaled_dot_product_attention(q, k, v, NULL, 0.0, false, NULL, false, &r) == SG_OK);
    CHECK(SHAPE(r, 1, 2, 2));
    CHECK(close_to(r, (double[]){p * 1 + (1 - p) * 3, p * 2 + (1 - p) * 4, (1 - p) * 1 + p * 3,
                                 (1 - p) * 2 + p * 4},
                   4, 1e-6));
    REL(r);
    /* explicit scale 0: uniform weights */
    double zero = 0;
    CHECK(aten_scaled_dot_product_attention(q, k, v, NULL, 0.0, false, &zero, false, &r) == SG_OK);
    CHECK(close_to(r, (double[]){2, 3, 2, 3}, 4, 1e-6));
    REL(r);
    /* causal: query 0 sees key 0 only */
    CHECK(aten_scaled_dot_product_attention(q, k, v, NULL, 0.0, true, NULL, false, &r) == SG_OK);
    CHECK(close_to(r, (double[]){1, 2, (1 - p) * 1 + p * 3, (1 - p) * 2 + p * 4}, 4, 1e-6));
    REL(r);
    /* bool mask: False at (0, 0) leaves query 0 with key 1; a row all False gives zeros */
    int64_t    s22[2] = {2, 2};
    sg_tensor *mb = make(SG_BOOL, s22, 2, (double[]){0, 1, 0, 0});
    CHECK(aten_scaled_dot_product_attention(q, k, v, mb, 0.0, false, NULL, false, &r) == SG_OK);
    CHECK(close_to(r, (double[]){3, 4, 0, 0}, 4, 0));
    REL(r);
    /* a float mask is added: -inf works as False, finite values shift the scores */
    sg_tensor *mf = make(SG_FLOAT32, s22, 2, (double[]){-INFINITY, 0, 1 / sqrt(2.0), 0});
    CHECK(aten_scaled_dot_product_attention(q, k, v, mf, 0.0, false, NULL, false, &r) == SG_OK);
    double h = 0.5; /* row 1: both scores 1/sqrt 2 */
    CHECK(close_to(r, (double[]){3, 4, h * 1 + h * 3, h * 2 + h * 4}, 4, 1e-6));
    REL(r);
    /* the math variant returns the weights; it adds a bool mask as 0/1, as aten's does */
    sg_tensor *w = NULL;
    CHECK(aten__scaled_dot_product_attention_math(q, k, v, NULL, 0.0, true, NULL, NULL, false, &r,
                                                  &w) == SG_OK);
    CHECK(SHAPE(w, 1, 2, 2) && close_to(w, (double[]){1, 0, 1 - p, p}, 4, 1e-6));
    REL(r), REL(w);
    double one = 1;
    sg_tensor *mb2 = make(SG_BOOL, s22, 2, (double[]){1, 0, 0, 0});
    CHECK(aten__scaled_dot_product_attention_math(q, k, v, mb2, 0.0, false, NULL, &one, false, &r,
                                                  &w) == SG_OK);
    double e2 = exp(2.0) / (exp(2.0) + 1), e1 = exp(1.0) / (exp(1.0) + 1);
    CHECK(close_to(w, (double[]){e2, 1 - e2, 1 - e1, e1}, 4, 1e-6));
    REL(r), REL(w), REL(mb2);
    /* L > S: causal is aligned top-left (tril of ones(L, S)) */
    int64_t    s132[3] = {1, 3, 2};
    sg_tensor *q3 = make(SG_FLOAT32, s132, 3, (double[]){1, 0, 0, 1, 1, 1});
    CHECK(aten_scaled_dot_product_attention(q3, k, v, NULL, 0.0, true, NULL, false, &r) == SG_OK);
    CHECK(SHAPE(r, 1, 3, 2));
    CHECK(close_to(r, (double[]){1, 2, (1 - p) * 1 + p * 3, (1 - p) * 2 + p * 4, 2, 3}, 6, 1e-6));
    REL(r), REL(q3);
    /* float16: in float32, rounded once */
    sg_tensor *qh = make(SG_FLOAT16, s122, 3, (double[]){1, 0, 0, 1});
    sg_tensor *kh = make(SG_FLOAT16, s122, 3, (double[]){1, 0, 0, 1});
    sg_tensor *vh = make(SG_FLOAT16, s122, 3, (double[]){1, 2, 3, 4});
    CHECK(aten_scaled_dot_product_attention(qh, kh, vh, NULL, 0.0, true, NULL, false, &r) == SG_OK);
    CHECK(r->dtype == SG_FLOAT16);
    CHECK(close_to(r, (double[]){1, 2, (1 - p) * 1 + p * 3, (1 - p) * 2 + p * 4}, 4, 1e-3));
    REL(r);
    /* errors */
    CHECK(aten_scaled_dot_product_attention(q, k, v, mb, 0.0, true, NULL, false, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True");
    CHECK(aten_scaled_dot_product_attention(q, kh, v, NULL, 0.0, false, NULL, false, &r) ==
          SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected query, key, and value to have the same dtype, but got "
                               "query.dtype: float key.dtype: c10::Half and value.dtype: float "
                               "instead.");
    int64_t    s2[1] = {2};
    sg_tensor *q1 = make(SG_FLOAT32, s2, 1, NULL);
    CHECK(aten_scaled_dot_product_attention(q1, k, v, NULL, 0.0, false, NULL, false, &r) ==
          SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected query, key, and value to all be  at least 2 dimensional, "
                               "but got query.dim: 1 key.dim: 3 and value.dim: 3 instead.");
    sg_tensor *mi = make(SG_INT64, s22, 2, NULL);
    CHECK(aten_scaled_dot_product_attention(q, k, v, mi, 0.0, false, NULL, false, &r) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "Expected attn_mask dtype to be bool or float or to match query "
                               "dtype, but got attn_mask.dtype: long int and  query.dtype: float "
                               "instead.");
    int64_t    s33[2] = {3, 3};
    sg_tensor *m33 = make(SG_BOOL, s33, 2, NULL);
    CHECK(aten_scaled_dot_product_attention(q, k, v, m33, 0.0, false, NULL, false, &r) ==
          SG_EINVAL);
    REL(m33), REL(mi), REL(q1), REL(qh), REL(kh), REL(vh), REL(mf), REL(mb), REL(q), REL(k),
        REL(v);
}

/* t[b, h:h+1] (a 4-D tensor) as a [1, rows, cols] view */
static sg_tensor *head(sg_tensor *t, int64_t b, int64_t h) {
    sg_tensor *s = NULL, *o = NULL;
    CHECK(sg_tensor_select(t, 0, b, &s) == SG_OK);
    CHECK(sg_tensor_slice(s, 0, h, h + 1, 1, &o) == SG_OK);
    REL(s);
    return o;
}

/* r [B, H, L, Ev] against the naive attention of each head: query head h reads kv head
 * h / group of kv batch b (or 0 where k has one batch) */
static bool check_heads(const sg_tensor *r, sg_tensor *q, sg_tensor *k, sg_tensor *v,
                        int64_t group, const bool *allow, bool causal) {
    int64_t B = q->sizes[0], H = q->sizes[1], blk = q->sizes[2] * v->sizes[3];
    bool    ok = r != NULL;
    for (int64_t b = 0; ok && b < B; b++)
        for (int64_t h = 0; ok && h < H; h++) {
            int64_t    kb = k->sizes[0] == 1 ? 0 : b;
            sg_tensor *qh = head(q, b, h), *kh = head(k, kb, h / group);
            sg_tensor *vh = head(v, kb, h / group);
            double    *want = naive_attention(qh, kh, vh, allow, causal,
                                              1 / sqrt((double)q->sizes[3]));
            for (int64_t i = 0; ok && i < blk; i++) {
                double g = at(r, (b * H + h) * blk + i);
                if (fabs(g - want[i]) > 1e-12) {
                    fprintf(stderr, "  sdpa b%lld h%lld [%lld]: got %.15g want %.15g\n",
                            (long long)b, (long long)h, (long long)i, g, want[i]);
                    ok = false;
                }
            }
            free(want);
            REL(qh), REL(kh), REL(vh);
        }
    return ok;
}

static void test_sdpa_random(void) {
    /* [B=2, H=4, L=5, E=8] against k, v of 2 heads (GQA) with a bool mask [L, S] */
    int64_t    sq[4] = {2, 4, 5, 8}, skv[4] = {2, 2, 6, 8}, svv[4] = {2, 2, 6, 3}, sm[2] = {5, 6};
    sg_tensor *q = random_tensor(SG_FLOAT64, sq, 4, 1), *k = random_tensor(SG_FLOAT64, skv, 4, 1);
    sg_tensor *v = random_tensor(SG_FLOAT64, svv, 4, 1), *r = NULL;
    bool       allow[30];
    double     mv[30];
    for (int i = 0; i < 30; i++) /* row 1 (elements 6..11) allows nothing */
        allow[i] = (i * 7) % 5 != 0 && (i < 6 || i >= 12);
    for (int i = 0; i < 30; i++) mv[i] = allow[i];
    sg_tensor *mask = make(SG_BOOL, sm, 2, mv);
    CHECK(aten_scaled_dot_product_attention(q, k, v, mask, 0.0, false, NULL, true, &r) == SG_OK);
    CHECK(SHAPE(r, 2, 4, 5, 3) && check_heads(r, q, k, v, 2, allow, false));
    REL(r);
    /* without enable_gqa, 4 query heads against 2 kv heads do not broadcast */
    CHECK(aten_scaled_dot_product_attention(q, k, v, NULL, 0.0, false, NULL, false, &r) ==
          SG_EINVAL);
    int64_t    s3kv[4] = {2, 3, 6, 8};
    sg_tensor *k3 = random_tensor(SG_FLOAT64, s3kv, 4, 1);
    CHECK(aten_scaled_dot_product_attention(q, k3, k3, NULL, 0.0, false, NULL, true, &r) ==
          SG_EINVAL);
    CHECK_STR(sg_last_error(), "Number of heads in key and value must divide the number of heads "
                               "in "); /* sic: aten's message ends there */
    int64_t    s3d[3] = {4, 5, 8};
    sg_tensor *q3d = random_tensor(SG_FLOAT64, s3d, 3, 1), *k2d = NULL;
    CHECK(sg_tensor_select(q3d, 0, 0, &k2d) == SG_OK);
    CHECK(aten_scaled_dot_product_attention(q3d, k2d, k2d, NULL, 0.0, false, NULL, true, &r) ==
          SG_EINVAL);
    CHECK_STR(sg_last_error(), "Dimension out of range (expected to be in range of [-2, 1], but "
                               "got -3)");
    REL(q3d), REL(k2d);
    /* a kv batch of 1 broadcasts (matmul's rules), causal */
    int64_t    s1kv[4] = {1, 4, 6, 8}, s1v[4] = {1, 4, 6, 3};
    sg_tensor *k1 = random_tensor(SG_FLOAT64, s1kv, 4, 1);
    sg_tensor *v1 = random_tensor(SG_FLOAT64, s1v, 4, 1);
    CHECK(aten_scaled_dot_product_attention(q, k1, v1, NULL, 0.0, true, NULL, false, &r) == SG_OK);
    CHECK(SHAPE(r, 2, 4, 5, 3) && check_heads(r, q, k1, v1, 1, NULL, true));
    REL(r), REL(k1), REL(v1), REL(k3), REL(mask), REL(q), REL(k), REL(v);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    test_mm_basic();
    test_mm_strided();
    test_mm_out();
    test_mm_errors();
    test_addmm();
    test_bmm();
    test_matmul();
    test_linear();
    test_random();
    test_sdpa();
    check_sdpa_dropout(SG_CPU);
    test_sdpa_random();
    sg_runtime_shutdown();
    return check_result("test_cpu_linalg");
}
