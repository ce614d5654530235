/* dsl_table_emit.c: what templates and decision tables add to LIB_dsl.c and LIB_dsl.h
 * (docs/gemm.md): a template's entry by point, and a table's rules as data, a finder over them,
 * and the override's predicate and implementation, which send each class to its cuBLASLt
 * algorithm or its template's point. */
#include "derive.h"
#include "dsl_emit.h"

/* ---- templates ---------------------------------------------------------------------------- */

/* Whether declaration i is the first template of its op (which names the op's list). */
static bool first_template_of_op(const sg_dsl_set *s, uint32_t i) {
    if (!s->decls[i]->is_template) return false;
    for (uint32_t j = 0; j < i; j++)
        if (s->decls[j]->is_template && s->decls[j]->op == s->decls[i]->op) return false;
    return true;
}

/* How many templates the op of declaration i (its first) has. */
static uint32_t templates_of_op(const sg_dsl_set *s, uint32_t i) {
    uint32_t n = 0;
    for (uint32_t j = i; j < s->ndecls; j++)
        n += s->decls[j]->is_template && s->decls[j]->op == s->decls[i]->op;
    return n;
}

/* A template's entry by point, declared in LIB_dsl.h (for tuners and tests), and the text of
 * each point. */
void sg_dsl_template_emit(sg_buf *b, const sg_dsl_decl *dc, const sg_dsl_set *s,
                          const char *lib) {
    const sg_op *op = dc->op;
    sg_buf_printf(b, "const char *%s_dsl_point_%s(int32_t sg_point) {\n", lib, dc->name);
    sg_buf_puts(b, "    switch (sg_point) {\n");
    for (uint32_t p = 0; p < dc->npoints; p++) {
        const sg_dsl_artifact *a = &s->arts[dc->first + p * dc->narchs];
        sg_buf_printf(b, "    case %u: return \"{", p);
        for (uint32_t i = 0; i < dc->ngrid; i++) {
            const sg_dsl_value *v = &a->vals[i];
            sg_buf_printf(b, "%s%s: ", i ? ", " : "", dc->grid[i].name);
            if (v->type == SG_DSLT_DTYPE) sg_buf_puts(b, sg_dsl_dtypes[v->i].name);
            else sg_buf_printf(b, "%lld", (long long)v->i);
        }
        sg_buf_puts(b, "}\";\n");
    }
    sg_buf_puts(b, "    default: return NULL;\n    }\n}\n\n");
    sg_buf_printf(b, "sg_status %s_dsl_run_%s(int32_t sg_point, ", lib, dc->name);
    sg_dsl_c_params(b, op);
    sg_dsl_c_rets(b, op);
    sg_buf_puts(b, ") {\n");
    sg_dsl_c_rets_null(b, op);
    sg_buf_printf(b, "    if (sg_point < 0 || sg_point >= %u)\n        return sg_error(SG_EINVAL, "
                  "\"%s: template %s has %u points, not %%d\", (int)sg_point);\n", dc->npoints,
                  dc->op_name, dc->name, dc->npoints);
    sg_buf otherwise;
    sg_buf_init(&otherwise);
    sg_buf_printf(&otherwise, "return sg_error(SG_EINVAL, \"%s: template %s takes tensors on one "
                  "CUDA device\")", dc->op_name, dc->name);
    sg_buf_putc(&otherwise, '\0');
    sg_dsl_c_on_device(b, op, otherwise.oom ? "return SG_ENOMEM" : otherwise.data);
    sg_buf_free(&otherwise);
    sg_buf_puts(b, "    int32_t sg_cap = sg_dsl_capability(sg_dev);\n    int sg_i = -1;\n");
    for (uint32_t k = 0; k < dc->narchs; k++)
        sg_buf_printf(b, "    if (sg_cap == %d) sg_i = (int)sg_point * %u + %u;\n", dc->caps[k],
                      dc->narchs, k);
    sg_buf_printf(b, "    if (sg_i < 0 || sg_dslg_%s_when(", dc->name);
    sg_dsl_c_args(b, op);
    sg_buf_puts(b, ", sg_cap, sg_i) != sg_i)\n");
    sg_buf_printf(b, "        return sg_error(SG_EINVAL, \"%s: point %%d of template %s does not "
                  "take these arguments on a device of capability %%d\", (int)sg_point, "
                  "(int)sg_cap);\n", dc->op_name, dc->name);
    sg_buf_printf(b, "    if (!sg_dsl_ready(&sg_dslg_artifacts[%u + sg_i], sg_dev))\n"
                  "        return sg_error(SG_EDEVICE, \"%s: point %%d of template %s cannot "
                  "load: %%s\", (int)sg_point, sg_dsl_failure(&sg_dslg_artifacts[%u + sg_i]));\n",
                  dc->first, dc->op_name, dc->name, dc->first);
    sg_buf_printf(b, "    return sg_dslg_%s_launch(sg_i, sg_cap, ", dc->name);
    sg_dsl_c_args_rets(b, op);
    sg_buf_puts(b, ");\n}\n\n");
}

