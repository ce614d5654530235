/* autograd_view.c: in-place writes through views (PyTorch's CopySlices), and a view's grad_fn
 * made again from its base's history.
 *
 * A view made while recording (sg_autograd_mark_view) knows its base. An in-place op on the
 * view records its node fn as usual (edge 0 for the view), then sg_autograd_rebase_history
 * gives the base a CopySlices node: the base's gradient, with the view's part replaced by what
 * fn gives for it, goes to the base's history from before; fn's other gradients go to its other
 * inputs. The view's own grad_fn becomes an AsStridedBackward0 node from the base's new history:
 * the view's gradient placed at its elements of a base-shaped zero tensor. A view whose version
 * moved since its grad_fn was made (a write through the base or another view) gets such a node
 * again when an edge is taken from it (sg__view_refresh), as PyTorch regenerates it.
 *
 * Rationale: the geometry (sizes, strides, storage offset relative to the base) is all a node
 * keeps of the view and of the base. A gradient of the base is made with the base's strides
 * over storage of the base's span, so the view's geometry picks out its elements there, as
 * PyTorch's CopySlices does; a base whose elements overlap (check_inplace refuses one) would
 * have no such layout. */
#include "rt_autograd.h"
#include "sg_api.h"

#include <stdlib.h>
#include <string.h>

typedef struct geometry {
    int32_t ndim;
    int64_t sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS];
    int64_t offset; /* a view's storage offset less its base's; a base's: 0 */
} geometry;

static void geometry_of(geometry *g, const sg_tensor *t, const sg_tensor *base) {
    g->ndim = t->ndim;
    memcpy(g->sizes, t->sizes, (size_t)t->ndim * sizeof *g->sizes);
    memcpy(g->strides, t->strides, (size_t)t->ndim * sizeof *g->strides);
    g->offset = t->offset - base->offset;
}

/* A tensor of the base's geometry (offset 0 in storage of its span), of like's dtype and
 * device: zeros, or a copy of like (the base's gradient). */
static sg_status base_like(const geometry *b, const sg_tensor *like, bool zero, sg_tensor **out) {
    int64_t    span = sg__span_elems(b->sizes, b->strides, b->ndim);
    sg_tensor *s = NULL;
    sg_status  st = zero ? sg_tensor_zeros(&span, 1, (sg_dtype)like->dtype, like->device, &s)
                         : sg_tensor_empty(&span, 1, (sg_dtype)like->dtype, like->device, &s);
    if (!st) st = sg_tensor_as_strided(s, b->sizes, b->strides, b->ndim, 0, out);
    sg_tensor_release(s);
    if (!st && !zero && (st = sg_tensor_copy_(*out, like))) {
        sg_tensor_release(*out);
        *out = NULL;
    }
    return st;
}

/* The part of t (the base's geometry, as base_like makes it) that the view is. */
static sg_status part_of(sg_tensor *t, const geometry *g, sg_tensor **out) {
    return sg_tensor_as_strided(t, g->sizes, g->strides, g->ndim, t->offset + g->offset, out);
}

/* ---- AsStridedBackward0: a view's gradient into its base's shape ------------------------ */

typedef struct view_node {
    sg_node  base;
    geometry view, of; /* the view's, and its base's */
} view_node;

static sg_status view_apply(sg_node *n, sg_tensor *const *grads, sg_tensor **out) {
    view_node *v = (view_node *)n;
    sg_tensor *r = NULL, *part = NULL, *g = grads[0];
    sg_status  st = base_like(&v->of, g, true, &r);
    if (!st) st = part_of(r, &v->view, &part);
    if (!st) st = sg_tensor_copy_(part, g);
    sg_tensor_release(part);
    if (st) {
        sg_tensor_release(r);
        return st;
    }
    out[0] = r;
    return SG_OK;
}

