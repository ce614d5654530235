/* derive.c: structured links and the ops that `autogen:` asks for (derive.h, docs/derive.md).
 *
 * torchgen adds the variants an `autogen:` entry promises before it generates any code
 * (native_function_generation.py): for each pre-group (the variants of one signature() that
 * share defaults and `_copy`) it takes one base op, the mutable, else the in-place, else the
 * out, else the functional variant, and derives from it
 *   - an out variant: from an in-place op, self becomes a plain input and its type, annotation
 *     kept, becomes the out argument (self_to_out_signature); from a functional op, the
 *     arguments' signature() (no annotations, no TensorOptions) then one out argument per
 *     return, `out` or `out0, out1, ...`, on fresh alias letters (functional_to_out_signature);
 *     from a mutable op, its arguments as written then the same out arguments
 *     (mutable_to_out_signature: its written positionals stay written);
 *   - a functional variant of an in-place or mutable op: signature(keep_return_names=True),
 *     the written inputs that are not returned appended as returns named `<arg>_out`, the name
 *     `_functional`-suffixed for a mutable base.
 * The autogen name must be the name torchgen gives that variant. A name listed by two variants
 * of one pre-group (the corpus lists `_foreach_lerp.List_out` on `_foreach_lerp.List` and on
 * `_foreach_lerp_.List`) is one op, as torchgen keeps a set.
 *
 * Each derived schema is printed in torchgen's form and parsed, so it is a real schema; the
 * groups are rebuilt afterwards (sg_model_group starts afresh on every call).
 */
#include "derive.h"

#include "validate_util.h"

#include <stdio.h>
#include <string.h>

enum { NAME_MAX_ = 256 };

typedef struct deriver {
    sg_model *m;
    sg_diag  *d;
    sg_strmap   names; /* "ns::name.overload" -> the first op of that name, written or derived */
    sg_buf    text;  /* the schema being derived */
    uint32_t  added;
    bool      oom;
} deriver;

#define ERR(x, pos, ...)  sg_diag_report((x)->d, SG_ERROR, (pos), __VA_ARGS__)
#define NOTE(x, pos, ...) sg_diag_report((x)->d, SG_NOTE, (pos), __VA_ARGS__)

static sg_schema_kind kind_of(const sg_op *op) { return sg_schema_kind_of(&op->schema); }

static sg_pos name_pos(const sg_op *op) { return sg_op_pos_at(op, op->schema.name_offset); }

static const char *ns_of(const sg_op *op) { return op->ns ? op->ns : "aten"; }

/* ---- the name index ---------------------------------------------------------------------- */

static size_t key_of(char *buf, size_t n, const char *ns, const char *name) {
    int k = snprintf(buf, n, "%s::%s", ns, name);
    return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
}

static sg_op *find(const deriver *x, const char *ns, const char *name) {
    char key[2 * NAME_MAX_];
    size_t n = key_of(key, sizeof key, ns, name);
    return sg_strmap_get(&x->names, key, n);
}

static void index_op(deriver *x, sg_op *op) {
    char key[2 * NAME_MAX_], name[NAME_MAX_];
    size_t n = key_of(key, sizeof key, ns_of(op), sgv_full_name(op, name, sizeof name));
    if (!sg_strmap_put(&x->names, key, n, op)) x->oom = true;
}

/* ---- structured links -------------------------------------------------------------------- */

/* The structured out op that op's structured_delegate names, or NULL. validate reports a bad
 * delegate of an aten op (SG-203, SG-308, SG-219), so only other namespaces get errors here. */