/* Each template's entry by point and its points' text. */
void sg_dsl_template_protos(sg_buf *h, const sg_dsl_set *s, const char *lib) {
    for (uint32_t i = 0; i < s->ndecls; i++) {
        const sg_dsl_decl *dc = s->decls[i];
        if (!dc->is_template) continue;
        sg_buf_printf(h, "/* Template %s (%s, %u points): runs point `point` (0 to %u, the "
                      "grid's cross product\n * in declaration order) where its test takes the "
                      "arguments on their device; else\n * SG_EINVAL. The point's grid values as "
                      "\"{VAR: value, ...}\", NULL past the last. */\n", dc->name, dc->op_name,
                      dc->npoints, dc->npoints - 1);
        sg_buf_printf(h, "sg_status %s_dsl_run_%s(int32_t point, ", lib, dc->name);
        sg_dsl_c_params(h, dc->op);
        sg_dsl_c_rets(h, dc->op);
        sg_buf_printf(h, ");\nconst char *%s_dsl_point_%s(int32_t point);\n\n", lib, dc->name);
    }
    for (uint32_t i = 0; i < s->ndecls; i++) {
        const sg_dsl_decl *dc = s->decls[i];
        if (!first_template_of_op(s, i)) continue;
        const char *op = dc->op->c->cname;
        sg_buf_printf(h, "/* The templates of %s, in declaration order: what a tuner measures "
                      "(this build's, none\n * other). */\n", dc->op_name);
        sg_buf_printf(h, "typedef struct %s_dsl_template_%s {\n    const char *name;\n"
                      "    sg_status (*run)(int32_t point, ", lib, op);
        sg_dsl_c_params(h, dc->op);
        sg_dsl_c_rets(h, dc->op);
        sg_buf_printf(h, ");\n    const char *(*point)(int32_t point);\n    int32_t npoints;\n"
                      "} %s_dsl_template_%s;\n\n", lib, op);
        uint32_t n = templates_of_op(s, i);
        sg_buf_printf(h, "extern const %s_dsl_template_%s %s_dsl_templates_%s[%u];\n\n", lib, op,
                      lib, op, n);
    }
}

void sg_dsl_template_lists(sg_buf *c, const sg_dsl_set *s, const char *lib) {
    for (uint32_t i = 0; i < s->ndecls; i++) {
        const sg_dsl_decl *dc = s->decls[i];
        if (!first_template_of_op(s, i)) continue;
        const char *op = dc->op->c->cname;
        uint32_t n = templates_of_op(s, i);
        sg_buf_printf(c, "const %s_dsl_template_%s %s_dsl_templates_%s[%u] = {\n", lib, op, lib,
                      op, n);
        for (uint32_t j = i; j < s->ndecls; j++) {
            const sg_dsl_decl *t = s->decls[j];
            if (t->is_template && t->op == dc->op)
                sg_buf_printf(c, "    {\"%s\", %s_dsl_run_%s, %s_dsl_point_%s, %u},\n", t->name,
                              lib, t->name, lib, t->name, t->npoints);
        }
        sg_buf_puts(c, "};\n\n");
    }
}

/* ---- decision tables ----------------------------------------------------------------------- */

/* The rule's `use` as the runtime names it (sg_gemm_table.h): the table's template t is
 * SG_GEMM_USE_TEMPLATE + t. */
