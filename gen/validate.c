/* validate.c: sg_validate, the first tier of rules, and helpers the rule files share.
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
 * the problem is and the run goes on, so one run shows every error.
 */
#include "validate_util.h"

#include <stdio.h>
#include <string.h>

/* ---- shared helpers ---------------------------------------------------------------------- */

sg_pos sgv_key_pos(const sg_op *op, const char *key) {
    const sg_ynode *v = sg_op_key(op, key);
    return v ? v->pos : op->pos;
}

const char *sgv_alias_str(const sg_alias *a, char *buf, size_t n) {
    if (!a) {
        snprintf(buf, n, "no annotation");
        return buf;
    }
    sg_buf b;
    sg_buf_init(&b);
    sg_alias_print(&b, a);
    snprintf(buf, n, "%s", b.data ? b.data : "?");
    sg_buf_free(&b);
    return buf;
}

/* "ns::name" (aten where ns is NULL) into buf, cut to n - 1 bytes; returns its length. */
static size_t key_of(char *buf, size_t n, const char *ns, const char *name) {
    size_t k = 0;
    ns = ns ? ns : "aten";
    for (const char *p = ns; *p && k + 1 < n; p++) buf[k++] = *p;
    for (const char *p = "::"; *p && k + 1 < n; p++) buf[k++] = *p;
    for (const char *p = name; *p && k + 1 < n; p++) buf[k++] = *p;
    buf[k] = '\0';
    return k;
}

const sg_op *sgv_find(const sgv_ctx *cx, const char *ns, const char *name) {
    char key[512];
    size_t n = key_of(key, sizeof key, ns, name);
    return sgv_map_get(&cx->names, key, n);
}

bool sgv_name_exists(const sgv_ctx *cx, const char *ns, const char *name) {
    char key[512];
    size_t n = key_of(key, sizeof key, ns, name);
    return sgv_map_get(&cx->bases, key, n) != NULL;
}

static bool ident_ok(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(i && c >= '0' && c <= '9')) return false;
    }
    return n > 0;
}

