/* test_cpu_autograd_saved.c: what the generated Autograd kernels keep in their nodes
 * (docs/autograd.md, "What a node keeps"), as PyTorch's codegen keeps it, on aten's CPU ops:
 * - an input the formulas read only through its metadata (sizes, strides, geometry, options,
 *   dtype, numel; zeros_like of it) is kept as its metadata: no bytes are held for it
 *   (sg_autograd_saved_bytes), and an in-place change to it after the op does not stop the
 *   backward, which gives PyTorch's gradient: expand (sizes), as_strided (TensorGeometry),
 *   add.Tensor's other and mul.Scalar's self (scalar_type), _to_copy (options), mean (numel),
 *   mm (strides and layout), eq_ (zeros_like of self and other);
 * - an input whose value one formula reads, for one other input, is kept only where that
 *   input needs a gradient (PyTorch's should_compute_output guard): x * c and mm(x, B) with c and
 *   B constants keep c and B only, so x may change; c and B are kept, and a change to them fails
 *   with PyTorch's version message; mul_ takes no clone of self's old value then; where both
 *   need gradients, both are kept.
 * Every case here failed with a version error before, and passes in PyTorch 2.11. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"
#include "aten_autograd.h"

#include <string.h>

static const int64_t S34[2] = {3, 4};

static bool ok(sg_status st) {
    if (st != SG_OK) fprintf(stderr, "unexpected: %s\n", sg_last_error());
    return st == SG_OK;
}

/* 0, 1, ..., 11 as a 3x4 float64 tensor, scaled */
static sg_tensor *arange34(double scale) {
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = i * scale;
    return make(SG_FLOAT64, S34, 2, v);
}

static sg_tensor *leaf34(double scale) {
    sg_tensor *t = arange34(scale);
    CHECK(sg_tensor_set_requires_grad(t, true) == SG_OK);
    return t;
}

/* x0 * 1: a tensor with a history, which may be changed in place */
static sg_tensor *mid(sg_tensor *x0) {
    sg_tensor *x = NULL;
    CHECK(ok(aten_mul_Scalar(x0, sg_scalar_int(1), &x)));
    return x;
}

/* x.add_(1): an in-place change after the op that read x */
static void bump(sg_tensor *x) {
    sg_tensor *r = NULL;
    uint32_t   v = x ? sg_tensor_version(x) : 0;
    CHECK(x && ok(aten_add__Scalar(x, sg_scalar_int(1), sg_scalar_int(1), &r)) && r == x);
    CHECK(x && sg_tensor_version(x) == v + 1);
    sg_tensor_release(r);
}

/* backward from sum(y), then leaf's gradient against want (n elements); y released */
static void grad_is(const char *what, sg_tensor *y, sg_tensor *leaf, const double *want,
                    int64_t n) {
    sg_tensor *s = NULL, *g = NULL;
    CHECK(ok(aten_sum(y, NULL, &s)));
    sg_status st = s ? sg_backward(&s, NULL, 1, false) : SG_EINVAL;
    if (st != SG_OK) fprintf(stderr, "%s: %s\n", what, sg_last_error());
    CHECK(st == SG_OK);
    CHECK(sg_tensor_grad(leaf, &g) == SG_OK && g && sg_tensor_numel(g) == n);
    CHECK(g && g->dtype == leaf->dtype);
    for (int64_t i = 0; g && i < n; i++)
        if (fabs(at(g, i) - want[i]) > 1e-12) {
            fprintf(stderr, "%s: grad[%lld] = %g, want %g\n", what, (long long)i, at(g, i),
                    want[i]);
            CHECK(false);
            break;
        }
    CHECK(sg_tensor_set_grad(leaf, NULL) == SG_OK);
    sg_tensor_release(g), sg_tensor_release(s), sg_tensor_release(y);
}

static void fill(double *w, int64_t n, double v) {
    for (int64_t i = 0; i < n; i++) w[i] = v;
}

/* ---- metadata only ----------------------------------------------------------------------- */

static void test_expand(void) {
    const int64_t s31[2] = {3, 1};
    sg_tensor *x0 = make(SG_FLOAT64, s31, 2, (double[]){0, 1, 2}), *w = arange34(0.1);
    CHECK(sg_tensor_set_requires_grad(x0, true) == SG_OK);
    sg_tensor *x = mid(x0), *y = NULL, *p = NULL;
    int64_t    before = sg_autograd_saved_bytes();
    CHECK(ok(aten_expand(x, (sg_int_list){S34, 2}, false, &y)));
    CHECK(y && strcmp(sg_tensor_grad_fn(y)->name, "ExpandBackward0") == 0);
    CHECK(sg_autograd_saved_bytes() == before); /* x's sizes only */
    CHECK(ok(aten_mul_Tensor(y, w, &p)));       /* w only: y needs w, w needs nothing */
    CHECK(sg_autograd_saved_bytes() == before + 12 * 8);
    bump(x);
    grad_is("expand", p, x0, (double[]){0.6, 2.2, 3.8}, 3); /* the rows' sums of w */
    CHECK(sg_autograd_saved_bytes() == before);
    sg_tensor_release(y), sg_tensor_release(x), sg_tensor_release(x0), sg_tensor_release(w);
}

