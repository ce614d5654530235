/* test_formula.c: derivatives.yaml's formula parser (gen/formula.h): precedence, associativity
 * and each construct through the canonical print, the template/less-than ambiguity, the tree's
 * fields, refusals with their offsets and messages, depth limits, out of memory, and every
 * formula of the corpus parsed and printed to a fixed point. */
#include "check.h"
#include "formula.h"

#include <stdint.h>
#include <yaml.h>

static sg_arena *arena;

/* The canonical print of s, or "ERROR @off: msg". Returned in a static buffer. */
static const char *canon(const char *s) {
    static char out[4096];
    sg_fx_error err;
    sg_fx *x = sg_fx_parse(arena, s, strlen(s), &err);
    if (!x) {
        snprintf(out, sizeof out, "ERROR @%u: %s", err.off, err.msg);
        return out;
    }
    sg_buf b;
    sg_buf_init(&b);
    sg_fx_print(&b, x);
    snprintf(out, sizeof out, "%s", b.data ? b.data : "");
    sg_buf_free(&b);
    return out;
}

#define CANON(in, want) CHECK_STR(canon(in), want)

static void test_precedence(void) {
    CANON("a + b * c", "(a + (b * c))");
    CANON("a * b + c", "((a * b) + c)");
    CANON("a - b - c", "((a - b) - c)");
    CANON("a / b * c % d", "(((a / b) * c) % d)");
    CANON("a << b + c", "(a << (b + c))");
    CANON("a >> 1 << 2", "((a >> 1) << 2)");
    CANON("a < b == c > d", "((a < b) == (c > d))");
    CANON("a <= b >= c", "((a <= b) >= c)");
    CANON("a == b != c", "((a == b) != c)");
    CANON("a & b ^ c | d", "(((a & b) ^ c) | d)");
    CANON("a | b & c", "(a | (b & c))");
    CANON("a | b && c", "((a | b) && c)");
    CANON("a || b && c", "(a || (b && c))");
    CANON("a && b || c && d", "((a && b) || (c && d))");
    CANON("a == b & c", "((a == b) & c)");
    CANON("a + b < c << d", "((a + b) < (c << d))");
    /* unary binds tighter than any binary operator and looser than postfix */
    CANON("-a * b", "((-a) * b)");
    CANON("-x.f()", "(-x.f())");
    CANON("!a.defined() || b", "((!a.defined()) || b)");
    CANON("~-+!x", "(~(-(+(!x))))");
    CANON("- -x", "(-(-x))");
    CANON("a * *b", "(a * (*b))");
    CANON("c ? *dtype : x.scalar_type()", "(c ? (*dtype) : x.scalar_type())");
    CANON("a - -b", "(a - (-b))");
    /* the conditional: loosest, right associative */
    CANON("a ? b : c ? d : e", "(a ? b : (c ? d : e))");
    CANON("a ? b ? c : d : e", "(a ? (b ? c : d) : e)");
    CANON("a || b ? c + 1 : d", "((a || b) ? (c + 1) : d)");
    CANON("f(c ? a : b, d)", "f((c ? a : b), d)");
    /* parentheses leave no node */
    CANON("(a + b) * c", "((a + b) * c)");
    CANON("((a))", "a");
    CANON("a - (b - c)", "(a - (b - c))");
    CANON(" \t a\n+\r\nb ", "(a + b)");
}

