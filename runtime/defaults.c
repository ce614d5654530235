/* defaults.c: the schema's default values as boxed values, and boxed calls that leave trailing
 * arguments out (c10's boxed calls and torch's stack fill those in the same way).
 *
 * Each default is converted once, when the op is defined, into the sg_any a caller would pass
 * for it (the tags of the argument's family, sg_type_table.h). Its memory (a list's items, a
 * string, a complex number) is the op's arena's, so a default lives as long as its op. */
#include "rt_dispatch.h"
#include "schema_info.h"
#include "sg_dtypes.h"

#include <stdlib.h>
#include <string.h>

#define TAG SG_ANY_TAG_BIT

/* Where a conversion allocates: the op's arena, and whether an allocation failed (the
 * definition then fails with SG_ENOMEM rather than leave a default without its value). */
typedef struct mem {
    sg_arena *arena;
    bool      oom;
} mem;

static void *take(mem *m, size_t n) {
    void *p = sg_arena_alloc(m->arena, n);
    if (!p) m->oom = true;
    return p;
}

/* The list type under an optional ("int[2]?" -> "int[2]"), or NULL where ty is no list. */
static const sg_type *list_of(const sg_type *ty) {
    const sg_type *u = ty->kind == SG_TY_OPTIONAL ? ty->elems[0] : ty;
    return u->kind == SG_TY_LIST ? u : NULL;
}

/* int[n] x=fill: n copies (c10 reads int[2] x=1 as [1, 1]). */
static bool box_int_fill(mem *ar, int64_t fill, uint32_t n, sg_any *out) {
    int64_t *p = take(ar, n * sizeof *p);
    if (!p) return false;
    for (uint32_t j = 0; j < n; j++) p[j] = fill;
    *out = sg_any_int_list(p, (int32_t)n);
    return true;
}

/* A string, bool, number or complex: the tag `acc` takes for it, or false. Ints become floats or
 * complex numbers where the argument takes no int (float x=1), as c10 converts them. */
static bool box_plain(mem *ar, const sg_value *v, uint32_t acc, sg_any *out) {
    sg_complex *c;
    switch (v->kind) {
    case SG_VAL_BOOL:
        if (!(acc & TAG(SG_ANY_BOOL))) return false;
        *out = sg_any_bool(v->u.b);
        return true;
    case SG_VAL_INT:
        if (acc & TAG(SG_ANY_INT)) return *out = sg_any_int(v->u.i), true;
        if (acc & TAG(SG_ANY_FLOAT)) return *out = sg_any_float((double)v->u.i), true;
        if (!(acc & TAG(SG_ANY_COMPLEX)) || !(c = take(ar, sizeof *c))) return false;
        c->re = (double)v->u.i;
        break;
    case SG_VAL_FLOAT:
        if (acc & TAG(SG_ANY_FLOAT)) return *out = sg_any_float(v->u.f), true;
        if (!(acc & TAG(SG_ANY_COMPLEX)) || !(c = take(ar, sizeof *c))) return false;
        c->re = v->u.f;
        break;
    case SG_VAL_COMPLEX: /* an imaginary literal: 2.5j */
        if (!(acc & TAG(SG_ANY_COMPLEX)) || !(c = take(ar, sizeof *c))) return false;
        c->im = v->u.f;
        break;
    case SG_VAL_STR: {
        if (!(acc & TAG(SG_ANY_STR)) || v->u.str.len > INT32_MAX) return false;
        char *s = sg_arena_strndup(ar->arena, v->u.str.s, v->u.str.len); /* (NULs too) */
        if (!s) return ar->oom = true, false;
        *out = sg_any_str(s, (int32_t)v->u.str.len);
        return true;
    }
    default: return false;
    }
    *out = (sg_any){SG_ANY_COMPLEX, 0, {0}};
    out->u.c = c;
    return true;
}

static bool box_item(mem *ar, const sg_value *v, sg_any *out) {
    return box_plain(ar, v, TAG(SG_ANY_BOOL) | TAG(SG_ANY_INT) | TAG(SG_ANY_FLOAT) |
                                TAG(SG_ANY_COMPLEX) | TAG(SG_ANY_STR), out);
}

