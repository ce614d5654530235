/* outdir.c: writing the generated files into a folder as one set. Shared by the command line
 * and the benchmarks.
 *
 * A run holds an exclusive flock on the folder itself while it works there, so runs into one
 * folder take turns (and a reader may take a shared one to see a whole set). Under the lock:
 *   1. look: what a killed run left (.LIB.sgtmp.PID.N and .LIB.sgold.PID.N) is removed, and
 *      the stale files of an earlier run (sg_stale) are listed;
 *   2. write: each output whose bytes change goes to a temporary file in the folder; a file
 *      that would not change is left alone, mtime included, so builds stay incremental;
 *   3. switch: each changed file's old version gets a second name (a hard link), the temporary
 *      file is renamed into place, and each stale file is renamed aside. Where a step fails,
 *      the steps done are undone in reverse (old versions renamed back, new files removed);
 *      else the old versions go.
 * So nothing of a run is in place before all of it is written, and a failure leaves the set
 * that was there. Only a run killed during step 3 (renames only) can leave a mix, which the
 * next run replaces; docs/cli.md says so. */
#define _DEFAULT_SOURCE /* flock */
#include "codegen.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every message of this file: "cannot WHAT 'DIR/NAME': what the error code says" (name NULL:
 * the folder; what NULL: out of memory). */
static void report(FILE *err, const char *what, const char *dir, const char *name, int code) {
    if (!what) fputs("schemagen: error: out of memory\n", err);
    else if (!name) fprintf(err, "schemagen: error: cannot %s '%s': %s\n", what, dir, strerror(code));
    else fprintf(err, "schemagen: error: cannot %s '%s/%s': %s\n", what, dir, name, strerror(code));
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
    report(err, "create directory", dir, NULL, errno);
    return -1;
}

/* True when dfd/name holds exactly o's bytes. */
static bool same_bytes(int dfd, const char *name, const sg_output *o) {
    int   fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        if (fd >= 0) close(fd);
        return false;
    }
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

/* Whether dfd/name begins with the banner of one of s's templates (in its first 4 KiB: a
 * header comment may come first). */
static bool has_mark(int dfd, const char *name, const sg_stale *s) {
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char    head[4097];
    ssize_t n = read(fd, head, sizeof head - 1);
    close(fd);
    if (n < 0) return false;
    head[n] = '\0';
    if (memchr(head, '\0', (size_t)n) || !strstr(head, SG_BANNER_HEAD)) return false;
    for (uint32_t i = 0; i < s->nmarks; i++)
        if (strstr(head, s->marks[i])) return true;
    return false;
}

/* Whether name is one this file gives its temporary files or old versions:
 * ".LIB.sgtmp.PID.N" or ".LIB.sgold.PID.N". */
static bool is_leftover(const char *name) {
    if (name[0] != '.') return false;
    const char *p = name + strlen(name);
    for (int k = 0; k < 2; k++) { /* ".N", then ".PID", from the end */
        const char *q = p;
        while (q > name && q[-1] >= '0' && q[-1] <= '9') q--;
        if (q == p || q - name < 2 || q[-1] != '.') return false;
        p = q - 1;
    }
    return p - name > 7 && (memcmp(p - 6, ".sgtmp", 6) == 0 || memcmp(p - 6, ".sgold", 6) == 0);
}

/* One file the switch changes: an output whose bytes change, or a stale file to remove. */
typedef struct change {
    const sg_output *o;    /* NULL: a stale file */
    char            *name; /* o's, or malloc'ed for a stale file */
    char            *tmp;  /* the new bytes' temporary name (outputs) */
    char            *bak;  /* the old version's second name */
    bool             old;  /* an old version a link can keep (anything but a folder) is there */
    bool             keep_mode;
    mode_t           mode; /* the old file's permissions, where keep_mode */
    bool             written, kept, placed, lost; /* lost: the undo could not restore it */
} change;

typedef struct plan {
    const char *dir;
    int         dfd;
    FILE       *err;
    change     *c;
    uint32_t    n, cap;
    bool        failed; /* reported */
} plan;

static void fail(plan *p, const char *what, const char *name, int code) {
    if (!p->failed) report(p->err, what, p->dir, name, code);
    p->failed = true;
}

static char *name_of(const char *lib, const char *kind, uint32_t i) {
    sg_buf b;
    sg_buf_init(&b);
    sg_buf_printf(&b, ".%s.%s.%ld.%u", lib, kind, (long)getpid(), (unsigned)i);
    if (!b.oom) return b.data;
    sg_buf_free(&b);
    return NULL;
}

static change *add(plan *p, const sg_output *o, const char *name, const char *lib) {
    if (p->n == p->cap) {
        uint32_t cap = p->cap ? 2 * p->cap : 16;
        change  *g = realloc(p->c, cap * sizeof *g);
        if (!g) return NULL;
        p->c = g;
        p->cap = cap;
    }
    change *c = &p->c[p->n];
    memset(c, 0, sizeof *c);
    c->o = o;
    c->name = o ? o->name : strdup(name);
    c->bak = name_of(lib, "sgold", p->n);
    c->tmp = o ? name_of(lib, "sgtmp", p->n) : NULL;
    p->n++; /* counted at once, so that plan_free frees what was made */
    return c->name && c->bak && (!o || c->tmp) ? c : NULL;
}

static void plan_free(plan *p) {
    for (uint32_t i = 0; i < p->n; i++) {
        if (!p->c[i].o) free(p->c[i].name);
        free(p->c[i].tmp);
        free(p->c[i].bak);
    }
    free(p->c);
}

