/* deriv_emit_value.c: a typed formula's values as C (deriv_emit.h): arguments converted to
 * the C types of the parameters they are passed as, calls into temporaries, properties of
 * tensors read off them, ?: on tensors as if / else. */
#include "deriv_emit.h"
#include "derive.h"
#include "dsl_emit.h"

/* The C of a schema default, as a value of family f, to out; false where it is not written
 * here. */
static bool default_c(const sg_arg *a, int f, sg_buf *out) {
    const sg_value *v = a->default_value;
    if (!v) return false;
    switch (v->kind) {
    case SG_VAL_NONE:
        sg_buf_puts(out, "NULL");
        return f != SG_FAM_TENSOR && f != SG_FAM_INT && f != SG_FAM_FLOAT && f != SG_FAM_BOOL &&
               f != SG_FAM_SCALAR;
    case SG_VAL_BOOL:
        if (f == SG_FAM_OPT_BOOL) sg_buf_printf(out, "&(bool){%s}", v->u.b ? "true" : "false");
        else sg_buf_puts(out, v->u.b ? "true" : "false");
        return f == SG_FAM_BOOL || f == SG_FAM_OPT_BOOL;
    case SG_VAL_INT:
        if (f == SG_FAM_SCALAR)
            sg_buf_printf(out, "sg_scalar_int(INT64_C(%lld))", (long long)v->u.i);
        else if (f == SG_FAM_INT) sg_buf_printf(out, "INT64_C(%lld)", (long long)v->u.i);
        else if (f == SG_FAM_FLOAT) sg_buf_printf(out, "%lld.0", (long long)v->u.i);
        else if (f == SG_FAM_INT_LIST) /* int[1] dim=0: one item */
            sg_buf_printf(out, "(sg_int_list){(const int64_t[]){INT64_C(%lld)}, 1}",
                          (long long)v->u.i);
        else return false;
        return true;
    case SG_VAL_FLOAT:
        if (f == SG_FAM_SCALAR) sg_buf_printf(out, "sg_scalar_float(%.17g)", v->u.f);
        else if (f == SG_FAM_FLOAT) sg_buf_printf(out, "%.17g", v->u.f);
        else return false;
        return true;
    case SG_VAL_LIST:
        if (f != SG_FAM_INT_LIST) return false;
        if (!v->u.list.n) {
            sg_buf_puts(out, "(sg_int_list){NULL, 0}");
            return true;
        }
        sg_buf_puts(out, "(sg_int_list){(const int64_t[]){");
        for (uint32_t i = 0; i < v->u.list.n; i++) {
            if (v->u.list.items[i].kind != SG_VAL_INT) return false;
            sg_buf_printf(out, "%sINT64_C(%lld)", i ? ", " : "", (long long)v->u.list.items[i].u.i);
        }
        sg_buf_printf(out, "}, %u}", v->u.list.n);
        return true;
    default: return false;
    }
}

/* A call of d->op, its arguments converted to its parameters' C types, its results in
 * temporaries; the first one's index (of sg_l, the Tensor[] temporaries, for a call whose
 * result is a Tensor[]). */
