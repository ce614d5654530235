/* validate_cross.c: torchgen's rules across aten ops (V-41..V-46, V-48) and on the tags file.
 *
 * Most of them are about torchgen's NativeFunctionsGroup: the functional, in-place, mutable
 * and out variants of one signature. Our groups (group.c) strip a trailing `_copy` and
 * defaults from the key, torchgen's do not; its "pre-group" of an op is the members of our
 * group that share the op's `_copy` and defaults (pregroup_of). torchgen also generates the
 * out and functional variants that `autogen:` promises before it groups; simulate_autogen
 * computes what it would generate, so the group rules see the same groups torchgen sees.
 * docs/rules.md lists the rules (SG-3xx).
 */
#include "validate_rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NAME_MAX_ = 256 };

static sg_pos name_pos(const sg_op *op) { return sg_op_pos_at(op, op->schema.name_offset); }

/* ---- pre-groups -------------------------------------------------------------------------- */

/* A torchgen pre-group: one op per schema kind, plus what torchgen would generate. */
typedef struct pregroup {
    const sg_op *by_kind[SG_KIND__COUNT];
    uint32_t     n;                 /* ops written in the yaml */
    bool         gen_functional, gen_out;
    char         functional_name[NAME_MAX_], out_name[NAME_MAX_];
} pregroup;

static const sg_op *member(const sg_group *g, int k) {
    return k < SG_KIND__COUNT ? g->ops[k] : g->view;
}

static bool same_pregroup(const sg_op *a, const sg_op *b) {
    if (a == b) return true;
    return sgv_copy_stripped(a) == sgv_copy_stripped(b) && sgv_same_defaults(a, b);
}

static void pregroup_of(const sg_group *g, const sg_op *ref, pregroup *pg) {
    memset(pg, 0, sizeof *pg);
    for (int k = 0; k <= SG_KIND__COUNT; k++) {
        const sg_op *x = member(g, k);
        if (!x || !same_pregroup(x, ref)) continue;
        pg->by_kind[sg_schema_kind_of(&x->schema)] = x;
        pg->n++;
    }
}

#define PG_FUNCTIONAL(pg) ((pg)->by_kind[SG_KIND_FUNCTIONAL])
#define PG_INPLACE(pg)    ((pg)->by_kind[SG_KIND_INPLACE])
#define PG_OUT(pg)        ((pg)->by_kind[SG_KIND_OUT])
#define PG_MUTABLE(pg)    ((pg)->by_kind[SG_KIND_MUTABLE])

/* ---- what torchgen generates (autogen) ---------------------------------------------------- */

/* torchgen skips generating variants for manual bindings, views, and groups that are all
 * CompositeImplicitAutograd and not tagged core; and for polygamma_, which it lists. */
static bool generation_skipped(const pregroup *pg) {
    bool manual = true, view = false, cia = true, core = false;
    for (int k = 0; k < SG_KIND__COUNT; k++) {
        const sg_op *x = pg->by_kind[k];
        if (!x) continue;
        manual &= x->manual_cpp_binding == SG_TRUE;
        view |= sgv_is_view(x) && !sgv_streq(x->schema.name, "set_");
        cia &= sgv_has_cia(x);
        core |= sgv_has_tag(x, "core");
    }
    if (manual || view || (cia && !core)) return true;
    if (PG_OUT(pg) && pg->n == 1) return true;
    char name[NAME_MAX_];
    return PG_INPLACE(pg) && strcmp(sgv_full_name(PG_INPLACE(pg), name, sizeof name), "polygamma_") == 0;
}

static bool returns_tensor(const sg_schema *s) {
    for (uint32_t i = 0; i < s->nrets; i++)
        if (sg_type_is_tensor_like(s->rets[i].type)) return true;
    return false;
}

static bool autogen_mentions_out(const sg_op *op) {
    for (uint32_t i = 0; i < op->autogen.n; i++)
        if (strstr(op->autogen.items[i], "out")) return true;
    return false;
}

/* The op torchgen derives generated variants from: mutable, in-place, out, functional. */
static const sg_op *base_fn(const pregroup *pg) {
    if (PG_MUTABLE(pg)) return PG_MUTABLE(pg);
    if (PG_INPLACE(pg)) return PG_INPLACE(pg);
    return PG_OUT(pg) ? PG_OUT(pg) : PG_FUNCTIONAL(pg);
}

