/* schema_print.c: canonical printing and structural equality of parsed schemas.
 * The printer is the parser's inverse: parse(print(s)) equals s for every schema. */
#include "sg_schema.h"

#include <string.h>

static void put_set(sg_buf *b, const char *const *set, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (i) sg_buf_putc(b, '|');
        sg_buf_puts(b, set[i]);
    }
}

void sg_alias_print(sg_buf *b, const sg_alias *a) {
    if (a->fresh) {
        sg_buf_putc(b, '!');
        return;
    }
    sg_buf_putc(b, '(');
    put_set(b, a->before, a->nbefore);
    if (a->write) sg_buf_putc(b, '!');
    if (a->arrow) {
        sg_buf_puts(b, " -> ");
        put_set(b, a->after, a->nafter);
    }
    sg_buf_putc(b, ')');
}

static void put_elems(sg_buf *b, const sg_type *t, bool with_alias) {
    sg_buf_putc(b, '(');
    for (uint32_t i = 0; i < t->nelems; i++) {
        if (i) sg_buf_puts(b, ", ");
        sg_type_print(b, t->elems[i], with_alias);
    }
    sg_buf_putc(b, ')');
}

/* A list type's "[N]" or "[]" into d, ending at d + 16; returns where it starts. Rationale:
 * digits by hand, printf is the slow part of a type. */
static char *list_suffix(const sg_type *t, char d[16]) {
    char *p = d + 16;
    uint32_t v = (uint32_t)t->size;
    *--p = ']';
    if (t->size >= 0) do *--p = (char)('0' + v % 10);
        while ((v /= 10) != 0);
    *--p = '[';
    return p;
}

void sg_type_print(sg_buf *b, const sg_type *t, bool with_alias) {
    /* without annotations, most types are spelled straight into the buffer's room */
    size_t n = !with_alias && !b->sink && !b->oom && b->cap - b->len > 128
                   ? sg_type_spell(t, b->data + b->len, 128) : 0;
    if (n) {
        b->len += n;
        b->data[b->len] = '\0';
        return;
    }
    char d[16], *p;
    switch (t->kind) {
    case SG_TY_OPTIONAL:
        sg_type_print(b, t->elems[0], with_alias);
        sg_buf_putc(b, '?');
        return; /* an optional node carries no annotation of its own */
    case SG_TY_LIST:
        sg_type_print(b, t->elems[0], with_alias);
        p = list_suffix(t, d);
        sg_buf_putn(b, p, (size_t)(d + sizeof d - p));
        break;
    case SG_TY_TUPLE:
        put_elems(b, t, with_alias);
        break;
    case SG_TY_VAR:
    case SG_TY_CLASS:
        sg_buf_puts(b, t->name);
        break;
    default:
        sg_buf_puts(b, sg_type_infos[t->kind].name);
        if (sg_type_infos[t->kind].flags & SG_TYF_CALL) put_elems(b, t, with_alias);
        break;
    }
    if (with_alias && t->alias) sg_alias_print(b, t->alias);
}

size_t sg_type_spell(const sg_type *t, char *dst, size_t cap) {
    size_t n;
    const char *name;
    switch (t->kind) {
    case SG_TY_OPTIONAL:
        n = sg_type_spell(t->elems[0], dst, cap);
        if (!n || n == cap) return 0;
        dst[n++] = '?';
        return n;
    case SG_TY_LIST: {
        n = sg_type_spell(t->elems[0], dst, cap);
        char d[16], *p = list_suffix(t, d);
        size_t k = (size_t)(d + sizeof d - p);
        if (!n || k > cap - n) return 0;
        memcpy(dst + n, p, k);
        return n + k;
    }
    case SG_TY_VAR:
    case SG_TY_CLASS:
        name = t->name;
        break;
    default:
        if (sg_type_infos[t->kind].flags & SG_TYF_CALL) return 0;
        name = sg_type_infos[t->kind].name;
        break;
    }
    n = name ? strlen(name) : 0;
    if (!n || n > cap) return 0;
    memcpy(dst, name, n);
    return n;
}

static void put_arg(sg_buf *b, const sg_arg *a) {
    sg_type_print(b, a->type, true);
    if (a->name) {
        sg_buf_putc(b, ' ');
        sg_buf_puts(b, a->name);
    }
    if (a->default_text) {
        sg_buf_putc(b, '=');
        sg_buf_puts(b, a->default_text);
    }
}