/* A list default ([], [0,1]) as the argument's list tag. */
static bool box_list(mem *ar, const sg_value *v, const arg_check *k, sg_any *out) {
    uint32_t        n = v->u.list.n, acc = k->accepts;
    const sg_value *it = v->u.list.items;
    if (n > INT32_MAX) return false;
    if (acc & TAG(SG_ANY_INT_LIST)) {
        int64_t *p = n ? take(ar, n * sizeof *p) : NULL;
        if (n && !p) return false;
        for (uint32_t j = 0; j < n; j++) {
            if (it[j].kind != SG_VAL_INT) return false;
            p[j] = it[j].u.i;
        }
        *out = sg_any_int_list(p, (int32_t)n);
        return true;
    }
    if (acc & TAG(SG_ANY_FLOAT_LIST)) {
        double *p = n ? take(ar, n * sizeof *p) : NULL;
        if (n && !p) return false;
        for (uint32_t j = 0; j < n; j++) {
            if (it[j].kind != SG_VAL_INT && it[j].kind != SG_VAL_FLOAT) return false;
            p[j] = it[j].kind == SG_VAL_INT ? (double)it[j].u.i : it[j].u.f;
        }
        *out = (sg_any){SG_ANY_FLOAT_LIST, (int32_t)n, {0}};
        out->u.floats = p;
        return true;
    }
    if (acc & TAG(SG_ANY_BOOL_LIST)) {
        bool *p = n ? take(ar, n * sizeof *p) : NULL;
        if (n && !p) return false;
        for (uint32_t j = 0; j < n; j++) {
            if (it[j].kind != SG_VAL_BOOL) return false;
            p[j] = it[j].u.b;
        }
        *out = (sg_any){SG_ANY_BOOL_LIST, (int32_t)n, {0}};
        out->u.bools = p;
        return true;
    }
    if (acc & (TAG(SG_ANY_TENSOR_LIST) | TAG(SG_ANY_OPT_TENSOR_LIST))) { /* Tensor[] x=[] */
        if (n) return false;
        *out = (sg_any){acc & TAG(SG_ANY_OPT_TENSOR_LIST) ? SG_ANY_OPT_TENSOR_LIST
                                                           : SG_ANY_TENSOR_LIST, 0, {0}};
        return true;
    }
    if (!(acc & TAG(SG_ANY_LIST))) return false;
    sg_any *p = n ? take(ar, n * sizeof *p) : NULL;
    if (n && !p) return false;
    for (uint32_t j = 0; j < n; j++)
        if (!box_item(ar, &it[j], &p[j]) || !(k->item_accepts >> p[j].tag & 1)) return false;
    *out = (sg_any){SG_ANY_LIST, (int32_t)n, {0}};
    out->u.items = p;
    return true;
}

/* A named constant (Mean, long, contiguous_format) as the tag of its type, its value c10's
 * (schema_info.c's table); sg_dtype, sg_layout and sg_memory_format number as c10 does. Whether
 * the argument takes it, and the value is one the runtime has, is the boxed call's own check
 * (sg__arg_value_ok), run on every default. */
static bool box_constant(const sg_value *v, sg_any *out) {
    int64_t x = 0;
    switch (sg_constant_lookup(v->u.str.s, v->u.str.len, &x)) {
    case SG_TY_INT:
    case SG_TY_QSCHEME: return *out = sg_any_int(x), true; /* (the INT family) */
    case SG_TY_SCALAR_TYPE: return *out = sg_box_tag_i(SG_ANY_DTYPE, x), true;
    case SG_TY_MEMORY_FORMAT: return *out = sg_box_tag_i(SG_ANY_MEMORY_FORMAT, x), true;
    case SG_TY_LAYOUT: return *out = sg_box_tag_i(SG_ANY_LAYOUT, x), true;
    default: return false;
    }
}

/* The boxed value of argument i's default into *out; false where it has none (a Device
 * default, whose string names a device only at call time; a constant the runtime has no value
 * for). */
static bool box_default(mem *m, sg_op *op, int32_t i, sg_any *out) {
    const sg_arg    *a = &op->schema.args[i];
    const sg_value  *v = a->default_value;
    const arg_check *k = &op->argc[i];
    const sg_type   *l = list_of(a->type);
    switch (v->kind) {
    case SG_VAL_NONE:
        if (!(k->accepts & TAG(SG_ANY_NONE))) return false;
        return *out = sg_any_none(), true;
    case SG_VAL_INT:
        if (l && l->size > 0 && (k->accepts & TAG(SG_ANY_INT_LIST)))
            return box_int_fill(m, v->u.i, (uint32_t)l->size, out);
        return box_plain(m, v, k->accepts, out);
    case SG_VAL_LIST: return box_list(m, v, k, out);
    case SG_VAL_IDENT: return box_constant(v, out);
    default: return box_plain(m, v, k->accepts, out);
    }
}

