/* deriv_emit_inplace.c: the Autograd kernels of in-place and out= ops in LIB_autograd.c
 * (docs/autograd.md, "In-place and out= ops"), following torchgen's rules:
 *
 * - An in-place op `foo_` uses its own entry of derivatives.yaml where it has one, else the
 *   entry of the functional op of its group (same signature, torchgen's find_info). Its kernel
 *   records that entry's node (the type deriv_emit_c.c wrote for the functional op). A formula's
 *   `self` is the value before the op: where a formula reads it, the kernel saves a clone taken
 *   before the op (PyTorch's original_self), where that formula will run; where formulas read
 *   only its metadata, that metadata (deriv_emit_c.c's save_modes). `result` is self after the
 *   op. Before it writes, the kernel refuses a leaf that requires grad or a view of one
 *   (check_inplace), and a tensor without grad whose storage is shared; after, it bumps the
 *   version and rebases self's history onto the node, whose edge for self leads to self's old
 *   grad_fn, or, through a view, the base's (sg_autograd_rebase_history: CopySlices).
 * - copy_ has no entry (PyTorch writes its kernel by hand): CopyBackwards, written here.
 * - An out= op refuses, while grad mode is on, an input its functional op differentiates or an
 *   out= argument that requires grad (PyTorch's throw_error_out_requires_grad).
 * - Every in-place and out= kernel bumps the version of what it wrote, grad mode on or off:
 *   this kernel is the one place every call of a mutating op passes (sg_autograd.h).
 * - An in-place op without a node (no formula, or one the functional op refuses) refuses to
 *   run where grad mode is on and an input requires grad, rather than leave a wrong history.
 * - A view op's result is marked a view of its input (deriv_emit_c.c's mark_views), for CopySlices.
 *
 * The op below autograd runs with grad mode off, as PyTorch's kernels run below the autograd
 * keys: a backend kernel that calls other ops records nothing and trips no out= check. */
#include "deriv_emit.h"
#include "derive.h"
#include "dsl_emit.h"

#include <string.h>

static const sg_deriv *entry_of(const sg_deriv_set *s, const sg_op *op) {
    for (uint32_t i = 0; op && i < s->n; i++)
        if (s->items[i].op == op) return &s->items[i];
    return NULL;
}

static const char *qual(sg_buf *b, const sg_op *op) {
    b->len = 0;
    sg_dem_qual(b, op);
    sg_buf_putc(b, '\0');
    return b->oom ? "?" : b->data;
}

static bool implicit(const sg_op *op) {
    if (op->c->implicit) return true;
    for (uint32_t k = 0; k < op->c->nkernel_keys; k++)
        if (!strcmp(op->c->kernel_keys[k], "CompositeImplicitAutograd")) return true;
    return false;
}

static bool is_tensor(int f) { return f == SG_FAM_TENSOR || f == SG_FAM_OPT_TENSOR; }

/* Whether every written argument of op is a Tensor, Tensor? or Tensor[] (what is bumped). */
static bool writes_known(const sg_op *op) {
    for (uint32_t i = 0; i < op->schema.nargs; i++) {
        int f = sg_dem_fam(op->schema.args[i].type);
        if (op->schema.args[i].write && !is_tensor(f) && f != SG_FAM_TENSOR_LIST) return false;
    }
    return true;
}

/* "sg_tensor_requires_grad(a) || ..." over op's arguments i where pick[i] (all Tensor-like ones
 * where pick is NULL); "false" where none. */
static void any_requires_grad(sg_buf *b, const sg_op *op, const bool *pick) {
    bool first = true;
    for (uint32_t i = 0; i < op->schema.nargs; i++) {
        int f = sg_dem_fam(op->schema.args[i].type);
        const char *n = op->c->arg_cnames[i];
        if (pick ? !pick[i] : !(is_tensor(f) || f == SG_FAM_TENSOR_LIST)) continue;
        if (f == SG_FAM_TENSOR_LIST)
            sg_buf_printf(b, "%ssg_agh_list_requires_grad(%s)", first ? "" : " || ", n);
        else if (is_tensor(f))
            sg_buf_printf(b, "%ssg_tensor_requires_grad(%s)", first ? "" : " || ", n);
        else
            continue;
        first = false;
    }
    if (first) sg_buf_puts(b, "false");
}

