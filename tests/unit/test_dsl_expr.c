/* test_dsl_expr.c: the predicate language of DSL declarations (gen/dsl_expr.c): what parses
 * and type-checks, the C it becomes, the operands of a top-level && chain, constant evaluation,
 * and every refusal with the column it names inside the expression (a dtype compared with an
 * int, an unknown argument, a Tensor used as an int, nesting past the bound, bad syntax). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include "../../gen/dsl_expr.h"

/* The names of an op like _fused_rms_norm(Tensor input, int[] normalized_shape, Tensor? weight,
 * float? eps), a grid {dtype, N}, and a Scalar argument the language cannot read. */
static const sg_dsl_sym syms[] = {
    {"input", SG_DSLS_ARG, SG_DSLT_TENSOR, false, 0, NULL},
    {"normalized_shape", SG_DSLS_ARG, SG_DSLT_INT_LIST, false, 1, NULL},
    {"weight", SG_DSLS_ARG, SG_DSLT_TENSOR, true, 2, NULL},
    {"eps", SG_DSLS_ARG, SG_DSLT_FLOAT, true, 3, NULL},
    {"alpha", SG_DSLS_ARG, SG_DSLT_ERROR, false, 4, "a Scalar"},
    {"dtype", SG_DSLS_GRID, SG_DSLT_DTYPE, false, 0, NULL},
    {"N", SG_DSLS_GRID, SG_DSLT_INT, false, 1, NULL},
    {"capability", SG_DSLS_CAP, SG_DSLT_INT, false, 0, NULL},
};

static const sg_dsl_sym *lookup(void *ud, const char *name) {
    (void)ud;
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (strcmp(syms[i].name, name) == 0) return &syms[i];
    return NULL;
}

static void sym_c(void *ud, sg_buf *b, const sg_dsl_sym *s) {
    (void)ud;
    if (s->kind == SG_DSLS_GRID) sg_buf_puts(b, s->index == 0 ? "SG_FLOAT32" : "INT64_C(1024)");
    else sg_buf_puts(b, s->name);
}

static sg_source src = {"decl.yaml", "- when: x\n", 10};

/* The C of n, or with split the C of each operand of its top-level && chain joined by " ; "
 * ("N operands" where there are more than 4). */
static void emit_c(sg_buf *b, const sg_dsl_node *n, bool split) {
    sg_dsl_emit_env    env = {sym_c, NULL};
    const sg_dsl_node *ops[4] = {n};
    uint32_t           count = split ? sg_dsl_conjuncts(n, ops, 4) : 1;
    if (count > 4) sg_buf_printf(b, "%u operands", count);
    for (uint32_t i = 0; i < count && count <= 4; i++) {
        if (i) sg_buf_puts(b, " ; ");
        sg_dsl_emit(b, ops[i], &env);
    }
}

/* Parses and checks text as `want`; the C it becomes (emit_c) in *c (caller frees), messages
 * in *msg. */
static bool run_as(const char *text, sg_dsl_type want, bool split, char **c, char **msg) {
    sg_arena *a = sg_arena_new(NULL, NULL);
    sg_diag d;
    sg_diag_init(&d);
    sg_dsl_text t = {text, strlen(text), {&src, 1, 9}, NULL, 0};
    sg_dsl_scope sc = {lookup, NULL, "an argument of the op or a grid variable"};
    sg_dsl_node *n = sg_dsl_parse(a, &t, &d);
    bool ok = n && sg_dsl_check(n, &sc, want, "the expression", &t, &d);
    sg_buf b;
    sg_buf_init(&b);
    if (ok) emit_c(&b, n, split);
    sg_buf_putc(&b, '\0');
    *c = b.data;
    sg_buf_putc(&d.out, '\0');
    *msg = strdup(d.out.data);
    CHECK(ok == (d.nerrors == 0));
    sg_diag_free(&d);
    sg_arena_free(a);
    return ok;
}

static bool run(const char *text, sg_dsl_type want, char **c, char **msg) {
    return run_as(text, want, false, c, msg);
}

static void expect_c(const char *text, sg_dsl_type want, const char *c_expected) {
    char *c, *msg;
    CHECK(run(text, want, &c, &msg));
    CHECK_STR(c, c_expected);
    if (msg[0]) fprintf(stderr, "unexpected: %s\n", msg);
    free(c);
    free(msg);
}

/* The message names line 1 and column 9 + the offset of the problem (the scalar starts at
 * column 9), and holds `what`. */
static void expect_error(const char *text, sg_dsl_type want, unsigned col, const char *what) {
    char *c, *msg, where[64];
    CHECK(!run(text, want, &c, &msg));
    snprintf(where, sizeof where, "decl.yaml:1:%u: error: ", col);
    CHECK_HAS(msg, where);
    CHECK_HAS(msg, what);
    free(c);
    free(msg);
}