uint32_t sg_dem_call(em *e, const sg_dtx *d) {
    const sg_schema *sc = &d->op->schema;
    sg_buf args;
    sg_buf_init(&args);
    for (uint32_t p = 0; p < sc->nargs && !e->why; p++) {
        const sg_dtx *k = d->kids[p];
        int f = sg_dem_fam(sc->args[p].type);
        if (p) sg_buf_puts(&args, ", ");
        if (k && k->type == SG_FT_OPTIONS) { /* dtype?, layout?, device?, pin_memory? */
            sg_buf t;
            sg_buf_init(&t);
            sg_dem_value(e, k->kids[0], SG_FAM_TENSOR, &t);
            sg_buf_putc(&t, '\0');
            const char *x = t.oom ? "NULL" : t.data;
            sg_buf_printf(&args, "&(sg_dtype){(sg_dtype)(%s)->dtype}, NULL, &(%s)->device, NULL",
                          x, x);
            sg_buf_free(&t);
            p += 3;
        } else if (k && k->type == SG_FT_GEOMETRY) { /* sizes, strides, storage offset */
            sg_buf t;
            sg_buf_init(&t);
            sg_dem_value(e, k->kids[0], SG_FAM_TENSOR, &t);
            sg_buf_putc(&t, '\0');
            const char *x = t.oom ? "NULL" : t.data;
            sg_buf_printf(&args, "(sg_int_list){(%s)->sizes, (%s)->ndim}, (sg_int_list){(%s)->"
                          "strides, (%s)->ndim}, (%s)->offset", x, x, x, x, x);
            sg_buf_free(&t);
            p += 2;
        } else if (!k) {
            if (!default_c(&sc->args[p], f, &args))
                e->why = "a default value of a type the emitter does not write";
        } else {
            sg_dem_value(e, k, f, &args);
        }
    }
    bool list = sg_dem_list_result(sc);
    uint32_t first = list ? e->nl++ : e->nt;
    if (!list) e->nt += sc->nrets ? sc->nrets : 1;
    sg_buf_printf(e->stmts, "%sst = %s(", e->ind, d->op->c->cname);
    sg_dem_putbuf(e->stmts, &args);
    for (uint32_t r = 0; r < sc->nrets; r++)
        sg_buf_printf(e->stmts, "%s&sg_%c[%u]", sc->nargs || r ? ", " : "", list ? 'l' : 't',
                      first + r);
    sg_buf_printf(e->stmts, ");\n%sif (st != SG_OK) goto done;\n", e->ind);
    sg_buf_free(&args);
    return first;
}

/* d, a property of a tensor, as C of family want. */
static void prop(em *e, const sg_dtx *d, int want, sg_buf *out) {
    const char *p = d->text;
    if (!strncmp(p, "to_args_", 8)) { /* a Tensor[] input's facts, as its node kept them */
        const char *n = e->dv->op->c->arg_cnames[d->kids[0]->idx];
        const char *k = strcmp(p, "to_args_sizes") ? "dtypes" : "sizes";
        sg_buf_printf(out, "(sg_int_list){n->v_%s_%s, n->n_%s_%s}", n, k, n, k);
        return;
    }
    sg_buf t;
    sg_buf_init(&t);
    sg_dem_value(e, d->kids[0], SG_FAM_TENSOR, &t);
    sg_buf_putc(&t, '\0');
    const char *x = t.oom ? "NULL" : t.data;
    if (strstr(p, "sizes") || strstr(p, "strides")) {
        sg_buf_printf(out, "%s(sg_int_list){(%s)->%s, (%s)->ndim}",
                      want == SG_FAM_OPT_INT_LIST ? "&" : "", x,
                      strstr(p, "strides") ? "strides" : "sizes", x);
    } else if (!strcmp(p, "size") || !strcmp(p, "sym_size")) {
        sg_buf_printf(out, "sg_agh_size(%s, ", x);
        sg_dem_value(e, d->kids[1], SG_FAM_INT, out);
        sg_buf_putc(out, ')');
    } else if (strstr(p, "numel")) {
        sg_buf_printf(out, "sg_tensor_numel(%s)", x);
    } else if (!strcmp(p, "dim")) {
        sg_buf_printf(out, "(int64_t)(%s)->ndim", x);
    } else if (!strcmp(p, "scalar_type")) {
        sg_buf_printf(out, want == SG_FAM_OPT_DTYPE ? "&(sg_dtype){(sg_dtype)(%s)->dtype}"
                                                    : "(sg_dtype)(%s)->dtype", x);
    } else if (!strcmp(p, "defined")) {
        sg_buf_printf(out, "(%s != NULL)", x);
    } else if (!strcmp(p, "is_complex")) {
        sg_buf_printf(out, "sg_dtype_is_complex((sg_dtype)(%s)->dtype)", x);
    } else if (!strcmp(p, "is_cpu") || !strcmp(p, "is_cuda")) {
        sg_buf_printf(out, "((%s)->device.type == %s)", x,
                      !strcmp(p, "is_cpu") ? "SG_DEV_CPU" : "SG_DEV_CUDA");
    } else if (!strcmp(p, "is_xpu")) {
        sg_buf_puts(out, "false");
    } else if (!strcmp(p, "layout")) {
        sg_buf_puts(out, want == SG_FAM_OPT_LAYOUT ? "&(sg_layout){SG_STRIDED}" : "SG_STRIDED");
    } else if (!strcmp(p, "suggest_memory_format")) {
        sg_buf_puts(out, want == SG_FAM_OPT_MEMORY_FORMAT
                             ? "&(sg_memory_format){SG_CONTIGUOUS_FORMAT}"
                             : "SG_CONTIGUOUS_FORMAT");
    } else if (!strcmp(p, "device")) {
        sg_buf_printf(out, want == SG_FAM_OPT_DEVICE ? "&(%s)->device" : "(%s)->device", x);
    } else if (strstr(p, "storage_offset")) {
        sg_buf_printf(out, "(%s)->offset", x);
    } else {
        e->why = "a property of a tensor the emitter does not write";
    }
    sg_buf_free(&t);
}

