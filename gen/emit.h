/* emit.h: the front end's emitters. Each appends one rendering of a loaded, grouped and
 * validated model to an sg_buf; none of them does I/O, so a caller writes the buffer once
 * (or not at all, when the run failed) and the same model always gives the same bytes.
 *
 * An emitter reads the model only. Ops whose func string did not parse (op->parsed false) are
 * still rendered where a rendering makes sense (their func string as written), so the emitters
 * are safe to call on a model with errors, though the tool never does.
 */
#ifndef SG_EMIT_H
#define SG_EMIT_H

#include "model.h"
#include "spool.h"

/* The model as one JSON document: {"ops": [...], "tags": [...]} (docs/json-format.md).
 * Strings are escaped for JSON; bytes >= 0x80 pass through, so UTF-8 input gives UTF-8 output. */
void sg_emit_json(sg_buf *b, const sg_model *m);
/* The same, appended to a spool, written in place there (s->oom set when out of memory). */
void sg_emit_json_spool(sg_spool *s, const sg_model *m);
/* The part of that text for ops [from, to) (with the document's head where from is 0, and its
 * tail where to is m->nops): parts for consecutive ranges, put one after the other, are the
 * whole. */
void sg_emit_json_part(sg_spool *s, const sg_model *m, uint32_t from, uint32_t to);

/* Ops' JSON one at a time, as sg_emit_json writes them, into a spool: how the loader renders
 * each op of a big file while the op is in cache (SG_EARLY_JSON, model.h). */
typedef struct sg_json_ops sg_json_ops;
/* A writer into s (NULL, and s->oom, when out of memory). */
sg_json_ops *sg_json_ops_new(sg_spool *s);
/* op's text, after what separates it from the op before it (first: it is the document's
 * first op). */
void sg_json_ops_put(sg_json_ops *w, const sg_op *op, bool first);
/* Counts what was written in the spool (s->len), for a caller marking where ops' text ends. */
void sg_json_ops_sync(sg_json_ops *w);
/* Syncs, then frees w (NULL: nothing). */
void sg_json_ops_free(sg_json_ops *w);

/* sg_model_group(m, d) then sg_validate(m, d), with m's JSON (sg_emit_json) put into *json
 * (initialised, empty): the loader's where it rendered every op's (SG_EARLY_JSON), else
 * rendered on a second thread meanwhile. *json keeps it only where they added no error
 * (otherwise it is left empty); it may refer to m's memory: put it before m is freed.
 * Returns the number of errors added. */
int sg_check_json(sg_model *m, sg_diag *d, sg_spool *json);
/* Whether sg_check_json gains over grouping and validating, then a streamed sg_emit_json: a
 * model neither small nor huge, and a second processor. (Where it does not, it still works,
 * on one thread.) */
bool sg_check_json_pays(const sg_model *m);

/* One line per op, in input order: the canonical schema with its namespace written out
 * ("aten::abs(Tensor self) -> Tensor"), as sg_schema_print prints it. */
void sg_emit_canonical(sg_buf *b, const sg_model *m);

/* One op's canonical line without the newline (the namespace always written; an op that did
 * not parse gives its func string as written). */
void sg_emit_canonical_op(sg_buf *b, const sg_op *op);
/* A schema in canonical form, prefixed "ns::" where the schema itself names no namespace. */
void sg_emit_schema(sg_buf *b, const char *ns, const sg_schema *s);

#endif