sg_status sg__op_defaults(sg_op *op) {
    int32_t n = op->nargs, first = n;
    for (int32_t i = 0; i < n; i++)
        if (op->schema.args[i].default_value && first == n) first = i;
    if (first == n) return SG_OK; /* no defaults: calls must pass every argument */
    op->defaults = sg_arena_alloc(op->arena, (size_t)n * sizeof *op->defaults);
    op->fill = sg_arena_alloc(op->arena, (size_t)n);
    if (!op->defaults || !op->fill) return sg_error(SG_ENOMEM, "out of memory");
    mem m = {op->arena, false};
    for (int32_t i = first; i < n; i++) {
        if (!op->schema.args[i].default_value) continue; /* SG_FILL_NONE (zeroed) */
        sg_any *v = &op->defaults[i];
        bool    ok = box_default(&m, op, i, v) && sg__arg_value_ok(op, i, v);
        op->fill[i] = ok ? SG_FILL_OK : SG_FILL_CANNOT;
    }
    return m.oom ? sg_error(SG_ENOMEM, "out of memory") : SG_OK;
}

/* The message of a call that leaves out argument i, which cannot be filled in. */
static sg_status cannot_fill(const sg_op *op, int32_t nargs, int32_t i) {
    const sg_arg *a = &op->schema.args[i];
    const char   *name = a->name ? a->name : "?";
    if (!op->fill || op->fill[i] == SG_FILL_NONE)
        return sg_error(SG_EINVAL, "%s: expected %d argument%s, got %d; argument %d '%s' has "
                                   "no default to fill in (schema: %s)",
                        op->name, (int)op->nargs, op->nargs == 1 ? "" : "s", (int)nargs, (int)i,
                        name, op->text);
    return sg_error(SG_EINVAL, "%s: expected %d argument%s, got %d; the default of argument %d "
                               "'%s' (%s) has no boxed value to fill in, so a boxed call must "
                               "pass it (schema: %s)",
                    op->name, (int)op->nargs, op->nargs == 1 ? "" : "s", (int)nargs, (int)i, name,
                    a->default_text ? a->default_text : "?", op->text);
}

sg_status sg__call_filling(const sg_op *op, const sg_any *args, int32_t nargs, sg_any *rets,
                           int32_t nrets) {
    for (int32_t i = nargs; i < op->nargs; i++)
        if (!op->fill || op->fill[i] != SG_FILL_OK) return cannot_fill(op, nargs, i);
    if (nargs > 0 && !args)
        return sg_error(SG_EINVAL, "%s: %d argument%s, but args is NULL", op->name, (int)nargs,
                        nargs == 1 ? "" : "s");
    /* Rationale: most ops have few arguments; the array of a call with more is malloc'd. */
    enum { ON_STACK = 32 };
    sg_any  stack[ON_STACK];
    sg_any *full = op->nargs <= ON_STACK ? stack : malloc((size_t)op->nargs * sizeof *full);
    if (!full) return sg_error(SG_ENOMEM, "%s: out of memory filling in defaults", op->name);
    if (nargs > 0) memcpy(full, args, (size_t)nargs * sizeof *full);
    memcpy(full + nargs, op->defaults + nargs, (size_t)(op->nargs - nargs) * sizeof *full);
    sg_status st = sg_op_call_boxed(op, full, op->nargs, rets, nrets);
    if (full != stack) free(full);
    return st;
}

sg_status sg_op_arg_default(const sg_op *op, int32_t i, sg_any *out) {
    if (!op || !out) return sg_error(SG_EINVAL, "sg_op_arg_default: %s is NULL", op ? "out" : "op");
    *out = sg_any_none();
    if (op == &sg_op_uninit) return sg__uninit_error("sg_op_arg_default");
    if (i < 0 || i >= op->nargs)
        return sg_error(SG_EINVAL, "sg_op_arg_default: %s has %d argument%s; there is no "
                                   "argument %d",
                        op->name, (int)op->nargs, op->nargs == 1 ? "" : "s", (int)i);
    const sg_arg *a = &op->schema.args[i];
    if (!op->fill || op->fill[i] == SG_FILL_NONE)
        return sg_error(SG_ENOTFOUND, "sg_op_arg_default: %s: argument %d '%s' has no default",
                        op->name, (int)i, a->name ? a->name : "?");
    if (op->fill[i] != SG_FILL_OK)
        return sg_error(SG_EUNSUPPORTED, "sg_op_arg_default: %s: the default of argument %d "
                                         "'%s' (%s) has no boxed value",
                        op->name, (int)i, a->name ? a->name : "?", a->default_text);
    *out = op->defaults[i];
    return SG_OK;
}
