/* test_load_split.c: a file loaded in pieces by two threads (gen/load_split.c) gives what one
 * pass gives: the same ops in the same order and the same messages, byte for byte, through
 * grouping and validation (whose messages carry positions in every piece). Where a cut could
 * change the meaning, or there is anything to report while loading, the pieces' work is
 * refused and the one pass decides. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "emit.h"
#include "load_split.h"
#include "yaml_ops.h"

#include <dirent.h>
#include <string.h>

typedef struct result {
    char    *diag, *json;
    bool     split; /* the pieces' work was kept */
    uint32_t nops;
} result;

static char *take_text(sg_buf *b) {
    char *s = strdup(b->data ? b->data : "");
    sg_buf_free(b);
    return s;
}

/* The front end over text, as file `path`: loaded in pieces where `pieces` is set and the
 * pieces' work is kept (whatever the size), else in one pass; then grouped and validated. */
static result front(const char *path, const char *text, size_t len, bool pieces) {
    result r = {0};
    sg_model m;
    sg_diag d;
    CHECK(sg_model_init(&m) == 0);
    sg_diag_init(&d);
    const sg_source *src = sg_model_add_source(&m, path, text, len);
    CHECK(src != NULL);
    r.split = pieces && sg_load_split(&m, src, 0);
    if (!r.split) sg_yaml_load(&m, src, &d);
    sg_model_group(&m, &d);
    sg_validate(&m, &d);
    sg_buf json;
    sg_buf_init(&json);
    sg_emit_json(&json, &m);
    r.json = take_text(&json);
    r.diag = take_text(&d.out);
    r.nops = m.nops;
    sg_model_free(&m);
    return r;
}

static void result_free(result *r) {
    free(r->diag);
    free(r->json);
}

/* Both ways over text: the same bytes out; returns whether the pieces' work was kept. */
static bool same_both_ways(const char *path, const char *text, size_t len) {
    result one = front(path, text, len, false), two = front(path, text, len, true);
    CHECK(one.diag && two.diag && strcmp(one.diag, two.diag) == 0);
    CHECK(one.json && two.json && strcmp(one.json, two.json) == 0);
    if (strcmp(one.diag, two.diag) != 0)
        fprintf(stderr, "%s: one pass said:\n%s\npieces said:\n%s\n", path, one.diag, two.diag);
    bool split = two.split;
    result_free(&one);
    result_free(&two);
    return split;
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (size_t got = 1; got;) {
        if (*len == cap) {
            char *nb = realloc(buf, cap = cap ? 2 * cap : 1 << 16);
            if (!nb) break;
            buf = nb;
        }
        *len += got = fread(buf + *len, 1, cap - *len, f);
    }
    fclose(f);
    return buf;
}

/* Every file of tests/malformed, cut in two whatever its size: the same messages and JSON
 * (most of them hold one entry, or an error found while loading, and are loaded in one pass). */
static void test_malformed(void) {
    DIR *dir = opendir(SG_TESTS_DIR "/malformed");
    CHECK(dir != NULL);
    int files = 0;
    for (struct dirent *e; dir && (e = readdir(dir));) {
        size_t n = strlen(e->d_name), len;
        if (n < 5 || strcmp(e->d_name + n - 5, ".yaml") != 0) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/malformed/%s", SG_TESTS_DIR, e->d_name);
        char *text = read_all(path, &len);
        CHECK(text != NULL);
        if (!text) continue;
        files++;
        same_both_ways(e->d_name, text, len);
        free(text);
    }
    if (dir) closedir(dir);
    CHECK(files > 10);
}

/* Cuts where one pass reads something else: the pieces' work is refused. */
static void test_refused(void) {
    static const char *const cases[] = {
        /* a document end before the cut: one pass finds a second document there */
        "- func: a(Tensor self) -> Tensor\n...\n- func: b(Tensor self) -> Tensor\n",
        /* the cut inside a double-quoted scalar that goes on at the start of a line */
        "- func: a(Tensor self) -> Tensor\n  python_module: \"nn\n- x\"\n"
        "- func: b(Tensor self) -> Tensor\n",
        /* a schema file whose second piece would read as a tags file */
        "- func: a(Tensor self) -> Tensor\n  variants: function\n- tag: core\n  desc: x\n",
        /* a tags file whose second piece would read as a schema file */
        "- tag: core\n  desc: the core ops of the library\n- func: a(Tensor self) -> Tensor\n",
        /* an error in the second piece */
        "- func: a(Tensor self) -> Tensor\n  variants: function\n- func: b(Tensor self) -> Tensr\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bool split = same_both_ways("refused.yaml", cases[i], strlen(cases[i]));
        CHECK(!split);
        if (split) fprintf(stderr, "case %zu was loaded in pieces\n", i);
    }
}

/* Kept: CRLF line ends and UTF-8 text in both pieces, and a validation error in the second,
 * whose position must be the one pass's. */
static void test_positions(void) {
    static const char text[] =
        "# caf\xC3\xA9\r\n"
        "- func: a(Tensor self) -> Tensor\r\n"
        "  python_module: caf\xC3\xA9\r\n"
        "- func: b(Tensor self, str s=\"\xC3\xA9\") -> Tensor\r\n"
        "  python_module: caf\xC3\xA9\r\n"
        "- func: narrow(Tensor(a) self, int(a) dim, SymInt start) -> Tensor(a)\r\n";
    CHECK(same_both_ways("positions.yaml", text, strlen(text)));
    result r = front("positions.yaml", text, strlen(text), true);
    CHECK(r.nops == 3 && strstr(r.diag, "positions.yaml:6:35: error:") != NULL);
    if (!strstr(r.diag, "positions.yaml:6:35: error:")) fprintf(stderr, "%s\n", r.diag);
    result_free(&r);
}

/* The corpus: loaded in pieces, the same JSON byte for byte. */
static bool test_corpus(void) {
    size_t len;
    char *text = read_all(SG_CORPUS_DIR "/native_functions.yaml", &len);
    if (!text) {
        printf("test_load_split: corpus checks skipped: no %s\n",
               SG_CORPUS_DIR "/native_functions.yaml");
        return false;
    }
    CHECK(len >= SG_SPLIT_MIN);
    CHECK(same_both_ways("native_functions.yaml", text, len));
    free(text);
    return true;
}

int main(void) {
    test_malformed();
    test_refused();
    test_positions();
    bool corpus = test_corpus();
    int rc = check_result("test_load_split");
    return rc == 0 && !corpus ? 77 : rc;
}
