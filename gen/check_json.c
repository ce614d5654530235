/* check_json.c: sg_check_json, grouping and validation with the JSON rendered beside them.
 *
 * Rationale: they take similar time, so on two cores running them side by side hides most of
 * the shorter. The JSON names each op's group by the op's key, which the loader worked out
 * (sg_op_sign), so it need not wait for grouping; grouping then writes only op->group, which
 * the JSON writer does not read, and validation allocates from the model's arena, which the
 * writer never touches. The JSON goes to a spool, kept only where there is no error;
 * diagnostics are those of sg_model_group then sg_validate, in their order. */
#include "emit.h"
#include "par.h"

/* ops: below MIN a thread costs more than it saves; above MAX holding the JSON in memory
 * (about 1.5 KB an op) costs more than streaming it after validation */
enum { SIDE_BY_SIDE_MIN = 256, SIDE_BY_SIDE_MAX = 40000 };

bool sg_check_json_pays(const sg_model *m) {
    return m->nops >= SIDE_BY_SIDE_MIN && m->nops <= SIDE_BY_SIDE_MAX && sg_cpu_count() > 1;
}

typedef struct job {
    sg_model *m;
    sg_diag  *d;
    sg_spool *json; /* NULL: this job validates */
} job;

static void *run_job(void *arg) {
    job *j = arg;
    if (j->json) {
        sg_emit_json_spool(j->json, j->m);
    } else {
        sg_model_group(j->m, j->d);
        sg_validate(j->m, j->d);
    }
    return NULL;
}

/* Whether every op that parsed has its key from the loader, so grouping will not set one
 * while the JSON is written (it would only where the loader ran out of memory). */
static bool keyed(const sg_model *m) {
    for (uint32_t i = 0; i < m->nops; i++)
        if (m->ops[i]->parsed && !m->ops[i]->sig) return false;
    return true;
}

int sg_check_json(sg_model *m, sg_diag *d, sg_spool *json) {
    uint32_t before = d->nerrors;
    job      check = {m, d, NULL}, emit = {m, d, json};
    if (!sg_check_json_pays(m) || !keyed(m) || !sg_worker_run2(m->worker, run_job, &emit, &check)) {
        sg_model_group(m, d);
        sg_validate(m, d);
        if (d->nerrors == before) sg_emit_json_spool(json, m);
    }
    if (d->nerrors != before) sg_spool_free(json);
    return (int)(d->nerrors - before);
}
