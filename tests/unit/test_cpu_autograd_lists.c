/* test_cpu_autograd_lists.c: the generated Autograd kernels of ops with a Tensor[] input (cat,
 * stack: one edge per element) or a Tensor[] result (split.Tensor, split_with_sizes, unbind,
 * and chunk and split.sizes through them: one node input per piece) on aten's CPU ops, against
 * central differences in float64 (docs/autograd.md). Cat of one to three tensors of different
 * sizes along dim, a negative dim, an element that does not require grad (no .grad, the others
 * right), one tensor twice, an element with a history, an empty 1-dim element (cat's legacy
 * rule), float32 and float64 elements together (each gradient in its input's dtype); stack;
 * pieces of which only some reach the loss (the others' gradients are zeros); unbind_backward's
 * zeros for undefined gradients; no_grad.
 *
 * Built with SG_AG_CUDA (test_cuda_autograd_lists.c includes this file), every tensor lives on
 * the GPU, the helpers and the engine run there, and values are read back through host copies;
 * it skips (77) where no GPU is usable. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"
#include "aten_autograd.h"
#ifdef SG_AG_CUDA
#include "sg_aten_cuda.h"
#define AG_NAME "test_cuda_autograd_lists"
#define AG_DEV  SG_CUDA(0)
#else
#define AG_NAME "test_cpu_autograd_lists"
#define AG_DEV  SG_CPU
#endif

#include <string.h>

enum { MAXIN = 3 };

static double val(int64_t i, int salt) { return 0.25 * (double)((i * 7 + salt * 3) % 11) - 1.1; }

/* A tensor of the test's device made from values v (zeros where NULL). */
static sg_tensor *on_dev(sg_dtype dt, const int64_t *sizes, int32_t nd, const double *v) {
    sg_tensor *h = make(dt, sizes, nd, v), *t = NULL;
    CHECK(h && sg_tensor_to(h, AG_DEV, &t) == SG_OK);
    sg_tensor_release(h);
    return t;
}

/* A host copy of t, to read with at() (NULL stays NULL). */
static sg_tensor *host(sg_tensor *t) {
    sg_tensor *h = NULL;
    if (t) CHECK(sg_tensor_to(t, SG_CPU, &h) == SG_OK);
    return h;
}

/* Element i of t, wherever t is. */
static double at_any(sg_tensor *t, int64_t i) {
    sg_tensor *h = host(t);
    double v = h ? at(h, i) : NAN;
    sg_tensor_release(h);
    return v;
}

/* A float64 leaf of the given shape, requiring grad where rg. */
static sg_tensor *leaf(const int64_t *sizes, int32_t nd, int salt, bool rg) {
    double v[64];
    for (int i = 0; i < 64; i++) v[i] = val(i, salt);
    sg_tensor *t = on_dev(SG_FLOAT64, sizes, nd, v);
    if (rg) CHECK(sg_tensor_set_requires_grad(t, true) == SG_OK);
    return t;
}

/* sum(y * w) for fixed weights w of y's shape and dtype (salt picks them), added into *acc
 * (a new reference; NULL: none yet). */
