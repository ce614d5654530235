/* test_cpu_autograd.c: the autograd engine over aten's CPU ops. The test plays the generator:
 * it registers Autograd kernels (at the Autograd alias key) for mul.Tensor, add.Tensor, sum and
 * mul_.Tensor, each wired as a generated one will be (run the op below Autograd, make the node,
 * set its edges, save what its backward needs, give the output its grad_fn), with hand-written
 * backward nodes. Gradients are compared with hand computation in float64 and float32.
 *
 * Built with SG_AG_CUDA (test_cuda_autograd.c includes this file), every tensor lives on the
 * GPU and the engine's own work (implied ones, sums, sum_to, casts, .grad copies) runs there;
 * it skips (77) where no GPU is usable. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"
#ifdef SG_AG_CUDA
#include "sg_aten_cuda.h"
#define AG_NAME "test_cuda_autograd"
#define AG_DEV  SG_CUDA(0)
#else
#define AG_NAME "test_cpu_autograd"
#define AG_DEV  SG_CPU
#endif

#include <math.h>
#include <string.h>

/* The keys below every Autograd key: where a generated Autograd kernel redispatches. */
static sg_keyset below(sg_keyset ks) { return sg_keyset_below(ks, SG_KEY_AUTOGRAD_CPU); }

static bool needs_grad(sg_tensor *a, sg_tensor *b) {
    return sg_grad_enabled() && (sg_tensor_requires_grad(a) || sg_tensor_requires_grad(b));
}

/* The order nodes run in: each node of the test logs its sequence number. */
static uint64_t ran[64];
static int      nran;
static void     log_run(const sg_node *n) {
    if (nran < 64) ran[nran++] = n->seq;
}

/* ---- MulBackward0: self * other ---------------------------------------------------------- */

typedef struct mul_node {
    sg_node  base;
    sg_saved self, other;
} mul_node;

static sg_status mul_apply(sg_node *n, sg_tensor *const *grads, sg_tensor **out) {
    mul_node  *m = (mul_node *)n;
    sg_tensor *v = NULL;
    sg_status  st = SG_OK;
    log_run(n);
    if (n->next[0].node && !(st = sg_saved_get(&m->other, n, &v))) {
        st = aten_mul_Tensor(grads[0], v, &out[0]);
        sg_tensor_release(v);
    }
    if (!st && n->next[1].node && !(st = sg_saved_get(&m->self, n, &v))) {
        st = aten_mul_Tensor(grads[0], v, &out[1]);
        sg_tensor_release(v);
    }
    return st;
}

static void mul_release(sg_node *n) {
    sg_saved_release(&((mul_node *)n)->self);
    sg_saved_release(&((mul_node *)n)->other);
}

static sg_status ag_mul(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor **ret) {
    sg_status st = aten_mul_Tensor_redispatch(below(ks), self, other, ret);
    if (st || !needs_grad(self, other)) return st;
    mul_node *n = NULL;
    if (!(st = sg_node_new(sizeof *n, "MulBackward0", 1, 2, mul_apply, mul_release,
                           (sg_node **)&n)) &&
        !(st = sg_node_set_next(&n->base, 0, self)) &&
        !(st = sg_node_set_next(&n->base, 1, other)) &&
        /* what each formula needs, only where its input needs a gradient */
        !(st = sg_saved_init(&n->other, n->base.next[0].node ? other : NULL)) &&
        !(st = sg_saved_init(&n->self, n->base.next[1].node ? self : NULL)))
        st = sg_tensor_set_grad_fn(*ret, &n->base, 0);
    sg_node_release(&n->base);
    if (st) {
        sg_tensor_release(*ret);
        *ret = NULL;
    }
    return st;
}

/* mul_ where neither side needs a gradient, or only self (a non-leaf: its history is rebased
 * onto a MulBackward0 whose self edge continues it); other needing one would need self's value
 * before the change saved, which this test does not play. */
