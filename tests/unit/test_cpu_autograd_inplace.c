/* test_cpu_autograd_inplace.c: the generated Autograd kernels of in-place and out= ops
 * (gen/deriv_emit_inplace.c, docs/autograd.md "In-place and out= ops") on aten's CPU ops, on
 * sg_backward, with PyTorch's rules:
 * - in-place ops in the middle of a graph (add_, mul_ with an operand that requires grad,
 *   sigmoid_, sub_ with a leaf) give the gradient of central differences in float64: self's
 *   history is rebased onto the op's node, mul_ keeps self's value from before the change;
 * - a tensor that does not require grad gains a history from an operand that does;
 * - a leaf that requires grad, and a view of one, are refused in place under grad mode, with
 *   PyTorch's message, and are left unchanged; so is a view made under no_grad, once grad mode
 *   is on and an operand requires grad; so is a tensor that does not require grad and shares
 *   its storage (a view of a plain buffer, the buffer while a view lives), which would gain a
 *   history its sharers never see;
 * - a saved tensor (an input, a result, an operand of the in-place op itself) changed in place
 *   makes backward fail with PyTorch's version message;
 * - under no_grad an SGD step (p -= lr * p.grad) runs on the leaf, bumps its version, keeps it
 *   a leaf, and the next step's forward and backward work;
 * - out= ops refuse an input or out= argument that requires grad under grad mode, with
 *   PyTorch's message, and run (and bump the version of out) under no_grad;
 * - copy_ (CopyBackwards): src gets the gradient, summed down where it broadcast and cast to
 *   its dtype; self's overwritten history gets zeros; the leaf is refused, except under
 *   no_grad;
 * - in-place ops on views of a tensor that requires grad (CopySlices): mul_ on rows, sigmoid_
 *   on a view of a view (slice of a transpose), copy_ into rows, each against central
 *   differences, on a contiguous base and on a column-major one; another view of the base,
 *   overlapping, gets its grad_fn from the base again. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"
#include "aten_autograd.h"

#include <string.h>

static const int64_t S34[2] = {3, 4};

static sg_tensor *values(double base, double step) {
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = base + step * (double)((i * 7) % 12);
    return make(SG_FLOAT64, S34, 2, v);
}

static sg_tensor *leaf(double base, double step) {
    sg_tensor *t = values(base, step);
    CHECK(sg_tensor_set_requires_grad(t, true) == SG_OK);
    return t;
}

static sg_tensor *W; /* the weights of the root: sum(y * W) */

static bool ok(sg_status st) {
    if (st != SG_OK) fprintf(stderr, "unexpected: %s\n", sg_last_error());
    return st == SG_OK;
}

/* An in-place op's result is self; the reference is dropped here. */
static void same(sg_tensor *self, sg_tensor *r) {
    CHECK(r == self);
    sg_tensor_release(r);
}

/* y = sigmoid((2x + 1) * sigmoid(x) - 0.5 x), each step after the first in place on y */
static sg_status chain(sg_tensor *x, sg_tensor **out) {
    sg_tensor *y = NULL, *s = NULL, *r = NULL;
    sg_status  st = aten_mul_Scalar(x, sg_scalar_float(2.0), &y);
    if (st) return st;
    if ((st = aten_add__Scalar(y, sg_scalar_int(1), sg_scalar_int(1), &r))) goto done;
    same(y, r);
    if ((st = aten_sigmoid(x, &s))) goto done;
    if ((st = aten_mul__Tensor(y, s, &r))) goto done; /* self's old value is needed */
    same(y, r);
    if ((st = aten_sub__Tensor(y, x, sg_scalar_float(0.5), &r))) goto done;
    same(y, r);
    if ((st = aten_sigmoid_(y, &r))) goto done; /* the result is saved */
    same(y, r);
done:
    sg_tensor_release(s);
    if (st) sg_tensor_release(y);
    else *out = y;
    return st;
}

/* sum(f(x) * W) as a double (and the root, where asked) */
static double root_of(sg_tensor *x, sg_tensor **root) {
    sg_tensor *y = NULL, *p = NULL, *r = NULL;
    if (!ok(chain(x, &y))) return NAN;
    CHECK(ok(aten_mul_Tensor(y, W, &p)));
    CHECK(ok(aten_sum(p, NULL, &r)));
    double v = r ? at(r, 0) : NAN;
    if (root) *root = r;
    else sg_tensor_release(r);
    sg_tensor_release(y), sg_tensor_release(p);
    return v;
}