/* The versions of the written arguments before the op (sg_v<i>), for bumps. */
static void versions(sg_buf *b, const sg_op *op, const char *ind) {
    for (uint32_t i = 0; i < op->schema.nargs; i++) {
        if (!op->schema.args[i].write) continue;
        int f = sg_dem_fam(op->schema.args[i].type);
        const char *n = op->c->arg_cnames[i];
        if (f == SG_FAM_TENSOR)
            sg_buf_printf(b, "%suint32_t sg_v%u = sg_tensor_version(%s);\n", ind, i, n);
        else if (f == SG_FAM_OPT_TENSOR)
            sg_buf_printf(b, "%suint32_t sg_v%u = %s ? sg_tensor_version(%s) : 0;\n", ind, i, n, n);
    }
}

/* The version of each written argument bumped, at indentation ind, unless the op bumped it
 * itself (a backend kernel that calls another in-place op: PyTorch bumps once per call). */
static void bumps(sg_buf *b, const sg_op *op, const char *ind) {
    for (uint32_t i = 0; i < op->schema.nargs; i++) {
        if (!op->schema.args[i].write) continue;
        int f = sg_dem_fam(op->schema.args[i].type);
        const char *n = op->c->arg_cnames[i];
        if (f == SG_FAM_TENSOR)
            sg_buf_printf(b, "%sif (sg_tensor_version(%s) == sg_v%u) sg_tensor_bump_version(%s);\n",
                          ind, n, i, n);
        else if (f == SG_FAM_OPT_TENSOR)
            sg_buf_printf(b, "%sif (%s && sg_tensor_version(%s) == sg_v%u) "
                          "sg_tensor_bump_version(%s);\n", ind, n, n, i, n);
        else
            sg_buf_printf(b, "%ssg_agh_list_bump(%s);\n", ind, n);
    }
}

static void head(sg_buf *b, const sg_op *op) {
    sg_buf_printf(b, "static sg_status sg_agk_%s(sg_keyset ks, ", op->c->cname);
    sg_dsl_c_params(b, op);
    sg_dsl_c_rets(b, op);
    sg_buf_puts(b, ") {\n");
}

/* The op below autograd into st; with grad mode off where it is recording (PyTorch's kernels
 * run below the autograd keys), so that a backend kernel calling other ops records nothing. */
static void redispatch(sg_buf *b, const sg_op *op, const char *ind, bool recording) {
    if (recording) sg_buf_printf(b, "%ssg_grad_set_enabled(false);\n", ind);
    sg_buf_printf(b, "%sst = %s_redispatch(ks & ~SG_KEYSET_AUTOGRAD, ", ind, op->c->cname);
    sg_dsl_c_args_rets(b, op);
    sg_buf_puts(b, ");\n");
    if (recording) sg_buf_printf(b, "%ssg_grad_set_enabled(true);\n", ind);
}

/* The op below autograd and the bumps: the whole kernel where nothing is recorded. */
static void run_and_bump(sg_buf *b, const sg_op *op, const char *ind) {
    versions(b, op, ind);
    redispatch(b, op, ind, false);
    sg_buf_printf(b, "%sif (st != SG_OK) return st;\n", ind);
    bumps(b, op, ind);
    sg_buf_printf(b, "%sreturn SG_OK;\n", ind);
}

/* ---- out= ---------------------------------------------------------------------------------- */

/* op's functional entry dv (NULL: none): where grad mode is on and an input dv differentiates, or
 * an out= argument, requires grad, PyTorch's error; then the op and the bumps. */
