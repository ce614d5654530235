/* test_cpu_autograd_composite.c: the generated Autograd kernels of ops that derivatives.yaml
 * does not cover (gen/deriv_emit_gate.c; docs/autograd.md, "Ops without a formula"):
 *  - CompositeImplicitAutograd ops whose backends have faster kernels of their own (reshape,
 *    flatten, narrow, contiguous, softmax.int, where's scalar forms, scaled_dot_product_attention)
 *    run their aten decomposition where an input requires grad, and their gradients match
 *    central differences in float64; without grad the backends' kernels run, same values;
 *  - an op with no formula and no decomposition (narrow_copy: torch has none either) gets a
 *    NotImplemented node whose backward fails, naming the op;
 *  - integral outputs (max.dim's indices, argmax) never get a history. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"
#include "aten_autograd.h"
#include "autograd_fd.h"

#include <string.h>

/* f(x) with x requiring grad equals f(x) without (the decomposition against the backend's own
 * kernel), element by element */
static void same_values(const char *what, ag_fn f, sg_tensor *x) {
    sg_tensor *a = NULL, *b = NULL;
    CHECK(f(x, &a) == SG_OK && a);
    bool was = sg_grad_set_enabled(false);
    CHECK(f(x, &b) == SG_OK && b);
    sg_grad_set_enabled(was);
    CHECK(a && b && shape_is(a, b->sizes, b->ndim));
    CHECK(a && sg_tensor_grad_fn(a) != NULL);
    for (int64_t i = 0, n = a && b ? sg_tensor_numel(a) : 0; i < n; i++)
        if (!(fabs(at(a, i) - at(b, i)) <= 1e-12 * (1 + fabs(at(b, i))))) {
            fprintf(stderr, "%s: [%lld] %.17g with grad, %.17g without\n", what, (long long)i,
                    at(a, i), at(b, i));
            CHECK(false);
            break;
        }
    sg_tensor_release(a), sg_tensor_release(b);
}

/* ---- views and copies ----------------------------------------------------------------------- */

static const int64_t S34[2] = {3, 4}, S232[3] = {2, 3, 2};

static sg_status f_reshape_t(sg_tensor *x, sg_tensor **y) { /* no view expresses it: a copy */
    sg_tensor *t = NULL;
    sg_status  st = aten_transpose_int(x, 0, 1, &t);
    if (!st) st = aten_reshape(t, (sg_int_list){(const int64_t[]){2, -1}, 2}, y);
    sg_tensor_release(t);
    return st;
}
static sg_status f_reshape(sg_tensor *x, sg_tensor **y) {
    return aten_reshape(x, (sg_int_list){(const int64_t[]){6, 2}, 2}, y);
}
static sg_status f_flatten(sg_tensor *x, sg_tensor **y) {
    return aten_flatten_using_ints(x, 0, 1, y);
}
static sg_status f_narrow(sg_tensor *x, sg_tensor **y) { return aten_narrow(x, 1, -3, 2, y); }
static sg_status f_contiguous(sg_tensor *x, sg_tensor **y) {
    sg_tensor *t = NULL;
    sg_status  st = aten_transpose_int(x, 0, 1, &t);
    if (!st) st = aten_contiguous(t, SG_CONTIGUOUS_FORMAT, y);
    sg_tensor_release(t);
    return st;
}
static sg_status f_softmax_int(sg_tensor *x, sg_tensor **y) {
    return aten_softmax_int(x, 0, NULL, y);
}
/* where(x > 0.2, x, 0.5) + where(x > 0.2, -1.5, x): x reaches y through one side of each */
static sg_status f_where_scalar(sg_tensor *x, sg_tensor **y) {
    sg_tensor *c = NULL, *a = NULL, *b = NULL;
    sg_status  st = aten_gt_Scalar(x, sg_scalar_float(0.2), &c);
    if (!st) st = aten_where_ScalarOther(c, x, sg_scalar_float(0.5), &a);
    if (!st) st = aten_where_ScalarSelf(c, sg_scalar_float(-1.5), x, &b);
    if (!st) st = aten_add_Tensor(a, b, sg_scalar_int(1), y);
    sg_tensor_release(c), sg_tensor_release(a), sg_tensor_release(b);
    return st;
}

