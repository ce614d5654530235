/* emit_json.c: the model as JSON (the format is documented in docs/json-format.md).
 *
 * Speed matters here: the whole corpus goes through this in a benchmark whose budget covers
 * loading, parsing and validating too. So there is no allocation per field, no printf for
 * strings or integers (only for the rare float default), appends are memcpys into a chunk that
 * reaches the caller's sg_buf a window (64 KiB) at a time, and strings with nothing to escape
 * (nearly all) are scanned 8 bytes at a step and copied in one piece.
 *
 * Layout: one op field per line and one argument per line, so golden diffs read well; the
 * bytes depend on the model alone (no timestamps, no addresses, input order kept).
 */
#include "emit.h"
#include "json_str.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The writer: appends go to a chunk of memory that reaches the caller's sg_buf a chunk at a
 * time, so the inner loops cost a memcpy each rather than a call that checks capacity.
 * Schemas, which sg_schema prints into an sg_buf, are printed into `schemas` before the
 * first byte is written (writer_new); a type longer than put_type's stack buffer is printed
 * into `tmp` (reused) and copied over. */
enum { WINDOW = SG_BUF_STREAM, SHORT = 4096 /* strings up to this long are copied in place */ };

typedef struct jw {
    sg_buf  *b;       /* the destination */
    size_t   n;       /* chunk[0..n) written */
    sg_buf   tmp;     /* a type, printed */
    sg_buf   schemas; /* every op's canonical schema, one after another */
    size_t  *starts;  /* op i's is schemas[starts[i] .. starts[i + 1]) (empty if unparsed) */
    char     chunk[WINDOW];
} jw;

/* Hands the chunk to the destination. A stream gets the chunk as it is (sg_buf would copy a
 * piece shorter than its own window once more); a plain buffer appends it. */
static void flush(jw *w) {
    sg_buf *b = w->b;
    if (b->sink && w->n) {
        if (sg_buf_flush(b) && !b->sink(b->sink_ud, w->chunk, w->n)) b->sink_failed = true;
    } else {
        sg_buf_putn(b, w->chunk, w->n);
    }
    w->n = 0;
}

/* Where `need` bytes (need <= WINDOW) may be written, flushing first if they would run past
 * the chunk. */
static inline char *room(jw *w, size_t need) {
    if (need > WINDOW - w->n) flush(w);
    return w->chunk + w->n;
}

static inline void put(jw *w, const char *s, size_t n) {
    if (!n) return;
    if (n > WINDOW - w->n) {
        flush(w);
        if (n > WINDOW) { /* longer than a chunk: straight through */
            sg_buf_putn(w->b, s, n);
            return;
        }
    }
    memcpy(w->chunk + w->n, s, n);
    w->n += n;
}

static inline void putc1(jw *w, char c) {
    *room(w, 1) = c;
    w->n++;
}

static void puts0(jw *w, const char *s) { put(w, s, strlen(s)); }

/* Appends a string literal (only a literal: the "" pastes make anything else fail to compile,
 * where sizeof would silently measure a pointer). */
#define LIT(w, s) put((w), "" s "", sizeof("" s "") - 1)

/* ---- scalars ----------------------------------------------------------------------------- */

/* Escapes s[0..n) (json_str.h says how): runs that need no escape in one piece each. */
static void put_escaped(jw *w, const char *s, size_t n) {
    while (n) {
        size_t run = sg_json_plain(s, n);
        put(w, s, run);
        if (run == n) return;
        char *d = room(w, SG_JSON_ESC_MAX); /* may flush: before w->n is read */
        w->n += sg_json_escape((unsigned char)s[run], d);
        s += run + 1;
        n -= run + 1;
    }
}

/* A JSON string. Most strings are short and need no escape: they are copied into the window
 * 8 bytes at a step (the tail as one word overlapping the last), checked as they go; from the
 * first byte that needs an escape on, the rest goes through put_escaped. */
