/* deriv_emit_list.c: what ops with a Tensor[] input or result add to their node, backward
 * function and Autograd kernel (deriv_emit.h, docs/autograd.md), as torchgen's generated code
 * for cat, stack and split does.
 *
 * A Tensor[] input that needs a gradient has one edge per element, so the node's edge count is
 * known only at run time: the kernel counts them, and the node keeps where each input's edges
 * start (e_NAME) and each list's length (len_NAME). Formulas read a list only through
 * to_args_sizes / to_args_scalartypes, which the node keeps as int lists (v_NAME_sizes,
 * v_NAME_dtypes), never the tensors. A Tensor[] result gives the node one input per element
 * (again counted at run time), and the formulas read their gradients as `grads`, a Tensor?[]
 * whose undefined entries are the outputs that got none. */
#include "deriv_emit.h"
#include "derive.h"
#include "dsl_emit.h"

bool sg_dem_list_result(const sg_schema *sc) {
    return sc->nrets == 1 && sg_dem_fam(sc->rets[0].type) == SG_FAM_TENSOR_LIST;
}

void sg_dem_rets(sg_buf *b, const sg_op *op) {
    if (sg_dem_list_result(&op->schema))
        sg_buf_printf(b, ", sg_tensor_list *%s", op->c->ret_cnames[0]);
    else
        sg_dsl_c_rets(b, op);
}

bool sg_dem_decomposed(const sg_deriv *dv) {
    const sg_op *op = dv->op;
    /* torchgen's has_composite_implicit_autograd_kernel: named, or no table and no delegate */
    bool implicit = !op->ndispatch && !op->structured_delegate;
    for (uint32_t k = 0; k < op->ndispatch; k++)
        for (uint32_t j = 0; j < op->dispatch[k].nkeys; j++)
            implicit |= !strcmp(op->dispatch[k].keys[j], "CompositeImplicitAutograd");
    if (!implicit || !dv->ngrads) return false;
    for (uint32_t k = 0; k < dv->ngrads; k++)
        if (strncmp(dv->grads[k].text, "not_implemented(", 16) != 0) return false;
    return true;
}

void sg_dem_list_preamble(sg_buf *c) {
    sg_buf_puts(c,
        "/* ---- ops with a Tensor[] input or result ---- */\n\n"
        "/* What a node keeps of a Tensor[] (to_args_sizes: each element's number of dims, then "
        "its sizes;\n * to_args_scalartypes: each element's dtype), in a new array *v of *n "
        "items. */\n"
        "static inline sg_status sg_agh_list_facts(sg_tensor_list l, bool sizes, const char "
        "*node, int64_t **v,\n                                          int32_t *n) {\n"
        "    size_t k = 0;\n"
        "    for (int32_t i = 0; i < l.len; i++) k += sizes ? 1 + (size_t)l.items[i]->ndim : 1;\n"
        "    if (k > INT32_MAX) return sg_error(SG_EINVAL, \"%s: too many tensors\", node);\n"
        "    if (!(*v = malloc(k * sizeof **v + 1))) return sg_error(SG_ENOMEM, \"%s: out of "
        "memory\", node);\n"
        "    *n = (int32_t)k;\n    k = 0;\n"
        "    for (int32_t i = 0; i < l.len; i++) {\n"
        "        const sg_tensor *t = l.items[i];\n"
        "        if (!sizes) {\n            (*v)[k++] = t->dtype;\n            continue;\n"
        "        }\n"
        "        (*v)[k++] = t->ndim;\n"
        "        for (int32_t d = 0; d < t->ndim; d++) (*v)[k++] = t->sizes[d];\n    }\n"
        "    return SG_OK;\n}\n\n"
        "/* Whether one of edges [first, first + len) of n leads somewhere: a Tensor[]'s entry of "
        "grad_input_mask. */\n"
        "static inline bool sg_agh_any_edge(const sg_node *n, uint32_t first, int32_t len) {\n"
        "    for (int32_t i = 0; i < len; i++)\n"
        "        if (n->next[first + (uint32_t)i].node) return true;\n"
        "    return false;\n}\n\n"
        "/* A Tensor[] input's gradients, one per element: out[first + i] = l's item i where that "
        "edge leads\n * somewhere. */\n"
        "static inline sg_status sg_agh_list_out(sg_tensor_list l, const sg_node *n, uint32_t "
        "first, int32_t len,\n                                        sg_tensor **out) {\n"
        "    if (l.len != len)\n"
        "        return sg_error(SG_EINVAL, \"%s: the formula gave %d gradients for %d tensors\", "
        "n->name, (int)l.len,\n                        (int)len);\n"
        "    for (int32_t i = 0; i < len; i++)\n"
        "        if (n->next[first + (uint32_t)i].node) out[first + (uint32_t)i] = "
        "sg_tensor_retain(l.items[i]);\n"
        "    return SG_OK;\n}\n\n");
}

static bool is_list(const sg_dem_plan *p, uint32_t i) {
    return sg_dem_fam(p->dv->op->schema.args[i].type) == SG_FAM_TENSOR_LIST;
}

void sg_dem_list_fields(sg_buf *b, const sg_dem_plan *p) {
    const sg_op *op = p->dv->op;
    for (uint32_t i = 0; i < op->schema.nargs; i++) {
        const char *n = op->c->arg_cnames[i];
        if (p->list_edges && p->edge_of[i] != UINT32_MAX) {
            sg_buf_printf(b, "    uint32_t e_%s; /* its first edge */\n", n);
            if (is_list(p, i)) sg_buf_printf(b, "    int32_t len_%s;\n", n);
        }
        if (p->facts[i] & SG_DEM_SIZES)
            sg_buf_printf(b, "    int64_t *v_%s_sizes; /* to_args_sizes */\n"
                          "    int32_t n_%s_sizes;\n", n, n);
        if (p->facts[i] & SG_DEM_DTYPES)
            sg_buf_printf(b, "    int64_t *v_%s_dtypes; /* to_args_scalartypes */\n"
                          "    int32_t n_%s_dtypes;\n", n, n);
    }
}