static void test_as_strided(void) {
    const int64_t s22[2] = {2, 2}, st22[2] = {4, 1}, off = 1;
    sg_tensor *x0 = leaf34(1), *x = mid(x0), *y = NULL, *p = NULL;
    sg_tensor *w = make(SG_FLOAT64, s22, 2, (double[]){1, 2, 3, 4});
    int64_t    before = sg_autograd_saved_bytes();
    CHECK(ok(aten_as_strided(x, (sg_int_list){s22, 2}, (sg_int_list){st22, 2}, &off, &y)));
    CHECK(y && strcmp(sg_tensor_grad_fn(y)->name, "AsStridedBackward0") == 0);
    CHECK(sg_autograd_saved_bytes() == before); /* TensorGeometry(x) only */
    CHECK(ok(aten_mul_Tensor(y, w, &p)));
    bump(x);
    grad_is("as_strided", p, x0, (double[]){0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0}, 12);
    sg_tensor_release(y), sg_tensor_release(x), sg_tensor_release(x0), sg_tensor_release(w);
}

static void test_scalar_type(void) {
    double     want[12];
    sg_tensor *x0 = leaf34(1), *c = leaf34(0), *b = mid(x0), *y = NULL;
    /* add.Tensor reads other's dtype only: c + 2 b, then b changes */
    int64_t before = sg_autograd_saved_bytes();
    CHECK(ok(aten_add_Tensor(c, b, sg_scalar_int(2), &y)));
    CHECK(sg_autograd_saved_bytes() == before);
    bump(b);
    fill(want, 12, 2);
    grad_is("add's other", y, x0, want, 12);
    /* mul.Scalar reads self's dtype only: b * 2.5, then b changes (a new b: a graph is run
     * once, the first backward freed what b's node kept) */
    sg_tensor_release(b);
    b = mid(x0);
    CHECK(ok(aten_mul_Scalar(b, sg_scalar_float(2.5), &y)));
    CHECK(y && strcmp(sg_tensor_grad_fn(y)->name, "MulBackward1") == 0);
    CHECK(sg_autograd_saved_bytes() == before);
    bump(b);
    fill(want, 12, 2.5);
    grad_is("mul.Scalar's self", y, x0, want, 12);
    sg_tensor_release(b), sg_tensor_release(c), sg_tensor_release(x0);
}

static void test_options_and_numel(void) {
    double     want[12];
    sg_tensor *x0 = leaf34(1), *x = mid(x0), *y = NULL, *p = NULL;
    /* _to_copy reads self.options(): the gradient goes back to float64 */
    int64_t before = sg_autograd_saved_bytes();
    CHECK(ok(aten__to_copy(x, &(sg_dtype){SG_FLOAT32}, NULL, NULL, NULL, false, NULL, &y)));
    CHECK(y && y->dtype == SG_FLOAT32 && sg_autograd_saved_bytes() == before);
    CHECK(ok(aten_mul_Scalar(y, sg_scalar_int(2), &p)));
    bump(x);
    fill(want, 12, 2);
    grad_is("_to_copy", p, x0, want, 12);
    sg_tensor_release(y);
    /* mean reads self's sizes and numel */
    sg_tensor_release(x);
    x = mid(x0);
    CHECK(ok(aten_mean(x, NULL, &y)));
    CHECK(y && strcmp(sg_tensor_grad_fn(y)->name, "MeanBackward0") == 0);
    CHECK(sg_autograd_saved_bytes() == before);
    bump(x);
    fill(want, 12, 1.0 / 12);
    grad_is("mean", y, x0, want, 12);
    sg_tensor_release(x), sg_tensor_release(x0);
}

/* eq_'s formulas are zeros_like(self) and zeros_like(other): zeros of their sizes and options
 * (PyTorch's TypeAndSize), no clone of self's old value and no other */
static void test_zeros_like(void) {
    double     want[12] = {0};
    sg_tensor *x0 = leaf34(1), *c0 = leaf34(0), *x = mid(x0), *c = mid(c0), *r = NULL, *p = NULL;
    int64_t    before = sg_autograd_saved_bytes();
    CHECK(ok(aten_eq__Tensor(x, c, &r)) && r == x);
    sg_tensor_release(r);
    CHECK(strcmp(sg_tensor_grad_fn(x)->name, "EqBackward1") == 0);
    CHECK(sg_autograd_saved_bytes() == before);
    bump(c);
    CHECK(ok(aten_mul_Scalar(x, sg_scalar_int(2), &p)));
    sg_tensor *s = NULL, *g = NULL;
    CHECK(ok(aten_sum(p, NULL, &s)) && s && ok(sg_backward(&s, NULL, 1, false)));
    for (int k = 0; k < 2; k++) { /* zeros for both, as in PyTorch (not none) */
        CHECK(sg_tensor_grad(k ? c0 : x0, &g) == SG_OK && g && shape_is(g, S34, 2));
        for (int64_t i = 0; g && i < 12; i++) CHECK(at(g, i) == want[i]);
        sg_tensor_release(g);
    }
    sg_tensor_release(s), sg_tensor_release(p), sg_tensor_release(c), sg_tensor_release(x);
    sg_tensor_release(c0), sg_tensor_release(x0);
}

