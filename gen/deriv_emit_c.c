/* deriv_emit_c.c: the functional ops' part of LIB_autograd.c (deriv_emit_file.c writes the
 * files) from the typed formulas (deriv_type.h, docs/autograd.md): per differentiable op, a node type that keeps what its formulas read (as
 * PyTorch's codegen keeps it: metadata where only that is read, a value only where the formula
 * that reads it will run; save_modes), the backward function that evaluates them (one formula
 * per input that needs a gradient), and the Autograd kernel that runs the op below autograd and
 * records the node. C emission rather than a template: each formula is compiled to C statements
 * here, as DSL predicates are.
 *
 * Functional ops that return Tensors, or one Tensor[], are differentiated; an op whose formula
 * for an input cannot be translated still records its node, whose backward fails with the
 * reason should that input need a gradient (PyTorch's not_implemented). What Tensor[] inputs and
 * results add (edges and node inputs counted at run time) is in deriv_emit_list.c. */
#include "deriv_emit.h"
#include "derive.h"
#include "dsl_emit.h"

#include <stdlib.h>
#include <string.h>

/* ---- what a node keeps ----------------------------------------------------------------------- */

typedef sg_dem_plan plan;

/* Which inputs and results the translated formulas read, as values (saved tensors) or only
 * through properties; per input of another type: read at all. A Tensor[] read only through
 * to_args_sizes / to_args_scalartypes: those facts. */
static void walk_uses(const sg_dtx *d, plan *u) {
    if (!d) return;
    if (d->what == SG_DT_PROP && d->kids[0]->what == SG_DT_INPUT &&
        !strncmp(d->text, "to_args_", 8)) {
        u->facts[d->kids[0]->idx] |= strcmp(d->text, "to_args_sizes") ? SG_DEM_DTYPES
                                                                        : SG_DEM_SIZES;
        return;
    }
    if (d->what == SG_DT_INPUT) u->in[d->idx] = true;
    if (d->what == SG_DT_RESULT) u->res[d->idx] = true;
    for (uint32_t i = 0; i < d->nkids; i++) walk_uses(d->kids[i], u);
}

/* Which inputs d reads as values and which through metadata properties only. */
static void walk_reads(const sg_dtx *d, bool *value, bool *meta) {
    if (!d) return;
    if (((d->what == SG_DT_PROP && sg_dt_prop_is_meta(d->text)) || d->what == SG_DT_GEOMETRY) &&
        d->kids[0] && d->kids[0]->what == SG_DT_INPUT) {
        meta[d->kids[0]->idx] = true;
        for (uint32_t i = 1; i < d->nkids; i++) walk_reads(d->kids[i], value, meta);
        return;
    }
    if (d->what == SG_DT_INPUT) value[d->idx] = true;
    for (uint32_t i = 0; i < d->nkids; i++) walk_reads(d->kids[i], value, meta);
}

/* How the node keeps each Tensor input the formulas read (docs/autograd.md, "What a node
 * keeps"): its metadata only where no formula reads its value; its value only where the edge
 * of the one formula that reads it needs a gradient, where PyTorch's guard_for
 * (gen_variable_type.py) would ask should_compute_output: an op of more than one
 * differentiable input, no Tensor[] argument and no "backward" in its name, a Tensor (not a
 * Tensor?) whose value one formula reads, a formula for one input. */
static void save_modes(plan *p) {
    const sg_deriv *dv = p->dv;
    const sg_schema *sc = &dv->op->schema;
    bool guards = p->nedges > 1 && !strstr(sc->name, "backward");
    for (uint32_t i = 0; i < sc->nargs; i++) {
        p->guard[i] = UINT32_MAX;
        guards &= sg_dem_fam(sc->args[i].type) != SG_FAM_TENSOR_LIST;
    }
    uint32_t nread[256] = {0}, by[256] = {0}; /* formulas reading each value; the last one */
    for (uint32_t k = 0; k < dv->ngrads; k++) {
        bool value[256] = {false};
        walk_reads(dv->grads[k].typed, value, p->meta);
        for (uint32_t i = 0; i < sc->nargs; i++)
            if (value[i]) nread[i]++, by[i] = k, p->value[i] = true;
    }
    for (uint32_t i = 0; i < sc->nargs && guards; i++) {
        const sg_deriv_formula *f = &dv->grads[by[i]];
        if (nread[i] != 1 || f->nnames != 1 || sg_dem_fam(sc->args[i].type) != SG_FAM_TENSOR)
            continue;
        for (uint32_t j = 0; j < sc->nargs; j++)
            if (!strcmp(sc->args[j].name, f->names[0])) p->guard[i] = p->edge_of[j];
    }
}

/* The families a node can keep by value (the others make the formula untranslated). */
static bool keepable(int f) {
    switch (f) {
    case SG_FAM_TENSOR: case SG_FAM_OPT_TENSOR: case SG_FAM_SCALAR: case SG_FAM_OPT_SCALAR:
    case SG_FAM_INT: case SG_FAM_OPT_INT: case SG_FAM_FLOAT: case SG_FAM_OPT_FLOAT:
    case SG_FAM_BOOL: case SG_FAM_OPT_BOOL: case SG_FAM_DTYPE: case SG_FAM_OPT_DTYPE:
    case SG_FAM_INT_LIST: case SG_FAM_OPT_INT_LIST: case SG_FAM_STR: case SG_FAM_OPT_STR:
        return true;
    default: return false;
    }
}