static void use_code(sg_buf *b, const sg_dsl_table *t, const sg_dsl_rule *r) {
    if (r->use == SG_DSL_USE_HEURISTIC) sg_buf_puts(b, "SG_GEMM_USE_HEURISTIC");
    else if (r->use == SG_DSL_USE_CUBLASLT) sg_buf_puts(b, "SG_GEMM_USE_CUBLASLT");
    else if (r->use == SG_DSL_USE_CUBLAS) sg_buf_puts(b, "SG_GEMM_USE_CUBLAS");
    for (uint32_t i = 0; r->use == SG_DSL_USE_TEMPLATE && i < t->ntpls; i++)
        if (t->tpls[i] == r->tpl) sg_buf_printf(b, "SG_GEMM_USE_TEMPLATE + %u", i);
}

static void rules_data(sg_buf *b, const sg_dsl_table *t) {
    static const char *const layout_enum[4] = {"SG_GEMM_NN", "SG_GEMM_NT", "SG_GEMM_TN",
                                               "SG_GEMM_TT"};
    const char *n = t->dc->name;
    uint32_t nlt = 0;
    sg_buf_printf(b, "static const sg_gemm_rule sg_dslg_%s_rules[%u] = {\n", n, t->nrules);
    for (uint32_t i = 0; i < t->nrules; i++) {
        const sg_dsl_rule *r = &t->rules[i];
        sg_buf_printf(b, "    {.dtype = %s, .layout = %s, .n = %lld, .k = %lld, .batch_lo = %lld, "
                      ".batch_hi = ", sg_dsl_dtypes[r->dtype].cenum, layout_enum[r->layout],
                      (long long)r->n, (long long)r->k, (long long)r->batch_lo);
        if (r->batch_hi == INT64_MAX) sg_buf_puts(b, "INT64_MAX");
        else sg_buf_printf(b, "%lld", (long long)r->batch_hi);
        sg_buf_printf(b, ", .m_lo = %lld, .m_hi = %lld, .use = ", (long long)r->m_lo,
                      (long long)r->m_hi);
        use_code(b, t, r);
        sg_buf_printf(b, ", .index = %u}, /* line %u", r->use == SG_DSL_USE_CUBLASLT ? nlt++ : r->art,
                      r->pos.line);
        if (r->use == SG_DSL_USE_TEMPLATE) sg_buf_printf(b, ": %s", r->tpl->name);
        if (r->gain) {
            sg_buf_puts(b, ", gain ");
            sg_dsl_c_comment_text(b, r->gain);
        }
        sg_buf_puts(b, " */\n");
    }
    sg_buf_puts(b, "};\n");
    /* the finder's binary search needs the rules in the order of the runtime's dtype values;
     * they are sorted by the generator's dtype table: the compiler checks the two agree */
    for (uint32_t i = 1; i < t->nrules; i++)
        if (t->rules[i].dtype != t->rules[i - 1].dtype)
            sg_buf_printf(b, "_Static_assert(%s < %s, \"decision table rules out of the runtime's "
                          "dtype order\");\n", sg_dsl_dtypes[t->rules[i - 1].dtype].cenum,
                          sg_dsl_dtypes[t->rules[i].dtype].cenum);
    sg_buf_putc(b, '\n');
    if (!t->nlt) return;
    sg_buf_printf(b, "static const sg_gemm_lt_config sg_dslg_%s_lt[%u] = {\n", n, t->nlt);
    for (uint32_t i = 0; i < t->nrules; i++) {
        if (t->rules[i].use != SG_DSL_USE_CUBLASLT) continue;
        sg_buf_puts(b, "    {");
        for (int k = 0; k < SG_DSL_LT_FIELDS; k++)
            sg_buf_printf(b, "%s.%s = %d", k ? ", " : "", sg_dsl_lt_keys[k],
                          t->rules[i].algo[k]);
        sg_buf_puts(b, "},\n");
    }
    sg_buf_puts(b, "};\n\n");
}

/* The finder: the call's m, n, k and batch (guarded: a failed guard finds nothing) and its
 * class; a float32 call finds nothing where the table's tf32 function forbids TF32. */
