/* autograd.c: grad mode, a tensor's autograd state, nodes and their edges, saved values. The
 * engine is in autograd_engine.c. */
#include "rt_autograd.h"
#include "sg_api.h"

#include <stdlib.h>
#include <string.h>

/* ---- grad mode --------------------------------------------------------------------------- */

_Thread_local bool sg_grad_mode_tls = true;

bool sg_grad_set_enabled(bool on) {
    bool was = sg_grad_mode_tls;
    sg_grad_mode_tls = on;
    return was;
}

/* ---- a tensor's autograd state ----------------------------------------------------------- */

static sg_ag_meta *meta_of(sg_tensor *t) {
    if (!t->ag) t->ag = calloc(1, sizeof *t->ag);
    return t->ag;
}

void sg__ag_meta_free(sg_tensor *t) {
    sg_ag_meta *m = t->ag;
    t->ag = NULL;
    /* m->acc is NULL here: an accumulator holds its leaf, so the leaf outlives it. */
    sg_tensor_release(m->grad);
    sg_tensor_release(m->base);
    sg_node_release(m->grad_fn);
    free(m);
}

static const char *grad_fn_name(const sg_tensor *t) {
    return t->ag && t->ag->grad_fn ? t->ag->grad_fn->name : "?";
}

sg_status sg_tensor_set_requires_grad(sg_tensor *t, bool on) {
    const char *fn = "sg_tensor_set_requires_grad";
    if (!t) return sg_error(SG_EINVAL, "%s: the tensor is NULL", fn);
    if (t->ag && t->ag->grad_fn)
        return sg_error(SG_EINVAL, "%s: only a leaf's flag can change, and this tensor was "
                                   "computed (by %s): detach it for a tensor without history",
                        fn, grad_fn_name(t));
    sg_dtype dt = (sg_dtype)t->dtype;
    if (on && !sg_dtype_is_floating(dt) && !sg_dtype_is_complex(dt))
        return sg_error(SG_EINVAL, "%s: only tensors of floating point and complex dtype can "
                                   "require gradients, not %s",
                        fn, sg_dtype_name(dt));
    if (!on && !t->ag) return SG_OK;
    if (!meta_of(t)) return sg_error(SG_ENOMEM, "%s: out of memory", fn);
    t->ag->requires_grad = on;
    return SG_OK;
}

bool sg_tensor_requires_grad(const sg_tensor *t) {
    return t && t->ag && (t->ag->requires_grad || t->ag->grad_fn);
}

bool sg_tensor_is_leaf(const sg_tensor *t) { return !(t && t->ag && t->ag->grad_fn); }

sg_node *sg_tensor_grad_fn(const sg_tensor *t) { return t && t->ag ? t->ag->grad_fn : NULL; }

uint32_t sg_tensor_output_nr(const sg_tensor *t) {
    return t && t->ag && t->ag->grad_fn ? t->ag->output_nr : 0;
}

sg_status sg_tensor_grad(const sg_tensor *t, sg_tensor **out) {
    if (!out) return sg_error(SG_EINVAL, "sg_tensor_grad: out is NULL");
    *out = NULL;
    if (!t) return sg_error(SG_EINVAL, "sg_tensor_grad: the tensor is NULL");
    if (t->ag) *out = sg_tensor_retain(t->ag->grad);
    return SG_OK;
}

static bool same_shape(const sg_tensor *a, const sg_tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int32_t d = 0; d < a->ndim; d++)
        if (a->sizes[d] != b->sizes[d]) return false;
    return true;
}

sg_status sg_tensor_set_grad(sg_tensor *t, sg_tensor *grad) {
    const char *fn = "sg_tensor_set_grad";
    if (!t) return sg_error(SG_EINVAL, "%s: the tensor is NULL", fn);
    if (grad) {
        char want[96], got[96];
        sg_tensor_describe(t, want, sizeof want);
        sg_tensor_describe(grad, got, sizeof got);
        if (grad == t) return sg_error(SG_EINVAL, "%s: a tensor cannot be its own grad", fn);
        if (grad->dtype != t->dtype || !same_shape(grad, t) ||
            !sg_device_eq(grad->device, t->device))
            return sg_error(SG_EINVAL, "%s: the grad of a %s must be one too, not a %s", fn,
                            want, got);
    } else if (!t->ag) {
        return SG_OK;
    }
    if (!meta_of(t)) return sg_error(SG_ENOMEM, "%s: out of memory", fn);
    sg_tensor *old = t->ag->grad;
    t->ag->grad = sg_tensor_retain(grad);
    sg_tensor_release(old);
    return SG_OK;
}