static void test_constructs(void) {
    CANON("grad * self.sgn()", "(grad * self.sgn())");
    CANON("at::native::get_nested_tensor_impl(self)->get_nested_sizes()",
          "at::native::get_nested_tensor_impl(self)->get_nested_sizes()");
    CANON("grads[0].defined()", "grads[0].defined()");
    CANON("self[i + 1][j]", "self[(i + 1)][j]");
    CANON("f()", "f()");
    CANON("f(a,b ,  c)", "f(a, b, c)");
    CANON("(a + b).sum()", "(a + b).sum()");
    CANON("at :: scalar_tensor ( 0. , grad . options ( ) )",
          "at::scalar_tensor(0., grad.options())");
    CANON(":: std :: nullopt", "::std::nullopt");
    CANON("auto_element_wise", "auto_element_wise");
    /* literals keep their spelling */
    CANON("f(0, 0., .5, 1e-5, 1.5E+3, 0x1F, 2.3025850929940456)",
          "f(0, 0., .5, 1e-5, 1.5E+3, 0x1F, 2.3025850929940456)");
    CANON("not_implemented(\"inplace version of acosh\")",
          "not_implemented(\"inplace version of acosh\")");
    CANON("f(\"a \\\"b\\\" \\\\\")", "f(\"a \\\"b\\\" \\\\\")");
    CANON("f(\"\")", "f(\"\")");
    /* a member of a number literal prints with parentheses: 1.f would be a suffix */
    CANON("(1).f()", "(1).f()");
    CANON("(0.5).x", "(0.5).x");
    /* brace lists, as arguments and after a type */
    CANON("f({ a, b }, {}, {{0, 0}})", "f({a, b}, {}, {{0, 0}})");
    CANON("{}", "{}");
    CANON("IntArrayRef({})", "IntArrayRef({})");
    CANON("IntArrayRef{1, 2}", "IntArrayRef{1, 2}");
    CANON("std::vector<int64_t>{}", "std::vector<int64_t>{}");
    CANON("x.f{1}", "ERROR @3: expected an operator or the end of the formula, found '{'");
    /* comments are whitespace */
    CANON("f(x, /*sorted=*/false)", "f(x, false)");
    CANON("-grad * self.div(other, /*rounding_mode=*/\"trunc\")", /* docs/autograd.md's */
          "((-grad) * self.div(other, \"trunc\"))");
    CANON("f(/* a ** b */ x /**/)", "f(x)");
    CANON("a // the rest of the line\n + b", "(a + b)");
}

static void test_tree(void) {
    sg_fx_error err;
    const char *s = "grad * self.sgn()";
    sg_fx *x = sg_fx_parse(arena, s, strlen(s), &err);
    CHECK(x && x->kind == SG_FX_BINARY && x->nkids == 2);
    if (!x) return;
    CHECK_STR(x->text, "*");
    CHECK(x->off == 0 && x->len == 17 && x->height == 4);
    sg_fx *call = x->kids[1];
    CHECK(call->kind == SG_FX_CALL && call->nkids == 1 && !call->braced && !call->text);
    CHECK(call->off == 7 && call->len == 10);
    sg_fx *m = call->kids[0];
    CHECK(m->kind == SG_FX_MEMBER && !m->arrow && m->nkids == 1 && m->off == 7 && m->len == 8);
    CHECK_STR(m->text, "sgn");
    CHECK(m->kids[0]->kind == SG_FX_IDENT && m->kids[0]->height == 1);
    CHECK_STR(m->kids[0]->text, "self");
    CHECK(x->kids[0]->off == 0 && x->kids[0]->len == 4);

    s = "std::tuple<Tensor, c10::SymInt, 2>{}";
    x = sg_fx_parse(arena, s, strlen(s), &err);
    CHECK(x && x->kind == SG_FX_CALL && x->braced && x->nkids == 1);
    if (!x) return;
    sg_fx *t = x->kids[0];
    CHECK(t->kind == SG_FX_TEMPLATE && t->nkids == 3 && t->off == 0 && t->len == 34);
    CHECK_STR(t->text, "std::tuple");
    CHECK(t->kids[0]->kind == SG_FX_IDENT && t->kids[1]->kind == SG_FX_IDENT &&
          t->kids[2]->kind == SG_FX_INT);
    CHECK_STR(t->kids[1]->text, "c10::SymInt");
    CHECK_STR(t->kids[2]->text, "2");

    s = "-x->y[\"k\"] ? 1 : 2.";
    x = sg_fx_parse(arena, s, strlen(s), &err);
    CHECK(x && x->kind == SG_FX_TERNARY && x->nkids == 3 && x->len == strlen(s));
    if (!x) return;
    sg_fx *u = x->kids[0];
    CHECK(u->kind == SG_FX_UNARY && u->nkids == 1 && u->off == 0 && u->len == 10);
    CHECK_STR(u->text, "-");
    sg_fx *ix = u->kids[0];
    CHECK(ix->kind == SG_FX_INDEX && ix->nkids == 2 && ix->kids[0]->arrow);
    CHECK(ix->kids[1]->kind == SG_FX_STRING && ix->kids[1]->off == 6 && ix->kids[1]->len == 3);
    CHECK_STR(ix->kids[1]->text, "k");
    CHECK(x->kids[1]->kind == SG_FX_INT && x->kids[2]->kind == SG_FX_FLOAT);

    /* a node spans its operands' parentheses; a parenthesised node the bytes inside them */
    s = "-(a + b) * ((c)).f()[(0)]";
    x = sg_fx_parse(arena, s, strlen(s), &err);
    CHECK(x && x->kind == SG_FX_BINARY && x->off == 0 && x->len == strlen(s));
    if (!x) return;
    CHECK(x->kids[0]->kind == SG_FX_UNARY && x->kids[0]->off == 0 && x->kids[0]->len == 8);
    CHECK(x->kids[0]->kids[0]->off == 2 && x->kids[0]->kids[0]->len == 5);
    sg_fx *ix2 = x->kids[1];
    CHECK(ix2->kind == SG_FX_INDEX && ix2->off == 11 && ix2->len == 14);
    CHECK(ix2->kids[1]->kind == SG_FX_INT && ix2->kids[1]->off == 22 && ix2->kids[1]->len == 1);
    CHECK(ix2->kids[0]->kind == SG_FX_CALL && ix2->kids[0]->off == 11 && ix2->kids[0]->len == 9);
    sg_fx *m2 = ix2->kids[0]->kids[0];
    CHECK(m2->kind == SG_FX_MEMBER && m2->off == 11 && m2->len == 7);
    CHECK(m2->kids[0]->off == 13 && m2->kids[0]->len == 1);
    s = "(a) ? (b) : (c)";
    x = sg_fx_parse(arena, s, strlen(s), &err);
    CHECK(x && x->kind == SG_FX_TERNARY && x->off == 0 && x->len == strlen(s));
    s = "std::vector<std::optional<T>>(n)";
    x = sg_fx_parse(arena, s, strlen(s), &err);
    CHECK(x && x->kind == SG_FX_CALL && x->off == 0 && x->len == strlen(s));
    if (x) {
        CHECK(x->kids[0]->len == 29 && x->kids[0]->kids[0]->off == 12);
        CHECK(x->kids[0]->kids[0]->len == 16);
    }

    s = "{}";
    x = sg_fx_parse(arena, s, 2, &err);
    CHECK(x && x->kind == SG_FX_BRACE && x->nkids == 0 && !x->text);

    /* not NUL-terminated: only n bytes are read */
    x = sg_fx_parse(arena, "a + bcd", 5, &err);
    CHECK(x && x->kind == SG_FX_BINARY && x->kids[1]->len == 1);
    if (x) CHECK_STR(x->kids[1]->text, "b");
}