static void test_middle_of_graph(void) {
    sg_tensor *x = leaf(-1.1, 0.19), *y = NULL, *root = NULL, *g = NULL;
    /* the history: each in-place op's node is y's grad_fn in turn, its edge to the one before */
    CHECK(ok(chain(x, &y)));
    sg_node *n = sg_tensor_grad_fn(y);
    CHECK(n && strcmp(n->name, "SigmoidBackward0") == 0);
    CHECK(n && n->next[0].node && strcmp(n->next[0].node->name, "SubBackward0") == 0);
    sg_node *m = n ? n->next[0].node->next[0].node : NULL;
    CHECK(m && strcmp(m->name, "MulBackward0") == 0 && m->nnext == 2);
    CHECK(m && strcmp(m->next[0].node->name, "AddBackward1") == 0);
    CHECK(m && strcmp(m->next[1].node->name, "SigmoidBackward0") == 0);
    CHECK(m && strcmp(m->next[0].node->next[0].node->name, "MulBackward1") == 0);
    CHECK(sg_tensor_version(y) == 4 && !sg_tensor_is_leaf(y));
    sg_tensor_release(y);

    /* the gradient against central differences (run with grad mode off: plain in-place ops) */
    root_of(x, &root);
    CHECK(root && ok(sg_backward(&root, NULL, 1, false)));
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g);
    bool    was = sg_grad_set_enabled(false);
    double *xd = sg_tensor_data(x);
    for (int64_t i = 0; g && i < 12; i++) {
        const double h = 1e-6, keep = xd[i];
        xd[i] = keep + h;
        double up = root_of(x, NULL);
        xd[i] = keep - h;
        double down = root_of(x, NULL);
        xd[i] = keep;
        double fd = (up - down) / (2 * h), got = at(g, i);
        if (!(fabs(got - fd) <= 1e-6 * (1 + fabs(fd)))) {
            fprintf(stderr, "in-place chain: grad[%lld] = %.9g, finite differences %.9g\n",
                    (long long)i, got, fd);
            CHECK(false);
            break;
        }
    }
    sg_grad_set_enabled(was);
    CHECK(sg_tensor_version(x) == 0); /* x itself was only read */
    sg_tensor_release(g), sg_tensor_release(root), sg_tensor_release(x);
}

/* t (no grad) += x (a leaf that requires grad): t gains a history, x gets ones */
static void test_gains_history(void) {
    sg_tensor *x = leaf(0.5, 0.1), *t = values(0, 0), *r = NULL, *s = NULL, *g = NULL;
    CHECK(sg_tensor_is_leaf(t) && !sg_tensor_requires_grad(t));
    CHECK(ok(aten_add__Tensor(t, x, sg_scalar_float(3.0), &r)));
    same(t, r);
    CHECK(sg_tensor_requires_grad(t) && sg_tensor_grad_fn(t) &&
          strcmp(sg_tensor_grad_fn(t)->name, "AddBackward0") == 0);
    CHECK(sg_tensor_grad_fn(t)->next[0].node == NULL); /* t had no history to continue */
    CHECK(ok(aten_sum(t, NULL, &s)) && ok(sg_backward(&s, NULL, 1, false)));
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g);
    for (int64_t i = 0; g && i < 12; i++) CHECK(at(g, i) == 3.0);
    sg_tensor_release(g), sg_tensor_release(s), sg_tensor_release(t), sg_tensor_release(x);
}

