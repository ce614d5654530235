/* outdir.c: writing generated files into a folder: each atomically (a temporary file and a
 * rename), and not at all when its bytes would not change, so its mtime stays and builds
 * stay incremental. Shared by the command line and the benchmarks. */
#define _POSIX_C_SOURCE 200809L
#include "codegen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void report_errno(FILE *err, const char *what, const char *path) {
    fprintf(err, "schemagen: error: cannot %s '%s': %s\n", what, path, strerror(errno));
}

/* mkdir -p: creates dir and its missing parents. */
static int make_dirs(char *dir, FILE *err) {
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char saved = *p;
        *p = '\0';
        int r = mkdir(dir, 0777);
        *p = saved;
        if (r != 0 && errno != EEXIST) break;
        if (saved == '\0') {
            struct stat st;
            if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
            errno = ENOTDIR;
            break;
        }
    }
    report_errno(err, "create directory", dir);
    return -1;
}

/* True when path holds exactly data[0..len). */
static bool same_bytes(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char chunk[65536];
    size_t off = 0, n;
    bool same = true;
    while (same && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        same = off + n <= len && memcmp(chunk, data + off, n) == 0;
        off += n;
    }
    same = same && off == len && !ferror(f);
    fclose(f);
    return same;
}

static bool write_all(int fd, const char *data, size_t len) {
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        len -= (size_t)n;
    }
    return true;
}

/* Writes dir/name by way of a temporary file in dir and a rename, so readers see the old file
 * or the new one, never a part; leaves an identical file untouched. */
static int write_file_atomic(const char *dir, const char *name, const sg_buf *data, FILE *err) {
    sg_buf path, tmp;
    sg_buf_init(&path);
    sg_buf_init(&tmp);
    sg_buf_printf(&path, "%s/%s", dir, name);
    sg_buf_printf(&tmp, "%s/.%s.XXXXXX", dir, name);
    int rc = -1;
    if (path.oom || tmp.oom) {
        fputs("schemagen: error: out of memory\n", err);
    } else if (same_bytes(path.data, data->data, data->len)) {
        rc = 0;
    } else {
        int fd = mkstemp(tmp.data);
        if (fd < 0) {
            report_errno(err, "create a file in", dir);
        } else {
            mode_t mask = umask(0);
            umask(mask);
            bool ok = fchmod(fd, 0666 & ~mask) == 0 && write_all(fd, data->data, data->len);
            ok = (close(fd) == 0) && ok;
            if (ok && rename(tmp.data, path.data) == 0)
                rc = 0;
            else
                report_errno(err, "write", path.data);
            if (rc) unlink(tmp.data);
        }
    }
    sg_buf_free(&path);
    sg_buf_free(&tmp);
    return rc;
}

int sg_outputs_write(const char *outdir, const sg_outputs *outs, FILE *err) {
    sg_buf dir;
    sg_buf_init(&dir);
    sg_buf_puts(&dir, outdir);
    int rc = -1;
    if (dir.oom)
        fputs("schemagen: error: out of memory\n", err);
    else if (make_dirs(dir.data, err) == 0) {
        rc = 0;
        for (uint32_t i = 0; i < outs->n && rc == 0; i++)
            rc = write_file_atomic(outdir, outs->items[i].name, &outs->items[i].data, err);
    }
    sg_buf_free(&dir);
    return rc;
}

