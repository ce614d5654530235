/* deriv_listing.c: --emit=derivatives, the entries of derivatives.yaml as read (deriv.h): for each
 * entry the op, then one line per key, so a user sees which formulas apply to which op. */
#include "deriv_type.h"

#include <string.h>

static void op_name(sg_buf *b, const sg_op *op) {
    sg_buf_printf(b, "aten::%s%s%s", op->schema.name, *op->schema.overload ? "." : "",
                  op->schema.overload);
}

static void formulas(sg_buf *b, const char *what, const sg_deriv *dv, const sg_deriv_formula *f,
                     uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        sg_buf_printf(b, "  %s ", what);
        for (uint32_t j = 0; j < f[i].nnames; j++)
            sg_buf_printf(b, "%s%s", j ? ", " : "", f[i].names[j]);
        sg_buf_printf(b, ": %s\n", f[i].text);
        if (f[i].typed) {
            sg_buf_puts(b, "    as ");
            sg_dt_print(b, f[i].typed, dv);
            sg_buf_putc(b, '\n');
        }
        if (f[i].why) /* where in the formula: its text from that byte */
            sg_buf_printf(b, "    not translated: %s, at '%.24s'\n", f[i].why,
                          f[i].text + (f[i].why_off < strlen(f[i].text) ? f[i].why_off : 0));
    }
}

void sg_deriv_emit(sg_buf *b, const sg_deriv_set *s) {
    for (uint32_t i = 0; i < s->n; i++) {
        const sg_deriv *dv = &s->items[i];
        op_name(b, dv->op);
        sg_buf_printf(b, "  (%s:%u", s->path, dv->pos.line);
        if (dv->copy_of) {
            sg_buf_puts(b, ", the entry of ");
            op_name(b, s->items[dv->copy_of - 1].op);
        }
        sg_buf_puts(b, ")\n");
        formulas(b, "backward", dv, dv->grads, dv->ngrads);
        formulas(b, "forward", dv, dv->fwds, dv->nfwds);
        if (dv->nnon_diff) {
            sg_buf_puts(b, "  non_differentiable ");
            for (uint32_t j = 0; j < dv->nnon_diff; j++)
                sg_buf_printf(b, "%s%s", j ? ", " : "", dv->non_diff[j]);
            sg_buf_putc(b, '\n');
        }
        if (dv->out_diff) {
            sg_buf_puts(b, "  output_differentiability ");
            for (uint32_t j = 0; j < dv->nout_diff; j++)
                sg_buf_printf(b, "%s%s", j ? ", " : "", dv->out_diff[j] ? "true" : "false");
            sg_buf_putc(b, '\n');
        }
    }
    uint32_t copies = 0;
    for (uint32_t i = 0; i < s->n; i++) copies += s->items[i].copy_of != 0;
    sg_buf_printf(b, "%u entries of %s: %u for ops of the schemas, %u for other ops (skipped)\n",
                  s->entries, s->path ? s->path : "(none)", s->n - copies, s->skipped);
    if (copies) sg_buf_printf(b, "%u view_copy ops take their view op's entry\n", copies);
    uint32_t nb = 0, ok = 0;
    for (uint32_t i = 0; i < s->n; i++)
        for (uint32_t j = 0; j < s->items[i].ngrads; j++) {
            nb++;
            ok += s->items[i].grads[j].typed != NULL;
        }
    sg_buf_printf(b, "%u backward formulas: %u translated, %u not\n", nb, ok, nb - ok);
}