static void test_views(void) {
    static const struct {
        const char    *name;
        ag_fn             f;
        const int64_t *sizes;
        int32_t        n;
    } cases[] = {
        {"reshape(x^T, [2, -1])", f_reshape_t, S34, 2}, {"reshape(x, [6, 2])", f_reshape, S34, 2},
        {"flatten(x, 0, 1)", f_flatten, S232, 3},        {"narrow(x, 1, -3, 2)", f_narrow, S34, 2},
        {"contiguous(x^T)", f_contiguous, S34, 2},       {"softmax(x, 0)", f_softmax_int, S34, 2},
        {"where(x > .2, x, .5) + where(x > .2, -1.5, x)", f_where_scalar, S34, 2},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        sg_tensor *x = ag_leaf(cases[k].sizes, cases[k].n, 0.9, 0.2);
        same_values(cases[k].name, cases[k].f, x);
        ag_fd_case(cases[k].name, cases[k].f, x);
        sg_tensor_release(x);
    }
    /* a reshape that a view expresses stays a view under autograd, as in PyTorch */
    sg_tensor *x = ag_leaf(S34, 2, 0.5, 0.0), *y = NULL;
    CHECK(f_reshape(x, &y) == SG_OK && y && y->storage == x->storage);
    CHECK(y && sg_tensor_grad_fn(y) && !strcmp(sg_tensor_grad_fn(y)->name, "ViewBackward0"));
    sg_tensor_release(y), sg_tensor_release(x);
}

/* ---- attention ------------------------------------------------------------------------------ */

static const int64_t QS[4] = {1, 4, 3, 2}, KS[4] = {1, 4, 5, 2}, KG[4] = {1, 2, 5, 2};
static sg_tensor *Q, *K, *V, *MASKS[5];
static bool       causal, gqa, with_scale;
static int        masked; /* MASKS' index: 0 none, 1 bool, 2 float, 3 and 4 those with a dead row */

static sg_status sdpa(sg_tensor *q, sg_tensor *k, sg_tensor *v, sg_tensor **y) {
    double s = 0.7;
    return aten_scaled_dot_product_attention(q, k, v, MASKS[masked], 0.0, causal,
                                             with_scale ? &s : NULL, gqa, y);
}
static sg_status f_q(sg_tensor *x, sg_tensor **y) { return sdpa(x, K, V, y); }
static sg_status f_k(sg_tensor *x, sg_tensor **y) { return sdpa(Q, x, V, y); }
static sg_status f_v(sg_tensor *x, sg_tensor **y) { return sdpa(Q, K, x, y); }
static sg_status f_mask(sg_tensor *x, sg_tensor **y) { /* the float mask as the leaf */
    return aten_scaled_dot_product_attention(Q, K, V, x, 0.0, false, NULL, false, y);
}

static void test_attention(void) {
    static const struct {
        const char *name;
        bool        causal, gqa, scale;
        int         masked;
    } cases[] = {
        {"sdpa", false, false, false, 0},           {"sdpa causal", true, false, false, 0},
        {"sdpa bool mask", false, false, false, 1}, {"sdpa float mask", false, false, true, 2},
        {"sdpa gqa causal", true, true, false, 0},
        /* a query row that sees no key gives zeros and no gradient (aten's _safe_softmax) */
        {"sdpa bool mask, dead row", false, false, false, 3},
        {"sdpa float mask, dead row", false, false, false, 4},
    };
    double bm[15];
    for (int i = 0; i < 15; i++) bm[i] = (i * 7) % 4 != 0 || i % 5 == 0;
    MASKS[1] = make(SG_BOOL, (const int64_t[]){3, 5}, 2, bm);
    MASKS[2] = ag_filled((const int64_t[]){1, 3, 5}, 3, 1.3, 0.4);
    for (int i = 5; i < 10; i++) bm[i] = 0;
    MASKS[3] = make(SG_BOOL, (const int64_t[]){3, 5}, 2, bm);
    MASKS[4] = ag_filled((const int64_t[]){1, 3, 5}, 3, 1.3, 0.4);
    for (int i = 5; i < 10; i++) ((double *)sg_tensor_data(MASKS[4]))[i] = -INFINITY;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        causal = cases[c].causal, gqa = cases[c].gqa, with_scale = cases[c].scale;
        masked = cases[c].masked;
        const int64_t *ks = gqa ? KG : KS;
        char           name[64];
        Q = ag_filled(QS, 4, 0.61, 0.3), K = ag_filled(ks, 4, 0.43, 1.1), V = ag_filled(ks, 4, 0.29, 2.0);
        ag_fn fs[3] = {f_q, f_k, f_v};
        for (int which = 0; which < 3; which++) {
            sg_tensor *x = ag_leaf(which ? ks : QS, 4, 0.61 - 0.18 * which, 0.3 + 0.8 * which);
            snprintf(name, sizeof name, "%s: d/d%c", cases[c].name, "qkv"[which]);
            same_values(name, fs[which], x);
            ag_fd_case(name, fs[which], x);
            sg_tensor_release(x);
        }
        sg_tensor_release(Q), sg_tensor_release(K), sg_tensor_release(V);
    }
    Q = ag_filled(QS, 4, 0.61, 0.3), K = ag_filled(KS, 4, 0.43, 1.1), V = ag_filled(KS, 4, 0.29, 2.0);
    sg_tensor *m = ag_leaf((const int64_t[]){1, 3, 5}, 3, 1.3, 0.4);
    ag_fd_case("sdpa: d/dmask", f_mask, m);
    sg_tensor_release(m), sg_tensor_release(Q), sg_tensor_release(K), sg_tensor_release(V);
    for (int i = 1; i < 5; i++) sg_tensor_release(MASKS[i]);
}

