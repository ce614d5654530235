/* dsl_c.c: pieces of C that the writers of LIB_dsl.c (dsl_emit.c, dsl_emit_when.c,
 * dsl_table_emit.c) and of the generated backward kernels share: expressions at a grid point,
 * the op's parameters and results, the device test, comments and string literals, and the
 * generated files' banner mark. */
#include "c_text.h"
#include "derive.h"
#include "dsl.h"
#include "dsl_emit.h"

#include "schema/sg_type_table.h"

#include <stdlib.h>
#include <string.h>

/* What the banner of LIB_dsl.c and LIB_dsl.h ends with (sg_stale's marks are " with LABEL.
 * Do not edit."). */
const char sg_dsl_banner_mark[] = " with schemagen --dsl. Do not edit.";

/* ---- symbols at a point ------------------------------------------------------------------ */

typedef struct point_env {
    const sg_dsl_decl     *dc;
    const sg_dsl_artifact *a;
} point_env;

static void sym_c(void *ud, sg_buf *b, const sg_dsl_sym *s) {
    const point_env *pe = ud;
    switch (s->kind) {
    case SG_DSLS_ARG: sg_buf_puts(b, pe->dc->op->c->arg_cnames[s->index]); break;
    case SG_DSLS_OUT: sg_buf_printf(b, "sg_out%u", s->index); break;
    case SG_DSLS_SCRATCH: sg_buf_printf(b, "sg_scratch%u", s->index); break;
    case SG_DSLS_CAP: sg_buf_puts(b, "sg_cap"); break;
    case SG_DSLS_GRID: {
        const sg_dsl_value *v = &pe->a->vals[s->index];
        if (v->type == SG_DSLT_DTYPE) sg_buf_puts(b, sg_dsl_dtypes[v->i].cenum);
        else sg_buf_printf(b, "INT64_C(%lld)", (long long)v->i);
        break;
    }
    }
}

void sg_dsl_c_expr(sg_buf *b, const sg_dsl_expr *e, const sg_dsl_decl *dc,
                   const sg_dsl_artifact *a) {
    sg_dsl_c_node(b, e->node, dc, a);
}

void sg_dsl_c_node(sg_buf *b, const sg_dsl_node *n, const sg_dsl_decl *dc,
                   const sg_dsl_artifact *a) {
    point_env pe = {dc, a};
    sg_dsl_emit_env env = {sym_c, &pe};
    sg_dsl_emit(b, n, &env);
}

/* ---- parameters of the op ---------------------------------------------------------------- */

static void c_param(sg_buf *b, const char *ctype, const char *name) {
    size_t n = strlen(ctype);
    sg_buf_printf(b, "%s%s%s", ctype, n && ctype[n - 1] == '*' ? "" : " ", name);
}

/* "sg_tensor *input, sg_int_list normalized_shape, ..." (the op's arguments) */
void sg_dsl_c_params(sg_buf *b, const sg_op *op) {
    for (uint32_t i = 0; i < op->schema.nargs; i++) {
        if (i) sg_buf_puts(b, ", ");
        c_param(b, sg_type_family_rows[sg_type_family_of(op->schema.args[i].type)].param,
                op->c->arg_cnames[i]);
    }
}

void sg_dsl_c_args(sg_buf *b, const sg_op *op) {
    for (uint32_t i = 0; i < op->schema.nargs; i++)
        sg_buf_printf(b, "%s%s", i ? ", " : "", op->c->arg_cnames[i]);
}

/* (void) for each argument: a declaration's expressions need not read them all. */
void sg_dsl_c_void_args(sg_buf *b, const sg_op *op) {
    if (!op->schema.nargs) return;
    sg_buf_puts(b, "    ");
    for (uint32_t i = 0; i < op->schema.nargs; i++)
        sg_buf_printf(b, "%s(void)%s", i ? ", " : "", op->c->arg_cnames[i]);
    sg_buf_puts(b, ";\n");
}