/* ---- one op ------------------------------------------------------------------------------- */

static bool differentiable(const sg_deriv *dv) {
    const sg_schema *sc = &dv->op->schema;
    if (sc->kind != SG_KIND_FUNCTIONAL || !sc->nrets || sc->nargs > 256 || sc->nrets > 256)
        return false;
    if (sg_dem_list_result(sc)) return true;
    for (uint32_t r = 0; r < sc->nrets; r++)
        if (sg_dem_fam(sc->rets[r].type) != SG_FAM_TENSOR) return false;
    return true;
}

/* Whether plan p can be emitted at all (the op's edges are Tensor or Tensor[] arguments); why
 * not else. */
static const char *make_plan(plan *p, const sg_deriv *dv) {
    const sg_schema *sc = &dv->op->schema;
    memset(p, 0, sizeof *p);
    p->dv = dv;
    p->list_out = sg_dem_list_result(sc);
    for (uint32_t i = 0; i < sc->nargs; i++) p->edge_of[i] = UINT32_MAX;
    for (uint32_t k = 0; k < dv->ngrads; k++)
        for (uint32_t j = 0; j < dv->grads[k].nnames; j++)
            for (uint32_t i = 0; i < sc->nargs; i++)
                if (!strcmp(sc->args[i].name, dv->grads[k].names[j])) {
                    int f = sg_dem_fam(sc->args[i].type);
                    if (f == SG_FAM_TENSOR_LIST && dv->grads[k].nnames > 1)
                        return "a key naming a Tensor[] beside other inputs";
                    if (f != SG_FAM_TENSOR && f != SG_FAM_OPT_TENSOR && f != SG_FAM_TENSOR_LIST)
                        return "a gradient for an input that is not a Tensor or a Tensor[]";
                    p->list_edges |= f == SG_FAM_TENSOR_LIST;
                    p->edge_of[i] = 0;
                }
    for (uint32_t i = 0; i < sc->nargs; i++)
        if (p->edge_of[i] != UINT32_MAX) p->edge_of[i] = p->nedges++;
    for (uint32_t k = 0; k < dv->ngrads; k++) walk_uses(dv->grads[k].typed, p);
    save_modes(p);
    if (p->list_out && p->res[0]) return "a formula that reads its Tensor[] result";
    for (uint32_t i = 0; i < sc->nargs; i++)
        if (p->in[i] && !keepable(sg_dem_fam(sc->args[i].type)))
            return "an input of a type a node does not keep";
    return p->nedges ? NULL : "no input has a gradient";
}

/* "MulBackward0": the op's name in CamelCase, "Backward", and how many entries of that name
 * came before it (PyTorch's naming of its nodes); a view_copy op's, its view op's and "_copy". */
static const char *node_name(sg_arena *a, const sg_deriv_set *s, const sg_deriv *dv) {
    if (dv->copy_of) { /* PyTorch's "PermuteBackward0_copy" */
        const char *view = node_name(a, s, &s->items[dv->copy_of - 1]);
        size_t      n = strlen(view);
        char       *t = sg_arena_alloc(a, n + sizeof "_copy");
        if (!t) return "Backward";
        memcpy(t, view, n);
        memcpy(t + n, "_copy", sizeof "_copy");
        return t;
    }
    uint32_t before = 0;
    for (const sg_deriv *o = s->items; o < dv; o++)
        before += !strcmp(o->op->schema.name, dv->op->schema.name);
    sg_buf b;
    sg_buf_init(&b);
    bool up = true;
    for (const char *c = dv->op->schema.name; *c; c++) {
        if (*c == '_') {
            up = true;
            continue;
        }
        sg_buf_putc(&b, up && *c >= 'a' && *c <= 'z' ? (char)(*c - 'a' + 'A') : *c);
        up = false;
    }
    sg_buf_printf(&b, "Backward%u", before);
    char *n = b.oom ? NULL : sg_arena_strndup(a, b.data, b.len);
    sg_buf_free(&b);
    return n ? n : "Backward";
}

static const char *ctype_of(int f) { return sg_type_family_rows[f].param; }

