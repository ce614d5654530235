/* emit_canonical.c: every schema in canonical form, one per line, namespace included. */
#include "emit.h"

void sg_emit_schema(sg_buf *b, const char *ns, const sg_schema *s) {
    /* sg_schema_print writes the namespace only where one was written; aten is implied in
     * schema files, and the canonical listing spells it out for every op. */
    if (!s->ns) {
        sg_buf_puts(b, ns ? ns : "aten");
        sg_buf_putn(b, "::", 2);
    }
    sg_schema_print(b, s, true);
}

void sg_emit_canonical_op(sg_buf *b, const sg_op *op) {
    if (op->parsed)
        sg_emit_schema(b, op->ns, &op->schema);
    else
        sg_buf_puts(b, op->func ? op->func : "");
}

void sg_emit_canonical(sg_buf *b, const sg_model *m) {
    for (uint32_t i = 0; i < m->nops; i++) {
        sg_emit_canonical_op(b, m->ops[i]);
        sg_buf_putc(b, '\n');
    }
}
