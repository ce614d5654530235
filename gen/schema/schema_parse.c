/* schema_parse.c: recursive-descent parser for schema strings (grammar in sg_schema.h).
 *
 * Errors unwind with longjmp to sg_schema_parse, the one recovery point; nothing outside this
 * file sees it. Every node comes from the caller's arena, so an abandoned parse leaks nothing
 * the arena does not free.
 *
 * Hostile input: every nesting (types, list defaults) stops at SG_SCHEMA_MAX_DEPTH and every
 * list (arguments, elements, alias sets, list items) at a fixed count, each with a located
 * error, so recursion here and in every walk of the model (printing, comparing, checking
 * defaults) is bounded, and the parse is linear in the text's length. */
#include "schema_info.h"
#include "schema_lex.h"
#include "sg_schema.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = SG_SCHEMA_MAX_DEPTH };

typedef struct parser {
    const char      *text; /* NUL-terminated copy in the arena */
    size_t           len;
    uint32_t         pos;
    sg_token         tok;  /* current token */
    sg_arena        *arena;
    sg_schema_error *err;
    int              code;
    bool             float_default; /* the default being read is a float's or float[]'s */
    jmp_buf          jb;
} parser;

#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 3, 4)))
#endif
static void fail(parser *p, uint32_t offset, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
    va_end(ap);
    p->err->offset = offset;
    p->code = SG_SCHEMA_ESYNTAX;
    longjmp(p->jb, 1);
}

static void *alloc(parser *p, size_t n) {
    void *m = sg_arena_alloc(p->arena, n);
    if (!m) {
        snprintf(p->err->msg, sizeof p->err->msg, "out of memory");
        p->err->offset = p->tok.start;
        p->code = SG_SCHEMA_ENOMEM;
        longjmp(p->jb, 1);
    }
    return m;
}

static const char *dup(parser *p, uint32_t start, uint32_t end) {
    char *s = alloc(p, end - start + 1);
    memcpy(s, p->text + start, end - start);
    return s;
}

static void next(parser *p) { sg_lex(p->text, p->len, &p->pos, &p->tok); }

static bool accept(parser *p, sg_tok_kind k) {
    if (p->tok.kind != k) return false;
    next(p);
    return true;
}

/* Describes the current token for a message: its text when it has one. */
static void describe(parser *p, char *out, size_t n) {
    sg_token t = p->tok;
    if (t.kind == SG_T_EOF || t.kind == SG_T_BADSTR) {
        snprintf(out, n, "%s", sg_tok_describe(t.kind));
        return;
    }
    unsigned char c = (unsigned char)p->text[t.start];
    if (t.kind == SG_T_BAD && (c < 0x20 || c >= 0x7f))
        snprintf(out, n, "byte 0x%02x", c);
    else
        snprintf(out, n, "'%.*s'", (int)(t.end - t.start > 40 ? 40 : t.end - t.start),
                 p->text + t.start);
}

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void unexpected(parser *p, const char *wanted) {
    char got[64];
    describe(p, got, sizeof got);
    fail(p, p->tok.start, "expected %s, found %s", wanted, got);
}

static void expect(parser *p, sg_tok_kind k, const char *wanted) {
    if (!accept(p, k)) unexpected(p, wanted);
}

/* c10's lexer reads no number that starts with a letter, so inf and nan (and -inf, -nan)
 * are no numbers to it: it refuses them as defaults. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void non_finite(parser *p) {
    fail(p, p->tok.start, "'%.*s' is not a number PyTorch reads in a schema; a default must be "
         "a finite number", (int)(p->tok.end - p->tok.start), p->text + p->tok.start);
}

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void too_deep(parser *p, uint32_t offset, const char *what) {
    fail(p, offset, "%s nested more than %d levels deep", what, MAX_DEPTH);
}

/* ---- alias annotations ------------------------------------------------------------------ */

static const char **alias_set(parser *p, uint32_t *n) {
    const char *names[64];
    *n = 0;
    do {
        if (*n == 64) fail(p, p->tok.start, "alias set has more than 64 names");
        if (p->tok.kind == SG_T_STAR) {
            names[(*n)++] = "*";
        } else if (p->tok.kind == SG_T_IDENT) {
            names[(*n)++] = dup(p, p->tok.start, p->tok.end);
        } else {
            unexpected(p, "an alias set name or '*'");
        }
        next(p);
    } while (accept(p, SG_T_PIPE));
    const char **set = alloc(p, *n * sizeof *set);
    memcpy(set, names, *n * sizeof *set);
    return set;
}

