/* formula_parse.c: recursive descent over derivatives.yaml's formulas (grammar: formula.h).
 *
 * Depth: every node records its height and a node that would be higher than SG_FX_MAX_DEPTH is
 * refused where it is built; the parser's own recursion (expressions, unary operators, template
 * argument lists) is counted against SG_FX_MAX_NESTING, so neither this parser nor a walker of
 * its trees can overflow the stack. Template-ids are tried tentatively: a failed try leaves no error and the
 * '<' is read as less-than. */
#include "formula.h"
#include "formula_lex.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct parser {
    sg_arena    *a;
    const char  *s;   /* the arena's NUL-terminated copy of the formula */
    uint32_t     n;
    uint32_t     pos; /* where the token after t starts lexing */
    sg_ftoken    t;   /* the current token */
    uint32_t     last_end; /* where the token before t ended: a node's end */
    int          depth;
    bool         failed;
    bool         oom;  /* failed for want of memory: even a tentative parse stops */
    sg_fx_error *err;
} parser;

static void next(parser *p) {
    p->last_end = p->t.end;
    sg_fx_lex(p->s, p->n, &p->pos, &p->t);
}

/* Records the first error only: later ones are consequences. */
static void *fail(parser *p, uint32_t off, const char *fmt, ...) {
    if (p->failed) return NULL;
    p->failed = true;
    p->err->off = off;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
    va_end(ap);
    return NULL;
}

static void *oom(parser *p) {
    if (!p->failed) p->oom = true;
    return fail(p, p->t.start, "out of memory");
}

/* What the current token is, for "found ..." in messages. */
static void *unexpected(parser *p, const char *what) {
    const sg_ftoken *t = &p->t;
    switch (t->kind) {
    case SG_FT_ASSIGN:
        return fail(p, t->start, "an assignment ('%.*s') is not supported", (int)(t->end - t->start),
                    p->s + t->start);
    case SG_FT_INCDEC:
        return fail(p, t->start, "'%.*s' is not supported", 2, p->s + t->start);
    case SG_FT_SEMI:
        return fail(p, t->start, "';' is not supported: a formula is one expression");
    case SG_FT_CHAR:
        return fail(p, t->start, "a character literal is not supported");
    case SG_FT_BADNUM:
        return fail(p, t->start, "a number suffix is not supported ('%.*s')",
                    (int)(t->end - t->start > 32 ? 32 : t->end - t->start), p->s + t->start);
    case SG_FT_BADSTR: return fail(p, t->start, "unterminated string literal");
    case SG_FT_BADCOMMENT: return fail(p, t->start, "unterminated comment");
    case SG_FT_KEYWORD:
        return fail(p, t->start, "the C++ keyword '%.*s' is not supported", (int)(t->end - t->start),
                    p->s + t->start);
    case SG_FT_BAD: {
        unsigned char c = (unsigned char)p->s[t->start];
        if (c > 0x20 && c < 0x7f) return fail(p, t->start, "unexpected character '%c'", c);
        return fail(p, t->start, "unexpected byte 0x%02x", c);
    }
    default: return fail(p, t->start, "expected %s, found %s", what, sg_ft_describe(t->kind));
    }
}

static bool accept(parser *p, sg_ft_kind k) {
    if (p->t.kind != k) return false;
    next(p);
    return true;
}

/* ---- nodes ------------------------------------------------------------------------------- */

/* A growing list of kids in the arena (a doubling copy wastes at most as much as it keeps). */
typedef struct kidlist {
    sg_fx  **v;
    uint32_t n, cap;
} kidlist;

static bool push(parser *p, kidlist *l, sg_fx *x) {
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 4;
        sg_fx **v = sg_arena_alloc(p->a, cap * sizeof *v);
        if (!v) return oom(p), false;
        if (l->n) memcpy(v, l->v, l->n * sizeof *v);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return true;
}

/* A node over bytes [off, end) with the given kids; refused where it would be too high. at is
 * the offset an error names (the operator or bracket that adds the level). */
