/* test_cpu_autograd_gen.c: the generated Autograd kernels (aten_autograd.c, from
 * schemas/derivatives_core.yaml; docs/autograd.md) on aten's CPU ops: after aten_autograd_init,
 * ops record nodes whose backward functions are derivatives.yaml's formulas compiled to C, and
 * sg_backward gives the gradients of hand computation: neg, transpose, view, mean, sum, tril,
 * masked_fill, maximum (ties split), where. An op whose formula the translator could not write
 * (mul.Tensor's mul_tensor_backward, a helper not written yet) fails at backward with a message
 * that names the node, the op, the input and why; no_grad records nothing. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"
#include "aten_autograd.h"

#include <string.h>

static const int64_t S34[2] = {3, 4}, S12[1] = {12};

static double xv(int64_t i) { return (double)(i % 5) - 1.5 + 0.25 * (double)i; }

static sg_tensor *leaf(sg_dtype dt, const int64_t *sizes, int32_t n) {
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = xv(i);
    sg_tensor *t = make(dt, sizes, n, v);
    CHECK(sg_tensor_set_requires_grad(t, true) == SG_OK);
    return t;
}

/* root's backward, then x.grad against want(i) for each of x's 12 elements */
static void expect_grad(const char *what, sg_tensor *root, sg_tensor *x, double (*want)(int64_t)) {
    sg_status st = sg_backward(&root, NULL, 1, false);
    if (st != SG_OK) fprintf(stderr, "%s: %s\n", what, sg_last_error());
    CHECK(st == SG_OK);
    sg_tensor *g = NULL;
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g);
    CHECK(g && shape_is(g, x->sizes, x->ndim));
    for (int64_t i = 0; g && i < 12; i++) {
        if (fabs(at(g, i) - want(i)) > 1e-6) {
            fprintf(stderr, "%s: grad[%lld] = %g, want %g\n", what, (long long)i, at(g, i), want(i));
            CHECK(false);
            break;
        }
    }
    sg_tensor_release(g);
}

static double minus_twelfth(int64_t i) { (void)i; return -1.0 / 12; }
static double lower(int64_t i) { return i % 4 <= i / 4 ? 1 : 0; }   /* tril of 3x4 */
static double unmasked(int64_t i) { return i % 3 == 0 ? 0 : 1; }     /* mask: i % 3 == 0 */
static double above(int64_t i) {                                       /* maximum(x, 0.5) */
    return xv(i) > 0.5 ? 1 : xv(i) == 0.5 ? 0.5 : 0;
}
static double positive(int64_t i) { return xv(i) > 0 ? 1 : 0; }      /* where(x > 0, x, 0) */