static void find_fn(sg_buf *b, const sg_dsl_table *t) {
    const sg_dsl_decl *dc = t->dc;
    const sg_op *op = dc->op;
    sg_buf_printf(b, "static const sg_gemm_rule *sg_dslg_%s_find(", dc->name);
    sg_dsl_c_params(b, op);
    sg_buf_puts(b, ", int32_t sg_cap) {\n");
    sg_dsl_c_void_args(b, op);
    sg_buf_puts(b, "    (void)sg_cap;\n    bool sg_ok = true;\n");
    const char *a = op->c->arg_cnames[t->a], *bn = op->c->arg_cnames[t->b];
    if (t->nf32)
        sg_buf_printf(b, "    if (%s->dtype == SG_FLOAT32 && !%s()) return NULL;\n", a, t->fn[SG_DSL_FN_TF32]);
    static const char *const names[4] = {"sg_m", "sg_n", "sg_k", "sg_batch"};
    const sg_dsl_expr *e[4] = {&t->m, &t->n, &t->k, &t->batch};
    for (int i = 0; i < (t->has_batch ? 4 : 3); i++) {
        sg_buf_printf(b, "    int64_t %s = ", names[i]);
        sg_dsl_c_expr(b, e[i], dc, NULL);
        sg_buf_puts(b, ";\n");
    }
    sg_buf_printf(b, "    if (!sg_ok) return NULL;\n    return sg_gemm_rule_find(sg_dslg_%s_rules, "
                  "%u, %s, %s, %s, sg_m, sg_n, sg_k);\n}\n\n", dc->name, t->nrules, a, bn,
                  t->has_batch ? "sg_batch" : "1");
}

static void pred_fn(sg_buf *b, const sg_dsl_table *t) {
    const sg_dsl_decl *dc = t->dc;
    const sg_op *op = dc->op;
    sg_buf_printf(b, "/* The override's predicate: on a device of capability %d, a call in a "
                  "class whose\n * backend can take it. */\n", t->cap);
    sg_buf_printf(b, "static bool sg_dslg_%s_pred(void *sg_ctx, sg_keyset ks, ", dc->name);
    sg_dsl_c_params(b, op);
    sg_buf_puts(b, ") {\n    (void)sg_ctx, (void)ks;\n");
    sg_dsl_c_on_device(b, op, "return false");
    sg_buf_printf(b, "    int32_t sg_cap = sg_dsl_capability(sg_dev);\n    if (sg_cap != %d) "
                  "return false;\n", t->cap);
    sg_buf_printf(b, "    const sg_gemm_rule *sg_r = sg_dslg_%s_find(", dc->name);
    sg_dsl_c_args(b, op);
    sg_buf_puts(b, ", sg_cap);\n    if (!sg_r) return false;\n    switch (sg_r->use) {\n");
    if (t->nlt) sg_buf_puts(b, "    case SG_GEMM_USE_CUBLASLT: return true;\n");
    if (t->nblas) sg_buf_puts(b, "    case SG_GEMM_USE_CUBLAS: return true;\n");
    for (uint32_t i = 0; i < t->ntpls; i++) {
        const sg_dsl_decl *tp = t->tpls[i];
        sg_buf_printf(b, "    case SG_GEMM_USE_TEMPLATE + %u:\n        return sg_dslg_%s_when(", i,
                      tp->name);
        sg_dsl_c_args(b, op);
        sg_buf_printf(b, ", sg_cap, sg_r->index) >= 0 &&\n               sg_dsl_ready(&sg_dslg_"
                      "artifacts[%u + sg_r->index], sg_dev);\n", tp->first);
    }
    sg_buf_puts(b, "    default: return false;\n    }\n}\n\n");
}