static void test_templates(void) {
    CANON("std::tuple<Tensor, Tensor, Tensor>()", "std::tuple<Tensor, Tensor, Tensor>()");
    CANON("std::tuple<>()", "std::tuple<>()");
    CANON("std::get<0>(linalg_lu_jvp(A_t, P))", "std::get<0>(linalg_lu_jvp(A_t, P))");
    CANON("std::vector<c10::SymInt>(padding.size(), 0)", "std::vector<c10::SymInt>(padding.size(), 0)");
    CANON("c10::SymInt(1)", "c10::SymInt(1)");
    CANON("std::vector<std::optional<Tensor>>(n)", "std::vector<std::optional<Tensor>>(n)");
    CANON("std::vector < std::optional < Tensor > > (n)", "std::vector<std::optional<Tensor>>(n)");
    CANON("a<b<c<d>>>{}", "a<b<c<d>>>{}");
    CANON("at::OptionalArrayRef<c10::SymInt>(padded.sym_sizes())",
          "at::OptionalArrayRef<c10::SymInt>(padded.sym_sizes())");
    /* less-than: no list closed by '>' and followed by '(' or '{' */
    CANON("a < b", "(a < b)");
    CANON("x.size(0) < y", "(x.size(0) < y)");
    CANON("x.f < y > (z)", "((x.f < y) > z)"); /* a member is never a template */
    CANON("self_p < -lambd", "(self_p < (-lambd))");
    CANON("where(self < min, grad, g)", "where((self < min), grad, g)");
    CANON("f(self < other, 0)", "f((self < other), 0)");
    CANON("-3.0 < self", "((-3.0) < self)");
    CANON("self < 3.0", "(self < 3.0)");
    CANON("a < b > c", "((a < b) > c)");
    CANON("a < b >> c", "(a < (b >> c))");
    CANON("a<b>>c", "(a < (b >> c))");
    CANON("f(a < b, c > d)", "f((a < b), (c > d))");
    CANON("a < f(x)", "(a < f(x))");
    CANON("a < b[0]", "(a < b[0])");
    CANON("i < n && j > m", "((i < n) && (j > m))");
    /* as in C++, a list closed by '>' before '(' is a template-id whatever the names mean */
    CANON("a < b > (c)", "a<b>(c)");
    CANON("a<b>::c(x)", "ERROR @4: a name qualified by a template-id ('a<...>::') is not supported");
    CANON("std::get<0>", "ERROR @11: expected an expression, found the end of the formula");
}