static void node_struct(sg_buf *b, const plan *p) {
    const sg_op *op = p->dv->op;
    const sg_schema *sc = &op->schema;
    sg_buf_printf(b, "/* %s: what the formulas of %s::%s%s%s read. */\ntypedef struct "
                  "sg_agn_%s {\n    sg_node base;\n", p->node_name, op->ns, sc->name,
                  *sc->overload ? "." : "", sc->overload, op->c->cname);
    for (uint32_t i = 0; i < sc->nargs; i++) {
        if (!p->in[i]) continue;
        const char *n = op->c->arg_cnames[i];
        int f = sg_dem_fam(sc->args[i].type);
        switch (f) {
        case SG_FAM_TENSOR:
        case SG_FAM_OPT_TENSOR: sg_buf_printf(b, "    sg_saved s_%s;\n", n); break;
        case SG_FAM_INT_LIST: case SG_FAM_OPT_INT_LIST:
            sg_buf_printf(b, "    int64_t *v_%s;\n    int32_t n_%s;\n    bool has_%s;\n", n, n, n);
            break;
        case SG_FAM_STR: case SG_FAM_OPT_STR: sg_buf_printf(b, "    char *v_%s;\n", n); break;
        default: {
            int plain = f;
            for (size_t k = 0; k < SG_DEM_NOPTIONALS; k++)
                if (sg_dem_optionals[k].opt == f) plain = sg_dem_optionals[k].plain;
            sg_buf_printf(b, "    %s v_%s;\n", ctype_of(plain), n);
            if (plain != f) sg_buf_printf(b, "    bool has_%s;\n", n);
        }
        }
    }
    sg_dem_list_fields(b, p);
    for (uint32_t r = 0; r < sc->nrets; r++)
        if (p->res[r]) sg_buf_printf(b, "    sg_saved r%u;\n", r);
    sg_buf_printf(b, "} sg_agn_%s;\n\n", op->c->cname);
}

static void release_fn(sg_buf *b, const plan *p) {
    const sg_op *op = p->dv->op;
    const sg_schema *sc = &op->schema;
    const char *c = op->c->cname;
    sg_buf_printf(b, "static void sg_agr_%s(sg_node *sg_n) {\n"
                  "    sg_agn_%s *n = (sg_agn_%s *)sg_n;\n"
                  "    (void)n;\n", c, c, c);
    for (uint32_t i = 0; i < sc->nargs; i++) {
        if (!p->in[i]) continue;
        const char *n = op->c->arg_cnames[i];
        int f = sg_dem_fam(sc->args[i].type);
        if (f == SG_FAM_TENSOR || f == SG_FAM_OPT_TENSOR)
            sg_buf_printf(b, "    sg_saved_release(&n->s_%s);\n", n);
        else if (f == SG_FAM_INT_LIST || f == SG_FAM_OPT_INT_LIST || f == SG_FAM_STR ||
                 f == SG_FAM_OPT_STR)
            sg_buf_printf(b, "    free(n->v_%s);\n    n->v_%s = NULL;\n", n, n);
    }
    sg_dem_list_release(b, p);
    for (uint32_t r = 0; r < sc->nrets; r++)
        if (p->res[r]) sg_buf_printf(b, "    sg_saved_release(&n->r%u);\n", r);
    sg_buf_puts(b, "}\n\n");
}

/* The locals of the backward function: each kept input and result, unpacked. */
static void apply_locals(sg_buf *b, sg_buf *unpack, sg_buf *drop, const plan *p) {
    const sg_op *op = p->dv->op;
    const sg_schema *sc = &op->schema;
    for (uint32_t i = 0; i < sc->nargs; i++) {
        if (!p->in[i]) continue;
        const char *n = op->c->arg_cnames[i];
        int f = sg_dem_fam(sc->args[i].type);
        switch (f) {
        case SG_FAM_TENSOR: case SG_FAM_OPT_TENSOR:
            sg_buf_printf(b, "    sg_tensor *a_%s = NULL;\n", n);
            sg_buf_printf(unpack, "    st = sg_saved_get(&n->s_%s, sg_n, &a_%s);\n"
                          "    if (st != SG_OK) goto done;\n", n, n);
            sg_buf_printf(drop, "    sg_tensor_release(a_%s);\n", n);
            break;
        case SG_FAM_INT_LIST:
            sg_buf_printf(b, "    sg_int_list a_%s = {n->v_%s, n->n_%s};\n", n, n, n);
            break;
        case SG_FAM_OPT_INT_LIST:
            sg_buf_printf(b, "    sg_int_list a_%s_v = {n->v_%s, n->n_%s};\n    const sg_int_list "
                          "*a_%s = n->has_%s ? &a_%s_v : NULL;\n", n, n, n, n, n, n);
            break;
        case SG_FAM_STR: case SG_FAM_OPT_STR:
            sg_buf_printf(b, "    const char *a_%s = n->v_%s;\n", n, n);
            break;
        default: {
            const char *ct = ctype_of(f);
            bool is_opt = false;
            for (size_t k = 0; k < SG_DEM_NOPTIONALS; k++)
                is_opt |= sg_dem_optionals[k].opt == f;
            if (is_opt)
                sg_buf_printf(b, "    %sa_%s = n->has_%s ? &n->v_%s : NULL;\n", ct, n, n, n);
            else
                sg_buf_printf(b, "    %s a_%s = n->v_%s;\n", ct, n, n);
            sg_buf_printf(b, "    (void)a_%s;\n", n);
        }
        }
    }
    for (uint32_t r = 0; r < sc->nrets; r++)
        if (p->res[r]) {
            sg_buf_printf(b, "    sg_tensor *r%u = NULL;\n", r);
            sg_buf_printf(unpack, "    st = sg_saved_get(&n->r%u, sg_n, &r%u);\n"
                          "    if (st != SG_OK) goto done;\n", r, r);
            sg_buf_printf(drop, "    sg_tensor_release(r%u);\n", r);
        }
}

