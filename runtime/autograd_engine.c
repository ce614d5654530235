/* autograd_engine.c: sg_backward, and the leaves' accumulators.
 *
 * A backward run is a task over the graph reachable from its roots: one entry per node (found
 * through a hash map keyed by the node's address), holding the count of edges still to deliver
 * a gradient to it and the slots its incoming gradients collect in. The roots' gradients are
 * delivered first (as PyTorch's GraphRoot does); a node whose count reaches zero is ready, and
 * the ready node with the highest sequence number runs next (PyTorch's order: the most recent
 * op first, accumulators as soon as they are complete). Rationale: the state lives in the task,
 * not in the nodes, so a graph can be walked again (retain_graph) with nothing to reset.
 */
#include "rt_autograd.h"
#include "sg_api.h"
#include "sg_elem.h"

#include <stdlib.h>
#include <string.h>

typedef struct entry {
    sg_node *node;
    uint32_t deps; /* edges that have not delivered yet */
    uint32_t buf;  /* its nin slots start here in task.bufs */
} entry;

typedef struct task {
    entry      *e;      /* the nodes found, in order found */
    uint32_t    n, cap;
    uint32_t   *map;    /* open addressing: index + 1 into e, 0 empty */
    uint32_t    mapcap; /* a power of two */
    sg_tensor **bufs;   /* every node's input slots */
    uint32_t   *heap;   /* ready nodes (indices into e), highest seq on top */
    uint32_t    nheap;
    sg_op      *add;    /* aten::add.Tensor, sum.dim_IntList, _to_copy: found at first use */
    sg_op      *sum;
    sg_op      *cast;
} task;

static bool same_shape(const sg_tensor *a, const sg_tensor *b) {
    return a->ndim == b->ndim && !memcmp(a->sizes, b->sizes, (size_t)a->ndim * sizeof *a->sizes);
}

