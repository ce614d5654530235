/* formula_print.c: a formula's tree as canonical text (formula.h). Every binary, unary and
 * ternary expression gets its own parentheses, so the text needs no precedence to read back and
 * parses to the same tree; the recursion is as deep as the tree, at most SG_FX_MAX_DEPTH. */
#include "formula.h"

static void print_list(sg_buf *b, sg_fx *const *kids, uint32_t n, char open, char close) {
    sg_buf_putc(b, open);
    for (uint32_t i = 0; i < n; i++) {
        if (i) sg_buf_puts(b, ", ");
        sg_fx_print(b, kids[i]);
    }
    sg_buf_putc(b, close);
}

void sg_fx_print(sg_buf *b, const sg_fx *x) {
    switch (x->kind) {
    case SG_FX_IDENT:
    case SG_FX_INT:
    case SG_FX_FLOAT: sg_buf_puts(b, x->text); break;
    case SG_FX_STRING:
        sg_buf_putc(b, '"');
        sg_buf_puts(b, x->text);
        sg_buf_putc(b, '"');
        break;
    case SG_FX_TEMPLATE:
        sg_buf_puts(b, x->text);
        print_list(b, x->kids, x->nkids, '<', '>');
        break;
    case SG_FX_CALL:
        sg_fx_print(b, x->kids[0]);
        print_list(b, x->kids + 1, x->nkids - 1, x->braced ? '{' : '(', x->braced ? '}' : ')');
        break;
    case SG_FX_MEMBER:
        /* 1.f would read back as a number with a suffix */
        if (x->kids[0]->kind == SG_FX_INT || x->kids[0]->kind == SG_FX_FLOAT) {
            sg_buf_putc(b, '(');
            sg_fx_print(b, x->kids[0]);
            sg_buf_putc(b, ')');
        } else {
            sg_fx_print(b, x->kids[0]);
        }
        sg_buf_puts(b, x->arrow ? "->" : ".");
        sg_buf_puts(b, x->text);
        break;
    case SG_FX_INDEX:
        sg_fx_print(b, x->kids[0]);
        sg_buf_putc(b, '[');
        sg_fx_print(b, x->kids[1]);
        sg_buf_putc(b, ']');
        break;
    case SG_FX_UNARY:
        sg_buf_putc(b, '(');
        sg_buf_puts(b, x->text);
        sg_fx_print(b, x->kids[0]);
        sg_buf_putc(b, ')');
        break;
    case SG_FX_BINARY:
        sg_buf_putc(b, '(');
        sg_fx_print(b, x->kids[0]);
        sg_buf_putc(b, ' ');
        sg_buf_puts(b, x->text);
        sg_buf_putc(b, ' ');
        sg_fx_print(b, x->kids[1]);
        sg_buf_putc(b, ')');
        break;
    case SG_FX_TERNARY:
        sg_buf_putc(b, '(');
        sg_fx_print(b, x->kids[0]);
        sg_buf_puts(b, " ? ");
        sg_fx_print(b, x->kids[1]);
        sg_buf_puts(b, " : ");
        sg_fx_print(b, x->kids[2]);
        sg_buf_putc(b, ')');
        break;
    case SG_FX_BRACE: print_list(b, x->kids, x->nkids, '{', '}'); break;
    }
}
