/* dsl_out.c: the DSL generator's files: the plan written on its own (atomically, only where
 * its bytes change), and LIB_dsl.c / LIB_dsl.h joining the run's outputs and their stale
 * mark. */
#define _POSIX_C_SOURCE 200809L

#include "dsl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool same_bytes(const char *path, const sg_buf *b) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    bool same = true;
    char buf[65536];
    size_t off = 0, got;
    while (same && (got = fread(buf, 1, sizeof buf, f)) > 0) {
        same = off + got <= b->len && memcmp(buf, b->data + off, got) == 0;
        off += got;
    }
    same = same && !ferror(f) && off == b->len;
    fclose(f);
    return same;
}

int sg_dsl_write_file(const char *path, const sg_buf *b, FILE *err) {
    if (same_bytes(path, b)) return 0;
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp) {
        fputs("schemagen: error: out of memory\n", err);
        return -1;
    }
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(b->data ? b->data : "", 1, b->len, f) == b->len;
    if (f && fclose(f) != 0) ok = false;
    if (ok && rename(tmp, path) != 0) ok = false;
    if (!ok) {
        fprintf(err, "schemagen: error: cannot write '%s': %s\n", path, strerror(errno));
        remove(tmp);
    }
    free(tmp);
    return ok ? 0 : -1;
}

int sg_outputs_add_mark(sg_outputs *outs, const char *mark) {
    sg_stale *st = &outs->stale;
    if (!st->lib) return 0; /* no template rendered: nothing of ours is known to be stale */
    char **marks = realloc(st->marks, (st->nmarks + 1) * sizeof *marks);
    if (!marks) return -1;
    st->marks = marks;
    if (!(marks[st->nmarks] = strdup(mark))) return -1;
    st->nmarks++;
    return 0;
}

int sg_dsl_mark_stale(sg_outputs *outs) { return sg_outputs_add_mark(outs, sg_dsl_banner_mark); }

int sg_outputs_add(sg_outputs *outs, const char *lib, const char *suffix, sg_buf *text) {
    if (outs->n == outs->cap) {
        uint32_t cap = outs->cap ? 2 * outs->cap : 8;
        sg_output *p = realloc(outs->items, cap * sizeof *p);
        if (!p) return -1;
        outs->items = p, outs->cap = cap;
    }
    size_t n = strlen(lib) + strlen(suffix) + 1;
    char *name = malloc(n);
    if (!name) return -1;
    snprintf(name, n, "%s%s", lib, suffix);
    outs->items[outs->n++] = (sg_output){name, *text};
    sg_buf_init(text);
    return 0;
}

int sg_outputs_add_pair(sg_outputs *outs, const char *lib, const char *stem, sg_buf *c,
                        sg_buf *h) {
    char suffix[64];
    int  rc = c->oom || h->oom ? -1 : 0;
    snprintf(suffix, sizeof suffix, "%s.c", stem);
    if (!rc) rc = sg_outputs_add(outs, lib, suffix, c);
    snprintf(suffix, sizeof suffix, "%s.h", stem);
    if (!rc) rc = sg_outputs_add(outs, lib, suffix, h);
    sg_buf_free(c);
    sg_buf_free(h);
    return rc;
}

int sg_dsl_add_outputs(sg_outputs *outs, const sg_dsl_set *s, const char *lib,
                       const char *const *inputs, uint32_t ninputs) {
    sg_buf c, h;
    sg_buf_init(&c);
    sg_buf_init(&h);
    sg_dsl_emit_c(&c, &h, s, lib, inputs, ninputs);
    return sg_outputs_add_pair(outs, lib, "_dsl", &c, &h);
}
