/* outdir.c: writing generated files into a folder: each atomically (a temporary file and a
 * rename), and not at all when its bytes would not change, so its mtime stays and builds
 * stay incremental. Shared by the command line and the benchmarks. */
#define _POSIX_C_SOURCE 200809L
#include "codegen.h"
#include "par.h"

#include <dirent.h>
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

/* What writing one file came to: nothing, or a message for the caller to print (the files
 * are written on two threads, the messages printed in the files' order). */
typedef struct written {
    bool  failed;
    char *message; /* malloc'ed, without "schemagen: error: "; NULL where out of memory */
} written;

static void fail(written *w, const char *what, const char *path) {
    sg_buf b;
    sg_buf_init(&b);
    sg_buf_printf(&b, "cannot %s '%s': %s", what, path, strerror(errno));
    w->failed = true;
    w->message = b.oom ? NULL : b.data;
    if (b.oom) sg_buf_free(&b);
}

/* Writes dir/name by way of a temporary file in dir and a rename, so readers see the old file
 * or the new one, never a part; leaves an identical file untouched. The process's umask is
 * read once, by the caller (umask can only be read by setting it). */
static void write_file_atomic(const char *dir, const sg_output *o, mode_t mask, written *w) {
    sg_buf path, tmp;
    sg_buf_init(&path);
    sg_buf_init(&tmp);
    sg_buf_printf(&path, "%s/%s", dir, o->name);
    sg_buf_printf(&tmp, "%s/.%s.XXXXXX", dir, o->name);
    if (path.oom || tmp.oom) {
        w->failed = true;
    } else if (!same_bytes(path.data, o)) {
        int   fd = mkstemp(tmp.data);
        FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
        if (!f) {
            fail(w, "create a file in", dir);
            if (fd >= 0) close(fd);
        } else {
            bool ok = fchmod(fd, 0666 & ~mask) == 0;
            for (size_t i = 0; ok && i < o->npieces; i++)
                ok = fwrite(o->pieces[i].p, 1, o->pieces[i].n, f) == o->pieces[i].n;
            ok = (fclose(f) == 0) && ok;
            if (!ok || rename(tmp.data, path.data) != 0) {
                fail(w, "write", path.data);
                unlink(tmp.data);
            }
        }
    }
    sg_buf_free(&path);
    sg_buf_free(&tmp);
}

/* One thread's files: those whose side is its, in order, up to its first failure. */
typedef struct writer {
    const char       *dir;
    const sg_outputs *outs;
    const uint8_t    *side; /* per output: which thread writes it */
    uint8_t           me;
    mode_t            mask;
    written          *done;
} writer;

static void *write_side(void *p) {
    writer *wr = p;
    for (uint32_t i = 0; i < wr->outs->n; i++) {
        if (wr->side[i] != wr->me) continue;
        write_file_atomic(wr->dir, &wr->outs->items[i], wr->mask, &wr->done[i]);
        if (wr->done[i].failed) break;
    }
    return NULL;
}

/* Writes every output, on two threads where there is enough to share: each file goes to the
 * thread with fewer bytes so far, the largest first. Rationale: where nothing changed (an
 * incremental build), writing is reading every file back to compare it: ~10 MB for the
 * corpus, a few milliseconds that two threads halve. */
static int write_all(const char *dir, const sg_outputs *outs, sg_worker *w, FILE *err) {
    enum { SHARE_MIN = 1 << 20 }; /* below this many bytes in all, one thread */
    uint8_t *side = calloc(outs->n ? outs->n : 1, 1);
    written *done = calloc(outs->n ? outs->n : 1, sizeof *done);
    uint32_t *order = calloc(outs->n ? outs->n : 1, sizeof *order);
    if (!side || !done || !order) {
        free(side), free(done), free(order);
        fputs("schemagen: error: out of memory\n", err);
        return -1;
    }
    size_t total = 0, load[2] = {0, 0};
    for (uint32_t i = 0; i < outs->n; i++) total += outs->items[i].len;
    for (uint32_t i = 0; i < outs->n; i++) order[i] = i;
    for (uint32_t i = 1; i < outs->n; i++) /* by size, largest first (insertion: a few dozen) */
        for (uint32_t k = i; k > 0 && outs->items[order[k]].len > outs->items[order[k - 1]].len; k--) {
            uint32_t t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    for (uint32_t i = 0; i < outs->n; i++) {
        uint8_t to = load[1] < load[0];
        side[order[i]] = to;
        load[to] += outs->items[order[i]].len;
    }
    mode_t mask = umask(0);
    umask(mask);
    writer here = {dir, outs, side, 0, mask, done}, there = here;
    there.me = 1;
    if (total < SHARE_MIN || !sg_worker_run2(w, write_side, &there, &here)) {
        for (uint32_t i = 0; i < outs->n; i++) side[i] = 0; /* all of them, here */
        write_side(&here);
    }
    int rc = 0;
    for (uint32_t i = 0; i < outs->n; i++) {
        if (!done[i].failed) continue;
        if (done[i].message) fprintf(err, "schemagen: error: %s\n", done[i].message);
        else fputs("schemagen: error: out of memory\n", err);
        free(done[i].message);
        rc = -1;
    }
    free(side), free(done), free(order);
    return rc;
}

/* Whether the file at path begins with the banner of one of s's templates (in its first
 * 4 KiB: a header comment may come first). */
static bool has_mark(const char *path, const sg_stale *s) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char   head[4097];
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    if (memchr(head, '\0', n) || !strstr(head, "Generated by schemagen ")) return false;
    for (uint32_t i = 0; i < s->nmarks; i++)
        if (strstr(head, s->marks[i])) return true;
    return false;
}

/* Removes what sg_stale calls stale from dir. */
static void remove_stale(const char *dir, const sg_outputs *outs, FILE *err) {
    const sg_stale *s = &outs->stale;
    DIR            *d = s->lib ? opendir(dir) : NULL;
    if (!d) return;
    size_t ln = strlen(s->lib);
    for (struct dirent *e; (e = readdir(d));) {
        const char *name = e->d_name;
        if (strncmp(name, s->lib, ln) != 0 || (name[ln] != '_' && name[ln] != '.')) continue;
        bool ours = false;
        for (uint32_t i = 0; i < outs->n && !ours; i++) ours = strcmp(outs->items[i].name, name) == 0;
        if (ours) continue;
        sg_buf path;
        sg_buf_init(&path);
        sg_buf_printf(&path, "%s/%s", dir, name);
        struct stat st;
        if (!path.oom && stat(path.data, &st) == 0 && S_ISREG(st.st_mode) && has_mark(path.data, s) &&
            unlink(path.data) != 0)
            report_errno(err, "remove the stale", path.data);
        sg_buf_free(&path);
    }
    closedir(d);
}

int sg_outputs_write(const char *outdir, const sg_outputs *outs, sg_worker *w, FILE *err) {
    sg_buf dir;
    sg_buf_init(&dir);
    sg_buf_puts(&dir, outdir);
    int rc = -1;
    if (dir.oom)
        fputs("schemagen: error: out of memory\n", err);
    else if (make_dirs(dir.data, err) == 0 && (rc = write_all(outdir, outs, w, err)) == 0)
        remove_stale(outdir, outs, err);
    sg_buf_free(&dir);
    return rc;
}