static sg_op *delegate_target(deriver *x, const sg_op *op) {
    const char *dname = op->structured_delegate, *ns = ns_of(op);
    const char *sep = strstr(dname, "::");
    bool report = !sgv_is_aten(op);
    sg_pos pos = sgv_key_pos(op, "structured_delegate");
    if (sep) {
        int n = (int)(sep - dname);
        if (strlen(ns) != (size_t)n || strncmp(dname, ns, (size_t)n) != 0) {
            if (report)
                ERR(x, pos, "structured_delegate '%s' names namespace '%.*s'; a delegate is in "
                    "the operator's own namespace, '%s' [SG-401]", dname, n, dname, ns);
            return NULL;
        }
        dname = sep + 2;
    }
    sg_op *t = find(x, ns, dname);
    if (!t) {
        if (report)
            ERR(x, pos, "structured_delegate '%s' names no operator of namespace '%s' [SG-401]",
                dname, ns);
        return NULL;
    }
    bool structured = t->structured == SG_TRUE;
    if (structured && kind_of(t) == SG_KIND_OUT) return t;
    if (report) {
        if (!structured)
            ERR(x, pos, "structured_delegate '%s' is not structured; add 'structured: True' to "
                "it [SG-402]", dname);
        else
            ERR(x, pos, "structured_delegate '%s' is not an out operator; a structured kernel "
                "is its out variant's [SG-402]", dname);
        NOTE(x, name_pos(t), "'%s' is defined here", dname);
    }
    return NULL;
}

/* Two passes over the ops: count each out op's delegates, then fill arrays of that size. */
static void link_structured(deriver *x) {
    sg_model *m = x->m;
    for (uint32_t i = 0; i < m->nops; i++) {
        sg_op *op = m->ops[i];
        op->structured_out = NULL;
        op->delegates = NULL;
        op->ndelegates = 0;
        op->structured_is_out = op->parsed && op->structured == SG_TRUE &&
                                kind_of(op) == SG_KIND_OUT;
    }
    for (uint32_t i = 0; i < m->nops; i++) {
        sg_op *op = m->ops[i];
        if (!op->parsed || !op->structured_delegate) continue;
        op->structured_out = delegate_target(x, op);
        if (op->structured_out) op->structured_out->ndelegates++;
    }
    for (uint32_t i = 0; i < m->nops; i++) {
        sg_op *op = m->ops[i];
        if (!op->ndelegates) continue;
        op->delegates = sg_arena_alloc(m->arena, op->ndelegates * sizeof *op->delegates);
        if (!op->delegates) { /* no links rather than half of them */
            x->oom = true;
            for (uint32_t k = 0; k < m->nops; k++) {
                m->ops[k]->structured_out = NULL;
                m->ops[k]->delegates = NULL;
                m->ops[k]->ndelegates = 0;
            }
            return;
        }
        op->ndelegates = 0;
    }
    for (uint32_t i = 0; i < m->nops; i++) {
        sg_op *op = m->ops[i], *t = op->structured_out;
        if (t) t->delegates[t->ndelegates++] = op;
    }
}

/* ---- which op a variant derives from ----------------------------------------------------- */

/* torchgen's choice of base op: mutable, in-place, out, functional (scratch never). */
static int base_rank(sg_schema_kind k) {
    switch (k) {
    case SG_KIND_MUTABLE:    return 3;
    case SG_KIND_INPLACE:    return 2;
    case SG_KIND_OUT:        return 1;
    case SG_KIND_FUNCTIONAL: return 0;
    default:                 return -1;
    }
}

/* torchgen's pre-groups keep defaults and `_copy` in the key; our groups drop both. */
static bool same_pregroup(const sg_op *a, const sg_op *b) {
    if (a == b) return true;
    return sgv_copy_stripped(a) == sgv_copy_stripped(b) && sgv_same_defaults(a, b);
}

/* The op torchgen derives op's generated variants from: the base of its pre-group among the
 * written ops (derived ones left out, so that a second run sees what the first saw). */
static const sg_op *base_of(const sg_op *op) {
    const sg_group *g = op->group;
    const sg_op *best = op;
    int rank = base_rank(kind_of(op));
    for (int k = 0; g && k <= SG_KIND__COUNT; k++) {
        const sg_op *v = k < SG_KIND__COUNT ? g->ops[k] : g->view;
        if (!v || v->autogen_from || !same_pregroup(v, op)) continue;
        int r = base_rank(kind_of(v));
        if (r > rank) {
            best = v;
            rank = r;
        }
    }
    return best;
}

/* The names torchgen gives the out and functional variants it derives from b ("" where it
 * derives none: no out variant of an out op, no functional variant of a functional one). */
