/* deriv_emit_gate.c: the Autograd kernels of the functional ops that derivatives.yaml does not
 * cover (docs/autograd.md, "Ops without a formula"), as torchgen decides them:
 *
 *   - a CompositeImplicitAutograd op differentiates through its decomposition: where an input
 *     needs a gradient, its CompositeImplicitAutograd kernel runs (made of aten calls, each
 *     differentiable), even where a backend registered a faster kernel of its own; otherwise
 *     the call goes below autograd to whatever the backends registered;
 *   - an op whose outputs never carry a gradient (torchgen's DONT_REQUIRE_DERIVATIVE) gets no
 *     kernel: it falls through, and its outputs do not require grad;
 *   - any other op runs below autograd and, where an input needs a gradient, its floating
 *     outputs get a NotImplemented node whose backward fails (PyTorch's not_implemented):
 *     a gradient that cannot be computed is an error, never silently missing.
 *
 * Mutating ops (in-place, out=) are left to the in-place rules. */
#include "deriv_emit.h"
#include "derive.h"
#include "dsl_emit.h"
#include "validate_util.h"

#include <string.h>

/* torchgen's DONT_REQUIRE_DERIVATIVE: base names whose outputs never require grad. */
static const char *const no_derivative[] = {
    "empty_like", "ones_like", "full_like", "zeros_like", "rand_like", "randn_like", "new_empty",
    "new_empty_strided", "new_full", "new_zeros", "new_ones", "__and__", "__iand__",
    "__ilshift__", "__ior__", "__irshift__", "__ixor__", "__lshift__", "__or__", "__rshift__",
    "__xor__", "_coalesced_", "quantize_per_tensor", "quantize_per_channel", "argmax", "argmin",
    "argsort", "searchsorted", "bucketize", "isnan", "isposinf", "isneginf", "isinf", "signbit",
    "isin", "allclose", "record_stream", "logical_and", "logical_xor", "logical_not",
    "logical_or",
};

static bool never_requires_grad(const sg_op *op) {
    for (size_t i = 0; i < sizeof no_derivative / sizeof *no_derivative; i++)
        if (!strcmp(op->schema.name, no_derivative[i])) return true;
    return false;
}

static bool is_tensor(int f) { return f == SG_FAM_TENSOR || f == SG_FAM_OPT_TENSOR; }
static bool is_list(int f) { return f == SG_FAM_TENSOR_LIST || f == SG_FAM_OPT_TENSOR_LIST; }

/* Which kernel op gets: 0 none, 'c' the decomposing gate, 'n' NotImplemented. */
static int kind_of(const sg_deriv_set *s, const sg_op *op) {
    const sg_schema *sc = &op->schema;
    if (!op->parsed || !op->c || !strcmp(op->ns, "autograd")) return 0;
    if (sc->kind != SG_KIND_FUNCTIONAL || !sc->nrets || never_requires_grad(op)) return 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (s->items[i].op == op) return 0;
    bool in = false, out = false, odd = false;
    for (uint32_t i = 0; i < sc->nargs; i++) {
        int f = sg_dem_fam(sc->args[i].type);
        in |= is_tensor(f) || is_list(f);
    }
    for (uint32_t r = 0; r < sc->nrets; r++) {
        int f = sg_dem_fam(sc->rets[r].type);
        out |= is_tensor(f);
        odd |= !is_tensor(f);
    }
    /* Tensor[] results are the list rules' (deriv_emit_list.c) */
    if (!in || !out || odd) return 0;
    return sgv_has_cia(op) ? 'c' : 'n';
}

/* `bool sg_need = grad mode && an input requires grad;` over every Tensor-like argument. */
static void need(sg_buf *b, const sg_op *op) {
    const sg_schema *sc = &op->schema;
    sg_buf_puts(b, "    bool sg_need = false;\n    if (sg_grad_enabled()) {\n");
    for (uint32_t i = 0; i < sc->nargs; i++) {
        int f = sg_dem_fam(sc->args[i].type);
        const char *n = op->c->arg_cnames[i];
        if (is_tensor(f))
            sg_buf_printf(b, "        sg_need |= sg_tensor_requires_grad(%s);\n", n);
        else if (is_list(f))
            sg_buf_printf(b, "        for (int32_t i = 0; i < %s.len; i++)\n            sg_need |= "
                          "sg_tensor_requires_grad(%s.items[i]);\n", n, n);
    }
    sg_buf_puts(b, "    }\n");
}

static void head(sg_buf *b, const sg_op *op) {
    sg_buf_printf(b, "static sg_status sg_agk_%s(sg_keyset ks, ", op->c->cname);
    sg_dsl_c_params(b, op);
    sg_dsl_c_rets(b, op);
    sg_buf_puts(b, ") {\n");
}

