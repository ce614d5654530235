/* dsl_plan.c: a declaration's grid expanded into artifacts (a point for each arch, with its
 * constexprs and its prefix), and the plan JSON that tools/dsl_export.py builds them from
 * (docs/dsl.md, "The plan and the export"). */
#include "dsl.h"
#include "json_str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void value_text(sg_buf *b, const sg_dsl_value *v, bool json) {
    if (v->type == SG_DSLT_DTYPE) {
        if (json) sg_json_puts(b, sg_dsl_dtypes[v->i].name);
        else sg_buf_puts(b, sg_dsl_dtypes[v->i].name);
    } else if (v->type == SG_DSLT_BOOL && json) {
        sg_buf_puts(b, v->i ? "true" : "false");
    } else {
        sg_buf_printf(b, "%lld", (long long)v->i);
    }
}

/* "dtype=float32, N=1024", for messages. */
static void point_text(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_value *vals) {
    for (uint32_t i = 0; i < dc->ngrid; i++) {
        sg_buf_printf(b, "%s%s=", i ? ", " : "", dc->grid[i].name);
        value_text(b, &vals[i], false);
    }
    if (!dc->ngrid) sg_buf_puts(b, "(no grid variables)");
}

/* NAME__V1_V2__smXY, as a C identifier: '-' becomes 'm', any other byte C does not allow '_'. */
static char *make_prefix(sg_arena *a, const sg_dsl_decl *dc, const sg_dsl_value *vals,
                         int32_t cap) {
    sg_buf b;
    sg_buf_init(&b);
    sg_buf_printf(&b, "%s__", dc->name);
    for (uint32_t i = 0; i < dc->ngrid; i++) {
        if (i) sg_buf_putc(&b, '_');
        value_text(&b, &vals[i], false);
    }
    sg_buf_printf(&b, "%ssm%d", dc->ngrid ? "__" : "", cap);
    char *p = b.oom ? NULL : sg_arena_strndup(a, b.data, b.len);
    sg_buf_free(&b);
    for (char *q = p; q && *q; q++)
        if (*q == '-') *q = 'm';
        else if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                   (*q >= '0' && *q <= '9') || *q == '_'))
            *q = '_';
    return p;
}

static sg_dsl_artifact *add_art(sg_dsl_set *s) {
    if (s->narts == s->caparts) {
        uint32_t c = s->caparts ? 2 * s->caparts : 64;
        sg_dsl_artifact *p = realloc(s->arts, c * sizeof *p);
        if (!p) return NULL;
        s->arts = p, s->caparts = c;
    }
    sg_dsl_artifact *a = &s->arts[s->narts++];
    memset(a, 0, sizeof *a);
    return a;
}

/* num_warps (a power of two up to 32) and num_stages (1 to 16) at the point vals of dc into
 * ws; false after an error that names the point. */
static bool launch_shape(sg_diag *d, const sg_dsl_decl *dc, const sg_dsl_value *vals,
                         uint32_t ws[2]) {
    static const char *const names[2] = {"num_warps", "num_stages"};
    static const int64_t hi[2] = {32, 16};
    const sg_dsl_expr *e[2] = {&dc->num_warps, &dc->num_stages};
    for (int i = 0; i < 2; i++) {
        sg_dsl_value v = {0};
        const char *why = "";
        bool evaluated = sg_dsl_eval(e[i]->node, vals, &v, &why);
        if (evaluated && v.i >= 1 && v.i <= hi[i] && (i == 1 || !(v.i & (v.i - 1)))) {
            ws[i] = (uint32_t)v.i;
            continue;
        }
        sg_buf b;
        sg_buf_init(&b);
        point_text(&b, dc, vals);
        sg_buf_putc(&b, '\0');
        if (evaluated)
            sg_diag_report(d, SG_ERROR, e[i]->text.pos, "'%s' at the point %s (%lld): %s",
                           names[i], b.oom ? "?" : b.data, (long long)v.i,
                           i == 0 ? "not a power of two from 1 to 32" : "not from 1 to 16");
        else
            sg_diag_report(d, SG_ERROR, e[i]->text.pos, "'%s' at the point %s: %s", names[i],
                           b.oom ? "?" : b.data, why);
        sg_buf_free(&b);
        return false;
    }
    return true;
}