sg_status sg_tensor_detach(sg_tensor *t, sg_tensor **out) {
    if (!out) return sg_error(SG_EINVAL, "sg_tensor_detach: out is NULL");
    *out = NULL;
    if (!t) return sg_error(SG_EINVAL, "sg_tensor_detach: the tensor is NULL");
    sg_status st = sg__tensor_new(t->storage, (sg_dtype)t->dtype, t->sizes, t->strides, t->ndim,
                                  t->offset, out);
    if (st) return sg_error(st, "sg_tensor_detach: %s", sg_last_error());
    (*out)->flags = t->flags; /* a wrapped number stays one */
    return SG_OK;
}

sg_status sg_autograd_check_inplace_shared(const sg_tensor *t, const char *op) {
    if (!t || !sg_grad_enabled() || sg_tensor_requires_grad(t) ||
        __atomic_load_n(&t->storage->refs, __ATOMIC_RELAXED) <= 1)
        return SG_OK;
    return sg_error(SG_EINVAL, "%s: the tensor written in place does not require grad but "
                               "shares its storage with another tensor (a view, its base, or a "
                               "value saved for backward), while an operand requires grad: the "
                               "history the write gives it would not reach the others "
                               "(PyTorch's CopySlices, not supported), so it is refused; clone "
                               "it first, or write under no_grad",
                    op ? op : "?");
}

sg_status sg_autograd_check_inplace(const sg_tensor *t, const char *op) {
    if (!t || !sg_grad_enabled()) return SG_OK;
    if (!t->ag) return SG_OK;
    if (t->ag->requires_grad && !t->ag->grad_fn)
        return sg_error(SG_EINVAL, "%s: a leaf Variable that requires grad is being used in an "
                                   "in-place operation.",
                        op ? op : "?");
    if (t->ag->view_no_grad)
        return sg_error(SG_EINVAL, "%s: A view was created in no_grad mode and is being modified "
                                   "inplace with grad mode enabled. Given that this use case is "
                                   "ambiguous and error-prone, it is forbidden. You can clarify "
                                   "your code by moving both the view and the inplace either "
                                   "both inside the no_grad block (if you don't want the inplace "
                                   "to be tracked) or both outside (if you want the inplace to "
                                   "be tracked).",
                        op ? op : "?");
    const sg_tensor *b = t->ag->base;
    if (b && b->ag && b->ag->requires_grad && !b->ag->grad_fn)
        return sg_error(SG_EINVAL, "%s: a view of a leaf Variable that requires grad is being "
                                   "used in an in-place operation.",
                        op ? op : "?");
    if (sg_tensor_overlaps(b)) /* CopySlices lays the base's gradient out as the base */
        return sg_error(SG_EINVAL, "%s: a view of a tensor whose elements overlap (an expanded "
                                   "one) is being used in an in-place operation that its base's "
                                   "history must take (CopySlices); clone the base first",
                        op ? op : "?");
    return SG_OK;
}

sg_status sg_autograd_mark_view(sg_tensor *t, sg_tensor *base) {
    const char *fn = "sg_autograd_mark_view";
    if (!t || !base) return sg_error(SG_EINVAL, "%s: the %s is NULL", fn, t ? "base" : "view");
    /* a kernel may give a copy for a view op's result: then it is no view */
    if (t->storage != base->storage) return SG_OK;
    if (!meta_of(t)) return sg_error(SG_ENOMEM, "%s: out of memory", fn);
    if (!sg_grad_enabled()) {
        t->ag->view_no_grad = true;
        return SG_OK;
    }
    if (base->ag && base->ag->base) base = base->ag->base;
    if (base == t) return SG_OK;
    sg_tensor *old = t->ag->base;
    t->ag->view_no_grad = false; /* (a kernel's own view call under no_grad marked it so) */
    t->ag->base = sg_tensor_retain(base);
    t->ag->view_version = sg_tensor_version(t);
    sg_tensor_release(old);
    return SG_OK;
}

/* ---- nodes ------------------------------------------------------------------------------- */

static _Thread_local uint64_t next_seq;