static void check_error(const char *s, size_t n, uint32_t off, const char *msg) {
    sg_fx_error err;
    sg_fx *x = sg_fx_parse(arena, s, n, &err);
    CHECK(x == NULL);
    if (err.off != off) fprintf(stderr, "  offset %u, expected %u for: %.60s\n", err.off, off, s);
    CHECK(err.off == off);
    CHECK_STR(err.msg, msg);
}
#define REFUSED(s, off, msg) check_error(s, strlen(s), off, msg)

static void test_refusals(void) {
    const char *lam = "grad.roll_symint(fmap(reverse_list_symint(shifts), [](c10::SymInt i){return "
                      "-i;}), reverse_list(dims))";
    REFUSED(lam, (uint32_t)(strchr(lam, '[') - lam), "a lambda is not supported");
    REFUSED("f([&](int x) { return x; })", 2, "a lambda is not supported");
    /* unbalanced */
    REFUSED("f(a, b", 6, "expected ')' to close the call at 1, found the end of the formula");
    REFUSED("f(a b)", 4, "expected ')' to close the call at 1, found a name");
    REFUSED("(a + b", 6, "expected ')' to close the parenthesis at 0, found the end of the formula");
    REFUSED("a + b)", 5, "expected an operator or the end of the formula, found ')'");
    REFUSED("x[0", 3, "expected ']' to close the index at 1, found the end of the formula");
    REFUSED("{a, b", 5, "expected '}' to close the brace list at 0, found the end of the formula");
    REFUSED("T{a", 3, "expected '}' to close the braced initialiser at 1, found the end of the formula");
    REFUSED("a ? b", 5, "expected ':' of the conditional at 2, found the end of the formula");
    REFUSED("f(a,)", 4, "expected an expression, found ')'");
    /* trailing or missing operands */
    REFUSED("a +", 3, "expected an expression, found the end of the formula");
    REFUSED("grad * ", 7, "expected an expression, found the end of the formula");
    REFUSED("a * / b", 4, "expected an expression, found '/'");
    REFUSED("", 0, "expected an expression, found the end of the formula");
    REFUSED("  /* only a comment */ ", 23, "expected an expression, found the end of the formula");
    REFUSED("a.", 2, "expected a member name after '.', found the end of the formula");
    REFUSED("a->1", 3, "expected a member name after '->', found an integer");
    REFUSED("at::", 4, "expected a name after '::', found the end of the formula");
    /* statements and side effects */
    REFUSED("a; b", 1, "';' is not supported: a formula is one expression");
    REFUSED("a = b", 2, "an assignment ('=') is not supported");
    REFUSED("f(a += b)", 4, "an assignment ('+=') is not supported");
    REFUSED("a <<= 1", 2, "an assignment ('<<=') is not supported");
    REFUSED("++a", 0, "'++' is not supported");
    REFUSED("a--", 1, "'--' is not supported");
    REFUSED("a, b", 1, "the comma operator is not supported");
    /* what the grammar does not list */
    REFUSED("x.size(0)(1)", 9, "only a name, a member or a template-id can be called");
    REFUSED("(a + b)(c)", 7, "only a name, a member or a template-id can be called");
    REFUSED("{1}.x", 3, "expected an operator or the end of the formula, found '.'");
    REFUSED("&a", 0, "expected an expression, found '&'");
    REFUSED("1L", 0, "a number suffix is not supported ('1L')");
    REFUSED("f(1e)", 2, "a number suffix is not supported ('1e')");
    REFUSED("'a'", 0, "a character literal is not supported");
    REFUSED("a @ b", 2, "unexpected character '@'");
    REFUSED("a \x01", 2, "unexpected byte 0x01");
    check_error("a\0b", 3, 1, "unexpected byte 0x00");
    REFUSED("a b", 2, "expected an operator or the end of the formula, found a name");
    REFUSED("sizeof(x)", 0, "the C++ keyword 'sizeof' is not supported");
    REFUSED("static_cast<double>(x)", 0, "the C++ keyword 'static_cast' is not supported");
    REFUSED("f(new T)", 2, "the C++ keyword 'new' is not supported");
    REFUSED("x.template f<int>()", 2, "the C++ keyword 'template' is not supported");
    REFUSED("a < return", 4, "the C++ keyword 'return' is not supported");
    CANON("double(x) + newer + sizeof_x + this->y", "(((double(x) + newer) + sizeof_x) + this->y)");
    CANON("true && !false || nullptr", "((true && (!false)) || nullptr)");
    CANON("std::vector<bool>{}", "std::vector<bool>{}");
    /* unterminated */
    REFUSED("not_implemented(\"abc)", 16, "unterminated string literal");
    REFUSED("f(\"a\nb\")", 2, "unterminated string literal"); /* a string ends on its line */
    REFUSED("a /* b", 2, "unterminated comment");
    REFUSED("a /* b *", 2, "unterminated comment");
}