/* The parts (NULL-terminated) one after another into dst[NAME_MAX_], cut to fit. */
static void join(char *dst, const char *const *parts) {
    size_t n = 0;
    for (; *parts; parts++)
        for (const char *p = *parts; *p && n + 1 < NAME_MAX_; p++) dst[n++] = *p;
    dst[n] = '\0';
}

static void simulate_autogen(pregroup *pg) {
    const sg_op *b = base_fn(pg);
    if (!b || generation_skipped(pg)) return; /* no base: a scratch operator alone */
    const sg_schema *s = &b->schema;
    sg_schema_kind k = sg_schema_kind_of(s);
    bool valid = k == SG_KIND_INPLACE || returns_tensor(s);
    pg->gen_out = !PG_OUT(pg) && valid && autogen_mentions_out(b);
    pg->gen_functional = !PG_FUNCTIONAL(pg) && (PG_OUT(pg) || pg->gen_out);
    if (!pg->gen_out && !pg->gen_functional) return;
    const char *name = k == SG_KIND_INPLACE ? s->base : s->name, *ov = s->overload;
    /* Rationale: every group asks for these, and joining by hand is cheaper than snprintf */
    join(pg->out_name, (const char *[]){name, ".", ov, ov[0] ? "_out" : "out", NULL});
    join(pg->functional_name, (const char *[]){s->base, k == SG_KIND_MUTABLE ? "_functional" : "",
                                               ov[0] ? "." : "", ov, NULL});
}

/* Whether torchgen makes a NativeFunctionsGroup: a functional and an out variant. */
static bool forms_group(const pregroup *pg) {
    return (PG_FUNCTIONAL(pg) || pg->gen_functional) && (PG_OUT(pg) || pg->gen_out);
}

/* ---- V-42: autogen lists exactly what is generated ---------------------------------------- */

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends s to buf (n bytes, *used of them taken), cutting it where it does not fit.
 * Rationale: every group with autogen asks for two such lists; snprintf is costlier. */
static void append(char *buf, size_t n, size_t *used, const char *s) {
    size_t k = *used;
    while (*s && k + 1 < n) buf[k++] = *s++;
    buf[k] = '\0';
    *used = k;
}

/* The sorted, distinct autogen names of the pre-group joined with ", " into buf. */
static void listed(const pregroup *pg, char *buf, size_t n) {
    const char *names[64];
    size_t k = 0, used = 0;
    for (int kind = 0; kind < SG_KIND__COUNT; kind++)
        for (uint32_t i = 0; pg->by_kind[kind] && i < pg->by_kind[kind]->autogen.n && k < 64; i++)
            names[k++] = pg->by_kind[kind]->autogen.items[i];
    qsort(names, k, sizeof *names, cmp_str);
    buf[0] = '\0';
    for (size_t i = 0; i < k; i++) {
        if (i && sgv_streq(names[i], names[i - 1])) continue;
        if (used) append(buf, n, &used, ", ");
        append(buf, n, &used, names[i]);
    }
}

static void generated(const pregroup *pg, char *buf, size_t n) {
    const char *a = pg->gen_functional ? pg->functional_name : NULL;
    const char *b = pg->gen_out ? pg->out_name : NULL;
    if (a && b && strcmp(a, b) > 0) {
        const char *t = a;
        a = b;
        b = t;
    }
    size_t used = 0;
    buf[0] = '\0';
    if (a) append(buf, n, &used, a);
    if (a && b) append(buf, n, &used, ", ");
    if (b) append(buf, n, &used, b);
}

static bool any_autogen(const pregroup *pg) {
    for (int k = 0; k < SG_KIND__COUNT; k++)
        if (pg->by_kind[k] && pg->by_kind[k]->autogen.n) return true;
    return false;
}

/* Where an autogen problem is shown: the base op's autogen list, else another member's, else
 * the base op's name. */