static void test_emits(void) {
    expect_c("input.dtype == dtype && input.contiguous", SG_DSLT_BOOL,
             "((sg_dslg_dtype(input, &sg_ok) == SG_FLOAT32) && sg_dslg_contiguous(input, &sg_ok))");
    expect_c("input.size(-1) == N", SG_DSLT_BOOL,
             "(sg_dslg_size(input, sg_dslg_sub(0, INT64_C(1), &sg_ok), &sg_ok) == INT64_C(1024))");
    expect_c("normalized_shape.len == 1 && normalized_shape[0] == N", SG_DSLT_BOOL,
             "((sg_dslg_len(normalized_shape) == INT64_C(1)) && "
             "(sg_dslg_item(normalized_shape, INT64_C(0), &sg_ok) == INT64_C(1024)))");
    expect_c("weight != None && aligned(weight, 16)", SG_DSLT_BOOL,
             "((weight != NULL) && sg_dslg_aligned(weight, INT64_C(16), &sg_ok))");
    /* an optional float read through its guard; int and float mix as doubles */
    expect_c("eps == None ? 1e-07 : eps", SG_DSLT_FLOAT,
             "((eps == NULL) ? (double)1e-07 : (double)sg_dslg_opt_float(eps, &sg_ok))");
    expect_c("input.numel / N % 3", SG_DSLT_INT,
             "sg_dslg_mod(sg_dslg_div(sg_dslg_numel(input, &sg_ok), INT64_C(1024), &sg_ok), INT64_C(3), &sg_ok)");
    expect_c("capability >= 90 || !(N < 2)", SG_DSLT_BOOL,
             "((capability >= INT64_C(90)) || !((INT64_C(1024) < INT64_C(2))))");
    /* precedence as in C: * binds tighter than +, + than <, < than == */
    expect_c("1 + 2 * 3 < 7 == true", SG_DSLT_BOOL,
             "((sg_dslg_add(INT64_C(1), sg_dslg_mul(INT64_C(2), INT64_C(3), &sg_ok), &sg_ok) < INT64_C(7)) "
             "== true)");
}

static void test_refusals(void) {
    /* a dtype compared with an int: the column of '==' */
    expect_error("input.dtype == 4", SG_DSLT_BOOL, 9 + 12, "cannot compare a dtype with an int");
    /* an unknown argument: the column of the name */
    expect_error("input.numel > 0 && bias != None", SG_DSLT_BOOL, 9 + 19,
                 "unknown name 'bias'");
    /* a Tensor used as an int */
    expect_error("input > 4", SG_DSLT_BOOL, 9, "'input' is a Tensor, not a number");
    expect_error("input", SG_DSLT_INT, 9, "'input' is a Tensor, not an int");
    expect_error("normalized_shape[input] == 1", SG_DSLT_BOOL, 9 + 17,
                 "'input' is a Tensor, not an int");
    /* an argument of a type the language has not */
    expect_error("alpha == 1", SG_DSLT_BOOL, 9, "'alpha' cannot be used here: a Scalar");
    /* a member of the wrong type; None where nothing is optional */
    expect_error("N.dim == 1", SG_DSLT_BOOL, 9 + 2, "'.dim' needs a Tensor, not an int");
    expect_error("input == None", SG_DSLT_BOOL, 9, "only an optional argument can be None");
    expect_error("N % 1.5 == 0", SG_DSLT_BOOL, 9 + 2, "'%' needs ints");
    expect_error("input.numel", SG_DSLT_BOOL, 9, "must be a bool, not an int");
    expect_error("N > 0 ? dtype : 1", SG_DSLT_INT, 9 + 6, "the branches of '?' differ");
    /* syntax */
    expect_error("input.numel = 4", SG_DSLT_BOOL, 9 + 12, "'=' is not an operator");
    expect_error("N > 0 & N < 4", SG_DSLT_BOOL, 9 + 6, "did you mean '&&'");
    expect_error("(N > 0", SG_DSLT_BOOL, 9 + 6, "expected ')' to close '('");
    expect_error("N > ", SG_DSLT_BOOL, 9 + 4, "expected a value, found the end");
    expect_error("N > 0 N", SG_DSLT_BOOL, 9 + 6, "unexpected a name after the expression");
    expect_error("input.shape", SG_DSLT_BOOL, 9 + 6, "unknown member 'shape'");
    expect_error("N == 12abc", SG_DSLT_BOOL, 9 + 7, "bad number");
    expect_error("N == 99999999999999999999", SG_DSLT_BOOL, 9 + 5, "does not fit in 64 bits");
    expect_error("N == $", SG_DSLT_BOOL, 9 + 5, "unexpected character '$'");
    expect_error("", SG_DSLT_BOOL, 9, "empty expression");
}

/* Nesting: at the bound it parses; past it, a clear error and no deep recursion, whatever the
 * depth of the input (a million parentheses, or as many '!'). */