void sg_schema_print(sg_buf *b, const sg_schema *s, bool with_ns) {
    if (with_ns && s->ns) {
        sg_buf_puts(b, s->ns);
        sg_buf_puts(b, "::");
    }
    sg_buf_puts(b, s->name);
    if (s->overload[0]) {
        sg_buf_putc(b, '.');
        sg_buf_puts(b, s->overload);
    }
    sg_buf_putc(b, '(');
    bool first = true;
    for (uint32_t i = 0; i <= s->nargs; i++) {
        if (i == s->npositional && s->star) {
            sg_buf_puts(b, first ? "*" : ", *");
            first = false;
        }
        if (i == s->nargs) break;
        if (!first) sg_buf_puts(b, ", ");
        put_arg(b, &s->args[i]);
        first = false;
    }
    if (s->varargs) sg_buf_puts(b, first ? "..." : ", ...");
    sg_buf_puts(b, ") -> ");
    bool bare = s->nrets == 1 && !s->varret &&
                s->rets[0].type->kind != SG_TY_TUPLE; /* (a, b) alone would read as two */
    if (s->nrets == 0 && s->varret && !s->ret_parens) bare = true;
    if (!bare) sg_buf_putc(b, '(');
    for (uint32_t i = 0; i < s->nrets; i++) {
        if (i) sg_buf_puts(b, ", ");
        put_arg(b, &s->rets[i]);
    }
    if (s->varret) sg_buf_puts(b, s->nrets ? ", ..." : "...");
    if (!bare) sg_buf_putc(b, ')');
}

/* ---- equality --------------------------------------------------------------------------- */

static bool str_eq(const char *a, const char *b) {
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool set_eq(const char *const *a, uint32_t na, const char *const *b, uint32_t nb) {
    if (na != nb) return false;
    for (uint32_t i = 0; i < na; i++)
        if (!str_eq(a[i], b[i])) return false;
    return true;
}

static bool alias_eq(const sg_alias *a, const sg_alias *b) {
    if (!a || !b) return a == b;
    return a->write == b->write && a->arrow == b->arrow && a->fresh == b->fresh &&
           set_eq(a->before, a->nbefore, b->before, b->nbefore) &&
           set_eq(a->after, a->nafter, b->after, b->nafter);
}

static bool type_eq(const sg_type *a, const sg_type *b) {
    if (a->kind != b->kind || a->size != b->size || a->nelems != b->nelems) return false;
    if (!str_eq(a->name, b->name) || !alias_eq(a->alias, b->alias)) return false;
    for (uint32_t i = 0; i < a->nelems; i++)
        if (!type_eq(a->elems[i], b->elems[i])) return false;
    return true;
}

static bool value_eq(const sg_value *a, const sg_value *b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case SG_VAL_NONE: return true;
    case SG_VAL_BOOL: return a->u.b == b->u.b;
    case SG_VAL_INT: return a->u.i == b->u.i;
    case SG_VAL_FLOAT:
    case SG_VAL_COMPLEX: return memcmp(&a->u.f, &b->u.f, sizeof a->u.f) == 0; /* NaN == NaN */
    case SG_VAL_STR:
    case SG_VAL_IDENT:
        return a->u.str.len == b->u.str.len && memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0;
    case SG_VAL_LIST:
        if (a->u.list.n != b->u.list.n) return false;
        for (uint32_t i = 0; i < a->u.list.n; i++)
            if (!value_eq(&a->u.list.items[i], &b->u.list.items[i])) return false;
        return true;
    }
    return false;
}

static bool args_eq(const sg_arg *a, const sg_arg *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (!str_eq(a[i].name, b[i].name) || a[i].kwarg_only != b[i].kwarg_only) return false;
        if (!str_eq(a[i].default_text, b[i].default_text)) return false;
        if (!type_eq(a[i].type, b[i].type) || !value_eq(a[i].default_value, b[i].default_value))
            return false;
    }
    return true;
}

bool sg_schema_equal(const sg_schema *a, const sg_schema *b) {
    return str_eq(a->ns, b->ns) && str_eq(a->name, b->name) && str_eq(a->overload, b->overload) &&
           str_eq(a->base, b->base) && a->inplace == b->inplace && a->dunder == b->dunder &&
           a->nargs == b->nargs && a->npositional == b->npositional && a->star == b->star &&
           a->varargs == b->varargs && a->nrets == b->nrets && a->varret == b->varret &&
           args_eq(a->args, b->args, a->nargs) && args_eq(a->rets, b->rets, a->nrets);
}
