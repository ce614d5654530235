/* group.c: op groups, keyed by torchgen's signature() printed as a string.
 *
 * The key of an op normalises its schema the way torchgen pairs variants:
 *   - namespace, then the base name: in-place `_` and the augmented dunder's `i` stripped
 *     (`add_` and `__iand__` give `add` and `__and__`), torchgen's `_functional` suffix
 *     stripped, a trailing `_copy` stripped (so `view` and `view_copy` meet), overload dropped;
 *   - the arguments without out arguments, without the TensorOptions group (dtype, layout,
 *     device, pin_memory), without annotations and without defaults, names kept;
 *   - the returns without annotations or names, followed by the written inputs that are not
 *     returned (self, then out arguments, then other positionals), as torchgen appends them.
 * So abs, abs_ and abs.out all give `aten::abs(Tensor self) -> Tensor`.
 *
 * A group holds one op per slot: ops[kind] for the functional, in-place, out, mutable and
 * scratch variants, and `view` for an aliasing view op (its `_copy` twin is the functional).
 * torchgen refuses two ops of one signature and kind (V-50); it keys that check on defaults
 * too, in two groupings: by schema kind without `_copy` stripped, and by view kind with it.
 * clash() applies both, so what we report is exactly what torchgen refuses. Other ops that
 * share a slot (possible only outside aten, or where torchgen's two groupings disagree with
 * one slot per kind) keep the first in the slot; every op still points at its group.
 *
 * One hash lookup per op: grouping the 2,674 ops of native_functions.yaml is linear.
 */
#include "validate_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Working memory for an op's key, reused op after op. */
typedef struct signer {
    sg_buf                 key;
    const struct sg_alias **alias; /* the annotations of the op's args, then rets */
    uint32_t               capalias;
} signer;

typedef struct grouper {
    sg_model  *m;
    sg_diag   *d;
    sg_strmap    map;
    signer     sign;
    int        errors;
} grouper;

/* ---- the key ----------------------------------------------------------------------------- */

#define PUT_LIT(b, lit) sg_buf_putn((b), lit, sizeof lit - 1)

/* A type without annotations. */
static void put_type(sg_buf *b, const sg_type *t) { sg_type_print(b, t, false); }

/* Fills g->alias for s: one walk of each type, reused by every question below. */
static bool load_aliases(signer *g, const sg_schema *s) {
    uint32_t n = s->nargs + s->nrets;
    if (n > g->capalias) {
        uint32_t cap = n < 64 ? 64 : n;
        const sg_alias **a = realloc(g->alias, cap * sizeof *g->alias);
        if (!a) return false;
        g->alias = a;
        g->capalias = cap;
    }
    for (uint32_t i = 0; i < n; i++)
        g->alias[i] = sg_type_alias(i < s->nargs ? s->args[i].type : s->rets[i - s->nargs].type);
    return true;
}

static bool written(const signer *g, uint32_t i) { return g->alias[i] && g->alias[i]->write; }

static void sig_args(signer *g, const sg_schema *s) {
    sg_buf *b = &g->key;
    int to = sgv_tensor_options(s, 0);
    bool first = true, star = false;
    PUT_LIT(b, "(");
    for (uint32_t i = 0; i < s->nargs; i++) {
        const sg_arg *a = &s->args[i];
        if ((a->kwarg_only && written(g, i)) || (to >= 0 && i - (uint32_t)to < 4)) continue;
        if (!first) PUT_LIT(b, ", ");
        if (a->kwarg_only && !star) PUT_LIT(b, "*, ");
        star |= a->kwarg_only;
        first = false;
        put_type(b, a->type);
        PUT_LIT(b, " ");
        sg_buf_puts(b, a->name);
    }
    if (s->varargs) {
        if (!first) PUT_LIT(b, ", ");
        PUT_LIT(b, "...");
    }
    PUT_LIT(b, ")");
}

static bool returned(const signer *g, const sg_schema *s, uint32_t i) {
    for (uint32_t r = 0; r < s->nrets; r++)
        if (sgv_alias_equal(g->alias[i], g->alias[s->nargs + r])) return true;
    return false;
}

/* Where a written input that is not returned goes among the extra returns: 0 self, 1 an out
 * argument, 2 another positional; -1 it is not one. */
static int extra_rank(const signer *g, const sg_schema *s, uint32_t i, int self) {
    if (!written(g, i) || returned(g, s, i)) return -1;
    if ((int)i == self) return 0;
    return s->args[i].kwarg_only ? 1 : 2;
}

static void put_ret(sg_buf *b, const sg_type *t, uint32_t *n) {
    if ((*n)++) PUT_LIT(b, ", ");
    put_type(b, t);
}

static void sig_rets(signer *g, const sg_schema *s) {
    sg_buf *b = &g->key;
    int self = sgv_self_index(s);
    uint32_t total = s->nrets, n = 0;
    for (uint32_t i = 0; i < s->nargs; i++) total += extra_rank(g, s, i, self) >= 0;
    bool parens = total != 1 || s->varret;
    if (parens) PUT_LIT(b, "(");
    for (uint32_t i = 0; i < s->nrets; i++) put_ret(b, s->rets[i].type, &n);
    for (int rank = 0; rank < 3 && n < total; rank++)
        for (uint32_t i = 0; i < s->nargs; i++)
            if (extra_rank(g, s, i, self) == rank) put_ret(b, s->args[i].type, &n);
    if (s->varret) {
        if (n) PUT_LIT(b, ", ");
        PUT_LIT(b, "...");
    }
    if (parens) PUT_LIT(b, ")");
}