static bool ends_with_n(const char *s, size_t n, const char *suffix) {
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

bool sgv_check_op_name(sgv_ctx *cx, const char *name, size_t n, sg_pos pos, const char *what) {
    int w = (int)(n > 80 ? 80 : n);
    if (!ident_ok(name, n)) {
        SGV_ERROR(cx, pos, "%s '%.*s' is not an operator name [SG-104]", what, w, name);
        return false;
    }
    sg_name_info info = sg_name_classify(name, n);
    bool dunder = info.dunder, inplace = !dunder && info.inplace;
    const char *why = NULL;
    if (ends_with_n(name, n, "_out"))
        why = "ends in '_out', which torchgen reserves: make 'out' an overload ('name.out')";
    else if (dunder && name[2] == 'i' && !info.augmented)
        why = "is a dunder name starting with 'i', which torchgen allows only for augmented "
              "assignment (__iadd__, __iand__, ...)";
    else if (inplace && ends_with_n(name, n - 1, "_functional"))
        why = "is in-place, but '_functional' names the functional twin of a mutable operator";
    if (why) SGV_ERROR(cx, pos, "%s '%.*s' %s [SG-104]", what, w, name, why);
    return why == NULL;
}

/* ---- tier 1: every op -------------------------------------------------------------------- */

void sgv_note_args(sg_op *op) {
    const sg_schema *s = &op->schema;
    for (uint32_t i = 0; i < s->nargs; i++) {
        const char *name = s->args[i].name;
        for (uint32_t k = 0; k < i && !op->dup_arg; k++) op->dup_arg = sgv_streq(name, s->args[k].name);
        op->keyword_arg |= sgv_python_keyword(name);
        op->dropout_arg |= sgv_contains(name, "dropout");
    }
    op->args_noted = true;
}

/* An argument name given twice. */
static void unique_arg_names(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    if (op->args_noted && !op->dup_arg) return;
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

bool sgv_name_keys(sg_op *op, sg_arena *a) {
    char   name[256], key[512];
    size_t n = key_of(key, sizeof key, op->ns, sgv_full_name(op, name, sizeof name));
    char  *full = sg_arena_strndup(a, key, n);
    if (!full) return false;
    op->name_key_len = (uint32_t)n;
    op->name_key_hash = sgv_hash(full, n);
    n = key_of(key, sizeof key, op->ns, op->schema.name);
    char *base = sg_arena_strndup(a, key, n);
    if (!base) return false;
    op->base_key_len = (uint32_t)n;
    op->base_key_hash = sgv_hash(base, n);
    op->base_key = base;
    op->name_key = full; /* last: the keys count once this is set */
    return true;
}

/* Indexes op by name; an operator defined twice (in any of the inputs) is an error. */
static bool index_op(sgv_ctx *cx, sg_op *op) {
    if (!op->name_key && !sgv_name_keys(op, cx->m->arena)) return false; /* the loader's, mostly */
    sgv_map_slot *sl =
        sgv_map_put_hashed(&cx->names, op->name_key, op->name_key_len, op->name_key_hash, op);
    if (!sl || !sgv_map_put_hashed(&cx->bases, op->base_key, op->base_key_len, op->base_key_hash, op))
        return false;
    const sg_op *first = sl->value;
    if (first != op) {
        char name[256];
        sgv_full_name(op, name, sizeof name);
        SGV_ERROR(cx, sg_op_pos_at(op, op->schema.name_offset), "operator '%s::%s' is defined "
                  "twice [SG-002]", op->ns ? op->ns : "aten", name);
        SGV_NOTE(cx, sg_op_pos_at(first, first->schema.name_offset), "first defined here");
    }
    return true;
}

/* ---- the run ----------------------------------------------------------------------------- */

static void check_op(sgv_ctx *cx, const sg_op *op) {
    if (op->checked) { /* the loader applied the rest */
        if (sgv_is_aten(op)) sgv_check_tags(cx, op); /* a no-op without tags files */
        return;
    }
    unique_arg_names(cx, op);
    sgv_check_dispatch_once(cx, op);
    if (!sgv_is_aten(op)) {
        sgv_check_custom_schema(cx, op);
        return;
    }
    sgv_check_schema(cx, op);
    sgv_check_yaml(cx, op);
}

void sg_validate_op(sg_model *m, sg_op *op, sg_diag *d) {
    sgv_ctx cx = {.m = m, .d = d, .tags_later = true};
    uint32_t before = d->nerrors + d->nwarnings;
    size_t   said = d->out.len;
    if (!op->parsed) return;
    check_op(&cx, op);
    op->checked = d->nerrors + d->nwarnings == before && d->out.len == said;
}

int sg_validate(sg_model *m, sg_diag *d) { return sg_validate_then(m, d, NULL, NULL); }

int sg_validate_groups(sg_model *m, sg_diag *d, uint32_t from, uint32_t to) {
    uint32_t before = d->nerrors;
    sgv_ctx  cx = {.m = m, .d = d};
    sgv_check_groups(&cx, from, to);
    return (int)(d->nerrors - before);
}

int sg_validate_then(sg_model *m, sg_diag *d, uint32_t (*before_cross)(void *ud), void *ud) {
    uint32_t before = d->nerrors;
    sgv_ctx cx = {.m = m, .d = d};
    bool ok = sgv_map_init(&cx.names, m->arena, m->nops) == 0 &&
              sgv_map_init(&cx.bases, m->arena, m->nops) == 0;
    for (uint32_t i = 0; ok && i < m->nops; i++)
        if (m->ops[i]->parsed) ok = index_op(&cx, m->ops[i]);
    for (uint32_t i = 0; ok && i < m->nops; i++)
        if (m->ops[i]->parsed) check_op(&cx, m->ops[i]);
    uint32_t groups = before_cross ? before_cross(ud) : m->ngroups;
    if (ok) sgv_check_cross(&cx, groups);
    else sg_diag_plain(d, SG_ERROR, "out of memory while validating");
    sgv_map_free(&cx.names);
    sgv_map_free(&cx.bases);
    return (int)(d->nerrors - before);
}
