/* dsl_load.h: what the readers of a declaration share (private to them: dsl_decl.c reads the
 * entry, its header keys and its grid, dsl_launch.c its outputs and launch, dsl_table.c a
 * decision table; dsl_read.c holds what they all use): the loader, the checks of YAML values,
 * the op and its symbols, and the expressions' scopes. */
#ifndef SG_DSL_LOAD_H
#define SG_DSL_LOAD_H

#include "dsl.h"
#include "yaml_tree.h"

typedef struct sg_dsl_loader {
    sg_dsl_set      *s;
    const sg_model  *m;
    sg_diag         *d;
    sg_yreader      *r;
    const sg_source *src;
    const char      *dir; /* of the declaration file, "" for the current one */
    uint32_t         errors;
} sg_dsl_loader;

/* An error at pos, counted in L. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void sg_dsl_err(sg_dsl_loader *L, sg_pos pos, const char *fmt, ...);
/* n bytes of the set's arena; NULL (and the reader stopped) when out of memory. */
void *sg_dsl_alloc(sg_dsl_loader *L, size_t n);
/* "a list", "a mapping", "a scalar", "an empty value": for messages. */
const char *sg_dsl_kind_text(const sg_ynode *v);
/* Whether v is a non-empty scalar, or a node of kind k; else an error that names key. */
bool sg_dsl_want_scalar(sg_dsl_loader *L, const char *key, const sg_ynode *v);
bool sg_dsl_want_kind(sg_dsl_loader *L, const char *key, const sg_ynode *v, sg_ynode_kind k);
/* An integer scalar in [lo, hi] into *out, else an error. */
bool sg_dsl_want_int(sg_dsl_loader *L, const char *key, const sg_ynode *v, int64_t lo, int64_t hi,
                     int64_t *out);
/* The keys of map, checked against `known` (NULL-ended): each value into vals[k] (NULL where
 * absent); unknown and repeated keys are errors; so are absent keys whose name in `known`
 * does not start with '?'. */
bool sg_dsl_take_keys(sg_dsl_loader *L, const sg_ynode *map, const char *what,
                      const char *const *known, const sg_ynode **vals);
/* "an output" for out0, out1, ... and "a scratch tensor" for scratch0, ...: the names the
 * declaration makes; NULL for any other. */
const char *sg_dsl_made_name(const char *s);

/* Which of the declaration's names an expression may use: grid variables only, or the
 * arguments, grid variables and capability, with the outputs or without. */
typedef struct sg_dsl_scope_ud {
    const sg_dsl_decl *decl;
    bool               grid_only, outs;
} sg_dsl_scope_ud;

/* Parses and checks scalar v as an expression of type `want` into e; `what` names it in
 * messages, `scope` says where its names come from. */
bool sg_dsl_expression(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v, sg_dsl_expr *e,
                       sg_dsl_type want, const char *what, sg_dsl_scope_ud su,
                       const char *scope);

/* dsl_launch.c: `outputs` (the out0... names added to dc's symbols) and `launch` (its grid,
 * constexprs and parameters; `scope` says where the names of `when` come from). false after
 * an error. */
bool sg_dsl_read_outputs(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v,
                         const char *scope);
bool sg_dsl_read_launch(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v, const char *scope);
/* `scratch`: tensors the kernel works in, allocated before the launch and released after it
 * (the scratch0... names added to dc's symbols). false after an error. */
bool sg_dsl_read_scratch(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v,
                         const char *scope);

/* dsl_table.c: the entry e, which holds `table:` (a decision table); errors counted in L. */
void sg_dsl_table_entry(sg_dsl_loader *L, const sg_ynode *e);
/* dsl_read.c: `op` ("aten::mm", or "mm") into dc->op and dc->op_name: an error naming the
 * closest where there is none, or where it is not a functional op that returns Tensors. */
bool sg_dsl_read_op_name(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v);
/* dc->syms: the symbols of dc's op's arguments and `capability`, with room for `room` more
 * (a declaration's grid variables, results and scratch). */
bool sg_dsl_arg_syms(sg_dsl_loader *L, sg_dsl_decl *dc, uint32_t room);

#endif
