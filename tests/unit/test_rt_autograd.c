/* test_rt_autograd.c: autograd's core in the runtime alone: grad mode, a tensor's autograd
 * state, version counters, nodes and edges, saved values, and the engine over nodes written
 * here (their arithmetic on float64 data directly; the one op the engine calls, aten::add, is
 * defined here with a CPU kernel of the test's). test_cpu_autograd runs it over aten's ops. */
#include "rt_check.h"
#include "rt_autograd.h" /* sg_ag_meta: where a leaf's accumulator is */

#include <pthread.h>

static sg_tensor *vec(const double *v, int64_t n) {
    sg_tensor *t = NULL;
    CHECK(sg_tensor_empty(&n, 1, SG_FLOAT64, SG_CPU, &t) == SG_OK);
    if (t && v) memcpy(sg_tensor_data(t), v, (size_t)n * sizeof *v);
    return t;
}

static double el(const sg_tensor *t, int64_t i) {
    return ((const double *)sg_tensor_data(t))[i * t->strides[0]];
}

/* ---- grad mode --------------------------------------------------------------------------- */

static void *mode_of_new_thread(void *arg) {
    *(bool *)arg = sg_grad_enabled();
    return NULL;
}

static void test_grad_mode(void) {
    CHECK(sg_grad_enabled());
    CHECK(sg_grad_set_enabled(false) == true);
    CHECK(!sg_grad_enabled());
    /* another thread starts with its own mode, on */
    bool      other = false;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, mode_of_new_thread, &other) == 0);
    pthread_join(th, NULL);
    CHECK(other);
    CHECK(sg_grad_set_enabled(false) == false); /* nested no_grad */
    CHECK(sg_grad_set_enabled(true) == false);
    CHECK(sg_grad_enabled());
}

/* ---- a tensor's autograd state ----------------------------------------------------------- */

static sg_status nop_apply(sg_node *n, sg_tensor *const *grads, sg_tensor **out) {
    (void)n, (void)grads, (void)out;
    return SG_OK;
}