static void put_strn(jw *w, const char *s, size_t n) {
    if (!s) s = "";
    if (n > SHORT) {
        putc1(w, '"');
        put_escaped(w, s, n);
        putc1(w, '"');
        return;
    }
    char *d = room(w, n + 2) + 1;
    size_t i = 0;
    d[-1] = '"';
    uint64_t x;
    for (; i + 8 <= n; i += 8) {
        memcpy(&x, s + i, 8);
        if (!sg_json_word_plain(x)) break;
        memcpy(d + i, &x, 8);
    }
    if (i < n && n >= 8 && i + 8 > n) { /* the tail as one word that overlaps the last */
        memcpy(&x, s + n - 8, 8);
        if (sg_json_word_plain(x)) {
            memcpy(d + n - 8, &x, 8);
            i = n;
        }
    }
    for (; i < n && !sg_json_esc[(unsigned char)s[i]]; i++) d[i] = s[i];
    if (i == n) {
        d[n] = '"';
        w->n += n + 2;
        return;
    }
    w->n += i + 1;
    put_escaped(w, s + i, n - i);
    putc1(w, '"');
}

/* A NUL-terminated string, or null for NULL. */
static void put_str(jw *w, const char *s) {
    if (s)
        put_strn(w, s, strlen(s));
    else
        LIT(w, "null");
}

static void put_bool(jw *w, bool v) {
    if (v)
        LIT(w, "true");
    else
        LIT(w, "false");
}

static void put_i64(jw *w, int64_t v) {
    char tmp[24], *p = tmp + sizeof tmp;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) *--p = '-';
    put(w, p, (size_t)(tmp + sizeof tmp - p));
}

/* The shortest %g form that reads back as the same double, always with a '.' or an exponent
 * so that a reader keeps it a float (1.0, not 1). Non-finite values are not JSON numbers. */
static void put_double(jw *w, double v) {
    if (!isfinite(v)) {
        LIT(w, "{\"float\": ");
        put_str(w, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
        putc1(w, '}');
        return;
    }
    char tmp[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v) break;
    }
    puts0(w, tmp);
    if (!strpbrk(tmp, ".e")) LIT(w, ".0");
}

/* ---- schema parts ------------------------------------------------------------------------ */

static void put_value(jw *w, const sg_value *v) {
    switch (v->kind) {
    case SG_VAL_NONE: LIT(w, "null"); return;
    case SG_VAL_BOOL: put_bool(w, v->u.b); return;
    case SG_VAL_INT: put_i64(w, v->u.i); return;
    case SG_VAL_FLOAT: put_double(w, v->u.f); return;
    case SG_VAL_COMPLEX:
        LIT(w, "{\"imag\": ");
        put_double(w, v->u.f);
        putc1(w, '}');
        return;
    case SG_VAL_STR: put_strn(w, v->u.str.s, v->u.str.len); return;
    case SG_VAL_IDENT:
        LIT(w, "{\"ident\": ");
        put_strn(w, v->u.str.s, v->u.str.len);
        putc1(w, '}');
        return;
    case SG_VAL_LIST:
        putc1(w, '[');
        for (uint32_t i = 0; i < v->u.list.n; i++) {
            if (i) LIT(w, ", ");
            put_value(w, &v->u.list.items[i]);
        }
        putc1(w, ']');
        return;
    }
    LIT(w, "null");
}

static void put_set(jw *w, const char *const *names, uint32_t n) {
    putc1(w, '[');
    for (uint32_t i = 0; i < n; i++) {
        if (i) LIT(w, ", ");
        put_str(w, names[i]);
    }
    putc1(w, ']');
}

static void put_alias(jw *w, const sg_alias *a) {
    if (!a) {
        LIT(w, "null");
        return;
    }
    LIT(w, "{\"before\": ");
    put_set(w, a->before, a->nbefore);
    LIT(w, ", \"after\": ");
    put_set(w, a->after, a->nafter);
    LIT(w, ", \"write\": ");
    put_bool(w, a->write);
    LIT(w, ", \"fresh\": ");
    put_bool(w, a->fresh);
    putc1(w, '}');
}

/* The size N of the list T[N] that the type is, through optionals (int[2]?), or -1. */
static int32_t fixed_size(const sg_type *t) {
    while (t && t->kind == SG_TY_OPTIONAL && t->nelems) t = t->elems[0];
    return t && t->kind == SG_TY_LIST ? t->size : -1;
}

/* A type as written, without its annotation (type spellings need no escaping). */
static void put_type(jw *w, const sg_type *t) {
    size_t n = sg_type_spell(t, room(w, 128), 128);
    if (n) {
        w->n += n;
        return;
    }
    w->tmp.len = 0;
    sg_type_print(&w->tmp, t, false);
    put(w, w->tmp.data, w->tmp.len);
}