/* At '(' or '!' after a type. */
static sg_alias *parse_alias(parser *p) {
    sg_alias *a = alloc(p, sizeof *a);
    a->offset = p->tok.start;
    if (accept(p, SG_T_BANG)) {
        a->write = a->fresh = true;
        a->before = a->after = alloc(p, sizeof(char *));
        return a;
    }
    expect(p, SG_T_LPAREN, "'('");
    a->before = alias_set(p, &a->nbefore);
    a->write = accept(p, SG_T_BANG);
    if (accept(p, SG_T_ARROW)) {
        a->arrow = true;
        a->after = alias_set(p, &a->nafter);
    } else {
        a->after = a->before;
        a->nafter = a->nbefore;
    }
    expect(p, SG_T_RPAREN, "')' to close the alias annotation");
    return a;
}

/* ---- types ------------------------------------------------------------------------------ */

static sg_type *new_type(parser *p, sg_type_kind kind, uint32_t offset) {
    sg_type *t = alloc(p, sizeof *t);
    t->kind = kind;
    t->size = -1;
    t->offset = offset;
    return t;
}

static sg_type *wrap(parser *p, sg_type_kind kind, sg_type *elem) {
    sg_type *t = new_type(p, kind, elem->offset);
    t->elems = alloc(p, sizeof *t->elems);
    t->elems[0] = elem;
    t->nelems = 1;
    return t;
}

static sg_type *parse_type(parser *p, int depth, int *height);

/* Element types of Tuple(...), Dict(k, v), Future(t), ... or (a, b); at '('. *height: one
 * more than the highest element's. */
static void type_args(parser *p, sg_type *t, int depth, int *height) {
    sg_type *elems[64];
    uint32_t n = 0;
    *height = 1;
    expect(p, SG_T_LPAREN, "'('");
    if (p->tok.kind != SG_T_RPAREN) {
        do {
            int h;
            if (n == 64) fail(p, p->tok.start, "type has more than 64 elements");
            elems[n++] = parse_type(p, depth + 1, &h);
            if (h + 1 > *height) *height = h + 1;
        } while (accept(p, SG_T_COMMA));
    }
    expect(p, SG_T_RPAREN, "',' or ')' in the type's element list");
    t->elems = alloc(p, (n ? n : 1) * sizeof *t->elems);
    memcpy(t->elems, elems, n * sizeof *elems);
    t->nelems = n;
}

static void check_arity(parser *p, const sg_type *t) {
    uint32_t want = t->kind == SG_TY_DICT ? 2 : t->kind == SG_TY_UNION ? 0 : 1;
    if (t->kind == SG_TY_TUPLE) return;
    if ((want && t->nelems != want) || (!want && t->nelems == 0))
        fail(p, t->offset, "'%s' takes %s", sg_type_infos[t->kind].name,
             want == 2 ? "two types (key, value)" : want == 1 ? "one type" : "at least one type");
}

static sg_type *parse_named_type(parser *p, int depth, int *height) {
    sg_token t = p->tok;
    const char *s = p->text + t.start;
    size_t n = t.end - t.start;
    *height = 1;
    if (t.type == SG_TY_TUPLE || (t.type >= 0 && (sg_type_infos[t.type].flags & SG_TYF_CALL))) {
        sg_type *ty = new_type(p, (sg_type_kind)t.type, t.start);
        next(p);
        type_args(p, ty, depth, height);
        check_arity(p, ty);
        return ty;
    }
    if (t.type >= 0) {
        next(p);
        return new_type(p, (sg_type_kind)t.type, t.start);
    }
    if (n == 4 && memcmp(s, "None", 4) == 0) {
        next(p);
        return new_type(p, SG_TY_NONE, t.start);
    }
    if (n >= 9 && memcmp(s, "__torch__", 9) == 0) {
        uint32_t end = t.end;
        next(p);
        while (p->tok.kind == SG_T_DOT) {
            next(p);
            if (p->tok.kind != SG_T_IDENT) unexpected(p, "a class name after '.'");
            end = p->tok.end;
            next(p);
        }
        sg_type *ty = new_type(p, SG_TY_CLASS, t.start);
        ty->name = dup(p, t.start, end);
        return ty;
    }
    if (n == 6 && memcmp(s, "double", 6) == 0)
        fail(p, t.start, "unknown type 'double'; schemas spell a double 'float'");
    if (n == 7 && memcmp(s, "int64_t", 7) == 0)
        fail(p, t.start, "unknown type 'int64_t'; schemas spell it 'int' (or 'SymInt')");
    if (islower((unsigned char)s[0])) { /* PyTorch's rule: other lower-case names are type variables */
        sg_type *ty = new_type(p, SG_TY_VAR, t.start);
        ty->name = dup(p, t.start, t.end);
        next(p);
        return ty;
    }
    fail(p, t.start, "unknown type '%.*s'", (int)(n > 60 ? 60 : n), s);
}