/* One backward key: where any of its inputs needs a gradient, the formula, into out[]. */
static void apply_key(em *e, const plan *p, const sg_deriv_formula *f) {
    const sg_op *op = p->dv->op;
    const sg_schema *sc = &op->schema;
    uint32_t args[64], ne = 0;
    char edges[64][128]; /* each one's (first) edge, as C */
    for (uint32_t j = 0; j < f->nnames && ne < 64; j++)
        for (uint32_t i = 0; i < sc->nargs; i++)
            if (!strcmp(sc->args[i].name, f->names[j])) {
                sg_dem_list_edge(edges[ne], sizeof edges[ne], p, i);
                args[ne++] = i;
            }
    sg_buf *b = e->stmts;
    sg_buf_printf(b, "    { /* ");
    for (uint32_t j = 0; j < f->nnames; j++)
        sg_buf_printf(b, "%s%s", j ? ", " : "", f->names[j]);
    sg_buf_printf(b, " */\n        enum { SG_AG_NMASK = %u };\n"
                  "        bool sg_mask[SG_AG_NMASK] = {",
                  ne);
    if (p->list_edges) {
        sg_buf_puts(b, "false};\n");
        for (uint32_t j = 0; j < ne; j++) sg_dem_list_mask(b, p, j, args[j]);
    } else {
        for (uint32_t j = 0; j < ne; j++)
            sg_buf_printf(b, "%ssg_n->next[%s].node != NULL", j ? ", " : "", edges[j]);
        sg_buf_puts(b, "};\n");
    }
    sg_buf_puts(b, "        (void)sg_mask;\n        if (");
    for (uint32_t j = 0; j < ne; j++) sg_buf_printf(b, "%ssg_mask[%u]", j ? " || " : "", j);
    sg_buf_puts(b, ") {\n");
    const char *why = f->why;
    sg_buf body;
    sg_buf_init(&body);
    if (!why) {
        em k = {&body, p->dv, "            ", e->nt, NULL, e->nl};
        sg_buf v;
        sg_buf_init(&v);
        if (ne > 1) {
            uint32_t t = sg_dem_tuple(&k, f->typed, ne);
            for (uint32_t j = 0; j < ne; j++)
                sg_buf_printf(&v, "            out[%s] = sg_t[%u];\n            sg_t[%u] = NULL;\n",
                              edges[j], t + j, t + j);
        } else if (ne == 1 && sg_dem_fam(sc->args[args[0]].type) == SG_FAM_TENSOR_LIST) {
            sg_buf x; /* one gradient per element, each where its edge leads somewhere */
            sg_buf_init(&x);
            sg_dem_value(&k, f->typed, SG_FAM_TENSOR_LIST, &x);
            sg_buf_putc(&x, '\0');
            sg_buf_printf(&v, "            st = sg_agh_list_out(%s, sg_n, %s, n->len_%s, out);\n"
                          "            if (st != SG_OK) goto done;\n",
                          x.oom ? "(sg_tensor_list){NULL, 0}" : x.data, edges[0],
                          op->c->arg_cnames[args[0]]);
            sg_buf_free(&x);
        } else if (ne == 1) {
            sg_buf x;
            sg_buf_init(&x);
            sg_dem_value(&k, f->typed, SG_FAM_TENSOR, &x);
            sg_buf_putc(&x, '\0');
            sg_buf_printf(&v, "            out[%s] = sg_tensor_retain(%s);\n", edges[0],
                          x.oom ? "NULL" : x.data);
            sg_buf_free(&x);
        }
        why = k.why;
        if (!why) {
            sg_dem_putbuf(&body, &v);
            e->nt = k.nt;
            e->nl = k.nl;
        }
        sg_buf_free(&v);
    }
    if (why) {
        sg_buf_free(&body);
        sg_buf_init(&body);
        /* the reason may quote the formula: a C string of its own, never a format */
        sg_buf msg;
        sg_buf_init(&msg);
        sg_buf_printf(&msg, "%s: the derivative of %s::%s%s%s for '%s' is not translated: %s",
                      p->node_name, op->ns, sc->name, *sc->overload ? "." : "", sc->overload,
                      f->names[0], why);
        sg_buf_putc(&msg, '\0');
        sg_buf_puts(&body, "            st = sg_error(SG_EUNSUPPORTED, \"%s\", ");
        sg_dsl_c_string(&body, msg.oom ? "?" : msg.data);
        sg_buf_puts(&body, ");\n            goto done;\n");
        sg_buf_free(&msg);
    }
    sg_dem_putbuf(b, &body);
    sg_buf_free(&body);
    sg_buf_puts(b, "        }\n    }\n");
}