static void put_arg(jw *w, const sg_schema *s, const sg_arg *a, bool is_ret) {
    LIT(w, "{\"name\": ");
    put_str(w, a->name);
    LIT(w, ", \"type\": \"");
    put_type(w, a->type);
    LIT(w, "\", \"default\": ");
    put_str(w, a->default_text);
    LIT(w, ", \"value\": ");
    if (a->default_value)
        put_value(w, a->default_value);
    else
        LIT(w, "null");
    LIT(w, ", \"kwarg_only\": ");
    put_bool(w, a->kwarg_only);
    LIT(w, ", \"is_out\": ");
    put_bool(w, !is_ret && sg_arg_is_out(s, a));
    int32_t size = fixed_size(a->type);
    if (size >= 0) { /* only on fixed-size lists */
        LIT(w, ", \"size\": ");
        put_i64(w, size);
    }
    LIT(w, ", \"alias\": ");
    put_alias(w, sg_type_alias(a->type));
    putc1(w, '}');
}

static void put_args(jw *w, const sg_schema *s, const sg_arg *args, uint32_t n, bool is_ret) {
    if (!n) {
        LIT(w, "[]");
        return;
    }
    putc1(w, '[');
    for (uint32_t i = 0; i < n; i++) {
        puts0(w, i ? ",\n        " : "\n        ");
        put_arg(w, s, &args[i], is_ret);
    }
    LIT(w, "\n      ]");
}

/* ---- yaml -------------------------------------------------------------------------------- */

/* Keys whose values torchgen reads as booleans. */
static bool scalar_is(const sg_ynode *n, const char *word) {
    size_t k = strlen(word);
    return n->len == k && memcmp(n->text, word, k) == 0;
}

/* key: the map key whose value n is (top level only), for keys torchgen reads as booleans. */
static void put_ynode(jw *w, const sg_ynode *n, const char *key) {
    if (!n) {
        LIT(w, "null");
        return;
    }
    switch (n->kind) {
    case SG_Y_SCALAR: {
        /* the key's shape is asked only of the few values spelled like a boolean */
        int b = !n->plain ? -1 : scalar_is(n, "True") || scalar_is(n, "true") ? 1
                : scalar_is(n, "False") || scalar_is(n, "false") ? 0 : -1;
        if (b >= 0 && key && sg_op_key_is_bool(key))
            put_bool(w, b);
        else
            put_strn(w, n->text ? n->text : "", n->text ? n->len : 0);
        return;
    }
    case SG_Y_SEQ:
        putc1(w, '[');
        for (uint32_t i = 0; i < n->nitems; i++) {
            if (i) LIT(w, ", ");
            put_ynode(w, n->items[i], NULL);
        }
        putc1(w, ']');
        return;
    case SG_Y_MAP:
        putc1(w, '{');
        for (uint32_t i = 0; i + 1 < n->nitems; i += 2) {
            const sg_ynode *k = n->items[i];
            if (i) LIT(w, ", ");
            if (k && k->kind == SG_Y_SCALAR && k->text)
                put_strn(w, k->text, k->len);
            else
                LIT(w, "\"\""); /* complex keys do not occur in schema files */
            LIT(w, ": ");
            put_ynode(w, n->items[i + 1], NULL);
        }
        putc1(w, '}');
        return;
    }
}

static void put_yaml(jw *w, const sg_op *op) {
    putc1(w, '{');
    for (uint32_t i = 0; i < op->nkeys; i++) {
        if (i) LIT(w, ", ");
        put_str(w, op->keys[i]);
        LIT(w, ": ");
        put_ynode(w, op->values[i], op->keys[i]);
    }
    putc1(w, '}');
}

/* ---- ops and tags ------------------------------------------------------------------------ */

static void put_schema_fields(jw *w, const sg_model *m, uint32_t i) {
    const sg_op     *op = m->ops[i];
    const sg_schema *s = &op->schema;
    if (!op->parsed) {
        LIT(w, ",\n      \"name\": null,\n      \"overload\": null,\n      \"schema\": ");
        put_str(w, op->func);
        LIT(w, ",\n      \"kind\": null,\n      \"inplace\": false,\n      \"dunder\": false,"
               "\n      \"is_mutable\": false,\n      \"arguments\": [],\n      \"returns\": []");
        return;
    }
    LIT(w, ",\n      \"name\": ");
    put_str(w, s->name);
    LIT(w, ",\n      \"overload\": ");
    put_str(w, s->overload);
    LIT(w, ",\n      \"schema\": ");
    /* may hold quotes and backslashes (str defaults) */
    put_strn(w, w->schemas.data + w->starts[i], w->starts[i + 1] - w->starts[i]);
    LIT(w, ",\n      \"kind\": ");
    put_str(w, sg_schema_kind_names[sg_schema_kind_of(s)]);
    LIT(w, ",\n      \"inplace\": ");
    put_bool(w, s->inplace);
    LIT(w, ",\n      \"dunder\": ");
    put_bool(w, s->dunder);
    LIT(w, ",\n      \"is_mutable\": ");
    put_bool(w, sg_schema_is_mutable(s));
    LIT(w, ",\n      \"arguments\": ");
    put_args(w, s, s->args, s->nargs, false);
    LIT(w, ",\n      \"returns\": ");
    put_args(w, s, s->rets, s->nrets, true);
}