/* PyTorch reads an annotation after a named type (Tensor, int, Dict(...), a type variable, ...)
 * and after '[]'; not after a tuple, Future(...), RRef(...), Await(...) or a class. */
static void annotate(parser *p, sg_type *t) {
    const sg_type *base = t;
    while ((base->kind == SG_TY_OPTIONAL) && base->nelems) base = base->elems[0];
    if (!(sg_type_infos[base->kind].flags & SG_TYF_ALIASABLE)) {
        sg_buf b;
        sg_buf_init(&b);
        sg_type_print(&b, t, false);
        char name[64];
        snprintf(name, sizeof name, "%s", b.data ? b.data : "?");
        sg_buf_free(&b);
        fail(p, p->tok.start, "alias annotation after type '%s', where PyTorch reads none; "
             "annotate the element type or the list, as in Tensor(a) or T[](a)", name);
    }
    t->alias = parse_alias(p);
}

/* A type; *height is the height of its tree (1 for a leaf). Both the descent (depth, the
 * constructed types around this one) and the height (which counts the '[]' and '?' that wrap
 * it) stop at MAX_DEPTH. */
static sg_type *parse_type(parser *p, int depth, int *height) {
    if (depth >= MAX_DEPTH) too_deep(p, p->tok.start, "type");
    sg_type *t;
    if (p->tok.kind == SG_T_LPAREN) {
        t = new_type(p, SG_TY_TUPLE, p->tok.start);
        type_args(p, t, depth, height);
    } else if (p->tok.kind == SG_T_IDENT) {
        t = parse_named_type(p, depth, height);
    } else {
        unexpected(p, "a type");
    }
    if (*height > MAX_DEPTH) too_deep(p, t->offset, "type");
    if (p->tok.kind == SG_T_LPAREN || p->tok.kind == SG_T_BANG) annotate(p, t);
    for (;;) {
        if ((p->tok.kind == SG_T_LBRACKET || p->tok.kind == SG_T_QUESTION) &&
            ++*height > MAX_DEPTH)
            too_deep(p, p->tok.start, "type");
        if (p->tok.kind == SG_T_LBRACKET) {
            next(p);
            t = wrap(p, SG_TY_LIST, t);
            if (p->tok.kind == SG_T_INT) {
                errno = 0;
                long long v = strtoll(p->text + p->tok.start, NULL, 0);
                if (errno || v < 0 || v > INT32_MAX) fail(p, p->tok.start, "list size out of range");
                t->size = (int32_t)v;
                next(p);
            }
            expect(p, SG_T_RBRACKET, "']' (a list type is T[] or T[N])");
            if (p->tok.kind == SG_T_LPAREN || p->tok.kind == SG_T_BANG) annotate(p, t);
        } else if (p->tok.kind == SG_T_QUESTION) {
            next(p);
            if (t->kind == SG_TY_OPTIONAL) fail(p, p->tok.start, "type is already optional");
            t = wrap(p, SG_TY_OPTIONAL, t);
            if (p->tok.kind == SG_T_LPAREN || p->tok.kind == SG_T_BANG)
                fail(p, p->tok.start, "an alias annotation goes before '?': write Tensor(a)?");
        } else {
            return t;
        }
    }
}

/* ---- default values --------------------------------------------------------------------- */

