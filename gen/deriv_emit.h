/* deriv_emit.h: what deriv_emit_c.c (the files, node types, backward functions and kernels)
 * and deriv_emit_value.c (a typed formula's values as C) share. Private to gen/. */
#ifndef SG_DERIV_EMIT_H
#define SG_DERIV_EMIT_H

#include "deriv_type.h"

#include <stdio.h>
#include <string.h>

/* The emitter of one backward function: each value's C goes to a buffer of the caller's, the
 * statements it needs first (calls, into temporaries sg_t[0..nt)) to stmts. */
typedef struct em {
    sg_buf         *stmts;
    const sg_deriv *dv;
    const char     *ind;     /* the statements' indentation */
    uint32_t        nt;      /* temporaries used */
    const char     *why;     /* set where a construct cannot be written */
} em;

static inline int sg_dem_fam(const sg_type *t) { return (int)sg_type_family_of(t); }

static inline void sg_dem_putbuf(sg_buf *b, const sg_buf *x) {
    if (x->len) sg_buf_putn(b, x->data, x->len);
}

/* The optional families whose C parameter points to the plain one's value. */
typedef struct sg_dem_optional {
    int         opt, plain;
    const char *ctype;
} sg_dem_optional;
extern const sg_dem_optional sg_dem_optionals[];
enum { SG_DEM_NOPTIONALS = 6 };

/* d as C of family `want` to out, the statements it needs (calls into temporaries) first to
 * e->stmts; e->why set where a construct cannot be written. */
void     sg_dem_value(em *e, const sg_dtx *d, int want, sg_buf *out);
/* A call of d->op into temporaries; the first one's index. */
uint32_t sg_dem_call(em *e, const sg_dtx *d);
/* A tuple of n tensors (a call that returns several, undefined tensors, or ?: of those) into n
 * consecutive temporaries, each a reference or NULL; the first's index. */
uint32_t sg_dem_tuple(em *e, const sg_dtx *d, uint32_t n);

/* ---- in-place and out= variants (deriv_emit_inplace.c) ------------------------------------ */

/* The node deriv_emit_c.c writes for entry dv: what an in-place variant's kernel reuses. */
typedef struct sg_dem_node {
    const char *name;        /* "MulBackward0" */
    uint32_t    nedges;
    uint32_t   *edge_of;     /* per argument of dv's op: its edge, or UINT32_MAX */
    bool       *kept;        /* per argument: kept by the node (sg_agn_*'s fields) */
    bool       *kept_result; /* per result */
} sg_dem_node;

/* dv's node (deriv_emit_c.c), in s's arena; where c is not NULL, its type, release and backward
 * functions written to c as well. Returns why there is none (not a Tensor-returning op, an
 * input a node does not keep, no input with a gradient), else NULL. */
const char *sg_dem_node_of(sg_deriv_set *s, const sg_deriv *dv, sg_dem_node *out, sg_buf *c);
/* Keeping argument i of dv's op in node n of the kernel (deriv_emit_c.c's keep). */
void        sg_dem_keep(sg_buf *b, const sg_deriv *dv, const char *node_name, uint32_t i);
/* The Autograd kernels of the in-place and out= ops of m's aten namespace (docs/autograd.md)
 * to c, their registrations to reg; how many. */
uint32_t    sg_dem_mutating(sg_buf *c, sg_buf *reg, sg_deriv_set *s, const sg_model *m);
/* For the kernel of a functional op: each result that is a view of an input (Tensor(a)) marked
 * so (sg_autograd_mark_view), where the node is recorded. */
void        sg_dem_mark_views(sg_buf *b, const sg_op *op);
/* ... and where no node is recorded (grad mode off) but an input requires grad: a view made
 * under no_grad, which PyTorch refuses to modify in place once grad mode is back on. */
void        sg_dem_mark_views_unrecorded(sg_buf *b, const sg_op *op);

#endif
