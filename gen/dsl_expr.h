/* dsl_expr.h: the predicate language of DSL declarations (docs/dsl.md, "The predicate
 * language"): a tokenizer and a recursive-descent parser into a small tree, a type checker over
 * the names a declaration gives it (the op's arguments, the grid variables, out0..outN,
 * capability), C emission of a checked tree, and evaluation over constants (constexprs).
 * Private to gen/.
 *
 * Guards: whatever could fault or overflow at run time (a division or modulo by zero, a dim or
 * list index out of range, a member of a None tensor, int64 overflow) is emitted as a call of a
 * helper that clears the caller's `bool sg_ok` and returns 0 (dsl_emit.c defines them in
 * the generated file). The generated predicate tests sg_ok after the expression: a guard that
 * fails makes the whole predicate false, and nothing faults.
 *
 * Hostile input: nesting is bounded (SG_DSL_MAX_DEPTH), so the parser's and the checker's
 * recursion is bounded too; every error names the column inside the YAML scalar. */
#ifndef SG_DSL_EXPR_H
#define SG_DSL_EXPR_H

#include "model.h"

enum { SG_DSL_MAX_DEPTH = 48 };

typedef enum sg_dsl_type {
    SG_DSLT_ERROR,
    SG_DSLT_INT,
    SG_DSLT_FLOAT,
    SG_DSLT_BOOL,
    SG_DSLT_DTYPE,
    SG_DSLT_TENSOR,
    SG_DSLT_INT_LIST,
    SG_DSLT_NONE,
} sg_dsl_type;

/* "an int", "a dtype", ... for messages. */
const char *sg_dsl_type_name(sg_dsl_type t);

typedef enum sg_dsl_sym_kind {
    SG_DSLS_ARG,  /* an argument of the op: index into its schema's arguments */
    SG_DSLS_GRID, /* a grid variable: index into the declaration's grid */
    SG_DSLS_OUT,  /* out0..outN: index of the output */
    SG_DSLS_SCRATCH, /* scratch0..scratchN: index of the scratch tensor */
    SG_DSLS_CAP,  /* capability */
} sg_dsl_sym_kind;

/* A name an expression may use. type SG_DSLT_ERROR with `why` set: a name that exists but
 * cannot be read (an argument of a type the language does not have). */
typedef struct sg_dsl_sym {
    const char     *name;
    sg_dsl_sym_kind kind;
    sg_dsl_type     type;
    bool            opt;   /* may be None (Tensor?, int?, float?, ...) */
    uint32_t        index;
    const char     *why;
} sg_dsl_sym;

/* The text of an expression and where it is: the YAML scalar's position and the spans of its
 * bytes (sg_yaml_spans), so an error points at the column inside it. */
typedef struct sg_dsl_text {
    const char    *s;
    size_t         len;
    sg_pos         pos;
    const sg_span *spans;
    uint32_t       nspans;
} sg_dsl_text;

typedef struct sg_dsl_node sg_dsl_node;

/* Parses t (nodes from a). NULL after an error, reported to d. */
sg_dsl_node *sg_dsl_parse(sg_arena *a, const sg_dsl_text *t, sg_diag *d);

/* Names for the checker: lookup returns the symbol called name, or NULL. `scope` says in a
 * message where names come from ("an argument of aten::add.Tensor or a grid variable"). */
typedef struct sg_dsl_scope {
    const sg_dsl_sym *(*lookup)(void *ud, const char *name);
    void             *ud;
    const char       *scope;
} sg_dsl_scope;

/* Type-checks n (annotating it) and that its type is `want` (SG_DSLT_FLOAT also takes an int).
 * `what` names the expression in messages ("the 'when' predicate"). Errors to d; false after
 * one. */
bool sg_dsl_check(sg_dsl_node *n, const sg_dsl_scope *sc, sg_dsl_type want, const char *what,
                  const sg_dsl_text *t, sg_diag *d);
/* The type a checked node has. */
sg_dsl_type sg_dsl_node_type(const sg_dsl_node *n);
/* The symbol a checked node names where it is a bare name, else NULL. */
const sg_dsl_sym *sg_dsl_node_sym(const sg_dsl_node *n);
/* The operands of n's top-level && chain, left to right (n alone where it is no &&), into out;
 * their count. Where it is more than max, nothing is written. */
uint32_t sg_dsl_conjuncts(const sg_dsl_node *n, const sg_dsl_node **out, uint32_t max);

/* C for a checked node: env->sym writes a symbol's C expression (an argument's parameter, a
 * grid variable's value at the point being emitted). An optional symbol's value is read
 * through a guard. */
typedef struct sg_dsl_emit_env {
    void (*sym)(void *ud, sg_buf *b, const sg_dsl_sym *s);
    void *ud;
} sg_dsl_emit_env;
void sg_dsl_emit(sg_buf *b, const sg_dsl_node *n, const sg_dsl_emit_env *env);

/* A constant: an int (dtype: its index in sg_dsl_dtypes) or a bool. */
typedef struct sg_dsl_value {
    sg_dsl_type type;
    int64_t     i;
} sg_dsl_value;

/* Evaluates a checked node whose names are grid variables only, their values from `grid`
 * (indexed by the symbol's index). false, with *why set, where it cannot (a division by zero,
 * an overflow, a name that is not a grid variable). */
bool sg_dsl_eval(const sg_dsl_node *n, const sg_dsl_value *grid, sg_dsl_value *out,
                 const char **why);

/* The dtypes the language names: name, the runtime's enum, the kernel parameter type
 * ("fp32", Triton's names; NULL where the DSLs have none), and the C type a scalar parameter of
 * it is passed as (NULL: not a scalar parameter type). */
typedef struct sg_dsl_dtype {
    const char *name, *cenum, *triton, *ctype;
} sg_dsl_dtype;
extern const sg_dsl_dtype sg_dsl_dtypes[];
extern const uint32_t     sg_dsl_ndtypes;
/* Index of the dtype called name (len bytes), or -1. */
int sg_dsl_dtype_find(const char *name, size_t len);

/* Position of byte off of t. */
sg_pos sg_dsl_text_pos(const sg_dsl_text *t, size_t off);

#endif
