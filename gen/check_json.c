/* check_json.c: sg_check_json, grouping and validation with the JSON rendered beside them.
 *
 * Rationale: on two cores, running side by side hides most of the shorter. Validation runs on
 * the calling thread; the worker groups (into an arena of its own, as validation allocates
 * from the model's), then writes the JSON, which names each op's group by the op's key from
 * the loader (sg_op_sign). Validation reads the groups only in its rules across ops, which
 * come last, and waits there for grouping to be done; then it writes the JSON's end, where
 * split_at cuts it. The JSON goes to a spool, kept only where there is no error; diagnostics
 * are those of sg_model_group then sg_validate, in their order: where either had anything to
 * say, both run again, in turn. */
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
    sg_spool  *json;    /* the JSON of ops [0, split), by the worker */
    sg_spool   rest;    /* of ops [split, nops), by the validating thread when done */
    uint32_t   split;
    sg_diag    dg, dv;  /* what grouping and validation said */
    sg_arena  *groups;  /* grouping's memory: validation allocates from the model's arena */
    atomic_int grouped; /* set once grouping is done */
} run;

typedef struct job {
    run *r;
    bool emits; /* groups, then writes the JSON; else validates */
} job;

/* Validation reads the groups only in its rules across ops, which come last. */
static void wait_grouped(void *ud) {
    run *r = ud;
    while (!atomic_load(&r->grouped)) sched_yield(); /* seldom: grouping is short */
}

static void *run_job(void *arg) {
    job *j = arg;
    run *r = j->r;
    if (j->emits) {
        sg_model_group_in(r->m, &r->dg, r->groups);
        atomic_store(&r->grouped, 1);
        sg_emit_json_part(r->json, r->m, 0, r->split);
    } else {
        sg_validate_then(r->m, &r->dv, wait_grouped, r);
        if (r->split < r->m->nops && r->dv.nerrors == 0)
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

/* Grouping then the JSON on the worker, validation here. true where it ran and had nothing
 * to say; otherwise the caller runs grouping and validation again, one after the other, so
 * that what they say comes in their order (the JSON, where rendered, stays valid). */
static bool side_by_side(sg_model *m, sg_spool *json) {
    run r = {.m = m, .json = json, .split = split_at(m), .groups = sg_arena_new(NULL, NULL)};
    atomic_init(&r.grouped, 0);
    sg_spool_init(&r.rest);
    /* the groups, their index and map take ~130 bytes an op: one chunk, faulted in at once,
     * rather than growing through small ones page by page */
    if (r.groups) sg_arena_reserve(r.groups, (size_t)m->nops * 160);
    /* the JSON's end in a block of its size (about 1.5 KB an op), not a whole 4 MiB one: fresh
     * pages are the dearest thing here, and this one is on the critical path */
    r.rest.block = (size_t)(m->nops - r.split) * 1600;
    sg_diag_init(&r.dg);
    sg_diag_init(&r.dv);
    job emits = {&r, true}, checks = {&r, false};
    bool ran = r.groups && sg_worker_run2(m->worker, run_job, &emits, &checks);
    bool ok = ran && quiet(&r.dg) && quiet(&r.dv) && sg_model_keep_arena(m, r.groups);
    if (ok) sg_spool_splice(json, &r.rest);
    if (!ok && ran) sg_model_group(m, &r.dg); /* off the groups' arena before it goes */
    if (!ok && r.groups) sg_arena_free(r.groups);
    if (!ok) sg_spool_free(json); /* the run again writes it whole */
    sg_spool_free(&r.rest);
    sg_diag_free(&r.dg);
    sg_diag_free(&r.dv);
    return ok;
}

int sg_check_json(sg_model *m, sg_diag *d, sg_spool *json) {
    uint32_t before = d->nerrors;
    if (!sg_check_json_pays(m) || !keyed(m) || !side_by_side(m, json)) {
        sg_model_group(m, d);
        sg_validate(m, d);
        if (d->nerrors == before) sg_emit_json_spool(json, m);
    }
    if (d->nerrors != before) sg_spool_free(json);
    return (int)(d->nerrors - before);
}