static void test_metadata(void) {
    sg_tensor *a = vec((double[]){1, 2, 3}, 3), *g = vec(NULL, 3), *d = NULL, *got = NULL;
    CHECK(a->ag == NULL && !sg_tensor_requires_grad(a) && sg_tensor_is_leaf(a));
    CHECK(sg_tensor_set_requires_grad(a, false) == SG_OK && a->ag == NULL); /* nothing made */
    CHECK(sg_tensor_set_requires_grad(a, true) == SG_OK);
    CHECK(sg_tensor_requires_grad(a) && sg_tensor_is_leaf(a) && sg_tensor_grad_fn(a) == NULL);
    /* .grad: none, set, read, cleared */
    CHECK(sg_tensor_grad(a, &got) == SG_OK && got == NULL);
    CHECK(sg_tensor_set_grad(a, g) == SG_OK);
    CHECK(sg_tensor_grad(a, &got) == SG_OK && got == g);
    sg_tensor_release(got);
    int64_t    two = 2;
    sg_tensor *short_g = NULL;
    CHECK(sg_tensor_empty(&two, 1, SG_FLOAT64, SG_CPU, &short_g) == SG_OK);
    CHECK(sg_tensor_set_grad(a, short_g) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "sg_tensor_set_grad: the grad of a float64[3] on cpu must be one "
                               "too, not a float64[2] on cpu");
    CHECK(sg_tensor_set_grad(a, a) == SG_EINVAL);
    CHECK(sg_tensor_grad(a, &got) == SG_OK && got == g); /* refusals changed nothing */
    sg_tensor_release(got);
    CHECK(sg_tensor_set_grad(a, NULL) == SG_OK);
    CHECK(sg_tensor_grad(a, &got) == SG_OK && got == NULL);
    /* detach: the same storage and view, no autograd state */
    sg_tensor *s = NULL;
    CHECK(sg_tensor_slice(a, 0, 1, 3, 1, &s) == SG_OK);
    CHECK(sg_tensor_detach(s, &d) == SG_OK);
    CHECK(d && d->storage == a->storage && d->offset == 1 && d->sizes[0] == 2 && d->ag == NULL);
    CHECK(!sg_tensor_requires_grad(d) && el(d, 0) == 2);
    /* integer dtypes cannot require grad; turning it off is fine */
    sg_tensor *i = NULL;
    CHECK(sg_tensor_empty(&two, 1, SG_INT64, SG_CPU, &i) == SG_OK);
    CHECK(sg_tensor_set_requires_grad(i, true) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "sg_tensor_set_requires_grad: only tensors of floating point and "
                               "complex dtype can require gradients, not int64");
    CHECK(sg_tensor_set_requires_grad(i, false) == SG_OK && !sg_tensor_requires_grad(i));
    /* a computed tensor (it has a grad_fn) is no leaf, and its flag cannot change */
    sg_node *n = NULL;
    CHECK(sg_node_new(sizeof(sg_node), "MulBackward0", 1, 1, nop_apply, NULL, &n) == SG_OK);
    CHECK(sg_tensor_set_grad_fn(d, n, 0) == SG_OK);
    CHECK(!sg_tensor_is_leaf(d) && sg_tensor_requires_grad(d) && sg_tensor_grad_fn(d) == n);
    CHECK(sg_tensor_set_requires_grad(d, false) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "only a leaf's flag can change, and this tensor was computed (by "
                               "MulBackward0)");
    CHECK(sg_tensor_set_grad_fn(d, n, 1) == SG_EINVAL); /* n has one output */
    /* a leaf that requires grad takes no grad_fn, and refuses in-place ops under grad mode */
    CHECK(sg_tensor_set_grad_fn(a, n, 0) == SG_EINVAL);
    CHECK(sg_autograd_check_inplace(a, "aten::mul_.Tensor") == SG_EINVAL);
    CHECK_STR(sg_last_error(), "aten::mul_.Tensor: a leaf Variable that requires grad is being "
                               "used in an in-place operation.");
    CHECK(sg_autograd_check_inplace(d, "aten::mul_.Tensor") == SG_OK);
    /* a view of that leaf is refused too, and a view made under no_grad; both run under
     * no_grad (below) */
    CHECK(sg_autograd_mark_view(d, a) == SG_OK);
    CHECK(sg_autograd_check_inplace(d, "aten::add_.Tensor") == SG_EINVAL);
    CHECK_STR(sg_last_error(), "aten::add_.Tensor: a view of a leaf Variable that requires grad "
                               "is being used in an in-place operation.");
    sg_tensor *nv = NULL;
    CHECK(sg_tensor_detach(d, &nv) == SG_OK);
    bool off = sg_grad_set_enabled(false);
    CHECK(sg_autograd_mark_view(nv, d) == SG_OK);
    sg_grad_set_enabled(off);
    CHECK(sg_autograd_check_inplace(nv, "aten::add_.Tensor") == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "aten::add_.Tensor: A view was created in no_grad mode and is "
                               "being modified inplace with grad mode enabled.");
    CHECK(sg_autograd_mark_view(NULL, d) == SG_EINVAL);
    sg_tensor *copy = vec((double[]){1, 2}, 2); /* not sharing d's storage: no view */
    CHECK(sg_autograd_mark_view(copy, d) == SG_OK && copy->ag == NULL);
    sg_tensor_release(copy);
    /* a tensor without grad whose storage is shared is refused: it would gain a history its
     * sharers never see; alone it is not */
    sg_tensor *plain = vec((double[]){1, 2}, 2), *alias = NULL;
    CHECK(sg_autograd_check_inplace_shared(plain, "aten::add_.Tensor") == SG_OK);
    CHECK(sg_tensor_detach(plain, &alias) == SG_OK);
    CHECK(sg_autograd_check_inplace_shared(plain, "aten::add_.Tensor") == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "aten::add_.Tensor: the tensor written in place does not require "
                               "grad but shares its storage with another tensor");
    CHECK(sg_autograd_check_inplace_shared(alias, "aten::add_.Tensor") == SG_EINVAL);
    CHECK(sg_autograd_check_inplace_shared(d, "aten::add_.Tensor") == SG_OK); /* has a history */
    bool was = sg_grad_set_enabled(false);
    CHECK(sg_autograd_check_inplace(nv, "aten::add_.Tensor") == SG_OK);
    sg_tensor_release(nv);
    CHECK(sg_autograd_check_inplace_shared(plain, "aten::add_.Tensor") == SG_OK);
    sg_tensor_release(alias), sg_tensor_release(plain);
    CHECK(sg_autograd_check_inplace(d, "aten::add_.Tensor") == SG_OK);
    CHECK(sg_autograd_check_inplace(a, "aten::mul_.Tensor") == SG_OK);
    sg_grad_set_enabled(was);
    sg_node_release(n); /* d holds it */
    CHECK(n->refs == 1);
    /* a tensor released with a grad and a grad_fn gives both back (ASan's leak check) */
    CHECK(sg_tensor_set_grad(d, short_g) == SG_OK);
    sg_tensor_release(short_g);
    sg_tensor_release(d);
    sg_tensor_release(s);
    sg_tensor_release(i);
    sg_tensor_release(g);
    sg_tensor_release(a);
    /* NULL answers */
    CHECK(!sg_tensor_requires_grad(NULL) && sg_tensor_grad_fn(NULL) == NULL);
    CHECK(sg_tensor_set_requires_grad(NULL, true) == SG_EINVAL);
    CHECK(sg_tensor_detach(NULL, &d) == SG_EINVAL && d == NULL);
}