static void variant_names(const sg_op *b, char *out, char *fn, size_t n) {
    const sg_schema *s = &b->schema;
    sg_schema_kind k = kind_of(b);
    bool ovl = s->overload[0] != '\0';
    out[0] = fn[0] = '\0';
    if (k == SG_KIND_FUNCTIONAL || k == SG_KIND_INPLACE || k == SG_KIND_MUTABLE)
        snprintf(out, n, "%s.%s%s", s->base, s->overload, ovl ? "_out" : "out");
    if (k == SG_KIND_INPLACE || k == SG_KIND_MUTABLE)
        snprintf(fn, n, "%s%s%s%s", s->base, k == SG_KIND_MUTABLE ? "_functional" : "",
                 ovl ? "." : "", s->overload);
}

/* ---- printing a derived schema ----------------------------------------------------------- */

/* One derivation: the autogen name, the op it derives from, where the diagnostics go. */
typedef struct job {
    deriver     *x;
    const sg_op *b;
    const char  *name;
    sg_pos       pos;
    char         bname[NAME_MAX_];
    bool         first, star; /* argument list state: nothing printed yet, '*' printed */
} job;

static void put_sep(job *j, bool kwarg) {
    if (!j->first) sg_buf_puts(&j->x->text, ", ");
    if (kwarg && !j->star) sg_buf_puts(&j->x->text, "*, ");
    j->star |= kwarg;
    j->first = false;
}

static void put_arg(job *j, const sg_arg *a, bool kwarg, bool alias) {
    sg_buf *b = &j->x->text;
    put_sep(j, kwarg);
    sg_type_print(b, a->type, alias);
    sg_buf_putc(b, ' ');
    sg_buf_puts(b, a->name);
    if (a->default_text) {
        sg_buf_putc(b, '=');
        sg_buf_puts(b, a->default_text);
    }
}

/* t with the written set `set` on its Tensor: Tensor(a!), Tensor(a!)[], Tensor(a!)? (torchgen
 * writes the annotation after the word Tensor). */
static void put_written_type(sg_buf *b, const sg_type *t, char set) {
    if (t->kind == SG_TY_OPTIONAL || t->kind == SG_TY_LIST) {
        put_written_type(b, t->elems[0], set);
        if (t->kind == SG_TY_OPTIONAL) sg_buf_putc(b, '?');
        else if (t->size >= 0) sg_buf_printf(b, "[%d]", (int)t->size);
        else sg_buf_puts(b, "[]");
        return;
    }
    sg_type_print(b, t, false);
    sg_buf_printf(b, "(%c!)", set);
}

static void put_ret(sg_buf *b, const sg_type *t, bool alias, const char *name,
                    const char *suffix) {
    sg_type_print(b, t, alias);
    if (name) sg_buf_printf(b, " %s%s", name, suffix);
}

/* The arguments of torchgen's Arguments.signature(): no out arguments, no TensorOptions
 * group, no annotations; defaults kept. */
static void put_signature_args(job *j) {
    const sg_schema *s = &j->b->schema;
    int to = sgv_tensor_options(s, 0);
    for (uint32_t i = 0; i < s->nargs; i++) {
        const sg_arg *a = &s->args[i];
        if (sg_arg_is_out(s, a) || (to >= 0 && i - (uint32_t)to < 4)) continue;
        put_arg(j, a, a->kwarg_only, false);
    }
}

static bool returned(const sg_schema *s, const sg_alias *a) {
    for (uint32_t r = 0; r < s->nrets; r++)
        if (sgv_alias_equal(a, sgv_alias(&s->rets[r]))) return true;
    return false;
}

/* Where written argument i goes among the functional variant's extra returns, in torchgen's
 * order: 0 self, 1 an out argument, 2 another positional; -1 when it is not one. */
static int extra_rank(const sg_schema *s, uint32_t i, int self) {
    const sg_alias *a = sgv_alias(&s->args[i]);
    if (!a || !a->write || returned(s, a)) return -1;
    if ((int)i == self) return 0;
    return s->args[i].kwarg_only ? 1 : 2;
}