static void signer_free(signer *g) {
    sg_buf_free(&g->key);
    free(g->alias);
}

/* Works out op's key into g->key; false when out of memory. */
static bool sign(signer *g, const sg_op *op) {
    const char *base, *ns = op->ns ? op->ns : "aten";
    bool copy;
    size_t n = sgv_sig_base(&op->schema, true, &base, &copy);
    g->key.len = 0;
    if (!load_aliases(g, &op->schema)) return false;
    sg_buf_puts(&g->key, ns);
    PUT_LIT(&g->key, "::");
    sg_buf_putn(&g->key, base, n);
    sig_args(g, &op->schema);
    PUT_LIT(&g->key, " -> ");
    sig_rets(g, &op->schema);
    return !g->key.oom;
}

/* ---- clashes ----------------------------------------------------------------------------- */

/* What clash() asks of an op. */
typedef struct facts {
    const sg_op   *op;
    int            vk;   /* sgv_view_kind */
    sg_schema_kind kind;
    bool           copy; /* a trailing `_copy` was stripped from the name for the key */
} facts;

static facts facts_of(const sg_op *op) {
    return (facts){op, sgv_view_kind(op), sg_schema_kind_of(&op->schema), sgv_copy_stripped(op)};
}

/* Whether torchgen refuses a and b, two ops of one key (see the file comment). */
static bool clash(const facts *a, const facts *b) {
    bool same = a->vk == b->vk || (a->kind == b->kind && a->copy == b->copy);
    return same && sgv_same_defaults(a->op, b->op);
}

static const char *kind_name(int vk) {
    if (vk == SGV_ALIASING) return "view";
    if (vk == SGV_ALIASING_INPLACE) return "in-place view";
    return sg_schema_kind_names[vk];
}

static void report_clash(grouper *g, const sg_group *grp, const sg_op *op, const sg_op *first) {
    char name[256], first_name[256];
    int vk = sgv_view_kind(op);
    if (vk != sgv_view_kind(first)) vk = (int)sg_schema_kind_of(&op->schema);
    sgv_full_name(op, name, sizeof name);
    sgv_full_name(first, first_name, sizeof first_name);
    sg_diag_report(g->d, SG_ERROR, sg_op_pos_at(op, op->schema.name_offset),
                   "'%s' is a second %s variant of signature '%s'; only one operator may have "
                   "a given signature and kind [SG-301]", name, kind_name(vk), grp->signature);
    sg_diag_report(g->d, SG_NOTE, sg_op_pos_at(first, first->schema.name_offset),
                   "the first %s variant, '%s', is here", kind_name(vk), first_name);
    g->errors++;
}

/* ---- grouping ---------------------------------------------------------------------------- */

static sg_op **slot_of(sg_group *grp, const facts *f) {
    if (f->vk == SGV_ALIASING) return &grp->view;
    return &grp->ops[f->vk == SGV_ALIASING_INPLACE ? SG_KIND_INPLACE : f->vk];
}

/* The member of grp that torchgen would refuse beside the op of f, or NULL. */
static const sg_op *clashing_member(const sg_group *grp, const facts *f) {
    for (int k = 0; k <= SG_KIND__COUNT; k++) {
        const sg_op *x = k < SG_KIND__COUNT ? grp->ops[k] : grp->view;
        if (!x) continue;
        facts fx = facts_of(x);
        if (clash(f, &fx)) return x;
    }
    return NULL;
}

static void place(grouper *g, sg_group *grp, sg_op *op) {
    facts f = facts_of(op);
    op->group = grp;
    const sg_op *x = clashing_member(grp, &f);
    if (x) {
        if (sgv_is_aten(op) && sgv_is_aten(x)) report_clash(g, grp, op, x);
        return;
    }
    sg_op **slot = slot_of(grp, &f);
    if (!*slot) *slot = op;
}

static sg_group *group_for(grouper *g, sg_op *op) {
    if (!sign(&g->sign, op)) return NULL;
    sg_strmap_slot *sl = sg_strmap_put(&g->map, g->sign.key.data, g->sign.key.len, NULL);
    if (!sl) return NULL;
    if (sl->value) return sl->value;
    sg_group *grp = sg_arena_alloc(g->m->arena, sizeof *grp);
    if (!grp) return NULL;
    grp->signature = sl->key;
    sl->value = grp;
    g->m->groups[g->m->ngroups++] = grp;
    return grp;
}

int sg_model_group(sg_model *m, sg_diag *d) {
    grouper g = {.m = m, .d = d};
    sg_arena *a = m->arena;
    m->ngroups = 0;
    m->groups = sg_arena_alloc(a, (m->nops ? m->nops : 1) * sizeof *m->groups);
    bool ok = m->groups && sg_strmap_init(&g.map, a, m->nops) == 0;
    for (uint32_t i = 0; i < m->nops; i++) m->ops[i]->group = NULL;
    for (uint32_t i = 0; ok && i < m->nops; i++) {
        sg_op *op = m->ops[i];
        if (!op->parsed) continue;
        sg_group *grp = group_for(&g, op);
        if (grp) place(&g, grp, op);
        ok = grp != NULL;
    }
    if (!ok) {
        sg_diag_plain(d, SG_ERROR, "out of memory while grouping operators");
        g.errors++;
    }
    sg_strmap_free(&g.map);
    signer_free(&g.sign);
    return g.errors;
}
