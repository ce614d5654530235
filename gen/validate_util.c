/* validate_util.c: shared facts about ops (see validate_util.h). */
#include "validate_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one op ------------------------------------------------------------------------------ */

bool sgv_is_aten(const sg_op *op) {
    return !op->schema.ns || sgv_streq(op->schema.ns, "aten");
}

int sgv_self_index(const sg_schema *s) { return s->self_index; }

/* `t` is `kind` or `kind?`. */
static bool is_or_optional(const sg_type *t, sg_type_kind kind) {
    if (t->kind == SG_TY_OPTIONAL) t = t->elems[0];
    return t->kind == kind && !t->alias;
}

static const struct {
    const char  *name;
    sg_type_kind kind;
} tensor_options[4] = {
    {"dtype", SG_TY_SCALAR_TYPE},
    {"layout", SG_TY_LAYOUT},
    {"device", SG_TY_DEVICE},
    {"pin_memory", SG_TY_BOOL},
};

static bool options_at(const sg_schema *s, uint32_t i) {
    for (uint32_t k = 0; k < 4; k++) {
        const sg_arg *a = &s->args[i + k];
        if (!sgv_streq(a->name, tensor_options[k].name) ||
            !is_or_optional(a->type, tensor_options[k].kind) || sg_arg_is_out(s, a))
            return false;
    }
    return true;
}

int sgv_tensor_options(const sg_schema *s, uint32_t from) {
    if (from < s->npositional) from = s->npositional;
    for (uint32_t i = from; i + 4 <= s->nargs; i++)
        if (options_at(s, i)) return (int)i;
    return -1;
}

static bool set_equal(const char *const *a, uint32_t na, const char *const *b, uint32_t nb) {
    if (na != nb) return false;
    for (uint32_t i = 0; i < na; i++)
        if (!sgv_streq(a[i], b[i])) return false;
    return true;
}

bool sgv_alias_equal(const sg_alias *a, const sg_alias *b) {
    if (!a || !b) return a == b;
    if (a->write != b->write || a->fresh != b->fresh || a->arrow != b->arrow) return false;
    if (a->fresh) return false; /* each Tensor! is a set of its own */
    if (!set_equal(a->before, a->nbefore, b->before, b->nbefore)) return false;
    return !a->arrow || set_equal(a->after, a->nafter, b->after, b->nafter);
}

const sg_alias *sgv_alias(const sg_arg *a) { return sg_type_alias(a->type); }

bool sgv_has_tag(const sg_op *op, const char *tag) {
    for (uint32_t i = 0; i < op->tags.n; i++)
        if (sgv_streq(op->tags.items[i], tag)) return true;
    return false;
}

/* The annotation of argument i (returns follow the arguments). */
static const sg_alias *alias_at(const sg_schema *s, uint32_t i) {
    return sg_type_alias(i < s->nargs ? s->args[i].type : s->rets[i - s->nargs].type);
}

/* torchgen's is_view_op. */
static bool is_view(const sg_op *op) {
    const sg_schema *s = &op->schema;
    for (uint32_t i = 0; i < s->nrets; i++) {
        const sg_alias *al = alias_at(s, s->nargs + i);
        if (al && !al->write) return true; /* a return aliases an input, read-only */
    }
    for (uint32_t i = 0; i < s->nargs; i++) {
        const sg_alias *al = alias_at(s, i);
        for (uint32_t k = 0; al && al->arrow && k < al->nafter; k++)
            if (sgv_streq(al->after[k], "*")) return true; /* enters the wildcard set */
    }
    if (!sgv_has_tag(op, "inplace_view")) return false;
    if (s->overload[0]) return true;
    return !sgv_streq(s->name, "resize_") && !sgv_streq(s->name, "resize_as_");
}

bool sgv_is_view(const sg_op *op) { return sgv_view_kind(op) >= SGV_ALIASING; }

int sgv_view_kind(const sg_op *op) {
    if (!is_view(op)) return (int)sg_schema_kind_of(&op->schema);
    return op->schema.inplace ? SGV_ALIASING_INPLACE : SGV_ALIASING;
}