/* ---- version counters -------------------------------------------------------------------- */

static void test_versions(void) {
    sg_tensor *a = vec((double[]){1, 2, 3, 4}, 4), *v = NULL, *d = NULL;
    CHECK(sg_tensor_version(a) == 0);
    CHECK(sg_tensor_slice(a, 0, 2, 4, 1, &v) == SG_OK);
    CHECK(sg_tensor_detach(a, &d) == SG_OK);
    sg_tensor_bump_version(v); /* an in-place change through a view */
    CHECK(sg_tensor_version(a) == 1 && sg_tensor_version(v) == 1 && sg_tensor_version(d) == 1);
    sg_tensor_bump_version(a);
    CHECK(sg_tensor_version(v) == 2);
    /* resize_ onto new storage keeps the count */
    int64_t big = 1000;
    CHECK(sg_tensor_resize_(d, &big, 1) == SG_OK && d->storage != a->storage);
    CHECK(sg_tensor_version(d) == 2);
    sg_tensor_release(d);
    sg_tensor_release(v);
    sg_tensor_release(a);
}

/* ---- nodes ------------------------------------------------------------------------------- */

static void test_node_refs_and_long_chain(void) {
    sg_node *a = NULL, *b = NULL;
    CHECK(sg_node_new(sizeof(sg_node), "A", 1, 2, nop_apply, NULL, &a) == SG_OK);
    CHECK(sg_node_new(sizeof(sg_node), "B", 1, 0, nop_apply, NULL, &b) == SG_OK);
    CHECK(a->refs == 1 && a->nin == 1 && a->nnext == 2 && a->next[0].node == NULL);
    CHECK(b->seq > a->seq); /* creation order */
    CHECK_STR(a->name, "A");
    sg_node_retain(a);
    CHECK(a->refs == 2);
    sg_node_release(a);
    CHECK(a->refs == 1);
    sg_node_release(a);
    sg_node_release(b);
    /* bad arguments */
    CHECK(sg_node_new(sizeof(sg_node) - 1, "A", 1, 0, nop_apply, NULL, &a) == SG_EINVAL);
    CHECK(a == NULL);
    CHECK(sg_node_new(sizeof(sg_node), "A", 0, 0, nop_apply, NULL, &a) == SG_EINVAL);
    CHECK(sg_node_new(sizeof(sg_node), "A", 1, 0, NULL, NULL, &a) == SG_EINVAL);
    /* a chain of 100000 nodes, each holding the one before through its edge, made through
     * tensors as generated code makes it, then dropped from its head: iterative release (a
     * recursive one would overflow the stack here, under ASan surely) */
    sg_tensor *x = vec((double[]){1}, 1), *prev = NULL;
    CHECK(sg_tensor_set_requires_grad(x, true) == SG_OK);
    prev = sg_tensor_retain(x);
    for (int i = 0; i < 100000; i++) {
        sg_node   *n = NULL;
        sg_tensor *y = NULL;
        if (sg_node_new(sizeof(sg_node), "StepBackward", 1, 1, nop_apply, NULL, &n) ||
            sg_node_set_next(n, 0, prev) || sg_tensor_detach(prev, &y) ||
            sg_tensor_set_grad_fn(y, n, 0)) {
            CHECK(!"chain step");
            break;
        }
        sg_node_release(n);
        sg_tensor_release(prev);
        prev = y;
    }
    CHECK(x->ag->acc != NULL); /* the chain's far end holds x's accumulator */
    sg_tensor_release(prev);   /* the whole chain goes */
    CHECK(x->ag->acc == NULL && x->refs == 1);
    sg_tensor_release(x);
}

