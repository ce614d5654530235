/* test_yaml_load.c: the YAML loader: positions, typed keys, errors, tags files, the corpus. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */

#include "check.h"
#include "emit.h"
#include "model.h"

#include <unistd.h>

typedef struct fx {
    sg_model m;
    sg_diag  d;
    int      nerr;
} fx;

static void load(fx *f, const char *text) {
    CHECK(sg_model_init(&f->m) == 0);
    sg_diag_init(&f->d);
    f->d.max_errors = 0;
    f->nerr = sg_load_buffer(&f->m, "t.yaml", text, strlen(text), &f->d);
}

static const char *out(const fx *f) { return f->d.out.data ? f->d.out.data : ""; }

static void done(fx *f) {
    sg_diag_free(&f->d);
    sg_model_free(&f->m);
}

static bool at(sg_pos p, uint32_t line, uint32_t col) {
    if (p.line == line && p.col == col) return true;
    fprintf(stderr, "  position %u:%u, expected %u:%u\n", p.line, p.col, line, col);
    return false;
}

/* Loads text and checks that the diagnostics are exactly want. */
static void expect_diag(const char *text, const char *want) {
    fx f;
    load(&f, text);
    CHECK_STR(out(&f), want);
    CHECK(f.nerr == (int)f.d.nerrors);
    done(&f);
}

static const char full_entry[] =
    "# a comment\n"
    "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
    "  variants: function, method\n"
    "  dispatch:\n"
    "    CPU, CUDA: add_cpu\n"
    "    Meta: add_meta\n"
    "  structured: True\n"
    "  device_guard: false\n"
    "  tags: [core, pointwise]\n"
    "  autogen: add.out,  add.foo\n"
    "  precomputed:\n"
    "  - dim -> int dim\n"
    "  cpp_no_default_args: ['dim']\n"
    "  python_module: nn\n"
    "  structured_delegate: add.out\n"
    "  ufunc_inner_loop:\n"
    "    Generic: add (AllAndComplex)\n"
    "- func: my_ops::mul(Tensor self) -> Tensor\n"
    "  tags: core, inplace_view\n";