static uint32_t hash_ptr(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

/* The entry of node, or UINT32_MAX. */
static uint32_t find(const task *k, const sg_node *node) {
    if (!k->mapcap) return UINT32_MAX;
    for (uint32_t h = hash_ptr(node) & (k->mapcap - 1);; h = (h + 1) & (k->mapcap - 1)) {
        uint32_t v = k->map[h];
        if (!v) return UINT32_MAX;
        if (k->e[v - 1].node == node) return v - 1;
    }
}

static void map_put(task *k, uint32_t i) {
    uint32_t h = hash_ptr(k->e[i].node) & (k->mapcap - 1);
    while (k->map[h]) h = (h + 1) & (k->mapcap - 1);
    k->map[h] = i + 1;
}

/* Adds node (not in the task yet); its index in *i. */
static sg_status add_node(task *k, sg_node *node, uint32_t *i) {
    if (k->n == k->cap) {
        uint32_t cap = k->cap ? 2 * k->cap : 64;
        entry   *e = cap > k->cap ? realloc(k->e, (size_t)cap * sizeof *e) : NULL;
        if (!e) return sg_error(SG_ENOMEM, "sg_backward: out of memory");
        k->e = e;
        k->cap = cap;
    }
    if (2 * (k->n + 1) > k->mapcap) {
        uint32_t  cap = k->mapcap ? 2 * k->mapcap : 128;
        uint32_t *map = calloc(cap, sizeof *map);
        if (!map) return sg_error(SG_ENOMEM, "sg_backward: out of memory");
        free(k->map);
        k->map = map;
        k->mapcap = cap;
        for (uint32_t j = 0; j < k->n; j++) map_put(k, j);
    }
    *i = k->n++;
    k->e[*i] = (entry){node, 0, 0};
    map_put(k, *i);
    return SG_OK;
}

static bool before(const task *k, uint32_t a, uint32_t b) {
    return k->e[a].node->seq > k->e[b].node->seq;
}

static void heap_push(task *k, uint32_t i) {
    uint32_t at = k->nheap++;
    while (at > 0 && before(k, i, k->heap[(at - 1) / 2])) {
        k->heap[at] = k->heap[(at - 1) / 2];
        at = (at - 1) / 2;
    }
    k->heap[at] = i;
}

static uint32_t heap_pop(task *k) {
    uint32_t top = k->heap[0], last = k->heap[--k->nheap], at = 0;
    for (;;) {
        uint32_t c = 2 * at + 1;
        if (c >= k->nheap) break;
        if (c + 1 < k->nheap && before(k, k->heap[c + 1], k->heap[c])) c++;
        if (!before(k, k->heap[c], last)) break;
        k->heap[at] = k->heap[c];
        at = c;
    }
    if (k->nheap) k->heap[at] = last;
    return top;
}

static sg_status find_op(sg_op **op, const char *name, const char *overload) {
    if (*op) return SG_OK;
    sg_status st = sg_op_find(name, overload, op);
    return st ? sg_error(st, "the engine needs %s.%s: %s", name, overload, sg_last_error()) : st;
}

/* a + b, a new tensor, through the dispatcher. */
static sg_status add(task *k, sg_tensor *a, sg_tensor *b, sg_tensor **out) {
    *out = NULL;
    sg_status st = find_op(&k->add, "aten::add", "Tensor");
    if (st) return st;
    sg_any    args[3] = {sg_any_tensor(a), sg_any_tensor(b), sg_any_int(1)};
    sg_any    ret[1];
    st = sg_op_call_boxed(k->add, args, 3, ret, 1);
    return st ? st : sg_result_tensor(&ret[0], out);
}

/* Whether g's sizes broadcast from m's (m's dims aligned to g's last ones, each equal or 1). */
static bool reducible(const sg_tensor *g, const sg_input_meta *m) {
    int32_t lead = g->ndim - m->ndim;
    if (lead < 0) return false;
    for (int32_t d = 0; d < m->ndim; d++)
        if (m->sizes[d] != g->sizes[lead + d] && m->sizes[d] != 1) return false;
    return true;
}

/* *g (taken over) made to fit m: summed over the dims broadcasting added (PyTorch's sum_to),
 * then cast to m's dtype. */
static sg_status conform(task *k, const sg_input_meta *m, sg_tensor **g) {
    sg_tensor *t = *g, *r = NULL;
    sg_any     ret[1];
    sg_status  st;
    bool       same = t->ndim == m->ndim &&
                !memcmp(t->sizes, m->sizes, (size_t)m->ndim * sizeof *m->sizes);
    if (!same) {
        int64_t dims[SG_MAX_DIMS];
        int32_t nd = 0, lead = t->ndim - m->ndim;
        for (int32_t d = 0; d < t->ndim; d++)
            if (d < lead || (m->sizes[d - lead] == 1 && t->sizes[d] != 1)) dims[nd++] = d;
        if (nd) {
            if ((st = find_op(&k->sum, "aten::sum", "dim_IntList"))) return st;
            sg_any args[3] = {sg_any_tensor(t), sg_any_int_list(dims, nd), sg_any_bool(true)};
            if ((st = sg_op_call_boxed(k->sum, args, 3, ret, 1)) ||
                (st = sg_result_tensor(&ret[0], &r)))
                return st;
            sg_tensor_release(t);
            *g = t = r;
        }
        if ((st = sg_tensor_view(t, m->sizes, m->ndim, &r))) return st;
        sg_tensor_release(t);
        *g = t = r;
    }
    if (t->dtype != m->dtype) {
        if ((st = find_op(&k->cast, "aten::_to_copy", ""))) return st;
        sg_any args[2] = {sg_any_tensor(t), sg_any_dtype((sg_dtype)m->dtype)};
        if ((st = sg_op_call_boxed(k->cast, args, 2, ret, 1)) ||
            (st = sg_result_tensor(&ret[0], &r)))
            return st;
        sg_tensor_release(t);
        *g = r;
    }
    return SG_OK;
}

/* Checks g, what node `from` returned for its edge j, against the input it goes to, and makes
 * it fit (conform). */
static sg_status check_grad(task *k, const sg_node *from, uint32_t j, const sg_node *to,
                            uint32_t nr, sg_tensor **g) {
    const sg_input_meta *m = &to->in[nr];
    const sg_tensor     *t = *g;
    char                 dg[96], dm[96];
    if (m->ndim < 0 ||
        (t->dtype == m->dtype && sg_device_eq(t->device, m->device) && t->ndim == m->ndim &&
         !memcmp(t->sizes, m->sizes, (size_t)m->ndim * sizeof *m->sizes)))
        return SG_OK;
    sg_tensor_describe(t, dg, sizeof dg);
    sg__shape_str(dm, sizeof dm, m->sizes, m->ndim);
    if (!sg_device_eq(t->device, m->device) || !reducible(t, m) ||
        !sg_dtype_valid(m->dtype))
        return sg_error(SG_EINVAL, "sg_backward: %s returned a %s for its input %u, which is "
                                   "%s %s on %s",
                        from->name, dg, j, sg_dtype_name((sg_dtype)m->dtype), dm,
                        sg_device_type_name((sg_device_type)m->device.type));
    sg_status st = conform(k, m, g);
    return st ? sg_error(st, "sg_backward: the gradient %s returned for its input %u (a %s), "
                             "made a %s %s: %s",
                         from->name, j, dg, sg_dtype_name((sg_dtype)m->dtype), dm,
                         sg_last_error())
              : st;
}

/* Delivers g (taken over; may be NULL) to input slot nr of entry i: the slot takes it, or the
 * sum of what it held and g. */
static sg_status deliver(task *k, uint32_t i, uint32_t nr, sg_tensor *g) {
    entry      *e = &k->e[i];
    sg_tensor **slot = &k->bufs[e->buf + nr];
    sg_status   st = SG_OK;
    if (g && *slot) {
        sg_tensor *sum;
        st = add(k, *slot, g, &sum);
        sg_tensor_release(g);
        if (st) return sg_error(st, "sg_backward: summing the gradients of input %u of %s: %s",
                                nr, e->node->name, sg_last_error());
        sg_tensor_release(*slot);
        *slot = sum;
    } else if (g) {
        *slot = g;
    }
    if (--e->deps == 0) heap_push(k, i);
    return SG_OK;
}

/* Finds the nodes reachable from the roots' edges and counts the edges into each. */
static sg_status discover(task *k, const sg_edge *roots, size_t nroots) {
    sg_node **stack = malloc((nroots + 1) * sizeof *stack);
    size_t    top = 0, cap = nroots + 1;
    sg_status st = SG_OK;
    if (!stack) return sg_error(SG_ENOMEM, "sg_backward: out of memory");
    for (size_t r = 0; r < nroots; r++) {
        uint32_t i = find(k, roots[r].node);
        if (i == UINT32_MAX) {
            if ((st = add_node(k, roots[r].node, &i))) goto done;
            stack[top++] = roots[r].node;
        }
        k->e[i].deps++;
    }
    while (top) {
        sg_node *x = stack[--top];
        if (x->saved_released) {
            st = sg_error(SG_ESTATE, "sg_backward: Trying to backward through the graph a second "
                                     "time: the values %s saved were freed by the first backward "
                                     "(pass retain_graph to keep them)",
                          x->name);
            goto done;
        }
        for (uint32_t j = 0; j < x->nnext; j++) {
            sg_node *c = x->next[j].node;
            if (!c) continue;
            uint32_t i = find(k, c);
            if (i == UINT32_MAX) {
                if ((st = add_node(k, c, &i))) goto done;
                if (top == cap) {
                    sg_node **s = realloc(stack, 2 * cap * sizeof *s);
                    if (!s) {
                        st = sg_error(SG_ENOMEM, "sg_backward: out of memory");
                        goto done;
                    }
                    stack = s;
                    cap *= 2;
                }
                stack[top++] = c;
            }
            k->e[i].deps++;
        }
    }
done:
    free(stack);
    return st;
}

/* Ones shaped as t (one element, any dtype autograd takes: floating or complex). */
static sg_status ones_like(const sg_tensor *t, sg_tensor **out) {
    sg_tensor *h;
    sg_status  st = sg_tensor_empty(t->sizes, t->ndim, (sg_dtype)t->dtype, SG_CPU, &h);
    if (st) return st;
    void *p = sg_tensor_data(h);
#define ONE(NAME, NUM, KIND, SIZE, CTYPE, SUF, ...) \
    case SG_##NAME: *(CTYPE *)p = SG_REAL_STORE(KIND, SUF, CTYPE, 1.0); break;
    switch (t->dtype) {
        SG_DTYPES_WHERE(ONE, 0, 0, 0, 1, 1, 1)
    default:
        sg_tensor_release(h);
        return sg_error(SG_EINVAL, "no gradient of ones for %s", sg_dtype_name((sg_dtype)t->dtype));
    }
#undef ONE
    st = sg_tensor_to(h, t->device, out);
    sg_tensor_release(h);
    return st;
}

/* The edge a root's gradient goes along. */
static sg_status root_edge(sg_tensor *t, sg_edge *e) {
    if (t->ag->base && t->ag->view_version != sg_tensor_version(t)) {
        sg_status st = sg__view_refresh(t); /* a view whose base changed since */
        if (st) return st;
    }
    if (t->ag->grad_fn) {
        *e = (sg_edge){t->ag->grad_fn, t->ag->output_nr};
        sg_node_retain(e->node);
        return SG_OK;
    }
    e->input_nr = 0;
    return sg__acc_get(t, &e->node);
}

/* The roots' edges and gradients (new references), checked. */
static sg_status roots_in(sg_tensor *const *roots, sg_tensor *const *grads, size_t n,
                          sg_edge *edges, sg_tensor **g) {
    const char *fn = "sg_backward";
    for (size_t i = 0; i < n; i++) {
        sg_tensor *t = roots[i], *gi = grads ? grads[i] : NULL;
        char       d[96], dg[96];
        sg_status  st;
        if (!t) return sg_error(SG_EINVAL, "%s: root %zu is NULL", fn, i);
        sg_tensor_describe(t, d, sizeof d);
        if (!sg_tensor_requires_grad(t))
            return sg_error(SG_EINVAL, "%s: root %zu (a %s) does not require grad and has no "
                                       "grad_fn",
                            fn, i, d);
        if (gi) {
            sg_tensor_describe(gi, dg, sizeof dg);
            if (gi->dtype != t->dtype || !sg_device_eq(gi->device, t->device) ||
                !same_shape(gi, t))
                return sg_error(SG_EINVAL, "%s: the gradient of root %zu (a %s) is a %s", fn, i,
                                d, dg);
            g[i] = sg_tensor_retain(gi);
        } else if (sg_tensor_numel(t) != 1) {
            return sg_error(SG_EINVAL, "%s: root %zu (a %s) needs a gradient: ones are implied "
                                       "only for one element",
                            fn, i, d);
        } else if ((st = ones_like(t, &g[i]))) {
            return sg_error(st, "%s: root %zu: %s", fn, i, sg_last_error());
        }
        if ((st = root_edge(t, &edges[i]))) return sg_error(st, "%s: %s", fn, sg_last_error());
    }
    return SG_OK;
}

/* Runs node i of the task: its apply, then its results down its edges. */
static sg_status run(task *k, uint32_t i, bool retain_graph) {
    sg_node    *x = k->e[i].node;
    sg_tensor **in = &k->bufs[k->e[i].buf], *small[8] = {0};
    sg_tensor **out = x->nnext <= 8 ? small : calloc(x->nnext, sizeof *out);
    sg_status   st = SG_OK;
    bool        any = false;
    if (!out) return sg_error(SG_ENOMEM, "sg_backward: out of memory");
    for (uint32_t j = 0; j < x->nin; j++) any |= in[j] != NULL;
    if (any && (st = x->apply(x, in, out)))
        st = sg_error(st, "sg_backward: %s: %s", x->name, sg_last_error());
    for (uint32_t j = 0; j < x->nin; j++) {
        sg_tensor_release(in[j]);
        in[j] = NULL;
    }
    if (!retain_graph && x->release_saved && !x->saved_released) {
        x->release_saved(x);
        x->saved_released = true;
    }
    for (uint32_t j = 0; j < x->nnext; j++) {
        sg_edge e = x->next[j];
        if (st || !e.node) {
            sg_tensor_release(out[j]);
            continue;
        }
        if (out[j] && (st = check_grad(k, x, j, e.node, e.input_nr, &out[j]))) {
            sg_tensor_release(out[j]);
            continue;
        }
        st = deliver(k, find(k, e.node), e.input_nr, out[j]);
    }
    if (out != small) free(out);
    return st;
}

sg_status sg_backward(sg_tensor *const *roots, sg_tensor *const *grads, size_t n,
                      bool retain_graph) {
    task        k = {0};
    sg_edge    *edges = NULL;
    sg_tensor **g = NULL;
    size_t      r = 0;
    sg_status   st;
    bool        was = sg_grad_set_enabled(false);
    if (n && !roots) {
        st = sg_error(SG_EINVAL, "sg_backward: roots is NULL");
        goto done;
    }
    edges = calloc(n + 1, sizeof *edges);
    g = calloc(n + 1, sizeof *g);
    if (!edges || !g) {
        st = sg_error(SG_ENOMEM, "sg_backward: out of memory");
        goto done;
    }
    if ((st = roots_in(roots, grads, n, edges, g)) || (st = discover(&k, edges, n))) goto done;
    size_t nbuf = 0;
    for (uint32_t i = 0; i < k.n; i++) {
        k.e[i].buf = (uint32_t)nbuf;
        nbuf += k.e[i].node->nin;
    }
    k.bufs = calloc(nbuf + 1, sizeof *k.bufs);
    k.heap = malloc(((size_t)k.n + 1) * sizeof *k.heap);
    if (!k.bufs || !k.heap) {
        st = sg_error(SG_ENOMEM, "sg_backward: out of memory");
        goto done;
    }
    for (; r < n; r++) {
        if (edges[r].input_nr >= edges[r].node->nin) {
            st = sg_error(SG_EINVAL, "sg_backward: root %zu is output %u of %s, which has %u",
                          r, edges[r].input_nr, edges[r].node->name, edges[r].node->nin);
            goto done;
        }
        st = deliver(&k, find(&k, edges[r].node), edges[r].input_nr, g[r]);
        g[r] = NULL;
        if (st) goto done;
    }
    while (k.nheap && !(st = run(&k, heap_pop(&k), retain_graph))) {
    }
done:
    for (size_t i = 0; i < n && g; i++) sg_tensor_release(g[i]);
    if (k.bufs) {
        for (uint32_t i = 0; i < k.n; i++)
            for (uint32_t j = 0; j < k.e[i].node->nin; j++)
                sg_tensor_release(k.bufs[k.e[i].buf + j]);
    }
    /* last: a root's edge may hold the only reference to its node (a leaf's accumulator) */
    for (size_t i = 0; i < n && edges; i++) sg_node_release(edges[i].node);
    free(k.bufs);
    free(k.heap);
    free(k.map);
    free(k.e);
    free(edges);
    free(g);
    sg_grad_set_enabled(was);
    return st;
}

/* ---- the accumulator --------------------------------------------------------------------- */

/* Whether g is laid out as the leaf wants its .grad: the leaf's strides where the leaf is
 * dense, else contiguous. */
static bool obeys_layout(const sg_tensor *leaf, const sg_tensor *g, const int64_t *want) {
    (void)leaf;
    for (int32_t d = 0; d < g->ndim; d++)
        if (g->sizes[d] != 1 && g->strides[d] != want[d]) return false;
    return true;
}

sg_status sg__acc_apply(sg_node *n, sg_tensor *const *grads, sg_tensor **out) {
    sg_tensor *leaf = ((sg__acc_node *)n)->leaf, *g = grads[0], *now = NULL;
    sg_status  st;
    (void)out;
    if (!g) return SG_OK;
    if (g->dtype != leaf->dtype || !sg_device_eq(g->device, leaf->device) ||
        !same_shape(g, leaf)) {
        char dl[96], dg[96];
        sg_tensor_describe(leaf, dl, sizeof dl);
        sg_tensor_describe(g, dg, sizeof dg);
        return sg_error(SG_EINVAL, "the gradient of a %s leaf is a %s", dl, dg);
    }
    sg_tensor *old = leaf->ag->grad;
    if (old) {
        /* Rationale: out of place, so a .grad the caller holds does not change under it. */
        sg_op *addop;
        if ((st = sg_op_find("aten::add", "Tensor", &addop))) return st;
        sg_any args[3] = {sg_any_tensor(old), sg_any_tensor(g), sg_any_int(1)}, ret[1];
        if ((st = sg_op_call_boxed(addop, args, 3, ret, 1))) return st;
        if ((st = sg_result_tensor(&ret[0], &now))) return st;
    } else {
        int64_t want[SG_MAX_DIMS], s = 1;
        if (sg_tensor_is_dense(leaf)) {
            memcpy(want, leaf->strides, (size_t)leaf->ndim * sizeof *want);
        } else {
            for (int32_t d = leaf->ndim - 1; d >= 0; d--) {
                want[d] = s;
                s *= leaf->sizes[d] ? leaf->sizes[d] : 1;
            }
        }
        /* Rationale: a gradient nobody else holds (the engine's reference is the only one) is
         * stored as it is; one that some node still holds, or laid out otherwise (an expanded
         * one), is copied, so that .grad is a tensor of its own. */
        if (__atomic_load_n(&g->refs, __ATOMIC_ACQUIRE) == 1 && obeys_layout(leaf, g, want)) {
            now = sg_tensor_retain(g);
        } else {
            if ((st = sg_tensor_empty_strided(leaf->sizes, want, leaf->ndim,
                                              (sg_dtype)leaf->dtype, leaf->device, &now)))
                return st;
            if ((st = sg_tensor_copy_(now, g))) {
                sg_tensor_release(now);
                return st;
            }
        }
    }
    leaf->ag->grad = now;
    sg_tensor_release(old);
    return SG_OK;
}
