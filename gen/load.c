/* load.c: sg_load_file and sg_load_buffer: a file's bytes into the model (its one copy, kept
 * for diagnostics to quote), then its YAML into ops (yaml_ops.c; a big file in two pieces at
 * once where that gives the same, load_split.c). */
#define _POSIX_C_SOURCE 200809L /* fstat, fileno */

#include "load_split.h"
#include "model.h"
#include "yaml_ops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The encoding a byte-order mark at the start of s names, where it is not UTF-8's; NULL for
 * none. Rationale: YAML allows UTF-16 and UTF-32, but positions in messages are byte columns
 * of UTF-8 text; such a file is refused with a message that says what to do, where libyaml
 * would complain of its first byte. */
static const char *foreign_bom(const sg_source *s) {
    const unsigned char *t = (const unsigned char *)s->text;
    if (s->len >= 4 && ((t[0] == 0xFF && t[1] == 0xFE && !t[2] && !t[3]) ||
                        (!t[0] && !t[1] && t[2] == 0xFE && t[3] == 0xFF)))
        return "UTF-32";
    if (s->len >= 2 && ((t[0] == 0xFF && t[1] == 0xFE) || (t[0] == 0xFE && t[1] == 0xFF)))
        return "UTF-16";
    return NULL;
}

/* Loads a source already in the model. */
static int load(sg_model *m, const sg_source *src, sg_diag *d) {
    if (src->len > UINT32_MAX - 1) {
        sg_diag_plain(d, SG_ERROR, "'%s' is larger than 4 GiB", src->path);
        return 1;
    }
    const char *enc = foreign_bom(src);
    if (enc) {
        sg_diag_report(d, SG_ERROR, (sg_pos){src, 0, 0},
                       "%s input is not supported; convert it to UTF-8", enc);
        return 1;
    }
    if (sg_load_split(m, src, SG_SPLIT_MIN)) return 0;
    return sg_yaml_load(m, src, d);
}

int sg_load_buffer(sg_model *m, const char *path, const char *text, size_t len, sg_diag *d) {
    const sg_source *src = sg_model_add_source(m, path, text, len);
    if (src) return load(m, src, d);
    sg_diag_plain(d, SG_ERROR, "out of memory reading '%s'", path);
    return 1;
}

/* A file whose size is not known (a pipe): read in growing blocks, then copied. */
static const sg_source *read_stream(sg_model *m, const char *path, FILE *f, int *err) {
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            char *nb = cap < SIZE_MAX / 4 ? realloc(buf, cap = cap ? cap * 2 : 1 << 16) : NULL;
            if (!nb) {
                *err = ENOMEM;
                break;
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) *err = errno ? errno : EIO;
            break;
        }
    }
    const sg_source *src = *err ? NULL : sg_model_add_source(m, path, buf ? buf : "", len);
    if (!*err && !src) *err = ENOMEM;
    free(buf);
    return src;
}

/* Rationale: a regular file is read straight into the model's arena, its one copy. Reading
 * in doubling blocks and copying touched three times the memory, and on a fresh heap touching
 * memory is a large part of loading a big file. */
static const sg_source *read_file(sg_model *m, const char *path, FILE *f, size_t size,
                                  int *err) {
    errno = 0;
    sg_source *src = sg_model_add_source(m, path, NULL, size);
    if (!src) {
        *err = ENOMEM;
        return NULL;
    }
    src->len = fread((char *)src->text, 1, size, f); /* a file that shrank: what is there */
    if (ferror(f)) *err = errno ? errno : EIO;
    return src;
}

int sg_load_file(sg_model *m, const char *path, sg_diag *d) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        sg_diag_plain(d, SG_ERROR, "cannot read '%s': %s", path, strerror(errno));
        return 1;
    }
    /* a regular file's size is known: read it in one piece */
    struct stat st;
    bool sized = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
    int err = 0;
    const sg_source *src = sized ? read_file(m, path, f, (size_t)st.st_size, &err)
                                 : read_stream(m, path, f, &err);
    fclose(f);
    if (!err) return load(m, src, d);
    sg_diag_plain(d, SG_ERROR, "cannot read '%s': %s", path, strerror(err));
    return 1;
}