static void test_ops(sg_dtype dt) {
    /* mean(-(x^T)): every element -1/12 */
    sg_tensor *x = leaf(dt, S34, 2), *a = NULL, *b = NULL, *c = NULL;
    CHECK(aten_transpose_int(x, 0, 1, &a) == SG_OK);
    CHECK(aten_neg(a, &b) == SG_OK);
    CHECK(aten_mean(b, NULL, &c) == SG_OK);
    CHECK(sg_tensor_grad_fn(c) && strcmp(sg_tensor_grad_fn(c)->name, "MeanBackward0") == 0);
    expect_grad("mean(neg(transpose(x)))", c, x, minus_twelfth);
    sg_tensor_release(a), sg_tensor_release(b), sg_tensor_release(c);
    sg_tensor_release(x);

    /* sum(tril(x)) */
    x = leaf(dt, S34, 2);
    CHECK(aten_tril(x, 0, &a) == SG_OK);
    CHECK(aten_sum(a, NULL, &b) == SG_OK);
    expect_grad("sum(tril(x))", b, x, lower);
    sg_tensor_release(a), sg_tensor_release(b), sg_tensor_release(x);

    /* sum(masked_fill(view(x, [12]), mask, 0)) */
    x = leaf(dt, S34, 2);
    double mv[12];
    for (int i = 0; i < 12; i++) mv[i] = i % 3 == 0;
    sg_tensor *mask = make(SG_BOOL, S12, 1, mv);
    CHECK(aten_view(x, (sg_int_list){S12, 1}, &a) == SG_OK);
    CHECK(aten_masked_fill_Scalar(a, mask, sg_scalar_int(0), &b) == SG_OK);
    CHECK(aten_sum(b, NULL, &c) == SG_OK);
    expect_grad("sum(masked_fill(view(x)))", c, x, unmasked);
    sg_tensor_release(a), sg_tensor_release(b), sg_tensor_release(c), sg_tensor_release(mask);
    sg_tensor_release(x);

    /* sum(maximum(x, 0.5)): the tie at x == 0.5 halves the gradient */
    x = leaf(dt, S34, 2);
    double hv[12];
    for (int i = 0; i < 12; i++) hv[i] = 0.5;
    sg_tensor *half = make(dt, S34, 2, hv);
    CHECK(aten_maximum(x, half, &a) == SG_OK);
    CHECK(aten_sum(a, NULL, &b) == SG_OK);
    expect_grad("sum(maximum(x, 0.5))", b, x, above);
    sg_tensor_release(a), sg_tensor_release(b), sg_tensor_release(half), sg_tensor_release(x);

    /* sum(where(x > 0, x, zeros)) */
    x = leaf(dt, S34, 2);
    sg_tensor *zero = make(dt, S34, 2, NULL), *cond = NULL;
    CHECK(aten_gt_Scalar(x, sg_scalar_int(0), &cond) == SG_OK);
    CHECK(!sg_tensor_requires_grad(cond)); /* gt's output is not differentiable */
    CHECK(aten_where_self(cond, x, zero, &a) == SG_OK);
    CHECK(aten_sum(a, NULL, &b) == SG_OK);
    expect_grad("sum(where(x > 0, x, 0))", b, x, positive);
    sg_tensor_release(a), sg_tensor_release(b), sg_tensor_release(cond), sg_tensor_release(zero);
    sg_tensor_release(x);
}

/* mul.Tensor's formulas call a helper not written yet: backward says so, naming all of it */
static void test_untranslated(void) {
    sg_tensor *x = leaf(SG_FLOAT32, S34, 2), *a = NULL, *b = NULL;
    CHECK(aten_mul_Tensor(x, x, &a) == SG_OK);
    CHECK(aten_sum(a, NULL, &b) == SG_OK);
    CHECK(sg_backward(&b, NULL, 1, false) == SG_EUNSUPPORTED);
    const char *m = sg_last_error();
    CHECK(strstr(m, "MulBackward0: the derivative of aten::mul.Tensor for 'self' is not "
                    "translated: no op or helper named 'mul_tensor_backward'") != NULL);
    sg_tensor_release(a), sg_tensor_release(b), sg_tensor_release(x);
}

static void test_no_grad(void) {
    sg_tensor *x = leaf(SG_FLOAT64, S34, 2), *a = NULL;
    bool was = sg_grad_set_enabled(false);
    CHECK(aten_neg(x, &a) == SG_OK);
    CHECK(!sg_tensor_requires_grad(a) && !sg_tensor_grad_fn(a));
    sg_grad_set_enabled(was);
    sg_tensor_release(a);
    /* nor with no input that requires grad */
    sg_tensor *y = make(SG_FLOAT64, S34, 2, NULL);
    CHECK(aten_neg(y, &a) == SG_OK);
    CHECK(!sg_tensor_grad_fn(a));
    sg_tensor_release(a), sg_tensor_release(y), sg_tensor_release(x);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    CHECK(aten_autograd_init() == SG_OK);
    test_ops(SG_FLOAT64);
    test_ops(SG_FLOAT32);
    test_untranslated();
    test_no_grad();
    sg_runtime_shutdown();
    return check_result("test_cpu_autograd_gen");
}