static sg_fx *node(parser *p, sg_fx_kind kind, uint32_t off, uint32_t end, uint32_t at,
                   sg_fx **kids, uint32_t nkids) {
    unsigned h = 0;
    for (uint32_t i = 0; i < nkids; i++)
        if (kids[i]->height > h) h = kids[i]->height;
    if (h + 1 > SG_FX_MAX_DEPTH)
        return fail(p, at, "the formula's tree is deeper than %d levels", SG_FX_MAX_DEPTH);
    sg_fx *x = sg_arena_alloc(p->a, sizeof *x);
    if (!x) return oom(p);
    x->kind = kind;
    x->off = off;
    x->len = end - off;
    x->height = (uint16_t)(h + 1);
    x->kids = kids;
    x->nkids = nkids;
    return x;
}

static sg_fx **kids2(parser *p, sg_fx *a, sg_fx *b, sg_fx *c) {
    sg_fx **v = sg_arena_alloc(p->a, 3 * sizeof *v);
    if (!v) return oom(p);
    v[0] = a, v[1] = b, v[2] = c;
    return v;
}

static bool set_text(parser *p, sg_fx *x, const char *s, size_t n) {
    x->text = sg_arena_strndup(p->a, s, n);
    if (!x->text) return oom(p), false;
    return true;
}

/* Recursion counts here: each expression and each unary operator (template argument lists
 * count themselves). Parentheses build no node, so the heights alone would not bound it; the
 * tree's height is checked as nodes are built. */
static bool enter(parser *p) {
    if (++p->depth > SG_FX_MAX_NESTING)
        return fail(p, p->t.start, "parentheses and operators nest deeper than %d levels",
                    SG_FX_MAX_NESTING),
               false;
    return true;
}

/* ---- names and template-ids -------------------------------------------------------------- */

/* name := ['::'] ident ('::' ident)*; the current token is '::' or a name. The text is the
 * name without spaces ("at::native::f"); '::' not followed by an identifier is an error. */
static sg_fx *parse_name(parser *p) {
    uint32_t off = p->t.start, end = off;
    size_t cap = 64, len = 0;
    char *buf = sg_arena_alloc(p->a, cap);
    if (!buf) return oom(p);
    bool need = true; /* an identifier must come next */
    for (;;) {
        const char *piece;
        size_t n;
        if (p->t.kind == SG_FT_COLONCOLON && !need) {
            piece = "::", n = 2, need = true;
        } else if (p->t.kind == SG_FT_COLONCOLON && len == 0) {
            piece = "::", n = 2; /* leading */
        } else if (p->t.kind == SG_FT_IDENT && need) {
            piece = p->s + p->t.start, n = p->t.end - p->t.start, need = false;
        } else if (need) {
            return unexpected(p, "a name after '::'");
        } else {
            break;
        }
        if (len + n + 1 > cap) {
            while (len + n + 1 > cap) cap *= 2;
            char *grown = sg_arena_alloc(p->a, cap);
            if (!grown) return oom(p);
            memcpy(grown, buf, len);
            buf = grown;
        }
        memcpy(buf + len, piece, n);
        len += n;
        end = p->t.end;
        next(p);
    }
    sg_fx *x = node(p, SG_FX_IDENT, off, end, off, NULL, 0);
    if (!x) return NULL;
    buf[len] = '\0';
    x->text = buf;
    return x;
}

typedef enum { TRY_NO, TRY_YES, TRY_ERR } try_result;

static try_result try_targs(parser *p, sg_fx *name, sg_fx **out, bool outer);

/* targ := name ['<' targs '>'] | int */
static try_result try_targ(parser *p, sg_fx **out) {
    if (p->t.kind == SG_FT_INT) {
        sg_fx *x = node(p, SG_FX_INT, p->t.start, p->t.end, p->t.start, NULL, 0);
        if (!x || !set_text(p, x, p->s + p->t.start, p->t.end - p->t.start)) return TRY_ERR;
        next(p);
        *out = x;
        return TRY_YES;
    }
    if (p->t.kind != SG_FT_IDENT && p->t.kind != SG_FT_COLONCOLON) return TRY_NO;
    sg_fx *name = parse_name(p);
    if (!name) return p->oom ? TRY_ERR : TRY_NO;
    *out = name;
    if (p->t.kind != SG_FT_LT) return TRY_YES;
    return try_targs(p, name, out, false);
}

