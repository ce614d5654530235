/* validate_util.h: facts about ops that the grouper (group.c), the validator (validate*.c) and
 * derive.c share. Private to gen/: nothing here is part of the model's contract. It depends on
 * the model alone; the validator's own context and rule files are in validate_ctx.h and
 * validate_rules.h, above it.
 *
 * Most helpers answer a torchgen question about one op (is it a view, where is `self`, where
 * are its TensorOptions), in torchgen's terms, so the rules read like the facts in
 * shared/reference/torchgen-schema-rules.md. A small string map serves every name index.
 */
#ifndef SG_VALIDATE_UTIL_H
#define SG_VALIDATE_UTIL_H

#include "model.h"
#include "strmap.h"

#include <string.h>

/* Whether two strings are equal. Rationale: most names compared here differ in their first
 * byte, and answering that inline saves a library call per comparison. */
static inline bool sgv_streq(const char *a, const char *b) {
    return a[0] == b[0] && strcmp(a, b) == 0;
}

/* ---- one op ------------------------------------------------------------------------------ */

/* torchgen's stricter rules apply to ops of the aten namespace (no `ns::`, or `aten::`). */
bool sgv_is_aten(const sg_op *op);
/* Index of the first positional argument named `self`, or -1 (torchgen's self_arg). */
int sgv_self_index(const sg_schema *s);
/* Index of the first of torchgen's TensorOptions group (four consecutive keyword-only
 * arguments dtype: ScalarType, layout: Layout, device: Device, pin_memory: bool, each maybe
 * optional) at or after `from`, or -1. */
int sgv_tensor_options(const sg_schema *s, uint32_t from);
/* Alias annotations equal as torchgen compares them (sets, write flag, after-set); NULL-aware. */
bool sgv_alias_equal(const sg_alias *a, const sg_alias *b);
/* The annotation of an argument or return (sg_type_alias of its type), or NULL. */
const sg_alias *sgv_alias(const sg_arg *a);
/* Whether the op's `tags:` list holds `tag`. */
bool sgv_has_tag(const sg_op *op, const char *tag);
/* torchgen's is_view_op: a return aliases an input without writing it, or the op is tagged
 * inplace_view (resize_ and resize_as_ excepted), or an input enters the wildcard set. */
bool sgv_is_view(const sg_op *op);
/* torchgen's view kind: 0..SG_KIND__COUNT-1 the schema kind of an op that is not a view,
 * SGV_ALIASING for a view, SGV_ALIASING_INPLACE for an in-place view. */
enum { SGV_ALIASING = SG_KIND__COUNT, SGV_ALIASING_INPLACE };
int sgv_view_kind(const sg_op *op);
/* Whether a dispatch key is listed in the op's dispatch table. */
bool sgv_has_dispatch_key(const sg_op *op, const char *key);
/* torchgen's has_composite_implicit_autograd_kernel: a CompositeImplicitAutograd entry, or
 * no dispatch table at all on an op that is neither structured nor a structured delegate. */
bool sgv_has_cia(const sg_op *op);
/* "name.overload" or "name" into buf (cut to n - 1 bytes); returns buf. */
const char *sgv_full_name(const sg_op *op, char *buf, size_t n);
/* "ns::name" (aten where ns is NULL) into buf, cut to n - 1 bytes; returns its length. */
size_t sgv_name_key(char *buf, size_t n, const char *ns, const char *name);
/* Position of the value of yaml key `key`, or of the entry where the key is absent. */
sg_pos sgv_key_pos(const sg_op *op, const char *key);
/* The annotation printed ("(a!)", or "no annotation") into buf. */
const char *sgv_alias_str(const sg_alias *a, char *buf, size_t n);

/* The signature's base name: s->base without torchgen's `_functional` suffix, and without a
 * trailing `_copy` when strip_copy (then *stripped tells whether one was there). */
size_t sgv_sig_base(const sg_schema *s, bool strip_copy, const char **base, bool *stripped);

/* Whether argument i of s stays in the signature: not out, not TensorOptions (at `to`). */
bool sgv_sig_kept(const sg_schema *s, uint32_t i, int to);
/* Whether the op's base name lost a trailing `_copy` in its signature (view_copy ops). */
bool sgv_copy_stripped(const sg_op *op);
/* Two ops of one signature key: whether their kept arguments have the same defaults, as
 * torchgen's signature() (which keeps defaults) compares them. */
bool sgv_same_defaults(const sg_op *a, const sg_op *b);

#endif
