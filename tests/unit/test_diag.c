/* test_diag.c: gcc-style rendering of diagnostics: header, quoted line, caret. */
#include "check.h"
#include "model.h"

/* Renders one error at (line, col) of text and returns the diagnostics (static buffer). */
static const char *render(const char *text, uint32_t line, uint32_t col, sg_severity sev) {
    static char out[4096];
    sg_source src = {"t.yaml", text, strlen(text)};
    sg_diag d;
    sg_diag_init(&d);
    sg_diag_report(&d, sev, (sg_pos){&src, line, col}, "bad %s %d", "thing", 42);
    snprintf(out, sizeof out, "%s", d.out.data ? d.out.data : "");
    sg_diag_free(&d);
    return out;
}

static void test_basic(void) {
    const char *t = "- func: foo(\n  variants: x\n";
    CHECK_STR(render(t, 2, 13, SG_ERROR), "t.yaml:2:13: error: bad thing 42\n  variants: x\n            ^\n");
    CHECK_STR(render(t, 1, 1, SG_WARNING), "t.yaml:1:1: warning: bad thing 42\n- func: foo(\n^\n");
    CHECK_STR(render(t, 1, 3, SG_NOTE), "t.yaml:1:3: note: bad thing 42\n- func: foo(\n  ^\n");
    /* Past the end of the line: the caret sits just after it. */
    CHECK_STR(render(t, 1, 40, SG_ERROR), "t.yaml:1:40: error: bad thing 42\n- func: foo(\n            ^\n");
    /* An empty line or one past the file: no quote. */
    CHECK_STR(render("a\n\nb\n", 2, 1, SG_ERROR), "t.yaml:2:1: error: bad thing 42\n");
    CHECK_STR(render("a\n", 9, 1, SG_ERROR), "t.yaml:9:1: error: bad thing 42\n");
    /* CRLF: the '\r' is not part of the line. */
    CHECK_STR(render("abc\r\ndef\r\n", 1, 2, SG_ERROR), "t.yaml:1:2: error: bad thing 42\nabc\n ^\n");
    /* No newline at the end of the file. */
    CHECK_STR(render("abc", 1, 3, SG_ERROR), "t.yaml:1:3: error: bad thing 42\nabc\n  ^\n");
}

static void test_tabs_and_bytes(void) {
    CHECK_STR(render("\tkey:\tv\n", 1, 6, SG_ERROR), "t.yaml:1:6: error: bad thing 42\n\tkey:\tv\n\t    ^\n");
    /* Bytes that are not UTF-8, and control bytes, are escaped; the caret follows. */
    CHECK_STR(render("ab\xff" "cd\x01" "e\n", 1, 7, SG_ERROR),
              "t.yaml:1:7: error: bad thing 42\nab\\xFFcd\\x01e\n            ^\n");
    CHECK_STR(render("ab\xff" "cd\n", 1, 3, SG_ERROR), "t.yaml:1:3: error: bad thing 42\nab\\xFFcd\n  ^\n");
    /* Valid UTF-8 stays as is and takes one column. */
    CHECK_STR(render("\xc3\xa9 x\n", 1, 4, SG_ERROR), "t.yaml:1:4: error: bad thing 42\n\xc3\xa9 x\n  ^\n");
    /* A truncated sequence, a surrogate and an overlong form are not UTF-8. */
    CHECK_STR(render("\xe2\x82 \xed\xa0\x80 \xc0\xaf!\n", 1, 11, SG_ERROR),
              "t.yaml:1:11: error: bad thing 42\n\\xE2\\x82 \\xED\\xA0\\x80 \\xC0\\xAF!\n"
              "                               ^\n");
    CHECK_STR(render("a\x7f" "b\n", 1, 3, SG_ERROR), "t.yaml:1:3: error: bad thing 42\na\\x7Fb\n     ^\n");
    /* Characters that would garble the line (a line separator, a bidi override) too. */
    CHECK_STR(render("a\xe2\x80\xa8" "b\xe2\x80\xae" "c\n", 1, 9, SG_ERROR),
              "t.yaml:1:9: error: bad thing 42\na\\xE2\\x80\\xA8b\\xE2\\x80\\xAEc\n"
              "                          ^\n");
}

static void test_long_line(void) {
    enum { N = 10000 };
    static char line[N + 2], want[1024], a200[201];
    memset(line, 'a', N);
    line[N] = '\n';
    memset(a200, 'a', 200);
    char pad[300];
    /* In the middle: 80 bytes before the column, 200 in all, dots both sides. */
    memset(pad, ' ', 83);
    pad[83] = 0;
    snprintf(want, sizeof want, "t.yaml:1:5000: error: bad thing 42\n...%s...\n%s^\n", a200, pad);
    CHECK_STR(render(line, 1, 5000, SG_ERROR), want);
    /* At the start: no leading dots. */
    snprintf(want, sizeof want, "t.yaml:1:1: error: bad thing 42\n%s...\n^\n", a200);
    CHECK_STR(render(line, 1, 1, SG_ERROR), want);
    /* Just past the end: the last 200 bytes. */
    memset(pad, ' ', 203);
    pad[203] = 0;
    snprintf(want, sizeof want, "t.yaml:1:10001: error: bad thing 42\n...%s\n%s^\n", a200, pad);
    CHECK_STR(render(line, 1, N + 1, SG_ERROR), want);
    /* A window never starts inside a UTF-8 character. */
    line[4918] = (char)0xc3;
    line[4919] = (char)0xa9;
    const char *r = render(line, 1, 5000, SG_ERROR);
    CHECK(strstr(r, "\n...a") != NULL && strstr(r, "\\x") == NULL);
}

static void test_plain_and_limits(void) {
    sg_diag d;
    sg_diag_init(&d);
    sg_diag_plain(&d, SG_ERROR, "cannot read '%s': %s", "x.yaml", "No such file or directory");
    sg_diag_plain(&d, SG_WARNING, "careful");
    CHECK_STR(d.out.data, "schemagen: error: cannot read 'x.yaml': No such file or directory\n"
                          "schemagen: warning: careful\n");
    CHECK(d.nerrors == 1 && d.nwarnings == 1);
    sg_diag_free(&d);

    sg_source src = {"t.yaml", "abc\n", 4};
    sg_diag_init(&d);
    d.max_errors = 1;
    sg_diag_report(&d, SG_ERROR, (sg_pos){&src, 1, 1}, "one");
    sg_diag_report(&d, SG_NOTE, (sg_pos){&src, 1, 2}, "its note");
    sg_diag_report(&d, SG_ERROR, (sg_pos){&src, 1, 2}, "two");
    sg_diag_report(&d, SG_NOTE, (sg_pos){&src, 1, 2}, "its note");
    sg_diag_report(&d, SG_ERROR, (sg_pos){&src, 1, 3}, "three");
    CHECK_STR(d.out.data, "t.yaml:1:1: error: one\nabc\n^\nt.yaml:1:2: note: its note\nabc\n ^\n"
                          "schemagen: note: more errors follow; only the first 1 are shown "
                          "(--max-errors)\n");
    CHECK(d.nerrors == 3);
    sg_diag_free(&d);

    /* A message longer than the formatting buffer. */
    static char big[2000];
    memset(big, 'x', sizeof big - 1);
    sg_diag_init(&d);
    sg_diag_plain(&d, SG_ERROR, "%s", big);
    CHECK(d.out.len == strlen("schemagen: error: ") + sizeof big - 1 + 1);
    sg_diag_free(&d);
}

int main(void) {
    test_basic();
    test_tabs_and_bytes();
    test_long_line();
    test_plain_and_limits();
    return check_result("test_diag");
}