/* Decodes a quoted literal's escapes as c10 does (parseStringLiteral): \\ \' \" and an escaped
 * line break stand for themselves; \a \b \f \n \t \v; an octal \ooo below 256; nothing else
 * (\x, \u, \U, \r, \0 are refused, as c10 refuses them). */
static void decode_string(parser *p, sg_value *v) {
    const char *s = p->text + p->tok.start + 1, *end = p->text + p->tok.end - 1;
    char *out = alloc(p, (size_t)(end - s) + 1), *o = out;
    while (s < end) {
        if (*s != '\\') {
            *o++ = *s++;
            continue;
        }
        uint32_t at = (uint32_t)(s - p->text);
        char c = s[1];
        s += 2;
        switch (c) {
        case '\\': case '\'': case '"': case '\n': *o++ = c; break;
        case 'a': *o++ = '\a'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 't': *o++ = '\t'; break;
        case 'v': *o++ = '\v'; break;
        case 'x':
            fail(p, at, "PyTorch does not read '\\x' escapes in strings; write the character, "
                 "or its octal escape (\\101 for 'A')");
        case 'u': case 'U':
            fail(p, at, "PyTorch does not read '\\%c' escapes in strings; write the character", c);
        default: {
            int val = 0, k = 0;
            for (const char *d = s - 1; k < 3 && d < end && *d >= '0' && *d <= '7'; d++, k++)
                val = val * 8 + (*d - '0');
            if (k < 3 || val > 255) {
                char what[16];
                if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
                    snprintf(what, sizeof what, "byte 0x%02x", (unsigned char)c);
                else
                    snprintf(what, sizeof what, "'%c'", c);
                fail(p, at, "unknown escape sequence in string (a backslash before %s): PyTorch "
                     "reads \\\\ \\' \\\" \\a \\b \\f \\n \\t \\v and octal \\000 to \\377",
                     what);
            }
            *o++ = (char)val;
            s += 2;
        }
        }
    }
    v->u.str.s = out;
    v->u.str.len = (size_t)(o - out);
}

static bool ident_is(const parser *p, const char *word) {
    size_t n = strlen(word);
    return p->tok.kind == SG_T_IDENT && p->tok.end - p->tok.start == n &&
           memcmp(p->text + p->tok.start, word, n) == 0;
}

/* A float or imaginary literal as c10 reads it (std::stod): refused where it is beyond a
 * double's range (ERANGE: 1e400, and 1e-400 too), never inf or nan. */
static double parse_double(parser *p) {
    char buf[128];
    size_t n = p->tok.end - p->tok.start;
    if (p->tok.kind == SG_T_IMAG) n--; /* the trailing j */
    if (n >= sizeof buf) fail(p, p->tok.start, "number too long");
    memcpy(buf, p->text + p->tok.start, n);
    buf[n] = '\0';
    errno = 0;
    double d = strtod(buf, NULL);
    if (errno == ERANGE || !isfinite(d))
        fail(p, p->tok.start, "number '%s' is out of the range of a double (PyTorch refuses it)",
             buf);
    return d;
}

static sg_value *parse_value(parser *p, int depth);