/* s repeated n times, then tail (freed by the caller). */
static char *repeat(const char *head, const char *s, size_t n, const char *tail) {
    size_t hl = strlen(head), sl = strlen(s), tl = strlen(tail);
    char *r = malloc(hl + sl * n + tl + 1);
    memcpy(r, head, hl);
    for (size_t i = 0; i < n; i++) memcpy(r + hl + i * sl, s, sl);
    memcpy(r + hl + sl * n, tail, tl + 1);
    return r;
}

/* s parses, and its print is a fixed point; returns the tree's height (0 if refused). */
static int round_trip(const char *s) {
    sg_fx_error err;
    sg_fx *x = sg_fx_parse(arena, s, strlen(s), &err);
    CHECK(x != NULL);
    if (!x) {
        fprintf(stderr, "  refused @%u (%s): %.60s\n", err.off, err.msg, s);
        return 0;
    }
    sg_buf b1, b2;
    sg_buf_init(&b1), sg_buf_init(&b2);
    sg_fx_print(&b1, x);
    sg_fx *y = sg_fx_parse(arena, b1.data, b1.len, &err);
    CHECK(y != NULL);
    if (y) {
        sg_fx_print(&b2, y);
        CHECK(b1.len == b2.len && !memcmp(b1.data, b2.data, b1.len));
        CHECK(y->height == x->height);
    } else {
        fprintf(stderr, "  print refused @%u (%s): %.60s\n", err.off, err.msg, b1.data);
    }
    sg_buf_free(&b1), sg_buf_free(&b2);
    return x->height;
}

static void test_depth(void) {
    const char *tree = "the formula's tree is deeper than 64 levels";
    const char *nest = "parentheses and operators nest deeper than 129 levels";
    /* parentheses build no node but are a level of the parser each, the formula the first */
    char *s = repeat("", "(", 128, "a");
    char *t = repeat(s, ")", 128, "");
    CHECK_STR(canon(t), "a");
    free(s), free(t);
    s = repeat("", "(", 129, "a");
    REFUSED(s, 129, nest);
    free(s);
    /* the highest trees of each shape parse, and their prints (which add parentheses) too */
    s = repeat("", "- ", 63, "a"); /* unary operators */
    CHECK(round_trip(s) == 64);
    free(s);
    s = repeat("", "* ", 63, "a");
    CHECK(round_trip(s) == 64);
    free(s);
    s = repeat("a", "+a", 63, ""); /* a left-deep tree the parser builds in a loop */
    CHECK(round_trip(s) == 64);
    free(s);
    s = repeat("", "a+(", 63, "a");
    t = repeat(s, ")", 63, ""); /* right-deep */
    CHECK(round_trip(t) == 64);
    free(s), free(t);
    s = repeat("", "a?b:", 63, "c"); /* the conditional, right associative */
    CHECK(round_trip(s) == 64);
    free(s);
    s = repeat("", "a?", 63, "b");
    t = repeat(s, ":c", 63, "");
    CHECK(round_trip(t) == 64);
    free(s), free(t);
    s = repeat("", "f(-", 31, "a");
    t = repeat(s, ")", 31, "");
    CHECK(round_trip(t) == 63);
    free(s), free(t);
    s = repeat("a", ".f()", 31, "");
    CHECK(round_trip(s) == 63);
    free(s);
    s = repeat("std::vector", "<a", 62, "");
    t = repeat(s, ">", 62, "()");
    CHECK(round_trip(t) == 64);
    CHECK(strncmp(canon(t), "std::vector<a<a<", 16) == 0);
    free(s), free(t);
    /* one level more is refused where the level is added */
    s = repeat("", "- ", 100, "a");
    REFUSED(s, 72, tree); /* the 37th '-' from the left is the 64th over a */
    free(s);
    s = repeat("a", "+a", 70, "");
    REFUSED(s, 127, tree); /* the 64th '+' */
    free(s);
    s = repeat("a", ".f()", 40, "");
    REFUSED(s, 127, tree); /* the 32nd call: member and call are a level each */
    free(s);
    /* a megabyte of each opening shape: refused at a limit, in time, without a crash */
    const char *shapes[] = {"(", "f(", "{", "- ", "!", "a[", "a?", "a?b:", "a<", "std::tuple<",
                            "a+", "x.f().", "T{", "(-"};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        s = repeat("", shapes[i], (1u << 20) / strlen(shapes[i]), "a");
        sg_fx_error err;
        CHECK(sg_fx_parse(arena, s, strlen(s), &err) == NULL);
        if (strcmp(err.msg, tree) != 0) CHECK_STR(err.msg, nest);
        CHECK(err.off < 2048);
        free(s);
    }
}