static void below(sg_buf *b, const sg_op *op, const char *lead) {
    sg_buf_printf(b, "%s%s_redispatch(ks & ~SG_KEYSET_AUTOGRAD, ", lead, op->c->cname);
    sg_dsl_c_args_rets(b, op);
    sg_buf_puts(b, ");\n");
}

static void gate_kernel(sg_buf *b, const sg_op *op) {
    sg_buf_puts(b, "/* ");
    sg_dem_qual(b, op);
    sg_buf_puts(b, ": CompositeImplicitAutograd, no formula: differentiated through its "
                   "decomposition. */\n");
    head(b, op);
    need(b, op);
    below(b, op, "    if (!sg_need) return ");
    sg_buf_printf(b, "    sg_entry sg_e = sg_op_registered(%s_op, "
                  "SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD);\n    if (!sg_e.unboxed)\n"
                  "        return sg_error(SG_EUNSUPPORTED, \"", op->c->cname);
    sg_dem_qual(b, op);
    sg_buf_puts(b, ": an input requires grad, and the op has no derivative formula and no "
                   "CompositeImplicitAutograd kernel to differentiate through\");\n");
    sg_buf_printf(b, "    return ((%s_kernel)sg_e.unboxed)(ks, ", op->c->cname);
    sg_dsl_c_args_rets(b, op);
    sg_buf_puts(b, ");\n}\n\n");
}

static void not_implemented_kernel(sg_buf *b, const sg_op *op) {
    const sg_schema *sc = &op->schema;
    bool lists = false;
    uint32_t nin = 0, nout = 0;
    for (uint32_t i = 0; i < sc->nargs; i++) {
        int f = sg_dem_fam(sc->args[i].type);
        lists |= is_list(f);
        nin += is_tensor(f);
    }
    for (uint32_t r = 0; r < sc->nrets; r++) nout += is_tensor(sg_dem_fam(sc->rets[r].type));
    sg_buf_puts(b, "/* ");
    sg_dem_qual(b, op);
    sg_buf_puts(b, lists ? ": no formula; Tensor[] arguments: refused where an input "
                           "needs a gradient. */\n"
                         : ": no formula: a NotImplemented node. */\n");
    head(b, op);
    need(b, op);
    if (lists) {
        sg_buf_puts(b, "    if (sg_need)\n        return sg_error(SG_EUNSUPPORTED, \"");
        sg_dem_qual(b, op);
        sg_buf_puts(b, ": an input requires grad, and the op has no derivative formula\");\n");
        below(b, op, "    return ");
        sg_buf_puts(b, "}\n\n");
        return;
    }
    /* grad mode off below, where recording, as deriv_emit_c.c's kernels do */
    sg_buf_puts(b, "    if (sg_need) sg_grad_set_enabled(false);\n");
    below(b, op, "    sg_status st = ");
    sg_buf_puts(b, "    if (sg_need) sg_grad_set_enabled(true);\n"
                   "    if (st != SG_OK || !sg_need) return st;\n    sg_tensor *sg_in[] = {");
    for (uint32_t i = 0, k = 0; i < sc->nargs; i++)
        if (is_tensor(sg_dem_fam(sc->args[i].type)))
            sg_buf_printf(b, "%s%s", k++ ? ", " : "", op->c->arg_cnames[i]);
    sg_buf_puts(b, "};\n    sg_tensor *sg_out[] = {");
    for (uint32_t r = 0, k = 0; r < sc->nrets; r++)
        if (is_tensor(sg_dem_fam(sc->rets[r].type)))
            sg_buf_printf(b, "%s*%s", k++ ? ", " : "", op->c->ret_cnames[r]);
    sg_buf_puts(b, "};\n    st = sg_autograd_not_implemented(\"");
    sg_dem_qual(b, op);
    sg_buf_printf(b, "\", sg_in, %u, sg_out, %u);\n    if (st != SG_OK) {\n", nin, nout);
    for (uint32_t r = 0; r < sc->nrets; r++)
        sg_buf_printf(b, "        sg_tensor_release(*%s);\n        *%s = NULL;\n",
                      op->c->ret_cnames[r], op->c->ret_cnames[r]);
    sg_buf_puts(b, "    }\n    return st;\n}\n\n");
}

uint32_t sg_deriv_emit_gates(sg_buf *c, sg_buf *reg, const sg_deriv_set *s, const sg_model *m) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nops; i++) {
        const sg_op *op = m->ops[i];
        int k = kind_of(s, op);
        if (!k) continue;
        if (k == 'c') gate_kernel(c, op);
        else not_implemented_kernel(c, op);
        sg_deriv_register_at_keys(reg, op);
        n++;
    }
    return n;
}