/* The functional variant of an in-place or mutable op (generate_function, functional). */
static bool derive_functional(job *j) {
    const sg_schema *s = &j->b->schema;
    sg_buf *b = &j->x->text;
    int self = sgv_self_index(s);
    uint32_t total = s->nrets, n = 0;
    put_signature_args(j);
    for (uint32_t i = 0; i < s->nargs; i++) total += extra_rank(s, i, self) >= 0;
    sg_buf_puts(b, total == 1 ? ") -> " : ") -> (");
    for (uint32_t r = 0; r < s->nrets; r++, n++) {
        if (n) sg_buf_puts(b, ", ");
        put_ret(b, s->rets[r].type, false, s->rets[r].name, "");
    }
    for (int rank = 0; rank < 3; rank++)
        for (uint32_t i = 0; i < s->nargs; i++) {
            if (extra_rank(s, i, self) != rank) continue;
            if (n++) sg_buf_puts(b, ", ");
            put_ret(b, s->args[i].type, false, s->args[i].name, "_out");
        }
    if (total != 1) sg_buf_putc(b, ')');
    return true;
}

/* Whether t is a Tensor, a Tensor?, or a list of them (torchgen's is_tensor_like). */
static bool tensor_like(const sg_type *t) {
    return sg_type_base(t)->kind == SG_TY_TENSOR &&
           (t->kind == SG_TY_TENSOR || t->kind == SG_TY_OPTIONAL || t->kind == SG_TY_LIST);
}

/* torchgen's generate_out_args_from_schema: an out argument per return, on the first alias
 * letters the arguments do not use; checks before printing. sets[i] is return i's letter. */
static bool out_sets(job *j, char *sets) {
    const sg_schema *s = &j->b->schema;
    bool used[26] = {false};
    char buf[128];
    if (s->nrets == 0) {
        ERR(j->x, j->pos, "cannot derive '%s' from '%s': it returns nothing, so there is no "
            "result for an out argument to hold [SG-404]", j->name, j->bname);
        return false;
    }
    for (uint32_t r = 0; r < s->nrets; r++) {
        const sg_arg *ret = &s->rets[r];
        const sg_alias *a = sgv_alias(ret);
        sg_buf t;
        sg_buf_init(&t);
        put_ret(&t, ret->type, true, ret->name, "");
        snprintf(buf, sizeof buf, "%s", t.data ? t.data : "?");
        sg_buf_free(&t);
        if (!tensor_like(ret->type)) {
            ERR(j->x, j->pos, "cannot derive '%s' from '%s': return %u ('%s') is not a tensor, "
                "and only tensors become out arguments [SG-404]", j->name, j->bname, r + 1, buf);
            return false;
        }
        if (a && a->write) {
            ERR(j->x, j->pos, "cannot derive '%s' from '%s': return %u ('%s') is written, and "
                "torchgen makes out arguments of fresh results only [SG-404]", j->name,
                j->bname, r + 1, buf);
            return false;
        }
    }
    for (uint32_t i = 0; i < s->nargs; i++) {
        const sg_alias *a = sgv_alias(&s->args[i]);
        for (uint32_t k = 0; a && k < a->nbefore; k++) {
            const char *set = a->before[k];
            if (set[0] >= 'a' && set[0] <= 'z' && !set[1]) used[set[0] - 'a'] = true;
        }
    }
    uint32_t r = 0;
    for (int c = 0; c < 26 && r < s->nrets; c++)
        if (!used[c]) sets[r++] = (char)('a' + c);
    if (r < s->nrets) {
        ERR(j->x, j->pos, "cannot derive '%s' from '%s': no alias letter is left for out "
            "argument %u [SG-404]", j->name, j->bname, r + 1);
        return false;
    }
    return true;
}

static void put_outs(job *j, const char *sets) {
    const sg_schema *s = &j->b->schema;
    sg_buf *b = &j->x->text;
    for (uint32_t r = 0; r < s->nrets; r++) {
        put_sep(j, true);
        put_written_type(b, s->rets[r].type, sets[r]);
        if (s->nrets == 1) sg_buf_puts(b, " out");
        else sg_buf_printf(b, " out%u", r);
    }
}