static sg_pos autogen_pos(const pregroup *pg) {
    const sg_op *b = base_fn(pg);
    if (sg_op_key(b, "autogen")) return sgv_key_pos(b, "autogen");
    for (int k = 0; k < SG_KIND__COUNT; k++)
        if (pg->by_kind[k] && sg_op_key(pg->by_kind[k], "autogen"))
            return sgv_key_pos(pg->by_kind[k], "autogen");
    return name_pos(b);
}

static void check_autogen(sgv_ctx *cx, const pregroup *pg) {
    char want[1024], have[1024];
    if (!pg->gen_out && !pg->gen_functional && !any_autogen(pg)) return;
    generated(pg, want, sizeof want);
    listed(pg, have, sizeof have);
    if (sgv_streq(want, have)) return;
    sg_pos pos = autogen_pos(pg);
    if (!want[0])
        SGV_ERROR(cx, pos, "autogen lists '%s', but torchgen generates nothing for this "
                  "operator's group (its variants are all written) [SG-306]", have);
    else if (!have[0])
        SGV_ERROR(cx, pos, "torchgen generates '%s' for this operator's group; say so with "
                  "'autogen: %s' [SG-306]", want, want);
    else
        SGV_ERROR(cx, pos, "autogen lists '%s', but torchgen generates '%s' for this operator's "
                  "group [SG-306]", have, want);
}

/* ---- V-41: a group's variants agree ------------------------------------------------------ */

static bool in_structured_group(const sg_op *op) {
    return op->structured == SG_TRUE || op->structured_delegate != NULL;
}

static sg_pos structured_pos(const sg_op *op) {
    if (sg_op_key(op, "structured_delegate")) return sgv_key_pos(op, "structured_delegate");
    if (sg_op_key(op, "structured")) return sgv_key_pos(op, "structured");
    return name_pos(op);
}

/* Every variant delegates to the out kernel when it is structured, and none when not. */
static void structured_agree(sgv_ctx *cx, const pregroup *pg) {
    const sg_op *out = PG_OUT(pg);
    bool structured = out && out->structured == SG_TRUE;
    char name[NAME_MAX_], oname[NAME_MAX_];
    for (int k = 0; k < SG_KIND__COUNT; k++) {
        const sg_op *x = pg->by_kind[k];
        if (!x || x == out || in_structured_group(x) == structured) continue;
        if (out) sgv_full_name(out, oname, sizeof oname); /* names only for a message */
        else join(oname, (const char *[]){pg->out_name, NULL});
        sgv_full_name(x, name, sizeof name);
        if (structured)
            SGV_ERROR(cx, name_pos(x), "'%s' is a variant of structured '%s' and must say "
                      "'structured_delegate: %s' [SG-302]", name, oname, oname);
        else
            SGV_ERROR(cx, structured_pos(x), "'%s' is structured, but its out variant '%s' is "
                      "not (add 'structured: True' there) [SG-302]", name, oname);
    }
}

static void delegates_to_out(sgv_ctx *cx, const sg_op *x, const sg_op *out) {
    char oname[NAME_MAX_];
    sgv_full_name(out, oname, sizeof oname);
    if (x && x->structured_delegate && !sgv_streq(x->structured_delegate, oname))
        SGV_ERROR(cx, sgv_key_pos(x, "structured_delegate"), "structured_delegate is '%s', but "
                  "this operator's out variant is '%s' [SG-304]", x->structured_delegate, oname);
}

static void structured_group(sgv_ctx *cx, const pregroup *pg) {
    const sg_op *out = PG_OUT(pg);
    if (!out || out->structured != SG_TRUE) return;
    if (sgv_has_dispatch_key(out, "CompositeImplicitAutograd") ||
        sgv_has_dispatch_key(out, "CompositeImplicitAutogradNestedTensor"))
        SGV_ERROR(cx, sgv_key_pos(out, "dispatch"), "a structured operator cannot have a "
                  "CompositeImplicitAutograd kernel [SG-304]");
    delegates_to_out(cx, PG_FUNCTIONAL(pg), out);
    delegates_to_out(cx, PG_INPLACE(pg), out);
}