static void test_leaf_and_view_refused(void) {
    sg_tensor *x = leaf(0.5, 0.1), *c = values(2, 0), *r = NULL, *v = NULL;
    CHECK(aten_add__Tensor(x, c, sg_scalar_int(1), &r) == SG_EINVAL && r == NULL);
    CHECK_STR(sg_last_error(), "aten::add_.Tensor: a leaf Variable that requires grad is being "
                               "used in an in-place operation.");
    CHECK(sg_tensor_version(x) == 0 && at(x, 0) == 0.5 && sg_tensor_is_leaf(x));
    /* another in-place op refuses it the same way */
    CHECK(aten_sigmoid_(x, &r) == SG_EINVAL && r == NULL);
    CHECK_HAS(sg_last_error(), "aten::sigmoid_: a leaf Variable that requires grad");
    /* a view of it likewise */
    CHECK(ok(aten_transpose_int(x, 0, 1, &v)));
    CHECK(aten_mul__Scalar(v, sg_scalar_float(2.0), &r) == SG_EINVAL && r == NULL);
    CHECK_STR(sg_last_error(), "aten::mul_.Scalar: a view of a leaf Variable that requires grad "
                               "is being used in an in-place operation.");
    CHECK(sg_tensor_version(x) == 0 && at(x, 0) == 0.5);
    /* under no_grad both run */
    bool was = sg_grad_set_enabled(false);
    CHECK(ok(aten_mul__Scalar(v, sg_scalar_float(2.0), &r)));
    same(v, r);
    CHECK(sg_tensor_version(x) == 1); /* the view shares x's counter */
    CHECK(ok(aten_add__Tensor(x, c, sg_scalar_int(1), &r)));
    same(x, r);
    sg_grad_set_enabled(was);
    CHECK(sg_tensor_version(x) == 2 && at(x, 0) == 2 * 0.5 + 2);
    sg_tensor_release(v);
    /* a view made under no_grad: written in place with grad mode on it is refused where an
     * operand requires grad (PyTorch forbids it as ambiguous), and runs where none does */
    sg_tensor *s = leaf(0.25, 0), *v2 = NULL;
    was = sg_grad_set_enabled(false);
    CHECK(ok(aten_transpose_int(x, 0, 1, &v2)));
    sg_grad_set_enabled(was);
    CHECK(!sg_tensor_requires_grad(v2));
    sg_tensor *s43 = NULL;
    CHECK(ok(aten_transpose_int(s, 0, 1, &s43)));
    CHECK(aten_mul__Tensor(v2, s43, &r) == SG_EINVAL && r == NULL);
    CHECK_HAS(sg_last_error(), "aten::mul_.Tensor: A view was created in no_grad mode and is "
                               "being modified inplace with grad mode enabled.");
    CHECK(ok(aten_mul__Scalar(v2, sg_scalar_float(1.0), &r)));
    same(v2, r);
    CHECK(!sg_tensor_requires_grad(v2) && sg_tensor_version(x) == 3);
    sg_tensor_release(s43), sg_tensor_release(v2), sg_tensor_release(s);
    sg_tensor_release(c), sg_tensor_release(x);
}

/* a tensor that does not require grad and shares its storage (a view of a plain buffer, or
 * the buffer while a view of it lives) would gain a history its sharers never see: refused,
 * where PyTorch gives the buffer the history (CopySlices); fine once nothing shares it */
static void test_shared_refused(void) {
    sg_tensor *x = leaf(0.5, 0.1), *buf = values(0, 0), *v = NULL, *xs = NULL, *r = NULL;
    int64_t    zero = 0, two = 2;
    CHECK(ok(aten_slice_Tensor(buf, 0, &zero, &two, 1, &v)));
    CHECK(ok(aten_slice_Tensor(x, 0, &zero, &two, 1, &xs)));
    CHECK(aten_copy_(v, xs, false, &r) == SG_EINVAL && r == NULL);
    CHECK_HAS(sg_last_error(), "aten::copy_: the tensor written in place does not require grad "
                               "but shares its storage with another tensor");
    CHECK(aten_add__Tensor(buf, x, sg_scalar_int(1), &r) == SG_EINVAL && r == NULL);
    CHECK_HAS(sg_last_error(), "aten::add_.Tensor: the tensor written in place does not require "
                               "grad but shares its storage");
    CHECK(sg_tensor_version(buf) == 0 && at(buf, 0) == 0 && !sg_tensor_requires_grad(buf));
    bool was = sg_grad_set_enabled(false); /* under no_grad it is a plain write */
    CHECK(ok(aten_copy_(v, xs, false, &r)));
    same(v, r);
    sg_grad_set_enabled(was);
    CHECK(at(buf, 5) == at(x, 5) && sg_tensor_version(buf) == 1);
    sg_tensor_release(v);
    CHECK(ok(aten_add__Tensor(buf, x, sg_scalar_int(1), &r))); /* nothing shares it now */
    same(buf, r);
    CHECK(sg_tensor_requires_grad(buf));
    sg_tensor_release(xs), sg_tensor_release(buf), sg_tensor_release(x);
}

