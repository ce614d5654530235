/* dsl_when_c.c: `when_c`, the escape hatch of DSL declarations (docs/dsl.md, "The predicate
 * language"): a C function defined in a user's .c file, for what the language cannot say,
 * ANDed into the declaration's predicate after `when`. Generated code declares it (LIB_dsl.h)
 * and calls it with the op's typed arguments, so its name must be one the generated files can
 * declare and call: checked here, at the declaration's line. */
#include "derive.h"
#include "dsl.h"

#include "schema/sg_type_table.h"

#include <stdio.h>
#include <string.h>

/* Whether `name` is a C name the argument called `arg` in the schema may get. */
static bool hides(const char *arg, const char *name) {
    size_t na = strlen(arg), nn = strlen(name);
    while (na && arg[na - 1] == '_') na--;
    while (nn && name[nn - 1] == '_') nn--;
    if (nn == na && strncmp(arg, name, na) == 0) return true;
    return nn == na + 4 && strncmp(name, "arg_", 4) == 0 && strncmp(arg, name + 4, na) == 0;
}

/* Whether ops a and b take the same C parameter types, in order (one prototype fits both). */
static bool same_params(const sg_op *a, const sg_op *b) {
    if (a->schema.nargs != b->schema.nargs) return false;
    for (uint32_t i = 0; i < a->schema.nargs; i++)
        if (strcmp(sg_type_family_rows[sg_type_family_of(a->schema.args[i].type)].param,
                   sg_type_family_rows[sg_type_family_of(b->schema.args[i].type)].param) != 0)
            return false;
    return true;
}

bool sg_dsl_fn_name_free(const sg_dsl_set *s, const sg_dsl_decl *dc, const char *key,
                         const char *name, sg_pos pos, sg_diag *d) {
    /* the generated code calls it where the op's arguments are parameters: one of their C names
     * (the schema's, or with arg_ before it or _ after it: docs/derive.md) would hide it.
     * Compared by the schema's names, so a run without -o refuses what one with it would. */
    const sg_op *op = dc->op;
    for (uint32_t i = 0; i < op->schema.nargs; i++)
        if (hides(op->schema.args[i].name, name)) {
            sg_diag_report(d, SG_ERROR, pos, "'%s' names '%s', the C name an argument of %s "
                           "may have ('%s'), which would hide the function where the generated "
                           "code calls it", key, name, dc->op_name, op->schema.args[i].name);
            return false;
        }
    /* LIB.h declares every op's C name and names made from it (C_op, C_kernel, ...) */
    for (uint32_t i = 0; i < s->ndecls + 1; i++) {
        const sg_dsl_decl *o = i < s->ndecls ? s->decls[i] : dc;
        char cn[512];
        snprintf(cn, sizeof cn, "%s_%s%s%s", o->op->ns ? o->op->ns : "aten",
                 o->op->schema.name, o->op->schema.overload[0] ? "_" : "",
                 o->op->schema.overload);
        size_t k = strlen(cn);
        if (strncmp(name, cn, k) == 0 && (!name[k] || name[k] == '_')) {
            sg_diag_report(d, SG_ERROR, pos, "'%s' names '%s', among the names the "
                           "generated code declares for %s (%s, %s_op, ...)", key, name,
                           o->op_name, cn, cn);
            return false;
        }
    }
    return true;
}

bool sg_dsl_when_c(const sg_dsl_set *s, sg_dsl_decl *dc, const char *name, sg_pos pos,
                   sg_diag *d) {
    if (!sg_derive_c_identifier(name, false)) {
        sg_diag_report(d, SG_ERROR, pos, "'when_c' needs the name of a C function, not '%s'",
                       name);
        return false;
    }
    const char *why = sg_derive_user_fn_reserved(name);
    if (why) {
        sg_diag_report(d, SG_ERROR, pos, "'when_c' cannot name '%s': %s", name, why);
        return false;
    }
    if (!sg_dsl_fn_name_free(s, dc, "when_c", name, pos, d)) return false;
    const sg_op *op = dc->op;
    /* one function, one prototype: declarations of ops with other parameter types cannot
     * share it */
    for (uint32_t i = 0; i < s->ndecls; i++) {
        const sg_dsl_decl *o = s->decls[i];
        if (!o->when_c || strcmp(o->when_c, name) != 0 || same_params(o->op, op)) continue;
        sg_diag_report(d, SG_ERROR, pos, "'when_c' names '%s', the when_c of '%s' (%s:%u), "
                       "whose op %s takes other parameters than %s: one C function has one "
                       "signature", name, o->name, o->pos.src->path, o->when_c_pos.line,
                       o->op_name, dc->op_name);
        return false;
    }
    dc->when_c = name;
    dc->when_c_pos = pos;
    return true;
}

int sg_dsl_when_c_reached(const sg_dsl_set *s, const sg_dsl_decl *dc, sg_diag *d) {
    if (!dc->when_c) return 0;
    for (uint32_t i = 0; i < dc->nartifacts; i++) {
        sg_dsl_value v;
        const char *why = "";
        /* a `when` over the arguments cannot be evaluated here: the call decides */
        if (!sg_dsl_eval(dc->when.node, s->arts[dc->first + i].vals, &v, &why) || v.i) return 0;
    }
    sg_diag_report(d, SG_ERROR, dc->when_c_pos, "'when_c' names '%s', which no call would "
                   "reach: 'when' is false at every point of the grid", dc->when_c);
    return 1;
}