void sg_dem_list_release(sg_buf *b, const sg_dem_plan *p) {
    const sg_op *op = p->dv->op;
    static const struct { int bit; const char *k; } kinds[] = {
        {SG_DEM_SIZES, "sizes"}, {SG_DEM_DTYPES, "dtypes"}};
    for (uint32_t i = 0; i < op->schema.nargs; i++)
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
            if (p->facts[i] & kinds[k].bit)
                sg_buf_printf(b, "    free(n->v_%s_%s);\n    n->v_%s_%s = NULL;\n",
                              op->c->arg_cnames[i], kinds[k].k, op->c->arg_cnames[i],
                              kinds[k].k);
}

void sg_dem_list_edge(char *out, size_t cap, const sg_dem_plan *p, uint32_t i) {
    if (p->list_edges) snprintf(out, cap, "n->e_%s", p->dv->op->c->arg_cnames[i]);
    else snprintf(out, cap, "%u", p->edge_of[i]);
}

void sg_dem_list_mask(sg_buf *b, const sg_dem_plan *p, uint32_t j, uint32_t i) {
    const char *n = p->dv->op->c->arg_cnames[i];
    if (is_list(p, i))
        sg_buf_printf(b, "        sg_mask[%u] = sg_agh_any_edge(sg_n, n->e_%s, n->len_%s);\n", j,
                      n, n);
    else
        sg_buf_printf(b, "        sg_mask[%u] = sg_n->next[n->e_%s].node != NULL;\n", j, n);
}

void sg_dem_list_node(sg_buf *b, const sg_dem_plan *p, const char *size_of, const char *apply,
                      const char *release) {
    const sg_op *op = p->dv->op;
    const sg_schema *sc = &op->schema;
    const char *c = op->c->cname;
    if (p->list_out)
        sg_buf_printf(b, "    uint32_t sg_nin = (uint32_t)%s->len, sg_ne = 0;\n"
                      "    if (!sg_nin) return SG_OK; /* no output, no gradient */\n",
                      op->c->ret_cnames[0]);
    else
        sg_buf_printf(b, "    uint32_t sg_nin = %u, sg_ne = 0;\n", sc->nrets);
    for (uint32_t i = 0; i < sc->nargs; i++) {
        if (p->edge_of[i] == UINT32_MAX) continue;
        const char *n = op->c->arg_cnames[i];
        if (is_list(p, i))
            sg_buf_printf(b, "    uint32_t sg_e_%s = sg_ne;\n    sg_ne += (uint32_t)%s.len;\n", n,
                          n);
        else
            sg_buf_printf(b, "    uint32_t sg_e_%s = sg_ne++;\n", n);
    }
    sg_buf_printf(b, "    st = sg_node_new(%s, \"%s\", sg_nin, sg_ne, %s, %s, &sg_n);\n"
                  "    if (st != SG_OK) goto fail;\n"
                  "    sg_agn_%s *n = (sg_agn_%s *)sg_n;\n    (void)n;\n",
                  size_of, p->node_name, apply, release, c, c);
    for (uint32_t i = 0; i < sc->nargs; i++) {
        if (p->edge_of[i] == UINT32_MAX) continue;
        const char *n = op->c->arg_cnames[i];
        if (p->list_edges) sg_buf_printf(b, "    n->e_%s = sg_e_%s;\n", n, n);
        if (is_list(p, i))
            sg_buf_printf(b, "    n->len_%s = %s.len;\n"
                          "    for (int32_t i = 0; i < %s.len; i++) {\n"
                          "        st = sg_node_set_next(sg_n, sg_e_%s + (uint32_t)i, "
                          "%s.items[i]);\n"
                          "        if (st != SG_OK) goto fail;\n    }\n",
                          n, n, n, n, n);
        else
            sg_buf_printf(b, "    st = sg_node_set_next(sg_n, sg_e_%s, %s);\n"
                          "    if (st != SG_OK) goto fail;\n", n, n);
    }
}

void sg_dem_list_keep(sg_buf *b, const sg_dem_plan *p) {
    const sg_op *op = p->dv->op;
    static const struct { int bit; const char *k, *sizes; } kinds[] = {
        {SG_DEM_SIZES, "sizes", "true"}, {SG_DEM_DTYPES, "dtypes", "false"}};
    for (uint32_t i = 0; i < op->schema.nargs; i++)
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
            if (!(p->facts[i] & kinds[k].bit)) continue;
            const char *n = op->c->arg_cnames[i];
            sg_buf_printf(b, "    st = sg_agh_list_facts(%s, %s, \"%s\", &n->v_%s_%s, "
                          "&n->n_%s_%s);\n    if (st != SG_OK) goto fail;\n",
                          n, kinds[k].sizes, p->node_name, n, kinds[k].k, n, kinds[k].k);
        }
}

void sg_dem_list_grad_fn(sg_buf *b, const sg_dem_plan *p) {
    const sg_deriv *dv = p->dv;
    if (dv->out_diff && !dv->out_diff[0]) return;
    const char *r = dv->op->c->ret_cnames[0];
    sg_buf_printf(b, "    for (uint32_t i = 0; i < sg_nin; i++) {\n"
                  "        st = sg_tensor_set_grad_fn(%s->items[i], sg_n, i);\n"
                  "        if (st != SG_OK) goto fail;\n    }\n", r);
}