/* CopySlices: y = x * 1.5 (3x4); a view of y written in place; the loss reads y. From case
 * 3 on, y is laid out column-major (strides [1, 3]: x.t().contiguous().t() * 1.5, as the product
 * follows its input's layout), a base that is not contiguous. */
static sg_tensor *S2;          /* 2x4, requires grad: the operand of the view's mul_ */
static int        view_case;   /* which view */

/* x * 1.5, column-major from case 3 on */
static sg_status scaled(sg_tensor *x, sg_tensor **y) {
    if (view_case < 3) return aten_mul_Scalar(x, sg_scalar_float(1.5), y);
    sg_tensor *t = NULL, *c = NULL, *p = NULL;
    sg_status  st = aten_transpose_int(x, 0, 1, &t);
    if (!st) st = aten_clone(t, &(sg_memory_format){SG_CONTIGUOUS_FORMAT}, &c);
    if (!st) st = aten_transpose_int(c, 0, 1, &p);
    if (!st) st = aten_mul_Scalar(p, sg_scalar_float(1.5), y);
    sg_tensor_release(t), sg_tensor_release(c), sg_tensor_release(p);
    return st;
}

static sg_status views(sg_tensor *x, sg_tensor **out) {
    sg_tensor *y = NULL, *v = NULL, *r = NULL, *t = NULL;
    int64_t    zero = 0, two = 2, one = 1, three = 3;
    sg_status  st = scaled(x, &y);
    if (st) return st;
    switch (view_case) {
    case 0: /* rows 0..1, then mul_ by S2 */
    case 3:
        if (!(st = aten_slice_Tensor(y, 0, &zero, &two, 1, &v)) &&
            !(st = aten_mul__Tensor(v, S2, &r)))
            same(v, r);
        break;
    case 1: /* columns 1..2 of the transpose's rows: a view of a view, sigmoid_ */
    case 4:
        if (!(st = aten_transpose_int(y, 0, 1, &t)) &&
            !(st = aten_slice_Tensor(t, 0, &one, &three, 1, &v)) &&
            !(st = aten_sigmoid_(v, &r)))
            same(v, r);
        break;
    default: /* copy_ of S2 * x's rows into rows 1..2: the old values get no gradient */
        if (!(st = aten_slice_Tensor(y, 0, &one, &three, 1, &v))) {
            sg_tensor *xs = NULL, *p = NULL;
            if (!(st = aten_slice_Tensor(x, 0, &zero, &two, 1, &xs)) &&
                !(st = aten_mul_Tensor(xs, S2, &p)) && !(st = aten_copy_(v, p, false, &r)))
                same(v, r);
            sg_tensor_release(xs), sg_tensor_release(p);
        }
    }
    sg_tensor_release(t), sg_tensor_release(v);
    if (st) sg_tensor_release(y);
    else *out = y;
    return st;
}

/* d(sum(views(x) * W))/dx by sg_backward against central differences; and S2's by hand */
static void fd_views(const char *what) {
    sg_tensor *x = leaf(-0.7, 0.23), *y = NULL, *p = NULL, *root = NULL, *g = NULL;
    CHECK(ok(views(x, &y)));
    CHECK(y && sg_tensor_grad_fn(y) && strcmp(sg_tensor_grad_fn(y)->name, "CopySlices") == 0);
    CHECK(ok(aten_mul_Tensor(y, W, &p)) && ok(aten_sum(p, NULL, &root)));
    CHECK(root && ok(sg_backward(&root, NULL, 1, false)));
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g);
    sg_tensor_release(y), sg_tensor_release(p), sg_tensor_release(root);
    bool    was = sg_grad_set_enabled(false);
    double *xd = sg_tensor_data(x);
    for (int64_t i = 0; g && i < 12; i++) {
        double f[2];
        for (int k = 0; k < 2; k++) {
            const double keep = xd[i];
            xd[i] = keep + (k ? -1e-6 : 1e-6);
            CHECK(ok(views(x, &y)) && ok(aten_mul_Tensor(y, W, &p)) &&
                  ok(aten_sum(p, NULL, &root)));
            f[k] = root ? at(root, 0) : NAN;
            sg_tensor_release(y), sg_tensor_release(p), sg_tensor_release(root);
            y = p = root = NULL;
            xd[i] = keep;
        }
        double fd = (f[0] - f[1]) / 2e-6;
        if (!(fabs(at(g, i) - fd) <= 1e-6 * (1 + fabs(fd)))) {
            fprintf(stderr, "%s: grad[%lld] = %.9g, finite differences %.9g\n", what,
                    (long long)i, at(g, i), fd);
            CHECK(false);
            break;
        }
    }
    sg_grad_set_enabled(was);
    sg_tensor_release(g), sg_tensor_release(x);
}