static void test_edges(void) {
    sg_tensor *leaf = vec((double[]){1, 2}, 2), *plain = vec(NULL, 2), *out = vec(NULL, 2);
    sg_node   *f = NULL, *n = NULL;
    CHECK(sg_tensor_set_requires_grad(leaf, true) == SG_OK);
    CHECK(sg_node_new(sizeof(sg_node), "SplitBackward", 2, 0, nop_apply, NULL, &f) == SG_OK);
    CHECK(sg_tensor_set_grad_fn(out, f, 1) == SG_OK); /* out is f's output 1 */
    CHECK(sg_tensor_output_nr(out) == 1);
    CHECK(sg_node_new(sizeof(sg_node), "CatBackward0", 1, 5, nop_apply, NULL, &n) == SG_OK);
    CHECK(sg_node_set_next(n, 0, leaf) == SG_OK);
    CHECK(sg_node_set_next(n, 1, plain) == SG_OK);
    CHECK(sg_node_set_next(n, 2, NULL) == SG_OK);
    CHECK(sg_node_set_next(n, 3, out) == SG_OK);
    CHECK(sg_node_set_next(n, 4, leaf) == SG_OK);
    CHECK(sg_node_set_next(n, 5, leaf) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "sg_node_set_next: CatBackward0 has 5 edges, not 6");
    /* to the leaf's accumulator, made once and shared by both edges */
    sg_node *acc = n->next[0].node;
    CHECK(acc && strcmp(acc->name, "AccumulateGrad") == 0 && n->next[0].input_nr == 0);
    CHECK(n->next[4].node == acc && acc->refs == 2 && leaf->ag->acc == acc);
    CHECK(acc->seq == UINT64_MAX);
    /* no edge for a tensor that does not require grad, or none */
    CHECK(n->next[1].node == NULL && n->next[2].node == NULL);
    /* to a computed tensor's grad_fn, at its output number */
    CHECK(n->next[3].node == f && n->next[3].input_nr == 1 && f->refs == 3);
    /* replacing an edge drops what it held */
    CHECK(sg_node_set_next(n, 4, NULL) == SG_OK && acc->refs == 1);
    CHECK(leaf->refs == 2); /* the accumulator holds the leaf */
    sg_node_release(n);
    CHECK(leaf->ag->acc == NULL && leaf->refs == 1 && f->refs == 2); /* out and this test */
    sg_node_release(f);
    sg_tensor_release(out);
    sg_tensor_release(plain);
    sg_tensor_release(leaf);
}

/* ---- saved values ------------------------------------------------------------------------ */

typedef struct square_node {
    sg_node  base;
    sg_saved self;
} square_node;

/* d(x*x) = 2 x g */
static sg_status square_apply(sg_node *n, sg_tensor *const *grads, sg_tensor **out) {
    sg_tensor *x = NULL;
    sg_status  st = sg_saved_get(&((square_node *)n)->self, n, &x);
    if (st) return st;
    out[0] = vec(NULL, x->sizes[0]);
    for (int64_t i = 0; i < x->sizes[0]; i++)
        ((double *)sg_tensor_data(out[0]))[i] = 2 * el(x, i) * el(grads[0], i);
    sg_tensor_release(x);
    return SG_OK;
}

static void square_release(sg_node *n) { sg_saved_release(&((square_node *)n)->self); }

static int square_calls;

/* y = x * x, recorded as a generated kernel records it. */
static sg_tensor *square(sg_tensor *x) {
    sg_tensor   *y = vec(NULL, x->sizes[0]);
    square_node *n = NULL;
    for (int64_t i = 0; i < x->sizes[0]; i++)
        ((double *)sg_tensor_data(y))[i] = el(x, i) * el(x, i);
    if (!sg_grad_enabled() || !sg_tensor_requires_grad(x)) return y;
    CHECK(sg_node_new(sizeof *n, "SquareBackward0", 1, 1, square_apply, square_release,
                      (sg_node **)&n) == SG_OK);
    CHECK(sg_node_set_next(&n->base, 0, x) == SG_OK);
    CHECK(sg_saved_init(&n->self, x) == SG_OK);
    CHECK(sg_tensor_set_grad_fn(y, &n->base, 0) == SG_OK);
    sg_node_release(&n->base);
    square_calls++;
    return y;
}

