/* dsl_expr.c: the predicate language: tokens, a recursive-descent parser (C's precedence),
 * the type checker, C emission and constant evaluation (dsl_expr.h). */
#include "dsl_expr.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In the order of the runtime's sg_dtype values: decision tables sort their rules by this
 * table's index, and the code they generate asserts that the orders agree. */
const sg_dsl_dtype sg_dsl_dtypes[] = {
    {"uint8", "SG_UINT8", "u8", NULL},
    {"int8", "SG_INT8", "i8", NULL},
    {"int16", "SG_INT16", NULL, NULL},
    {"int32", "SG_INT32", "i32", "int32_t"},
    {"int64", "SG_INT64", "i64", "int64_t"},
    {"float16", "SG_FLOAT16", "fp16", NULL},
    {"float32", "SG_FLOAT32", "fp32", "float"},
    {"float64", "SG_FLOAT64", "fp64", "double"},
    {"complex64", "SG_COMPLEX64", NULL, NULL},
    {"complex128", "SG_COMPLEX128", NULL, NULL},
    {"bool", "SG_BOOL", NULL, NULL},
    {"bfloat16", "SG_BFLOAT16", "bf16", NULL},
};
const uint32_t sg_dsl_ndtypes = sizeof sg_dsl_dtypes / sizeof sg_dsl_dtypes[0];