/* Fails the allocation numbered fail_at (0-based) and every later one. */
typedef struct failing {
    int count, fail_at;
} failing;

static void *failing_alloc(void *ud, void *ptr, size_t size) {
    failing *f = ud;
    if (!ptr && size == 0) return NULL;
    if (ptr) {
        free(ptr);
        return NULL;
    }
    if (f->count++ >= f->fail_at) return NULL;
    return malloc(size);
}

static void test_out_of_memory(void) {
    /* long enough to need several of the arena's chunks */
    char *s = repeat("f(", "std::vector<c10::SymInt>(padding.size(), 0) + a[i] * -b.c(d, {1, 2}), ", 4000,
                     "x)");
    sg_fx_error err;
    bool done = false;
    int failures = 0;
    for (int k = 0; k < 1000 && !done; k++) {
        failing f = {0, k};
        sg_arena *a = sg_arena_new(failing_alloc, &f);
        if (!a) continue;
        sg_fx *x = sg_fx_parse(a, s, strlen(s), &err);
        if (x) {
            done = true;
        } else {
            failures++;
            CHECK_STR(err.msg, "out of memory");
        }
        sg_arena_free(a);
    }
    CHECK(done);
    CHECK(failures > 1);
    free(s);
}

/* ---- the corpus -------------------------------------------------------------------------- */

typedef struct formulas {
    const char **v;
    size_t       n, cap;
} formulas;

static void add_formula(formulas *f, const yaml_node_t *n) {
    if (n->type != YAML_SCALAR_NODE) return;
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 1024;
        f->v = realloc(f->v, f->cap * sizeof *f->v);
    }
    f->v[f->n++] = (const char *)n->data.scalar.value;
}

/* Every string value of an entry but name's, and those under dispatch: {KEY: {input: formula}}. */
static void collect(yaml_document_t *doc, formulas *f) {
    yaml_node_t *root = yaml_document_get_root_node(doc);
    if (!root || root->type != YAML_SEQUENCE_NODE) return;
    for (yaml_node_item_t *it = root->data.sequence.items.start; it < root->data.sequence.items.top; it++) {
        yaml_node_t *e = yaml_document_get_node(doc, *it);
        if (e->type != YAML_MAPPING_NODE) continue;
        for (yaml_node_pair_t *p = e->data.mapping.pairs.start; p < e->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key), *v = yaml_document_get_node(doc, p->value);
            if (k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, "name"))
                continue;
            if (v->type == YAML_SCALAR_NODE) add_formula(f, v);
            if (v->type != YAML_MAPPING_NODE) continue;
            for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
                yaml_node_t *d = yaml_document_get_node(doc, q->value);
                if (d->type != YAML_MAPPING_NODE) continue;
                for (yaml_node_pair_t *r = d->data.mapping.pairs.start; r < d->data.mapping.pairs.top; r++)
                    add_formula(f, yaml_document_get_node(doc, r->value));
            }
        }
    }
}