static sg_status ag_mul_(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor **ret) {
    *ret = NULL;
    sg_status st = sg_autograd_check_inplace(self, "aten::mul_.Tensor");
    if (st) return st;
    bool need = needs_grad(self, other);
    if (need && sg_tensor_requires_grad(other))
        return sg_error(SG_EUNSUPPORTED, "test_cpu_autograd: mul_ with other requiring grad");
    mul_node *n = NULL;
    if (need && ((st = sg_node_new(sizeof *n, "MulBackward0", 1, 2, mul_apply, mul_release,
                                   (sg_node **)&n)) ||
                 (st = sg_node_set_next(&n->base, 0, self)) ||
                 (st = sg_saved_init(&n->other, other)))) {
        sg_node_release(&n->base);
        return st;
    }
    st = aten_mul__Tensor_redispatch(below(ks), self, other, ret);
    if (!st) sg_tensor_bump_version(self);
    if (!st && n) st = sg_tensor_set_grad_fn(self, &n->base, 0);
    if (n) sg_node_release(&n->base);
    return st;
}

/* ---- AddBackward0: self + alpha * other -------------------------------------------------- */

typedef struct add_node {
    sg_node   base;
    sg_scalar alpha;
} add_node;

static sg_status add_apply(sg_node *n, sg_tensor *const *grads, sg_tensor **out) {
    sg_scalar alpha = ((add_node *)n)->alpha;
    log_run(n);
    if (n->next[0].node) out[0] = sg_tensor_retain(grads[0]);
    if (!n->next[1].node) return SG_OK;
    if (sg_scalar_to_double(alpha) == 1) {
        out[1] = sg_tensor_retain(grads[0]);
        return SG_OK;
    }
    return aten_mul_Scalar(grads[0], alpha, &out[1]);
}

static sg_status ag_add(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_scalar alpha,
                        sg_tensor **ret) {
    sg_status st = aten_add_Tensor_redispatch(below(ks), self, other, alpha, ret);
    if (st || !needs_grad(self, other)) return st;
    add_node *n = NULL;
    if (!(st = sg_node_new(sizeof *n, "AddBackward0", 1, 2, add_apply, NULL, (sg_node **)&n)) &&
        !(st = sg_node_set_next(&n->base, 0, self)) &&
        !(st = sg_node_set_next(&n->base, 1, other))) {
        n->alpha = alpha;
        st = sg_tensor_set_grad_fn(*ret, &n->base, 0);
    }
    sg_node_release(&n->base);
    if (st) {
        sg_tensor_release(*ret);
        *ret = NULL;
    }
    return st;
}

/* ---- SumBackward0: grad.expand(self.sizes()) --------------------------------------------- */

typedef struct sum_node {
    sg_node base;
    int32_t ndim;
    int64_t sizes[8];
} sum_node;

static sg_status sum_apply(sg_node *n, sg_tensor *const *grads, sg_tensor **out) {
    sum_node   *s = (sum_node *)n;
    sg_int_list l = {s->sizes, s->ndim};
    log_run(n);
    return aten_expand(grads[0], l, false, &out[0]);
}

static sg_status ag_sum(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype, sg_tensor **ret) {
    sg_status st = aten_sum_redispatch(below(ks), self, dtype, ret);
    if (st || !needs_grad(self, NULL)) return st;
    sum_node *n = NULL;
    if (self->ndim > 8) return sg_error(SG_EUNSUPPORTED, "test_cpu_autograd: sum of > 8 dims");
    if (!(st = sg_node_new(sizeof *n, "SumBackward0", 1, 1, sum_apply, NULL, (sg_node **)&n)) &&
        !(st = sg_node_set_next(&n->base, 0, self))) {
        n->ndim = self->ndim;
        memcpy(n->sizes, self->sizes, (size_t)self->ndim * sizeof *self->sizes);
        st = sg_tensor_set_grad_fn(*ret, &n->base, 0);
    }
    sg_node_release(&n->base);
    if (st) {
        sg_tensor_release(*ret);
        *ret = NULL;
    }
    return st;
}

/* ---- helpers ----------------------------------------------------------------------------- */

