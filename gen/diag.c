/* diag.c: gcc-style diagnostics, rendered into a buffer the CLI prints once at the end.
 *
 *     path:LINE:COL: error: message
 *     the source line, as is
 *             ^
 *
 * The quoted line is made safe to print (control bytes and bytes that are not UTF-8 become
 * \xNN) and cut to a window around the column when it is long; the caret line is built from
 * the same walk, so the caret stays under the right character whatever was replaced or cut.
 */
#include "model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Long lines: show WINDOW bytes, LEAD of them before the column. */
enum { WINDOW = 200, LEAD = 80, DEFAULT_MAX_ERRORS = 20 };

static const char *const sev_names[] = {"note", "warning", "error"};

void sg_diag_init(sg_diag *d) {
    memset(d, 0, sizeof *d);
    sg_buf_init(&d->out);
    d->max_errors = DEFAULT_MAX_ERRORS;
}

void sg_diag_free(sg_diag *d) { sg_buf_free(&d->out); }

/* Counts the message; returns whether to render it. Past max_errors nothing more is shown
 * (notes and warnings included, so a note never dangles without its error), and the first
 * error past the limit says so once. */
static bool count(sg_diag *d, sg_severity sev) {
    if (sev == SG_ERROR) d->nerrors++;
    if (sev == SG_WARNING) d->nwarnings++;
    if (!d->max_errors || d->nerrors <= d->max_errors) return true;
    if (sev == SG_ERROR && d->nerrors == d->max_errors + 1)
        sg_buf_printf(&d->out, "schemagen: note: more errors follow; only the first %u are shown "
                      "(--max-errors)\n", d->max_errors);
    return false;
}

static void put_vfmt(sg_buf *b, const char *fmt, va_list ap) {
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= 0 && (size_t)n < sizeof small) {
        sg_buf_putn(b, small, (size_t)n);
    } else if (n > 0) {
        char *big = malloc((size_t)n + 1);
        if (big) vsnprintf(big, (size_t)n + 1, fmt, ap2);
        if (big) sg_buf_putn(b, big, (size_t)n);
        else b->oom = true;
        free(big);
    }
    va_end(ap2);
}

/* Line `line` (1-based) of s: its start and length, without "\n" or "\r\n". */
static bool find_line(const sg_source *s, uint32_t line, size_t *start, size_t *len) {
    const char *p = s->text, *end = s->text + s->len;
    for (uint32_t l = 1; l < line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return false;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((nl ? nl : end) - p);
    if (n && p[n - 1] == '\r') n--;
    *start = (size_t)(p - s->text);
    *len = n;
    return true;
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if it is not one. Characters
 * that would garble the quoted line count as invalid too, so they are shown escaped: C1
 * controls (U+0080..U+009F), the line and paragraph separators and the bidi controls
 * (U+2028..U+202E, U+2066..U+2069). */
static size_t utf8_seq(const unsigned char *p, size_t n) {
    unsigned c = p[0];
    size_t k = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (!k || k > n || (c >= 0xF8)) return 0;
    for (size_t i = 1; i < k; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    if (k == 2 && c == 0xC2 && p[1] < 0xA0) return 0;          /* C1 control */
    if (k == 3 && c == 0xE0 && p[1] < 0xA0) return 0;          /* overlong */
    if (k == 3 && c == 0xED && p[1] >= 0xA0) return 0;         /* surrogate */
    if (k == 3 && c == 0xE2 && p[1] == 0x80 && p[2] >= 0xA8 && p[2] <= 0xAE) return 0;
    if (k == 3 && c == 0xE2 && p[1] == 0x81 && p[2] >= 0xA6 && p[2] <= 0xA9) return 0;
    if (k == 4 && c == 0xF0 && p[1] < 0x90) return 0;          /* overlong */
    if (k == 4 && c == 0xF4 && p[1] >= 0x90) return 0;         /* past U+10FFFF */
    return k;
}

/* The window [*lo, *hi) of a line of n bytes that shows byte k; cut on character starts. */
static void window(const unsigned char *l, size_t n, size_t k, size_t *lo, size_t *hi) {
    *lo = 0;
    *hi = n;
    if (n <= WINDOW) return;
    *lo = k > LEAD ? k - LEAD : 0;
    if (*lo + WINDOW > n) *lo = n - WINDOW;
    *hi = *lo + WINDOW;
    while (*lo < k && (l[*lo] & 0xC0) == 0x80) (*lo)++;
    while (*hi < n && *hi > k + 1 && (l[*hi] & 0xC0) == 0x80) (*hi)--;
}

/* Appends the line l[0..n) with a caret under byte k (k == n: just past the end). */
static void quote(sg_buf *b, const unsigned char *l, size_t n, size_t k) {
    size_t lo, hi;
    window(l, n, k, &lo, &hi);
    sg_buf caret;
    sg_buf_init(&caret);
    if (lo > 0) {
        sg_buf_puts(b, "...");
        sg_buf_puts(&caret, "   ");
    }
    for (size_t p = lo; p < hi;) {
        size_t m = l[p] < 0x80 ? 1 : utf8_seq(l + p, hi - p);
        bool esc = m == 0 || l[p] == 0x7F || (l[p] < 0x20 && l[p] != '\t');
        if (esc) {
            m = 1;
            sg_buf_printf(b, "\\x%02X", l[p]);
        } else {
            sg_buf_putn(b, (const char *)l + p, m);
        }
        /* Pad for each character wholly before the caret; a tab pads with a tab. */
        if (p + m <= k) sg_buf_puts(&caret, esc ? "    " : l[p] == '\t' ? "\t" : " ");
        p += m;
    }
    if (hi < n) sg_buf_puts(b, "...");
    sg_buf_putc(b, '\n');
    sg_buf_putn(b, caret.data ? caret.data : "", caret.len);
    sg_buf_puts(b, "^\n");
    if (caret.oom) b->oom = true;
    sg_buf_free(&caret);
}

static void report(sg_diag *d, sg_severity sev, sg_pos pos, const char *fmt, va_list ap) {
    sg_buf *b = &d->out;
    if (!pos.src)
        sg_buf_puts(b, "schemagen");
    else if (!pos.line)
        sg_buf_puts(b, pos.src->path);
    else
        sg_buf_printf(b, "%s:%u:%u", pos.src->path, pos.line, pos.col);
    sg_buf_printf(b, ": %s: ", sev_names[sev]);
    put_vfmt(b, fmt, ap);
    sg_buf_putc(b, '\n');
    size_t start, len;
    if (!pos.src || !pos.line || !find_line(pos.src, pos.line, &start, &len) || !len) return;
    size_t k = pos.col ? pos.col - 1 : 0;
    quote(b, (const unsigned char *)pos.src->text + start, len, k < len ? k : len);
}

void sg_diag_report(sg_diag *d, sg_severity sev, sg_pos pos, const char *fmt, ...) {
    if (!count(d, sev)) return;
    va_list ap;
    va_start(ap, fmt);
    report(d, sev, pos, fmt, ap);
    va_end(ap);
}

void sg_diag_vreport(sg_diag *d, sg_severity sev, sg_pos pos, const char *fmt, va_list ap) {
    if (count(d, sev)) report(d, sev, pos, fmt, ap);
}

void sg_diag_plain(sg_diag *d, sg_severity sev, const char *fmt, ...) {
    if (!count(d, sev)) return;
    va_list ap;
    va_start(ap, fmt);
    report(d, sev, (sg_pos){0}, fmt, ap);
    va_end(ap);
}
