/* buf.c: a growable byte string for printers and emitters. Out of memory sets b->oom and
 * drops further appends, so callers check once at the end rather than after every append.
 * A sink turns it into a stream (see sg_buf_set_sink). */
#include "sg_schema.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg_buf_init(sg_buf *b) { memset(b, 0, sizeof *b); }

void sg_buf_free(sg_buf *b) {
    free(b->data);
    sg_buf_init(b);
}

void sg_buf_set_sink(sg_buf *b, sg_buf_sink sink, void *ud) {
    b->sink = sink;
    b->sink_ud = ud;
}

bool sg_buf_flush(sg_buf *b) {
    if (b->sink && b->len && !b->sink_failed) {
        if (!b->sink(b->sink_ud, b->data, b->len)) b->sink_failed = true;
        b->len = 0;
        b->data[0] = '\0';
    }
    return !b->oom && !b->sink_failed;
}

static bool reserve(sg_buf *b, size_t extra) {
    if (b->oom || b->sink_failed) return false;
    if (b->sink && b->len && b->len + extra > SG_BUF_STREAM) sg_buf_flush(b);
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void sg_buf_putn_slow(sg_buf *b, const char *s, size_t n) {
    if (b->sink && n >= SG_BUF_STREAM) { /* a stream passes big pieces on without a copy */
        if (sg_buf_flush(b) && !b->sink(b->sink_ud, s, n)) b->sink_failed = true;
        return;
    }
    if (!reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void sg_buf_printf(sg_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        sg_buf_putn(b, small, (size_t)n);
        return;
    }
    if (!reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}
