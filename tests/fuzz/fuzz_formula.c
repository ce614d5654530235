/* libFuzzer target: any bytes into the formula parser (gen/formula.h). A parse that succeeds
 * must give a tree that keeps the parser's promises (kids per kind, heights consistent and at
 * most SG_FX_MAX_DEPTH, each node's bytes inside the text and its kids' inside its own) and
 * whose print parses to a tree printing the same bytes. A refusal must say where, inside the
 * text. Build with -DSG_FUZZ=ON (clang); see docs/testing.md. */
#include "formula.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void check_tree(const sg_fx *x, size_t size) {
    if ((size_t)x->off + x->len > size || x->height < 1 || x->height > SG_FX_MAX_DEPTH) abort();
    unsigned h = 0;
    for (uint32_t i = 0; i < x->nkids; i++) {
        const sg_fx *k = x->kids[i];
        check_tree(k, size);
        if (k->height > h) h = k->height;
        if (k->off < x->off || k->off + k->len > x->off + x->len) abort();
    }
    if (x->height != h + 1) abort();
    switch (x->kind) {
    case SG_FX_IDENT: case SG_FX_INT: case SG_FX_FLOAT: case SG_FX_STRING:
        if (x->nkids || !x->text) abort();
        break;
    case SG_FX_CALL:
        if (x->nkids < 1 || (x->kids[0]->kind != SG_FX_IDENT && x->kids[0]->kind != SG_FX_MEMBER &&
                             x->kids[0]->kind != SG_FX_TEMPLATE))
            abort();
        break;
    case SG_FX_MEMBER: case SG_FX_UNARY: if (x->nkids != 1 || !x->text) abort(); break;
    case SG_FX_INDEX: if (x->nkids != 2) abort(); break;
    case SG_FX_BINARY: if (x->nkids != 2 || !x->text) abort(); break;
    case SG_FX_TERNARY: if (x->nkids != 3) abort(); break;
    case SG_FX_TEMPLATE: if (!x->text) abort(); break;
    case SG_FX_BRACE: break;
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    sg_arena *a = sg_arena_new(NULL, NULL);
    sg_fx_error err;
    sg_fx *x = sg_fx_parse(a, (const char *)data, size, &err);
    if (!x) {
        if (err.off > size || !err.msg[0] || !memchr(err.msg, '\0', sizeof err.msg)) abort();
    } else {
        check_tree(x, size);
        sg_buf b1, b2;
        sg_buf_init(&b1), sg_buf_init(&b2);
        sg_fx_print(&b1, x);
        sg_fx *y = sg_fx_parse(a, b1.data, b1.len, &err);
        if (!y) abort();
        sg_fx_print(&b2, y);
        if (b1.len != b2.len || memcmp(b1.data, b2.data, b1.len)) abort();
        sg_buf_free(&b1), sg_buf_free(&b2);
    }
    sg_arena_free(a);
    return 0;
}