static void parse_number(parser *p, sg_value *v, bool neg) {
    const char *t = p->text + p->tok.start;
    if (p->tok.kind == SG_T_INT) {
        if (t[0] == '0' && (t[1] == 'x' || t[1] == 'X'))
            fail(p, p->tok.start, "hexadecimal integer '%.*s': PyTorch reads a default as a "
                 "decimal number (it would read this one as 0); write it in decimal",
                 (int)(p->tok.end - p->tok.start > 40 ? 40 : p->tok.end - p->tok.start), t);
        /* base 10 as c10's stoll reads it: 010 is ten */
        errno = 0;
        unsigned long long u = strtoull(t, NULL, 10);
        if (errno || u > (unsigned long long)INT64_MAX + (neg ? 1u : 0u)) {
            if (p->float_default) { /* c10 reads a float's default with stod */
                v->kind = SG_VAL_FLOAT;
                v->u.f = neg ? -parse_double(p) : parse_double(p);
                next(p);
                return;
            }
            fail(p, p->tok.start, "integer out of range of a 64-bit int");
        }
        v->kind = SG_VAL_INT;
        v->u.i = neg ? (int64_t)(0 - u) : (int64_t)u;
    } else if (p->tok.kind == SG_T_FLOAT || p->tok.kind == SG_T_IMAG) {
        size_t n = p->tok.end - p->tok.start;
        /* c10 reads a number as a float only when it holds '.' or a lower-case 'e' (or the
         * default is a float's): elsewhere it would read 1E5 as the integer 1 */
        if (p->tok.kind == SG_T_FLOAT && !p->float_default && !memchr(t, '.', n) &&
            !memchr(t, 'e', n))
            fail(p, p->tok.start, "PyTorch would read '%.*s' as the integer before the 'E'; "
                 "write the exponent with a lower-case 'e'", (int)(n > 40 ? 40 : n), t);
        v->kind = p->tok.kind == SG_T_FLOAT ? SG_VAL_FLOAT : SG_VAL_COMPLEX;
        v->u.f = neg ? -parse_double(p) : parse_double(p);
    } else if (ident_is(p, "inf") || ident_is(p, "nan")) {
        non_finite(p);
    } else {
        unexpected(p, "a number after '-'");
    }
    next(p);
}

/* Items of a list default collect in a chunk list in the arena, not on the stack: the stack
 * holds a constant amount per nesting level. */
enum { MAX_ITEMS = 256, CHUNK = 16 };
typedef struct chunk {
    sg_value      v[CHUNK];
    struct chunk *next;
} chunk;

static void parse_list(parser *p, sg_value *v, int depth) {
    chunk   *head = NULL, **tail = &head, *c = NULL;
    uint32_t n = 0;
    next(p);
    if (p->tok.kind != SG_T_RBRACKET) {
        do {
            if (n == MAX_ITEMS)
                fail(p, p->tok.start, "list default has more than %d items", MAX_ITEMS);
            if (n % CHUNK == 0) {
                c = alloc(p, sizeof *c);
                *tail = c;
                tail = &c->next;
            }
            c->v[n++ % CHUNK] = *parse_value(p, depth + 1);
        } while (accept(p, SG_T_COMMA));
    }
    expect(p, SG_T_RBRACKET, "',' or ']' in the list");
    v->kind = SG_VAL_LIST;
    v->u.list.items = alloc(p, (n ? n : 1) * sizeof *v->u.list.items);
    v->u.list.n = n;
    uint32_t i = 0;
    for (c = head; c; c = c->next)
        for (uint32_t k = 0; k < CHUNK && i < n; k++) v->u.list.items[i++] = c->v[k];
}

static sg_value *parse_value(parser *p, int depth) {
    if (depth >= MAX_DEPTH) too_deep(p, p->tok.start, "list default");
    sg_value *v = alloc(p, sizeof *v);
    switch (p->tok.kind) {
    case SG_T_MINUS:
        next(p);
        parse_number(p, v, true);
        return v;
    case SG_T_INT: case SG_T_FLOAT: case SG_T_IMAG:
        parse_number(p, v, false);
        return v;
    case SG_T_STRING:
        v->kind = SG_VAL_STR;
        decode_string(p, v);
        next(p);
        return v;
    case SG_T_LBRACKET:
        parse_list(p, v, depth);
        return v;
    case SG_T_IDENT:
        if (ident_is(p, "None")) {
            v->kind = SG_VAL_NONE;
        } else if (ident_is(p, "True") || ident_is(p, "False")) {
            v->kind = SG_VAL_BOOL;
            v->u.b = ident_is(p, "True");
        } else if (ident_is(p, "inf") || ident_is(p, "nan")) {
            non_finite(p);
        } else {
            v->kind = SG_VAL_IDENT;
            v->u.str.s = dup(p, p->tok.start, p->tok.end);
            v->u.str.len = p->tok.end - p->tok.start;
        }
        next(p);
        return v;
    default:
        unexpected(p, "a default value");
    }
}

/* Whether value v may be the default of type t (PyTorch's conversions: an int fills a float,
 * a sized list takes one element for all, named constants belong to their enum type). */