static const double A[6] = {0.5, -1.25, 2, 3.5, -0.75, 1.5};
static const double B[6] = {3, 0.25, -2.5, 1.75, 4, -0.5};
static const int64_t S6[1] = {6}, S23[2] = {2, 3}, S3[1] = {3};

/* A tensor of values v on the device under test. */
static sg_tensor *make_on(sg_dtype dt, const int64_t *sizes, int32_t n, const double *v) {
    sg_tensor *h = make(dt, sizes, n, v), *t = NULL;
    CHECK(sg_tensor_to(h, AG_DEV, &t) == SG_OK);
    sg_tensor_release(h);
    return t;
}

/* Element i of t, read back on the host. */
static double val(sg_tensor *t, int64_t i) {
    sg_tensor *h = NULL;
    double     v = NAN;
    if (sg_tensor_to(t, SG_CPU, &h) == SG_OK) v = at(h, i);
    sg_tensor_release(h);
    return v;
}

static sg_tensor *leaf(sg_dtype dt, const int64_t *sizes, int32_t n, const double *v) {
    sg_tensor *t = make_on(dt, sizes, n, v);
    CHECK(sg_tensor_set_requires_grad(t, true) == SG_OK);
    return t;
}

static sg_tensor *grad_of(sg_tensor *t) {
    sg_tensor *g = NULL;
    CHECK(sg_tensor_grad(t, &g) == SG_OK);
    return g;
}

/* v rounded to dt, as the kernels store it */
static double in_dt(sg_dtype dt, double v) { return dt == SG_FLOAT32 ? (double)(float)v : v; }

/* .grad of t equals want[] exactly (tol 0) or within tol, element by element. */
static bool grad_is(sg_tensor *t, const double *want, int64_t n, double tol) {
    sg_tensor *g = grad_of(t), *h = NULL;
    bool       ok = g && sg_tensor_numel(g) == n && g->dtype == t->dtype &&
              sg_device_eq(g->device, t->device) && sg_tensor_to(g, SG_CPU, &h) == SG_OK;
    for (int64_t i = 0; ok && i < n; i++) {
        double w = in_dt((sg_dtype)t->dtype, want[i]);
        if (!(at(h, i) == w || fabs(at(h, i) - w) <= tol * fabs(w))) {
            fprintf(stderr, "  grad element %lld: got %.17g, want %.17g\n", (long long)i,
                    at(h, i), w);
            ok = false;
        }
    }
    sg_tensor_release(h);
    sg_tensor_release(g);
    return ok;
}

/* y = (a*b + a).sum() */
static sg_tensor *mul_add_sum(sg_tensor *a, sg_tensor *b) {
    sg_tensor *c = NULL, *d = NULL, *y = NULL;
    CHECK(aten_mul_Tensor(a, b, &c) == SG_OK);
    CHECK(aten_add_Tensor(c, a, sg_scalar_int(1), &d) == SG_OK);
    CHECK(aten_sum(d, NULL, &y) == SG_OK);
    sg_tensor_release(c);
    sg_tensor_release(d);
    return y;
}

/* ---- the tests --------------------------------------------------------------------------- */

static void test_mul_add_sum(sg_dtype dt) {
    sg_tensor *a = leaf(dt, S6, 1, A), *b = leaf(dt, S6, 1, B);
    sg_tensor *y = mul_add_sum(a, b);
    CHECK(y && sg_tensor_requires_grad(y) && !sg_tensor_is_leaf(y));
    CHECK(y && strcmp(sg_tensor_grad_fn(y)->name, "SumBackward0") == 0);
    nran = 0;
    CHECK(sg_backward(&y, NULL, 1, false) == SG_OK);
    /* a.grad = b + 1, b.grad = a, exactly */
    double want_a[6], want_b[6];
    for (int i = 0; i < 6; i++) {
        want_a[i] = in_dt(dt, in_dt(dt, B[i]) + 1);
        want_b[i] = A[i];
    }
    CHECK(grad_is(a, want_a, 6, 0));
    CHECK(grad_is(b, want_b, 6, 0));
    /* Sum, Add, Mul: the latest node first */
    CHECK(nran == 3 && ran[0] > ran[1] && ran[1] > ran[2]);
    /* the grads are tensors of their own, laid out as the leaves */
    sg_tensor *ga = grad_of(a);
    CHECK(ga && sg_tensor_is_contiguous(ga) && ga->storage != a->storage && ga->ag == NULL);
    sg_tensor_release(ga);
    sg_tensor_release(y);
    sg_tensor_release(a);
    sg_tensor_release(b);
}

