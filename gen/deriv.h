/* deriv.h: derivatives.yaml read against the model (docs/autograd.md), the generator's side of
 * autograd. Private to gen/.
 *
 *   deriv_load.c   the file's entries: each `name` parsed as a schema and matched to an op of
 *                  the model, its keys sorted into backward formulas (per input), forward ones
 *                  (per result), non-differentiable inputs and output_differentiability
 *   deriv_type.c   each backward formula typed, its calls resolved to ops (deriv_type.h)
 *   deriv_listing.c  --emit=derivatives: the entries as read, one line per formula
 *   deriv_emit_file.c  LIB_autograd.c and LIB_autograd.h, from the parts the others write
 *                  (deriv_emit.h): deriv_emit_c.c, _value, _list, _gate and _inplace
 *
 * Everything lives in the set's arena; sg_deriv_free releases it at once. */
#ifndef SG_DERIV_H
#define SG_DERIV_H

#include "codegen.h"
#include "model.h"

/* One key of an entry and its formula: "self, other: <formula>". */
typedef struct sg_dtx sg_dtx;
typedef struct sg_fx sg_fx;

typedef struct sg_deriv_formula {
    const char **names;   /* the inputs (backward) or results (forward) the key lists */
    uint32_t     nnames;
    const char  *text;    /* the formula as written */
    sg_pos       pos;     /* the formula's */
    sg_pos       key_pos;
    /* backward formulas, after sg_deriv_resolve: the tree and its typed form, or why not */
    const sg_fx  *tree;
    const sg_dtx *typed;
    const char   *why;    /* NULL where typed */
    uint32_t      why_off; /* the byte of text it is about */
} sg_deriv_formula;

typedef struct sg_deriv {
    const char       *name;      /* the entry's schema as written */
    sg_pos            pos;       /* the `name` value's */
    const sg_op      *op;        /* the op whose schema it is */
    sg_deriv_formula *grads;     /* backward: keys that name inputs */
    uint32_t          ngrads;
    sg_deriv_formula *fwds;      /* forward: keys that name results ("result" where unnamed) */
    uint32_t          nfwds;
    const char      **non_diff;  /* inputs marked non_differentiable */
    uint32_t          nnon_diff;
    bool             *out_diff;  /* output_differentiability, one per result; NULL: absent */
    bool             *out_diff_if; /* per result, where out_diff: a condition, not True */
    uint32_t          nout_diff;
    uint32_t          other_keys; /* dispatch entries for keys other than Default, not read */
    uint32_t          copy_of;   /* a view_copy op's entry, made from its view op's (torchgen's
                                  * add_view_copy_derivatives): 1 + that entry's index; else 0 */
} sg_deriv;

typedef struct sg_deriv_set {
    sg_arena  *a;
    sg_deriv  *items;     /* in file order */
    uint32_t   n, cap;
    uint32_t   skipped;   /* entries of ops the model does not have */
    uint32_t   entries;   /* entries read */
    const char *path;
} sg_deriv_set;

int  sg_deriv_init(sg_deriv_set *s);
void sg_deriv_free(sg_deriv_set *s);

/* Reads derivatives.yaml (src, one of m's sources) against m's ops (aten's namespace).
 * A view op's entry serves its view_copy op too (`permute` -> `permute_copy`, same overload and
 * arguments), as torchgen derives them: appended after the file's entries, copy_of set.
 * Entries of ops m lacks are skipped (counted); an entry whose op m has with another schema, a
 * key that names neither an input nor a result, a malformed value, an output_differentiability
 * of the wrong length and a second entry for one schema are errors at file:line:col. Returns
 * the number of errors. */
int sg_deriv_load(sg_deriv_set *s, const sg_model *m, const sg_source *src, sg_diag *d);

/* Parses and types every backward formula against m's ops (deriv_type.h); a formula that does
 * not parse or resolve keeps why (it is listed, not an error: its op is not differentiable with
 * respect to those inputs). -1 when out of memory, else the number of formulas resolved. */
int sg_deriv_resolve(sg_deriv_set *s, const sg_model *m);

/* The index of the result a formula calls `name` (a return's name; `result` for one unnamed
 * return, `result0`, `result1`, ... for several), of the argument so named; -1 where none. */
int sg_deriv_result_index(const sg_schema *sc, const char *name);
int sg_deriv_arg_index(const sg_schema *sc, const char *name);

/* --emit=derivatives: "aten::mul.Tensor  self: <formula>" per formula, in file order, then a
 * count of the entries skipped. */
void sg_deriv_emit(sg_buf *b, const sg_deriv_set *s);

/* LIB_autograd.c and LIB_autograd.h (deriv_emit_file.c): a node type, backward function and
 * Autograd kernel per differentiable op of s (resolved), and LIB_autograd_init. inputs: the
 * schema files, for the banner. */
void sg_deriv_emit_c(sg_buf *c, sg_buf *h, sg_deriv_set *s, const sg_model *m, const char *lib,
                     const char *const *inputs, uint32_t ninputs);
/* ... as outputs of the run; -1 when out of memory. */
int  sg_deriv_add_outputs(sg_outputs *outs, sg_deriv_set *s, const sg_model *m,
                          const char *lib, const char *const *inputs, uint32_t ninputs);
/* What LIB_autograd.*'s banner ends with: their stale mark (sg_stale). */
extern const char sg_deriv_banner_mark[];

#endif
