/* The spool (gen/spool.h) keeps text in big blocks and hands it on unchanged; sg_check_json
 * groups and validates while the JSON is rendered on another thread, or puts together the JSON
 * the loader rendered op by op (SG_EARLY_JSON, with the one-op rules applied as ops load:
 * SG_EARLY_CHECKS), and must give exactly what sg_model_group, sg_validate then sg_emit_json
 * give: the same diagnostics, and the same JSON only where they passed. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "check.h"
#include "emit.h"
#include "model.h"
#include "par.h"

/* A sink that gathers what reaches it, counting the calls. */
typedef struct gather {
    sg_buf all;
    int    calls;
} gather;

static bool gather_sink(void *ud, const char *data, size_t len) {
    gather *g = ud;
    g->calls++;
    sg_buf_putn(&g->all, data, len);
    return true;
}

static void test_spool(void) {
    /* 9 MB in pieces of many sizes: more than two blocks, pieces across block ends */
    sg_spool s;
    sg_spool_init(&s);
    sg_buf want;
    sg_buf_init(&want);
    uint32_t x = 1;
    char     piece[70000];
    while (want.len < 9u << 20) {
        size_t n = (x = x * 1103515245u + 12345u) % sizeof piece;
        for (size_t i = 0; i < n; i++) piece[i] = (char)('a' + (i + want.len) % 26);
        CHECK(sg_spool_sink(&s, piece, n));
        sg_buf_putn(&want, piece, n);
    }
    CHECK(!s.oom);
    sg_buf got;
    sg_buf_init(&got);
    sg_spool_put(&s, &got);
    CHECK(got.len == want.len && memcmp(got.data, want.data, want.len) == 0);
    /* to a streaming buffer the blocks go as they are: one call each */
    gather g = {.calls = 0};
    sg_buf_init(&g.all);
    sg_buf stream;
    sg_buf_init(&stream);
    sg_buf_set_sink(&stream, gather_sink, &g);
    sg_buf_puts(&stream, "head:");
    sg_spool_put(&s, &stream);
    CHECK(sg_buf_flush(&stream));
    CHECK(g.all.len == want.len + 5 && memcmp(g.all.data + 5, want.data, want.len) == 0);
    CHECK(g.calls >= 4 && g.calls <= 5); /* "head:" then 3 blocks (4 MiB, less a header, each) */
    /* a spool of views: ranges across block ends, the whole, nothing; then text of its own */
    CHECK(s.len == want.len);
    sg_spool v;
    sg_spool_init(&v);
    size_t cuts[][2] = {{1000, 5u << 20}, {0, 10}, {7, 7}, {0, want.len}, {want.len - 3, want.len}};
    sg_buf expect;
    sg_buf_init(&expect);
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        sg_spool_view(&v, &s, cuts[i][0], cuts[i][1]);
        sg_buf_putn(&expect, want.data + cuts[i][0], cuts[i][1] - cuts[i][0]);
    }
    CHECK(sg_spool_sink(&v, "tail", 4));
    sg_buf_puts(&expect, "tail");
    CHECK(v.len == expect.len && !v.oom);
    got.len = 0;
    sg_spool_put(&v, &got);
    CHECK(got.len == expect.len && memcmp(got.data, expect.data, expect.len) == 0);
    sg_spool_free(&v); /* its own block and the views: s's text stays */
    sg_buf_free(&expect);
    sg_buf_free(&stream);
    sg_buf_free(&g.all);
    sg_buf_free(&got);
    sg_buf_free(&want);
    sg_spool_free(&s);
    CHECK(s.head == NULL);
}

/* n entries; entry `bad` (if >= 0) breaks an aten rule (an in-place op that returns nothing) */
static sg_buf schema_file(int n, int bad) {
    sg_buf b;
    sg_buf_init(&b);
    for (int i = 0; i < n; i++) {
        if (i == bad) sg_buf_printf(&b, "- func: op_%d_(Tensor(a!) self) -> ()\n\n", i);
        else
            sg_buf_printf(&b, "- func: op_%d(Tensor self, int x=%d, *, float eps=1e-05) -> Tensor\n"
                              "  variants: function\n  dispatch:\n    CPU: op_%d_kernel\n\n",
                          i, i, i);
    }
    return b;
}