/* One tensor reaching a node by several paths: its gradients are summed. */
static void test_diamond(sg_dtype dt) {
    sg_tensor *a = leaf(dt, S6, 1, A), *b = make_on(dt, S6, 1, B), *aa = NULL, *y = NULL;
    CHECK(aten_mul_Tensor(a, a, &aa) == SG_OK); /* both edges to a's accumulator */
    CHECK(aten_sum(aa, NULL, &y) == SG_OK);
    CHECK(sg_backward(&y, NULL, 1, false) == SG_OK);
    double want[6];
    for (int i = 0; i < 6; i++) want[i] = 2 * A[i];
    CHECK(grad_is(a, want, 6, 0));
    sg_tensor_release(y);
    sg_tensor_release(aa);
    /* c = a*b; y = (c*c + c).sum(): dy/dc = 2c + 1 meets at c's node from three edges */
    CHECK(sg_tensor_set_grad(a, NULL) == SG_OK);
    sg_tensor *c = NULL, *cc = NULL, *d = NULL;
    CHECK(aten_mul_Tensor(a, b, &c) == SG_OK);
    CHECK(aten_mul_Tensor(c, c, &cc) == SG_OK);
    CHECK(aten_add_Tensor(cc, c, sg_scalar_int(1), &d) == SG_OK);
    CHECK(aten_sum(d, NULL, &y) == SG_OK);
    CHECK(sg_backward(&y, NULL, 1, false) == SG_OK);
    for (int i = 0; i < 6; i++) {
        double ci = in_dt(dt, in_dt(dt, A[i]) * in_dt(dt, B[i]));
        want[i] = (2 * ci + 1) * B[i];
    }
    CHECK(grad_is(a, want, 6, dt == SG_FLOAT32 ? 1e-6 : 1e-15));
    sg_tensor_release(y);
    sg_tensor_release(d);
    sg_tensor_release(cc);
    sg_tensor_release(c);
    sg_tensor_release(b);
    sg_tensor_release(a);
}

static void test_retain_graph(void) {
    sg_tensor *a = leaf(SG_FLOAT64, S6, 1, A), *b = leaf(SG_FLOAT64, S6, 1, B);
    sg_tensor *y = mul_add_sum(a, b);
    double     want_a[6], want_b[6];
    CHECK(sg_backward(&y, NULL, 1, false) == SG_OK);
    CHECK(sg_backward(&y, NULL, 1, false) == SG_ESTATE);
    CHECK_STR(sg_last_error(), "sg_backward: Trying to backward through the graph a second time: "
                               "the values MulBackward0 saved were freed by the first backward "
                               "(pass retain_graph to keep them)");
    for (int i = 0; i < 6; i++) want_a[i] = B[i] + 1, want_b[i] = A[i];
    CHECK(grad_is(a, want_a, 6, 0)); /* unchanged by the refused pass */
    sg_tensor_release(y);
    /* with retain_graph, twice: the gradients accumulate */
    CHECK(sg_tensor_set_grad(a, NULL) == SG_OK && sg_tensor_set_grad(b, NULL) == SG_OK);
    y = mul_add_sum(a, b);
    CHECK(sg_backward(&y, NULL, 1, true) == SG_OK);
    CHECK(sg_backward(&y, NULL, 1, true) == SG_OK);
    for (int i = 0; i < 6; i++) want_a[i] = 2 * (B[i] + 1), want_b[i] = 2 * A[i];
    CHECK(grad_is(a, want_a, 6, 0));
    CHECK(grad_is(b, want_b, 6, 0));
    sg_tensor_release(y);
    sg_tensor_release(a);
    sg_tensor_release(b);
}