static void impl_fn(sg_buf *b, const sg_dsl_table *t) {
    const sg_dsl_decl *dc = t->dc;
    const sg_op *op = dc->op;
    const char *dev = op->c->arg_cnames[sg_dsl_c_first_tensor(op)];
    sg_buf_puts(b, "/* The override's implementation: the class's backend. */\n");
    sg_buf_printf(b, "static sg_status sg_dslg_%s_impl(sg_keyset ks, ", dc->name);
    sg_dsl_c_params(b, op);
    sg_dsl_c_rets(b, op);
    sg_buf_puts(b, ") {\n");
    sg_dsl_c_rets_null(b, op);
    sg_buf_printf(b, "    int32_t sg_cap = sg_dsl_capability(%s->device.index);\n", dev);
    sg_buf_printf(b, "    const sg_gemm_rule *sg_r = sg_dslg_%s_find(", dc->name);
    sg_dsl_c_args(b, op);
    sg_buf_printf(b, ", sg_cap);\n    switch (sg_cap == %d && sg_r ? sg_r->use : "
                  "SG_GEMM_USE_HEURISTIC) {\n", t->cap);
    if (t->nlt) {
        sg_buf_printf(b, "    case SG_GEMM_USE_CUBLASLT:\n        return %s(&sg_dslg_%s_lt["
                      "sg_r->index], ks, ", t->fn[SG_DSL_FN_CUBLASLT], dc->name);
        sg_dsl_c_args_rets(b, op);
        sg_buf_puts(b, ");\n");
    }
    if (t->nblas) {
        sg_buf_printf(b, "    case SG_GEMM_USE_CUBLAS:\n        return %s(ks, ", t->fn[SG_DSL_FN_CUBLAS]);
        sg_dsl_c_args_rets(b, op);
        sg_buf_puts(b, ");\n");
    }
    for (uint32_t i = 0; i < t->ntpls; i++) {
        sg_buf_printf(b, "    case SG_GEMM_USE_TEMPLATE + %u:\n        if (sg_dslg_%s_when(", i,
                      t->tpls[i]->name);
        sg_dsl_c_args(b, op);
        sg_buf_printf(b, ", sg_cap, sg_r->index) < 0) break;\n        return sg_dslg_%s_launch("
                      "sg_r->index, sg_cap, ", t->tpls[i]->name);
        sg_dsl_c_args_rets(b, op);
        sg_buf_puts(b, ");\n");
    }
    sg_buf_printf(b, "    default: break;\n    }\n    (void)ks;\n    return sg_error(SG_ESTATE, "
                  "\"%s: the decision table %s was called for arguments its predicate "
                  "declines\");\n}\n\n", dc->op_name, dc->name);
}

void sg_dsl_table_emit(sg_buf *b, const sg_dsl_table *t) {
    const sg_dsl_decl *dc = t->dc;
    sg_buf_printf(b, "/* ---- %s: %s by a decision table (", dc->name, dc->op_name);
    sg_dsl_c_comment_text(b, dc->file);
    sg_buf_printf(b, ":%u) ----\n * tuned:", dc->pos.line);
    for (uint32_t i = 0; i + 1 < t->ntuned; i += 2) {
        sg_buf_printf(b, "%s %s: ", i ? ";" : "", t->tuned[i]);
        sg_dsl_c_comment_text(b, t->tuned[i + 1]);
    }
    sg_buf_puts(b, " */\n\n");
    if (t->nlt) {
        sg_buf_printf(b, "/* Runs a cuBLASLt algorithm (the aten CUDA kernels define it). */\n"
                      "extern sg_status %s(const sg_gemm_lt_config *sg_cfg, sg_keyset ks, ",
                      t->fn[SG_DSL_FN_CUBLASLT]);
        sg_dsl_c_params(b, dc->op);
        sg_dsl_c_rets(b, dc->op);
        sg_buf_puts(b, ");\n\n");
    }
    if (t->nf32)
        sg_buf_printf(b, "/* Whether float32 may run through TF32 (PyTorch's allow_tf32): the "
                      "float32 classes\n * were tuned with it. */\nextern bool %s(void);\n\n", t->fn[SG_DSL_FN_TF32]);
    if (t->nblas) {
        sg_buf_printf(b, "/* Runs cuBLAS with its own choice (the aten CUDA kernels define it). */\n"
                      "extern sg_status %s(sg_keyset ks, ", t->fn[SG_DSL_FN_CUBLAS]);
        sg_dsl_c_params(b, dc->op);
        sg_dsl_c_rets(b, dc->op);
        sg_buf_puts(b, ");\n\n");
    }
    rules_data(b, t);
    find_fn(b, t);
    pred_fn(b, t);
    impl_fn(b, t);
}
