/* test_cpu_autograd_gen.c: the generated Autograd kernels (aten_autograd.c, from
 * schemas/derivatives_core.yaml; docs/autograd.md) on aten's CPU ops: after aten_autograd_init,
 * ops record nodes whose backward functions are derivatives.yaml's formulas compiled to C, and
 * sg_backward gives the gradients of hand computation: neg, transpose, view, mean, sum, tril,
 * masked_fill, maximum (ties split), where; and, against central differences in float64, ops
 * whose formulas call the helper ops (schemas/autograd.yaml): mul, add and sub (alpha), div,
 * mm, sigmoid, tanh, silu, exp, pow, _softmax, sum over dims, a chain (sqrt(x*x + 1)),
 * linear (each of input, weight and bias: one formula for three inputs, a tuple under ?:),
 * clamp_min (scalar_tensor), mean over dims (mean_backward), max over a dim (the values:
 * value_selecting_reduction_backward), squeeze of one dim and of all (unsqueeze_to), a strided
 * slice (slice_backward_wrapper) and expand (sum_to). no_grad records nothing; an integer
 * result of a differentiable one (sum(x, dtype=int64)) is refused as PyTorch refuses it; view_copy
 * ops (permute_copy, split_copy) differentiated by their view op's formula. Every formula of the
 * core ops translates: the message of one that does not is checked in tests/derivatives.sh. Ops
 * with a Tensor[] input or result: test_cpu_autograd_lists.c; as_strided:
 * test_cpu_autograd_as_strided.c. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"
#include "aten_autograd.h"
#include "autograd_fd.h"

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

/* ---- against finite differences, float64 --------------------------------------------------- */

/* Constants the cases use: c (3x4, away from 0), m (4x2), n (2x3). */
static sg_tensor *C, *M, *N;

static sg_tensor *values(const int64_t *sizes, int32_t nd, double base, double step) {
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = base + step * (double)((i * 7) % 12);
    return make(SG_FLOAT64, sizes, nd, v);
}

/* y = f(x); the case's root is sum(y * w) for weights of y's shape (autograd_fd.h) */
typedef ag_fn fn;

#define UNARY(name, call)                                                                     \
    static sg_status name(sg_tensor *x, sg_tensor **y) { return call; }
UNARY(f_mul_c, aten_mul_Tensor(x, C, y))
UNARY(f_mul_xx, aten_mul_Tensor(x, x, y))
UNARY(f_add_other, aten_add_Tensor(C, x, sg_scalar_float(2.5), y))
UNARY(f_sub_other, aten_sub_Tensor(C, x, sg_scalar_float(1.5), y))
UNARY(f_div_self, aten_div_Tensor(x, C, y))
UNARY(f_div_other, aten_div_Tensor(C, x, y))
UNARY(f_mm_self, aten_mm(x, M, y))
UNARY(f_mm_mat2, aten_mm(N, x, y))
UNARY(f_sigmoid, aten_sigmoid(x, y))
UNARY(f_tanh, aten_tanh(x, y))
UNARY(f_silu, aten_silu(x, y))
UNARY(f_exp, aten_exp(x, y))
UNARY(f_pow3, aten_pow_Tensor_Scalar(x, sg_scalar_int(3), y))
UNARY(f_softmax, aten__softmax(x, 1, false, y))
UNARY(f_sum_dim, aten_sum_dim_IntList(x, &(sg_int_list){(const int64_t[]){1}, 1}, false, NULL, y))
UNARY(f_sum_dim_keep, aten_sum_dim_IntList(x, &(sg_int_list){(const int64_t[]){0}, 1}, true, NULL, y))

UNARY(f_clamp_min, aten_clamp_min(x, sg_scalar_float(0.3), y))
UNARY(f_slice, aten_slice_Tensor(x, 1, &(int64_t){1}, &(int64_t){4}, 2, y))
UNARY(f_mean_dim, aten_mean_dim(x, &(sg_int_list){(const int64_t[]){1}, 1}, false, NULL, y))
UNARY(f_mean_dim_keep, aten_mean_dim(x, &(sg_int_list){(const int64_t[]){0}, 1}, true, NULL, y))

/* max over dim 1: the values (the indices need no gradient) */
static sg_status f_max_dim(sg_tensor *x, sg_tensor **y) {
    sg_tensor *idx = NULL;
    sg_status st = aten_max_dim(x, 1, false, y, &idx);
    sg_tensor_release(idx);
    return st;
}