bool sgv_has_dispatch_key(const sg_op *op, const char *key) {
    for (uint32_t i = 0; i < op->ndispatch; i++)
        for (uint32_t k = 0; k < op->dispatch[i].nkeys; k++)
            if (sgv_streq(op->dispatch[i].keys[k], key)) return true;
    return false;
}

bool sgv_has_cia(const sg_op *op) {
    if (op->has_dispatch) return sgv_has_dispatch_key(op, "CompositeImplicitAutograd");
    return op->structured != SG_TRUE && !op->structured_delegate;
}

const char *sgv_full_name(const sg_op *op, char *buf, size_t n) {
    const sg_schema *s = &op->schema;
    size_t a = strlen(s->name), b = strlen(s->overload), k;
    if (!n) return buf;
    k = a < n - 1 ? a : n - 1;
    memcpy(buf, s->name, k);
    if (b && k + 1 < n) buf[k++] = '.';
    if (b && k < n - 1) {
        size_t m = b < n - 1 - k ? b : n - 1 - k;
        memcpy(buf + k, s->overload, m);
        k += m;
    }
    buf[k] = '\0';
    return buf;
}

size_t sgv_name_key(char *buf, size_t n, const char *ns, const char *name) {
    size_t k = 0;
    ns = ns ? ns : "aten";
    for (const char *p = ns; *p && k + 1 < n; p++) buf[k++] = *p;
    for (const char *p = "::"; *p && k + 1 < n; p++) buf[k++] = *p;
    for (const char *p = name; *p && k + 1 < n; p++) buf[k++] = *p;
    buf[k] = '\0';
    return k;
}

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

#define ENDS_WITH(s, n, lit) ((n) > sizeof lit - 1 && memcmp((s) + (n) - (sizeof lit - 1), lit, sizeof lit - 1) == 0)

size_t sgv_sig_base(const sg_schema *s, bool strip_copy, const char **base, bool *stripped) {
    size_t n = strlen(s->base);
    *base = s->base;
    if (!s->dunder && ENDS_WITH(s->base, n, "_functional")) n -= sizeof "_functional" - 1;
    *stripped = strip_copy && ENDS_WITH(s->base, n, "_copy");
    if (*stripped) n -= sizeof "_copy" - 1;
    return n;
}

bool sgv_copy_stripped(const sg_op *op) {
    const char *base;
    bool stripped;
    sgv_sig_base(&op->schema, true, &base, &stripped);
    return stripped;
}

bool sgv_sig_kept(const sg_schema *s, uint32_t i, int to) {
    if (to >= 0 && i >= (uint32_t)to && i < (uint32_t)to + 4) return false;
    return !sg_arg_is_out(s, &s->args[i]);
}

/* The default of argument i as torchgen's signature() sees it: as written, except that it
 * gives bernoulli.p's p the default 0.5 (so bernoulli.p groups with bernoulli_.float). */
static const char *sig_default(const sg_op *op, uint32_t i) {
    const sg_schema *s = &op->schema;
    const sg_arg *a = &s->args[i];
    if (!a->default_text && sgv_is_aten(op) && sgv_streq(s->name, "bernoulli") &&
        sgv_streq(s->overload, "p") && sgv_streq(a->name, "p"))
        return "0.5";
    return a->default_text;
}

static bool same_text(const char *a, const char *b) {
    return a == b || (a && b && sgv_streq(a, b));
}

bool sgv_same_defaults(const sg_op *x, const sg_op *y) {
    const sg_schema *a = &x->schema, *b = &y->schema;
    int ta = sgv_tensor_options(a, 0), tb = sgv_tensor_options(b, 0);
    uint32_t i = 0, k = 0;
    for (;;) {
        while (i < a->nargs && !sgv_sig_kept(a, i, ta)) i++;
        while (k < b->nargs && !sgv_sig_kept(b, k, tb)) k++;
        if (i == a->nargs || k == b->nargs) return i == a->nargs && k == b->nargs;
        if (!same_text(sig_default(x, i), sig_default(y, k))) return false;
        i++, k++;
    }
}
