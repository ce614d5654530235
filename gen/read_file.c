/* read_file.c: a whole file's bytes into a growable buffer. */
#include "read_file.h"

#include <errno.h>
#include <stdio.h>

bool sg_read_file(const char *path, sg_buf *b) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char   chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sg_buf_putn(b, chunk, n);
    int e = ferror(f) ? (errno ? errno : EIO) : b->oom ? ENOMEM : 0;
    fclose(f);
    errno = e;
    return e == 0;
}
