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

/* Registers op's Autograd kernel sg_agk_<cname> at every backend's Autograd key (to reg). */
void     sg_deriv_register_at_keys(sg_buf *reg, const sg_op *op);
/* The Autograd kernels of the functional ops without a formula (deriv_emit_gate.c) to c, their
 * registrations to reg; returns how many. */
uint32_t sg_deriv_emit_gates(sg_buf *c, sg_buf *reg, const sg_deriv_set *s, const sg_model *m);

#endif