static void functional_of_mutable(sgv_ctx *cx, const pregroup *pg) {
    const sg_op *f = PG_FUNCTIONAL(pg), *mut = PG_MUTABLE(pg);
    if (!f || !mut) return;
    size_t n = strlen(f->schema.base), k = strlen("_functional");
    if (n > k && sgv_streq(f->schema.base + n - k, "_functional")) return;
    char fname[NAME_MAX_], mname[NAME_MAX_];
    SGV_ERROR(cx, name_pos(f), "'%s' is the functional variant of mutable '%s', so its name must "
              "end in '_functional' ('%s_functional') [SG-303]",
              sgv_full_name(f, fname, sizeof fname), sgv_full_name(mut, mname, sizeof mname),
              f->schema.base);
}

/* torchgen asserts that a pre-group of several ops has a functional one, and no scratch one. */
static void pregroup_shape(sgv_ctx *cx, const pregroup *pg) {
    uint32_t total = pg->n + pg->gen_functional + pg->gen_out;
    const sg_op *scratch = pg->by_kind[SG_KIND_SCRATCH], *first = base_fn(pg);
    if (total < 2) return;
    char name[NAME_MAX_];
    if (!PG_FUNCTIONAL(pg) && !pg->gen_functional && first)
        SGV_ERROR(cx, name_pos(first), "'%s' has variants of its signature but no functional one "
                  "(and none is generated); add it [SG-305]",
                  sgv_full_name(first, name, sizeof name));
    if (scratch)
        SGV_ERROR(cx, name_pos(scratch), "a scratch operator cannot share its signature with "
                  "other variants [SG-305]");
}

/* A structured out operator that ends up in no group (torchgen's validate_unstructured). */
static void structured_alone(sgv_ctx *cx, const pregroup *pg) {
    const sg_op *out = PG_OUT(pg);
    char name[NAME_MAX_];
    if (out && out->structured == SG_TRUE && pg->n == 1 && !pg->gen_functional)
        SGV_ERROR(cx, name_pos(out), "structured operator '%s' has no functional variant with "
                  "its signature [SG-305]", sgv_full_name(out, name, sizeof name));
}

static void check_pregroup(sgv_ctx *cx, pregroup *pg) {
    simulate_autogen(pg);
    pregroup_shape(cx, pg);
    structured_alone(cx, pg);
    if (!forms_group(pg)) return;
    structured_agree(cx, pg);
    structured_group(cx, pg);
    functional_of_mutable(cx, pg);
    check_autogen(cx, pg);
}

/* ---- V-43: views and their copies -------------------------------------------------------- */

static void view_copy(sgv_ctx *cx, const sg_group *g) {
    const sg_op *v = g->view, *c = g->ops[SG_KIND_FUNCTIONAL];
    if (c && !sgv_same_defaults(v, c)) c = NULL;
    char name[NAME_MAX_];
    sgv_full_name(v, name, sizeof name);
    if (c && !sgv_has_tag(c, "view_copy"))
        SGV_ERROR(cx, name_pos(c), "'%s' is the copy variant of view '%s' and needs the tag "
                  "view_copy [SG-307]", c->schema.name, name);
    size_t n = strlen(v->schema.base);
    bool inverse = n >= 8 && sgv_streq(v->schema.base + n - 8, "_inverse");
    bool needs_copy = !sgv_has_cia(v) && !sgv_has_tag(v, "inplace_view") && !inverse;
    if (!c && needs_copy)
        SGV_ERROR(cx, name_pos(v), "'%s' is a view (it aliases an input) and needs a copy variant "
                  "'%s_copy%s%s' with the same signature, no aliasing, and the tag view_copy "
                  "[SG-307]", name, v->schema.base, v->schema.overload[0] ? "." : "",
                  v->schema.overload);
}

static void view_inplace(sgv_ctx *cx, const sg_group *g) {
    const sg_op *v = g->view, *i = g->ops[SG_KIND_INPLACE];
    if (!i || sgv_view_kind(i) != SGV_ALIASING_INPLACE || !sgv_same_defaults(v, i)) return;
    static const char *const keys[] = {"CompositeImplicitAutograd",
                                       "CompositeImplicitAutogradNestedTensor"};
    for (int k = 0; k < 2; k++) {
        bool has_v = k ? sgv_has_dispatch_key(v, keys[k]) : sgv_has_cia(v);
        bool has_i = k ? sgv_has_dispatch_key(i, keys[k]) : sgv_has_cia(i);
        if (has_v && !has_i)
            SGV_ERROR(cx, name_pos(i), "view '%s' has a %s kernel, so its in-place variant '%s' "
                      "needs one too [SG-307]", v->schema.name, keys[k], i->schema.name);
    }
}

