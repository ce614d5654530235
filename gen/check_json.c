/* check_json.c: sg_validate_json, validation with the JSON rendered beside it.
 *
 * Rationale: both only read the model (validation allocates from the model's arena, which the
 * JSON writer never touches) and they take similar time, so on two cores running them side by
 * side hides most of the shorter one. The JSON goes to a spool, kept only where validation
 * finds no error; diagnostics are those of sg_validate alone, in its order. */
#include "emit.h"
#include "par.h"

/* ops: below MIN a thread costs more than it saves; above MAX holding the JSON in memory
 * (about 1.5 KB an op) costs more than streaming it after validation */
enum { SIDE_BY_SIDE_MIN = 256, SIDE_BY_SIDE_MAX = 40000 };

bool sg_validate_json_pays(const sg_model *m) {
    return m->nops >= SIDE_BY_SIDE_MIN && m->nops <= SIDE_BY_SIDE_MAX && sg_cpu_count() > 1;
}

typedef struct job {
    sg_model *m;
    sg_diag  *d;
    sg_spool *json; /* NULL: this job validates */
} job;

static void *run_job(void *arg) {
    job *j = arg;
    if (j->json) sg_emit_json_spool(j->json, j->m);
    else sg_validate(j->m, j->d);
    return NULL;
}

int sg_validate_json(sg_model *m, sg_diag *d, sg_spool *json) {
    uint32_t before = d->nerrors;
    job      check = {m, d, NULL}, emit = {m, d, json};
    if (!sg_validate_json_pays(m) || !sg_run2(run_job, &emit, &check)) {
        sg_validate(m, d);
        if (d->nerrors == before) sg_emit_json_spool(json, m);
    }
    if (d->nerrors != before) sg_spool_free(json);
    return (int)(d->nerrors - before);
}