static void apply_fn(sg_buf *b, const plan *p) {
    const sg_op *op = p->dv->op;
    const char *c = op->c->cname;
    sg_buf locals, unpack, drop, body;
    sg_buf_init(&locals), sg_buf_init(&unpack), sg_buf_init(&drop), sg_buf_init(&body);
    apply_locals(&locals, &unpack, &drop, p);
    em e = {&body, p->dv, "    ", 0, NULL, 0};
    for (uint32_t k = 0; k < p->dv->ngrads; k++) apply_key(&e, p, &p->dv->grads[k]);
    sg_buf_printf(b, "static sg_status sg_agb_%s(sg_node *sg_n, sg_tensor *const *grads, "
                  "sg_tensor **out) {\n    sg_agn_%s *n = (sg_agn_%s *)sg_n;\n"
                  "    sg_status st = SG_OK;\n    (void)n, (void)grads, (void)out;\n", c, c, c);
    sg_buf_printf(b, "    sg_tensor *sg_t[%u] = {NULL};\n", e.nt ? e.nt : 1);
    if (e.nl) sg_buf_printf(b, "    sg_tensor_list sg_l[%u] = {{NULL, 0}};\n", e.nl);
    sg_dem_putbuf(b, &locals);
    sg_dem_putbuf(b, &unpack);
    sg_buf_puts(b, "    if (st != SG_OK) goto done;\n"); /* the label has a use */
    sg_dem_putbuf(b, &body);
    sg_buf_puts(b, "done:\n");
    sg_buf_printf(b, "    for (int i = 0; i < %u; i++)\n        sg_tensor_release(sg_t[i]);\n",
                  e.nt ? e.nt : 1);
    if (e.nl)
        sg_buf_printf(b, "    for (int i = 0; i < %u; i++)\n"
                      "        sg_tensor_list_release(&sg_l[i]);\n", e.nl);
    sg_dem_putbuf(b, &drop);
    sg_buf_puts(b, "    return st;\n}\n\n");
    sg_buf_free(&locals), sg_buf_free(&unpack), sg_buf_free(&drop), sg_buf_free(&body);
}

/* Keeping Tensor input i, named n, in node n (save_modes); its value as it is now, or before
 * the op where before_change. */
static void keep_tensor(sg_buf *b, const plan *p, uint32_t i, const char *n, bool before_change) {
    const char *whole = before_change ? "sg_saved_init_original" : "sg_saved_init";
    uint32_t g = p->guard[i];
    if (!p->value[i])
        sg_buf_printf(b, "    st = sg_saved_init_meta(&n->s_%s, %s); /* its metadata only */\n",
                      n, n);
    else if (g == UINT32_MAX)
        sg_buf_printf(b, "    st = %s(&n->s_%s, %s);\n", whole, n, n);
    else if (p->meta[i]) /* the other formulas read its metadata */
        sg_buf_printf(b, "    st = sg_n->next[%u].node ? %s(&n->s_%s, %s)\n"
                      "                            : sg_saved_init_meta(&n->s_%s, %s);\n", g,
                      whole, n, n, n, n);
    else
        sg_buf_printf(b, "    st = %s(&n->s_%s, sg_n->next[%u].node ? %s : NULL);\n", whole, n,
                      g, n);
    sg_buf_puts(b, "    if (st != SG_OK) goto fail;\n");
}

/* ---- views ---------------------------------------------------------------------------- */

/* The argument a view result aliases: the first Tensor argument annotated as an alias (self of
 * view, transpose, slice, ...); UINT32_MAX where none. */
static uint32_t view_base(const sg_op *op) {
    const sg_schema *sc = &op->schema;
    for (uint32_t i = 0; i < sc->nargs; i++)
        if (sg_type_alias(sc->args[i].type) && !sc->args[i].write &&
            sg_dem_fam(sc->args[i].type) == SG_FAM_TENSOR)
            return i;
    return UINT32_MAX;
}

static bool is_view_result(const sg_op *op, uint32_t r) {
    return sg_type_alias(op->schema.rets[r].type) && !op->schema.rets[r].write &&
           sg_dem_fam(op->schema.rets[r].type) == SG_FAM_TENSOR;
}

/* For the kernel of a functional op: each result that is a view of an input (Tensor(a))
 * marked so (sg_autograd_mark_view), where the node is recorded. */
static void mark_views(sg_buf *b, const sg_op *op) {
    uint32_t base = view_base(op);
    if (base == UINT32_MAX) return;
    for (uint32_t r = 0; r < op->schema.nrets; r++)
        if (is_view_result(op, r))
            sg_buf_printf(b, "    st = sg_autograd_mark_view(*%s, %s);\n    if (st != SG_OK) goto "
                          "fail;\n", op->c->ret_cnames[r], op->c->arg_cnames[base]);
}

/* ... and where no node is recorded (grad mode off) but an input requires grad: a view made
 * under no_grad, which PyTorch refuses to modify in place once grad mode is back on. */
