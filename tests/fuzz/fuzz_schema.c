/* libFuzzer target: any bytes into the schema parser. A parse that succeeds must print back to
 * a string that parses to an equal model, and must keep the limits the parser promises: no type
 * deeper than SG_SCHEMA_MAX_DEPTH, no default value deeper or longer than its limits, no
 * non-finite number, only Tensor-like arguments written. Build with -DSG_FUZZ=ON (clang); see
 * docs/testing.md. */
#include "sg_schema.h"

#include <math.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* Height of t's tree; aborts past the limit (the parser must have refused it). */
static int type_height(const sg_type *t, int depth) {
    if (depth > SG_SCHEMA_MAX_DEPTH) abort();
    int h = 0;
    for (uint32_t i = 0; i < t->nelems; i++) {
        int e = type_height(t->elems[i], depth + 1);
        if (e > h) h = e;
    }
    if (h + 1 > SG_SCHEMA_MAX_DEPTH) abort();
    return h + 1;
}

static void check_value(const sg_value *v, int depth) {
    if (depth >= SG_SCHEMA_MAX_DEPTH) abort();
    if ((v->kind == SG_VAL_FLOAT || v->kind == SG_VAL_COMPLEX) && !isfinite(v->u.f)) abort();
    if (v->kind != SG_VAL_LIST) return;
    if (v->u.list.n > 256) abort();
    for (uint32_t i = 0; i < v->u.list.n; i++) check_value(&v->u.list.items[i], depth + 1);
}

static void check_limits(const sg_schema *s) {
    if (s->nargs > 256 || s->nrets > 256) abort();
    if (s->overload[0] == '_' && s->overload[1] == '_') abort();
    for (uint32_t i = 0; i < s->nargs + s->nrets; i++) {
        const sg_arg *a = i < s->nargs ? &s->args[i] : &s->rets[i - s->nargs];
        type_height(a->type, 0);
        if (a->default_value) check_value(a->default_value, 0);
        if (a->write && !sg_type_is_tensor_like(a->type)) abort();
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    sg_arena *a = sg_arena_new(NULL, NULL);
    sg_schema s, again;
    sg_schema_error err;
    if (sg_schema_parse((const char *)data, size, a, &s, &err) == SG_SCHEMA_OK) {
        check_limits(&s);
        sg_buf b;
        sg_buf_init(&b);
        sg_schema_print(&b, &s, true);
        if (sg_schema_parse(b.data, b.len, a, &again, &err) != SG_SCHEMA_OK ||
            !sg_schema_equal(&s, &again))
            abort();
        sg_buf_free(&b);
        (void)sg_schema_kind_of(&s);
    }
    sg_arena_free(a);
    return 0;
}