static void test_inplace(void) {
    sg_tensor *a = leaf(SG_FLOAT64, S6, 1, A), *c = make_on(SG_FLOAT64, S6, 1, B);
    sg_tensor *k = make_on(SG_FLOAT64, S6, 1, (double[]){2, 2, 2, 2, 2, 2});
    sg_tensor *ac = NULL, *y = NULL, *r = NULL;
    CHECK(aten_mul_Tensor(a, c, &ac) == SG_OK); /* saves c for a's gradient */
    CHECK(aten_sum(ac, NULL, &y) == SG_OK);
    CHECK(aten_mul__Tensor(c, k, &r) == SG_OK && r == c);
    sg_tensor_release(r);
    CHECK(sg_tensor_version(c) == 1);
    CHECK(sg_backward(&y, NULL, 1, false) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "sg_backward: MulBackward0: one of the variables needed for "
                               "gradient computation has been modified by an inplace operation: "
                               "[float64 [6]], which is saved by MulBackward0, is at version 1; "
                               "expected version 0 instead.");
    sg_tensor *g = grad_of(a);
    CHECK(g == NULL);
    sg_tensor_release(y);
    sg_tensor_release(ac);
    /* a leaf that requires grad is refused in place, except under no_grad (an SGD step) */
    CHECK(aten_mul__Tensor(a, k, &r) == SG_EINVAL && r == NULL);
    CHECK_STR(sg_last_error(), "aten::mul_.Tensor: a leaf Variable that requires grad is being "
                               "used in an in-place operation.");
    bool was = sg_grad_set_enabled(false);
    CHECK(aten_mul__Tensor(a, k, &r) == SG_OK && r == a && sg_tensor_version(a) == 1);
    sg_grad_set_enabled(was);
    CHECK(sg_tensor_is_leaf(a) && val(a, 0) == 1);
    sg_tensor_release(r);
    /* an in-place op on a computed tensor rebases its history: y = (a*b*k).sum() */
    sg_tensor *b = make_on(SG_FLOAT64, S6, 1, B), *ab = NULL;
    CHECK(aten_mul_Tensor(a, b, &ab) == SG_OK);
    sg_node *first = sg_tensor_grad_fn(ab);
    CHECK(aten_mul__Tensor(ab, k, &r) == SG_OK && r == ab);
    sg_tensor_release(r);
    CHECK(sg_tensor_grad_fn(ab) != first && sg_tensor_grad_fn(ab)->next[0].node == first);
    CHECK(aten_sum(ab, NULL, &y) == SG_OK);
    CHECK(sg_backward(&y, NULL, 1, false) == SG_OK);
    double want[6];
    for (int i = 0; i < 6; i++) want[i] = B[i] * 2;
    CHECK(grad_is(a, want, 6, 0));
    sg_tensor_release(y);
    sg_tensor_release(ab);
    sg_tensor_release(b);
    sg_tensor_release(k);
    sg_tensor_release(c);
    sg_tensor_release(a);
}

static void test_no_grad(void) {
    sg_tensor *a = leaf(SG_FLOAT32, S6, 1, A), *b = make_on(SG_FLOAT32, S6, 1, B);
    sg_tensor *y = NULL, *z = NULL;
    bool       was = sg_grad_set_enabled(false);
    CHECK(aten_mul_Tensor(a, b, &y) == SG_OK);
    sg_grad_set_enabled(was);
    CHECK(y && y->ag == NULL && !sg_tensor_requires_grad(y));
    /* grad mode on, but no input requires grad: no graph either */
    CHECK(aten_mul_Tensor(b, b, &z) == SG_OK && z->ag == NULL);
    CHECK(sg_backward(&y, NULL, 1, false) == SG_EINVAL);
    sg_tensor_release(z);
    sg_tensor_release(y);
    sg_tensor_release(b);
    sg_tensor_release(a);
}