static void out_kernel(sg_buf *b, const sg_op *op, const sg_deriv *dv) {
    const sg_schema *sc = &op->schema;
    bool pick[256] = {false}, any = false;
    for (uint32_t i = 0; dv && i < sc->nargs && i < 256; i++) {
        int f = sg_dem_fam(sc->args[i].type);
        if (!is_tensor(f) && f != SG_FAM_TENSOR_LIST) continue;
        bool named = sc->args[i].write;
        for (uint32_t k = 0; k < dv->ngrads && !named; k++)
            for (uint32_t j = 0; j < dv->grads[k].nnames; j++)
                named |= !strcmp(dv->grads[k].names[j], sc->args[i].name);
        pick[i] = named;
        any |= named;
    }
    sg_buf q;
    sg_buf_init(&q);
    sg_buf_printf(b, "/* %s: an out= op; ", qual(&q, op));
    if (any)
        sg_buf_puts(b, "no autograd, so refused where an input requires grad (grad mode on). */\n");
    else
        sg_buf_puts(b, "not differentiable: it runs, and bumps the versions of what it "
                       "wrote. */\n");
    head(b, op);
    sg_buf_puts(b, "    sg_status st;\n");
    if (any) {
        sg_buf_puts(b, "    if (sg_grad_enabled() && (");
        any_requires_grad(b, op, pick);
        sg_buf_printf(b, ")) {\n");
        for (uint32_t r = 0; r < sc->nrets; r++)
            sg_buf_printf(b, "        *%s = NULL;\n", op->c->ret_cnames[r]);
        sg_buf_puts(b, "        return sg_error(SG_EINVAL, \"%s\", ");
        q.len = 0;
        sg_buf_printf(&q, "%s(): functions with out=... arguments don't support automatic "
                      "differentiation, but one of the arguments requires grad.", sc->name);
        sg_buf_putc(&q, '\0');
        sg_dsl_c_string(b, q.oom ? "?" : q.data);
        sg_buf_puts(b, ");\n    }\n");
    }
    run_and_bump(b, op, "    ");
    sg_buf_puts(b, "}\n\n");
    sg_buf_free(&q);
}

/* ---- in-place ---------------------------------------------------------------------------- */

/* An in-place op whose node cannot be recorded (why): where grad mode is on and an input
 * requires grad, check_inplace's error or why; else the op and the bumps. */
static void refusing_inplace(sg_buf *b, const sg_op *op, const char *why) {
    sg_buf q;
    sg_buf_init(&q);
    const char *name = qual(&q, op);
    sg_buf_printf(b, "/* %s: no node (", name);
    sg_dsl_c_comment_text(b, why);
    sg_buf_puts(b, "). */\n");
    head(b, op);
    sg_buf_puts(b, "    sg_status st;\n    if (sg_grad_enabled() && (");
    any_requires_grad(b, op, NULL);
    sg_buf_puts(b, ")) {\n");
    for (uint32_t i = 0; i < op->schema.nargs; i++)
        if (op->schema.args[i].write && is_tensor(sg_dem_fam(op->schema.args[i].type))) {
            sg_buf_printf(b, "        if ((st = sg_autograd_check_inplace(%s, ",
                          op->c->arg_cnames[i]);
            sg_dsl_c_string(b, name);
            sg_buf_puts(b, ")) != SG_OK)\n            return st;\n");
        }
    sg_buf_puts(b, "        return sg_error(SG_EUNSUPPORTED, \"%s: its gradient is not supported "
                   "yet (%s)\", ");
    sg_dsl_c_string(b, name);
    sg_buf_puts(b, ", ");
    sg_dsl_c_string(b, why);
    sg_buf_puts(b, ");\n    }\n");
    run_and_bump(b, op, "    ");
    sg_buf_puts(b, "}\n\n");
    sg_buf_free(&q);
}

/* Why op (in-place) cannot use dv's node nd, or NULL: every argument of dv's op must be one of
 * op's, of the same C name and family, and dv's op must have one result. */
static const char *lines_up(const sg_op *op, const sg_deriv *dv, uint32_t *arg_of) {
    const sg_schema *f = &dv->op->schema, *sc = &op->schema;
    if (f->nrets != 1 || sc->nrets != 1) return "a functional op of other than one result";
    if (f->nargs != sc->nargs) return "its functional op has other arguments";
    for (uint32_t i = 0; i < f->nargs; i++) {
        arg_of[i] = UINT32_MAX;
        for (uint32_t j = 0; j < sc->nargs; j++)
            if (!strcmp(f->args[i].name, sc->args[j].name)) arg_of[i] = j;
        if (arg_of[i] == UINT32_MAX ||
            strcmp(dv->op->c->arg_cnames[i], op->c->arg_cnames[arg_of[i]]) ||
            sg_dem_fam(f->args[i].type) != sg_dem_fam(sc->args[arg_of[i]].type))
            return "its functional op has other arguments";
    }
    return NULL;
}