static void test_nesting(void) {
    enum { BIG = 1000000 };
    char *buf = malloc(2 * BIG + 16), *c, *msg;
    /* at the bound: parses */
    size_t k = 0;
    for (int i = 0; i < SG_DSL_MAX_DEPTH - 1; i++) buf[k++] = '(';
    buf[k++] = 'N';
    for (int i = 0; i < SG_DSL_MAX_DEPTH - 1; i++) buf[k++] = ')';
    memcpy(buf + k, " > 0", 5);
    CHECK(run(buf, SG_DSLT_BOOL, &c, &msg));
    free(c), free(msg);
    /* one past it: refused at the parenthesis that goes too deep */
    memmove(buf + 1, buf, strlen(buf) + 1);
    buf[0] = '(';
    k = strlen(buf);
    memcpy(buf + k - 4, ") > 0", 6);
    expect_error(buf, SG_DSLT_BOOL, 9 + SG_DSL_MAX_DEPTH, "nested too deeply");
    /* a million of them, and a million '!' */
    memset(buf, '(', BIG);
    strcpy(buf + BIG, "N");
    expect_error(buf, SG_DSLT_BOOL, 9 + SG_DSL_MAX_DEPTH, "nested too deeply");
    memset(buf, '!', BIG); /* the top level counts one: the 48th '!' is one too many */
    expect_error(buf, SG_DSLT_BOOL, 9 + SG_DSL_MAX_DEPTH - 1, "nested too deeply");
    free(buf);
}

/* Constant evaluation (constexprs): grid variables' values, C's arithmetic, the guards as
 * refusals with a reason. */
static void test_eval(void) {
    static const struct { const char *text; int64_t want; const char *why; } cases[] = {
        {"N * 2 + 1", 2049, NULL},
        {"N / 3", 341, NULL},
        {"-N % 1000", -24, NULL},
        {"dtype == bfloat16 ? 1 : N > 1000 && !(N == 7) ? N / 512 : 3", 2, NULL},
        {"N / (N - N)", 0, "division by zero"},
        {"N % 0", 0, "division by zero"},
        {"9223372036854775807 + N", 0, "overflow"},
        {"input.numel", 0, "grid variables"},
    };
    sg_dsl_value grid[2] = {{SG_DSLT_DTYPE, 6 /* float32 */}, {SG_DSLT_INT, 1024}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sg_arena *a = sg_arena_new(NULL, NULL);
        sg_diag d;
        sg_diag_init(&d);
        sg_dsl_text t = {cases[i].text, strlen(cases[i].text), {&src, 1, 9}, NULL, 0};
        sg_dsl_scope sc = {lookup, NULL, "names"};
        sg_dsl_node *n = sg_dsl_parse(a, &t, &d);
        bool typed = n && sg_dsl_check(n, &sc, SG_DSLT_INT, "it", &t, &d);
        CHECK(typed); /* input.numel checks too: only evaluation refuses it */
        sg_dsl_value v = {SG_DSLT_ERROR, -1};
        const char *why = NULL;
        bool ok = n && sg_dsl_eval(n, grid, &v, &why);
        if (cases[i].why) {
            CHECK(!ok);
            CHECK_HAS(why, cases[i].why);
        } else {
            CHECK(ok && v.i == cases[i].want);
        }
        sg_diag_free(&d);
        sg_arena_free(a);
    }
}

/* The operands of text's top-level && chain, each as C, joined by " ; ". */
static void expect_conjuncts(const char *text, const char *want) {
    char *c, *msg;
    CHECK(run_as(text, SG_DSLT_BOOL, true, &c, &msg));
    CHECK_STR(c, want);
    free(c);
    free(msg);
}

static void test_conjuncts(void) {
    expect_conjuncts("input.contiguous", "sg_dslg_contiguous(input, &sg_ok)");
    expect_conjuncts("input.dtype == dtype && input.contiguous && N > 2",
                     "(sg_dslg_dtype(input, &sg_ok) == SG_FLOAT32) ; "
                     "sg_dslg_contiguous(input, &sg_ok) ; (INT64_C(1024) > INT64_C(2))");
    /* a parenthesised && and an || stay whole: only the top-level chain splits */
    expect_conjuncts("input.contiguous && (N > 2 && N < 9) && (N == 1 || N == 2)",
                     "sg_dslg_contiguous(input, &sg_ok) ; "
                     "((INT64_C(1024) > INT64_C(2)) && (INT64_C(1024) < INT64_C(9))) ; "
                     "((INT64_C(1024) == INT64_C(1)) || (INT64_C(1024) == INT64_C(2)))");
    /* more than the room given: the count only */
    expect_conjuncts("N > 1 && N > 2 && N > 3 && N > 4 && N > 5", "5 operands");
}

int main(void) {
    test_conjuncts();
    test_eval();
    test_emits();
    test_refusals();
    test_nesting();
    return check_result("test_dsl_expr");
}