int sg_dsl_expand(sg_dsl_set *s, sg_dsl_decl *dc, sg_diag *d) {
    uint32_t before = d->nerrors;
    dc->first = s->narts;
    for (uint32_t p = 0; p < dc->npoints; p++) {
        sg_dsl_value *vals = sg_arena_alloc(s->a, (dc->ngrid + 1) * sizeof *vals);
        sg_dsl_value *cvals = sg_arena_alloc(s->a, (dc->nconstexprs + 1) * sizeof *cvals);
        if (!vals || !cvals) goto oom;
        /* the first variable varies slowest, as nested loops in declaration order */
        uint32_t rest = p;
        for (uint32_t i = dc->ngrid; i-- > 0;) {
            vals[i] = dc->grid[i].values[rest % dc->grid[i].n];
            rest /= dc->grid[i].n;
        }
        for (uint32_t c = 0; c < dc->nconstexprs; c++) {
            const char *why = "";
            if (sg_dsl_eval(dc->constexprs[c].value.node, vals, &cvals[c], &why)) continue;
            sg_buf b;
            sg_buf_init(&b);
            point_text(&b, dc, vals);
            sg_buf_putc(&b, '\0');
            sg_diag_report(d, SG_ERROR, dc->constexprs[c].value.text.pos,
                           "constexpr '%s' at the point %s: %s", dc->constexprs[c].name,
                           b.oom ? "?" : b.data, why);
            sg_buf_free(&b);
            return (int)(d->nerrors - before);
        }
        uint32_t ws[2] = {0, 0};
        if (!dc->lang->object && !launch_shape(d, dc, vals, ws)) return (int)(d->nerrors - before);
        /* an output (or scratch) of a fixed dtype has the dtype of the pointer it is passed as */
        for (uint32_t k = 0; k < dc->nparams; k++) {
            const sg_dsl_param *pa = &dc->params[k];
            const sg_dsl_sym *sym = sg_dsl_node_sym(pa->value.node);
            if (!pa->ptr || !sym || (sym->kind != SG_DSLS_OUT && sym->kind != SG_DSLS_SCRATCH))
                continue;
            const sg_dsl_output *o = sym->kind == SG_DSLS_OUT ? &dc->outputs[sym->index]
                                                               : &dc->scratch[sym->index];
            int od = o->dtype_var >= 0 ? (int)vals[o->dtype_var].i : o->dtype;
            int pd = pa->grid_var >= 0 ? (int)vals[pa->grid_var].i : pa->base;
            if (od < 0 || od == pd) continue;
            sg_buf b;
            sg_buf_init(&b);
            point_text(&b, dc, vals);
            sg_buf_putc(&b, '\0');
            sg_diag_report(d, SG_ERROR, pa->pos, "parameter '%s' points to %s at the point %s, "
                           "but %s is %s", pa->name, sg_dsl_dtypes[pd].name, b.oom ? "?" : b.data,
                           sym->name, sg_dsl_dtypes[od].name);
            sg_buf_free(&b);
            return (int)(d->nerrors - before);
        }
        for (uint32_t k = 0; k < dc->narchs; k++) {
            char *prefix = make_prefix(s->a, dc, vals, dc->caps[k]);
            if (!prefix) goto oom;
            for (uint32_t j = 0; j < s->narts; j++)
                if (strcmp(s->arts[j].prefix, prefix) == 0) {
                    const sg_dsl_decl *o = s->arts[j].decl;
                    sg_diag_report(d, SG_ERROR, dc->pos,
                                   "two artifacts have the prefix '%s' (the other is of '%s', "
                                   "%s:%u)", prefix, o->name, o->pos.src->path, o->pos.line);
                    return (int)(d->nerrors - before);
                }
            sg_dsl_artifact *a = add_art(s);
            if (!a) goto oom;
            *a = (sg_dsl_artifact){.decl = dc, .point = p, .arch = k, .prefix = prefix,
                                   .vals = vals, .cvals = cvals, .warps = ws[0],
                                   .stages = ws[1]};
            dc->nartifacts++;
        }
    }
    return (int)(d->nerrors - before);
oom:
    sg_diag_plain(d, SG_ERROR, "out of memory");
    return (int)(d->nerrors - before);
}