/* The worker's share of the load, as the load noted it (0: leave it); below 1/2 the
 * validating thread writes the JSON's end. */
static double share;

/* Loads the file at `path` (text, or read from disk where text is NULL), then `tags` (NULL:
 * none) into m, which does the work `early` asks for as it loads. */
static void load(sg_model *m, sg_diag *d, unsigned early, const char *path, const sg_buf *text,
                 const char *tags) {
    CHECK(sg_model_init(m) == 0);
    sg_diag_init(d);
    m->early = early;
    if (text) sg_load_buffer(m, path, text->data, text->len, d);
    else sg_load_file(m, path, d);
    if (tags) sg_load_file(m, tags, d);
}

/* The three ways over the same input: diagnostics and JSON must agree. early_used: whether
 * the loader's JSON must have been used (a file big enough to load in pieces, without
 * errors, on two processors). Returns the JSON's size. */
static size_t three(const char *path, const sg_buf *text, const char *tags, bool want_errors,
                    bool early_used) {
    sg_model m1, m2, m3;
    sg_diag  d1, d2, d3;
    load(&m1, &d1, 0, path, text, tags);
    load(&m2, &d2, 0, path, text, tags);
    load(&m3, &d3, SG_EARLY_CHECKS | SG_EARLY_JSON, path, text, tags);
    int e1 = sg_model_group(&m1, &d1);
    e1 += sg_validate(&m1, &d1);
    sg_spool s, s3;
    sg_spool_init(&s);
    sg_spool_init(&s3);
    if (share > 0) sg_worker_note_share(m2.worker, share);
    int e2 = sg_check_json(&m2, &d2, &s);
    int e3 = sg_check_json(&m3, &d3, &s3);
    /* side by side from a few hundred ops, where there is a second processor */
    CHECK(sg_check_json_pays(&m2) == (m2.nops >= 256 && sg_cpu_count() > 1));
    CHECK(e1 == e2 && e1 == e3 && (e1 > 0) == want_errors);
    CHECK(m2.early_json == NULL);
    CHECK(!early_used || sg_cpu_count() < 2 || m3.early_json != NULL);
    /* ... and the one-op rules were applied as the ops loaded (validation skipped them) */
    uint32_t checked = 0;
    for (uint32_t i = 0; i < m3.nops; i++) checked += m3.ops[i]->checked;
    CHECK(!early_used || sg_cpu_count() < 2 || checked == m3.nops);
    CHECK_STR(d1.out.data ? d1.out.data : "", d2.out.data ? d2.out.data : "");
    CHECK_STR(d1.out.data ? d1.out.data : "", d3.out.data ? d3.out.data : "");
    sg_buf j1, j2, j3;
    sg_buf_init(&j1);
    sg_buf_init(&j2);
    sg_buf_init(&j3);
    if (!e1) sg_emit_json(&j1, &m1);
    sg_spool_put(&s, &j2);
    sg_spool_put(&s3, &j3);
    CHECK(j1.len == j2.len && (!j1.len || memcmp(j1.data, j2.data, j1.len) == 0));
    CHECK(j1.len == j3.len && (!j1.len || memcmp(j1.data, j3.data, j1.len) == 0));
    CHECK(want_errors ? j2.len == 0 : j2.len > 1000);
    size_t len = j2.len;
    sg_buf_free(&j1);
    sg_buf_free(&j2);
    sg_buf_free(&j3);
    sg_spool_free(&s);
    sg_spool_free(&s3);
    sg_diag_free(&d1);
    sg_diag_free(&d2);
    sg_diag_free(&d3);
    sg_model_free(&m1);
    sg_model_free(&m2);
    sg_model_free(&m3);
    return len;
}

static size_t both(const sg_buf *text, bool want_errors) {
    return three("ops.yaml", text, NULL, want_errors, false);
}

static void test_validate_json(void) {
    for (int n = 10; n <= 1000; n *= 10) { /* below and above the size that uses a thread */
        sg_buf ok = schema_file(n, -1), bad = schema_file(n, n / 2);
        both(&ok, false);
        both(&bad, true);
        /* grouping's error (a second functional op of one signature) comes before validation's */
        sg_buf_printf(&bad, "- func: op_1.again(Tensor self, int x=1, *, float eps=1e-05) -> Tensor\n");
        both(&bad, true);
        sg_buf_free(&ok);
        sg_buf_free(&bad);
    }
}