/* The returns of the out variant: the out arguments' sets when every return is a plain
 * Tensor, else none (an out argument that is a list or optional cannot be returned). */
static void put_out_rets(job *j, const char *sets) {
    const sg_schema *s = &j->b->schema;
    sg_buf *b = &j->x->text;
    bool plain = true;
    for (uint32_t r = 0; r < s->nrets; r++) plain &= s->rets[r].type->kind == SG_TY_TENSOR;
    if (!plain) {
        sg_buf_puts(b, "()");
        return;
    }
    if (s->nrets > 1) sg_buf_putc(b, '(');
    for (uint32_t r = 0; r < s->nrets; r++)
        sg_buf_printf(b, "%sTensor(%c!)", r ? ", " : "", sets[r]);
    if (s->nrets > 1) sg_buf_putc(b, ')');
}

/* The out variant of a functional or mutable op. */
static bool derive_out_of_results(job *j) {
    const sg_schema *s = &j->b->schema;
    char sets[26];
    if (!out_sets(j, sets)) return false;
    if (kind_of(j->b) == SG_KIND_FUNCTIONAL)
        put_signature_args(j);
    else
        for (uint32_t i = 0; i < s->nargs; i++)
            put_arg(j, &s->args[i], s->args[i].kwarg_only, true);
    put_outs(j, sets);
    sg_buf_puts(&j->x->text, ") -> ");
    put_out_rets(j, sets);
    return true;
}

/* The out variant of an in-place op: self, read-only now, gives the out argument its type and
 * annotation, and the returns stay as they are. */
static bool derive_out_of_inplace(job *j) {
    const sg_schema *s = &j->b->schema;
    sg_buf *b = &j->x->text;
    int self = sgv_self_index(s);
    const sg_alias *sa = self >= 0 ? sgv_alias(&s->args[self]) : NULL;
    if (!sa || !sa->write) {
        ERR(j->x, j->pos, "cannot derive '%s' from in-place '%s': it has no written 'self' to "
            "become the out argument [SG-404]", j->name, j->bname);
        return false;
    }
    for (uint32_t i = 0; i < s->nargs; i++)
        if (sg_arg_is_out(s, &s->args[i])) {
            ERR(j->x, j->pos, "cannot derive '%s' from in-place '%s': it has an out argument "
                "already, '%s' [SG-404]", j->name, j->bname, s->args[i].name);
            return false;
        }
    for (uint32_t i = 0; i < s->nargs; i++)
        put_arg(j, &s->args[i], s->args[i].kwarg_only, (int)i != self);
    put_sep(j, true);
    sg_type_print(b, s->args[self].type, true);
    sg_buf_puts(b, " out) -> ");
    if (s->nrets != 1) sg_buf_putc(b, '(');
    for (uint32_t r = 0; r < s->nrets; r++) {
        if (r) sg_buf_puts(b, ", ");
        put_ret(b, s->rets[r].type, true, s->rets[r].name, "");
    }
    if (s->nrets != 1) sg_buf_putc(b, ')');
    return true;
}

/* ---- adding a derived op ----------------------------------------------------------------- */

static bool symint_like(const sg_type *t) {
    if (t->kind == SG_TY_OPTIONAL || t->kind == SG_TY_LIST) return symint_like(t->elems[0]);
    return t->kind == SG_TY_SYMINT;
}

/* torchgen's has_symint: a SymInt among the arguments, out arguments aside (torchgen 1.13
 * also looked at the returns; later versions do not). */
static bool has_symint(const sg_schema *s) {
    for (uint32_t i = 0; i < s->nargs; i++)
        if (!sg_arg_is_out(s, &s->args[i]) && symint_like(s->args[i].type)) return true;
    return false;
}

/* The yaml keys torchgen gives a generated op: variants function, not structured, no device
 * guard, device_check NoCheck, a CompositeExplicitAutograd kernel named after the op, the tag
 * `generated` with the base's nondeterministic_seeded, view_copy and pt2_compliant_tag. */