/* Step 1: removes what a killed run left, and lists the stale files. */
static void look(plan *p, DIR *d, const sg_outputs *outs, const char *lib) {
    const sg_stale *s = &outs->stale;
    size_t          ln = strlen(lib);
    for (struct dirent *e; !p->failed && (e = readdir(d));) {
        const char *name = e->d_name;
        struct stat st;
        if (is_leftover(name)) {
            if (fstatat(p->dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
                unlinkat(p->dfd, name, 0) != 0)
                fail(p, "remove the leftover", name, errno);
            continue;
        }
        if (!s->lib || strncmp(name, lib, ln) != 0 || (name[ln] != '_' && name[ln] != '.')) continue;
        bool ours = false;
        for (uint32_t i = 0; i < outs->n && !ours; i++) ours = strcmp(outs->items[i].name, name) == 0;
        if (ours || fstatat(p->dfd, name, &st, 0) != 0 || !S_ISREG(st.st_mode) || !has_mark(p->dfd, name, s))
            continue;
        if (!add(p, NULL, name, lib)) fail(p, NULL, NULL, 0);
    }
}

/* Step 2 for one output: what is there, and, where the bytes change, the temporary file. */
static void prepare(plan *p, const sg_output *o, const char *lib) {
    struct stat st;
    bool        there = fstatat(p->dfd, o->name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (!there && errno != ENOENT) {
        fail(p, "write", o->name, errno);
        return;
    }
    struct stat to; /* what a link leads to */
    bool        file = there && fstatat(p->dfd, o->name, &to, 0) == 0 && S_ISREG(to.st_mode);
    if (file && same_bytes(p->dfd, o->name, o)) return;
    change *c = add(p, o, NULL, lib);
    if (!c) {
        fail(p, NULL, NULL, 0);
        return;
    }
    c->old = there && !S_ISDIR(st.st_mode);
    c->keep_mode = file;
    c->mode = file ? to.st_mode & 0777 : 0;
    int fd = openat(p->dfd, c->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        fail(p, "write", o->name, errno);
        return;
    }
    c->written = true;
    FILE *f = fdopen(fd, "wb");
    int   code = 0;
    if (!f) code = errno, close(fd);
    else if (c->keep_mode && fchmod(fd, c->mode) != 0) code = errno;
    if (f && !code && fwrite(o->text.data, 1, o->text.len, f) != o->text.len) code = errno;
    if (f && fclose(f) != 0 && !code) code = errno;
    if (code) fail(p, "write", o->name, code);
}

/* Step 3, undone: the changes made so far, in reverse. */
static void undo(plan *p) {
    for (uint32_t i = p->n; i-- > 0;) {
        change *c = &p->c[i];
        if (!c->placed) continue;
        if (c->kept) {
            if (renameat(p->dfd, c->bak, p->dfd, c->name) == 0) c->kept = false;
            else c->lost = true;
        } else if (unlinkat(p->dfd, c->name, 0) != 0) {
            c->lost = true;
        }
        if (c->lost) {
            report(p->err, "restore", p->dir, c->name, errno);
            if (c->kept) fprintf(p->err, "schemagen: note: its previous version is '%s/%s'\n", p->dir, c->bak);
        }
        c->placed = false;
    }
}

/* Step 3: the switch. */
static void switch_all(plan *p) {
    for (uint32_t i = 0; i < p->n && !p->failed; i++) {
        change *c = &p->c[i];
        if (!c->o) { /* stale: aside in one rename */
            if (renameat(p->dfd, c->name, p->dfd, c->bak) != 0) fail(p, "remove the stale", c->name, errno);
            else c->kept = c->placed = true;
            continue;
        }
        /* where the file system has no hard links, the old version is renamed aside: then
         * the file is missing for an instant */
        if (c->old && linkat(p->dfd, c->name, p->dfd, c->bak, 0) != 0 &&
            ((errno != EPERM && errno != EOPNOTSUPP) || renameat(p->dfd, c->name, p->dfd, c->bak) != 0)) {
            fail(p, "write", c->name, errno);
            break;
        }
        c->kept = c->old;
        if (renameat(p->dfd, c->tmp, p->dfd, c->name) != 0) fail(p, "write", c->name, errno);
        else c->placed = true;
    }
    if (p->failed) undo(p);
}

/* What is left of the run's own names: temporary files not placed, old versions not needed. */
static void tidy(plan *p) {
    for (uint32_t i = 0; i < p->n; i++) {
        change *c = &p->c[i];
        if (c->written && !c->placed) unlinkat(p->dfd, c->tmp, 0);
        if (c->kept && !c->lost) unlinkat(p->dfd, c->bak, 0);
    }
}

int sg_outputs_write(const char *outdir, const sg_outputs *outs, FILE *err) {
    sg_buf dir;
    sg_buf_init(&dir);
    sg_buf_puts(&dir, outdir);
    if (dir.oom) {
        report(err, NULL, NULL, NULL, 0);
        return -1;
    }
    int rc = make_dirs(dir.data, err);
    sg_buf_free(&dir);
    if (rc != 0) return -1;
    DIR *d = opendir(outdir);
    if (!d) {
        report(err, "open directory", outdir, NULL, errno);
        return -1;
    }
    plan        p = {.dir = outdir, .dfd = dirfd(d), .err = err};
    const char *lib = outs->stale.lib ? outs->stale.lib : "schemagen";
    int         r;
    while ((r = flock(p.dfd, LOCK_EX)) != 0 && errno == EINTR) {}
    if (r != 0) fail(&p, "lock", NULL, errno);
    else look(&p, d, outs, lib);
    for (uint32_t i = 0; i < outs->n && !p.failed; i++) prepare(&p, &outs->items[i], lib);
    if (!p.failed) switch_all(&p);
    tidy(&p);
    plan_free(&p);
    closedir(d); /* and with it the lock */
    return p.failed ? -1 : 0;
}