sg_status sg__view_refresh(sg_tensor *t) {
    sg_tensor *b = t->ag->base;
    sg_node   *n = NULL;
    sg_status  st = sg_node_new(sizeof(view_node), "AsStridedBackward0", 1, 1, view_apply, NULL,
                                &n);
    if (st) return st;
    view_node *v = (view_node *)n;
    geometry_of(&v->view, t, b);
    geometry_of(&v->of, b, b);
    /* the version first: set_next on the base must not come back here */
    t->ag->view_version = sg_tensor_version(t);
    if (!(st = sg_node_set_next(n, 0, b))) st = sg_tensor_set_grad_fn(t, n, 0);
    sg_node_release(n);
    return st;
}

/* ---- CopySlices ------------------------------------------------------------------------- */

typedef struct copy_slices {
    sg_node  base;
    sg_node *fn; /* the in-place op's node (a reference, dropped with the saved values) */
    geometry view, of; /* the view's, and its base's */
} copy_slices;

static sg_status slices_apply(sg_node *n, sg_tensor *const *grads, sg_tensor **out) {
    copy_slices *c = (copy_slices *)n;
    sg_node     *fn = c->fn;
    sg_tensor   *r = NULL, *part = NULL, *gv = NULL, *small[8] = {0};
    sg_tensor  **fout = fn->nnext <= 8 ? small : calloc(fn->nnext, sizeof *fout);
    sg_status    st;
    if (!fout) return sg_error(SG_ENOMEM, "CopySlices: out of memory");
    /* the base's gradient, a copy of its own: the view's part is overwritten below */
    if ((st = base_like(&c->of, grads[0], false, &r)) || (st = part_of(r, &c->view, &part)) ||
        (st = sg_tensor_clone(part, &gv)) || (st = fn->apply(fn, &gv, fout)))
        goto done;
    if (n->next[0].node) {
        if (fout[0]) {
            st = sg_tensor_copy_(part, fout[0]);
        } else { /* no gradient for the view's old value: zeros there */
            sg_tensor *z = NULL;
            st = sg_tensor_zeros(part->sizes, part->ndim, (sg_dtype)part->dtype, part->device,
                                 &z);
            if (!st) st = sg_tensor_copy_(part, z);
            sg_tensor_release(z);
        }
        if (st) goto done;
        out[0] = r;
        r = NULL;
    }
    for (uint32_t i = 1; i < n->nnext; i++)
        if (n->next[i].node) {
            out[i] = fout[i];
            fout[i] = NULL;
        }
done:
    for (uint32_t i = 0; i < fn->nnext; i++) sg_tensor_release(fout[i]);
    if (fout != small) free(fout);
    sg_tensor_release(gv), sg_tensor_release(part), sg_tensor_release(r);
    return st;
}

static void slices_release(sg_node *n) {
    copy_slices *c = (copy_slices *)n;
    sg_node     *fn = c->fn;
    c->fn = NULL;
    sg_node_release(fn);
}

sg_status sg_autograd_rebase_history(sg_tensor *t, sg_node *fn) {
    const char *name = "sg_autograd_rebase_history";
    if (!t || !fn) return sg_error(SG_EINVAL, "%s: the %s is NULL", name, t ? "node" : "tensor");
    if (!t->ag || !t->ag->base) return sg_tensor_set_grad_fn(t, fn, 0);
    sg_tensor *b = t->ag->base;
    sg_node   *n = NULL;
    sg_status  st = sg_node_new(sizeof(copy_slices), "CopySlices", 1, fn->nnext, slices_apply,
                                slices_release, &n);
    if (st) return st;
    copy_slices *c = (copy_slices *)n;
    sg_node_retain(fn);
    c->fn = fn;
    geometry_of(&c->view, t, b);
    geometry_of(&c->of, b, b);
    if ((st = sg_node_set_next(n, 0, b))) goto done;
    for (uint32_t i = 1; i < fn->nnext; i++) {
        n->next[i] = fn->next[i];
        sg_node_retain(n->next[i].node);
    }
    /* the base's history, then the view's from it */
    if ((st = sg_tensor_set_grad_fn(b, n, 0)) || (st = sg__view_refresh(t))) goto done;
done:
    sg_node_release(n);
    return st ? sg_error(st, "%s: %s", name, sg_last_error()) : SG_OK;
}