static bool set_generated_keys(deriver *x, sg_op *op, const sg_op *b) {
    static const char *const inherited[] = {"nondeterministic_seeded", "view_copy",
                                            "pt2_compliant_tag"};
    sg_arena *a = x->m->arena;
    const sg_schema *s = &op->schema;
    char kernel[2 * NAME_MAX_];
    if (kind_of(op) == SG_KIND_OUT) snprintf(kernel, NAME_MAX_, "%s_%s", s->name, s->overload);
    else snprintf(kernel, NAME_MAX_, "%s", s->name);
    if (has_symint(&b->schema)) strcat(kernel, "_symint");

    op->variants = SG_VARIANT_FUNCTION;
    op->structured = op->device_guard = SG_FALSE;
    op->manual_cpp_binding = op->manual_kernel_registration = SG_FALSE;
    op->use_const_ref_for_mutable_tensors = b->use_const_ref_for_mutable_tensors;
    op->device_check = "NoCheck";
    op->dispatch = sg_arena_alloc(a, sizeof *op->dispatch);
    op->tags.items = sg_arena_alloc(a, (b->tags.n + 1) * sizeof *op->tags.items);
    op->tags.pos = sg_arena_alloc(a, (b->tags.n + 1) * sizeof *op->tags.pos);
    if (!op->dispatch || !op->tags.items || !op->tags.pos) return false;
    sg_dispatch *dl = op->dispatch;
    dl->keys = sg_arena_alloc(a, sizeof *dl->keys);
    dl->key_pos = sg_arena_alloc(a, sizeof *dl->key_pos);
    dl->kernel = sg_arena_strndup(a, kernel, strlen(kernel));
    if (!dl->keys || !dl->key_pos || !dl->kernel) return false;
    dl->keys[0] = "CompositeExplicitAutograd";
    dl->key_pos[0] = dl->pos = dl->kernel_pos = op->pos;
    dl->nkeys = 1;
    op->ndispatch = 1;
    op->has_dispatch = true;
    op->tags.items[op->tags.n] = "generated";
    op->tags.pos[op->tags.n++] = op->pos;
    for (uint32_t i = 0; i < b->tags.n; i++)
        for (size_t k = 0; k < sizeof inherited / sizeof *inherited; k++)
            if (strcmp(b->tags.items[i], inherited[k]) == 0) {
                op->tags.items[op->tags.n] = b->tags.items[i];
                op->tags.pos[op->tags.n++] = op->pos;
            }
    return true;
}

/* Parses the derived text into a new op of the model. */
static void add_derived(job *j, const char *what) {
    deriver *x = j->x;
    sg_arena *a = x->m->arena;
    if (x->text.oom) {
        x->oom = true;
        return;
    }
    char *text = sg_arena_strndup(a, x->text.data, x->text.len);
    sg_schema s;
    sg_schema_error err;
    int rc = text ? sg_schema_parse(text, x->text.len, a, &s, &err) : SG_SCHEMA_ENOMEM;
    if (rc == SG_SCHEMA_ENOMEM) {
        x->oom = true;
        return;
    }
    if (rc != SG_SCHEMA_OK) {
        ERR(x, j->pos, "the schema derived for '%s', '%s', does not parse: %s [SG-406]",
            j->name, text, err.msg);
        return;
    }
    for (uint32_t i = 1; i < s.nargs; i++)
        for (uint32_t k = 0; k < i; k++)
            if (strcmp(s.args[i].name, s.args[k].name) == 0) {
                ERR(x, j->pos, "the schema derived for '%s', '%s', has two arguments named "
                    "'%s' [SG-406]", j->name, text, s.args[i].name);
                return;
            }
    sg_op *op = sg_model_add_op(x->m);
    if (!op) {
        x->oom = true;
        return;
    }
    op->schema = s;
    op->ns = j->b->ns;
    op->func = text;
    op->pos = j->pos;
    op->parsed = true;
    op->autogen_from = (sg_op *)j->b;
    op->autogen_kind = what;
    if (!set_generated_keys(x, op, j->b)) x->oom = true;
    index_op(x, op);
    x->added++;
}