/* sqrt(x * x + 1): a chain of three generated kernels */
static sg_status f_sqrt_chain(sg_tensor *x, sg_tensor **y) {
    sg_tensor *a = NULL, *b = NULL;
    sg_status st = aten_mul_Tensor(x, x, &a);
    if (st == SG_OK) st = aten_add_Scalar(a, sg_scalar_int(1), sg_scalar_int(1), &b);
    if (st == SG_OK) st = aten_sqrt(b, y);
    sg_tensor_release(a), sg_tensor_release(b);
    return st;
}

/* linear(input, weight, bias), each the leaf in turn (the others: LX 3x4, LW 2x4, LB 2) */
static sg_tensor *LX, *LW, *LB;
static sg_status f_linear_input(sg_tensor *x, sg_tensor **y) { return aten_linear(x, LW, LB, y); }
static sg_status f_linear_weight(sg_tensor *x, sg_tensor **y) { return aten_linear(LX, x, LB, y); }
static sg_status f_linear_bias(sg_tensor *x, sg_tensor **y) { return aten_linear(LX, LW, x, y); }

/* expand(x[:, :1]) where x is 3x1: sum_to brings the gradient back */
static const int64_t S31[2] = {3, 1};
static sg_tensor *X31;
static sg_status f_expand(sg_tensor *x, sg_tensor **y) {
    (void)x;
    return aten_expand(X31, (sg_int_list){S34, 2}, false, y);
}

/* squeeze of a 3x1 leaf: unsqueeze_to brings the gradient back */
static sg_status f_squeeze_dim(sg_tensor *x, sg_tensor **y) { return aten_squeeze_dim(x, 1, y); }
static sg_status f_squeeze(sg_tensor *x, sg_tensor **y) { return aten_squeeze(x, y); }

