/* emit.h: the front end's emitters. Each appends one rendering of a loaded, grouped and
 * validated model to an sg_buf; none of them does I/O of its own, and the same model always
 * gives the same bytes. An sg_buf with a sink makes the rendering a stream (the tool streams
 * the JSON to standard output this way).
 *
 * An emitter reads the model only. Ops whose func string did not parse (op->parsed false) are
 * still rendered where a rendering makes sense (their func string as written), so the emitters
 * are safe to call on a model with errors, though the tool never does.
 */
#ifndef SG_EMIT_H
#define SG_EMIT_H

#include "model.h"

/* The model as one JSON document: {"ops": [...], "tags": [...]} (docs/json-format.md).
 * Strings are escaped for JSON; bytes >= 0x80 pass through, so UTF-8 input gives UTF-8 output.
 * It takes all the memory it needs before it appends its first byte: out of memory sets
 * b->oom with nothing appended, and once bytes flow nothing can fail but b's sink. */
void sg_emit_json(sg_buf *b, const sg_model *m);
/* One line per op, in input order: the canonical schema with its namespace written out
 * ("aten::abs(Tensor self) -> Tensor"), as sg_schema_print prints it. */
void sg_emit_canonical(sg_buf *b, const sg_model *m);

/* The conformance case plan: cases.h. */

/* One op's canonical line without the newline (the namespace always written; an op that did
 * not parse gives its func string as written). */
void sg_emit_canonical_op(sg_buf *b, const sg_op *op);
/* A schema in canonical form, prefixed "ns::" where the schema itself names no namespace. */
void sg_emit_schema(sg_buf *b, const char *ns, const sg_schema *s);

#endif