/* x's bytes lie in s[0, n) and hold its kids'; a leaf's bytes spell its text (a name's without
 * spaces, a string's with its quotes). */
static bool spans_ok(const sg_fx *x, const char *s, size_t n) {
    if ((size_t)x->off + x->len > n) return false;
    for (uint32_t i = 0; i < x->nkids; i++) {
        const sg_fx *k = x->kids[i];
        if (k->off < x->off || k->off + k->len > x->off + x->len || !spans_ok(k, s, n)) return false;
    }
    if (x->kind == SG_FX_IDENT) {
        size_t j = 0;
        for (uint32_t i = x->off; i < x->off + x->len; i++)
            if (s[i] != ' ' && s[i] != x->text[j++]) return false;
        return x->text[j] == '\0';
    }
    if (x->kind == SG_FX_INT || x->kind == SG_FX_FLOAT)
        return strlen(x->text) == x->len && !memcmp(x->text, s + x->off, x->len);
    if (x->kind == SG_FX_STRING)
        return strlen(x->text) + 2 == x->len && !memcmp(x->text, s + x->off + 1, x->len - 2);
    return true;
}

/* Returns false when the corpus is absent. */
static bool test_corpus(void) {
    const char *path = SG_CORPUS_DIR "/derivatives.yaml";
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        printf("test_formula: corpus checks skipped: %s is absent\n", path);
        return false;
    }
    yaml_parser_t yp;
    yaml_document_t doc;
    yaml_parser_initialize(&yp);
    yaml_parser_set_input_file(&yp, fp);
    CHECK(yaml_parser_load(&yp, &doc));
    formulas f = {0};
    collect(&doc, &f);
    CHECK(f.n > 1300); /* 1,362 in PyTorch 2.11's */
    size_t lambdas = 0, refused = 0, fixed = 0;
    int max_height = 0;
    for (size_t i = 0; i < f.n; i++) {
        const char *s = f.v[i];
        bool lambda = strstr(s, "[](") != NULL;
        lambdas += lambda;
        sg_fx_error err;
        sg_fx *x = sg_fx_parse(arena, s, strlen(s), &err);
        if (!x) {
            refused++;
            if (!lambda) printf("refused @%u (%s): %s\n", err.off, err.msg, s);
            CHECK(lambda);
            if (lambda) CHECK_STR(err.msg, "a lambda is not supported");
            continue;
        }
        if (lambda) printf("parsed, though it holds a lambda: %s\n", s);
        CHECK(!lambda);
        if (x->height > max_height) max_height = x->height;
        if (!spans_ok(x, s, strlen(s))) printf("node bytes wrong: %s\n", s);
        CHECK(spans_ok(x, s, strlen(s)));
        sg_buf b1, b2;
        sg_buf_init(&b1), sg_buf_init(&b2);
        sg_fx_print(&b1, x);
        sg_fx *y = sg_fx_parse(arena, b1.data, b1.len, &err);
        if (!y) printf("its print is refused @%u (%s): %s\n", err.off, err.msg, b1.data);
        CHECK(y != NULL);
        if (y) {
            sg_fx_print(&b2, y);
            if (b1.len == b2.len && !memcmp(b1.data, b2.data, b1.len)) fixed++;
            else printf("not a fixed point:\n  %s\n  %s\n", b1.data, b2.data);
            CHECK(y->height == x->height);
        }
        sg_buf_free(&b1), sg_buf_free(&b2);
    }
    printf("test_formula: %zu formulas, %zu refused (%zu with a lambda), %zu printed to a fixed "
           "point, deepest %d\n", f.n, refused, lambdas, fixed, max_height);
    CHECK(lambdas == 1 && refused == 1);
    CHECK(fixed == f.n - refused);
    free(f.v);
    yaml_document_delete(&doc);
    yaml_parser_delete(&yp);
    fclose(fp);
    return true;
}

int main(void) {
    arena = sg_arena_new(NULL, NULL);
    test_precedence();
    test_constructs();
    test_tree();
    test_templates();
    test_refusals();
    test_depth();
    test_out_of_memory();
    bool corpus = test_corpus();
    sg_arena_free(arena);
    int rc = check_result("test_formula");
    return rc == 0 && !corpus ? 77 : rc;
}