static void mark_views_unrecorded(sg_buf *b, const sg_op *op) {
    const sg_schema *sc = &op->schema;
    uint32_t base = view_base(op);
    bool view = false;
    for (uint32_t r = 0; r < sc->nrets; r++) view |= is_view_result(op, r);
    if (!view || base == UINT32_MAX) return;
    sg_buf_printf(b, "    if (st == SG_OK && !sg_need && sg_tensor_requires_grad(%s)) {"
                  " /* a view made under no_grad */\n", op->c->arg_cnames[base]);
    for (uint32_t r = 0; r < sc->nrets; r++)
        if (is_view_result(op, r))
            sg_buf_printf(b, "        if (st == SG_OK) st = sg_autograd_mark_view(*%s, %s);\n",
                          op->c->ret_cnames[r], op->c->arg_cnames[base]);
    sg_buf_puts(b, "        if (st != SG_OK) {\n");
    for (uint32_t r = 0; r < sc->nrets; r++)
        sg_buf_printf(b, "            sg_tensor_release(*%s);\n            *%s = NULL;\n",
                      op->c->ret_cnames[r], op->c->ret_cnames[r]);
    sg_buf_puts(b, "            return st;\n        }\n    }\n");
}

/* Keeping input i in node n (the kernel's side of node_struct). */
static void keep(sg_buf *b, const plan *p, uint32_t i, bool before_change) {
    const sg_op *op = p->dv->op;
    const char *n = op->c->arg_cnames[i];
    int f = sg_dem_fam(op->schema.args[i].type);
    switch (f) {
    case SG_FAM_TENSOR: case SG_FAM_OPT_TENSOR:
        keep_tensor(b, p, i, n, before_change);
        return;
    case SG_FAM_INT_LIST: case SG_FAM_OPT_INT_LIST: {
        bool o = f == SG_FAM_OPT_INT_LIST;
        const char *src = o ? "(*" : "(";
        sg_buf_printf(b, "    n->has_%s = %s;\n", n, o ? n : "true");
        if (o) sg_buf_printf(b, "    if (%s) {\n", n);
        sg_buf_printf(b, "    n->n_%s = %s%s).len;\n", n, src, n);
        sg_buf_printf(b, "    n->v_%s = malloc((size_t)n->n_%s * sizeof(int64_t) + 1);\n", n, n);
        sg_buf_printf(b, "    if (!n->v_%s) {\n"
                      "        st = sg_error(SG_ENOMEM, \"%s: out of memory\");\n"
                      "        goto fail;\n    }\n", n, p->node_name);
        sg_buf_printf(b, "    if (n->n_%s) memcpy(n->v_%s, %s%s).items, (size_t)n->n_%s * "
                      "sizeof(int64_t));\n", n, n, src, n, n);
        if (o) sg_buf_puts(b, "    }\n");
        return;
    }
    case SG_FAM_STR: case SG_FAM_OPT_STR:
        sg_buf_printf(b, "    if (%s && !(n->v_%s = sg_agh_strdup(%s))) {\n        st = "
                      "sg_error(SG_ENOMEM, \"%s: out of memory\");\n        goto fail;\n    }\n",
                      n, n, n, p->node_name);
        return;
    default:
        for (size_t k = 0; k < SG_DEM_NOPTIONALS; k++)
            if (sg_dem_optionals[k].opt == f) {
                sg_buf_printf(b, "    n->has_%s = %s != NULL;\n    if (%s) n->v_%s = *%s;\n", n, n,
                              n, n, n);
                return;
            }
        sg_buf_printf(b, "    n->v_%s = %s;\n", n, n);
    }
}