static void test_copy_slices(void) {
    double sv[8];
    for (int i = 0; i < 8; i++) sv[i] = 0.3 * i - 0.9;
    S2 = make(SG_FLOAT64, (const int64_t[]){2, 4}, 2, sv);
    CHECK(sg_tensor_set_requires_grad(S2, true) == SG_OK);
    view_case = 0;
    fd_views("y[0:2].mul_(s)");
    /* s, the other input of the view's node, gets its gradient through CopySlices */
    sg_tensor *gs = NULL;
    CHECK(sg_tensor_grad(S2, &gs) == SG_OK && gs && shape_is(gs, (const int64_t[]){2, 4}, 2));
    CHECK(sg_tensor_set_grad(S2, NULL) == SG_OK);
    sg_tensor_release(gs);
    view_case = 1;
    fd_views("y.t()[1:3].sigmoid_()");
    view_case = 2;
    fd_views("y[1:3].copy_(x[0:2] * s)");
    /* the same on a base that is not contiguous */
    sg_tensor *yc = NULL, *xc = leaf(0.5, 0.1);
    view_case = 3;
    CHECK(ok(scaled(xc, &yc)) && yc && yc->strides[0] == 1 && yc->strides[1] == 3);
    sg_tensor_release(yc), sg_tensor_release(xc);
    CHECK(sg_tensor_set_grad(S2, NULL) == SG_OK);
    fd_views("(x.t().contiguous().t() * 1.5)[0:2].mul_(s)");
    view_case = 4;
    fd_views("(x.t().contiguous().t() * 1.5).t()[1:3].sigmoid_()");
    /* a view whose base was written through another view gets its grad_fn from the base again */
    sg_tensor *x = leaf(0.2, 0.1), *y = NULL, *a = NULL, *b = NULL, *r = NULL, *s = NULL,
              *g = NULL;
    int64_t    zero = 0, one = 1, two = 2;
    CHECK(ok(aten_mul_Scalar(x, sg_scalar_float(1.0), &y)));
    CHECK(ok(aten_slice_Tensor(y, 0, &zero, &one, 1, &a)));  /* row 0 */
    CHECK(ok(aten_slice_Tensor(y, 0, &zero, &two, 1, &b)));  /* rows 0..1, overlapping a */
    CHECK(ok(aten_mul__Scalar(b, sg_scalar_float(3.0), &r)));
    same(b, r);
    CHECK(ok(aten_sum(a, NULL, &s)) && ok(sg_backward(&s, NULL, 1, true)));
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g);
    for (int64_t i = 0; g && i < 12; i++) CHECK(at(g, i) == (i < 4 ? 3.0 : 0.0));
    sg_tensor_release(g), sg_tensor_release(s), sg_tensor_release(b);
    /* ... and so does one that is a root itself: a is 1x4, its gradient given */
    CHECK(sg_tensor_set_grad(x, NULL) == SG_OK);
    CHECK(ok(aten_mul__Scalar(y, sg_scalar_float(2.0), &r)));
    same(y, r);
    sg_tensor *ones = make(SG_FLOAT64, (const int64_t[]){1, 4}, 2, (double[]){1, 1, 1, 1});
    CHECK(ok(sg_backward(&a, &ones, 1, false)));
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g);
    for (int64_t i = 0; g && i < 12; i++) CHECK(at(g, i) == (i < 4 ? 6.0 : 0.0));
    sg_tensor_release(g), sg_tensor_release(ones), sg_tensor_release(a);
    sg_tensor_release(y), sg_tensor_release(x), sg_tensor_release(S2);
}