/* ---- per op: V-44 (delegates), V-46 (inplace_view) --------------------------------------- */

static void delegate_exists(sgv_ctx *cx, const sg_op *op) {
    const char *d = op->structured_delegate;
    if (!d || strstr(d, "::")) return;
    const sg_op *t = sgv_find(cx, op->ns, d);
    if (!t)
        SGV_ERROR(cx, sgv_key_pos(op, "structured_delegate"), "structured_delegate '%s' names no "
                  "operator [SG-308]", d);
    else if (t->structured != SG_TRUE) {
        SGV_ERROR(cx, sgv_key_pos(op, "structured_delegate"), "structured_delegate '%s' is not "
                  "structured; add 'structured: True' to it [SG-308]", d);
        SGV_NOTE(cx, name_pos(t), "'%s' is defined here", d);
    }
}

static void inplace_view_tag(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    bool tagged = sgv_has_tag(op, "inplace_view");
    if (!tagged && !(s->inplace && sgv_is_view(op))) return; /* nearly all: nothing to read */
    char name[NAME_MAX_];
    sgv_full_name(op, name, sizeof name);
    if (!tagged)
        SGV_ERROR(cx, name_pos(op), "in-place operator '%s' aliases an input (a read-only "
                  "annotated return, or an input entering '*'), so it needs the tag inplace_view "
                  "[SG-309]", name);
    if (!tagged || sgv_streq(name, "resize_") ||
        sgv_streq(name, "resize_as_") || sgv_streq(s->name, "set_"))
        return;
    if (!s->inplace)
        SGV_ERROR(cx, name_pos(op), "'%s' is tagged inplace_view but is not in-place (its name "
                  "does not end in '_') [SG-309]", name);
    else if (!sgv_name_exists(cx, op->ns, s->base))
        SGV_ERROR(cx, name_pos(op), "'%s' is tagged inplace_view, but there is no out-of-place "
                  "view '%s' [SG-309]", name, s->base);
}

/* ---- tags (V-48) ------------------------------------------------------------------------- */

static void tag_descs(sgv_ctx *cx) {
    for (uint32_t i = 0; i < cx->m->ntags; i++) {
        const sg_tag *t = &cx->m->tags[i];
        if (!t->desc || !t->desc[strspn(t->desc, " \t\r\n")])
            SGV_ERROR(cx, t->pos, "tag '%s' needs a description ('desc:') [SG-310]", t->name);
    }
}

/* ---- the run ----------------------------------------------------------------------------- */

/* Each pre-group once: from its first member in slot order. */
static void check_group(sgv_ctx *cx, const sg_group *g) {
    for (int k = 0; k <= SG_KIND__COUNT; k++) {
        const sg_op *x = member(g, k);
        bool seen = false;
        for (int j = 0; x && j < k && !seen; j++)
            seen = member(g, j) && same_pregroup(member(g, j), x);
        if (!x || seen) continue;
        pregroup pg;
        pregroup_of(g, x, &pg);
        check_pregroup(cx, &pg);
    }
    if (g->view) {
        view_copy(cx, g);
        view_inplace(cx, g);
    }
}

static bool aten_group(const sg_group *g) {
    for (int k = 0; k <= SG_KIND__COUNT; k++)
        if (member(g, k)) return sgv_is_aten(member(g, k));
    return false;
}

void sgv_check_cross(sgv_ctx *cx) {
    sg_model *m = cx->m;
    for (uint32_t i = 0; i < m->nops; i++) {
        const sg_op *op = m->ops[i];
        if (!op->parsed || !sgv_is_aten(op)) continue;
        delegate_exists(cx, op);
        inplace_view_tag(cx, op);
    }
    for (uint32_t i = 0; i < m->ngroups; i++)
        if (aten_group(m->groups[i])) check_group(cx, m->groups[i]);
    if (m->have_tags) tag_descs(cx);
}