static void inplace_kernel(sg_buf *b, const sg_op *op, const sg_deriv *dv, const sg_dem_node *nd,
                           const uint32_t *arg_of) {
    const sg_op *fop = dv->op;
    const sg_schema *f = &fop->schema, *sc = &op->schema;
    const char *fc = fop->c->cname;
    sg_buf q, fq;
    sg_buf_init(&q);
    sg_buf_init(&fq);
    const char *name = qual(&q, op);
    bool edge_arg[256] = {false};
    for (uint32_t i = 0; i < f->nargs && i < 256; i++)
        if (nd->edge_of[i] != UINT32_MAX) edge_arg[arg_of[i]] = true;
    sg_buf_printf(b, "/* %s: a %s (%s's formulas) for the change;\n * self's history rebased "
                  "onto it. */\n", name, nd->name, qual(&fq, fop));
    head(b, op);
    sg_buf_puts(b, "    sg_status st;\n    if (!sg_grad_enabled() || !(");
    any_requires_grad(b, op, edge_arg);
    sg_buf_puts(b, ")) {\n");
    run_and_bump(b, op, "        ");
    sg_buf_puts(b, "    }\n");
    sg_dsl_c_rets_null(b, op);
    for (uint32_t i = 0; i < sc->nargs; i++)
        if (sc->args[i].write) {
            sg_buf_printf(b, "    if ((st = sg_autograd_check_inplace(%s, ", op->c->arg_cnames[i]);
            sg_dsl_c_string(b, name);
            sg_buf_printf(b, ")) != SG_OK ||\n        (st = sg_autograd_check_inplace_shared(%s, ",
                          op->c->arg_cnames[i]);
            sg_dsl_c_string(b, name);
            sg_buf_puts(b, ")) != SG_OK)\n        return st;\n");
        }
    sg_buf_printf(b, "    sg_node *sg_n = NULL;\n"
                  "    st = sg_node_new(sizeof(sg_agn_%s), \"%s\", 1, "
                  "%u, sg_agb_%s, sg_agr_%s, &sg_n);\n    if (st != SG_OK) return st;\n"
                  "    sg_agn_%s *n = (sg_agn_%s *)sg_n;\n    (void)n;\n", fc, nd->name,
                  nd->nedges, fc, fc, fc, fc);
    /* edges first: self's lead to its history before the change */
    for (uint32_t i = 0; i < f->nargs; i++)
        if (nd->edge_of[i] != UINT32_MAX)
            sg_buf_printf(b, "    st = sg_node_set_next(sg_n, %u, %s);\n    if (st != SG_OK) goto "
                          "fail;\n", nd->edge_of[i], op->c->arg_cnames[arg_of[i]]);
    /* a written argument's value as it is before the change (a clone), where a formula reads
     * it; its metadata from before the change (squeeze_ changes it) */
    for (uint32_t i = 0; i < f->nargs; i++)
        if (nd->kept[i]) sg_dem_keep(b, dv, nd->name, i, sc->args[arg_of[i]].write);
    versions(b, op, "    ");
    redispatch(b, op, "    ", true);
    sg_buf_puts(b, "    if (st != SG_OK) goto fail;\n");
    bumps(b, op, "    ");
    /* the result is the written argument: self */
    uint32_t self = UINT32_MAX;
    for (uint32_t i = 0; i < sc->nargs && self == UINT32_MAX; i++)
        if (sc->args[i].write) self = i;
    const char *sn = op->c->arg_cnames[self];
    if (!dv->out_diff || dv->out_diff[0])
        sg_buf_printf(b, "    st = sg_autograd_rebase_history(%s, sg_n);\n"
                      "    if (st != SG_OK) goto fail;\n", sn);
    if (nd->kept_result[0])
        sg_buf_printf(b, "    st = sg_saved_init(&n->r0, %s);\n    if (st != SG_OK) goto fail;\n",
                      sn);
    sg_buf_printf(b, "    sg_node_release(sg_n);\n    return SG_OK;\n"
                  "fail:\n    sg_node_release(sg_n);\n    sg_tensor_release(*%s);\n"
                  "    *%s = NULL;\n    return st;\n}\n\n",
                  op->c->ret_cnames[0], op->c->ret_cnames[0]);
    sg_buf_free(&q);
    sg_buf_free(&fq);
}