/* A gradient of a broadcast shape is summed down to its input's; one of another dtype cast. */
static void test_broadcast_and_cast(void) {
    sg_tensor *a = leaf(SG_FLOAT64, S23, 2, A), *w = leaf(SG_FLOAT64, S3, 1, B);
    sg_tensor *aw = NULL, *y = NULL;
    CHECK(aten_mul_Tensor(a, w, &aw) == SG_OK);
    CHECK(aten_sum(aw, NULL, &y) == SG_OK);
    CHECK(sg_backward(&y, NULL, 1, false) == SG_OK);
    double want_w[3], want_a[6];
    for (int j = 0; j < 3; j++) want_w[j] = A[j] + A[3 + j];
    for (int i = 0; i < 6; i++) want_a[i] = B[i % 3];
    CHECK(grad_is(w, want_w, 3, 0));
    CHECK(grad_is(a, want_a, 6, 0));
    sg_tensor *gw = grad_of(w);
    CHECK(gw && shape_is(gw, S3, 1));
    sg_tensor_release(gw);
    sg_tensor_release(y);
    sg_tensor_release(aw);
    /* float32 leaf times a float64 tensor: the product and its gradient are float64, and the
     * leaf's .grad float32 */
    sg_tensor *f = leaf(SG_FLOAT32, S6, 1, A), *d = make_on(SG_FLOAT64, S6, 1, B), *fd = NULL;
    CHECK(aten_mul_Tensor(f, d, &fd) == SG_OK && fd->dtype == SG_FLOAT64);
    CHECK(aten_sum(fd, NULL, &y) == SG_OK);
    CHECK(sg_backward(&y, NULL, 1, false) == SG_OK);
    CHECK(grad_is(f, B, 6, 0));
    sg_tensor_release(y);
    sg_tensor_release(fd);
    sg_tensor_release(d);
    sg_tensor_release(f);
    sg_tensor_release(w);
    sg_tensor_release(a);
}

/* A root of several elements takes the gradient given. */
static void test_given_grad(sg_dtype dt) {
    sg_tensor *a = leaf(dt, S6, 1, A), *b = make_on(dt, S6, 1, B), *y = NULL;
    sg_tensor *g = make_on(dt, S6, 1, (double[]){1, 2, 3, 4, 5, 6});
    CHECK(aten_mul_Tensor(a, b, &y) == SG_OK);
    CHECK(sg_backward(&y, &g, 1, false) == SG_OK);
    double want[6];
    for (int i = 0; i < 6; i++) want[i] = (i + 1) * in_dt(dt, B[i]);
    CHECK(grad_is(a, want, 6, 0));
    sg_tensor_release(g);
    sg_tensor_release(y);
    sg_tensor_release(b);
    sg_tensor_release(a);
}

int main(void) {
#ifdef SG_AG_CUDA
    const char *why = NULL;
    if (sg_device_count(SG_DEV_CUDA, &why) == 0) SKIP("no usable GPU: %s", why ? why : "?");
    CHECK(sg_aten_cuda_init() == SG_OK);
#else
    CHECK(sg_aten_cpu_init() == SG_OK);
#endif
    CHECK(aten_mul_Tensor_register(SG_KEY_AUTOGRAD, ag_mul, NULL) == SG_OK);
    CHECK(aten_mul__Tensor_register(SG_KEY_AUTOGRAD, ag_mul_, NULL) == SG_OK);
    CHECK(aten_add_Tensor_register(SG_KEY_AUTOGRAD, ag_add, NULL) == SG_OK);
    CHECK(aten_sum_register(SG_KEY_AUTOGRAD, ag_sum, NULL) == SG_OK);
    test_mul_add_sum(SG_FLOAT64);
    test_mul_add_sum(SG_FLOAT32);
    test_diamond(SG_FLOAT64);
    test_diamond(SG_FLOAT32);
    test_retain_graph();
    test_inplace();
    test_no_grad();
    test_broadcast_and_cast();
    test_given_grad(SG_FLOAT64);
    test_given_grad(SG_FLOAT32);
    sg_runtime_shutdown();
    return check_result(AG_NAME);
}