static bool fits(const sg_value *v, const sg_type *t) {
    if (t->kind == SG_TY_ANY || t->kind == SG_TY_VAR) return true;
    if (v->kind == SG_VAL_NONE) return t->kind == SG_TY_OPTIONAL || t->kind == SG_TY_NONE;
    switch (t->kind) {
    case SG_TY_OPTIONAL:
        return fits(v, t->elems[0]);
    case SG_TY_LIST:
        if (v->kind != SG_VAL_LIST) return t->size >= 0 && fits(v, t->elems[0]);
        for (uint32_t i = 0; i < v->u.list.n; i++)
            if (!fits(&v->u.list.items[i], t->elems[0])) return false;
        return true;
    case SG_TY_BOOL: case SG_TY_SYMBOOL:
        return v->kind == SG_VAL_BOOL;
    case SG_TY_INT: case SG_TY_SYMINT: case SG_TY_DEVICE_INDEX:
        return v->kind == SG_VAL_INT ||
               (v->kind == SG_VAL_IDENT && sg_constant_type(v->u.str.s, v->u.str.len) == SG_TY_INT);
    case SG_TY_FLOAT: case SG_TY_SYMFLOAT:
        return v->kind == SG_VAL_INT || v->kind == SG_VAL_FLOAT;
    case SG_TY_COMPLEX:
        return v->kind == SG_VAL_INT || v->kind == SG_VAL_FLOAT || v->kind == SG_VAL_COMPLEX;
    case SG_TY_SCALAR:
        return v->kind == SG_VAL_INT || v->kind == SG_VAL_FLOAT || v->kind == SG_VAL_COMPLEX ||
               v->kind == SG_VAL_BOOL;
    case SG_TY_STR: case SG_TY_DIMNAME: case SG_TY_DEVICE:
        return v->kind == SG_VAL_STR;
    case SG_TY_SCALAR_TYPE: case SG_TY_LAYOUT: case SG_TY_MEMORY_FORMAT: case SG_TY_QSCHEME:
        return v->kind == SG_VAL_INT ||
               (v->kind == SG_VAL_IDENT && sg_constant_type(v->u.str.s, v->u.str.len) == (int)t->kind);
    default:
        return false;
    }
}

static void check_default(parser *p, const sg_arg *a) {
    if (fits(a->default_value, a->type)) return;
    sg_buf b;
    sg_buf_init(&b);
    sg_type_print(&b, a->type, false);
    char ty[64];
    snprintf(ty, sizeof ty, "%s", b.data ? b.data : "?");
    sg_buf_free(&b);
    const sg_value *v = a->default_value;
    const char *why = "";
    if (v->kind == SG_VAL_NONE) why = " (only optional types, T?, default to None)";
    else if (v->kind == SG_VAL_IDENT) why = " (unknown constant for this type)";
    else if (a->type->kind == SG_TY_LIST && v->kind != SG_VAL_LIST)
        why = " (a list needs a list default like [0,1]; only sized lists T[N] take one value)";
    bool quoted = a->default_text[0] == '\'' || a->default_text[0] == '"';
    fail(p, a->default_offset, "default value %s%.40s%s does not fit type '%s' of argument '%s'%s",
         quoted ? "" : "'", a->default_text, quoted ? "" : "'", ty, a->name, why);
}

/* ---- arguments and returns -------------------------------------------------------------- */

static void parse_arg(parser *p, sg_arg *a, bool kwarg_only) {
    a->offset = p->tok.start;
    a->kwarg_only = kwarg_only;
    int height;
    a->type = parse_type(p, 0, &height);
    if (p->tok.kind != SG_T_IDENT) unexpected(p, "an argument name after the type");
    a->name_offset = p->tok.start;
    a->name = dup(p, p->tok.start, p->tok.end);
    next(p);
    if (accept(p, SG_T_EQUALS)) {
        a->default_offset = p->tok.start;
        uint32_t start = p->tok.start, end;
        const sg_type *t = a->type;
        p->float_default = t->kind == SG_TY_FLOAT ||
                           (t->kind == SG_TY_LIST && t->elems[0]->kind == SG_TY_FLOAT);
        a->default_value = parse_value(p, 0);
        p->float_default = false;
        end = p->tok.start;
        while (end > start && isspace((unsigned char)p->text[end - 1])) end--;
        a->default_text = dup(p, start, end);
        check_default(p, a);
    }
}