sg_status sg_node_new(size_t size, const char *name, uint32_t nin, uint32_t nnext,
                      sg_node_apply_fn apply, sg_node_release_fn release_saved, sg_node **out) {
    const char *fn = "sg_node_new";
    if (!out) return sg_error(SG_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (size < sizeof(sg_node))
        return sg_error(SG_EINVAL, "%s: size %zu is less than sizeof(sg_node) (%zu)", fn, size,
                        sizeof(sg_node));
    if (!name || !apply)
        return sg_error(SG_EINVAL, "%s: %s is NULL", fn, !name ? "the name" : "apply");
    if (nin == 0) return sg_error(SG_EINVAL, "%s: %s has no inputs (nin 0)", fn, name);
    /* Rationale: one allocation holds the node, its edges and its inputs' metadata. */
    size_t at = (size + _Alignof(sg_edge) - 1) & ~(size_t)(_Alignof(sg_edge) - 1);
    /* (nin and nnext are 32-bit, so sizes from them do not overflow a 64-bit size_t) */
    size_t in_at = at + (size_t)nnext * sizeof(sg_edge);
    sg_node *n = calloc(1, in_at + (size_t)nin * sizeof(sg_input_meta));
    if (!n) return sg_error(SG_ENOMEM, "%s: out of memory", fn);
    n->refs = 1;
    n->nin = nin;
    n->nnext = nnext;
    n->name = name;
    n->seq = next_seq++;
    n->next = (sg_edge *)(void *)((char *)n + at);
    n->in = (sg_input_meta *)(void *)((char *)n + in_at);
    for (uint32_t i = 0; i < nin; i++) n->in[i].ndim = -1;
    n->apply = apply;
    n->release_saved = release_saved;
    *out = n;
    return SG_OK;
}

void sg_node_retain(sg_node *n) {
    if (n) __atomic_fetch_add(&n->refs, 1, __ATOMIC_RELAXED);
}

static void meta_clear(sg_input_meta *m) {
    if (m->sizes != m->small) free(m->sizes);
    m->sizes = NULL;
    m->ndim = -1;
}

/* Records t's shape, dtype and device in m. */
static sg_status meta_set(sg_input_meta *m, const sg_tensor *t) {
    int64_t *sizes = m->small;
    if (t->ndim > 6 && !(sizes = malloc((size_t)t->ndim * sizeof *sizes)))
        return sg_error(SG_ENOMEM, "out of memory");
    meta_clear(m);
    if (t->ndim) memcpy(sizes, t->sizes, (size_t)t->ndim * sizeof *sizes);
    m->sizes = sizes;
    m->ndim = t->ndim;
    m->dtype = t->dtype;
    m->device = t->device;
    return SG_OK;
}

static SG_COLD void node_released_twice(const sg_node *n, int32_t r) {
    sg_error(SG_ESTATE, "sg_node_release: %s was released already (its reference count is %d)",
             n->name, (int)r + 1);
}

/* Whether the last reference went (a count below zero is reported, not freed again). */
static bool node_drop(sg_node *n) {
    int32_t r = sg__unref(&n->refs);
    if (SG_LIKELY(r > 0)) return false;
    if (r < 0) node_released_twice(n, r);
    return r == 0;
}

void sg_node_release(sg_node *n) {
    if (!n || !node_drop(n)) return;
    n->gc_link = NULL;
    while (n) {
        sg_node *x = n;
        n = x->gc_link;
        if (x->apply == sg__acc_apply) {
            sg__acc_node *a = (sg__acc_node *)x;
            if (a->leaf && a->leaf->ag && a->leaf->ag->acc == x) a->leaf->ag->acc = NULL;
            sg_tensor_release(a->leaf);
        } else if (x->release_saved && !x->saved_released) {
            x->release_saved(x);
        }
        for (uint32_t i = 0; i < x->nnext; i++) {
            sg_node *c = x->next[i].node;
            if (c && node_drop(c)) {
                c->gc_link = n;
                n = c;
            }
        }
        for (uint32_t i = 0; i < x->nin; i++) meta_clear(&x->in[i]);
        free(x);
    }
}

sg_status sg__acc_get(sg_tensor *t, sg_node **out) {
    sg_node *acc = t->ag->acc;
    if (acc) {
        sg_node_retain(acc);
        *out = acc;
        return SG_OK;
    }
    sg_status st = sg_node_new(sizeof(sg__acc_node), "AccumulateGrad", 1, 0, sg__acc_apply,
                               NULL, out);
    if (st) return st;
    /* Rationale: PyTorch's AccumulateGrad has the highest sequence number, so the engine
     * accumulates a leaf's gradient as soon as it is complete. */
    (*out)->seq = UINT64_MAX;
    if ((st = meta_set(&(*out)->in[0], t))) {
        sg_node_release(*out);
        *out = NULL;
        return st;
    }
    ((sg__acc_node *)*out)->leaf = sg_tensor_retain(t);
    t->ag->acc = *out;
    return SG_OK;
}

sg_status sg_node_set_next(sg_node *n, uint32_t i, sg_tensor *input) {
    const char *fn = "sg_node_set_next";
    if (!n) return sg_error(SG_EINVAL, "%s: the node is NULL", fn);
    if (i >= n->nnext)
        return sg_error(SG_EINVAL, "%s: %s has %u edges, not %u", fn, n->name, n->nnext, i + 1);
    sg_edge e = {NULL, 0};
    if (input && input->ag && input->ag->base &&
        input->ag->view_version != sg_tensor_version(input)) {
        sg_status st = sg__view_refresh(input);
        if (st) return sg_error(st, "%s: %s", fn, sg_last_error());
    }
    if (sg_tensor_requires_grad(input)) {
        if (input->ag->grad_fn) {
            e.node = input->ag->grad_fn;
            e.input_nr = input->ag->output_nr;
            sg_node_retain(e.node);
        } else {
            sg_status st = sg__acc_get(input, &e.node);
            if (st) return sg_error(st, "%s: %s", fn, sg_last_error());
        }
    }
    sg_node *old = n->next[i].node;
    n->next[i] = e;
    sg_node_release(old);
    return SG_OK;
}

sg_status sg_tensor_set_grad_fn(sg_tensor *t, sg_node *n, uint32_t nr) {
    const char *fn = "sg_tensor_set_grad_fn";
    if (!t || !n) return sg_error(SG_EINVAL, "%s: the %s is NULL", fn, !t ? "tensor" : "node");
    if (nr >= n->nin)
        return sg_error(SG_EINVAL, "%s: %s has %u inputs, so no output %u", fn, n->name, n->nin,
                        nr);
    /* An output of an integral or bool dtype is not differentiable: no history, as in
     * PyTorch, where such outputs never require grad. */
    if (!sg_dtype_is_floating((sg_dtype)t->dtype) && !sg_dtype_is_complex((sg_dtype)t->dtype))
        return SG_OK;
    if (t->ag && t->ag->requires_grad && !t->ag->grad_fn)
        return sg_error(SG_EINVAL, "%s: a leaf tensor that requires grad cannot be given a "
                                   "grad_fn (%s): it was used in an in-place operation",
                        fn, n->name);
    if (!meta_of(t) || meta_set(&n->in[nr], t))
        return sg_error(SG_ENOMEM, "%s: out of memory", fn);
    sg_node *old = t->ag->grad_fn;
    sg_node_retain(n);
    t->ag->grad_fn = n;
    t->ag->output_nr = nr;
    sg_node_release(old);
    return SG_OK;
}

/* ---- ops without a derivative ------------------------------------------------------------ */

/* PyTorch's NotImplemented node: the history of an op that has no formula, whose backward
 * fails, so a gradient that cannot be computed is an error rather than silently missing. */
typedef struct ni_node {
    sg_node     base;
    const char *op;
} ni_node;

static sg_status ni_apply(sg_node *n, sg_tensor *const *grads, sg_tensor **out) {
    (void)grads, (void)out;
    return sg_error(SG_EUNSUPPORTED, "the derivative for '%s' is not implemented",
                    ((ni_node *)n)->op);
}

sg_status sg_autograd_not_implemented(const char *op, sg_tensor *const *inputs, uint32_t nin,
                                      sg_tensor *const *outputs, uint32_t nout) {
    if (!op || (nin && !inputs) || (nout && !outputs) || nout == 0)
        return sg_error(SG_EINVAL, "sg_autograd_not_implemented: %s",
                        !op ? "the op name is NULL" : "no outputs, or a NULL array");
    sg_node  *n;
    sg_status st = sg_node_new(sizeof(ni_node), "NotImplemented", nout, nin, ni_apply, NULL, &n);
    if (st) return st;
    ((ni_node *)n)->op = op;
    for (uint32_t i = 0; i < nin && !st; i++) st = sg_node_set_next(n, i, inputs[i]);
    for (uint32_t i = 0; i < nout && !st; i++)
        if (outputs[i]) st = sg_tensor_set_grad_fn(outputs[i], n, i);
    sg_node_release(n);
    return st;
}

/* ---- saved values ------------------------------------------------------------------------ */

/* Bytes the live saved values hold, for sg_autograd_saved_bytes. Rationale: one relaxed atomic
 * per save and release, next to the tensor header each already makes, keeps the figure exact
 * without walking graphs whose nodes' layouts only the generated code knows. */
static int64_t saved_bytes;

static int64_t nbytes_of(const sg_tensor *t) {
    return sg_tensor_numel(t) * (int64_t)sg_dtype_size((sg_dtype)t->dtype);
}

int64_t sg_autograd_saved_bytes(void) { return __atomic_load_n(&saved_bytes, __ATOMIC_RELAXED); }

sg_status sg_saved_init(sg_saved *s, sg_tensor *t) {
    if (!s) return sg_error(SG_EINVAL, "sg_saved_init: the saved value is NULL");
    s->t = NULL;
    s->version = 0;
    s->meta_only = false;
    if (!t) return SG_OK;
    sg_status st = sg_tensor_detach(t, &s->t);
    if (st) return sg_error(st, "sg_saved_init: %s", sg_last_error());
    s->version = sg_tensor_version(t);
    __atomic_add_fetch(&saved_bytes, nbytes_of(s->t), __ATOMIC_RELAXED);
    return SG_OK;
}

sg_status sg_saved_init_original(sg_saved *s, sg_tensor *t) {
    if (!s) return sg_error(SG_EINVAL, "sg_saved_init_original: the saved value is NULL");
    s->t = NULL;
    s->version = 0;
    s->meta_only = false;
    if (!t) return SG_OK;
    sg_status st = sg_tensor_clone(t, &s->t);
    if (st) return sg_error(st, "sg_saved_init_original: %s", sg_last_error());
    s->version = sg_tensor_version(s->t);
    __atomic_add_fetch(&saved_bytes, nbytes_of(s->t), __ATOMIC_RELAXED);
    return SG_OK;
}

sg_status sg_saved_init_meta(sg_saved *s, sg_tensor *t) {
    if (!s) return sg_error(SG_EINVAL, "sg_saved_init_meta: the saved value is NULL");
    s->t = NULL;
    s->version = 0;
    s->meta_only = true;
    if (!t) return SG_OK;
    sg_status st = sg__tensor_meta(t, &s->t);
    if (st) return sg_error(st, "sg_saved_init_meta: %s", sg_last_error());
    return SG_OK; /* no bytes counted: it holds no elements (PyTorch's hooks never see these) */
}

sg_status sg_saved_get(const sg_saved *s, const sg_node *n, sg_tensor **out) {
    if (!out) return sg_error(SG_EINVAL, "sg_saved_get: out is NULL");
    *out = NULL;
    if (!s) return sg_error(SG_EINVAL, "sg_saved_get: the saved value is NULL");
    if (n && n->saved_released)
        return sg_error(SG_ESTATE, "Trying to backward through the graph a second time: the "
                                   "values %s saved were freed by the first backward (pass "
                                   "retain_graph to sg_backward to keep them)",
                        n->name);
    if (!s->t) return SG_OK;
    uint32_t now = s->meta_only ? s->version : sg_tensor_version(s->t);
    if (now != s->version) {
        char shape[64];
        sg__shape_str(shape, sizeof shape, s->t->sizes, s->t->ndim);
        return sg_error(SG_EINVAL, "one of the variables needed for gradient computation has "
                                   "been modified by an inplace operation: [%s %s]%s%s%s is at "
                                   "version %u; expected version %u instead. Hint: it was "
                                   "written in place after the node saved it; clone it before "
                                   "the in-place op, or do that op out of place",
                        sg_dtype_name((sg_dtype)s->t->dtype), shape,
                        n ? ", which is saved by " : "", n ? n->name : "", n ? "," : "", now,
                        s->version);
    }
    *out = sg_tensor_retain(s->t);
    return SG_OK;
}

void sg_saved_release(sg_saved *s) {
    if (!s) return;
    if (s->t && !s->meta_only) __atomic_sub_fetch(&saved_bytes, nbytes_of(s->t), __ATOMIC_RELAXED);
    sg_tensor_release(s->t);
    s->t = NULL;
}
