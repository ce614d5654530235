/* Large files load as two halves on two threads (yaml_load.c, load_parallel). Whatever the
 * file holds, the result must be that of loading it whole: the same ops with the same
 * positions, the same JSON, and the same diagnostics. Each case loads a file both ways. */
#include "check.h"
#include "emit.h"
#include "model.h"

typedef struct loaded {
    sg_model m;
    sg_diag  d;
    sg_buf   json;
} loaded;

static void load(loaded *l, const char *text, size_t len, bool one_piece) {
    CHECK(sg_model_init(&l->m) == 0);
    l->m.one_piece = one_piece;
    sg_diag_init(&l->d);
    sg_load_buffer(&l->m, "big.yaml", text, len, &l->d);
    sg_buf_init(&l->json);
    if (l->d.nerrors == 0) sg_emit_json(&l->json, &l->m);
}

static void unload(loaded *l) {
    sg_buf_free(&l->json);
    sg_diag_free(&l->d);
    sg_model_free(&l->m);
}

/* Positions in two models: each has its own sg_source for the same file. */
static bool same_pos(sg_pos a, sg_pos b) {
    return strcmp(a.src->path, b.src->path) == 0 && a.line == b.line && a.col == b.col;
}

/* Loads text both ways and compares everything observable. */
static void both_ways(const char *text, size_t len) {
    loaded a, b;
    load(&a, text, len, false);
    load(&b, text, len, true);
    CHECK(a.m.nops == b.m.nops);
    CHECK(a.d.nerrors == b.d.nerrors);
    CHECK_STR(a.d.out.data ? a.d.out.data : "", b.d.out.data ? b.d.out.data : "");
    CHECK(a.json.len == b.json.len && (a.json.len == 0 || memcmp(a.json.data, b.json.data, a.json.len) == 0));
    for (uint32_t i = 0; i < a.m.nops && i < b.m.nops; i++) {
        const sg_op *x = a.m.ops[i], *y = b.m.ops[i];
        if (!same_pos(x->pos, y->pos) || strcmp(x->func, y->func) != 0 ||
            !same_pos(sg_op_pos_at(x, 3), sg_op_pos_at(y, 3))) {
            CHECK(!"ops differ");
            fprintf(stderr, "  op %u: %s (%u:%u) vs %s (%u:%u)\n", i, x->func, x->pos.line,
                    x->pos.col, y->func, y->pos.line, y->pos.col);
            break;
        }
    }
    unload(&a);
    unload(&b);
}

/* A schema file of n entries, large enough to be split; `extra` replaces entry `at`. */
static char *big_file(int n, int at, const char *extra, size_t *len) {
    sg_buf b;
    sg_buf_init(&b);
    sg_buf_puts(&b, "# a generated file\n\n");
    for (int i = 0; i < n; i++) {
        if (i == at && extra) {
            sg_buf_puts(&b, extra);
            continue;
        }
        sg_buf_printf(&b, "- func: my_ops::op_%d(Tensor self, int x=%d, *, float eps=1e-05) -> Tensor\n"
                          "  variants: function\n  dispatch:\n    CPU, CUDA: op_%d_kernel\n"
                          "  tags: [core, pointwise]\n\n", i, i, i);
    }
    *len = b.len;
    return b.data;
}

static void test_clean_file(void) {
    size_t len;
    char *text = big_file(3000, -1, NULL, &len);
    CHECK(len > 300 * 1024); /* over the size that is split */
    both_ways(text, len);
    loaded a;
    load(&a, text, len, false);
    CHECK(a.m.nops == 3000 && a.d.nerrors == 0);
    CHECK(a.m.nadopted == 2); /* it was split */
    CHECK(a.m.ops[2999]->pos.line == 2 + 2999 * 6 + 1);
    unload(&a);
    free(text);
}

static void test_errors_in_second_half(void) {
    size_t len;
    char *text = big_file(3000, 2500, "- func: my_ops::bad(Tensor self, int?(a) x) -> Tensor\n"
                                      "  dispach:\n    CPU: k\n\n", &len);
    both_ways(text, len);
    loaded a;
    load(&a, text, len, false);
    CHECK(a.d.nerrors == 2 && a.m.nadopted == 0); /* loaded whole */
    CHECK(a.d.out.data && strstr(a.d.out.data, "big.yaml:15003:"));
    unload(&a);
    free(text);
    text = big_file(3000, 2000, "- func: f(Tensor x) -> Tensor\n   variants: function\n  bad\n", &len);
    both_ways(text, len);
    free(text);
}

/* Cuts that land inside a construct: the halves fail, the file loads whole. */
static void test_awkward_cuts(void) {
    size_t len;
    for (int at = 1400; at <= 1600; at += 50) {
        char *text = big_file(3000, at, "- func: f(Tensor x) -> Tensor\n  python_module: \"a\n- b\n- c\"\n\n",
                              &len);
        both_ways(text, len);
        free(text);
        text = big_file(3000, at, "- func: g(Tensor x) -> Tensor\n  tags: [core,\n- x]\n\n", &len);
        both_ways(text, len);
        free(text);
    }
    /* a file that is not a block sequence at column 0 is never split */
    sg_buf b;
    sg_buf_init(&b);
    for (int i = 0; i < 4000; i++) sg_buf_printf(&b, "  - func: op_%d(Tensor self) -> Tensor\n", i);
    both_ways(b.data, b.len);
    sg_buf_free(&b);
}

static void test_corpus(void) {
    FILE *f = fopen(SG_CORPUS_DIR "/native_functions.yaml", "rb");
    if (!f) {
        fprintf(stderr, "corpus absent: the corpus case is skipped\n");
        return;
    }
    sg_buf b;
    sg_buf_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sg_buf_putn(&b, chunk, n);
    fclose(f);
    both_ways(b.data, b.len);
    sg_buf_free(&b);
}

int main(void) {
    test_clean_file();
    test_errors_in_second_half();
    test_awkward_cuts();
    test_corpus();
    return check_result("test_load_split");
}
