/* test_cli_messages.c: what the command line says, run through sg_cli_main with its own
 * streams: each message once, where it belongs (a file that cannot be read, a tags file that
 * holds ops, input in an encoding other than UTF-8), --max-errors as docs/cli.md describes it,
 * and out of memory at every allocation of a run: a message that says so, every message at
 * most once, and never a failing run that shows no message. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "check.h"
#include "cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- failing allocations ---------------------------------------------------------------- *
 * Where glibc is the C library (and no sanitizer brings an allocator of its own), this program
 * replaces malloc, calloc and realloc to fail on demand: the fail_at-th call from when the
 * count was reset, and (persist) every call after it. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NO_FAILING_ALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NO_FAILING_ALLOC 1
#endif
#endif
#if !defined(NO_FAILING_ALLOC) && defined(__GLIBC__)
#define FAILING_ALLOC 1
static long alloc_count, fail_at = -1;
static long arm_at = -1; /* what tool() sets fail_at to while the run runs (-1: nothing fails) */
static bool persist, reached;

static bool fail_now(void) {
    if (fail_at < 0) return false;
    long n = ++alloc_count;
    if (n == fail_at || (persist && n > fail_at)) {
        errno = ENOMEM;
        return true;
    }
    return false;
}

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
void *malloc(size_t n) { return fail_now() ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t size) { return fail_now() ? NULL : __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return fail_now() ? NULL : __libc_realloc(p, n); }
#endif

/* ---- running the tool -------------------------------------------------------------------- */

static char dir[] = "/tmp/sg_cli_messages_XXXXXX";
static char path_buf[8][512];

/* Writes len bytes to DIR/name; returns the path (one of a few static buffers). */
static const char *put_file(const char *name, const char *text, size_t len) {
    static int k;
    char *p = path_buf[k++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    CHECK(f && fwrite(text, 1, len, f) == len);
    if (f) fclose(f);
    return p;
}

/* Streams with buffers of their own, so that writing to them allocates nothing. */
typedef struct run {
    int  rc;
    char out[1 << 18], err[1 << 16];
} run;

static char out_vbuf[BUFSIZ], err_vbuf[BUFSIZ];

static void slurp(FILE *f, char *buf, size_t cap) {
    rewind(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* schemagen ARGS... (NULL-terminated), its standard output and error kept in r. */
static void tool(run *r, const char *const *args) {
    char *argv[16] = {"schemagen"};
    int argc = 1;
    for (; args[argc - 1] && argc < 15; argc++) argv[argc] = (char *)args[argc - 1];
    FILE *out = tmpfile(), *err = tmpfile();
    CHECK(out && err);
    setvbuf(out, out_vbuf, _IOFBF, sizeof out_vbuf);
    setvbuf(err, err_vbuf, _IOFBF, sizeof err_vbuf);
#ifdef FAILING_ALLOC
    alloc_count = 0;
    fail_at = arm_at;
#endif
    r->rc = sg_cli_main(argc, argv, out, err);
#ifdef FAILING_ALLOC
    reached = fail_at >= 0 && alloc_count >= fail_at;
    fail_at = -1;
#endif
    fflush(out);
    fflush(err);
    slurp(out, r->out, sizeof r->out);
    slurp(err, r->err, sizeof r->err);
}

#define TOOL(r, ...) tool((r), (const char *const[]){__VA_ARGS__, NULL})

/* How many times line (a whole line, without its '\n') occurs in text. */
static int count_line(const char *text, const char *line) {
    int n = 0;
    size_t k = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p += k)
        if ((p == text || p[-1] == '\n') && (p[k] == '\n' || !p[k])) n++;
    return n;
}

/* Whether every line that heads a message ("schemagen: ...", "FILE:LINE:COL: ...") occurs once:
 * the quoted source lines and carets under them may repeat. */
static bool messages_once(const char *text) {
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), p);
        bool head = strstr(line, ": error: ") || strstr(line, ": warning: ") ||
                    strstr(line, ": note: ");
        if (head && count_line(text, line) != 1) {
            fprintf(stderr, "said more than once: %s\n", line);
            return false;
        }
        p += n + (e != NULL);
    }
    return true;
}

/* ---- the cases --------------------------------------------------------------------------- */

static const char ops_yaml[] =
    "- func: abs(Tensor self) -> Tensor\n"
    "  variants: function, method\n"
    "  tags: pointwise\n"
    "- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n";