static void add_weighted(sg_tensor *y, int salt, sg_tensor **acc) {
    int64_t n = sg_tensor_numel(y);
    double *v = calloc((size_t)n + 1, sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = 0.5 + 0.13 * (double)((i * 5 + salt) % 7);
    sg_tensor *w = on_dev((sg_dtype)y->dtype, y->sizes, y->ndim, v), *p = NULL, *s = NULL;
    free(v);
    CHECK(aten_mul_Tensor(y, w, &p) == SG_OK);
    CHECK(aten_sum(p, NULL, &s) == SG_OK);
    if (*acc && s) {
        sg_tensor *t = NULL;
        CHECK(aten_add_Tensor(*acc, s, sg_scalar_int(1), &t) == SG_OK);
        sg_tensor_release(*acc), sg_tensor_release(s);
        *acc = t;
    } else {
        *acc = s;
    }
    sg_tensor_release(w), sg_tensor_release(p);
}

/* A case: the loss of inputs xs (a 0-dim tensor). */
typedef sg_status (*loss_fn)(sg_tensor *const *xs, int n, sg_tensor **loss);

static double loss_of(loss_fn f, sg_tensor *const *xs, int n, sg_tensor **keep) {
    sg_tensor *l = NULL;
    CHECK(f(xs, n, &l) == SG_OK);
    double v = l ? at_any(l, 0) : NAN;
    if (keep) *keep = l;
    else sg_tensor_release(l);
    return v;
}

/* Backward from the loss, then each input's .grad against central differences of the loss (an
 * input that does not require grad must get no .grad). */
static void fd_check(const char *what, loss_fn f, sg_tensor *const *xs, int n) {
    sg_tensor *l = NULL;
    loss_of(f, xs, n, &l);
    sg_status st = l ? sg_backward(&l, NULL, 1, false) : SG_EINVAL;
    if (st != SG_OK) fprintf(stderr, "%s: %s\n", what, sg_last_error());
    CHECK(st == SG_OK);
    sg_tensor_release(l);
    bool was = sg_grad_set_enabled(false);
    for (int k = 0; k < n; k++) {
        sg_tensor *g = NULL;
        CHECK(sg_tensor_grad(xs[k], &g) == SG_OK);
        if (!sg_tensor_requires_grad(xs[k])) {
            if (g) fprintf(stderr, "%s: input %d got a .grad it does not require\n", what, k);
            CHECK(!g);
            continue;
        }
        if (!g) fprintf(stderr, "%s: input %d got no .grad\n", what, k);
        CHECK(g && shape_is(g, xs[k]->sizes, xs[k]->ndim) && g->dtype == xs[k]->dtype);
        CHECK(g && sg_device_eq(g->device, xs[k]->device));
        sg_tensor *hx = host(xs[k]), *hg = host(g);
        for (int64_t i = 0; hg && hx && i < sg_tensor_numel(xs[k]); i++) {
            double *xd = sg_tensor_data(hx);
            const double h = 1e-6, keep = xd[i];
            double side[2];
            for (int s = 0; s < 2; s++) { /* the loss with x[i] +- h, every use of xs[k] */
                xd[i] = keep + (s ? -h : h);
                sg_tensor *moved = NULL, *ys[MAXIN + 8];
                CHECK(sg_tensor_to(hx, AG_DEV, &moved) == SG_OK);
                for (int j = 0; j < n; j++) ys[j] = xs[j] == xs[k] ? moved : xs[j];
                side[s] = loss_of(f, ys, n, NULL);
                sg_tensor_release(moved);
            }
            xd[i] = keep;
            double up = side[0], down = side[1];
            double fd = (up - down) / (2 * h), got = at(hg, i);
            if (!(fabs(got - fd) <= 1e-6 * (1 + fabs(fd)))) {
                fprintf(stderr, "%s: input %d: grad[%lld] = %.9g, finite differences %.9g\n",
                        what, k, (long long)i, got, fd);
                CHECK(false);
                break;
            }
        }
        sg_tensor_release(g), sg_tensor_release(hx), sg_tensor_release(hg);
    }
    sg_grad_set_enabled(was);
}

/* ---- Tensor[] inputs ------------------------------------------------------------------------ */

static int64_t g_dim;

static sg_status cat_loss(sg_tensor *const *xs, int n, sg_tensor **loss) {
    sg_tensor *y = NULL;
    sg_status st = aten_cat((sg_tensor_list){xs, n}, g_dim, &y);
    if (st == SG_OK) add_weighted(y, 1, loss);
    sg_tensor_release(y);
    return st;
}

/* cat([x * x, y], dim): an element with a history of its own (its edge leads to MulBackward0) */
static sg_status cat_chain_loss(sg_tensor *const *xs, int n, sg_tensor **loss) {
    (void)n;
    sg_tensor *sq = NULL;
    sg_status st = aten_mul_Tensor(xs[0], xs[0], &sq);
    if (st != SG_OK) return st;
    sg_tensor *items[2] = {sq, xs[1]};
    st = cat_loss(items, 2, loss);
    sg_tensor_release(sq);
    return st;
}

static sg_status stack_loss(sg_tensor *const *xs, int n, sg_tensor **loss) {
    sg_tensor *y = NULL;
    sg_status st = aten_stack((sg_tensor_list){xs, n}, g_dim, &y);
    if (st == SG_OK) add_weighted(y, 2, loss);
    sg_tensor_release(y);
    return st;
}

static void release_all(sg_tensor **xs, int n) {
    for (int i = 0; i < n; i++) sg_tensor_release(xs[i]);
}

static void test_cat(void) {
    static const int64_t S23[2] = {2, 3}, S21[2] = {2, 1}, S22[2] = {2, 2}, S43[2] = {4, 3};
    sg_tensor *xs[MAXIN];
    /* one tensor */
    g_dim = 0;
    xs[0] = leaf(S23, 2, 1, true);
    fd_check("cat([x], 0)", cat_loss, xs, 1);
    sg_tensor *y = NULL;
    CHECK(aten_cat((sg_tensor_list){xs, 1}, 0, &y) == SG_OK);
    CHECK(sg_tensor_grad_fn(y) && !strcmp(sg_tensor_grad_fn(y)->name, "CatBackward0"));
    CHECK(sg_tensor_grad_fn(y) && sg_tensor_grad_fn(y)->nnext == 1);
    sg_tensor_release(y);
    release_all(xs, 1);
    /* two, of different sizes along dim 0 */
    xs[0] = leaf(S23, 2, 1, true), xs[1] = leaf(S43, 2, 2, true);
    fd_check("cat([2x3, 4x3], 0)", cat_loss, xs, 2);
    release_all(xs, 2);
    /* three along dim -1, sizes 1, 3, 2: one edge per element */
    g_dim = -1;
    xs[0] = leaf(S21, 2, 1, true), xs[1] = leaf(S23, 2, 2, true), xs[2] = leaf(S22, 2, 3, true);
    fd_check("cat([2x1, 2x3, 2x2], -1)", cat_loss, xs, 3);
    CHECK(aten_cat((sg_tensor_list){xs, 3}, -1, &y) == SG_OK);
    CHECK(sg_tensor_grad_fn(y) && sg_tensor_grad_fn(y)->nnext == 3);
    sg_tensor_release(y);
    release_all(xs, 3);
    /* the middle one does not require grad: no edge, no .grad; the others' are right */
    xs[0] = leaf(S21, 2, 1, true), xs[1] = leaf(S23, 2, 2, false), xs[2] = leaf(S22, 2, 3, true);
    fd_check("cat([x, c, z], -1), c constant", cat_loss, xs, 3);
    CHECK(aten_cat((sg_tensor_list){xs, 3}, -1, &y) == SG_OK);
    CHECK(sg_tensor_grad_fn(y) && sg_tensor_grad_fn(y)->next[1].node == NULL &&
          sg_tensor_grad_fn(y)->next[0].node && sg_tensor_grad_fn(y)->next[2].node);
    sg_tensor_release(y);
    release_all(xs, 3);
    /* one tensor twice: both gradients reach it, summed */
    xs[0] = leaf(S21, 2, 1, true), xs[1] = xs[0];
    fd_check("cat([x, x], -1)", cat_loss, xs, 2);
    sg_tensor_release(xs[0]);
    /* an element computed from a leaf */
    g_dim = 0;
    xs[0] = leaf(S23, 2, 1, true), xs[1] = leaf(S43, 2, 2, true);
    fd_check("cat([x * x, y], 0)", cat_chain_loss, xs, 2);
    release_all(xs, 2);
    g_dim = -1;
    /* none requires grad: no node */
    xs[0] = leaf(S21, 2, 1, false), xs[1] = leaf(S23, 2, 2, false);
    CHECK(aten_cat((sg_tensor_list){xs, 2}, -1, &y) == SG_OK && !sg_tensor_grad_fn(y));
    sg_tensor_release(y);
    release_all(xs, 2);
    /* an empty 1-dim element takes part whatever its shape (cat's legacy rule): its gradient
     * is empty too, the dim wraps against the others */
    g_dim = -1;
    xs[0] = leaf(S23, 2, 1, true), xs[1] = leaf((const int64_t[]){0}, 1, 2, true);
    xs[2] = leaf(S22, 2, 3, true);
    fd_check("cat([2x3, [0], 2x2], -1)", cat_loss, xs, 3);
    sg_tensor *g = NULL;
    CHECK(sg_tensor_grad(xs[1], &g) == SG_OK && g && g->ndim == 1 && g->sizes[0] == 0);
    CHECK(g && sg_device_eq(g->device, AG_DEV));
    sg_tensor_release(g);
    release_all(xs, 3);
    /* the empty one first: dim -1 wraps against the second */
    xs[0] = leaf((const int64_t[]){0}, 1, 2, true), xs[1] = leaf(S23, 2, 1, true);
    fd_check("cat([[0], 2x3], -1)", cat_loss, xs, 2);
    release_all(xs, 2);
}

/* more elements than the engine's in-place room for a node's outputs (8): cat of 10 tensors,
 * every other one requiring grad, and the 12 pieces of unbind, one of them in the loss */
static void test_many(void) {
    enum { N = 10 };
    sg_tensor *xs[N], *y = NULL, *loss = NULL;
    for (int i = 0; i < N; i++) xs[i] = leaf((const int64_t[]){1, 2}, 2, i, i % 2 == 0);
    CHECK(aten_cat((sg_tensor_list){xs, N}, 0, &y) == SG_OK);
    CHECK(y && sg_tensor_grad_fn(y) && sg_tensor_grad_fn(y)->nnext == N);
    add_weighted(y, 5, &loss);
    CHECK(loss && sg_backward(&loss, NULL, 1, false) == SG_OK);
    for (int i = 0; i < N; i++) {
        sg_tensor *g = NULL;
        CHECK(sg_tensor_grad(xs[i], &g) == SG_OK && (g != NULL) == (i % 2 == 0));
        for (int64_t j = 0; g && j < 2; j++) /* y's row i: weights 2i + j */
            CHECK(fabs(at_any(g, j) - (0.5 + 0.13 * (double)(((2 * i + j) * 5 + 5) % 7))) < 1e-12);
        sg_tensor_release(g);
    }
    sg_tensor_release(y), sg_tensor_release(loss);
    release_all(xs, N);
    sg_tensor *x = leaf((const int64_t[]){12}, 1, 1, true), *g = NULL;
    sg_tensor_list l = {NULL, 0};
    CHECK(aten_unbind_int(x, 0, &l) == SG_OK && l.len == 12);
    CHECK(l.len == 12 && sg_tensor_grad_fn(l.items[11])->nin == 12);
    CHECK(l.len == 12 && sg_backward((sg_tensor *const *)&l.items[10], NULL, 1, false) == SG_OK);
    CHECK(sg_tensor_grad(x, &g) == SG_OK && g);
    for (int64_t j = 0; g && j < 12; j++) CHECK(at_any(g, j) == (j == 10 ? 1 : 0));
    sg_tensor_release(g), sg_tensor_release(x);
    sg_tensor_list_release(&l);
}

/* float32 and float64 inputs: cat computes in float64, each gradient comes back in its input's
 * dtype (the weights' slice that input filled) */
static void test_cat_mixed(void) {
    static const int64_t S23[2] = {2, 3}, S22[2] = {2, 2};
    double v[6] = {1, 2, 3, 4, 5, 6};
    sg_tensor *a = on_dev(SG_FLOAT32, S23, 2, v), *b = on_dev(SG_FLOAT64, S22, 2, v), *y = NULL;
    CHECK(sg_tensor_set_requires_grad(a, true) == SG_OK);
    CHECK(sg_tensor_set_requires_grad(b, true) == SG_OK);
    sg_tensor *xs[2] = {a, b}, *loss = NULL, *ga = NULL, *gb = NULL;
    CHECK(aten_cat((sg_tensor_list){xs, 2}, 1, &y) == SG_OK && y && y->dtype == SG_FLOAT64);
    add_weighted(y, 4, &loss);
    CHECK(loss && sg_backward(&loss, NULL, 1, false) == SG_OK);
    CHECK(sg_tensor_grad(a, &ga) == SG_OK && ga && ga->dtype == SG_FLOAT32);
    CHECK(sg_tensor_grad(b, &gb) == SG_OK && gb && gb->dtype == SG_FLOAT64);
    CHECK(shape_is(ga, S23, 2) && shape_is(gb, S22, 2));
    /* y is 2x5: a fills columns 0..2, b columns 3..4; w[i] = 0.5 + 0.13 * ((5i + 4) % 7) */
    for (int64_t r = 0; ga && gb && r < 2; r++)
        for (int64_t c = 0; c < 5; c++) {
            int64_t i = r * 5 + c;
            double w = 0.5 + 0.13 * (double)((i * 5 + 4) % 7);
            double got = c < 3 ? at_any(ga, r * 3 + c) : at_any(gb, r * 2 + (c - 3));
            CHECK(fabs(got - w) < (c < 3 ? 1e-6 : 1e-12));
        }
    sg_tensor_release(ga), sg_tensor_release(gb), sg_tensor_release(loss), sg_tensor_release(y);
    sg_tensor_release(a), sg_tensor_release(b);
}

static void test_stack(void) {
    static const int64_t S23[2] = {2, 3};
    sg_tensor *xs[MAXIN];
    for (int64_t d = -3; d <= 0; d += 3) { /* dims -3 and 0 */
        g_dim = d;
        xs[0] = leaf(S23, 2, 1, true), xs[1] = leaf(S23, 2, 2, false);
        xs[2] = leaf(S23, 2, 3, true);
        fd_check(d < 0 ? "stack(3 x 2x3, -3), one constant" : "stack(3 x 2x3, 0)", stack_loss,
                 xs, 3);
        release_all(xs, 3);
    }
    g_dim = -1;
    xs[0] = leaf(S23, 2, 1, true), xs[1] = leaf(S23, 2, 2, true);
    fd_check("stack(2 x 2x3, -1)", stack_loss, xs, 2);
    sg_tensor *y = NULL;
    CHECK(aten_stack((sg_tensor_list){xs, 2}, -1, &y) == SG_OK);
    CHECK(sg_tensor_grad_fn(y) && !strcmp(sg_tensor_grad_fn(y)->name, "StackBackward0"));
    sg_tensor_release(y);
    release_all(xs, 2);
}

/* ---- Tensor[] results ----------------------------------------------------------------------- */

/* which pieces reach the loss: bit i for piece i */
static unsigned g_used;

static sg_status pieces_loss(sg_status st, sg_tensor_list l, sg_tensor **loss) {
    for (int32_t i = 0; st == SG_OK && i < l.len; i++)
        if (g_used & (1u << i)) add_weighted(l.items[i], 3 + i, loss);
    if (st == SG_OK && !*loss) st = aten_sum(l.items[0], NULL, loss);
    sg_tensor_list_release(&l);
    return st;
}

static sg_status split_loss(sg_tensor *const *xs, int n, sg_tensor **loss) {
    (void)n;
    sg_tensor_list l = {NULL, 0};
    return pieces_loss(aten_split_Tensor(xs[0], 2, g_dim, &l), l, loss);
}

static const int64_t SIZES[3] = {1, 3, 1};

static sg_status split_with_sizes_loss(sg_tensor *const *xs, int n, sg_tensor **loss) {
    (void)n;
    sg_tensor_list l = {NULL, 0};
    return pieces_loss(aten_split_with_sizes(xs[0], (sg_int_list){SIZES, 3}, g_dim, &l), l, loss);
}

static sg_status split_sizes_loss(sg_tensor *const *xs, int n, sg_tensor **loss) {
    (void)n;
    sg_tensor_list l = {NULL, 0};
    return pieces_loss(aten_split_sizes(xs[0], (sg_int_list){SIZES, 3}, g_dim, &l), l, loss);
}

static sg_status unbind_loss(sg_tensor *const *xs, int n, sg_tensor **loss) {
    (void)n;
    sg_tensor_list l = {NULL, 0};
    return pieces_loss(aten_unbind_int(xs[0], g_dim, &l), l, loss);
}

static sg_status chunk_loss(sg_tensor *const *xs, int n, sg_tensor **loss) {
    (void)n;
    sg_tensor_list l = {NULL, 0};
    return pieces_loss(aten_chunk(xs[0], 3, g_dim, &l), l, loss);
}

/* The grad_fn of every piece of l: one node, named name, with an input per piece. */
static void expect_node(sg_status st, sg_tensor_list l, const char *name) {
    CHECK(st == SG_OK && l.len > 1);
    sg_node *n = l.len ? sg_tensor_grad_fn(l.items[0]) : NULL;
    if (!n || strcmp(n->name, name) != 0)
        fprintf(stderr, "want %s, got %s\n", name, n ? n->name : "no grad_fn");
    CHECK(n && !strcmp(n->name, name) && n->nin == (uint32_t)l.len);
    for (int32_t i = 0; i < l.len; i++)
        CHECK(sg_tensor_grad_fn(l.items[i]) == n && sg_tensor_output_nr(l.items[i]) == (uint32_t)i);
    sg_tensor_list_release(&l);
}

static void test_split(void) {
    static const int64_t S53[2] = {5, 3}, S25[2] = {2, 5};
    sg_tensor *x = NULL;
    /* split(5x3, 2): pieces of 2, 2 and 1 rows; the first and last reach the loss */
    g_dim = 0, g_used = 0x5;
    x = leaf(S53, 2, 1, true);
    fd_check("split(5x3, 2, 0), pieces 0 and 2", split_loss, &x, 1);
    sg_tensor_release(x);
    /* only the middle one, along dim -2 */
    g_dim = -2, g_used = 0x2;
    x = leaf(S53, 2, 2, true);
    fd_check("split(5x3, 2, -2), piece 1", split_loss, &x, 1);
    sg_tensor_list l = {NULL, 0};
    expect_node(aten_split_Tensor(x, 2, 0, &l), l, "SplitBackward0");
    sg_tensor_release(x);
    /* split_with_sizes(2x5, [1, 3, 1], -1): the middle piece only; all three */
    g_dim = -1;
    for (unsigned used = 0x2; used <= 0x7; used += 0x5) {
        g_used = used;
        x = leaf(S25, 2, 3, true);
        fd_check(used == 2 ? "split_with_sizes(2x5, [1, 3, 1], -1), piece 1"
                           : "split_with_sizes(2x5, [1, 3, 1], -1), all",
                 split_with_sizes_loss, &x, 1);
        sg_tensor_release(x);
    }
    x = leaf(S25, 2, 3, true);
    expect_node(aten_split_with_sizes(x, (sg_int_list){SIZES, 3}, 1, &l), l,
                "SplitWithSizesBackward0");
    /* split.sizes and chunk decompose into split_with_sizes and split (CompositeImplicit), whose
     * nodes differentiate them */
    expect_node(aten_split_sizes(x, (sg_int_list){SIZES, 3}, 1, &l), l, "SplitWithSizesBackward0");
    expect_node(aten_chunk(x, 3, 1, &l), l, "SplitBackward0");
    sg_tensor_release(x);
    g_dim = 1, g_used = 0x4;
    x = leaf(S25, 2, 4, true);
    fd_check("split.sizes(2x5, [1, 3, 1], 1), piece 2", split_sizes_loss, &x, 1);
    sg_tensor_release(x);
    g_dim = -1, g_used = 0x6;
    x = leaf(S25, 2, 5, true);
    fd_check("chunk(2x5, 3, -1), pieces 1 and 2", chunk_loss, &x, 1);
    sg_tensor_release(x);
    /* unbind(2x5, -1): five pieces, two reach the loss (unbind_backward stacks zeros for the
     * others); along 0 */
    g_dim = -1, g_used = 0x12;
    x = leaf(S25, 2, 6, true);
    fd_check("unbind(2x5, -1), pieces 1 and 4", unbind_loss, &x, 1);
    expect_node(aten_unbind_int(x, 1, &l), l, "UnbindBackward0");
    sg_tensor_release(x);
    g_dim = 0, g_used = 0x1;
    x = leaf(S25, 2, 7, true);
    fd_check("unbind(2x5, 0), piece 0", unbind_loss, &x, 1);
    sg_tensor_release(x);
    /* without grad mode, no node */
    x = leaf(S25, 2, 5, true);
    bool was = sg_grad_set_enabled(false);
    CHECK(aten_split_Tensor(x, 2, 1, &l) == SG_OK && l.len == 3 && !sg_tensor_grad_fn(l.items[0]));
    sg_grad_set_enabled(was);
    sg_tensor_list_release(&l);
    sg_tensor_release(x);
}

/* unbind_backward directly: the gradients stacked along dim, zeros where one is undefined; none
 * defined is an error (the engine never calls a node so) */
static void test_unbind_backward(void) {
    static const int64_t S3[1] = {3};
    double v[3] = {1, 2, 3};
    sg_tensor *g0 = on_dev(SG_FLOAT64, S3, 1, v), *r = NULL;
    sg_tensor *gs[3] = {NULL, g0, NULL};
    CHECK(autograd_unbind_backward((sg_tensor_list){gs, 3}, -1, &r) == SG_OK);
    CHECK(shape_is(r, (const int64_t[]){3, 3}, 2));
    for (int64_t i = 0; r && i < 9; i++) CHECK(at_any(r, i) == (i % 3 == 1 ? v[i / 3] : 0));
    sg_tensor_release(r);
    gs[1] = NULL;
    r = NULL;
    CHECK(autograd_unbind_backward((sg_tensor_list){gs, 3}, 0, &r) == SG_EINVAL && !r);
    CHECK(strstr(sg_last_error(), "autograd::unbind_backward: no gradient is defined") != NULL);
    sg_tensor_release(g0);
}

int main(void) {
#ifdef SG_AG_CUDA
    const char *why = NULL;
    if (sg_device_count(SG_DEV_CUDA, &why) == 0) SKIP("no usable GPU: %s", why ? why : "?");
    CHECK(sg_aten_cuda_init() == SG_OK);
#else
    CHECK(sg_aten_cpu_init() == SG_OK);
#endif
    CHECK(aten_autograd_init() == SG_OK);
    test_cat();
    test_cat_mixed();
    test_many();
    test_stack();
    test_split();
    test_unbind_backward();
    sg_runtime_shutdown();
    return check_result(AG_NAME);
}