static void kernel_fn(sg_buf *b, const plan *p) {
    const sg_op *op = p->dv->op;
    const sg_schema *sc = &op->schema;
    const char *c = op->c->cname;
    sg_buf_printf(b, "/* The Autograd kernel of %s::%s%s%s: the op below autograd, then, where an "
                  "input needs a\n * gradient, the node that computes it. */\n", op->ns, sc->name,
                  *sc->overload ? "." : "", sc->overload);
    sg_buf_printf(b, "static sg_status sg_agk_%s(sg_keyset ks, ", c);
    sg_dsl_c_params(b, op);
    sg_dem_rets(b, op);
    sg_buf_puts(b, ") {\n    bool sg_need = sg_grad_enabled() && (");
    bool first = true;
    for (uint32_t i = 0; i < sc->nargs; i++)
        if (p->edge_of[i] != UINT32_MAX) {
            sg_buf_printf(b, "%ssg_%s_requires_grad(%s)", first ? "" : " || ",
                          sg_dem_fam(sc->args[i].type) == SG_FAM_TENSOR_LIST ? "agh_list"
                                                                             : "tensor",
                          op->c->arg_cnames[i]);
            first = false;
        }
    /* grad mode off below, where recording: a backend kernel's own op calls record nothing
     * (PyTorch's kernels run below the autograd keys) */
    sg_buf_printf(b, ");\n    if (sg_need) sg_grad_set_enabled(false);\n"
                  "    sg_status st = %s_redispatch(ks & ~SG_KEYSET_AUTOGRAD, ", c);
    sg_dsl_c_args_rets(b, op);
    sg_buf_puts(b, ");\n    if (sg_need) sg_grad_set_enabled(true);\n");
    mark_views_unrecorded(b, op);
    sg_buf_puts(b, "    if (st != SG_OK || !sg_need) return st;\n    sg_node *sg_n = NULL;\n");
    if (p->list_edges || p->list_out) {
        char size_of[160], apply[140], release[140];
        snprintf(size_of, sizeof size_of, "sizeof(sg_agn_%s)", c);
        snprintf(apply, sizeof apply, "sg_agb_%s", c);
        snprintf(release, sizeof release, "sg_agr_%s", c);
        sg_dem_list_node(b, p, size_of, apply, release);
    } else {
        sg_buf_printf(b, "    st = sg_node_new(sizeof(sg_agn_%s), \"%s\", %u, %u, "
                      "sg_agb_%s, sg_agr_%s, "
                      "&sg_n);\n    if (st != SG_OK) goto fail;\n", c, p->node_name, sc->nrets,
                      p->nedges, c, c);
        sg_buf_printf(b, "    sg_agn_%s *n = (sg_agn_%s *)sg_n;\n    (void)n;\n", c, c);
        for (uint32_t i = 0; i < sc->nargs; i++)
            if (p->edge_of[i] != UINT32_MAX)
                sg_buf_printf(b, "    st = sg_node_set_next(sg_n, %u, %s);\n    if (st != SG_OK) "
                              "goto fail;\n", p->edge_of[i], op->c->arg_cnames[i]);
    }
    for (uint32_t i = 0; i < sc->nargs; i++)
        if (p->in[i]) keep(b, p, i, false);
    sg_dem_list_keep(b, p);
    if (p->list_out) sg_dem_list_grad_fn(b, p);
    for (uint32_t r = 0; r < sc->nrets && !p->list_out; r++) {
        bool diff = !p->dv->out_diff || p->dv->out_diff[r];
        /* A result PyTorch's set_history is given (the one result, or one output_differentiability
         * says True) is refused where its dtype has no gradient: sum(x, dtype=int64) of an x
         * that requires grad. A conditional one (_to_copy's: isDifferentiableType of the dtype
         * asked for), or one of several where the entry does not say (max.dim's indices: torchgen
         * leaves those its formulas' `grad` does not name), gets no history there. */
        bool strict = p->dv->out_diff ? !p->dv->out_diff_if[r] : sc->nrets == 1;
        if (diff && !strict)
            sg_buf_printf(b, "    st = sg_tensor_set_grad_fn(*%s, sg_n, %u);\n    if (st != SG_OK) "
                          "goto fail;\n", op->c->ret_cnames[r], r);
        else if (diff)
            sg_buf_printf(b, "    st = sg_agh_set_history(*%s, sg_n, %u, \"%s::%s%s%s\");\n"
                          "    if (st != SG_OK) goto fail;\n", op->c->ret_cnames[r], r, op->ns,
                          sc->name, *sc->overload ? "." : "", sc->overload);
        if (p->res[r])
            sg_buf_printf(b, "    st = sg_saved_init(&n->r%u, *%s);\n    if (st != SG_OK) goto "
                          "fail;\n", r, op->c->ret_cnames[r]);
    }
    mark_views(b, op);
    sg_buf_puts(b, "    sg_node_release(sg_n);\n    return SG_OK;\n"
                   "fail:\n    sg_node_release(sg_n);\n");
    if (p->list_out)
        sg_buf_printf(b, "    sg_tensor_list_release(%s);\n", op->c->ret_cnames[0]);
    for (uint32_t r = 0; r < sc->nrets && !p->list_out; r++)
        sg_buf_printf(b, "    sg_tensor_release(*%s);\n    *%s = NULL;\n", op->c->ret_cnames[r],
                      op->c->ret_cnames[r]);
    sg_buf_puts(b, "    return st;\n}\n\n");
}

/* The Autograd kernel of an op whose node cannot be written (why): where an input needs a
 * gradient, an error, rather than a result that would silently have none. */
static void refusing_kernel(sg_buf *b, const sg_deriv *dv, const char *why) {
    const sg_op *op = dv->op;
    const sg_schema *sc = &op->schema;
    sg_buf_printf(b, "/* %s::%s%s%s: no node (%s). */\nstatic sg_status sg_agk_%s(sg_keyset ks, ",
                  op->ns, sc->name, *sc->overload ? "." : "", sc->overload, why, op->c->cname);
    sg_dsl_c_params(b, op);
    sg_dem_rets(b, op);
    sg_buf_puts(b, ") {\n    bool sg_need = false;\n");
    for (uint32_t i = 0; i < sc->nargs; i++) {
        int f = sg_dem_fam(sc->args[i].type);
        const char *n = op->c->arg_cnames[i];
        if (f == SG_FAM_TENSOR || f == SG_FAM_OPT_TENSOR)
            sg_buf_printf(b, "    sg_need |= sg_tensor_requires_grad(%s);\n", n);
        else if (f == SG_FAM_TENSOR_LIST)
            sg_buf_printf(b, "    for (int32_t i = 0; i < %s.len; i++)\n        sg_need |= "
                          "sg_tensor_requires_grad(%s.items[i]);\n", n, n);
    }
    sg_buf_printf(b, "    if (sg_need && sg_grad_enabled())\n"
                  "        return sg_error(SG_EUNSUPPORTED, \"%s::%s%s%s: its gradient is not "
                  "supported yet (%%s)\", ", op->ns, sc->name, *sc->overload ? "." : "",
                  sc->overload);
    sg_dsl_c_string(b, why);
    sg_buf_puts(b, ");\n");
    sg_buf_printf(b, "    return %s_redispatch(ks & ~SG_KEYSET_AUTOGRAD, ", op->c->cname);
    sg_dsl_c_args_rets(b, op);
    sg_buf_puts(b, ");\n}\n\n");
}