static void test_typed_keys(void) {
    fx f;
    load(&f, full_entry);
    CHECK_STR(out(&f), "");
    CHECK(f.nerr == 0 && f.m.nops == 2 && f.m.nsources == 1);
    sg_op *op = f.m.ops[0];
    CHECK(op->parsed);
    CHECK_STR(op->ns, "aten");
    CHECK_STR(op->schema.name, "add");
    CHECK_STR(op->func, "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
    CHECK(at(op->pos, 2, 3));
    CHECK(at(sg_op_pos_at(op, 0), 2, 9));
    CHECK(at(sg_op_pos_at(op, 11), 2, 20)); /* "Tensor self" */
    CHECK(op->has_variants && op->variants == (SG_VARIANT_FUNCTION | SG_VARIANT_METHOD));
    CHECK(op->has_dispatch && op->ndispatch == 2);
    if (op->ndispatch == 2) {
        sg_dispatch *d0 = &op->dispatch[0], *d1 = &op->dispatch[1];
        CHECK(d0->nkeys == 2 && d1->nkeys == 1);
        CHECK_STR(d0->keys[0], "CPU");
        CHECK_STR(d0->keys[1], "CUDA");
        CHECK_STR(d0->kernel, "add_cpu");
        CHECK(at(d0->key_pos[0], 5, 5) && at(d0->key_pos[1], 5, 10) && at(d0->pos, 5, 5));
        CHECK_STR(d1->keys[0], "Meta");
        CHECK_STR(d1->kernel, "add_meta");
        CHECK(at(d1->key_pos[0], 6, 5));
    }
    CHECK(op->structured == SG_TRUE && op->device_guard == SG_FALSE);
    CHECK(op->manual_cpp_binding == SG_UNSET && op->manual_kernel_registration == SG_UNSET);
    CHECK(op->use_const_ref_for_mutable_tensors == SG_UNSET);
    CHECK(op->tags.n == 2 && at(op->tags.pos[1], 9, 16));
    CHECK_STR(op->tags.items[1], "pointwise");
    CHECK(op->autogen.n == 2 && at(op->autogen.pos[1], 10, 22));
    CHECK_STR(op->autogen.items[0], "add.out");
    CHECK_STR(op->autogen.items[1], "add.foo");
    CHECK(op->precomputed.n == 1 && at(op->precomputed.pos[0], 12, 5));
    CHECK_STR(op->precomputed.items[0], "dim -> int dim");
    CHECK(op->cpp_no_default_args.n == 1 && at(op->cpp_no_default_args.pos[0], 13, 26));
    CHECK_STR(op->cpp_no_default_args.items[0], "dim");
    CHECK_STR(op->python_module, "nn");
    CHECK_STR(op->structured_delegate, "add.out");
    CHECK(op->structured_inherits == NULL && op->device_check == NULL);
    CHECK(op->ufunc_inner_loop && op->ufunc_inner_loop->kind == SG_Y_MAP &&
          op->ufunc_inner_loop->nitems == 2);
    /* Every key, as written, in order. */
    CHECK(op->nkeys == 12);
    if (op->nkeys == 12) {
        CHECK_STR(op->keys[0], "func");
        CHECK_STR(op->keys[11], "ufunc_inner_loop");
        CHECK(op->values[2]->kind == SG_Y_MAP && at(op->values[2]->pos, 5, 5));
    }
    const sg_ynode *v = sg_op_key(op, "variants");
    CHECK(v && v->kind == SG_Y_SCALAR && v->plain && at(v->pos, 3, 13));
    CHECK_STR(v ? v->text : NULL, "function, method");
    CHECK(sg_op_key(op, "nope") == NULL);

    sg_op *op2 = f.m.ops[1];
    CHECK_STR(op2->ns, "my_ops");
    CHECK(!op2->has_variants && op2->variants == SG_VARIANT_FUNCTION && !op2->has_dispatch);
    CHECK(op2->structured == SG_UNSET);
    CHECK(op2->tags.n == 2 && at(op2->tags.pos[0], 19, 9) && at(op2->tags.pos[1], 19, 15));
    done(&f);
}

/* Where character `off` of the func string of the only op is. */
static sg_pos func_pos(const char *text, uint32_t off, fx *f) {
    load(f, text);
    CHECK_STR(out(f), "");
    CHECK(f->m.nops == 1);
    return f->m.nops ? sg_op_pos_at(f->m.ops[0], off) : (sg_pos){0};
}

static void test_func_positions(void) {
    fx f;
    /* Single-quoted, with a doubled quote: positions after it move by one. */
    const char *sq = "- func: 'f(int b, str s=''a'') -> ()'\n";
    CHECK(at(func_pos(sq, 0, &f), 1, 10));
    CHECK_STR(f.m.ops[0]->func, "f(int b, str s='a') -> ()");
    CHECK(at(sg_op_pos_at(f.m.ops[0], 6), 1, 16));  /* b */
    CHECK(at(sg_op_pos_at(f.m.ops[0], 15), 1, 25)); /* the first quote of 'a' */
    CHECK(at(sg_op_pos_at(f.m.ops[0], 16), 1, 27)); /* a */
    CHECK(at(sg_op_pos_at(f.m.ops[0], 18), 1, 30)); /* ) */
    done(&f);
    /* Double-quoted with escapes: \x61 is one byte of the value, four of the source. */
    const char *dq = "- func: \"f(Tensor \\x61, int\\tb) -> ()\"\n";
    CHECK(at(func_pos(dq, 0, &f), 1, 10));
    CHECK_STR(f.m.ops[0]->func, "f(Tensor a, int\tb) -> ()");
    CHECK(at(sg_op_pos_at(f.m.ops[0], 9), 1, 19));  /* a: the backslash */
    CHECK(at(sg_op_pos_at(f.m.ops[0], 10), 1, 23)); /* , */
    CHECK(at(sg_op_pos_at(f.m.ops[0], 16), 1, 30)); /* b */
    done(&f);
    /* A plain scalar folded over two lines. */
    const char *fold = "- func: foo(Tensor a,\n    Tensor b) -> Tensor\n";
    CHECK(at(func_pos(fold, 4, &f), 1, 13));
    CHECK_STR(f.m.ops[0]->func, "foo(Tensor a, Tensor b) -> Tensor");
    CHECK(at(sg_op_pos_at(f.m.ops[0], 14), 2, 5));  /* the second Tensor */
    CHECK(at(sg_op_pos_at(f.m.ops[0], 21), 2, 12)); /* b */
    done(&f);
    /* Double-quoted over lines, with an escaped line break and trailing blanks. */
    const char *dql = "- func: \"foo(Tensor a,  \n     Tensor b,\\\n   int c) -> Tensor\"\n";
    CHECK(at(func_pos(dql, 0, &f), 1, 10));
    CHECK_STR(f.m.ops[0]->func, "foo(Tensor a, Tensor b,int c) -> Tensor");
    CHECK(at(sg_op_pos_at(f.m.ops[0], 14), 2, 6)); /* Tensor b */
    CHECK(at(sg_op_pos_at(f.m.ops[0], 23), 3, 4)); /* int c */
    done(&f);
    /* A literal block keeps its inner indentation. */
    const char *lit = "- func: |-\n    foo(Tensor a,\n      Tensor b) -> Tensor\n";
    CHECK(at(func_pos(lit, 0, &f), 2, 5));
    CHECK_STR(f.m.ops[0]->func, "foo(Tensor a,\n  Tensor b) -> Tensor");
    CHECK(at(sg_op_pos_at(f.m.ops[0], 16), 3, 7)); /* the second Tensor */
    done(&f);
    /* A flow mapping, and an anchor before the value. */
    const char *flow = "- {func: &x 'f() -> ()', variants: method}\n";
    CHECK(at(func_pos(flow, 0, &f), 1, 14));
    CHECK(f.m.ops[0]->variants == SG_VARIANT_METHOD);
    done(&f);
    /* Columns count bytes: a multi-byte character earlier on the line. */
    const char *utf = "- {python_module: \xc3\xa9, func: f(int x) -> ()}\n";
    CHECK(at(func_pos(utf, 2, &f), 1, 31));
    done(&f);
}

/* The op of text, loaded whatever errors it has (the schema may not parse). */
static sg_op *any_op(fx *f, const char *text) {
    load(f, text);
    CHECK(f->m.nops == 1);
    return f->m.nops ? f->m.ops[0] : NULL;
}

/* Cases the fuzzer found: each once mapped a character to the wrong place. */
static void test_func_positions_fuzzed(void) {
    fx f;
    /* Blanks that end a line are dropped even where the value goes on with an escaped space. */
    sg_op *op = any_op(&f, "- func: \"f(int a,  \n   \\ int b) -> ()\"\n");
    CHECK_STR(op->func, "f(int a,  int b) -> ()");
    CHECK(at(sg_op_pos_at(op, 8), 1, 20) && at(sg_op_pos_at(op, 9), 2, 4));
    CHECK(at(sg_op_pos_at(op, 10), 2, 6));
    done(&f);
    /* A break then an empty line: the first break vanishes, the empty line is the '\n'. */
    op = any_op(&f, "- func: \"f(int a,\n  \n   int b) -> ()\"\n");
    CHECK_STR(op->func, "f(int a,\nint b) -> ()");
    CHECK(at(sg_op_pos_at(op, 8), 2, 3) && at(sg_op_pos_at(op, 9), 3, 4));
    done(&f);
    /* NEL breaks a YAML line (and folds to a space); LS breaks it and stays in the value. */
    op = any_op(&f, "- func: \"f(int a,\xc2\x85 int b) -> ()\"\n");
    CHECK_STR(op->func, "f(int a, int b) -> ()");
    CHECK(at(sg_op_pos_at(op, 8), 1, 18) && at(sg_op_pos_at(op, 9), 1, 21));
    done(&f);
    op = any_op(&f, "- func: \"f(int a,\xe2\x80\xa8int b) -> ()\"\n");
    CHECK_STR(op->func, "f(int a,\xe2\x80\xa8int b) -> ()");
    CHECK(at(sg_op_pos_at(op, 11), 1, 21));
    done(&f);
    /* A tag and a comment before the value; an anchor's name ends before ':'. */
    op = any_op(&f, "- func: !!str # the schema\n    f() -> ()\n");
    CHECK(at(sg_op_pos_at(op, 0), 2, 5));
    done(&f);
    op = any_op(&f, "- func: &ab:c() -> ()\n");
    CHECK_STR(op->func, ":c() -> ()");
    CHECK(at(sg_op_pos_at(op, 0), 1, 12));
    done(&f);
}

/* A schema error is reported at the exact character: the parser's offset mapped back. */
static void test_schema_errors(void) {
    const char *text = "- func: \"f(Tensor a, \\x69nt?(a) x) -> ()\"\n";
    fx f;
    load(&f, text);
    CHECK(f.nerr == 1 && f.m.nops == 1 && !f.m.ops[0]->parsed);
    sg_arena *a = sg_arena_new(NULL, NULL);
    sg_schema s;
    sg_schema_error err;
    const char *func = "f(Tensor a, int?(a) x) -> ()";
    CHECK(sg_schema_parse(func, strlen(func), a, &s, &err) != SG_SCHEMA_OK);
    /* 'i' of int stands at the backslash (col 22); the rest follow the 4-byte escape. */
    uint32_t col = err.offset <= 12 ? 10 + err.offset : 10 + err.offset + 3;
    char want[512];
    snprintf(want, sizeof want, "t.yaml:1:%u: error: %s\n%s%*s^\n", col, err.msg, text, (int)col - 1, "");
    CHECK_STR(out(&f), want);
    sg_arena_free(a);
    done(&f);
    /* A failing op does not hide the next one's error. */
    load(&f, "- func: f(int?(a) x) -> ()\n- func: g(Tensor a -> ()\n- func: h() -> ()\n");
    CHECK(f.nerr == 2 && f.m.nops == 3 && !f.m.ops[1]->parsed && f.m.ops[2]->parsed);
    CHECK(strstr(out(&f), "t.yaml:1:") == out(&f) && strstr(out(&f), "\nt.yaml:2:") != NULL);
    done(&f);
}

static void test_key_errors(void) {
    expect_diag("- func: f() -> ()\n  foo: 1\n",
                "t.yaml:2:3: error: unknown key 'foo'\n  foo: 1\n  ^\n");
    expect_diag("- func: f() -> ()\n  variants: method\n  variants: function\n",
                "t.yaml:3:3: error: duplicate key 'variants'\n  variants: function\n  ^\n"
                "t.yaml:2:3: note: 'variants' was first given here\n  variants: method\n  ^\n");
    expect_diag("- func: f() -> ()\n  dispatch:\n    CPU: a\n    CPU: b\n",
                "t.yaml:4:5: error: duplicate key 'CPU'\n    CPU: b\n    ^\n"
                "t.yaml:3:5: note: 'CPU' was first given here\n    CPU: a\n    ^\n");
    expect_diag("- func: f() -> ()\n  structured: yes\n",
                "t.yaml:2:15: error: expected True or False for 'structured', not 'yes'\n"
                "  structured: yes\n              ^\n");
    expect_diag("- func: f() -> ()\n  device_guard: 'True'\n",
                "t.yaml:2:17: error: expected True or False for 'device_guard', not 'True'\n"
                "  device_guard: 'True'\n                ^\n");
    expect_diag("- func: f() -> ()\n  variants: function, mehtod\n",
                "t.yaml:2:23: error: unknown variant 'mehtod' (expected function or method)\n"
                "  variants: function, mehtod\n                      ^\n");
    expect_diag("- func: f() -> ()\n  autogen: a,,b\n",
                "t.yaml:2:14: error: empty name in 'autogen'\n  autogen: a,,b\n             ^\n");
    expect_diag("- variants: method\n",
                "t.yaml:1:3: error: entry has no 'func' key\n- variants: method\n  ^\n");
    expect_diag("- func: [a, b]\n",
                "t.yaml:1:9: error: expected a schema string for 'func', not a sequence\n"
                "- func: [a, b]\n        ^\n");
    expect_diag("- func:\n",
                "t.yaml:1:3: error: expected a schema string for 'func', not an empty value\n"
                "- func:\n  ^\n");
    expect_diag("- func: f() -> ()\n  dispatch: CPU\n",
                "t.yaml:2:13: error: expected a mapping of dispatch keys to kernels for 'dispatch', "
                "not 'CPU'\n  dispatch: CPU\n            ^\n");
    expect_diag("- func: f() -> ()\n  dispatch:\n    CPU: [a]\n",
                "t.yaml:3:10: error: expected a kernel name for 'CPU', not a sequence\n"
                "    CPU: [a]\n         ^\n");
    expect_diag("- func: f() -> ()\n  python_module: {a: b}\n",
                "t.yaml:2:18: error: expected a string for 'python_module', not a mapping\n"
                "  python_module: {a: b}\n                 ^\n");
    expect_diag("- func: f() -> ()\n  precomputed: x\n",
                "t.yaml:2:16: error: expected a list of strings for 'precomputed', not 'x'\n"
                "  precomputed: x\n               ^\n");
    expect_diag("- func: f() -> ()\n  ufunc_inner_loop: x\n",
                "t.yaml:2:21: error: expected a mapping for 'ufunc_inner_loop', not 'x'\n"
                "  ufunc_inner_loop: x\n                    ^\n");
    expect_diag("- func: f() -> ()\n  ufunc_inner_loop: {a: 1, a: 2}\n",
                "t.yaml:2:28: error: duplicate key 'a'\n  ufunc_inner_loop: {a: 1, a: 2}\n"
                "                           ^\n"
                "t.yaml:2:22: note: 'a' was first given here\n  ufunc_inner_loop: {a: 1, a: 2}\n"
                "                     ^\n");
    expect_diag("- f() -> ()\n",
                "t.yaml:1:3: error: expected an entry (a mapping with 'func:'), not 'f() -> ()'\n"
                "- f() -> ()\n  ^\n");
    /* Values quoted in messages are cut and made printable. */
    expect_diag("- func: f() -> ()\n  structured: \"\\x01 0123456789012345678901234567890123456789\"\n",
                "t.yaml:2:15: error: expected True or False for 'structured', "
                "not '? 012345678901234567890123456789...'\n"
                "  structured: \"\\x01 0123456789012345678901234567890123456789\"\n"
                "              ^\n");
}

static void test_many_keys(void) {
    /* A map of many keys: duplicates found by hashing, in written order. */
    static char text[64 * 1024];
    size_t n = (size_t)snprintf(text, sizeof text, "- func: f() -> ()\n  dispatch:\n");
    for (int i = 0; i < 1000; i++) n += (size_t)snprintf(text + n, sizeof text - n, "    K%d: k\n", i % 700);
    fx f;
    load(&f, text);
    CHECK(f.nerr == 300 && f.m.nops == 1 && f.m.ops[0]->ndispatch == 700);
    const char *first = "t.yaml:703:5: error: duplicate key 'K0'\n";
    CHECK(strncmp(out(&f), first, strlen(first)) == 0);
    done(&f);
}

static void test_yaml_errors(void) {
    expect_diag("", "t.yaml:1:1: error: file has no entries\n");
    expect_diag("# only a comment\n",
                "t.yaml:1:1: error: file has no entries\n# only a comment\n^\n");
    expect_diag("\n\n[]\n", "t.yaml:3:1: error: file has no entries\n[]\n^\n");
    expect_diag("func: f() -> ()\n",
                "t.yaml:1:1: error: expected a sequence of entries ('- func: ...'), not a mapping\n"
                "func: f() -> ()\n^\n");
    expect_diag("- func: f() -> ()\n\tvariants: method\n",
                "t.yaml:2:1: error: invalid YAML: found a tab character that violates indentation\n"
                "\tvariants: method\n^\n");
    expect_diag("- func: 'f() -> ()'\n\tvariants: method\n",
                "t.yaml:2:1: error: invalid YAML: found character that cannot start any token "
                "(a tab: YAML indents with spaces only)\n\tvariants: method\n^\n");
    expect_diag("- func: 'f() -> ()\n",
                "t.yaml:2:1: error: invalid YAML: found unexpected end of stream\n"
                "t.yaml:1:9: note: the quoted scalar starts here\n- func: 'f() -> ()\n        ^\n");
    expect_diag("- func: f() -> ()\n  variants: m\xff\n",
                "t.yaml:2:14: error: invalid YAML: invalid leading UTF-8 octet (byte 0xFF)\n"
                "  variants: m\\xFF\n             ^\n");
    expect_diag("- func: f() -> ()\n  variants: &a method\n- func: g() -> ()\n  variants: *a\n",
                "t.yaml:4:13: error: YAML aliases are not supported\n  variants: *a\n            ^\n");
    expect_diag("- func: f() -> ()\n---\n- func: g() -> ()\n",
                "t.yaml:2:1: error: a second YAML document: a file holds one sequence of entries\n"
                "---\n^\n");
    /* Deep nesting stops at 64 levels, without recursion. */
    static char deep[100001];
    memset(deep, '[', sizeof deep - 1);
    fx f;
    load(&f, deep);
    /* The line is cut to 200 bytes; the caret stays under the 65th '['. */
    static char want[512];
    char *w = want + sprintf(want, "t.yaml:1:65: error: nesting too deep (more than 64 levels)\n");
    w += sprintf(w, "%.200s...\n%64s^\n", deep, "");
    CHECK_STR(out(&f), want);
    done(&f);
}

static void test_tags_file(void) {
    fx f;
    load(&f, "# tags\n- tag: core\n  desc: |\n    Core ops.\n- tag: pointwise\n  desc: x\n");
    CHECK_STR(out(&f), "");
    CHECK(f.m.have_tags && f.m.ntags == 2 && f.m.nops == 0);
    if (f.m.ntags == 2) {
        CHECK_STR(f.m.tags[0].name, "core");
        CHECK_STR(f.m.tags[0].desc, "Core ops.\n");
        CHECK(at(f.m.tags[0].pos, 2, 3) && at(f.m.tags[1].pos, 5, 3));
        CHECK_STR(f.m.tags[1].name, "pointwise");
    }
    done(&f);
    expect_diag("- tag: a\n  desc: b\n  color: red\n- desc: c\n",
                "t.yaml:3:3: error: unknown key 'color'\n  color: red\n  ^\n"
                "t.yaml:4:3: error: entry has no 'tag' key\n- desc: c\n  ^\n");
}

static void test_files(void) {
    fx f;
    CHECK(sg_model_init(&f.m) == 0);
    sg_diag_init(&f.d);
    CHECK(sg_load_file(&f.m, "/nonexistent/x.yaml", &f.d) == 1);
    CHECK_STR(out(&f), "schemagen: error: cannot read '/nonexistent/x.yaml': No such file or directory\n");
    CHECK(sg_load_file(&f.m, SG_TESTS_DIR, &f.d) == 1);
    CHECK(strstr(out(&f), "Is a directory\n") != NULL);
    done(&f);

    /* A file on disk loads like the same bytes from memory. */
    char path[] = "/tmp/sg_test_yaml_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    CHECK(write(fd, full_entry, sizeof full_entry - 1) == (ssize_t)(sizeof full_entry - 1));
    close(fd);
    CHECK(sg_model_init(&f.m) == 0);
    sg_diag_init(&f.d);
    CHECK(sg_load_file(&f.m, path, &f.d) == 0 && f.m.nops == 2);
    CHECK(f.m.nsources == 1 && f.m.sources[0]->len == sizeof full_entry - 1);
    CHECK_STR(f.m.sources[0]->text, full_entry);
    CHECK_STR(f.m.sources[0]->path, path);
    done(&f);
    unlink(path);
}

/* Returns false when the corpus is absent (the caller reports the test as skipped). */
static bool test_corpus(void) {
    const char *nf = SG_CORPUS_DIR "/native_functions.yaml";
    if (access(nf, R_OK) != 0) {
        printf("test_yaml_load: corpus checks skipped: %s is absent\n", nf);
        return false;
    }
    fx f;
    CHECK(sg_model_init(&f.m) == 0);
    sg_diag_init(&f.d);
    CHECK(sg_load_file(&f.m, nf, &f.d) == 0);
    CHECK(sg_load_file(&f.m, SG_CORPUS_DIR "/tags.yaml", &f.d) == 0);
    CHECK_STR(out(&f), "");
    CHECK(f.m.nops == 2674 && f.m.have_tags && f.m.ntags > 0);
    uint32_t parsed = 0, dispatch = 0;
    for (uint32_t i = 0; i < f.m.nops; i++) {
        parsed += f.m.ops[i]->parsed;
        dispatch += f.m.ops[i]->has_dispatch;
        /* The func string's first character is where the source says. */
        const sg_op *op = f.m.ops[i];
        sg_pos p = sg_op_pos_at(op, 0);
        const char *line = op->pos.src->text;
        for (uint32_t l = 1; l < p.line; l++) line = strchr(line, '\n') + 1;
        if (strncmp(line + p.col - 1, op->func, strlen(op->func)) != 0) {
            CHECK(!"func string not found at its position");
            break;
        }
    }
    CHECK(parsed == 2674 && dispatch == 1658);
    done(&f);
    return true;
}

int main(void) {
    test_typed_keys();
    test_func_positions();
    test_func_positions_fuzzed();
    test_schema_errors();
    test_key_errors();
    test_many_keys();
    test_yaml_errors();
    test_tags_file();
    test_files();
    bool corpus = test_corpus();
    int rc = check_result("test_yaml_load");
    return rc == 0 && !corpus ? 77 : rc; /* skipped, unless something else failed */
}
