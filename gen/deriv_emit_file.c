/* deriv_emit_file.c: the files LIB_autograd.c and LIB_autograd.h: their banner, the helper
 * ops' kernels, the Autograd kernels of every differentiated op (deriv_emit_c.c), of the ops
 * that gates refuse (deriv_emit_gate.c) and of the in-place and out= ops
 * (deriv_emit_inplace.c), and LIB_autograd_init, which registers them. */
#include "deriv_emit.h"
#include "derive.h"
#include "dsl_emit.h"

#include <string.h>

const char sg_deriv_banner_mark[] = " with schemagen --derivatives. Do not edit.";

static void banner(sg_buf *b, const sg_deriv_set *s, const char *const *inputs, uint32_t n) {
    sg_buf_printf(b, " * " SG_BANNER_HEAD "%s from ", SG_VERSION);
    for (uint32_t i = 0; i < n; i++) {
        sg_dsl_c_comment_text(b, inputs[i]);
        sg_buf_puts(b, ", ");
    }
    sg_dsl_c_comment_text(b, s->path);
    sg_buf_printf(b, "%s */\n", sg_deriv_banner_mark);
}

/* The kernels the helper ops (namespace autograd, schemas/autograd.yaml) name under
 * CompositeExplicitAutograd: declared with their op's kernel type, registered by
 * LIB_autograd_init. */
static void helper_kernels(sg_buf *c, sg_buf *reg, const sg_model *m) {
    for (uint32_t i = 0; i < m->nops; i++) {
        const sg_op *op = m->ops[i];
        if (!op->parsed || !op->c || strcmp(op->ns, "autograd") != 0) continue;
        for (uint32_t k = 0; k < op->ndispatch; k++)
            for (uint32_t j = 0; j < op->dispatch[k].nkeys; j++) {
                if (strcmp(op->dispatch[k].keys[j], "CompositeExplicitAutograd") != 0) continue;
                sg_buf_printf(c, "%s_fn %s;\n", op->c->cname, op->dispatch[k].kernel);
                sg_buf_printf(reg, "    if (st == SG_OK) st = %s_register("
                              "SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, %s, NULL);\n", op->c->cname,
                              op->dispatch[k].kernel);
            }
    }
    sg_buf_putc(c, '\n');
}

void sg_deriv_emit_c(sg_buf *c, sg_buf *h, sg_deriv_set *s, const sg_model *m, const char *lib,
                     const char *const *inputs, uint32_t ninputs) {
    sg_buf_printf(h, "/* %s_autograd.h: the Autograd kernels of %s (docs/autograd.md).\n", lib,
                  lib);
    banner(h, s, inputs, ninputs);
    sg_buf_printf(c, "/* %s_autograd.c: the Autograd kernels of %s, from derivatives.yaml's "
                  "formulas (docs/autograd.md).\n", lib, lib);
    banner(c, s, inputs, ninputs);
    sg_buf_printf(h, "#ifndef SG_GEN_%s_AUTOGRAD_H\n#define SG_GEN_%s_AUTOGRAD_H\n\n"
                  "#include \"sg_runtime.h\"\n\n"
                  "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", lib,
                  lib);
    sg_buf_printf(h, "/* Registers the Autograd kernel of every differentiable op at the Autograd "
                  "key, and the kernels\n * of the formulas' helper ops; call once, after %s_init. "
                  "*/\nsg_status %s_autograd_init(void);\n\n", lib, lib);
    sg_buf_puts(h, "#ifdef __cplusplus\n}\n#endif\n#endif\n");
    sg_buf_printf(c, "#include \"%s.h\"\n#include \"%s_autograd.h\"\n#include \"sg_autograd.h\"\n\n"
                  "#include <stdbool.h>\n#include <stdlib.h>\n#include <string.h>\n\n", lib, lib);
    sg_buf_puts(c, "/* A differentiable result's history; one of a dtype that has no gradient is "
                   "refused, as\n * PyTorch's set_history refuses it. */\n"
                   "static inline sg_status sg_agh_set_history(sg_tensor *t, sg_node *n, "
                   "uint32_t nr,\n                                           const char *op) {\n"
                   "    sg_dtype d = (sg_dtype)t->dtype;\n"
                   "    if (!sg_dtype_is_floating(d) && !sg_dtype_is_complex(d))\n"
                   "        return sg_error(SG_EINVAL, \"%s: Autograd not support dtype: %s\", "
                   "op,\n                        sg_dtype_c10_name(d));\n"
                   "    return sg_tensor_set_grad_fn(t, n, nr);\n}\n\n");
    sg_buf_puts(c, "/* size(d) with d wrapped as aten wraps it */\n"
                   "static inline int64_t sg_agh_size(const sg_tensor *t, int64_t d) {\n"
                   "    return t->sizes[d < 0 ? d + t->ndim : d];\n}\n\n"
                   "/* the Autograd keys of the backends: where each kernel is registered */\n"
                   "static const sg_key sg_agh_keys[] = {"
                   "SG_KEY_AUTOGRAD_CPU, SG_KEY_AUTOGRAD_CUDA,\n"
                   "    SG_KEY_AUTOGRAD_PRIVATEUSE1, SG_KEY_AUTOGRAD_PRIVATEUSE2, "
                   "SG_KEY_AUTOGRAD_PRIVATEUSE3,\n    SG_KEY_AUTOGRAD_META};\n\n"
                   "/* Whether an element of l requires grad. */\n"
                   "static inline bool sg_agh_list_requires_grad(sg_tensor_list l) {\n"
                   "    for (int32_t i = 0; i < l.len; i++)\n"
                   "        if (sg_tensor_requires_grad(l.items[i])) return true;\n"
                   "    return false;\n}\n\n"
                   "static inline char *sg_agh_strdup(const char *s) {\n"
                   "    size_t n = strlen(s) + 1;\n    char *p = malloc(n);\n"
                   "    if (p) memcpy(p, s, n);\n    return p;\n}\n\n");
    uint32_t nops = 0;
    sg_buf reg;
    sg_buf_init(&reg);
    helper_kernels(c, &reg, m);
    nops += sg_dem_functional(c, &reg, s);
    nops += sg_deriv_emit_gates(c, &reg, s, m);
    nops += sg_dem_mutating(c, &reg, s, m);
    sg_buf_printf(c, "sg_status %s_autograd_init(void) {\n    sg_status st = SG_OK;\n", lib);
    sg_dem_putbuf(c, &reg);
    sg_buf_printf(c, "    return st; /* %u ops */\n}\n", nops);
    sg_buf_free(&reg);
}

int sg_deriv_add_outputs(sg_outputs *outs, sg_deriv_set *s, const sg_model *m, const char *lib,
                         const char *const *inputs, uint32_t ninputs) {
    sg_buf c, h;
    sg_buf_init(&c);
    sg_buf_init(&h);
    sg_deriv_emit_c(&c, &h, s, m, lib, inputs, ninputs);
    return sg_outputs_add_pair(outs, lib, "_autograd", &c, &h);
}