static void test_unreadable(void) {
    run r;
    char missing[600];
    snprintf(missing, sizeof missing, "%s/missing.yaml", dir);
    TOOL(&r, "--emit=json", missing);
    char want[800];
    snprintf(want, sizeof want,
             "schemagen: error: cannot read '%s': No such file or directory\n1 error generated.\n",
             missing);
    CHECK(r.rc == 1);
    CHECK_STR(r.err, want);
    CHECK_STR(r.out, "");
    /* the same as a tags file: the one message, not also one about its entries */
    TOOL(&r, "--emit=json", "--tags", missing, put_file("ops.yaml", ops_yaml, strlen(ops_yaml)));
    CHECK(r.rc == 1);
    CHECK_STR(r.err, want);
}

static void test_tags_holding_ops(void) {
    run r;
    const char *ops = put_file("ops.yaml", ops_yaml, strlen(ops_yaml));
    TOOL(&r, "--tags", ops, "--emit=summary");
    char want[800];
    snprintf(want, sizeof want,
             "schemagen: error: '%s' was given with --tags but holds operator entries\n"
             "1 error generated.\n", ops);
    CHECK(r.rc == 1);
    CHECK_STR(r.err, want);
    CHECK_STR(r.out, "");
}

/* A byte-order mark of UTF-16 or UTF-32 is refused with what to do; UTF-8's is read. */
static void test_encodings(void) {
    static const struct {
        const char *bom;
        size_t      n;
        const char *enc;
    } boms[] = {
        {"\xff\xfe", 2, "UTF-16"},
        {"\xfe\xff", 2, "UTF-16"},
        {"\xff\xfe\0\0", 4, "UTF-32"},
        {"\0\0\xfe\xff", 4, "UTF-32"},
    };
    run r;
    for (size_t i = 0; i < sizeof boms / sizeof *boms; i++) {
        char text[64];
        memcpy(text, boms[i].bom, boms[i].n);
        memcpy(text + boms[i].n, "-\0 \0", 4); /* "- " in UTF-16LE, enough to be past the mark */
        const char *p = put_file("wide.yaml", text, boms[i].n + 4);
        TOOL(&r, "--emit=json", p);
        char want[800];
        snprintf(want, sizeof want,
                 "%s: error: %s input is not supported; convert it to UTF-8\n1 error generated.\n",
                 p, boms[i].enc);
        CHECK(r.rc == 1);
        CHECK_STR(r.err, want);
        CHECK_STR(r.out, "");
    }
    const char bom8[] = "\xef\xbb\xbf- func: f(Tensor self) -> Tensor\n";
    TOOL(&r, "--emit=canonical", put_file("bom8.yaml", bom8, strlen(bom8)));
    CHECK(r.rc == 0);
    CHECK_STR(r.err, "");
    CHECK_STR(r.out, "aten::f(Tensor self) -> Tensor\n");
}

/* A file with n unknown keys: n errors, one a line. */
static const char *n_errors(int n) {
    static char text[8192];
    size_t k = 0;
    k += (size_t)snprintf(text + k, sizeof text - k, "- func: f() -> ()\n");
    for (int i = 0; i < n; i++) k += (size_t)snprintf(text + k, sizeof text - k, "  bad%d: 1\n", i);
    return put_file("errors.yaml", text, k);
}

static int count_errors(const char *err) {
    int n = 0;
    for (const char *p = err; (p = strstr(p, ": error: unknown key")); p++) n++;
    return n;
}

/* docs/cli.md: at most N errors shown (default 20, 0 no limit), one note past the limit, the
 * count line counting them all. */
static void test_max_errors(void) {
    run r;
    const char *note2 = "schemagen: note: more errors follow; only the first 2 are shown "
                        "(--max-errors)";
    TOOL(&r, "--max-errors=2", n_errors(3));
    CHECK(r.rc == 1 && count_errors(r.err) == 2 && count_line(r.err, note2) == 1);
    CHECK(messages_once(r.err));
    CHECK(strstr(r.err, "\n3 errors generated.\n") != NULL);
    TOOL(&r, "--max-errors=3", n_errors(3));
    CHECK(r.rc == 1 && count_errors(r.err) == 3 && !strstr(r.err, "more errors follow"));
    TOOL(&r, n_errors(25));
    CHECK(r.rc == 1 && count_errors(r.err) == 20 && strstr(r.err, "only the first 20 are shown"));
    CHECK(strstr(r.err, "\n25 errors generated.\n") != NULL);
    TOOL(&r, "--max-errors", "0", n_errors(25));
    CHECK(r.rc == 1 && count_errors(r.err) == 25 && !strstr(r.err, "more errors follow"));
    /* a count past what the diagnostics can hold means no limit in practice, not a wrap */
    TOOL(&r, "--max-errors=4294967297", n_errors(3));
    CHECK(r.rc == 1 && count_errors(r.err) == 3);
    TOOL(&r, "--max-errors=-1", n_errors(3));
    CHECK(r.rc == 2 && strstr(r.err, "--max-errors needs a count, not '-1'"));
}

