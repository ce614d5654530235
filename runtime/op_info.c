/* op_info.c: per-argument schema facts of an op (sg_backend.h), read from its parsed schema. */
#include "rt_dispatch.h"
#include "sg_backend.h"

#include <stdio.h>
#include <string.h>

static void fill(const sg_arg *a, bool is_arg, sg_arg_info *out) {
    memset(out, 0, sizeof *out);
    out->name = a->name;
    sg_buf b;
    sg_buf_init(&b);
    sg_type_print(&b, a->type, false);
    const char *text = b.data ? b.data : "?";
    if (strlen(text) < sizeof out->type)
        memcpy(out->type, text, strlen(text) + 1);
    else
        snprintf(out->type, sizeof out->type, "%.*s...", (int)sizeof out->type - 4, text);
    sg_buf_free(&b);
    const sg_alias *al = sg_type_alias(a->type);
    out->alias = -1;
    if (al && al->nbefore > 0) {
        out->alias_set = al->before[0];
        out->alias = (unsigned char)al->before[0][0];
    }
    out->write = a->write;
    out->kwarg_only = is_arg && a->kwarg_only;
    out->is_out = is_arg && a->kwarg_only && a->write;
    out->is_tensor = sg_type_is_tensor_like(a->type);
    out->has_default = a->default_text != NULL;
    out->default_text = a->default_text;
}

sg_status sg_op_arg_info(const sg_op *op, int32_t i, sg_arg_info *out) {
    if (!op || !out) return sg_error(SG_EINVAL, "sg_op_arg_info: %s is NULL", op ? "out" : "op");
    if (i < 0 || i >= op->nargs)
        return sg_error(SG_EINVAL, "sg_op_arg_info: %s has %d argument%s; there is no argument %d",
                        op->name, (int)op->nargs, op->nargs == 1 ? "" : "s", (int)i);
    fill(&op->schema.args[i], true, out);
    return SG_OK;
}

sg_status sg_op_ret_info(const sg_op *op, int32_t i, sg_arg_info *out) {
    if (!op || !out) return sg_error(SG_EINVAL, "sg_op_ret_info: %s is NULL", op ? "out" : "op");
    if (i < 0 || i >= op->nrets)
        return sg_error(SG_EINVAL, "sg_op_ret_info: %s has %d result%s; there is no result %d",
                        op->name, (int)op->nrets, op->nrets == 1 ? "" : "s", (int)i);
    fill(&op->schema.rets[i], false, out);
    return SG_OK;
}

int32_t sg_op_ret_alias_arg(const sg_op *op, int32_t i) {
    if (!op || i < 0 || i >= op->nrets) return -1;
    const sg_alias *r = sg_type_alias(op->schema.rets[i].type);
    if (!r || !r->nbefore || !strcmp(r->before[0], "*")) return -1;
    for (int32_t a = 0; a < op->nargs; a++) {
        const sg_alias *x = sg_type_alias(op->schema.args[a].type);
        if (x && x->nbefore && !strcmp(x->before[0], r->before[0])) return a;
    }
    return -1;
}