static void parse_ret(parser *p, sg_arg *r) {
    r->offset = p->tok.start;
    int height;
    r->type = parse_type(p, 0, &height);
    r->name_offset = r->offset;
    if (p->tok.kind == SG_T_IDENT) {
        r->name_offset = p->tok.start;
        r->name = dup(p, p->tok.start, p->tok.end);
        next(p);
    }
    if (p->tok.kind == SG_T_EQUALS) fail(p, p->tok.start, "returns cannot have default values");
}

/* Arguments collect on the stack and move to the arena at their exact count. */
enum { MAX_ARGS = 256 };
typedef struct argvec {
    sg_arg   v[MAX_ARGS];
    uint32_t n;
} argvec;

static sg_arg *push(parser *p, argvec *av) {
    if (av->n == MAX_ARGS) fail(p, p->tok.start, "more than %d arguments or returns", MAX_ARGS);
    sg_arg *a = &av->v[av->n++];
    memset(a, 0, sizeof *a);
    return a;
}

static sg_arg *finish(parser *p, const argvec *av) {
    sg_arg *v = alloc(p, (av->n ? av->n : 1) * sizeof *v);
    memcpy(v, av->v, av->n * sizeof *v);
    return v;
}

static void parse_args(parser *p, sg_schema *s) {
    argvec av;
    av.n = 0;
    bool star = false;
    expect(p, SG_T_LPAREN, "'(' to start the arguments");
    s->npositional = UINT32_MAX;
    if (p->tok.kind != SG_T_RPAREN) {
        do {
            if (s->varargs) fail(p, p->tok.start, "'...' must be the last argument");
            if (p->tok.kind == SG_T_STAR) {
                if (star) fail(p, p->tok.start, "'*' may appear only once in the arguments");
                star = true;
                s->npositional = av.n;
                next(p);
            } else if (accept(p, SG_T_ELLIPSIS)) {
                s->varargs = true;
            } else {
                parse_arg(p, push(p, &av), star);
            }
        } while (accept(p, SG_T_COMMA));
    }
    if (p->tok.kind != SG_T_RPAREN) {
        if (p->tok.kind == SG_T_EOF) fail(p, p->tok.start, "missing ')' to close the arguments");
        unexpected(p, "',' or ')' after an argument");
    }
    next(p);
    s->args = finish(p, &av);
    s->nargs = av.n;
    s->star = star;
    if (s->npositional == UINT32_MAX) s->npositional = av.n;
}

static void parse_returns(parser *p, sg_schema *s) {
    argvec av;
    av.n = 0;
    if (accept(p, SG_T_LPAREN)) {
        s->ret_parens = true;
        if (p->tok.kind != SG_T_RPAREN) {
            do {
                if (s->varret) fail(p, p->tok.start, "'...' must be the last return");
                if (accept(p, SG_T_ELLIPSIS)) s->varret = true;
                else parse_ret(p, push(p, &av));
            } while (accept(p, SG_T_COMMA));
        }
        expect(p, SG_T_RPAREN, "',' or ')' after a return");
    } else if (accept(p, SG_T_ELLIPSIS)) {
        s->varret = true;
    } else {
        parse_ret(p, push(p, &av));
    }
    s->rets = finish(p, &av);
    s->nrets = av.n;
}

/* ---- names ------------------------------------------------------------------------------ */

static bool is_augmented(const char *inner, size_t n) {
    static const char *const ops[] = {"add", "sub", "mul", "div", "mod", "pow",
                                      "lshift", "rshift", "and", "xor", "or"};
    if (n < 2 || inner[0] != 'i') return false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strlen(ops[i]) == n - 1 && memcmp(ops[i], inner + 1, n - 1) == 0) return true;
    return false;
}

sg_name_info sg_name_classify(const char *name, size_t n) {
    sg_name_info r = {.base_len = n};
    r.dunder = n > 4 && memcmp(name, "__", 2) == 0 && memcmp(name + n - 2, "__", 2) == 0 &&
               !memchr(name + 2, '_', n - 4);
    if (r.dunder) {
        r.augmented = r.inplace = is_augmented(name + 2, n - 4);
    } else if (n > 1 && name[n - 1] == '_') {
        r.inplace = true;
        r.base_len = n - 1;
    }
    return r;
}

