/* load_split.c: a big schema file loaded in pieces by two threads at once.
 *
 * Rationale: reading the YAML is most of a big file's load, and one parser reads one stream
 * on one core. A schema file is one sequence of entries, each starting "- " at the start of a
 * line. Cut at such lines, each piece is a YAML stream of its own, which a parser of its own
 * reads. Two threads (the caller's and one created here, joined before the load returns) take
 * the pieces in turn, each into a model of its own; the ops are then joined in file order.
 * The pieces are taken one at a time rather than shared out in advance: where the second
 * thread starts late or runs slowly (another program on its core), the first takes more.
 *
 * The pieces' work is kept only where it is sure to be what one pass over the file gives:
 * every piece read without a single message, and each as a schema file (a tags or derivatives
 * file is told apart by its first entry, which only the first piece has); and no line before the last cut
 * starts "..." (a document end, after which a piece would be a second document). A cut that
 * falls inside a quoted scalar or a flow collection leaves a piece unfinished, which is an
 * error. Where anything is to be reported, the pieces' work is dropped and the caller loads
 * the file in one pass, so that messages are exactly those of one pass, in its order.
 * Positions need no translation: a piece starts a line, and the reader is told which.
 */
#include "load_split.h"

#include "yaml_ops.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { PIECE_MIN = 64 * 1024, PIECES_MAX = 8 };

typedef struct worker {
    sg_model m;
    sg_diag  d;
} worker;

typedef struct piece {
    sg_yaml_piece at;
    sg_model     *m;           /* the model of the worker that read it */
    uint32_t      first, end;  /* its ops, m->ops[first..end) */
} piece;

typedef struct job {
    const sg_source *src;
    piece            pieces[PIECES_MAX];
    unsigned         npieces;
    atomic_uint      next; /* the next piece to take */
} job;

typedef struct run {
    job    *job;
    worker *w;
} run;

/* Takes pieces until none is left. */
static void *work(void *arg) {
    run *r = arg;
    job *j = r->job;
    for (unsigned i; (i = atomic_fetch_add(&j->next, 1)) < j->npieces;) {
        piece *p = &j->pieces[i];
        p->m = &r->w->m;
        p->first = p->m->nops;
        sg_yaml_load_piece(p->m, j->src, p->at, &r->w->d);
        p->end = p->m->nops;
    }
    return NULL;
}

/* The first line at or past byte `from` of s that starts "- ": its offset, or 0. */
static size_t entry_at(const sg_source *s, size_t from) {
    const char *t = s->text, *end = t + s->len;
    for (const char *q = t + from - 1; (q = memchr(q, '\n', (size_t)(end - q))); q++)
        if (end - q > 2 && q[1] == '-' && q[2] == ' ') return (size_t)(q + 1 - t);
    return 0;
}

/* Cuts src into pieces of about equal size, each starting an entry; returns their count. */
static unsigned cut(const sg_source *src, piece *pieces) {
    size_t want = src->len / PIECE_MIN;
    unsigned n = want < 2 ? 2 : want > PIECES_MAX ? PIECES_MAX : (unsigned)want, k = 0;
    const char *t = src->text;
    size_t from = 0;
    uint32_t line = 1;
    for (unsigned i = 1; i <= n; i++) {
        size_t to = i < n ? entry_at(src, src->len / n * i) : src->len;
        if (i < n && to <= from) continue; /* no entry starts in this stretch */
        pieces[k++] = (piece){.at = {from, to, line}};
        for (const char *q = t + from; (q = memchr(q, '\n', (size_t)(t + to - q))); q++) line++;
        from = to;
        if (to == src->len) break;
    }
    return k;
}

/* Whether a line of t[0..n) starts "..." (a document end). */
static bool has_doc_end(const char *t, size_t n) {
    if (n >= 3 && memcmp(t, "...", 3) == 0) return true;
    for (const char *q = t, *end = t + n; (q = memchr(q, '\n', (size_t)(end - q))); q++)
        if (end - q > 3 && memcmp(q + 1, "...", 3) == 0) return true;
    return false;
}

/* Read without a message, as a schema file. */
static bool clean(const worker *w) {
    return w->d.nerrors == 0 && w->d.nwarnings == 0 && w->d.out.len == 0 && !w->d.out.oom &&
           !w->m.have_tags && w->m.ntags == 0 && !w->m.derivatives;
}

/* Moves the ops of every piece, in file order, after m's; false when out of memory. */
static bool join(sg_model *m, const job *j, worker *w) {
    uint32_t n = 0;
    for (int i = 0; i < 2; i++) {
        if (w[i].m.nops > UINT32_MAX - m->nops - n) return false;
        n += w[i].m.nops;
    }
    sg_op **ops = malloc(n * sizeof *ops + 1), **at = ops;
    bool ok = ops != NULL;
    for (unsigned i = 0; ok && i < j->npieces; i++) {
        const piece *p = &j->pieces[i];
        if (p->end == p->first) continue;
        memcpy(at, p->m->ops + p->first, (p->end - p->first) * sizeof *ops);
        at += p->end - p->first;
    }
    /* m takes both workers' ops and memory, worker by worker; then the ops it took are put
     * in file order */
    uint32_t nops = m->nops;
    for (int i = 0; ok && i < 2; i++) ok = sg_model_take_ops(m, &w[i].m) == 0;
    if (ok && n) memcpy(m->ops + nops, ops, n * sizeof *ops);
    else m->nops = nops; /* what was taken stays in m's arena, unused */
    free(ops);
    return ok;
}

bool sg_load_split(sg_model *m, const sg_source *src, size_t min_len) {
    if (src->len < min_len || src->len < 2) return false;
    job j = {.src = src};
    j.npieces = cut(src, j.pieces);
    if (j.npieces < 2 || has_doc_end(src->text, j.pieces[j.npieces - 1].at.from)) return false;
    worker w[2];
    bool ready = true;
    for (int i = 0; i < 2; i++) {
        sg_diag_init(&w[i].d);
        /* a worker's model is a big one from the start: huge pages (arena.c) */
        ready &= sg_model_init(&w[i].m) == 0 && sg_arena_reserve(w[i].m.arena, 1u << 20);
    }
    run r[2] = {{&j, &w[0]}, {&j, &w[1]}};
    pthread_t thread;
    bool done = false;
    if (ready && pthread_create(&thread, NULL, work, &r[1]) == 0) {
        work(&r[0]);
        pthread_join(thread, NULL);
        done = clean(&w[0]) && clean(&w[1]) && join(m, &j, w);
    }
    for (int i = 0; i < 2; i++) {
        sg_model_free(&w[i].m);
        sg_diag_free(&w[i].d);
    }
    return done;
}