void sg_dsl_param_type(sg_buf *b, const sg_dsl_param *p, const sg_dsl_artifact *a) {
    int dt = p->grid_var >= 0 ? (int)a->vals[p->grid_var].i : p->base;
    sg_buf_printf(b, "%s%s", p->ptr ? "*" : "", sg_dsl_dtypes[dt].triton);
}

static void plan_artifact(sg_buf *b, const sg_dsl_artifact *a) {
    const sg_dsl_decl *dc = a->decl;
    int32_t cap = dc->caps[a->arch];
    sg_buf_puts(b, "  {\"prefix\": ");
    sg_json_puts(b, a->prefix);
    sg_buf_puts(b, ", \"decl\": ");
    sg_json_puts(b, dc->name);
    sg_buf_puts(b, ", \"op\": ");
    sg_json_puts(b, dc->op_name);
    sg_buf_puts(b, ",\n   \"dsl\": ");
    sg_json_puts(b, dc->dsl);
    sg_buf_puts(b, ", \"compiler\": ");
    sg_json_puts(b, dc->compiler);
    sg_buf_puts(b, ",\n   \"source\": ");
    sg_json_puts(b, dc->source_path);
    sg_buf_puts(b, ", \"source_key\": ");
    sg_json_puts(b, dc->source);
    sg_buf_puts(b, ",\n   \"kernel\": ");
    sg_json_puts(b, dc->kernel);
    sg_buf_puts(b, ", \"arch\": ");
    sg_json_puts(b, dc->arch_names[a->arch]);
    sg_buf_printf(b, ", \"capability\": [%d, %d],\n   \"point\": {", cap / 10, cap % 10);
    for (uint32_t i = 0; i < dc->ngrid; i++) {
        if (i) sg_buf_puts(b, ", ");
        sg_json_puts(b, dc->grid[i].name);
        sg_buf_puts(b, ": ");
        value_text(b, &a->vals[i], true);
    }
    sg_buf_puts(b, "},\n   \"signature\": [");
    for (uint32_t i = 0; i < dc->nparams; i++) {
        sg_buf_puts(b, i ? ", [" : "[");
        sg_json_puts(b, dc->params[i].name);
        sg_buf_puts(b, ", \"");
        sg_dsl_param_type(b, &dc->params[i], a);
        sg_buf_puts(b, "\"]");
    }
    sg_buf_puts(b, "],\n   \"constexprs\": {");
    for (uint32_t i = 0; i < dc->nconstexprs; i++) {
        if (i) sg_buf_puts(b, ", ");
        sg_json_puts(b, dc->constexprs[i].name);
        sg_buf_puts(b, ": ");
        value_text(b, &a->cvals[i], true);
    }
    sg_buf_puts(b, "}, \"divisibility\": [");
    bool first = true;
    for (uint32_t i = 0; i < dc->nparams; i++)
        if (dc->params[i].ptr) {
            if (!first) sg_buf_puts(b, ", ");
            sg_json_puts(b, dc->params[i].name);
            first = false;
        }
    if (dc->lang->object) /* its host function launches: no warps or stages */
        sg_buf_puts(b, "]}");
    else
        sg_buf_printf(b, "],\n   \"num_warps\": %u, \"num_stages\": %u}", a->warps, a->stages);
}

void sg_dsl_plan(sg_buf *b, const sg_dsl_set *s) {
    sg_buf_puts(b, "{\"version\": 1, \"artifacts\": [");
    for (uint32_t i = 0; i < s->narts; i++) {
        sg_buf_puts(b, i ? ",\n" : "\n");
        plan_artifact(b, &s->arts[i]);
    }
    sg_buf_puts(b, "]}\n");
}
