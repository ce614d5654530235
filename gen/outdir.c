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

/* Every message of this file: "cannot WHAT 'PATH': what error code says" (what NULL: out of
 * memory). */
static void report(FILE *err, const char *what, const char *path, int code) {
    if (what) fprintf(err, "schemagen: error: cannot %s '%s': %s\n", what, path, strerror(code));
    else fputs("schemagen: error: out of memory\n", err);
}

static void report_errno(FILE *err, const char *what, const char *path) {
    report(err, what, path, errno);
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
    bool   same = true;
    size_t n, total = 0;
    while (same && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        same = n <= o->text.len - total && memcmp(chunk, o->text.data + total, n) == 0;
        total += n;
    }
    same = same && total == o->text.len && !ferror(f);
    fclose(f);
    return same;
}

/* One output's part in writing them all: which thread writes it, and where that failed,
 * what to report (the threads record, the caller reports, in the files' order). */
typedef struct file_job {
    uint8_t     side;
    bool        failed;
    const char *what; /* report()'s; NULL: out of memory */
    char       *path; /* malloc'ed */
    int         code; /* errno */
} file_job;

static void fail(file_job *j, const char *what, const char *path) {
    j->failed = true;
    j->code = errno;
    j->path = strdup(path);
    j->what = j->path ? what : NULL;
}

/* Writes dir/name by way of a temporary file in dir and a rename, so readers see the old file
 * or the new one, never a part; leaves an identical file untouched. The process's umask is
 * read once, by the caller (umask can only be read by setting it). */
static void write_file_atomic(const char *dir, const sg_output *o, mode_t mask, file_job *j) {
    sg_buf path, tmp;
    sg_buf_init(&path);
    sg_buf_init(&tmp);
    sg_buf_printf(&path, "%s/%s", dir, o->name);
    sg_buf_printf(&tmp, "%s/.%s.XXXXXX", dir, o->name);
    if (path.oom || tmp.oom) {
        j->failed = true;
    } else if (!same_bytes(path.data, o)) {
        int   fd = mkstemp(tmp.data);
        FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
        if (!f) {
            fail(j, "create a file in", dir);
            if (fd >= 0) close(fd);
        } else {
            bool ok = fchmod(fd, 0666 & ~mask) == 0;
            ok = ok && fwrite(o->text.data, 1, o->text.len, f) == o->text.len;
            ok = (fclose(f) == 0) && ok;
            if (!ok || rename(tmp.data, path.data) != 0) {
                fail(j, "write", path.data);
                unlink(tmp.data);
            }
        }
    }
    sg_buf_free(&path);
    sg_buf_free(&tmp);
}

/* One thread's files: those of its side, in order, up to its first failure. */
typedef struct writer {
    const char       *dir;
    const sg_outputs *outs;
    file_job         *jobs;
    uint8_t           me;
    mode_t            mask;
} writer;

static void *write_side(void *p) {
    writer *wr = p;
    for (uint32_t i = 0; i < wr->outs->n; i++) {
        if (wr->jobs[i].side != wr->me) continue;
        write_file_atomic(wr->dir, &wr->outs->items[i], wr->mask, &wr->jobs[i]);
        if (wr->jobs[i].failed) break;
    }
    return NULL;
}

/* Writes every output, on two threads where there is enough to share: each file goes to the
 * thread with fewer bytes so far, the largest first. Rationale: where nothing changed (an
 * incremental build), writing is reading every file back to compare it: ~10 MB for the
 * corpus, a few milliseconds that two threads halve. */
static int write_all(const char *dir, const sg_outputs *outs, sg_worker *w, FILE *err) {
    enum { SHARE_MIN = 1 << 20 }; /* below this many bytes in all, one thread */
    uint32_t  n = outs->n;
    file_job *jobs = calloc(n ? n : 1, sizeof *jobs);
    uint32_t *order = calloc(n ? n : 1, sizeof *order);
    if (!jobs || !order) {
        free(jobs), free(order);
        report(err, NULL, NULL, 0);
        return -1;
    }
    size_t total = 0, load[2] = {0, 0};
    for (uint32_t i = 0; i < n; i++) { /* by size, largest first (insertion: a few dozen) */
        uint32_t k = i;
        for (; k > 0 && outs->items[order[k - 1]].text.len < outs->items[i].text.len; k--) order[k] = order[k - 1];
        order[k] = i;
        total += outs->items[i].text.len;
    }
    for (uint32_t i = 0; i < n; i++) {
        file_job *j = &jobs[order[i]];
        j->side = load[1] < load[0];
        load[j->side] += outs->items[order[i]].text.len;
    }
    mode_t mask = umask(0);
    umask(mask);
    writer here = {dir, outs, jobs, 0, mask}, there = {dir, outs, jobs, 1, mask};
    if (total < SHARE_MIN || !sg_worker_run2(w, write_side, &there, &here)) {
        for (uint32_t i = 0; i < n; i++) jobs[i].side = 0; /* all of them, here */
        write_side(&here);
    }
    int rc = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!jobs[i].failed) continue;
        report(err, jobs[i].what, jobs[i].path, jobs[i].code);
        free(jobs[i].path);
        rc = -1;
    }
    free(jobs), free(order);
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
        report(err, NULL, NULL, 0);
    else if (make_dirs(dir.data, err) == 0 && (rc = write_all(outdir, outs, w, err)) == 0)
        remove_stale(outdir, outs, err);
    sg_buf_free(&dir);
    return rc;
}