static void test_saved(void) {
    sg_tensor *x = vec((double[]){3, 4}, 2), *got = NULL;
    sg_saved   s, none;
    CHECK(sg_saved_init(&none, NULL) == SG_OK);
    CHECK(sg_saved_get(&none, NULL, &got) == SG_OK && got == NULL);
    sg_saved_release(&none);
    CHECK(sg_tensor_set_requires_grad(x, true) == SG_OK);
    CHECK(sg_saved_init(&s, x) == SG_OK);
    CHECK(s.t != x && s.t->storage == x->storage && s.t->ag == NULL && s.version == 0);
    CHECK(sg_saved_get(&s, NULL, &got) == SG_OK && got == s.t);
    sg_tensor_release(got);
    sg_node *n = NULL;
    CHECK(sg_node_new(sizeof(sg_node), "MulBackward0", 1, 0, nop_apply, NULL, &n) == SG_OK);
    sg_tensor_bump_version(x);
    CHECK(sg_saved_get(&s, n, &got) == SG_EINVAL && got == NULL);
    CHECK_HAS(sg_last_error(), "one of the variables needed for gradient computation has been "
                               "modified by an inplace operation: [float64 [2]], which is saved "
                               "by MulBackward0, is at version 1; expected version 0 instead.");
    /* a metadata-only save keeps no storage and no bytes, and is not checked; an original (a
     * clone) does not see the change */
    sg_saved meta, orig;
    int64_t  bytes = sg_autograd_saved_bytes();
    int32_t  srefs = x->storage->refs;
    CHECK(sg_saved_init_meta(&meta, x) == SG_OK && meta.t && meta.t->storage == NULL);
    CHECK(meta.t && meta.t->ndim == 1 && meta.t->sizes[0] == 2 && meta.t->strides[0] == 1 &&
          meta.t->dtype == SG_FLOAT64 && meta.t->device.type == SG_DEV_CPU && !meta.t->ag);
    CHECK(sg_autograd_saved_bytes() == bytes && x->storage->refs == srefs);
    CHECK(sg_saved_init_original(&orig, x) == SG_OK && orig.t->storage != x->storage);
    CHECK(orig.t->ag == NULL && ((double *)sg_tensor_data(orig.t))[1] == 4);
    sg_tensor_bump_version(x);
    ((double *)sg_tensor_data(x))[1] = 5;
    CHECK(sg_saved_get(&meta, n, &got) == SG_OK && got == meta.t);
    sg_tensor_release(got);
    CHECK(sg_saved_get(&orig, n, &got) == SG_OK && ((double *)sg_tensor_data(got))[1] == 4);
    sg_tensor_release(got);
    CHECK(sg_saved_get(&s, n, &got) == SG_EINVAL); /* the plain one still is */
    CHECK_HAS(sg_last_error(), "is at version 2; expected version 0 instead.");
    ((double *)sg_tensor_data(x))[1] = 4;
    sg_saved_release(&meta);
    CHECK(meta.t == NULL && sg_autograd_saved_bytes() == bytes + 16); /* orig's 2 float64s */
    sg_saved_release(&orig);
    n->saved_released = true;
    CHECK(sg_saved_get(&s, n, &got) == SG_ESTATE);
    CHECK_HAS(sg_last_error(), "Trying to backward through the graph a second time: the values "
                               "MulBackward0 saved were freed");
    sg_node_release(n);
    sg_saved_release(&s);
    CHECK(s.t == NULL && x->refs == 1);
    /* saving an output of the node itself makes no cycle: y -> node -> alias of y */
    sg_tensor *y = square(x);
    square_node *sq = (square_node *)sg_tensor_grad_fn(y);
    sg_saved_release(&sq->self);
    CHECK(sg_saved_init(&sq->self, y) == SG_OK && sq->self.t->ag == NULL);
    CHECK(y->refs == 1);
    sg_tensor_release(y); /* ASan: the node and the alias go with it */
    sg_tensor_release(x);
}

/* ---- the engine -------------------------------------------------------------------------- */