/* Splits the name into base, in-place and dunder. */
static void classify_name(parser *p, sg_schema *s) {
    const char *n = s->name;
    size_t len = strlen(n);
    sg_name_info info = sg_name_classify(n, len);
    s->dunder = info.dunder;
    s->inplace = info.inplace;
    s->base = n;
    if (info.augmented) {
        char *b = alloc(p, len);
        memcpy(b, "__", 2);
        memcpy(b + 2, n + 3, len - 3);
        s->base = b;
    } else if (info.base_len < len) {
        s->base = dup(p, s->name_offset, s->name_offset + (uint32_t)info.base_len);
    }
}

static void parse_name(parser *p, sg_schema *s) {
    if (p->tok.kind != SG_T_IDENT) unexpected(p, "an operator name");
    sg_token first = p->tok;
    next(p);
    if (accept(p, SG_T_COLONCOLON)) {
        s->ns = dup(p, first.start, first.end);
        if (p->tok.kind != SG_T_IDENT) unexpected(p, "an operator name after '::'");
        first = p->tok;
        next(p);
        if (p->tok.kind == SG_T_COLONCOLON)
            fail(p, p->tok.start, "an operator name has at most one namespace ('ns::name')");
    }
    s->name_offset = first.start;
    s->name = dup(p, first.start, first.end);
    s->overload = "";
    s->overload_offset = p->tok.start;
    if (accept(p, SG_T_DOT)) {
        if (p->tok.kind != SG_T_IDENT) unexpected(p, "an overload name after '.'");
        s->overload_offset = p->tok.start;
        s->overload = dup(p, p->tok.start, p->tok.end);
        /* c10's rule: torch.ops.ns.op.default names the overload without a name, and an
         * overload is an attribute of the op's packet, where '__' names are Python's */
        if (strcmp(s->overload, "default") == 0 || strncmp(s->overload, "__", 2) == 0)
            fail(p, p->tok.start, "'%s' is not a legal overload name: PyTorch reserves "
                 "'default' (the overload without a name) and names starting with '__'",
                 s->overload);
        next(p);
    }
    classify_name(p, s);
}

/* PyTorch's FunctionSchema check: once a positional argument has a default, every later
 * positional one needs one too (lists are exempt, for historical reasons). */
static void check_default_order(parser *p, const sg_schema *s) {
    bool seen = false;
    for (uint32_t i = 0; i < s->npositional; i++) {
        const sg_arg *a = &s->args[i];
        if (a->default_value) seen = true;
        else if (seen && a->type->kind != SG_TY_LIST)
            fail(p, a->offset, "argument '%s' has no default but follows an argument that has "
                 "one; give it a default or make it keyword-only (after '*')", a->name);
    }
}

int sg_schema_parse(const char *text, size_t len, sg_arena *arena, sg_schema *out,
                    sg_schema_error *err) {
    parser p;
    memset(&p, 0, sizeof p);
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    p.err = err;
    p.arena = arena;
    if (len > UINT32_MAX - 1) {
        snprintf(err->msg, sizeof err->msg, "schema longer than 4 GiB");
        return SG_SCHEMA_ESYNTAX;
    }
    if (setjmp(p.jb)) return p.code;
    char *copy = alloc(&p, len + 1);
    memcpy(copy, text, len);
    p.text = copy;
    p.len = len;
    next(&p);
    if (p.tok.kind == SG_T_EOF) fail(&p, 0, "empty schema");
    parse_name(&p, out);
    if (p.tok.kind != SG_T_LPAREN) unexpected(&p, "'(' after the operator name");
    parse_args(&p, out);
    for (uint32_t i = 0; out->varargs && i < out->nargs; i++) /* c10's rule */
        if (out->args[i].default_value)
            fail(&p, out->args[i].default_offset, "a schema with varargs ('...') cannot have "
                 "default values (PyTorch refuses them)");
    if (p.tok.kind != SG_T_ARROW) unexpected(&p, "'->' and the returns after the arguments");
    next(&p);
    parse_returns(&p, out);
    if (p.tok.kind != SG_T_EOF) unexpected(&p, "end of schema after the returns");
    check_default_order(&p, out);
    sg_schema_derive_facts(out);
    return SG_SCHEMA_OK;
}