/* d (a bool, int, float or Scalar) as an sg_scalar. */
static void scalar_of(em *e, const sg_dtx *d, sg_buf *out) {
    static const struct { int f; const char *fn; } k[] = {
        {SG_FAM_INT, "sg_scalar_int("}, {SG_FAM_FLOAT, "sg_scalar_float("},
        {SG_FAM_BOOL, "sg_scalar_bool("}};
    if (d->type == SG_FAM_SCALAR) {
        sg_dem_value(e, d, SG_FAM_SCALAR, out);
        return;
    }
    for (size_t i = 0; i < sizeof k / sizeof *k; i++)
        if (d->type == k[i].f) {
            sg_buf_puts(out, k[i].fn);
            sg_dem_value(e, d, d->type, out);
            sg_buf_putc(out, ')');
            return;
        }
    e->why = "a Scalar made of another type";
}

/* The optional families whose C parameter points to the plain one's value. */
const sg_dem_optional sg_dem_optionals[] = {
    {SG_FAM_OPT_INT, SG_FAM_INT, "int64_t"},       {SG_FAM_OPT_FLOAT, SG_FAM_FLOAT, "double"},
    {SG_FAM_OPT_BOOL, SG_FAM_BOOL, "bool"},        {SG_FAM_OPT_DTYPE, SG_FAM_DTYPE, "sg_dtype"},
    {SG_FAM_OPT_SCALAR, SG_FAM_SCALAR, "sg_scalar"},
    {SG_FAM_OPT_INT_LIST, SG_FAM_INT_LIST, "sg_int_list"},
};
_Static_assert(sizeof sg_dem_optionals / sizeof *sg_dem_optionals == SG_DEM_NOPTIONALS,
               "SG_DEM_NOPTIONALS counts sg_dem_optionals");

/* A tensor-valued ?:, as if / else around each branch's statements, into one temporary. */
static void tensor_ternary(em *e, const sg_dtx *d, sg_buf *out) {
    sg_buf cond;
    sg_buf_init(&cond);
    sg_dem_value(e, d->kids[0], SG_FAM_BOOL, &cond);
    sg_buf_putc(&cond, '\0');
    uint32_t t = e->nt++;
    sg_buf_printf(e->stmts, "%sif (%s) {\n", e->ind, cond.oom ? "0" : cond.data);
    sg_buf_free(&cond);
    const char *ind = e->ind;
    char deeper[80];
    snprintf(deeper, sizeof deeper, "%s    ", ind);
    for (int k = 1; k <= 2; k++) {
        sg_buf v;
        sg_buf_init(&v);
        e->ind = deeper;
        sg_dem_value(e, d->kids[k], SG_FAM_TENSOR, &v);
        sg_buf_putc(&v, '\0');
        sg_buf_printf(e->stmts, "%ssg_t[%u] = sg_tensor_retain(%s);\n", deeper, t,
                      v.oom ? "NULL" : v.data);
        sg_buf_free(&v);
        e->ind = ind;
        sg_buf_printf(e->stmts, k == 1 ? "%s} else {\n" : "%s}\n", ind);
    }
    sg_buf_printf(out, "sg_t[%u]", t);
}

