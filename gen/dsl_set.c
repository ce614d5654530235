/* dsl_set.c: the set of DSL declarations (dsl.h, sg_dsl_set): its arena, and the declaration
 * files read into it as sources, so diagnostics can quote their lines. */
#include "dsl.h"
#include "read_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sg_dsl_init(sg_dsl_set *s) {
    memset(s, 0, sizeof *s);
    s->a = sg_arena_new(NULL, NULL);
    return s->a ? 0 : -1;
}

void sg_dsl_free(sg_dsl_set *s) {
    free(s->decls);
    free(s->tables);
    free(s->arts);
    free(s->files);
    sg_arena_free(s->a);
    memset(s, 0, sizeof *s);
}

/* The file's bytes as a source of the set's (diagnostics quote it). */
sg_source *sg_dsl_read_source(sg_dsl_set *s, const char *path, sg_diag *d) {
    sg_buf b;
    sg_buf_init(&b);
    if (!sg_read_file(path, &b)) {
        sg_diag_plain(d, SG_ERROR, "cannot read '%s': %s", path, strerror(errno));
        sg_buf_free(&b);
        return NULL;
    }
    sg_source *src = sg_dsl_source(s, path, b.data ? b.data : "", b.len, d);
    sg_buf_free(&b);
    return src;
}

sg_source *sg_dsl_source(sg_dsl_set *s, const char *path, const char *text, size_t len,
                         sg_diag *d) {
    sg_source *src = sg_arena_alloc(s->a, sizeof *src);
    if (src) {
        src->path = sg_arena_strndup(s->a, path, strlen(path));
        src->text = sg_arena_strndup(s->a, text, len);
        src->len = len;
    }
    if (!src || !src->path || !src->text) {
        sg_diag_plain(d, SG_ERROR, "out of memory reading '%s'", path);
        return NULL;
    }
    return src;
}