#ifdef FAILING_ALLOC
/* Every allocation of a run, in turn, fails (alone, then with every one after it): the run
 * either gives the output it gives without failures, or fails with at least one message, each
 * message once, and nothing on standard output. */
static void test_out_of_memory(void) {
    static const char tags_yaml[] = "- tag: pointwise\n  desc: elementwise\n";
    const char *ops = put_file("ops.yaml", ops_yaml, strlen(ops_yaml));
    const char *tags = put_file("tags.yaml", tags_yaml, strlen(tags_yaml));
    static run ref, r;
    TOOL(&ref, "--emit=json", "--tags", tags, ops);
    CHECK(ref.rc == 0 && ref.err[0] == '\0' && ref.out[0] != '\0');
    int failures = 0, fails = 0;
    for (int mode = 0; mode < 2; mode++) {
        persist = mode == 1;
        for (long at = 1; failures < 5; at++) {
            arm_at = at;
            TOOL(&r, "--emit=json", "--tags", tags, ops);
            arm_at = -1;
            if (!reached) break; /* the run made fewer allocations: every one was tried */
            bool ok = r.rc == 0 ? strcmp(r.out, ref.out) == 0 && r.err[0] == '\0'
                                : r.rc == 1 && r.out[0] == '\0' && messages_once(r.err) &&
                                      strstr(r.err, "error: ") != NULL;
            fails += r.rc != 0;
            if (!ok) {
                failures++;
                fprintf(stderr, "allocation %ld failing%s: rc %d, stdout:\n%.200s\nstderr:\n%s\n",
                        at, persist ? " (and every later one)" : "", r.rc, r.out, r.err);
            }
        }
    }
    CHECK(failures == 0);
    CHECK(fails > 0); /* allocations did fail */
}

/* The JSON is streamed to standard output once every phase has succeeded. Here it is larger
 * than the stream's window, so bytes go out before it ends, and its longest schema comes
 * last: every allocation of the run, failing in turn, fails it before its first byte (the
 * writer takes all its memory first), never half-way. */
static void test_out_of_memory_streamed(void) {
    static char yaml[1 << 17];
    size_t n = 0;
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(yaml + n, sizeof yaml - n,
                              "- func: op%d(Tensor self, int[2] size, *, Tensor(a!) out) -> "
                              "Tensor(a!)\n  variants: function\n  python_module: nn\n", i);
    n += (size_t)snprintf(yaml + n, sizeof yaml - n, "- func: last(Tensor self, str s=\"");
    for (int i = 0; i < 3000; i++) yaml[n++] = 'x';
    n += (size_t)snprintf(yaml + n, sizeof yaml - n, "\") -> Tensor\n");
    const char *ops = put_file("stream.yaml", yaml, n);
    static run ref, r;
    TOOL(&ref, "--emit=json", ops);
    CHECK(ref.rc == 0 && ref.err[0] == '\0' && strlen(ref.out) > 65536);
    int failures = 0;
    persist = true;
    for (long at = 1; failures < 5; at++) {
        arm_at = at;
        TOOL(&r, "--emit=json", ops);
        arm_at = -1;
        if (!reached) break;
        bool ok = r.rc == 0 ? strcmp(r.out, ref.out) == 0
                            : r.rc == 1 && r.out[0] == '\0' && strstr(r.err, "out of memory");
        if (!ok) {
            failures++;
            fprintf(stderr, "allocation %ld failing (and every later one): rc %d, stdout:\n"
                    "%.200s\nstderr:\n%s\n", at, r.rc, r.out, r.err);
        }
    }
    persist = false;
    CHECK(failures == 0);
}
#endif

int main(void) {
    if (!mkdtemp(dir)) SKIP("no temporary folder");
    test_unreadable();
    test_tags_holding_ops();
    test_encodings();
    test_max_errors();
#ifdef FAILING_ALLOC
    test_out_of_memory();
    test_out_of_memory_streamed();
#else
    printf("test_cli_messages: out-of-memory checks skipped (a sanitizer's allocator, or not glibc)\n");
#endif
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_result("test_cli_messages");
}
