/* derive.h: the model pass that adds what code generation needs for structured ops and for
 * `autogen:`, as torchgen does before it generates code (docs/derive.md).
 *
 *   - structured links: an op with `structured_delegate: X` points at X (structured_out); X, a
 *     structured out op (structured_is_out), lists the ops that delegate to it (delegates);
 *   - autogen: every name an op lists under `autogen:` becomes a new op of the model, its
 *     schema derived the way torchgen's native_function_generation.py derives it (an out
 *     variant, or the functional variant of an in-place or mutable op), its yaml position the
 *     autogen item's; then the groups are rebuilt so the new ops join their groups.
 */
#ifndef SG_DERIVE_H
#define SG_DERIVE_H

#include "model.h"

/* Run after sg_model_group and sg_validate succeeded. Sets the structured links of every op
 * and adds the ops that `autogen:` asks for (sg_op.autogen_from is set on those). Running it
 * again adds nothing new. Errors go to d (SG-401..SG-406, docs/derive.md; and SG-301 should a
 * new op clash in its group); returns the number of errors added. */
int sg_model_derive(sg_model *m, sg_diag *d);

#endif