/* ---- values kept only where needed ------------------------------------------------------- */

#define VERSION_MSG                                                                          \
    "one of the variables needed for gradient computation has been modified by an inplace "  \
    "operation: "

static void backward_fails(sg_tensor *y, const char *saved_by) {
    sg_tensor *s = NULL;
    CHECK(ok(aten_sum(y, NULL, &s)));
    CHECK(s && sg_backward(&s, NULL, 1, false) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), VERSION_MSG);
    CHECK_HAS(sg_last_error(), saved_by);
    sg_tensor_release(s), sg_tensor_release(y);
}

static void test_mul_guard(void) {
    double     want[12];
    sg_tensor *x0 = leaf34(1), *c = arange34(0.5), *x = mid(x0), *y = NULL, *r = NULL;
    for (int i = 0; i < 12; i++) want[i] = 0.5 * i;
    /* x * c with c constant: c is kept for x's gradient, x for nobody's */
    int64_t before = sg_autograd_saved_bytes();
    CHECK(ok(aten_mul_Tensor(x, c, &y)));
    CHECK(sg_autograd_saved_bytes() == before + 12 * 8);
    bump(x);
    grad_is("x * c, x changed", y, x0, want, 12);
    /* ... and c changed fails, as in PyTorch (each graph from a new x: one backward each) */
    sg_tensor_release(x);
    x = mid(x0);
    CHECK(ok(aten_mul_Tensor(x, c, &y)));
    bump(c);
    backward_fails(y, "[float64 [3, 4]], which is saved by MulBackward0, is at version 1; "
                      "expected version 0 instead.");
    for (int i = 0; i < 12; i++) want[i] = 0.5 * i + 1;
    /* x.mul_(c): no clone of x's old value, which only c's gradient would read */
    sg_tensor *x2 = mid(x0);
    CHECK(sg_autograd_saved_bytes() == before);
    CHECK(ok(aten_mul__Tensor(x2, c, &r)) && r == x2);
    sg_tensor_release(r);
    CHECK(sg_autograd_saved_bytes() == before + 12 * 8);
    grad_is("x.mul_(c)", x2, x0, want, 12);
    /* both needing gradients: both kept */
    sg_tensor *z0 = leaf34(0.25), *z = mid(z0);
    sg_tensor_release(x);
    x = mid(x0);
    CHECK(ok(aten_mul_Tensor(x, z, &y)));
    CHECK(sg_autograd_saved_bytes() == before + 2 * 12 * 8);
    bump(x);
    backward_fails(y, "which is saved by MulBackward0");
    sg_tensor_release(z), sg_tensor_release(z0);
    sg_tensor_release(x), sg_tensor_release(c), sg_tensor_release(x0);
}

/* mm(x, B): x's formula reads B's value and x's sizes, strides and layout; B's reads x's value */
static void test_mm_guard(void) {
    const int64_t s42[2] = {4, 2};
    double        bv[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    sg_tensor    *x0 = leaf34(1), *b = make(SG_FLOAT64, s42, 2, bv), *x = mid(x0), *y = NULL;
    int64_t       before = sg_autograd_saved_bytes();
    CHECK(ok(aten_mm(x, b, &y)));
    CHECK(y && strcmp(sg_tensor_grad_fn(y)->name, "MmBackward0") == 0);
    CHECK(sg_autograd_saved_bytes() == before + 8 * 8); /* B, and x's metadata */
    bump(x);
    grad_is("mm, x changed", y, x0, (double[]){1, 5, 9, 13, 1, 5, 9, 13, 1, 5, 9, 13}, 12);
    sg_tensor_release(x);
    x = mid(x0);
    CHECK(ok(aten_mm(x, b, &y)));
    bump(b);
    backward_fails(y, "[float64 [4, 2]], which is saved by MmBackward0");
    sg_tensor_release(x), sg_tensor_release(b), sg_tensor_release(x0);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    CHECK(aten_autograd_init() == SG_OK);
    test_expand();
    test_as_strided();
    test_scalar_type();
    test_options_and_numel();
    test_zeros_like();
    test_mul_guard();
    test_mm_guard();
    sg_runtime_shutdown();
    return check_result("test_cpu_autograd_saved");
}