static void test_finite_differences(void) {
    C = values(S34, 2, 0.75, 0.25);
    M = values((const int64_t[]){4, 2}, 2, -1, 0.3);
    N = values((const int64_t[]){2, 3}, 2, 0.5, -0.2);
    static const struct {
        const char *name;
        fn          f;
        bool        positive; /* x kept away from 0 (div's other, sqrt's chain stays fine) */
    } cases[] = {
        {"mul(x, c)", f_mul_c, false},          {"mul(x, x)", f_mul_xx, false},
        {"add(c, x, alpha=2.5)", f_add_other, false},
        {"sub(c, x, alpha=1.5)", f_sub_other, false},
        {"div(x, c)", f_div_self, false},       {"div(c, x)", f_div_other, true},
        {"mm(x, m)", f_mm_self, false},         {"mm(n, x)", f_mm_mat2, false},
        {"sigmoid", f_sigmoid, false},          {"tanh", f_tanh, false},
        {"silu", f_silu, false},                {"exp", f_exp, false},
        {"pow(x, 3)", f_pow3, false},           {"_softmax(x, 1)", f_softmax, false},
        {"sum(x, 1)", f_sum_dim, false},        {"sum(x, 0, keepdim)", f_sum_dim_keep, false},
        {"sqrt(x * x + 1)", f_sqrt_chain, false},
        {"clamp_min(x, 0.3)", f_clamp_min, false}, {"mean(x, 1)", f_mean_dim, false},
        {"mean(x, 0, keepdim)", f_mean_dim_keep, false}, {"max(x, 1).values", f_max_dim, false},
        {"x[:, 1:4:2]", f_slice, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        sg_tensor *x = cases[k].positive ? values(S34, 2, 0.5, 0.2) : values(S34, 2, -1.3, 0.21);
        CHECK(sg_tensor_set_requires_grad(x, true) == SG_OK);
        ag_fd_case(cases[k].name, cases[k].f, x);
        sg_tensor_release(x);
    }
    static const int64_t S24[2] = {2, 4}, S2[1] = {2};
    LX = values(S34, 2, -0.9, 0.17);
    LW = values(S24, 2, 0.4, -0.11);
    LB = values(S2, 1, 0.3, 0.5);
    static const struct {
        const char    *name;
        fn             f;
        const int64_t *shape;
        int32_t        nd;
    } linear_cases[] = {{"linear: input", f_linear_input, S34, 2},
                        {"linear: weight", f_linear_weight, S24, 2},
                        {"linear: bias", f_linear_bias, S2, 1}};
    for (size_t k = 0; k < 3; k++) {
        sg_tensor *x = values(linear_cases[k].shape, linear_cases[k].nd, 0.2, 0.3);
        CHECK(sg_tensor_set_requires_grad(x, true) == SG_OK);
        ag_fd_case(linear_cases[k].name, linear_cases[k].f, x);
        sg_tensor_release(x);
    }
    sg_tensor_release(LX), sg_tensor_release(LW), sg_tensor_release(LB);
    X31 = values(S31, 2, 0.1, 0.4);
    CHECK(sg_tensor_set_requires_grad(X31, true) == SG_OK);
    ag_fd_case("squeeze(x, 1)", f_squeeze_dim, X31);
    sg_tensor_release(X31);
    X31 = values(S31, 2, 0.1, 0.4);
    CHECK(sg_tensor_set_requires_grad(X31, true) == SG_OK);
    ag_fd_case("squeeze(x)", f_squeeze, X31);
    sg_tensor_release(X31);
    X31 = values(S31, 2, 0.1, 0.4);
    CHECK(sg_tensor_set_requires_grad(X31, true) == SG_OK);
    ag_fd_case("expand(x, [3, 4])", f_expand, X31);
    sg_tensor_release(X31);
    sg_tensor_release(C), sg_tensor_release(M), sg_tensor_release(N);
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

/* A differentiable result of a dtype without gradients is refused where an input requires grad,
 * as PyTorch's set_history refuses it; _to_copy's conditional result and max.dim's indices get
 * no history instead. */
static void test_integral_results(void) {
    sg_tensor *x = leaf(SG_FLOAT32, S34, 2), *a = NULL, *b = NULL;
    sg_dtype   i64 = SG_INT64;
    CHECK(aten_sum(x, &i64, &a) == SG_EINVAL && !a);
    CHECK(strstr(sg_last_error(), "aten::sum: Autograd not support dtype: Long") != NULL);
    CHECK(aten_cumsum(x, 1, &i64, &a) == SG_EINVAL && !a);
    CHECK(strstr(sg_last_error(), "aten::cumsum: Autograd not support dtype: Long") != NULL);
    /* under no_grad the op runs */
    bool was = sg_grad_set_enabled(false);
    CHECK(aten_sum(x, &i64, &a) == SG_OK && a && a->dtype == SG_INT64);
    sg_grad_set_enabled(was);
    sg_tensor_release(a), a = NULL;
    CHECK(aten__to_copy(x, &i64, NULL, NULL, NULL, false, NULL, &a) == SG_OK && a);
    CHECK(a && a->dtype == SG_INT64 && !sg_tensor_requires_grad(a) && !sg_tensor_grad_fn(a));
    sg_tensor_release(a), a = NULL;
    CHECK(aten_max_dim(x, 1, false, &a, &b) == SG_OK && a && b);
    CHECK(sg_tensor_requires_grad(a) && b && !sg_tensor_requires_grad(b));
    sg_tensor_release(a), sg_tensor_release(b), sg_tensor_release(x);
}

/* A view op's entry serves its view_copy op (torchgen's add_view_copy_derivatives): the node is
 * the view's with "_copy", the gradients the view's. */
static double twelfth(int64_t i) { (void)i; return 1.0 / 12; }
static double first_rows(int64_t i) { return i < 8 ? 1 : 0; } /* split_copy(x, 2)[0] of 3x4 */

static void test_view_copies(sg_dtype dt) {
    sg_tensor *x = leaf(dt, S34, 2), *a = NULL, *b = NULL;
    CHECK(aten_permute_copy(x, (sg_int_list){(const int64_t[]){1, 0}, 2}, &a) == SG_OK);
    CHECK(a && sg_tensor_grad_fn(a) &&
          !strcmp(sg_tensor_grad_fn(a)->name, "PermuteBackward0_copy"));
    CHECK(aten_mean(a, NULL, &b) == SG_OK);
    expect_grad("mean(permute_copy(x))", b, x, twelfth);
    sg_tensor_release(a), sg_tensor_release(b), sg_tensor_release(x);
    /* a Tensor[] result: each piece has the node at its index */
    x = leaf(dt, S34, 2);
    sg_tensor_list l = {NULL, 0};
    CHECK(aten_split_copy_Tensor(x, 2, 0, &l) == SG_OK && l.len == 2);
    CHECK(l.len == 2 && sg_tensor_grad_fn(l.items[1]) &&
          !strcmp(sg_tensor_grad_fn(l.items[1])->name, "SplitBackward0_copy"));
    if (l.len == 2) {
        CHECK(aten_sum(l.items[0], NULL, &b) == SG_OK);
        expect_grad("sum(split_copy(x, 2)[0])", b, x, first_rows);
        sg_tensor_release(b);
    }
    sg_tensor_list_release(&l);
    sg_tensor_release(x);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    CHECK(aten_autograd_init() == SG_OK);
    test_ops(SG_FLOAT64);
    test_ops(SG_FLOAT32);
    test_no_grad();
    test_integral_results();
    test_view_copies(SG_FLOAT64);
    test_view_copies(SG_FLOAT32);
    test_finite_differences();
    sg_runtime_shutdown();
    return check_result("test_cpu_autograd_gen");
}