/* The current token is '<' after name. Reads a template argument list closed by '>' (or the
 * first '>' of '>>'); for the outermost list (outer) '(' or '{' must follow. TRY_NO leaves the
 * parser where it was with no error (a syntax error inside the list only says it is no
 * template); TRY_ERR is out of memory or a refusal. */
static try_result try_targs(parser *p, sg_fx *name, sg_fx **out, bool outer) {
    uint32_t pos0 = p->pos, last0 = p->last_end;
    sg_ftoken t0 = p->t;
    int depth0 = p->depth;
    kidlist args = {0};
    unsigned h = 0;
    if (p->depth + 1 > SG_FX_MAX_NESTING) goto undo; /* too deep to be a template: less-than */
    p->depth++;
    next(p);
    if (p->t.kind != SG_FT_GT && p->t.kind != SG_FT_SHR) {
        for (;;) {
            sg_fx *arg = NULL;
            try_result r = try_targ(p, &arg);
            if (r == TRY_ERR) return TRY_ERR;
            if (r == TRY_NO) goto undo;
            if (!push(p, &args, arg)) return TRY_ERR;
            if (arg->height > h) h = arg->height;
            if (!accept(p, SG_FT_COMMA)) break;
        }
    }
    uint32_t end = p->t.start + 1;
    if (p->t.kind == SG_FT_GT) {
        next(p);
    } else if (p->t.kind == SG_FT_SHR) {
        p->pos = p->t.start + 1; /* take the first '>', leave the second */
        next(p);
        p->last_end = end;
    } else {
        goto undo;
    }
    if (outer) {
        if (p->t.kind == SG_FT_COLONCOLON) {
            fail(p, p->t.start, "a name qualified by a template-id ('%s<...>::') is not supported",
                 name->text);
            return TRY_ERR;
        }
        if (p->t.kind != SG_FT_LPAREN && p->t.kind != SG_FT_LBRACE) goto undo;
    }
    if (h + 1 > SG_FX_MAX_DEPTH) goto undo;
    sg_fx *x = node(p, SG_FX_TEMPLATE, name->off, end, name->off, args.v, args.n);
    if (!x) return TRY_ERR;
    x->text = name->text;
    *out = x;
    p->depth = depth0;
    return TRY_YES;
undo:
    if (p->oom) return TRY_ERR;
    p->failed = false;
    p->err->off = 0;
    p->err->msg[0] = '\0';
    p->pos = pos0;
    p->last_end = last0;
    p->t = t0;
    p->depth = depth0;
    return TRY_NO;
}

/* ---- expressions ------------------------------------------------------------------------- */

static sg_fx *parse_expr(parser *p);

/* Items up to the closing token into l; open is the offset of the opening bracket, what the
 * construct's name for messages ("the call"). */
static bool parse_list(parser *p, kidlist *l, sg_ft_kind close, uint32_t open, const char *what) {
    if (p->t.kind != close) {
        for (;;) {
            sg_fx *x = parse_expr(p);
            if (!x || !push(p, l, x)) return false;
            if (!accept(p, SG_FT_COMMA)) break;
        }
    }
    if (p->t.kind != close) {
        char want[96];
        snprintf(want, sizeof want, "'%c' to close %s at %u", close == SG_FT_RPAREN ? ')' : '}',
                 what, open);
        return unexpected(p, want), false;
    }
    return true;
}