static int add_calls;

/* aten::add.Tensor for same-shaped contiguous float64 tensors. */
static sg_status add_kernel(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                            int32_t nrets, void *ctx) {
    (void)op, (void)ks, (void)nrets, (void)ctx;
    sg_tensor *a = args[0].u.t, *b = args[1].u.t;
    sg_tensor *r = vec(NULL, a->sizes[0]);
    for (int64_t i = 0; i < a->sizes[0]; i++)
        ((double *)sg_tensor_data(r))[i] = el(a, i) + el(b, i);
    rets[0] = sg_any_tensor(r);
    add_calls++;
    return SG_OK;
}

static void test_engine(void) {
    sg_tensor *x = vec((double[]){3, -1}, 2), *g = vec((double[]){1, 10}, 2), *got = NULL;
    sg_tensor *plain = vec(NULL, 2);
    CHECK(sg_tensor_set_requires_grad(x, true) == SG_OK);
    sg_tensor *y = square(x);
    CHECK(sg_tensor_requires_grad(y) && !sg_tensor_is_leaf(y));
    /* roots that cannot start a backward */
    CHECK(sg_backward(&plain, NULL, 1, false) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "sg_backward: root 0 (a float64[2] on cpu) does not require grad "
                               "and has no grad_fn");
    CHECK(sg_backward(&y, NULL, 1, false) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "needs a gradient: ones are implied only for one element");
    sg_tensor *g3 = vec(NULL, 3);
    CHECK(sg_backward(&y, &g3, 1, false) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "sg_backward: the gradient of root 0 (a float64[2] on cpu) is a "
                               "float64[3] on cpu");
    CHECK(sg_tensor_grad(x, &got) == SG_OK && got == NULL);
    /* grad mode is off inside backward, and back on after */
    CHECK(sg_backward(&y, &g, 1, true) == SG_OK && sg_grad_enabled());
    CHECK(sg_tensor_grad(x, &got) == SG_OK && got);
    CHECK(got && el(got, 0) == 6 && el(got, 1) == -20);
    sg_tensor_release(got);
    /* a second pass needs aten::add to accumulate, which this program has not defined yet */
    CHECK(sg_backward(&y, &g, 1, true) == SG_ENOTFOUND);
    CHECK_HAS(sg_last_error(), "sg_backward: AccumulateGrad: ");
    sg_op *add = define("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
                        "Tensor");
    sg_kernel k = {NULL, add_kernel, NULL};
    CHECK(sg_op_impl(add, SG_KEY_CPU, k, NULL) == SG_OK);
    sg_tensor *before = NULL;
    CHECK(sg_tensor_grad(x, &before) == SG_OK);
    CHECK(sg_backward(&y, &g, 1, false) == SG_OK && add_calls == 1);
    CHECK(sg_tensor_grad(x, &got) == SG_OK && got && got != before);
    CHECK(got && el(got, 0) == 12 && el(got, 1) == -40);
    CHECK(el(before, 0) == 6); /* out of place: the .grad held before is unchanged */
    sg_tensor_release(got);
    sg_tensor_release(before);
    /* the saved values are gone: a third pass fails before running anything */
    CHECK(sg_backward(&y, &g, 1, false) == SG_ESTATE);
    CHECK_STR(sg_last_error(), "sg_backward: Trying to backward through the graph a second time: "
                               "the values SquareBackward0 saved were freed by the first "
                               "backward (pass retain_graph to keep them)");
    CHECK(sg_tensor_grad(x, &got) == SG_OK && got && el(got, 0) == 12);
    sg_tensor_release(got);
    /* no_grad records nothing */
    bool       was = sg_grad_set_enabled(false);
    sg_tensor *z = square(x);
    sg_grad_set_enabled(was);
    CHECK(z->ag == NULL && !sg_tensor_requires_grad(z));
    /* two roots sharing x: gradients meet in x's accumulator and are summed there */
    CHECK(sg_tensor_set_grad(x, NULL) == SG_OK);
    sg_tensor *y1 = square(x), *y2 = square(x), *roots[2] = {y1, y2}, *gs[2] = {g, g};
    add_calls = 0;
    CHECK(sg_backward(roots, gs, 2, false) == SG_OK);
    CHECK(add_calls == 1);
    CHECK(sg_tensor_grad(x, &got) == SG_OK && got && el(got, 0) == 12 && el(got, 1) == -40);
    sg_tensor_release(got);
    /* a leaf as the root: its gradient goes straight into .grad */
    CHECK(sg_tensor_set_grad(x, NULL) == SG_OK);
    CHECK(sg_backward(&x, &g, 1, false) == SG_OK);
    CHECK(sg_tensor_grad(x, &got) == SG_OK && got && el(got, 1) == 10);
    CHECK(got != g); /* the caller holds g, so .grad is a copy */
    sg_tensor_release(got);
    sg_tensor_release(y1);
    sg_tensor_release(y2);
    sg_tensor_release(z);
    sg_tensor_release(g3);
    sg_tensor_release(y);
    sg_tensor_release(plain);
    sg_tensor_release(g);
    sg_tensor_release(x);
}

