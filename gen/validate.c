/* validate.c: sg_validate, the validator's one entry point, and the first tier of rules.
 *
 * Two tiers (docs/rules.md lists every rule with its torchgen counterpart):
 *   - every op: what PyTorch itself refuses when a library defines a schema. The parser
 *     already refuses bad grammar, unknown types, misplaced annotations, ill-typed defaults
 *     and a positional argument without a default after one with; here are the rules that
 *     need more than one argument or more than one op: an argument name given twice, an
 *     operator (namespace, name, overload) defined twice;
 *   - ops of the aten namespace: torchgen's stricter rules, on the schema (validate_schema.c),
 *     on the yaml keys (validate_yaml.c) and across ops (validate_cross.c).
 * Ops whose func did not parse are skipped (the parser said why). Every rule reports where
 * the problem is and the run goes on, so one run shows every error. Validation reads the
 * groups (sg_model_group runs first) and changes nothing in the model.
 */
#include "validate_rules.h"

#include <string.h>

/* ---- tier 1: every op -------------------------------------------------------------------- */

/* An argument name given twice. */
static void unique_arg_names(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    for (uint32_t i = 1; i < s->nargs; i++)
        for (uint32_t k = 0; k < i; k++)
            if (sgv_streq(s->args[i].name, s->args[k].name)) {
                /* c10 accepts it (custom libraries have such schemas); torchgen does not */
                bool aten = sgv_is_aten(op);
                sg_diag_report(cx->d, aten ? SG_ERROR : SG_WARNING,
                               sg_op_pos_at(op, s->args[i].name_offset), "argument name '%s' is "
                               "used twice in '%s'%s [SG-001]", s->args[i].name, s->name,
                               aten ? "" : "; PyTorch accepts this outside aten, torchgen does "
                               "not");
                SGV_NOTE(cx, sg_op_pos_at(op, s->args[k].name_offset), "first used here");
                break;
            }
}

/* Indexes op by name; an operator defined twice (in any of the inputs) is an error. */
static bool index_op(sgv_ctx *cx, sg_op *op) {
    char name[256], key[512];
    sgv_full_name(op, name, sizeof name);
    size_t n = sgv_name_key(key, sizeof key, op->ns, name);
    sg_strmap_slot *sl = sg_strmap_put(&cx->names, key, n, op);
    n = sgv_name_key(key, sizeof key, op->ns, op->schema.name);
    if (!sl || !sg_strmap_put(&cx->bases, key, n, op)) return false;
    const sg_op *first = sl->value;
    if (first != op) {
        SGV_ERROR(cx, sg_op_pos_at(op, op->schema.name_offset), "operator '%s::%s' is defined "
                  "twice [SG-002]", op->ns ? op->ns : "aten", name);
        SGV_NOTE(cx, sg_op_pos_at(first, first->schema.name_offset), "first defined here");
    }
    return true;
}

/* ---- the run ----------------------------------------------------------------------------- */

static void check_op(sgv_ctx *cx, const sg_op *op) {
    unique_arg_names(cx, op);
    sgv_check_dispatch_once(cx, op);
    sgv_check_dispatch_keys(cx, op);
    if (!sgv_is_aten(op)) {
        sgv_check_custom_schema(cx, op);
        return;
    }
    sgv_check_schema(cx, op);
    sgv_check_yaml(cx, op);
}

int sg_validate(sg_model *m, sg_diag *d) {
    uint32_t before = d->nerrors;
    sgv_ctx cx = {.m = m, .d = d};
    bool ok = sg_strmap_init(&cx.names, m->arena, m->nops) == 0 &&
              sg_strmap_init(&cx.bases, m->arena, m->nops) == 0;
    for (uint32_t i = 0; ok && i < m->nops; i++)
        if (m->ops[i]->parsed) ok = index_op(&cx, m->ops[i]);
    for (uint32_t i = 0; ok && i < m->nops; i++)
        if (m->ops[i]->parsed) check_op(&cx, m->ops[i]);
    if (ok) sgv_check_cross(&cx);
    else sg_diag_plain(d, SG_ERROR, "out of memory while validating");
    sg_strmap_free(&cx.names);
    sg_strmap_free(&cx.bases);
    return (int)(d->nerrors - before);
}
