/* validate_ctx.h: what every rule file of the validator (validate_schema.c, validate_yaml.c,
 * validate_cross.c) uses: the run's context with its name index, and the rules' shared
 * helpers. validate.c builds the context; the rule files only read it. */
#ifndef SG_VALIDATE_CTX_H
#define SG_VALIDATE_CTX_H

#include "validate_util.h"

typedef struct sgv_ctx {
    sg_model *m;
    sg_diag  *d;
    sg_strmap   names; /* "ns::name.overload" -> the first op of that name */
    sg_strmap   bases; /* "ns::name" -> the first op of that name, any overload */
} sgv_ctx;

/* The op called `name` ("add.out", "add") in namespace ns, or NULL. */
const sg_op *sgv_find(const sgv_ctx *cx, const char *ns, const char *name);
/* Whether some op of namespace ns has the name `name` (overload aside). */
bool sgv_name_exists(const sgv_ctx *cx, const char *ns, const char *name);
/* torchgen's operator-name rules (V-17) on `name` (no overload): reports at pos, saying that it
 * is `what` ("operator name", "autogen name"); returns whether the name is fine. */
bool sgv_check_op_name(sgv_ctx *cx, const char *name, size_t len, sg_pos pos, const char *what);

#define SGV_ERROR(cx, pos, ...) sg_diag_report((cx)->d, SG_ERROR, (pos), __VA_ARGS__)
#define SGV_NOTE(cx, pos, ...)  sg_diag_report((cx)->d, SG_NOTE, (pos), __VA_ARGS__)

#endif
