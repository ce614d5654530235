/* dsl_launch.c: a DSL declaration's `outputs` and `launch` (docs/dsl.md, "What a user writes"):
 * each output's sizes and dtype, the launch grid, the constexprs and the kernel's parameters,
 * checked against the op and the declaration's grid (dsl_decl.c reads the rest). */
#include "derive.h"
#include "dsl_load.h"

#include <stdio.h>
#include <string.h>

/* The op's Tensor argument (never None) called name; NULL: the first (whose device decides,
 * dsl_c.c). -1: none. */
static int tensor_arg(const sg_dsl_decl *dc, const char *name) {
    for (uint32_t i = 0; i < dc->nsyms; i++)
        if (dc->syms[i].kind == SG_DSLS_ARG && dc->syms[i].type == SG_DSLT_TENSOR &&
            !dc->syms[i].opt && (!name || strcmp(dc->syms[i].name, name) == 0))
            return (int)dc->syms[i].index;
    return -1;
}

static int grid_dtype_var(const sg_dsl_decl *dc, const char *name) {
    for (uint32_t i = 0; i < dc->ngrid; i++)
        if (dc->grid[i].type == SG_DSLT_DTYPE && strcmp(dc->grid[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* `sizes: [e0, e1, ...]`: int expressions in `when`'s scope, evaluated per point. */
static bool read_sizes(sg_dsl_loader *L, sg_dsl_decl *dc, sg_dsl_output *out, const sg_ynode *v,
                       const char *scope, const char *what) {
    if (!sg_dsl_want_kind(L, "sizes", v, SG_Y_SEQ)) return false;
    if (!v->nitems || v->nitems > SG_DSL_MAX_DIMS) {
        sg_dsl_err(L, v->pos, "'sizes' needs 1 to %d int expressions, not %u", SG_DSL_MAX_DIMS,
                   v->nitems);
        return false;
    }
    if (tensor_arg(dc, NULL) < 0) {
        sg_dsl_err(L, v->pos, "%s with 'sizes' is allocated on the device of the first Tensor "
                   "argument (not optional), and %s has none", what, dc->op_name);
        return false;
    }
    if (!(out->sizes = sg_dsl_alloc(L, v->nitems * sizeof *out->sizes))) return false;
    for (uint32_t k = 0; k < v->nitems; k++)
        if (!sg_dsl_expression(L, dc, v->items[k], &out->sizes[k], SG_DSLT_INT, "a size",
                               (sg_dsl_scope_ud){0}, scope))
            return false;
    out->nsizes = v->nitems;
    return true;
}

/* `dtype`: a dtype name or a dtype grid variable. */
static bool read_dtype(sg_dsl_loader *L, sg_dsl_decl *dc, sg_dsl_output *out, const sg_ynode *v) {
    if (!sg_dsl_want_scalar(L, "dtype", v)) return false;
    out->dtype = sg_dsl_dtype_find(v->text, v->len);
    out->dtype_var = grid_dtype_var(dc, v->text);
    if (out->dtype < 0 && out->dtype_var < 0) {
        sg_dsl_err(L, v->pos, "'dtype' needs a dtype name or a dtype grid variable, not '%s'",
                   v->text);
        return false;
    }
    return true;
}

/* PREFIXi, a name of kind k, into dc's symbols (whose room dsl_decl.c made). */
static bool add_made_sym(sg_dsl_loader *L, sg_dsl_decl *dc, sg_dsl_sym_kind k,
                         const char *prefix, uint32_t i) {
    char name[32];
    snprintf(name, sizeof name, "%s%u", prefix, i);
    dc->syms[dc->nsyms] = (sg_dsl_sym){NULL, k, SG_DSLT_TENSOR, false, i, NULL};
    if (!(dc->syms[dc->nsyms].name = sg_arena_strndup(L->s->a, name, strlen(name)))) {
        sg_yaml_oom(L->r);
        return false;
    }
    dc->nsyms++;
    return true;
}

/* No argument of the op has a name of the kind `what` ("an output", "a scratch tensor"). */
static bool no_argument_named(sg_dsl_loader *L, const sg_dsl_decl *dc, sg_pos pos,
                              const char *what) {
    for (uint32_t i = 0; i < dc->op->schema.nargs; i++) {
        const char *made = sg_dsl_made_name(dc->op->schema.args[i].name);
        if (made && strcmp(made, what) == 0) {
            sg_dsl_err(L, pos, "%s has an argument named '%s', which would hide %s's name",
                       dc->op_name, dc->op->schema.args[i].name, made);
            return false;
        }
    }
    return true;
}

bool sg_dsl_read_outputs(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v,
                         const char *scope) {
    if (!sg_dsl_want_kind(L, "outputs", v, SG_Y_SEQ)) return false;
    if (v->nitems != dc->op->schema.nrets) {
        sg_dsl_err(L, v->pos, "'outputs' lists %u output%s; %s returns %u", v->nitems,
                   v->nitems == 1 ? "" : "s", dc->op_name, dc->op->schema.nrets);
        return false;
    }
    if (!no_argument_named(L, dc, v->pos, "an output")) return false;
    if (!(dc->outputs = sg_dsl_alloc(L, v->nitems * sizeof *dc->outputs))) return false;
    dc->noutputs = v->nitems;
    static const char *const keys[] = {"?like", "?sizes", "?dtype", "?keep_last", NULL};
    enum { LIKE, SIZES, DTYPE, KEEP };
    for (uint32_t i = 0; i < v->nitems; i++) {
        const sg_ynode *o = v->items[i], *val[4];
        if (!sg_dsl_want_kind(L, "outputs", o, SG_Y_MAP) ||
            !sg_dsl_take_keys(L, o, "an output", keys, val))
            return false;
        sg_dsl_output *out = &dc->outputs[i];
        *out = (sg_dsl_output){.dtype = -1, .dtype_var = -1, .pos = o->pos};
        if (!val[LIKE] == !val[SIZES]) {
            sg_dsl_err(L, val[LIKE] ? val[SIZES]->pos : o->pos, val[LIKE]
                       ? "an output takes 'like' or 'sizes', not both"
                       : "an output needs 'like' (an argument's sizes) or 'sizes'");
            return false;
        }
        if (val[SIZES]) {
            if (!read_sizes(L, dc, out, val[SIZES], scope, "an output")) return false;
            if (!val[DTYPE]) {
                sg_dsl_err(L, o->pos, "an output with 'sizes' needs 'dtype'");
                return false;
            }
            if (val[KEEP]) {
                sg_dsl_err(L, val[KEEP]->pos, "'keep_last' goes with 'like', not with 'sizes'");
                return false;
            }
        } else {
            if (!sg_dsl_want_scalar(L, "like", val[LIKE])) return false;
            int like = tensor_arg(dc, val[LIKE]->text);
            if (like < 0) {
                sg_dsl_err(L, val[LIKE]->pos, "'like' needs a Tensor argument of %s (not "
                           "optional), not '%s'", dc->op_name, val[LIKE]->text);
                return false;
            }
            out->like = (uint32_t)like;
        }
        if (val[DTYPE] && !read_dtype(L, dc, out, val[DTYPE])) return false;
        if (val[KEEP] && !sg_dsl_want_int(L, "keep_last", val[KEEP], 0, 64, &out->keep_last))
            return false;
        if (!add_made_sym(L, dc, SG_DSLS_OUT, "out", i)) return false;
    }
    return true;
}

bool sg_dsl_read_scratch(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v,
                         const char *scope) {
    if (!sg_dsl_want_kind(L, "scratch", v, SG_Y_SEQ) ||
        !no_argument_named(L, dc, v->pos, "a scratch tensor"))
        return false;
    if (!v->nitems) {
        sg_dsl_err(L, v->pos, "'scratch' lists no tensors (leave it out)");
        return false;
    }
    if (!(dc->scratch = sg_dsl_alloc(L, v->nitems * sizeof *dc->scratch))) return false;
    static const char *const keys[] = {"sizes", "dtype", "?zero", NULL};
    enum { SIZES, DTYPE, ZERO };
    for (uint32_t i = 0; i < v->nitems; i++) {
        const sg_ynode *o = v->items[i], *val[3];
        if (!sg_dsl_want_kind(L, "scratch", o, SG_Y_MAP) ||
            !sg_dsl_take_keys(L, o, "a scratch tensor", keys, val))
            return false;
        sg_dsl_output *x = &dc->scratch[i];
        *x = (sg_dsl_output){.dtype = -1, .dtype_var = -1, .pos = o->pos};
        if (!read_sizes(L, dc, x, val[SIZES], scope, "a scratch tensor") ||
            !read_dtype(L, dc, x, val[DTYPE]))
            return false;
        if (val[ZERO]) {
            const char *t = val[ZERO]->text;
            if (!sg_dsl_want_scalar(L, "zero", val[ZERO])) return false;
            if (strcmp(t, "true") && strcmp(t, "false")) {
                sg_dsl_err(L, val[ZERO]->pos, "'zero' needs true or false, not '%s'", t);
                return false;
            }
            x->zero = t[0] == 't';
        }
        if (!add_made_sym(L, dc, SG_DSLS_SCRATCH, "scratch", i)) return false;
        dc->nscratch++;
    }
    return true;
}

/* Every scratch tensor is some pointer parameter's value: one that none is passed to is a
 * mistake in the declaration. */
static bool scratch_used(sg_dsl_loader *L, const sg_dsl_decl *dc) {
    for (uint32_t i = 0; i < dc->nscratch; i++) {
        bool used = false;
        for (uint32_t k = 0; k < dc->nparams && !used; k++) {
            const sg_dsl_sym *s = sg_dsl_node_sym(dc->params[k].value.node);
            used = dc->params[k].ptr && s && s->kind == SG_DSLS_SCRATCH && s->index == i;
        }
        if (!used) {
            sg_dsl_err(L, dc->scratch[i].pos, "scratch%u is passed to no kernel parameter", i);
            return false;
        }
    }
    return true;
}

/* A kernel parameter's type: "*fp32", "*dtype" (a dtype grid variable), "i32", "fp32". */
static bool param_type(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *t, sg_dsl_param *p) {
    const char *s = t->text;
    p->ptr = *s == '*';
    s += p->ptr;
    p->base = p->grid_var = -1;
    for (uint32_t i = 0; i < sg_dsl_ndtypes; i++)
        if (sg_dsl_dtypes[i].triton && strcmp(sg_dsl_dtypes[i].triton, s) == 0) p->base = (int)i;
    if (p->ptr && p->base < 0) p->grid_var = grid_dtype_var(dc, s);
    if (p->grid_var >= 0) {
        const sg_dsl_gridvar *g = &dc->grid[p->grid_var];
        for (uint32_t i = 0; i < g->n; i++)
            if (!sg_dsl_dtypes[g->values[i].i].triton) {
                sg_dsl_err(L, t->pos, "'%s' takes the values of '%s', and the DSL has no type "
                           "for %s", t->text, g->name, sg_dsl_dtypes[g->values[i].i].name);
                return false;
            }
        return true;
    }
    bool ok = p->base >= 0 && (p->ptr || sg_dsl_dtypes[p->base].ctype);
    if (!ok)
        sg_dsl_err(L, t->pos, "'%s' is not a kernel parameter type (*fp32, *fp16, *bf16, *fp64, "
                   "*i32, *i64, *i8, *u8, *GRIDVAR, i32, i64, fp32, fp64)", t->text);
    return ok;
}

static bool read_params(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v, const char *scope) {
    if (!sg_dsl_want_kind(L, "args", v, SG_Y_SEQ)) return false;
    if (!(dc->params = sg_dsl_alloc(L, v->nitems * sizeof *dc->params))) return false;
    for (uint32_t i = 0; i < v->nitems; i++) {
        const sg_ynode *x = v->items[i];
        if (x->kind != SG_Y_SEQ || x->nitems != 3) {
            sg_dsl_err(L, x->pos, "a kernel parameter is [name, type, value], not %s",
                x->kind == SG_Y_SEQ ? "a list of another length" : sg_dsl_kind_text(x));
            return false;
        }
        sg_dsl_param *p = &dc->params[i];
        p->pos = x->pos;
        if (!sg_dsl_want_scalar(L, "args", x->items[0]) ||
            !sg_dsl_want_scalar(L, "args", x->items[1]))
            return false;
        p->name = x->items[0]->text;
        p->type = x->items[1]->text;
        if (!sg_derive_c_identifier(p->name, false)) {
            sg_dsl_err(L, x->items[0]->pos, "'%s' is not a parameter name", p->name);
            return false;
        }
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(dc->params[j].name, p->name) == 0) {
                sg_dsl_err(L, x->items[0]->pos, "parameter '%s' is listed twice", p->name);
                return false;
            }
        if (!param_type(L, dc, x->items[1], p)) return false;
        bool flt = !p->ptr && p->base >= 0 && sg_dsl_dtypes[p->base].triton[0] == 'f';
        sg_dsl_type want = p->ptr ? SG_DSLT_TENSOR : flt ? SG_DSLT_FLOAT : SG_DSLT_INT;
        /* outputs are pointers only: a scalar's value is also checked by the predicate,
         * before any output exists */
        if (!sg_dsl_expression(L, dc, x->items[2], &p->value, want, "a parameter's value",
                               (sg_dsl_scope_ud){.outs = p->ptr}, scope))
            return false;
        const sg_dsl_sym *s = sg_dsl_node_sym(p->value.node);
        if (p->ptr && !s) { /* a None Tensor? makes the predicate false */
            sg_dsl_err(L, x->items[2]->pos, "a pointer parameter's value is a Tensor argument, "
                       "an output (out0, ...) or a scratch tensor (scratch0, ...)");
            return false;
        }
        dc->nparams++;
    }
    return true;
}

static bool read_launch_grid(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *const *val,
                             const char *scope) {
    if (!sg_dsl_want_kind(L, "grid", val[0], SG_Y_SEQ)) return false;
    if (val[0]->nitems != 3) {
        sg_dsl_err(L, val[0]->pos, "the launch grid needs three expressions (x, y, z), not %u",
                   val[0]->nitems);
        return false;
    }
    for (int i = 0; i < 3; i++)
        if (!sg_dsl_expression(L, dc, val[0]->items[i], &dc->launch_grid[i], SG_DSLT_INT,
                               "a launch grid dimension", (sg_dsl_scope_ud){0}, scope))
            return false;
    /* per point, as constexprs are (a template's grid may vary them); their ranges are
     * checked where the grid is expanded */
    static const char *const what[2] = {"num_warps", "num_stages"};
    sg_dsl_expr *e[2] = {&dc->num_warps, &dc->num_stages};
    for (int i = 0; i < 2; i++)
        if (!sg_dsl_expression(L, dc, val[1 + i], e[i], SG_DSLT_INT, what[i],
                               (sg_dsl_scope_ud){.grid_only = true},
                               "a grid variable (it is a compile-time value)"))
            return false;
    return true;
}

/* An object DSL's host function launches its kernels itself: its `launch` has no grid, warps
 * or stages. */
bool sg_dsl_read_launch(sg_dsl_loader *L, sg_dsl_decl *dc, const sg_ynode *v, const char *scope) {
    static const char *const keys[] = {"grid", "num_warps", "num_stages", "?constexprs", "args",
                                       NULL};
    static const char *const obj_keys[] = {"?constexprs", "args", NULL};
    const sg_ynode *val[5] = {NULL};
    char what[64];
    snprintf(what, sizeof what, "'launch' of a %s kernel", dc->dsl);
    if (!sg_dsl_want_kind(L, "launch", v, SG_Y_MAP) ||
        !sg_dsl_take_keys(L, v, what, dc->lang->object ? obj_keys : keys,
                   dc->lang->object ? val + 3 : val))
        return false;
    if (!dc->lang->object && !read_launch_grid(L, dc, val, scope)) return false;
    if (val[3]) {
        const sg_ynode *c = val[3];
        if (!sg_dsl_want_kind(L, "constexprs", c, SG_Y_MAP)) return false;
        dc->constexprs = sg_dsl_alloc(L, (c->nitems / 2) * sizeof *dc->constexprs);
        if (!dc->constexprs) return false;
        for (uint32_t i = 0; i + 1 < c->nitems; i += 2) {
            sg_dsl_constexpr *x = &dc->constexprs[dc->nconstexprs];
            if (!sg_dsl_want_scalar(L, "constexprs", c->items[i])) return false;
            x->name = c->items[i]->text;
            if (!sg_derive_c_identifier(x->name, false)) {
                sg_dsl_err(L, c->items[i]->pos, "'%s' is not a constexpr name", x->name);
                return false;
            }
            if (!sg_dsl_expression(L, dc, c->items[i + 1], &x->value, SG_DSLT_INT,
                                   "a constexpr", (sg_dsl_scope_ud){.grid_only = true},
                                   "a grid variable (constexprs are compile-time values)"))
                return false;
            dc->nconstexprs++;
        }
    }
    return read_params(L, dc, val[4], scope) && scratch_used(L, dc);
}