static sg_fx *parse_primary(parser *p) {
    sg_ftoken t = p->t;
    switch (t.kind) {
    case SG_FT_INT:
    case SG_FT_FLOAT:
    case SG_FT_STRING: {
        sg_fx_kind k = t.kind == SG_FT_INT ? SG_FX_INT : t.kind == SG_FT_FLOAT ? SG_FX_FLOAT : SG_FX_STRING;
        sg_fx *x = node(p, k, t.start, t.end, t.start, NULL, 0);
        uint32_t q = k == SG_FX_STRING; /* the quotes stay out of the text */
        if (!x || !set_text(p, x, p->s + t.start + q, t.end - t.start - 2 * q)) return NULL;
        next(p);
        return x;
    }
    case SG_FT_IDENT:
    case SG_FT_COLONCOLON: {
        sg_fx *x = parse_name(p);
        if (!x || p->t.kind != SG_FT_LT) return x;
        sg_fx *tmpl = x;
        try_result r = try_targs(p, x, &tmpl, true);
        return r == TRY_ERR ? NULL : tmpl;
    }
    case SG_FT_LPAREN: { /* parse_expr counts the level */
        next(p);
        sg_fx *x = parse_expr(p);
        if (!x) return NULL;
        if (p->t.kind != SG_FT_RPAREN) {
            char want[64];
            snprintf(want, sizeof want, "')' to close the parenthesis at %u", t.start);
            return unexpected(p, want);
        }
        next(p);
        return x;
    }
    case SG_FT_LBRACE: {
        next(p);
        kidlist l = {0};
        if (!parse_list(p, &l, SG_FT_RBRACE, t.start, "the brace list")) return NULL;
        sg_fx *x = node(p, SG_FX_BRACE, t.start, p->t.end, t.start, l.v, l.n);
        if (x) next(p);
        return x;
    }
    case SG_FT_LBRACKET: return fail(p, t.start, "a lambda is not supported");
    default: return unexpected(p, "an expression");
    }
}

static bool callable(const sg_fx *x) {
    return x->kind == SG_FX_IDENT || x->kind == SG_FX_MEMBER || x->kind == SG_FX_TEMPLATE;
}

/* A node built on an operand spans the operand's parentheses too: start is where the operand's
 * first token starts and p->last_end where the node's last token ended. */
static sg_fx *parse_postfix(parser *p) {
    uint32_t start = p->t.start;
    sg_fx *x = parse_primary(p);
    if (!x || x->kind == SG_FX_BRACE) return x; /* {..}.f, {..}(..) and {..}[..] are not C++ */
    for (;;) {
        sg_ftoken t = p->t;
        if (t.kind == SG_FT_LPAREN || (t.kind == SG_FT_LBRACE && (x->kind == SG_FX_IDENT ||
                                                                  x->kind == SG_FX_TEMPLATE))) {
            if (!callable(x))
                return fail(p, t.start, "only a name, a member or a template-id can be called");
            next(p);
            kidlist l = {0};
            if (!push(p, &l, x)) return NULL;
            bool brace = t.kind == SG_FT_LBRACE;
            if (!parse_list(p, &l, brace ? SG_FT_RBRACE : SG_FT_RPAREN, t.start,
                            brace ? "the braced initialiser" : "the call"))
                return NULL;
            x = node(p, SG_FX_CALL, start, p->t.end, t.start, l.v, l.n);
            if (!x) return NULL;
            x->braced = brace;
            next(p);
        } else if (t.kind == SG_FT_LBRACKET) {
            next(p);
            sg_fx *i = parse_expr(p);
            if (!i) return NULL;
            if (p->t.kind != SG_FT_RBRACKET) {
                char want[64];
                snprintf(want, sizeof want, "']' to close the index at %u", t.start);
                return unexpected(p, want);
            }
            sg_fx **k = kids2(p, x, i, NULL);
            if (!k || !(x = node(p, SG_FX_INDEX, start, p->t.end, t.start, k, 2))) return NULL;
            next(p);
        } else if (t.kind == SG_FT_DOT || t.kind == SG_FT_ARROW) {
            next(p);
            if (p->t.kind != SG_FT_IDENT)
                return unexpected(p, t.kind == SG_FT_DOT ? "a member name after '.'"
                                                         : "a member name after '->'");
            sg_fx **k = kids2(p, x, NULL, NULL);
            if (!k || !(x = node(p, SG_FX_MEMBER, start, p->t.end, t.start, k, 1)) ||
                !set_text(p, x, p->s + p->t.start, p->t.end - p->t.start))
                return NULL;
            x->arrow = t.kind == SG_FT_ARROW;
            next(p);
        } else {
            return x;
        }
    }
}