/* ---- no formula, integral outputs ----------------------------------------------------------- */

static void test_not_implemented(void) {
    sg_tensor *x = ag_leaf(S34, 2, 0.5, 0.0), *y = NULL, *r = NULL;
    CHECK(aten_narrow_copy(x, 1, 1, 2, &y) == SG_OK);
    CHECK(y && sg_tensor_requires_grad(y));
    CHECK(y && sg_tensor_grad_fn(y) && !strcmp(sg_tensor_grad_fn(y)->name, "NotImplemented"));
    CHECK(aten_sum(y, NULL, &r) == SG_OK);
    CHECK(sg_backward(&r, NULL, 1, false) == SG_EUNSUPPORTED);
    CHECK(strstr(sg_last_error(), "the derivative for 'aten::narrow_copy' is not implemented"));
    sg_tensor_release(r), sg_tensor_release(y);
    /* under no_grad nothing is recorded */
    bool was = sg_grad_set_enabled(false);
    CHECK(aten_narrow_copy(x, 1, 1, 2, &y) == SG_OK);
    CHECK(y && !sg_tensor_requires_grad(y));
    sg_grad_set_enabled(was);
    sg_tensor_release(y), sg_tensor_release(x);
}

static void test_integral_outputs(void) {
    sg_tensor *x = ag_leaf(S34, 2, 0.5, 0.0), *v = NULL, *i = NULL, *a = NULL;
    CHECK(aten_max_dim(x, 1, false, &v, &i) == SG_OK);
    CHECK(v && sg_tensor_requires_grad(v));
    CHECK(i && !sg_tensor_requires_grad(i) && !sg_tensor_grad_fn(i));
    CHECK(aten_argmax(x, NULL, false, &a) == SG_OK);
    CHECK(a && !sg_tensor_requires_grad(a));
    sg_tensor_release(v), sg_tensor_release(i), sg_tensor_release(a), sg_tensor_release(x);
}

/* the runtime hands the decomposition over even where a backend kernel shadows it */
static void test_registered(void) {
    sg_entry e = sg_op_registered(aten_reshape_op, SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD);
    CHECK(e.unboxed != NULL && e.kind == SG_ENTRY_KERNEL);
    e = sg_op_registered(aten_add_Tensor_op, SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD);
    CHECK(e.unboxed == NULL && e.kind == SG_ENTRY_MISSING);
    e = sg_op_registered(NULL, SG_KEY_CPU);
    CHECK(e.kind == SG_ENTRY_MISSING && strstr(sg_last_error(), "sg_op_registered"));
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    CHECK(aten_autograd_init() == SG_OK);
    test_views();
    test_attention();
    test_not_implemented();
    test_integral_outputs();
    test_registered();
    sg_runtime_shutdown();
    return check_result("test_cpu_autograd_composite");
}