/* Where the base op itself lists `name`, its item is the derived op's position. */
static sg_pos listed_pos(const sg_op *b, const char *name, sg_pos fallback) {
    for (uint32_t i = 0; i < b->autogen.n; i++)
        if (strcmp(b->autogen.items[i], name) == 0) return b->autogen.pos[i];
    return fallback;
}

static void derive_item(deriver *x, const sg_op *lister, uint32_t item) {
    job j = {.x = x, .name = lister->autogen.items[item], .first = true};
    sg_pos at = lister->autogen.pos[item];
    char out[NAME_MAX_], fn[NAME_MAX_];
    j.b = base_of(lister);
    j.pos = listed_pos(j.b, j.name, at);
    sgv_full_name(j.b, j.bname, sizeof j.bname);
    const sg_op *have = find(x, ns_of(j.b), j.name);
    if (have) {
        if (have->autogen_from == j.b) return; /* listed twice in the pre-group: one op */
        ERR(x, at, "autogen name '%s' names an operator that already exists [SG-405]", j.name);
        if (have->autogen_from)
            NOTE(x, name_pos(have), "'%s' is derived here, from '%s'", j.name,
                 have->autogen_from->schema.name);
        else
            NOTE(x, name_pos(have), "'%s' is defined here", j.name);
        return;
    }
    variant_names(j.b, out, fn, sizeof out);
    bool is_out = out[0] && strcmp(j.name, out) == 0;
    if (!is_out && !(fn[0] && strcmp(j.name, fn) == 0)) {
        if (fn[0])
            ERR(x, at, "autogen name '%s' is not a variant torchgen derives from '%s': those "
                "are '%s' (out) and '%s' (functional) [SG-403]", j.name, j.bname, out, fn);
        else if (out[0])
            ERR(x, at, "autogen name '%s' is not a variant torchgen derives from '%s': that "
                "is '%s' (out) [SG-403]", j.name, j.bname, out);
        else
            ERR(x, at, "autogen name '%s': torchgen derives variants from functional, "
                "in-place and mutable operators, not from %s operator '%s' [SG-403]", j.name,
                sg_schema_kind_names[kind_of(j.b)], j.bname);
        return;
    }
    const sg_schema *s = &j.b->schema;
    if (s->varargs || s->varret) {
        ERR(x, j.pos, "cannot derive '%s' from '%s': its schema has '...' [SG-404]", j.name,
            j.bname);
        return;
    }
    x->text.len = 0;
    if (s->ns) sg_buf_printf(&x->text, "%s::", s->ns);
    sg_buf_printf(&x->text, "%s(", j.name);
    bool ok;
    if (!is_out) ok = derive_functional(&j);
    else if (kind_of(j.b) == SG_KIND_INPLACE) ok = derive_out_of_inplace(&j);
    else ok = derive_out_of_results(&j);
    if (ok) add_derived(&j, is_out ? "out" : "functional");
}

/* ---- the pass ---------------------------------------------------------------------------- */

int sg_model_derive(sg_model *m, sg_diag *d) {
    uint32_t before = d->nerrors, nops = m->nops;
    deriver x = {.m = m, .d = d};
    sg_buf_init(&x.text);
    x.oom = sg_strmap_init(&x.names, m->arena, nops + nops / 4) != 0;
    for (uint32_t i = 0; !x.oom && i < nops; i++)
        if (m->ops[i]->parsed) index_op(&x, m->ops[i]);
    if (!x.oom) link_structured(&x);
    /* only the ops there before: a derived op lists nothing (m->ops may move as ops are added) */
    for (uint32_t i = 0; !x.oom && i < nops; i++) {
        const sg_op *op = m->ops[i];
        for (uint32_t k = 0; op->parsed && k < op->autogen.n && !x.oom; k++) derive_item(&x, op, k);
    }
    if (x.oom) sg_diag_plain(d, SG_ERROR, "out of memory while deriving operators");
    else if (x.added) sg_model_group(m, d);
    if (!x.oom) sg_model_derive_c(m, d);
    sg_strmap_free(&x.names);
    sg_buf_free(&x.text);
    return (int)(d->nerrors - before);
}