/* The op's first Tensor argument that is never None: the one whose device decides. */
uint32_t sg_dsl_c_first_tensor(const sg_op *op) {
    for (uint32_t i = 0; i < op->schema.nargs; i++)
        if (sg_type_family_of(op->schema.args[i].type) == SG_FAM_TENSOR) return i;
    return 0; /* outputs' `like` and `sizes` need one: dsl_launch.c made sure */
}

/* ---- what the _when function and the launch share ---------------------------------------- */

const sg_dsl_output *sg_dsl_c_made_tensor(const sg_dsl_decl *dc, uint32_t j, const char **name,
                                          uint32_t *i) {
    bool out = j < dc->noutputs;
    *name = out ? "out" : "scratch";
    *i = out ? j : j - dc->noutputs;
    return out ? &dc->outputs[j] : &dc->scratch[j - dc->noutputs];
}

void sg_dsl_c_point_comment(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_artifact *a) {
    sg_buf_printf(b, "/* %s:", a->prefix);
    for (uint32_t i = 0; i < dc->ngrid; i++) {
        const sg_dsl_value *v = &a->vals[i];
        sg_buf_printf(b, " %s=", dc->grid[i].name);
        if (v->type == SG_DSLT_DTYPE) sg_buf_puts(b, sg_dsl_dtypes[v->i].name);
        else sg_buf_printf(b, "%lld", (long long)v->i);
    }
    sg_buf_puts(b, " */");
}

/* ---- the predicate and the implementation ------------------------------------------------ */

void sg_dsl_c_rets_null(sg_buf *b, const sg_op *op) {
    for (uint32_t i = 0; i < op->schema.nrets; i++)
        sg_buf_printf(b, "    *%s = NULL;\n", op->c->ret_cnames[i]);
}

void sg_dsl_c_args_rets(sg_buf *b, const sg_op *op) {
    sg_dsl_c_args(b, op);
    for (uint32_t i = 0; i < op->schema.nrets; i++)
        sg_buf_printf(b, ", %s", op->c->ret_cnames[i]);
}

void sg_dsl_c_rets(sg_buf *b, const sg_op *op) {
    for (uint32_t i = 0; i < op->schema.nrets; i++)
        sg_buf_printf(b, ", sg_tensor **%s", op->c->ret_cnames[i]);
}

void sg_dsl_c_on_device(sg_buf *b, const sg_op *op, const char *otherwise) {
    const char *t = op->c->arg_cnames[sg_dsl_c_first_tensor(op)];
    sg_buf_printf(b, "    if (!%s || %s->device.type != SG_DEV_CUDA) %s;\n", t, t, otherwise);
    for (uint32_t i = 0; i < op->schema.nargs; i++) {
        sg_type_family_id f = sg_type_family_of(op->schema.args[i].type);
        const char *n = op->c->arg_cnames[i];
        if ((f == SG_FAM_TENSOR || f == SG_FAM_OPT_TENSOR) && n != t)
            sg_buf_printf(b, "    if (%s && (%s->device.type != SG_DEV_CUDA || %s->device.index "
                          "!= %s->device.index)) %s;\n", n, n, n, t, otherwise);
    }
    sg_buf_printf(b, "    int sg_dev = %s->device.index;\n", t);
}

/* The sg_buf forms of c_text.h's two (cold paths: a scratch copy each). */
static void put_inert(sg_buf *b, const char *s, size_t (*f)(char *, const char *, size_t)) {
    size_t n = strlen(s);
    char  *d = malloc(SG_C_TEXT_MAX(n));
    if (!d) {
        b->oom = true;
        return;
    }
    sg_buf_putn(b, d, f(d, s, n));
    free(d);
}

void sg_dsl_c_comment_text(sg_buf *b, const char *s) { put_inert(b, s, sg_c_comment); }

void sg_dsl_c_string(sg_buf *b, const char *s) { put_inert(b, s, sg_c_string); }
