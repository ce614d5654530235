/* validate_rules.h: the validator's rule files, each applying one family of rules; validate.c
 * (sg_validate) runs them in order. They share validate_ctx.h and never call each other. */
#ifndef SG_VALIDATE_RULES_H
#define SG_VALIDATE_RULES_H

#include "validate_ctx.h"

/* validate_schema.c: torchgen's rules on one aten op's schema. */
void sgv_check_schema(sgv_ctx *cx, const sg_op *op);
/* validate_schema.c: what c10 accepts and torchgen refuses, on a custom op: warnings. */
void sgv_check_custom_schema(sgv_ctx *cx, const sg_op *op);
/* validate_yaml.c: torchgen's rules on one aten op's yaml keys (its tags among them). */
void sgv_check_yaml(sgv_ctx *cx, const sg_op *op);
/* validate_yaml.c: dispatch keys listed once per op (every op, any namespace). */
void sgv_check_dispatch_once(sgv_ctx *cx, const sg_op *op);
/* validate_yaml.c: dispatch keys that exist (every op, any namespace; which of them aten may
 * list is sgv_check_yaml's). */
void sgv_check_dispatch_keys(sgv_ctx *cx, const sg_op *op);
/* validate_cross.c: the rules across ops: structured delegates, groups, the tags files. */
void sgv_check_cross(sgv_ctx *cx);

#endif