static void constant(em *e, const sg_dtx *d, sg_buf *out) {
    const char *t = d->text, *c = sg_dt_const_c(t);
    if (c) {
        sg_buf_puts(out, c);
        return;
    }
    switch (d->type) { /* literals, as written */
    case SG_FAM_INT: sg_buf_printf(out, "INT64_C(%s)", t); return;
    case SG_FAM_FLOAT: sg_buf_printf(out, "%s%s", t, strpbrk(t, ".eE") ? "" : ".0"); return;
    case SG_FAM_STR: /* escapes as the formula wrote them are C++'s: not carried over */
        if (strchr(t, '\\')) e->why = "a string with an escape";
        else sg_dsl_c_string(out, t);
        return;
    default: e->why = "a constant of a type the emitter does not write"; return;
    }
}

void sg_dem_value(em *e, const sg_dtx *d, int want, sg_buf *out) {
    if (e->why) return;
    if (d->type == SG_FT_NONE || d->what == SG_DT_UNDEFINED) {
        sg_buf_puts(out, "NULL");
        return;
    }
    for (size_t i = 0; i < SG_DEM_NOPTIONALS; i++)
        if (sg_dem_optionals[i].opt == want && d->type != want) { /* a value's address */
            sg_buf_printf(out, "&(%s){", sg_dem_optionals[i].ctype);
            sg_dem_value(e, d, sg_dem_optionals[i].plain, out);
            sg_buf_putc(out, '}');
            return;
        }
    if (want == SG_FAM_SCALAR && d->type != SG_FAM_SCALAR) {
        scalar_of(e, d, out);
        return;
    }
    if (want == SG_FAM_INT_LIST && d->type == SG_FAM_INT) { /* one int for a list */
        sg_buf_puts(out, "(sg_int_list){(const int64_t[]){");
        sg_dem_value(e, d, SG_FAM_INT, out);
        sg_buf_puts(out, "}, 1}");
        return;
    }
    switch (d->what) {
    case SG_DT_GRAD:
        if (d->idx == UINT32_MAX && sg_dem_list_result(&e->dv->op->schema))
            sg_buf_puts(out, "(sg_tensor_list){grads, (int32_t)sg_n->nin}");
        else if (d->idx == UINT32_MAX)
            sg_buf_printf(out, "(sg_tensor_list){grads, %u}", e->dv->op->schema.nrets);
        else
            sg_buf_printf(out, "grads[%u]", d->idx);
        return;
    case SG_DT_INPUT: sg_buf_printf(out, "a_%s", e->dv->op->c->arg_cnames[d->idx]); return;
    case SG_DT_RESULT: sg_buf_printf(out, "r%u", d->idx); return;
    case SG_DT_MASK: sg_buf_puts(out, "(sg_bool_list){sg_mask, SG_AG_NMASK}"); return;
    case SG_DT_UNDEFINED: sg_buf_puts(out, "NULL"); return;
    case SG_DT_CONST: constant(e, d, out); return;
    case SG_DT_OP:
        if (d->type == SG_FT_TUPLE) e->why = "a tuple used as one value";
        else if (d->type == SG_FAM_TENSOR_LIST) sg_buf_printf(out, "sg_l[%u]", sg_dem_call(e, d));
        else sg_buf_printf(out, "sg_t[%u]", sg_dem_call(e, d));
        return;
    case SG_DT_PROP: prop(e, d, want, out); return;
    case SG_DT_CBIN:
    case SG_DT_CUNARY:
        if (d->type == SG_FAM_SCALAR) { /* a Scalar in C arithmetic: as a double */
            e->why = "arithmetic on Scalars";
            return;
        }
        sg_buf_putc(out, '(');
        if (d->what == SG_DT_CUNARY) sg_buf_puts(out, d->text);
        sg_dem_value(e, d->kids[0], d->kids[0]->type, out);
        if (d->what == SG_DT_CBIN) {
            sg_buf_printf(out, " %s ", d->text);
            sg_dem_value(e, d->kids[1], d->kids[1]->type, out);
        }
        sg_buf_putc(out, ')');
        return;
    case SG_DT_LIST:
        if (!d->nkids) {
            sg_buf_puts(out, "(sg_int_list){NULL, 0}");
            return;
        }
        sg_buf_puts(out, "(sg_int_list){(const int64_t[]){");
        for (uint32_t i = 0; i < d->nkids; i++) {
            if (i) sg_buf_puts(out, ", ");
            sg_dem_value(e, d->kids[i], SG_FAM_INT, out);
        }
        sg_buf_printf(out, "}, %u}", d->nkids);
        return;
    case SG_DT_INDEX:
        if (d->kids[0]->what == SG_DT_MASK) {
            sg_buf_puts(out, "sg_mask[");
        } else {
            sg_buf_putc(out, '(');
            sg_dem_value(e, d->kids[0], d->kids[0]->type, out);
            sg_buf_puts(out, ").items[");
        }
        sg_dem_value(e, d->kids[1], SG_FAM_INT, out);
        sg_buf_putc(out, ']');
        return;
    case SG_DT_TERNARY:
        if (d->type == SG_FAM_TENSOR || d->type == SG_FAM_OPT_TENSOR) {
            tensor_ternary(e, d, out);
            return;
        }
        sg_buf_putc(out, '(');
        sg_dem_value(e, d->kids[0], SG_FAM_BOOL, out);
        sg_buf_puts(out, " ? ");
        sg_dem_value(e, d->kids[1], want, out);
        sg_buf_puts(out, " : ");
        sg_dem_value(e, d->kids[2], want, out);
        sg_buf_putc(out, ')');
        return;
    case SG_DT_GEOMETRY: e->why = "TensorGeometry other than as an argument"; return;
    }
}