/* The op's Autograd kernel at each backend's Autograd key, not the alias: a registration there
 * comes before a CompositeImplicitAutograd kernel (sg_dispatch.h), so an op's formula is what
 * differentiates it even where a backend's kernel for it is not made of differentiable ops; a
 * backend that registers its own later (AutogradPrivateUse1) stacks over it. */
void sg_deriv_register_at_keys(sg_buf *reg, const sg_op *op) {
    sg_buf_printf(reg, "    for (size_t i = 0; st == SG_OK && i < sizeof sg_agh_keys / sizeof "
                  "*sg_agh_keys; i++)\n"
                  "        st = %s_register(sg_agh_keys[i], sg_agk_%s, NULL);\n",
                  op->c->cname, op->c->cname);
}

/* ---- the differentiated ops ------------------------------------------------------------------ */

/* Whether any op that gets a kernel here takes or returns a Tensor[]. */
static bool any_lists(const sg_deriv_set *s) {
    for (uint32_t i = 0; i < s->n; i++) {
        plan p;
        if (differentiable(&s->items[i]) && !sg_dem_decomposed(&s->items[i]) &&
            !make_plan(&p, &s->items[i]) && (p.list_edges || p.list_out))
            return true;
    }
    return false;
}

uint32_t sg_dem_functional(sg_buf *c, sg_buf *reg, sg_deriv_set *s) {
    uint32_t nops = 0;
    if (any_lists(s)) sg_dem_list_preamble(c); /* the inline helpers of Tensor[] ops */
    for (uint32_t i = 0; i < s->n; i++) {
        const sg_deriv *dv = &s->items[i];
        if (!differentiable(dv) || sg_dem_decomposed(dv)) continue;
        plan p;
        const char *why = make_plan(&p, dv);
        if (why) {
            if (!strcmp(why, "no input has a gradient")) continue;
            refusing_kernel(c, dv, why);
            sg_deriv_register_at_keys(reg, dv->op);
            nops++;
            continue;
        }
        p.node_name = node_name(s->a, s, dv);
        node_struct(c, &p);
        release_fn(c, &p);
        apply_fn(c, &p);
        kernel_fn(c, &p);
        sg_deriv_register_at_keys(reg, dv->op);
        nops++;
    }
    return nops;
}

/* ---- for deriv_emit_inplace.c --------------------------------------------------------------- */

const char *sg_dem_node_of(sg_deriv_set *s, const sg_deriv *dv, sg_dem_node *out, sg_buf *c) {
    const sg_schema *sc = &dv->op->schema;
    if (!sc->nrets || sc->nargs > 256 || sc->nrets > 256) return "not an op with results";
    for (uint32_t r = 0; r < sc->nrets; r++)
        if (sg_dem_fam(sc->rets[r].type) != SG_FAM_TENSOR) return "a result that is not a Tensor";
    plan *p = malloc(sizeof *p);
    if (!p) return "out of memory";
    const char *why = make_plan(p, dv);
    if (!why) {
        p->node_name = node_name(s->a, s, dv);
        out->name = p->node_name;
        out->nedges = p->nedges;
        out->edge_of = sg_arena_alloc(s->a, (sc->nargs + 1) * sizeof *out->edge_of);
        out->kept = sg_arena_alloc(s->a, sc->nargs + 1);
        out->kept_result = sg_arena_alloc(s->a, sc->nrets + 1);
        if (!out->edge_of || !out->kept || !out->kept_result) {
            why = "out of memory";
        } else {
            memcpy(out->edge_of, p->edge_of, sc->nargs * sizeof *out->edge_of);
            memcpy(out->kept, p->in, sc->nargs);
            memcpy(out->kept_result, p->res, sc->nrets);
            if (c) {
                node_struct(c, p);
                release_fn(c, p);
                apply_fn(c, p);
            }
        }
    }
    free(p);
    return why;
}

void sg_dem_keep(sg_buf *b, const sg_deriv *dv, const char *node_name, uint32_t i,
                 bool before_change) {
    plan *p = malloc(sizeof *p);
    if (!p || make_plan(p, dv)) { /* the caller made this plan already: only out of memory */
        b->oom = true;
        free(p);
        return;
    }
    p->node_name = node_name;
    keep(b, p, i, before_change);
    free(p);
}