#define VERSION_MSG                                                                          \
    "one of the variables needed for gradient computation has been modified by an inplace "  \
    "operation: [float64 [3, 4]], which is saved by "

/* backward from sum(y) fails with PyTorch's message, naming node */
static void backward_fails(sg_tensor *y, const char *node, unsigned now, unsigned saved) {
    sg_tensor *s = NULL;
    CHECK(ok(aten_sum(y, NULL, &s)));
    CHECK(s && sg_backward(&s, NULL, 1, false) == SG_EINVAL);
    char want[400];
    snprintf(want, sizeof want, VERSION_MSG "%s, is at version %u; expected version %u instead.",
             node, now, saved);
    CHECK_HAS(sg_last_error(), want);
    sg_tensor_release(s);
}

static void test_saved_modified(void) {
    sg_tensor *x = leaf(0.5, 0.1), *c = values(2, 0.5), *y = NULL, *r = NULL, *g = NULL;
    /* an input: y = x * c saves c, which then changes */
    CHECK(ok(aten_mul_Tensor(x, c, &y)));
    CHECK(ok(aten_add__Scalar(c, sg_scalar_int(1), sg_scalar_int(1), &r)));
    same(c, r);
    CHECK(sg_tensor_version(c) == 1);
    backward_fails(y, "MulBackward0", 1, 0);
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g == NULL); /* nothing accumulated */
    sg_tensor_release(y);
    /* a result: sigmoid saves its output, which mul_ then changes (PyTorch fails the same) */
    CHECK(ok(aten_sigmoid(x, &y)));
    CHECK(ok(aten_mul__Scalar(y, sg_scalar_float(2.0), &r)));
    same(y, r);
    backward_fails(y, "SigmoidBackward0", 1, 0);
    sg_tensor_release(y);
    /* y.mul_(y): the other operand is y itself, saved before the change */
    CHECK(ok(aten_mul_Scalar(x, sg_scalar_float(1.0), &y)));
    CHECK(ok(aten_mul__Tensor(y, y, &r)));
    same(y, r);
    backward_fails(y, "MulBackward0", 1, 0);
    sg_tensor_release(y);
    /* a change before the save is no change: y = x * 1; y.add_(1); y * y works */
    sg_tensor *p = NULL, *s = NULL;
    CHECK(ok(aten_mul_Scalar(x, sg_scalar_float(1.0), &y)));
    CHECK(ok(aten_add__Scalar(y, sg_scalar_int(1), sg_scalar_int(1), &r)));
    same(y, r);
    CHECK(ok(aten_mul_Tensor(y, y, &p)) && ok(aten_sum(p, NULL, &s)));
    CHECK(ok(sg_backward(&s, NULL, 1, false)));
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g);
    for (int64_t i = 0; g && i < 12; i++) CHECK(fabs(at(g, i) - 2 * (at(x, i) + 1)) < 1e-12);
    sg_tensor_release(g), sg_tensor_release(s), sg_tensor_release(p), sg_tensor_release(y);
    sg_tensor_release(c), sg_tensor_release(x);
}