/* ---- copy_ ------------------------------------------------------------------------------- */

/* derivatives.yaml has no entry for copy_: PyTorch writes its autograd by hand (CopyBackwards,
 * VariableTypeManual.cpp), and so does this, for aten::copy_(Tensor(a!) self, Tensor src, ...). */
static bool is_copy_(const sg_op *op) {
    const sg_schema *sc = &op->schema;
    return !strcmp(sc->name, "copy_") && !*sc->overload && sc->nargs >= 2 && sc->nrets == 1 &&
           sc->args[0].write && !sc->args[1].write &&
           sg_dem_fam(sc->args[0].type) == SG_FAM_TENSOR &&
           sg_dem_fam(sc->args[1].type) == SG_FAM_TENSOR;
}

/* aten::zeros_like where its arguments after self are all optional (NULL: the defaults). */
static const sg_op *zeros_like_of(const sg_model *m) {
    for (uint32_t i = 0; i < m->nops; i++) {
        const sg_op *z = m->ops[i];
        const sg_schema *sc = &z->schema;
        if (!z->parsed || !z->c || strcmp(z->ns, "aten") || strcmp(sc->name, "zeros_like") ||
            *sc->overload || sc->nrets != 1 || !sc->nargs ||
            sg_dem_fam(sc->args[0].type) != SG_FAM_TENSOR)
            continue;
        bool optional = true; /* each a pointer in C */
        for (uint32_t j = 1; j < sc->nargs; j++)
            optional &= sc->args[j].type->kind == SG_TY_OPTIONAL;
        if (optional) return z;
    }
    return NULL;
}

/* CopyBackwards: self's old value is overwritten, so its gradient is zeros (none where the
 * schemas lack zeros_like); src's is the gradient itself, which the engine sums down to src's
 * shape (src broadcasts) and casts to its dtype. */
static void copy_kernel(sg_buf *b, const sg_op *op, const sg_model *m) {
    const char *c = op->c->cname, *self = op->c->arg_cnames[0], *src = op->c->arg_cnames[1];
    const sg_op *z = zeros_like_of(m);
    sg_buf_printf(b, "/* CopyBackwards: the node of copy_ (written by hand in PyTorch too). */\n"
                  "static sg_status sg_agb_%s(sg_node *sg_n, sg_tensor *const *grads, "
                  "sg_tensor **out) {\n    sg_status st = SG_OK;\n", c);
    if (z) {
        sg_buf_printf(b, "    if (sg_n->next[0].node)\n        st = %s(grads[0]", z->c->cname);
        for (uint32_t j = 1; j < z->schema.nargs; j++) sg_buf_puts(b, ", NULL");
        sg_buf_puts(b, ", &out[0]);\n");
    }
    sg_buf_puts(b, "    if (st == SG_OK && sg_n->next[1].node)"
                   " out[1] = sg_tensor_retain(grads[0]);\n"
                   "    return st;\n}\n\n");
    sg_buf_puts(b, "/* The Autograd kernel of aten::copy_: CopyBackwards for the change; self's "
                   "history rebased onto it. */\n");
    head(b, op);
    sg_buf_printf(b, "    sg_status st;\n    sg_dtype sg_dt = (sg_dtype)%s->dtype;\n"
                  "    if (!sg_grad_enabled() || !(sg_tensor_requires_grad(%s) || "
                  "sg_tensor_requires_grad(%s)) ||\n        !(sg_dtype_is_floating(sg_dt) || "
                  "sg_dtype_is_complex(sg_dt))) {\n", self, self, src);
    run_and_bump(b, op, "        ");
    sg_buf_puts(b, "    }\n");
    sg_dsl_c_rets_null(b, op);
    sg_buf_printf(b, "    if ((st = sg_autograd_check_inplace(%s, \"aten::copy_\")) != SG_OK ||\n"
                  "        (st = sg_autograd_check_inplace_shared(%s, \"aten::copy_\")) != "
                  "SG_OK)\n        return st;\n    sg_node *sg_n = NULL;\n"
                  "    st = sg_node_new(sizeof(sg_node), \"CopyBackwards\", 1, 2, sg_agb_%s, NULL, "
                  "&sg_n);\n    if (st != SG_OK) return st;\n", self, self, c);
    sg_buf_printf(b, "    if ((st = sg_node_set_next(sg_n, 0, %s)) != SG_OK ||\n"
                  "        (st = sg_node_set_next(sg_n, 1, %s)) != SG_OK)\n        goto fail;\n",
                  self, src);
    versions(b, op, "    ");
    redispatch(b, op, "    ", true);
    sg_buf_puts(b, "    if (st != SG_OK) goto fail;\n");
    bumps(b, op, "    ");
    sg_buf_printf(b, "    st = sg_autograd_rebase_history(%s, sg_n);\n"
                  "    if (st != SG_OK) goto fail;\n    sg_node_release(sg_n);\n"
                  "    return SG_OK;\nfail:\n    sg_node_release(sg_n);\n"
                  "    sg_tensor_release(*%s);\n    *%s = NULL;\n    return st;\n}\n\n", self,
                  op->c->ret_cnames[0], op->c->ret_cnames[0]);
}