/* JSON past a spool block (4 MiB) and strings longer than the writer's window (64 KiB): the
 * spooled JSON, written in place block by block, is byte for byte the buffered one. */
static void test_big_json(void) {
    sg_buf text;
    sg_buf_init(&text);
    char *big = malloc(70001);
    CHECK(big != NULL);
    for (int i = 0; i < 70000; i++) big[i] = (char)('a' + i % 26);
    big[70000] = '\0';
    for (int i = 0; i < 12000; i++) {
        if (i % 3000 == 7)
            sg_buf_printf(&text, "- func: long_%d(Tensor self, str s='%s') -> Tensor\n\n", i, big);
        else
            sg_buf_printf(&text, "- func: op_%d(Tensor self, int x=%d, *, float eps=1e-05) -> "
                                 "Tensor\n  variants: function\n  dispatch:\n    CPU: k_%d\n\n", i, i, i);
    }
    CHECK(both(&text, false) > (5u << 20)); /* more than one block */
    sg_buf_free(&text);
    free(big);
}

static void write_file(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(text, 1, len, f) == len);
    CHECK(fclose(f) == 0);
}

/* Files big enough to load in pieces, where the loader applies the one-op rules and renders
 * the JSON as it goes: where a piece finds a problem the file loads again whole; where only
 * the later steps do (rules across ops, tags), the loader's JSON is dropped. */
static void test_early(void) {
    int n = 4000; /* ~400 KB */
    sg_buf ok = schema_file(n, -1), bad = schema_file(n, n / 3), twice = schema_file(n, -1);
    CHECK(ok.len > 300 * 1024);
    three("ops.yaml", &ok, NULL, false, true);
    three("ops.yaml", &bad, NULL, true, false); /* a one-op rule, found by a piece */
    /* a rule across ops (a second functional op of one signature): pieces are quiet */
    sg_buf_printf(&twice, "- func: op_1.again(Tensor self, int x=1, *, float eps=1e-05) -> Tensor\n");
    three("ops.yaml", &twice, NULL, true, false);
    /* tags come from a file loaded after: the loader leaves the tags rule to validation */
    char dir[] = "/tmp/sg_check_json_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char tags[64], yaml[64];
    snprintf(tags, sizeof tags, "%s/tags.yaml", dir);
    snprintf(yaml, sizeof yaml, "%s/ops.yaml", dir);
    const char *tag_text = "- tag: pointwise\n  desc: elementwise\n";
    write_file(tags, tag_text, strlen(tag_text));
    sg_buf tagged = schema_file(n, -1);
    sg_buf_printf(&tagged, "- func: op_t(Tensor self) -> Tensor\n  tags: [pointwise]\n");
    write_file(yaml, tagged.data, tagged.len);
    three(yaml, NULL, tags, false, true);
    sg_buf_printf(&tagged, "- func: op_u(Tensor self) -> Tensor\n  tags: [no_such_tag]\n");
    write_file(yaml, tagged.data, tagged.len);
    three(yaml, NULL, tags, true, false);
    remove(yaml);
    remove(tags);
    remove(dir);
    sg_buf_free(&ok);
    sg_buf_free(&bad);
    sg_buf_free(&twice);
    sg_buf_free(&tagged);
    /* PyTorch's own files, as the tool reads them */
    const char *nf = SG_CORPUS_DIR "/native_functions.yaml", *tf = SG_CORPUS_DIR "/tags.yaml";
    FILE *f = fopen(nf, "rb");
    if (f) {
        fclose(f);
        three(nf, NULL, tf, false, true);
    } else {
        printf("test_check_json: no corpus at %s: its case skipped\n", nf);
    }
}

int main(void) {
    test_spool();
    test_early();
    test_validate_json();
    test_big_json();
    share = 0.25; /* a slower worker: the JSON in two parts, the second by the validating thread */
    test_big_json();
    return check_result("test_check_json");
}