/* two steps of SGD on sum(w * c): w.grad is c; under no_grad w -= lr * w.grad */
static void test_sgd_step(void) {
    sg_tensor *w = leaf(0.5, 0.1), *c = values(-1, 0.3);
    double     w0[12];
    for (int i = 0; i < 12; i++) w0[i] = at(w, i);
    for (int step = 1; step <= 2; step++) {
        sg_tensor *p = NULL, *s = NULL, *g = NULL, *u = NULL, *r = NULL;
        CHECK(ok(aten_mul_Tensor(w, c, &p)) && ok(aten_sum(p, NULL, &s)));
        CHECK(ok(sg_backward(&s, NULL, 1, false)));
        CHECK(sg_tensor_grad(w, &g) == SG_OK && g);
        bool was = sg_grad_set_enabled(false);
        CHECK(ok(aten_mul_Scalar(g, sg_scalar_float(0.1), &u)));
        CHECK(ok(aten_sub__Tensor(w, u, sg_scalar_int(1), &r)));
        same(w, r);
        sg_grad_set_enabled(was);
        CHECK(sg_tensor_set_grad(w, NULL) == SG_OK); /* zero_grad(set_to_none) */
        CHECK(sg_tensor_version(w) == (uint32_t)step);
        CHECK(sg_tensor_is_leaf(w) && sg_tensor_requires_grad(w) && !sg_tensor_grad_fn(w));
        for (int64_t i = 0; i < 12; i++)
            CHECK(fabs(at(w, i) - (w0[i] - 0.1 * step * at(c, i))) < 1e-12);
        sg_tensor_release(u), sg_tensor_release(g), sg_tensor_release(s), sg_tensor_release(p);
    }
    sg_tensor_release(c), sg_tensor_release(w);
}

#define OUT_MSG                                                                               \
    "mul(): functions with out=... arguments don't support automatic differentiation, but "   \
    "one of the arguments requires grad."

static void test_out(void) {
    sg_tensor *x = leaf(0.5, 0.1), *c = values(2, 0.5), *o = values(0, 0), *r = NULL;
    CHECK(aten_mul_out(x, c, o, &r) == SG_EINVAL && r == NULL);
    CHECK_STR(sg_last_error(), OUT_MSG);
    CHECK(sg_tensor_version(o) == 0 && at(o, 3) == 0);
    /* the out= argument requiring grad is refused too */
    sg_tensor *lo = leaf(0, 0);
    CHECK(aten_mul_out(c, c, lo, &r) == SG_EINVAL && r == NULL);
    CHECK_STR(sg_last_error(), OUT_MSG);
    /* without anything that requires grad it runs under grad mode */
    CHECK(ok(aten_mul_out(c, c, o, &r)));
    same(o, r);
    CHECK(sg_tensor_version(o) == 1 && at(o, 3) == at(c, 3) * at(c, 3));
    /* under no_grad it runs, writes, bumps, and records nothing */
    bool was = sg_grad_set_enabled(false);
    CHECK(ok(aten_mul_out(x, c, o, &r)));
    same(o, r);
    sg_grad_set_enabled(was);
    CHECK(sg_tensor_version(o) == 2 && at(o, 5) == at(x, 5) * at(c, 5));
    CHECK(!sg_tensor_requires_grad(o) && sg_tensor_version(x) == 0);
    sg_tensor_release(lo), sg_tensor_release(o), sg_tensor_release(c), sg_tensor_release(x);
}

/* copy_ (CopyBackwards, written by hand as in PyTorch): src gets the gradient, summed down
 * where it broadcast and cast to its dtype; self's old history gets zeros */