static sg_fx *parse_unary(parser *p) {
    sg_ftoken t = p->t;
    /* '*': the corpus dereferences optionals (*dtype) */
    if (t.kind != SG_FT_MINUS && t.kind != SG_FT_PLUS && t.kind != SG_FT_BANG &&
        t.kind != SG_FT_TILDE && t.kind != SG_FT_STAR)
        return parse_postfix(p);
    if (!enter(p)) return NULL;
    next(p);
    sg_fx *operand = parse_unary(p);
    if (!operand) return NULL;
    p->depth--;
    sg_fx **k = kids2(p, operand, NULL, NULL);
    sg_fx *x = k ? node(p, SG_FX_UNARY, t.start, p->last_end, t.start, k, 1) : NULL;
    if (!x || !set_text(p, x, p->s + t.start, 1)) return NULL;
    return x;
}

/* C++'s binary precedence, loosest first; 0 is no binary operator. */
static int precedence(sg_ft_kind k) {
    switch (k) {
    case SG_FT_OROR: return 1;
    case SG_FT_ANDAND: return 2;
    case SG_FT_PIPE: return 3;
    case SG_FT_CARET: return 4;
    case SG_FT_AMP: return 5;
    case SG_FT_EQ: case SG_FT_NE: return 6;
    case SG_FT_LT: case SG_FT_LE: case SG_FT_GT: case SG_FT_GE: return 7;
    case SG_FT_SHL: case SG_FT_SHR: return 8;
    case SG_FT_PLUS: case SG_FT_MINUS: return 9;
    case SG_FT_STAR: case SG_FT_SLASH: case SG_FT_PERCENT: return 10;
    default: return 0;
    }
}

/* Precedence climbing: operators of at least min bind here, left to right; the recursion is at
 * most one level per precedence. */
static sg_fx *parse_binary(parser *p, int min) {
    uint32_t start = p->t.start;
    sg_fx *left = parse_unary(p);
    for (;;) {
        if (!left) return NULL;
        sg_ftoken op = p->t;
        int prec = precedence(op.kind);
        if (!prec || prec < min) return left;
        next(p);
        sg_fx *right = parse_binary(p, prec + 1);
        if (!right) return NULL;
        sg_fx **k = kids2(p, left, right, NULL);
        if (!k) return NULL;
        left = node(p, SG_FX_BINARY, start, p->last_end, op.start, k, 2);
        if (left && !set_text(p, left, p->s + op.start, op.end - op.start)) return NULL;
    }
}

static sg_fx *parse_expr(parser *p) {
    if (!enter(p)) return NULL;
    uint32_t start = p->t.start;
    sg_fx *c = parse_binary(p, 1);
    if (c && p->t.kind == SG_FT_QUESTION) {
        uint32_t q = p->t.start;
        next(p);
        sg_fx *a = parse_expr(p);
        if (!a) return NULL;
        if (p->t.kind != SG_FT_COLON) {
            char want[64];
            snprintf(want, sizeof want, "':' of the conditional at %u", q);
            return unexpected(p, want);
        }
        next(p);
        sg_fx *b = parse_expr(p);
        sg_fx **k = b ? kids2(p, c, a, b) : NULL;
        c = k ? node(p, SG_FX_TERNARY, start, p->last_end, q, k, 3) : NULL;
    }
    p->depth--;
    return c;
}

sg_fx *sg_fx_parse(sg_arena *a, const char *s, size_t n, sg_fx_error *err) {
    parser p = {.a = a, .err = err};
    err->off = 0;
    err->msg[0] = '\0';
    if (n >= UINT32_MAX) return fail(&p, 0, "the formula is longer than %u bytes", UINT32_MAX - 1);
    p.n = (uint32_t)n;
    p.s = sg_arena_strndup(a, s, n); /* the scanner wants a NUL sentinel after the text */
    if (!p.s) return fail(&p, 0, "out of memory");
    next(&p);
    sg_fx *x = parse_expr(&p);
    if (x && p.t.kind != SG_FT_EOF) {
        if (p.t.kind == SG_FT_COMMA)
            return fail(&p, p.t.start, "the comma operator is not supported");
        return unexpected(&p, "an operator or the end of the formula");
    }
    return x;
}
