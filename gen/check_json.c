/* check_json.c: sg_check_json, grouping and validation with the JSON rendered beside them.
 *
 * Rationale: on two cores, running side by side hides most of the shorter. Validation runs on
 * the calling thread; the worker groups (into an arena of its own, as validation allocates
 * from the model's), then writes the JSON, which names each op's group by the op's key from
 * the loader (sg_op_sign). Validation reads the groups only in its rules across ops, which
 * come last, and waits there for grouping to be done; then it writes the JSON's end, where
 * split_at cuts it. Where the loader rendered the JSON already (SG_EARLY_JSON), both threads
 * share out the rules on groups instead, and the document is put together from the loader's
 * text. The JSON goes to a spool, kept only where there is no error; diagnostics
 * are those of sg_model_group then sg_validate, in their order: where any part had anything
 * to say, both run again, in turn. */
#define _POSIX_C_SOURCE 200809L /* sched_yield */
#include "emit.h"
#include "par.h"

#include <sched.h>
#include <stdatomic.h>

/* ops: below MIN a thread costs more than it saves; above MAX holding the JSON in memory
 * (about 1.5 KB an op) costs more than streaming it after validation */
enum { SIDE_BY_SIDE_MIN = 256, SIDE_BY_SIDE_MAX = 40000 };

bool sg_check_json_pays(const sg_model *m) {
    return m->nops >= SIDE_BY_SIDE_MIN && m->nops <= SIDE_BY_SIDE_MAX && sg_cpu_count() > 1;
}

typedef struct run {
    sg_model  *m;
    sg_spool  *json;     /* the JSON of ops [0, split), by the worker; NULL: the loader's */
    sg_spool   rest;     /* of ops [split, nops), by the validating thread when done */
    uint32_t   split;
    sg_diag    dg, dv, dw; /* what grouping, validation and the worker's group rules said */
    sg_arena  *groups;   /* grouping's memory: validation allocates from the model's arena */
    atomic_int grouped;  /* set once grouping is done */
    atomic_uint next;    /* the next groups to apply the rules on groups to, where shared */
} run;

typedef struct job {
    run *r;
    bool groups; /* groups, then writes the JSON or applies rules; else validates */
} job;

/* Validation reads the groups only in its rules across ops, which come last. Where the loader
 * wrote the JSON, both threads then share out the rules on groups (share_groups). */
static uint32_t wait_grouped(void *ud) {
    run *r = ud;
    while (!atomic_load(&r->grouped)) sched_yield(); /* seldom: grouping is short */
    return r->json ? r->m->ngroups : 0;
}

/* The rules on groups, a few groups at a time, until none is left. */
static void share_groups(run *r, sg_diag *d) {
    enum { STEP = 32 };
    uint32_t n = r->m->ngroups;
    for (uint32_t i; (i = atomic_fetch_add(&r->next, STEP)) < n;)
        sg_validate_groups(r->m, d, i, n - i < STEP ? n : i + STEP);
}

static void *run_job(void *arg) {
    job *j = arg;
    run *r = j->r;
    if (j->groups) {
        /* the groups, their index and map take ~130 bytes an op: one chunk, faulted in at
         * once (and here, off the validating thread), rather than page by page */
        sg_arena_reserve(r->groups, (size_t)r->m->nops * 160);
        sg_model_group_in(r->m, &r->dg, r->groups);
        atomic_store(&r->grouped, 1);
        if (r->json) sg_emit_json_part(r->json, r->m, 0, r->split);
        else if (r->dg.nerrors == 0) share_groups(r, &r->dw);
    } else {
        sg_validate_then(r->m, &r->dv, wait_grouped, r);
        if (!r->json && r->dg.nerrors == 0) share_groups(r, &r->dv);
        if (r->json && r->split < r->m->nops && r->dv.nerrors == 0)
            sg_emit_json_part(&r->rest, r->m, r->split, r->m->nops);
    }
    return NULL;
}

/* Where the worker's JSON ends: the worker groups and writes the JSON while this thread
 * validates and then writes the JSON's end, each share set so that both end together, by the
 * two threads' speeds during the load. The costs, in units of the JSON's, were measured on
 * the 2-vCPU VM of docs/perf.md (2026-11-23); they only move where the JSON is cut. */
