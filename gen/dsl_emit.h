/* dsl_emit.h: what dsl_emit.c (declarations and templates), dsl_emit_when.c (the _when
 * functions) and dsl_table_emit.c (decision tables) share in writing LIB_dsl.c, and the
 * autograd writers (deriv_emit_*.c) use for C text, from dsl_c.c unless said otherwise.
 * Private to gen/. */
#ifndef SG_DSL_EMIT_H
#define SG_DSL_EMIT_H

#include "dsl.h"

/* The C of expression e of dc at artifact a (NULL where e names no grid variable). */
void     sg_dsl_c_expr(sg_buf *b, const sg_dsl_expr *e, const sg_dsl_decl *dc,
                       const sg_dsl_artifact *a);
/* The C of node n (an expression or a part of one) of dc at artifact a. */
void     sg_dsl_c_node(sg_buf *b, const sg_dsl_node *n, const sg_dsl_decl *dc,
                       const sg_dsl_artifact *a);
/* "sg_tensor *self, sg_tensor *mat2": the op's typed parameters; their names; (void) each. */
void     sg_dsl_c_params(sg_buf *b, const sg_op *op);
void     sg_dsl_c_args(sg_buf *b, const sg_op *op);
void     sg_dsl_c_void_args(sg_buf *b, const sg_op *op);
/* ", sg_tensor **RET" for each result of the op. */
void     sg_dsl_c_rets(sg_buf *b, const sg_op *op);
/* "*ret = NULL;" lines, one per result; "self, mat2, ret": the arguments, then the results. */
void     sg_dsl_c_rets_null(sg_buf *b, const sg_op *op);
void     sg_dsl_c_args_rets(sg_buf *b, const sg_op *op);
/* Tensor j of those the launch makes: the outputs, then the scratch tensors; *name "out" or
 * "scratch" and *i its index among them. */
const sg_dsl_output *sg_dsl_c_made_tensor(const sg_dsl_decl *dc, uint32_t j, const char **name,
                                          uint32_t *i);
/* A C comment naming artifact a's grid point: its prefix and its grid variables' values. */
void     sg_dsl_c_point_comment(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_artifact *a);
/* The _when function of declaration dc (dsl_emit_when.c). */
void     sg_dsl_c_when(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_set *s);
/* The op's first Tensor argument that is never None: the one whose device decides. */
uint32_t sg_dsl_c_first_tensor(const sg_op *op);
/* Lines that run `otherwise;` unless the op's tensors are on one CUDA device, then define
 * `int sg_dev`, that device's index. */
void     sg_dsl_c_on_device(sg_buf *b, const sg_op *op, const char *otherwise);
/* s made inert inside a C comment (sg_c_comment, c_text.h). */
void     sg_dsl_c_comment_text(sg_buf *b, const char *s);
/* s as a C string literal, quotes included (sg_c_string, c_text.h). */
void     sg_dsl_c_string(sg_buf *b, const char *s);
/* A template's entry by point and its points' text (dsl_table_emit.c); their prototypes for
 * LIB_dsl.h. */
void     sg_dsl_template_emit(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_set *s,
                              const char *lib);
void     sg_dsl_template_protos(sg_buf *h, const sg_dsl_set *s, const char *lib);
/* Each op's templates as a list of {name, run, point, npoints}: LIB_dsl_templates_OP. */
void     sg_dsl_template_lists(sg_buf *c, const sg_dsl_set *s, const char *lib);
/* A decision table's rules, finder, predicate and implementation (dsl_table_emit.c). */
void     sg_dsl_table_emit(sg_buf *b, const sg_dsl_table *t);

#endif