/* A node whose gradient fits no input: 3 elements for an input of 2. */
static sg_status bad_apply(sg_node *n, sg_tensor *const *grads, sg_tensor **out) {
    (void)n, (void)grads;
    out[0] = vec(NULL, 3);
    return SG_OK;
}

static sg_status failing_apply(sg_node *n, sg_tensor *const *grads, sg_tensor **out) {
    (void)grads, (void)out;
    return sg_error(SG_EUNSUPPORTED, "%s cannot", n->name);
}

/* A one-element root without a gradient gets ones of its dtype: float16, bfloat16, complex. */
static void test_implied_ones(void) {
    struct {
        sg_dtype dt;
        uint64_t bits; /* the first 8 bytes of 1 in dt */
        size_t   n;
    } cases[] = {{SG_FLOAT16, 0x3c00, 2}, {SG_BFLOAT16, 0x3f80, 2},
                 {SG_FLOAT32, 0x3f800000, 4}, {SG_COMPLEX64, 0x3f800000, 8}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        sg_tensor *x = NULL, *g = NULL;
        CHECK(sg_tensor_zeros(NULL, 0, cases[c].dt, SG_CPU, &x) == SG_OK);
        CHECK(sg_tensor_set_requires_grad(x, true) == SG_OK);
        CHECK(sg_backward(&x, NULL, 1, false) == SG_OK);
        CHECK(sg_tensor_grad(x, &g) == SG_OK && g && g->dtype == cases[c].dt && g->ndim == 0);
        uint64_t bits = 0;
        if (g) memcpy(&bits, sg_tensor_data(g), cases[c].n);
        CHECK(bits == cases[c].bits);
        sg_tensor_release(g);
        sg_tensor_release(x);
    }
}

static void test_engine_errors(void) {
    sg_tensor *x = vec((double[]){1, 2}, 2), *y = vec(NULL, 2), *g = vec(NULL, 2), *got = NULL;
    sg_node   *n = NULL;
    CHECK(sg_tensor_set_requires_grad(x, true) == SG_OK);
    CHECK(sg_node_new(sizeof(sg_node), "BadBackward", 1, 1, bad_apply, NULL, &n) == SG_OK);
    CHECK(sg_node_set_next(n, 0, x) == SG_OK);
    CHECK(sg_tensor_set_grad_fn(y, n, 0) == SG_OK);
    CHECK(n->in[0].ndim == 1 && n->in[0].sizes[0] == 2 && n->in[0].dtype == SG_FLOAT64);
    CHECK(sg_backward(&y, &g, 1, false) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "sg_backward: BadBackward returned a float64[3] on cpu for its "
                               "input 0, which is float64 [2] on cpu");
    CHECK(sg_tensor_grad(x, &got) == SG_OK && got == NULL);
    /* a node that fails: its message, with its name before it; grad mode restored */
    n->apply = failing_apply;
    CHECK(sg_backward(&y, &g, 1, true) == SG_EUNSUPPORTED && sg_grad_enabled());
    CHECK_STR(sg_last_error(), "sg_backward: BadBackward: BadBackward cannot");
    sg_node_release(n);
    sg_tensor_release(g);
    sg_tensor_release(y);
    sg_tensor_release(x);
}

int main(void) {
    test_grad_mode();
    test_metadata();
    test_versions();
    test_node_refs_and_long_chain();
    test_edges();
    test_saved();
    test_engine();
    test_engine_errors();
    test_implied_ones();
    sg_runtime_shutdown();
    return check_result("test_rt_autograd");
}