static uint32_t split_at(const sg_model *m) {
    const double validate = 0.9, group = 0.23;
    double share = sg_worker_share(m->worker);
    share = share < 0.05 ? 0.05 : share > 0.95 ? 0.95 : share;
    double speed = share / (1 - share); /* the worker's, this thread's being 1 */
    double mine = (group + 1 - speed * validate) / (1 + speed);
    mine = mine < 0 ? 0 : mine > 0.9 ? 0.9 : mine;
    return m->nops - (uint32_t)(mine * m->nops);
}

/* Whether every op that parsed has its key from the loader, so grouping will not work one out
 * (and write the op's key and view kind, which validation reads meanwhile): it would only
 * where the loader ran out of memory. */
static bool keyed(const sg_model *m) {
    for (uint32_t i = 0; i < m->nops; i++)
        if (m->ops[i]->parsed && !m->ops[i]->sig) return false;
    return true;
}

static bool quiet(const sg_diag *d) { return d->nerrors == 0 && d->nwarnings == 0 && !d->out.len; }

/* Grouping then the JSON (json NULL: a share of the rules on groups) on the worker, validation
 * here. true where it ran and had nothing to say; otherwise the caller runs grouping and
 * validation again, one after the other, so that what they say comes in their order. */
static bool side_by_side(sg_model *m, sg_spool *json) {
    run r = {.m = m, .json = json, .split = json ? split_at(m) : m->nops,
             .groups = sg_arena_new(NULL, NULL)};
    atomic_init(&r.grouped, 0);
    atomic_init(&r.next, 0);
    sg_spool_init(&r.rest);
    /* the JSON's end in a block of its size (about 1.5 KB an op), not a whole 4 MiB one: fresh
     * pages are the dearest thing here, and this one is on the critical path */
    r.rest.block = (size_t)(m->nops - r.split) * 1600;
    sg_diag_init(&r.dg);
    sg_diag_init(&r.dv);
    sg_diag_init(&r.dw);
    job groups = {&r, true}, checks = {&r, false};
    bool ran = r.groups && sg_worker_run2(m->worker, run_job, &groups, &checks);
    bool ok = ran && quiet(&r.dg) && quiet(&r.dv) && quiet(&r.dw) &&
              sg_model_keep_arena(m, r.groups);
    if (ok && json) sg_spool_splice(json, &r.rest);
    if (!ok && ran) sg_model_group(m, &r.dg); /* off the groups' arena before it goes */
    if (!ok && r.groups) sg_arena_free(r.groups);
    if (!ok && json) sg_spool_free(json); /* the run again writes it whole */
    sg_spool_free(&r.rest);
    sg_diag_free(&r.dg);
    sg_diag_free(&r.dv);
    sg_diag_free(&r.dw);
    return ok;
}

/* Whether the loader rendered every op's JSON (SG_EARLY_JSON). */
static bool rendered(const sg_model *m) {
    const sg_early_json *e = m->early_json;
    if (!e || e->text[0].oom || e->text[1].oom) return false;
    uint32_t next = 0;
    for (uint32_t i = 0; i < e->nruns && e->runs[i].first == next; i++) next += e->runs[i].count;
    return next == m->nops && m->nops > 0;
}

/* The document from the loader's text, referred to rather than copied: its head and tail are
 * rendered after thread 0's text (which is done with), then every run is put between them. */
static void assemble(sg_model *m, sg_spool *json) {
    sg_early_json *e = m->early_json;
    sg_spool      *t = &e->text[0];
    size_t head = t->len;
    sg_emit_json_part(t, m, 0, 0);
    size_t tail = t->len;
    sg_emit_json_part(t, m, m->nops, m->nops);
    sg_spool_view(json, t, head, tail);
    for (uint32_t i = 0; i < e->nruns; i++)
        sg_spool_view(json, &e->text[e->runs[i].text], e->runs[i].from, e->runs[i].to);
    sg_spool_view(json, t, tail, t->len);
}

int sg_check_json(sg_model *m, sg_diag *d, sg_spool *json) {
    uint32_t before = d->nerrors;
    /* the loader's JSON names each op's group by the key it worked out: all must have one */
    bool keys = keyed(m), early = keys && rendered(m);
    if (!sg_check_json_pays(m) || !keys || !side_by_side(m, early ? NULL : json)) {
        sg_model_group(m, d);
        sg_validate(m, d);
        if (d->nerrors == before && !early) sg_emit_json_spool(json, m);
    }
    if (d->nerrors == before && early) assemble(m, json);
    if (d->nerrors != before) sg_spool_free(json);
    return (int)(d->nerrors - before);
}