static void test_copy(void) {
    sg_tensor *x = leaf(0.5, 0.1), *t = values(0, 0), *u = NULL, *r = NULL, *p = NULL,
              *s = NULL, *g = NULL;
    CHECK(ok(aten_mul_Scalar(x, sg_scalar_float(2.0), &u)));
    CHECK(ok(aten_copy_(t, u, false, &r)));
    same(t, r);
    CHECK(sg_tensor_grad_fn(t) && strcmp(sg_tensor_grad_fn(t)->name, "CopyBackwards") == 0);
    CHECK(sg_tensor_version(t) == 1 && at(t, 3) == 2 * at(x, 3));
    CHECK(ok(aten_mul_Tensor(t, W, &p)) && ok(aten_sum(p, NULL, &s)));
    CHECK(ok(sg_backward(&s, NULL, 1, false)));
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g);
    for (int64_t i = 0; g && i < 12; i++) CHECK(fabs(at(g, i) - 2 * at(W, i)) < 1e-12);
    sg_tensor_release(g), sg_tensor_release(s), sg_tensor_release(p), sg_tensor_release(u);
    sg_tensor_release(t);
    CHECK(sg_tensor_set_grad(x, NULL) == SG_OK);

    /* y = x * 1, then y.copy_(b) with b of 4 broadcast over y's rows */
    double bv[4] = {1, 2, 3, 4};
    sg_tensor *b = make(SG_FLOAT64, (const int64_t[]){4}, 1, bv), *y = NULL, *gb = NULL;
    CHECK(sg_tensor_set_requires_grad(b, true) == SG_OK);
    CHECK(ok(aten_mul_Scalar(x, sg_scalar_float(1.0), &y)));
    CHECK(ok(aten_copy_(y, b, false, &r)));
    same(y, r);
    CHECK(ok(aten_mul_Tensor(y, W, &p)) && ok(aten_sum(p, NULL, &s)));
    CHECK(ok(sg_backward(&s, NULL, 1, false)));
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g && sg_tensor_grad(b, &gb) == SG_OK && gb);
    for (int64_t i = 0; g && i < 12; i++) CHECK(at(g, i) == 0); /* overwritten: zeros */
    for (int64_t j = 0; gb && j < 4; j++)
        CHECK(fabs(at(gb, j) - (at(W, j) + at(W, 4 + j) + at(W, 8 + j))) < 1e-12);
    sg_tensor_release(gb), sg_tensor_release(g), sg_tensor_release(s), sg_tensor_release(p);
    sg_tensor_release(y), sg_tensor_release(b);

    /* a float32 tensor takes a float64 one's values: the gradient is cast back */
    sg_tensor *t32 = make(SG_FLOAT32, S34, 2, NULL);
    CHECK(ok(aten_copy_(t32, x, false, &r)));
    same(t32, r);
    CHECK(ok(aten_sum(t32, NULL, &s)) && ok(sg_backward(&s, NULL, 1, false)));
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g && g->dtype == SG_FLOAT64);
    for (int64_t i = 0; g && i < 12; i++) CHECK(at(g, i) == 1);
    sg_tensor_release(g), sg_tensor_release(s), sg_tensor_release(t32);

    /* the leaf itself: refused under grad mode, a plain copy under no_grad */
    sg_tensor *c = values(2, 0.5);
    CHECK(aten_copy_(x, c, false, &r) == SG_EINVAL && r == NULL);
    CHECK_STR(sg_last_error(), "aten::copy_: a leaf Variable that requires grad is being used in "
                               "an in-place operation.");
    bool was = sg_grad_set_enabled(false);
    CHECK(ok(aten_copy_(x, c, false, &r)));
    same(x, r);
    sg_grad_set_enabled(was);
    CHECK(sg_tensor_version(x) == 1 && at(x, 7) == at(c, 7) && sg_tensor_is_leaf(x));
    sg_tensor_release(c), sg_tensor_release(x);
}

/* float32: add_ and mul_ in a graph, against the hand-computed gradient d/dx sum((x+1)*x) */
static void test_float32(void) {
    double     v[12];
    for (int i = 0; i < 12; i++) v[i] = 0.25 * i - 1;
    sg_tensor *x = make(SG_FLOAT32, S34, 2, v), *y = NULL, *r = NULL, *s = NULL, *g = NULL;
    CHECK(sg_tensor_set_requires_grad(x, true) == SG_OK);
    CHECK(ok(aten_mul_Scalar(x, sg_scalar_int(1), &y)));
    CHECK(ok(aten_add__Scalar(y, sg_scalar_int(1), sg_scalar_int(1), &r)));
    same(y, r);
    CHECK(ok(aten_mul__Tensor(y, x, &r)));
    same(y, r);
    CHECK(ok(aten_sum(y, NULL, &s)) && ok(sg_backward(&s, NULL, 1, false)));
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g && g->dtype == SG_FLOAT32);
    for (int64_t i = 0; g && i < 12; i++) CHECK(fabs(at(g, i) - (2 * v[i] + 1)) < 1e-6);
    sg_tensor_release(g), sg_tensor_release(s), sg_tensor_release(y), sg_tensor_release(x);
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    CHECK(aten_autograd_init() == SG_OK);
    W = values(-0.6, 0.13);
    test_middle_of_graph();
    test_gains_history();
    test_leaf_and_view_refused();
    test_shared_refused();
    test_copy_slices();
    test_saved_modified();
    test_sgd_step();
    test_out();
    test_copy();
    test_float32();
    sg_tensor_release(W);
    sg_runtime_shutdown();
    return check_result("test_cpu_autograd_inplace");
}