/* ---- all of them ------------------------------------------------------------------------- */


static void helpers(sg_buf *c) {
    sg_buf_puts(c, "/* ---- in-place and out= ops ---- */\n\n"
                   "static inline void sg_agh_list_bump(sg_tensor_list l) {\n"
                   "    for (int32_t i = 0; i < l.len; i++)\n"
                   "        if (l.items[i]) sg_tensor_bump_version(l.items[i]);\n}\n\n");
}

uint32_t sg_dem_mutating(sg_buf *c, sg_buf *reg, sg_deriv_set *s, const sg_model *m) {
    uint32_t n = 0;
    bool     first = true;
    for (uint32_t i = 0; i < m->nops; i++) {
        const sg_op *op = m->ops[i];
        if (!op->parsed || !op->c || strcmp(op->ns, "aten") != 0) continue;
        sg_schema_kind k = op->schema.kind;
        if ((k != SG_KIND_INPLACE && k != SG_KIND_OUT) || !writes_known(op)) continue;
        /* a CompositeImplicitAutograd op gets no kernel, as in PyTorch: the ops it is made of
         * check, record and bump */
        if (op->schema.nargs > 256 || implicit(op)) continue;
        if (first) helpers(c), first = false;
        const sg_deriv *exact = entry_of(s, op);
        const sg_op *fop = op->group ? op->group->ops[SG_KIND_FUNCTIONAL] : NULL;
        const sg_deriv *dv = exact ? exact : entry_of(s, fop);
        if (k == SG_KIND_OUT) {
            out_kernel(c, op, dv);
        } else if (!dv && is_copy_(op)) {
            copy_kernel(c, op, m);
        } else if (!dv) {
            refusing_inplace(c, op, "derivatives.yaml has no formula for it or its functional op");
        } else {
            sg_dem_node nd;
            uint32_t arg_of[256];
            /* an entry of the in-place op itself has no node yet: written here */
            const char *why = sg_dem_node_of(s, dv, &nd, exact ? c : NULL);
            if (why && !strcmp(why, "out of memory")) c->oom = true; /* the run fails */
            if (!why && !exact && dv->op->schema.kind != SG_KIND_FUNCTIONAL)
                why = "its group's entry is not a functional op's";
            if (!why) why = lines_up(op, dv, arg_of);
            if (why)
                refusing_inplace(c, op, why);
            else
                inplace_kernel(c, op, dv, &nd, arg_of);
        }
        sg_buf_printf(reg, "    for (size_t i = 0; st == SG_OK && i < sizeof sg_agh_keys / "
                      "sizeof *sg_agh_keys; i++)\n"
                      "        st = %s_register(sg_agh_keys[i], sg_agk_%s, NULL);\n",
                      op->c->cname, op->c->cname);
        n++;
    }
    return n;
}