int sg_dsl_dtype_find(const char *name, size_t len) {
    for (uint32_t i = 0; i < sg_dsl_ndtypes; i++)
        if (strlen(sg_dsl_dtypes[i].name) == len && memcmp(sg_dsl_dtypes[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

const char *sg_dsl_type_name(sg_dsl_type t) {
    static const char *const names[] = {"an invalid value", "an int", "a float", "a bool",
                                        "a dtype", "a Tensor", "an int[]", "None"};
    return names[t];
}

sg_pos sg_dsl_text_pos(const sg_dsl_text *t, size_t off) {
    sg_op tmp = {.spans = (sg_span *)t->spans, .nspans = t->nspans, .pos = t->pos};
    if (!t->nspans) {
        sg_pos p = t->pos;
        p.col += (uint32_t)off;
        return p;
    }
    return sg_op_pos_at(&tmp, (uint32_t)off);
}

/* ---- tokens ------------------------------------------------------------------------------ */

typedef enum tok {
    T_EOF, T_INT, T_FLOAT, T_IDENT, T_LP, T_RP, T_LB, T_RB, T_COMMA, T_DOT, T_Q, T_COLON,
    T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PCT, T_NOT, T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_AND,
    T_OR, T_BAD
} tok;

static const char *const tok_text[] = {
    "the end", "a number", "a number", "a name", "'('", "')'", "'['", "']'", "','", "'.'",
    "'?'", "':'", "'+'", "'-'", "'*'", "'/'", "'%'", "'!'", "'=='", "'!='", "'<'", "'<='",
    "'>'", "'>='", "'&&'", "'||'", "a bad character"};

typedef struct parser {
    const sg_dsl_text *t;
    sg_arena          *a;
    sg_diag           *d;
    size_t             p;       /* next byte */
    tok                k;       /* current token */
    size_t             start, end;
    int                depth;
    bool               failed;
} parser;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void perr(parser *P, size_t off, const char *fmt, ...) {
    if (P->failed) return; /* one message per expression: the first is the one that helps */
    P->failed = true;
    va_list ap;
    va_start(ap, fmt);
    sg_diag_vreport(P->d, SG_ERROR, sg_dsl_text_pos(P->t, off), fmt, ap);
    va_end(ap);
}

static bool is_id0(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static void next(parser *P) {
    const char *s = P->t->s;
    size_t n = P->t->len, p = P->p;
    while (p < n && (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r')) p++;
    P->start = p;
    if (p >= n) {
        P->k = T_EOF;
        P->end = P->p = p;
        return;
    }
    char c = s[p], c2 = p + 1 < n ? s[p + 1] : '\0';
    tok k = T_BAD;
    size_t len = 1;
    if (is_id0(c)) {
        while (p + len < n && (is_id0(s[p + len]) || is_digit(s[p + len]))) len++;
        k = T_IDENT;
    } else if (is_digit(c) || (c == '.' && is_digit(c2))) {
        k = T_INT;
        while (p + len < n && is_digit(s[p + len])) len++;
        if (p + len < n && s[p + len] == '.') {
            k = T_FLOAT;
            len++;
            while (p + len < n && is_digit(s[p + len])) len++;
        }
        if (p + len < n && (s[p + len] == 'e' || s[p + len] == 'E')) {
            size_t e = len + 1;
            if (p + e < n && (s[p + e] == '+' || s[p + e] == '-')) e++;
            if (p + e < n && is_digit(s[p + e])) {
                k = T_FLOAT;
                len = e;
                while (p + len < n && is_digit(s[p + len])) len++;
            }
        }
        if (p + len < n && (is_id0(s[p + len]) || is_digit(s[p + len]))) {
            perr(P, p + len, "bad number: '%c' after its digits", s[p + len]);
        }
    } else {
        static const struct { char a, b; tok k; } two[] = {
            {'=', '=', T_EQ}, {'!', '=', T_NE}, {'<', '=', T_LE}, {'>', '=', T_GE},
            {'&', '&', T_AND}, {'|', '|', T_OR}};
        static const char one[] = "()[],.?:+-*/%!<>";
        static const tok one_k[] = {T_LP, T_RP, T_LB, T_RB, T_COMMA, T_DOT, T_Q, T_COLON, T_PLUS,
                                    T_MINUS, T_STAR, T_SLASH, T_PCT, T_NOT, T_LT, T_GT};
        for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
            if (c == two[i].a && c2 == two[i].b) k = two[i].k, len = 2;
        const char *o = k == T_BAD ? strchr(one, c) : NULL;
        if (o && c) k = one_k[o - one];
        if (k == T_BAD) {
            if (c == '=')
                perr(P, p, "'=' is not an operator; compare with '=='");
            else if (c == '&' || c == '|')
                perr(P, p, "'%c' is not an operator; did you mean '%c%c'?", c, c, c);
            else if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7F)
                perr(P, p, "unexpected character '%c'", c);
            else
                perr(P, p, "unexpected byte 0x%02X", (unsigned)(unsigned char)c);
        }
    }
    P->k = k;
    P->end = p + len;
    P->p = p + len;
}

/* ---- the tree ---------------------------------------------------------------------------- */

typedef enum nkind {
    N_INT, N_FLOAT, N_BOOL, N_NONE, N_DTYPE, N_NAME, N_MEMBER, N_SIZE, N_STRIDE, N_ALIGNED,
    N_INDEX, N_NOT, N_NEG, N_BIN, N_COND
} nkind;

typedef enum member { M_DTYPE, M_DIM, M_NUMEL, M_CONTIGUOUS, M_OFFSET, M_LEN } member;
static const char *const member_names[] = {"dtype", "dim", "numel", "contiguous", "offset", "len"};

struct sg_dsl_node {
    nkind             kind;
    tok               op;     /* N_BIN */
    member            m;      /* N_MEMBER */
    uint32_t          off;    /* byte offset of the node's first character */
    uint32_t          opoff;  /* N_BIN, N_MEMBER...: of the operator */
    int64_t           i;      /* N_INT, N_BOOL, N_DTYPE (index) */
    double            f;
    const char       *name;   /* N_NAME */
    sg_dsl_node      *a, *b, *c;
    sg_dsl_type       type;   /* set by the checker */
    const sg_dsl_sym *sym;    /* N_NAME, set by the checker */
};

static sg_dsl_node *node(parser *P, nkind k, size_t off) {
    sg_dsl_node *n = sg_arena_alloc(P->a, sizeof *n);
    if (!n) {
        if (!P->failed) sg_diag_plain(P->d, SG_ERROR, "out of memory");
        P->failed = true;
        return NULL;
    }
    n->kind = k;
    n->off = n->opoff = (uint32_t)off;
    return n;
}

static sg_dsl_node *expr(parser *P);

static bool expect(parser *P, tok k, const char *after) {
    if (P->k == k) {
        next(P);
        return true;
    }
    perr(P, P->start, "expected %s %s, found %s", tok_text[k], after, tok_text[P->k]);
    return false;
}

static bool enter(parser *P) {
    if (++P->depth <= SG_DSL_MAX_DEPTH) return true;
    perr(P, P->start, "expression nested too deeply (more than %d levels)", SG_DSL_MAX_DEPTH);
    return false;
}

static sg_dsl_node *number(parser *P) {
    char buf[64];
    size_t n = P->end - P->start;
    sg_dsl_node *x = node(P, P->k == T_INT ? N_INT : N_FLOAT, P->start);
    if (!x) return NULL;
    if (n >= sizeof buf) {
        perr(P, P->start, "number too long");
        return NULL;
    }
    memcpy(buf, P->t->s + P->start, n);
    buf[n] = '\0';
    errno = 0;
    char *end;
    if (x->kind == N_INT) {
        unsigned long long v = strtoull(buf, &end, 10);
        if (errno || v > (unsigned long long)INT64_MAX) {
            perr(P, P->start, "integer %s does not fit in 64 bits", buf);
            return NULL;
        }
        x->i = (int64_t)v;
    } else {
        x->f = strtod(buf, &end);
        if (errno || !isfinite(x->f)) {
            perr(P, P->start, "number %s is out of range", buf);
            return NULL;
        }
    }
    next(P);
    return x;
}

static bool id_is(const parser *P, const char *w) {
    size_t n = P->end - P->start;
    return P->k == T_IDENT && strlen(w) == n && memcmp(P->t->s + P->start, w, n) == 0;
}

static sg_dsl_node *primary(parser *P) {
    size_t at = P->start;
    if (P->k == T_INT || P->k == T_FLOAT) return number(P);
    if (P->k == T_LP) {
        next(P);
        sg_dsl_node *x = expr(P);
        if (x && !expect(P, T_RP, "to close '('")) return NULL;
        return x;
    }
    if (P->k != T_IDENT) {
        perr(P, at, "expected a value, found %s", tok_text[P->k]);
        return NULL;
    }
    sg_dsl_node *x;
    if (id_is(P, "None")) {
        x = node(P, N_NONE, at);
    } else if (id_is(P, "true") || id_is(P, "True") || id_is(P, "false") || id_is(P, "False")) {
        x = node(P, N_BOOL, at);
        if (x) x->i = P->t->s[at] == 't' || P->t->s[at] == 'T';
    } else if (id_is(P, "aligned")) {
        next(P);
        if (!expect(P, T_LP, "after 'aligned'")) return NULL;
        x = node(P, N_ALIGNED, at);
        if (!x || !(x->a = expr(P)) || !expect(P, T_COMMA, "between aligned's arguments") ||
            !(x->b = expr(P)) || !expect(P, T_RP, "to close aligned("))
            return NULL;
        return x;
    } else {
        x = node(P, N_NAME, at);
        if (x) x->name = sg_arena_strndup(P->a, P->t->s + at, P->end - at);
        if (x && !x->name) {
            if (!P->failed) sg_diag_plain(P->d, SG_ERROR, "out of memory");
            P->failed = true;
            return NULL;
        }
    }
    next(P);
    return x;
}

static sg_dsl_node *postfix(parser *P) {
    sg_dsl_node *x = primary(P);
    while (x && (P->k == T_DOT || P->k == T_LB)) {
        size_t at = P->start;
        if (P->k == T_LB) {
            next(P);
            sg_dsl_node *y = node(P, N_INDEX, x->off);
            if (!y || !(y->b = expr(P)) || !expect(P, T_RB, "to close '['")) return NULL;
            y->a = x, y->opoff = (uint32_t)at;
            x = y;
            continue;
        }
        next(P);
        if (P->k != T_IDENT) {
            perr(P, P->start, "expected a member name after '.', found %s", tok_text[P->k]);
            return NULL;
        }
        size_t mat = P->start;
        if (id_is(P, "size") || id_is(P, "stride")) {
            sg_dsl_node *y = node(P, id_is(P, "size") ? N_SIZE : N_STRIDE, x->off);
            next(P);
            if (!y || !expect(P, T_LP, "after the method's name") || !(y->b = expr(P)) ||
                !expect(P, T_RP, "to close the method's '('"))
                return NULL;
            y->a = x, y->opoff = (uint32_t)mat;
            x = y;
            continue;
        }
        int m = -1;
        for (int k = 0; k < (int)(sizeof member_names / sizeof *member_names); k++)
            if (id_is(P, member_names[k])) m = k;
        if (m < 0) {
            perr(P, mat, "unknown member '%.*s' (dtype, dim, numel, contiguous, offset, len, "
                 "size(d), stride(d))", (int)(P->end - mat), P->t->s + mat);
            return NULL;
        }
        sg_dsl_node *y = node(P, N_MEMBER, x->off);
        if (!y) return NULL;
        y->a = x, y->m = (member)m, y->opoff = (uint32_t)mat;
        x = y;
        next(P);
    }
    return x;
}

static sg_dsl_node *unary(parser *P) {
    if (P->k != T_NOT && P->k != T_MINUS) return postfix(P);
    if (!enter(P)) return NULL;
    size_t at = P->start;
    nkind k = P->k == T_NOT ? N_NOT : N_NEG;
    next(P);
    sg_dsl_node *x = node(P, k, at);
    if (x && !(x->a = unary(P))) x = NULL;
    P->depth--;
    return x;
}

/* Binding power of a binary operator (0: not one). */
static int power(tok k) {
    switch (k) {
    case T_OR: return 1;
    case T_AND: return 2;
    case T_EQ: case T_NE: return 3;
    case T_LT: case T_LE: case T_GT: case T_GE: return 4;
    case T_PLUS: case T_MINUS: return 5;
    case T_STAR: case T_SLASH: case T_PCT: return 6;
    default: return 0;
    }
}

/* Precedence climbing: each level of recursion is a higher binding power, so the depth is
 * bounded by the number of levels (6) whatever the input. */
static sg_dsl_node *binary(parser *P, int min) {
    sg_dsl_node *x = unary(P);
    while (x && power(P->k) >= min) {
        tok op = P->k;
        size_t at = P->start;
        next(P);
        sg_dsl_node *y = binary(P, power(op) + 1);
        sg_dsl_node *z = y ? node(P, N_BIN, x->off) : NULL;
        if (!z) return NULL;
        z->op = op, z->a = x, z->b = y, z->opoff = (uint32_t)at;
        x = z;
    }
    return x;
}

static sg_dsl_node *expr(parser *P) {
    if (!enter(P)) return NULL;
    sg_dsl_node *c = binary(P, 1), *x = c;
    if (c && P->k == T_Q) {
        size_t at = P->start;
        next(P);
        x = node(P, N_COND, c->off);
        if (x) x->opoff = (uint32_t)at, x->c = c;
        if (!x || !(x->a = expr(P)) || !expect(P, T_COLON, "in 'c ? a : b'") ||
            !(x->b = expr(P)))
            x = NULL;
    }
    P->depth--;
    return x;
}

sg_dsl_node *sg_dsl_parse(sg_arena *a, const sg_dsl_text *t, sg_diag *d) {
    parser P = {.t = t, .a = a, .d = d};
    next(&P);
    if (P.k == T_EOF && !P.failed) {
        perr(&P, 0, "empty expression");
        return NULL;
    }
    sg_dsl_node *x = P.failed ? NULL : expr(&P);
    if (x && P.k != T_EOF) perr(&P, P.start, "unexpected %s after the expression", tok_text[P.k]);
    return P.failed ? NULL : x;
}

/* ---- the checker ------------------------------------------------------------------------- */

typedef struct checker {
    const sg_dsl_scope *sc;
    const sg_dsl_text  *t;
    sg_diag            *d;
    bool                failed;
} checker;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void cerr(checker *C, size_t off, const char *fmt, ...) {
    if (C->failed) return;
    C->failed = true;
    va_list ap;
    va_start(ap, fmt);
    sg_diag_vreport(C->d, SG_ERROR, sg_dsl_text_pos(C->t, off), fmt, ap);
    va_end(ap);
}

static bool numeric(sg_dsl_type t) { return t == SG_DSLT_INT || t == SG_DSLT_FLOAT; }

static const char *op_name(tok k) { return tok_text[k]; }

static sg_dsl_type check(checker *C, sg_dsl_node *n);

/* n's type, which must be `want` (an int where a float is wanted is fine). */
static bool want(checker *C, sg_dsl_node *n, sg_dsl_type w, const char *what) {
    sg_dsl_type t = check(C, n);
    if (t == SG_DSLT_ERROR) return false;
    if (t == w || (w == SG_DSLT_FLOAT && t == SG_DSLT_INT)) return true;
    if (t == SG_DSLT_TENSOR && n->kind == N_NAME && w == SG_DSLT_INT)
        cerr(C, n->off, "'%s' is a Tensor, not an int: use %s.numel, %s.dim, %s.size(d), ...",
             n->name, n->name, n->name, n->name);
    else
        cerr(C, n->off, "%s must be %s, not %s", what, sg_dsl_type_name(w), sg_dsl_type_name(t));
    return false;
}

static sg_dsl_type check_name(checker *C, sg_dsl_node *n) {
    const sg_dsl_sym *s = C->sc->lookup(C->sc->ud, n->name);
    if (s && s->type == SG_DSLT_ERROR) {
        cerr(C, n->off, "'%s' cannot be used here: %s", n->name, s->why ? s->why : "unsupported");
        return SG_DSLT_ERROR;
    }
    if (s) {
        n->sym = s;
        return s->type;
    }
    int dt = sg_dsl_dtype_find(n->name, strlen(n->name));
    if (dt >= 0) {
        n->kind = N_DTYPE;
        n->i = dt;
        return SG_DSLT_DTYPE;
    }
    if (strcmp(n->name, "capability") == 0)
        cerr(C, n->off, "'capability' cannot be used here");
    else
        cerr(C, n->off, "unknown name '%s': not %s, nor a dtype", n->name, C->sc->scope);
    return SG_DSLT_ERROR;
}

/* x == None, x != None: x must be a name that may be None. */
static sg_dsl_type check_none(checker *C, sg_dsl_node *n, sg_dsl_node *x) {
    if (x->kind == N_NONE) {
        cerr(C, n->opoff, "None compared with None");
        return SG_DSLT_ERROR;
    }
    if (check(C, x) == SG_DSLT_ERROR) return SG_DSLT_ERROR;
    if (x->kind != N_NAME || !x->sym || !x->sym->opt) {
        cerr(C, x->off, "only an optional argument can be None; this is %s that never is",
             sg_dsl_type_name(x->type));
        return SG_DSLT_ERROR;
    }
    return SG_DSLT_BOOL;
}

static sg_dsl_type check_bin(checker *C, sg_dsl_node *n) {
    tok op = n->op;
    if ((op == T_EQ || op == T_NE) && (n->a->kind == N_NONE || n->b->kind == N_NONE))
        return check_none(C, n, n->a->kind == N_NONE ? n->b : n->a);
    if (op == T_AND || op == T_OR) {
        if (!want(C, n->a, SG_DSLT_BOOL, "an operand of && and ||") ||
            !want(C, n->b, SG_DSLT_BOOL, "an operand of && and ||"))
            return SG_DSLT_ERROR;
        return SG_DSLT_BOOL;
    }
    sg_dsl_type a = check(C, n->a);
    if (a == SG_DSLT_ERROR) return a;
    sg_dsl_type b = check(C, n->b);
    if (b == SG_DSLT_ERROR) return b;
    if (op == T_EQ || op == T_NE) {
        if ((numeric(a) && numeric(b)) ||
            (a == b && (a == SG_DSLT_DTYPE || a == SG_DSLT_BOOL)))
            return SG_DSLT_BOOL;
        cerr(C, n->opoff, "cannot compare %s with %s", sg_dsl_type_name(a), sg_dsl_type_name(b));
        return SG_DSLT_ERROR;
    }
    if (!numeric(a) || !numeric(b)) {
        sg_dsl_node *bad = numeric(a) ? n->b : n->a;
        sg_dsl_type bt = numeric(a) ? b : a;
        if (bt == SG_DSLT_TENSOR && bad->kind == N_NAME)
            cerr(C, bad->off, "'%s' is a Tensor, not a number: use %s.numel, %s.size(d), ...",
                 bad->name, bad->name, bad->name);
        else
            cerr(C, n->opoff, "%s needs numbers, not %s", op_name(op), sg_dsl_type_name(bt));
        return SG_DSLT_ERROR;
    }
    if (op == T_LT || op == T_LE || op == T_GT || op == T_GE) return SG_DSLT_BOOL;
    if (op == T_PCT && (a != SG_DSLT_INT || b != SG_DSLT_INT)) {
        cerr(C, n->opoff, "'%%' needs ints");
        return SG_DSLT_ERROR;
    }
    return a == SG_DSLT_INT && b == SG_DSLT_INT ? SG_DSLT_INT : SG_DSLT_FLOAT;
}

static sg_dsl_type check_member(checker *C, sg_dsl_node *n) {
    sg_dsl_type a = check(C, n->a);
    if (a == SG_DSLT_ERROR) return a;
    if (n->m == M_LEN) {
        if (a == SG_DSLT_INT_LIST) return SG_DSLT_INT;
        cerr(C, n->opoff, "'.len' needs an int[], not %s", sg_dsl_type_name(a));
        return SG_DSLT_ERROR;
    }
    if (a != SG_DSLT_TENSOR) {
        cerr(C, n->opoff, "'.%s' needs a Tensor, not %s", member_names[n->m], sg_dsl_type_name(a));
        return SG_DSLT_ERROR;
    }
    return n->m == M_DTYPE ? SG_DSLT_DTYPE : n->m == M_CONTIGUOUS ? SG_DSLT_BOOL : SG_DSLT_INT;
}

static sg_dsl_type check_node(checker *C, sg_dsl_node *n) {
    switch (n->kind) {
    case N_INT: return SG_DSLT_INT;
    case N_FLOAT: return SG_DSLT_FLOAT;
    case N_BOOL: return SG_DSLT_BOOL;
    case N_DTYPE: return SG_DSLT_DTYPE;
    case N_NONE:
        cerr(C, n->off, "None can only be compared with an optional argument (x == None)");
        return SG_DSLT_ERROR;
    case N_NAME: return check_name(C, n);
    case N_MEMBER: return check_member(C, n);
    case N_SIZE:
    case N_STRIDE: {
        sg_dsl_type a = check(C, n->a);
        if (a == SG_DSLT_ERROR) return a;
        if (a != SG_DSLT_TENSOR) {
            cerr(C, n->opoff, "'.%s(d)' needs a Tensor, not %s",
                 n->kind == N_SIZE ? "size" : "stride", sg_dsl_type_name(a));
            return SG_DSLT_ERROR;
        }
        return want(C, n->b, SG_DSLT_INT, "a dim") ? SG_DSLT_INT : SG_DSLT_ERROR;
    }
    case N_ALIGNED:
        if (!want(C, n->a, SG_DSLT_TENSOR, "aligned's first argument") ||
            !want(C, n->b, SG_DSLT_INT, "aligned's second argument"))
            return SG_DSLT_ERROR;
        return SG_DSLT_BOOL;
    case N_INDEX:
        if (!want(C, n->a, SG_DSLT_INT_LIST, "what is indexed") ||
            !want(C, n->b, SG_DSLT_INT, "an index"))
            return SG_DSLT_ERROR;
        return SG_DSLT_INT;
    case N_NOT: return want(C, n->a, SG_DSLT_BOOL, "the operand of '!'") ? SG_DSLT_BOOL
                                                                          : SG_DSLT_ERROR;
    case N_NEG: {
        sg_dsl_type a = check(C, n->a);
        if (a == SG_DSLT_ERROR || numeric(a)) return a;
        cerr(C, n->off, "'-' needs a number, not %s", sg_dsl_type_name(a));
        return SG_DSLT_ERROR;
    }
    case N_BIN: return check_bin(C, n);
    case N_COND: {
        if (!want(C, n->c, SG_DSLT_BOOL, "the condition of '?'")) return SG_DSLT_ERROR;
        sg_dsl_type a = check(C, n->a);
        if (a == SG_DSLT_ERROR) return a;
        sg_dsl_type b = check(C, n->b);
        if (b == SG_DSLT_ERROR) return b;
        if (numeric(a) && numeric(b)) return a == b ? a : SG_DSLT_FLOAT;
        if (a == b && (a == SG_DSLT_BOOL || a == SG_DSLT_DTYPE)) return a;
        cerr(C, n->opoff, "the branches of '?' differ: %s and %s", sg_dsl_type_name(a),
             sg_dsl_type_name(b));
        return SG_DSLT_ERROR;
    }
    }
    return SG_DSLT_ERROR;
}

/* Rationale: the tree's depth is bounded by the parser (SG_DSL_MAX_DEPTH nested levels, six
 * binary levels each), so this recursion is too. */
static sg_dsl_type check(checker *C, sg_dsl_node *n) {
    if (C->failed) return SG_DSLT_ERROR;
    n->type = check_node(C, n);
    if (n->type == SG_DSLT_ERROR && !C->failed) cerr(C, n->off, "invalid expression");
    return n->type;
}

bool sg_dsl_check(sg_dsl_node *n, const sg_dsl_scope *sc, sg_dsl_type w, const char *what,
                  const sg_dsl_text *t, sg_diag *d) {
    checker C = {.sc = sc, .t = t, .d = d};
    return want(&C, n, w, what) && !C.failed;
}

sg_dsl_type sg_dsl_node_type(const sg_dsl_node *n) { return n->type; }
const sg_dsl_sym *sg_dsl_node_sym(const sg_dsl_node *n) {
    return n->kind == N_NAME ? n->sym : NULL;
}

/* Rationale: `a && b && c` parses as ((a && b) && c), so the operands hang off the left spine;
 * walking it in a loop needs no recursion however long the chain. */
uint32_t sg_dsl_conjuncts(const sg_dsl_node *n, const sg_dsl_node **out, uint32_t max) {
    uint32_t count = 1;
    for (const sg_dsl_node *k = n; k->kind == N_BIN && k->op == T_AND; k = k->a) count++;
    if (count > max) return count;
    uint32_t i = count;
    for (; n->kind == N_BIN && n->op == T_AND; n = n->a) out[--i] = n->b;
    out[0] = n;
    return count;
}

/* ---- C emission -------------------------------------------------------------------------- */

/* A name's value: an optional one is read through a guard (None: the predicate is false). */
static void emit_name(sg_buf *b, const sg_dsl_node *n, const sg_dsl_emit_env *env) {
    const sg_dsl_sym *s = n->sym;
    if (!s->opt || s->type == SG_DSLT_TENSOR) { /* a tensor is a pointer either way */
        env->sym(env->ud, b, s);
        return;
    }
    static const char *const readers[] = {NULL, "sg_dslg_opt_int", "sg_dslg_opt_float", "sg_dslg_opt_bool",
                                          "sg_dslg_opt_dtype", NULL, "sg_dslg_opt_list", NULL};
    sg_buf_printf(b, "%s(", readers[s->type]);
    env->sym(env->ud, b, s);
    sg_buf_puts(b, ", &sg_ok)");
}

/* The shortest decimal that reads back as f, with a '.' or an exponent so C reads a double. */
static void emit_float(sg_buf *b, double f) {
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, f);
        if (strtod(buf, NULL) == f) break;
    }
    sg_buf_puts(b, buf);
    if (!strpbrk(buf, ".eE")) sg_buf_puts(b, ".0");
}

static void emit(sg_buf *b, const sg_dsl_node *n, const sg_dsl_emit_env *env) {
    switch (n->kind) {
    case N_INT: sg_buf_printf(b, "INT64_C(%lld)", (long long)n->i); break;
    case N_FLOAT: emit_float(b, n->f); break;
    case N_BOOL: sg_buf_puts(b, n->i ? "true" : "false"); break;
    case N_DTYPE: sg_buf_puts(b, sg_dsl_dtypes[n->i].cenum); break;
    case N_NONE: sg_buf_puts(b, "NULL"); break;
    case N_NAME: emit_name(b, n, env); break;
    case N_MEMBER: {
        static const char *const fns[] = {"sg_dslg_dtype", "sg_dslg_dim", "sg_dslg_numel", "sg_dslg_contiguous",
                                          "sg_dslg_offset", "sg_dslg_len"};
        sg_buf_printf(b, "%s(", fns[n->m]);
        emit(b, n->a, env);
        sg_buf_puts(b, n->m == M_LEN ? ")" : ", &sg_ok)");
        break;
    }
    case N_SIZE:
    case N_STRIDE:
    case N_ALIGNED:
    case N_INDEX:
        sg_buf_puts(b, n->kind == N_SIZE ? "sg_dslg_size(" : n->kind == N_STRIDE ? "sg_dslg_stride("
                       : n->kind == N_ALIGNED ? "sg_dslg_aligned(" : "sg_dslg_item(");
        emit(b, n->a, env);
        sg_buf_puts(b, ", ");
        emit(b, n->b, env);
        sg_buf_puts(b, ", &sg_ok)");
        break;
    case N_NOT: sg_buf_puts(b, "!("); emit(b, n->a, env); sg_buf_putc(b, ')'); break;
    case N_NEG:
        sg_buf_puts(b, n->type == SG_DSLT_INT ? "sg_dslg_sub(0, " : "-(");
        emit(b, n->a, env);
        sg_buf_puts(b, n->type == SG_DSLT_INT ? ", &sg_ok)" : ")");
        break;
    case N_BIN: {
        const sg_dsl_node *x = n->a->kind == N_NONE ? n->b : n->a;
        if ((n->op == T_EQ || n->op == T_NE) && (n->a->kind == N_NONE || n->b->kind == N_NONE)) {
            sg_buf_putc(b, '(');
            env->sym(env->ud, b, x->sym);
            sg_buf_puts(b, n->op == T_EQ ? " == NULL)" : " != NULL)");
            break;
        }
        if (n->type == SG_DSLT_INT) {
            static const struct { tok k; const char *fn; } fns[] = {
                {T_PLUS, "sg_dslg_add"}, {T_MINUS, "sg_dslg_sub"}, {T_STAR, "sg_dslg_mul"},
                {T_SLASH, "sg_dslg_div"}, {T_PCT, "sg_dslg_mod"}};
            for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
                if (fns[i].k == n->op) {
                    sg_buf_printf(b, "%s(", fns[i].fn);
                    emit(b, n->a, env);
                    sg_buf_puts(b, ", ");
                    emit(b, n->b, env);
                    sg_buf_puts(b, ", &sg_ok)");
                    return;
                }
        }
        if (n->type == SG_DSLT_FLOAT && n->op == T_SLASH) {
            sg_buf_puts(b, "sg_dslg_fdiv(");
            emit(b, n->a, env);
            sg_buf_puts(b, ", ");
            emit(b, n->b, env);
            sg_buf_puts(b, ", &sg_ok)");
            return;
        }
        static const char *const ops[] = {[T_PLUS] = "+", [T_MINUS] = "-", [T_STAR] = "*",
            [T_EQ] = "==", [T_NE] = "!=", [T_LT] = "<", [T_LE] = "<=", [T_GT] = ">",
            [T_GE] = ">=", [T_AND] = "&&", [T_OR] = "||"};
        bool flt = numeric(n->a->type) && (n->a->type == SG_DSLT_FLOAT ||
                                           n->b->type == SG_DSLT_FLOAT);
        sg_buf_putc(b, '(');
        if (flt) sg_buf_puts(b, "(double)");
        emit(b, n->a, env);
        sg_buf_printf(b, " %s ", ops[n->op]);
        if (flt) sg_buf_puts(b, "(double)");
        emit(b, n->b, env);
        sg_buf_putc(b, ')');
        break;
    }
    case N_COND: {
        bool flt = n->type == SG_DSLT_FLOAT;
        sg_buf_putc(b, '(');
        emit(b, n->c, env);
        sg_buf_puts(b, flt ? " ? (double)" : " ? ");
        emit(b, n->a, env);
        sg_buf_puts(b, flt ? " : (double)" : " : ");
        emit(b, n->b, env);
        sg_buf_putc(b, ')');
        break;
    }
    }
}

void sg_dsl_emit(sg_buf *b, const sg_dsl_node *n, const sg_dsl_emit_env *env) { emit(b, n, env); }

/* ---- evaluation over constants ----------------------------------------------------------- */

static bool eval(const sg_dsl_node *n, const sg_dsl_value *grid, sg_dsl_value *v,
                 const char **why) {
    sg_dsl_value a, b;
    switch (n->kind) {
    case N_INT: *v = (sg_dsl_value){SG_DSLT_INT, n->i}; return true;
    case N_BOOL: *v = (sg_dsl_value){SG_DSLT_BOOL, n->i}; return true;
    case N_DTYPE: *v = (sg_dsl_value){SG_DSLT_DTYPE, n->i}; return true;
    case N_NAME:
        if (n->sym && n->sym->kind == SG_DSLS_GRID) {
            *v = grid[n->sym->index];
            return true;
        }
        *why = "only grid variables and constants can be used here";
        return false;
    case N_NOT:
        if (!eval(n->a, grid, &a, why)) return false;
        *v = (sg_dsl_value){SG_DSLT_BOOL, !a.i};
        return true;
    case N_NEG:
        if (n->type != SG_DSLT_INT || !eval(n->a, grid, &a, why)) break;
        if (a.i == INT64_MIN) {
            *why = "overflow";
            return false;
        }
        *v = (sg_dsl_value){SG_DSLT_INT, -a.i};
        return true;
    case N_COND:
        if (!eval(n->c, grid, &a, why)) return false;
        return eval(a.i ? n->a : n->b, grid, v, why);
    case N_BIN:
        if (n->op == T_AND || n->op == T_OR) {
            if (!eval(n->a, grid, &a, why)) return false;
            if ((n->op == T_AND) != (a.i != 0)) {
                *v = a;
                return true;
            }
            return eval(n->b, grid, v, why);
        }
        if (n->a->type == SG_DSLT_FLOAT || n->b->type == SG_DSLT_FLOAT) break;
        if (!eval(n->a, grid, &a, why) || !eval(n->b, grid, &b, why)) return false;
        int64_t r = 0;
        bool ok = true;
        switch (n->op) {
        case T_PLUS: ok = !__builtin_add_overflow(a.i, b.i, &r); break;
        case T_MINUS: ok = !__builtin_sub_overflow(a.i, b.i, &r); break;
        case T_STAR: ok = !__builtin_mul_overflow(a.i, b.i, &r); break;
        case T_SLASH:
        case T_PCT:
            if (b.i == 0 || (a.i == INT64_MIN && b.i == -1)) {
                *why = b.i == 0 ? "division by zero" : "overflow";
                return false;
            }
            r = n->op == T_SLASH ? a.i / b.i : a.i % b.i;
            break;
        case T_EQ: r = a.i == b.i; break;
        case T_NE: r = a.i != b.i; break;
        case T_LT: r = a.i < b.i; break;
        case T_LE: r = a.i <= b.i; break;
        case T_GT: r = a.i > b.i; break;
        default: r = a.i >= b.i; break;
        }
        if (!ok) {
            *why = "overflow";
            return false;
        }
        *v = (sg_dsl_value){n->type, r};
        return true;
    default: break;
    }
    *why = "only ints, bools and dtypes of grid variables can be computed here";
    return false;
}

bool sg_dsl_eval(const sg_dsl_node *n, const sg_dsl_value *grid, sg_dsl_value *out,
                 const char **why) {
    return eval(n, grid, out, why);
}
