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

/* True when path holds exactly o's bytes. */
static bool same_bytes(const char *path, const sg_output *o) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char   chunk[65536];
    size_t k = 0, off = 0; /* the piece, and the offset in it, to compare next */
    bool   same = true;
    size_t n, total = 0;
    while (same && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        total += n;
        for (size_t i = 0; same && i < n;) {
            while (k < o->npieces && off == o->pieces[k].n) k++, off = 0;
            if (k == o->npieces) {
                same = false;
                break;
            }
            size_t m = o->pieces[k].n - off;
            if (m > n - i) m = n - i;
            same = memcmp(chunk + i, o->pieces[k].p + off, m) == 0;
            i += m;
            off += m;
        }
    }
    same = same && total == o->len && !ferror(f);
    fclose(f);
    return same;
}

/* Writes dir/name by way of a temporary file in dir and a rename, so readers see the old file
 * or the new one, never a part; leaves an identical file untouched. */
static int write_file_atomic(const char *dir, const sg_output *o, FILE *err) {
    sg_buf path, tmp;
    sg_buf_init(&path);
    sg_buf_init(&tmp);
    sg_buf_printf(&path, "%s/%s", dir, o->name);
    sg_buf_printf(&tmp, "%s/.%s.XXXXXX", dir, o->name);
    int rc = -1;
    if (path.oom || tmp.oom) {
        fputs("schemagen: error: out of memory\n", err);
    } else if (same_bytes(path.data, o)) {
        rc = 0;
    } else {
        int   fd = mkstemp(tmp.data);
        FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
        if (!f) {
            report_errno(err, "create a file in", dir);
            if (fd >= 0) close(fd);
        } else {
            mode_t mask = umask(0);
            umask(mask);
            bool ok = fchmod(fd, 0666 & ~mask) == 0;
            for (size_t i = 0; ok && i < o->npieces; i++)
                ok = fwrite(o->pieces[i].p, 1, o->pieces[i].n, f) == o->pieces[i].n;
            ok = (fclose(f) == 0) && ok;
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

/* Removes dir/pattern for shard numbers from s->from up, while such files exist. */
static void remove_stale(const char *dir, const sg_stale *s, FILE *err) {
    for (uint32_t k = s->from;; k++) {
        sg_buf path;
        sg_buf_init(&path);
        sg_buf_printf(&path, "%s/", dir);
        const char *at = strstr(s->pattern, "{shard}");
        if (!at) {
            sg_buf_free(&path);
            return;
        }
        sg_buf_putn(&path, s->pattern, (size_t)(at - s->pattern));
        sg_buf_printf(&path, "%u%s", k, at + 7);
        struct stat st;
        bool gone = path.oom || stat(path.data, &st) != 0;
        if (!gone && unlink(path.data) != 0) report_errno(err, "remove the stale", path.data);
        sg_buf_free(&path);
        if (gone) return;
    }
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
            rc = write_file_atomic(outdir, &outs->items[i], err);
        for (uint32_t i = 0; i < outs->nstale && rc == 0; i++) remove_stale(outdir, &outs->stale[i], err);
    }
    sg_buf_free(&dir);
    return rc;
}