static void put_op(jw *w, const sg_model *m, uint32_t i) {
    const sg_op *op = m->ops[i];
    LIT(w, "    {\n      \"namespace\": ");
    put_str(w, op->ns);
    put_schema_fields(w, m, i);
    LIT(w, ",\n      \"file\": ");
    put_str(w, op->pos.src ? op->pos.src->path : NULL);
    LIT(w, ",\n      \"line\": ");
    put_i64(w, op->pos.line);
    LIT(w, ",\n      \"col\": ");
    put_i64(w, op->pos.col);
    LIT(w, ",\n      \"yaml\": ");
    put_yaml(w, op);
    LIT(w, ",\n      \"group\": ");
    /* the op's grouping key, its group's signature (docs/json-format.md) */
    put_str(w, op->group ? op->group->signature : NULL);
    LIT(w, "\n    }");
}

static void put_tag(jw *w, const sg_tag *t) {
    LIT(w, "    {\"name\": ");
    put_str(w, t->name);
    LIT(w, ", \"desc\": ");
    put_str(w, t->desc);
    putc1(w, '}');
}

static void writer_free(jw *w) {
    sg_buf_free(&w->tmp);
    sg_buf_free(&w->schemas);
    free(w->starts);
    free(w);
}

/* Takes every piece of memory the writer will need before it writes a byte: its chunk, every
 * op's schema printed, and room in tmp for the longest of them (a type is printed there, and
 * is shorter than its schema). Rationale: b may be a stream to standard output, and a run that
 * fails must not have printed half a document. NULL when out of memory. */
static jw *writer_new(sg_buf *b, const sg_model *m) {
    jw *w = malloc(sizeof *w); /* the chunk is too big for some threads' stacks */
    if (!w) return NULL;
    w->b = b;
    w->n = 0;
    sg_buf_init(&w->tmp);
    sg_buf_init(&w->schemas);
    w->starts = malloc(((size_t)m->nops + 1) * sizeof *w->starts);
    size_t longest = 0;
    for (uint32_t i = 0; w->starts && i < m->nops && !w->schemas.oom; i++) {
        w->starts[i] = w->schemas.len;
        if (m->ops[i]->parsed) sg_emit_schema(&w->schemas, m->ops[i]->ns, &m->ops[i]->schema);
        if (w->schemas.len - w->starts[i] > longest) longest = w->schemas.len - w->starts[i];
    }
    if (w->starts) w->starts[m->nops] = w->schemas.len;
    /* room in tmp for the longest (tmp.data is never NULL from here) */
    sg_buf_putn(&w->tmp, longest ? w->schemas.data : "", longest ? longest : 1);
    if (w->starts && !w->schemas.oom && !w->tmp.oom) return w;
    writer_free(w);
    return NULL;
}

void sg_emit_json(sg_buf *b, const sg_model *m) {
    jw *w = writer_new(b, m);
    if (!w) {
        b->oom = true;
        return;
    }
    LIT(w, "{\n  \"ops\": [");
    for (uint32_t i = 0; i < m->nops; i++) {
        puts0(w, i ? ",\n" : "\n");
        put_op(w, m, i);
    }
    puts0(w, m->nops ? "\n  ],\n  \"tags\": [" : "],\n  \"tags\": [");
    for (uint32_t i = 0; i < m->ntags; i++) {
        puts0(w, i ? ",\n" : "\n");
        put_tag(w, &m->tags[i]);
    }
    puts0(w, m->ntags ? "\n  ]\n}\n" : "]\n}\n");
    flush(w);
    if (w->tmp.oom) b->oom = true;
    writer_free(w);
}
