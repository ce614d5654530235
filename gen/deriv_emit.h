/* deriv_emit.h: what the writers of LIB_autograd.c share: deriv_emit_file.c (the files),
 * deriv_emit_c.c (node types, backward functions and kernels), deriv_emit_value.c (a typed
 * formula's values as C), deriv_emit_list.c (Tensor[] inputs and results), deriv_emit_gate.c
 * and deriv_emit_inplace.c. Private to gen/. */
#ifndef SG_DERIV_EMIT_H
#define SG_DERIV_EMIT_H

#include "deriv_type.h"

#include <stdio.h>
#include <string.h>

/* The emitter of one backward function: each value's C goes to a buffer of the caller's, the
 * statements it needs first (calls, into temporaries sg_t[0..nt), lists into sg_l[0..nl)) to
 * stmts. */
typedef struct em {
    sg_buf         *stmts;
    const sg_deriv *dv;
    const char     *ind;     /* the statements' indentation */
    uint32_t        nt;      /* temporaries used */
    const char     *why;     /* set where a construct cannot be written */
    uint32_t        nl;      /* Tensor[] temporaries used */
} em;

/* What a node keeps and where its edges go: one op's plan (deriv_emit_c.c makes it). */
typedef struct sg_dem_plan {
    const sg_deriv *dv;
    uint32_t        edge_of[256]; /* per argument: its edge (the first, for a Tensor[]), or
                                   * UINT32_MAX; with list_edges, only which have one */
    uint32_t        nedges;
    bool            in[256], res[256]; /* inputs and results the formulas read */
    /* per Tensor input the formulas read: as a value (else only through PyTorch's metadata
     * properties: the node keeps its metadata, sg_saved_init_meta), through those properties,
     * and the edge whose need alone decides whether the value is kept (UINT32_MAX: always) */
    bool            value[256], meta[256];
    uint32_t        guard[256];
    uint8_t         facts[256];        /* per Tensor[] input: SG_DEM_SIZES | SG_DEM_DTYPES */
    bool            list_edges; /* a Tensor[] input has edges: their number is known at run
                                 * time, so each input's first edge is kept in the node */
    bool            list_out;   /* the one result is a Tensor[]: one node input per element */
    const char     *node_name;
} sg_dem_plan;

enum { SG_DEM_SIZES = 1, SG_DEM_DTYPES = 2 }; /* to_args_sizes, to_args_scalartypes */

/* ---- ops with a Tensor[] input or result (deriv_emit_list.c) ---- */

/* Whether dv's op gets no Autograd kernel: its entry's formulas are all not_implemented and it
 * has a CompositeImplicitAutograd kernel (named, or no dispatch table), whose decomposition
 * differentiates it (as chunk's entry says: "the default case will use the
 * CompositeImplicitAutograd"). */
bool sg_dem_decomposed(const sg_deriv *dv);
/* Whether sc's results are one Tensor[]. */
bool sg_dem_list_result(const sg_schema *sc);
/* A kernel's result parameters (", sg_tensor **ret", or ", sg_tensor_list *ret"). */
void sg_dem_rets(sg_buf *b, const sg_op *op);
/* The generated file's inline helpers for such ops (once, before the first). */
void sg_dem_list_preamble(sg_buf *c);
/* The node's fields for them: each edge input's first edge, each Tensor[]'s length, the
 * elements' sizes and dtypes where read; and releasing those. */
void sg_dem_list_fields(sg_buf *b, const sg_dem_plan *p);
void sg_dem_list_release(sg_buf *b, const sg_dem_plan *p);
/* The C of argument i's first edge in a backward function: a number, or n->e_NAME. */
void sg_dem_list_edge(char *out, size_t cap, const sg_dem_plan *p, uint32_t i);
/* Mask entry j of a backward key for argument i, as a statement. */
void sg_dem_list_mask(sg_buf *b, const sg_dem_plan *p, uint32_t j, uint32_t i);
/* The kernel's part: the node made with its edges (run-time counts), the facts kept; and the
 * results given their grad_fn. */
void sg_dem_list_node(sg_buf *b, const sg_dem_plan *p, const char *size_of, const char *apply,
                      const char *release);
void sg_dem_list_keep(sg_buf *b, const sg_dem_plan *p);
void sg_dem_list_grad_fn(sg_buf *b, const sg_dem_plan *p);

static inline int sg_dem_fam(const sg_type *t) { return (int)sg_type_family_of(t); }

static inline void sg_dem_putbuf(sg_buf *b, const sg_buf *x) {
    if (x->len) sg_buf_putn(b, x->data, x->len);
}

/* "ns::name.overload" (no '.' without an overload) of op, appended to b. */
static inline void sg_dem_qual(sg_buf *b, const sg_op *op) {
    sg_buf_printf(b, "%s::%s%s%s", op->ns, op->schema.name, *op->schema.overload ? "." : "",
                  op->schema.overload);
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

/* The node types, backward functions and Autograd kernels of s's differentiated functional
 * ops to c (after the inline helpers of Tensor[] ops where one needs them), their
 * registrations to reg; returns how many kernels. */
uint32_t sg_dem_functional(sg_buf *c, sg_buf *reg, sg_deriv_set *s);
/* Registers op's Autograd kernel sg_agk_<cname> at every backend's Autograd key (to reg). */
void     sg_deriv_register_at_keys(sg_buf *reg, const sg_op *op);
/* The Autograd kernels of the functional ops without a formula (deriv_emit_gate.c) to c, their
 * registrations to reg; returns how many. */
uint32_t sg_deriv_emit_gates(sg_buf *c, sg_buf *reg, const sg_deriv_set *s, const sg_model *m);

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
/* Keeping argument i of dv's op in node n of the kernel (deriv_emit_c.c's keep), after its
 * edges are set; where before_change (an in-place op's written argument), a value as it is
 * before the op (sg_saved_init_original). */
void        sg_dem_keep(sg_buf *b, const sg_deriv *dv, const char *node_name, uint32_t i,
                        bool before_change);
/* The Autograd kernels of the in-place and out= ops of m's aten namespace (docs/autograd.md)
 * to c, their registrations to reg; how many. */
uint32_t    sg_dem_mutating(sg_buf *c, sg_buf *reg, sg_deriv_set *s, const sg_model *m);

#endif