/* A tuple of n tensors (a call that returns several, undefined tensors, or ?: of those) into n
 * consecutive temporaries, each a reference or NULL; the first's index. */
uint32_t sg_dem_tuple(em *e, const sg_dtx *d, uint32_t n) {
    if (d->what == SG_DT_OP && d->type == SG_FT_TUPLE && d->op->schema.nrets == n)
        return sg_dem_call(e, d);
    uint32_t r = e->nt;
    e->nt += n;
    if (d->what == SG_DT_UNDEFINED) return r;
    if (d->what != SG_DT_TERNARY) {
        e->why = "a formula for several inputs that is not a call, ?: or undefined tensors";
        return r;
    }
    sg_buf cond;
    sg_buf_init(&cond);
    sg_dem_value(e, d->kids[0], SG_FAM_BOOL, &cond);
    sg_buf_putc(&cond, '\0');
    sg_buf_printf(e->stmts, "%sif (%s) {\n", e->ind, cond.oom ? "0" : cond.data);
    sg_buf_free(&cond);
    const char *ind = e->ind;
    char deeper[80];
    snprintf(deeper, sizeof deeper, "%s    ", ind);
    for (int k = 1; k <= 2; k++) {
        e->ind = deeper;
        uint32_t t = sg_dem_tuple(e, d->kids[k], n);
        for (uint32_t j = 0; j < n; j++)
            sg_buf_printf(e->stmts, "%ssg_t[%u] = sg_t[%u];\n%ssg_t[%u] = NULL;\n", deeper, r + j,
                          t + j, deeper, t + j);
        e->ind = ind;
        sg_buf_printf(e->stmts, k == 1 ? "%s} else {\n" : "%s}\n", ind);
    }
    return r;
}
