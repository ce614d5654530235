/* validate_schema.c: torchgen's rules on one aten schema (V-02..V-18, V-45).
 *
 * The parser accepts PyTorch's whole schema language; torchgen reads a smaller one and asks
 * more of mutable and out operators. Each rule below is one static function that reports at
 * the argument, return, annotation or name at fault and returns; sgv_check_schema runs them
 * all, so one schema can show several errors. docs/rules.md lists them (SG-1xx).
 *
 * torchgen's terms: an out argument is a keyword-only argument that is written; `self` is the
 * first positional argument named self; the positionals before it are "pre-self", the ones
 * after it (all of them when there is no self) "post-self".
 */
#include "validate_rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sg_pos at(const sg_op *op, uint32_t off) { return sg_op_pos_at(op, off); }

static bool is_plain_tensor(const sg_type *t) { return t->kind == SG_TY_TENSOR; }

static uint32_t arg_end(const sg_arg *a) {
    if (a->default_text) return a->default_offset + (uint32_t)strlen(a->default_text);
    return a->name_offset + (uint32_t)strlen(a->name);
}

/* Offset of `needle` in the func string at or after `from` (from itself when absent). */
static uint32_t find_from(const sg_op *op, uint32_t from, const char *needle) {
    size_t n = strlen(op->func);
    if (from > n) return from;
    const char *p = strstr(op->func + from, needle);
    return p ? (uint32_t)(p - op->func) : from;
}

/* Where the arguments end: just past the last argument (or the name). */
static uint32_t args_end(const sg_op *op) {
    const sg_schema *s = &op->schema;
    return s->nargs ? arg_end(&s->args[s->nargs - 1]) : s->overload_offset;
}

/* Where the returns are: the first return, or the arrow when there is none. */
static sg_pos rets_pos(const sg_op *op) {
    const sg_schema *s = &op->schema;
    if (s->nrets) return at(op, s->rets[0].offset);
    return at(op, find_from(op, args_end(op), "->"));
}

/* ---- the language: types, annotations, what prints back (V-02, V-15, V-16) ------------- */

static void type_label(const sg_type *t, char *buf, size_t n) {
    sg_buf b;
    sg_buf_init(&b);
    sg_type_print(&b, t, false);
    snprintf(buf, n, "%s", b.data ? b.data : "?");
    sg_buf_free(&b);
}

/* V-16, and V-02's list of size 0: reports the first node torchgen cannot read or print. */
static bool torchgen_type(sgv_ctx *cx, const sg_op *op, const sg_type *t) {
    char label[96];
    if (t->kind == SG_TY_OPTIONAL || t->kind == SG_TY_LIST) {
        if (t->kind == SG_TY_LIST && t->size == 0) {
            SGV_ERROR(cx, at(op, t->offset), "torchgen cannot print a list type of size 0 back; "
                      "write T[] [SG-103]");
            return false;
        }
        return torchgen_type(cx, op, t->elems[0]);
    }
    if (t->kind == SG_TY_CLASS) return true;
    if ((sg_type_infos[t->kind].flags & (SG_TYF_LEAF | SG_TYF_TORCHGEN)) ==
        (SG_TYF_LEAF | SG_TYF_TORCHGEN))
        return true;
    type_label(t, label, sizeof label);
    SGV_ERROR(cx, at(op, t->offset), "type '%s' is not one torchgen knows; aten operators use "
              "its types only (Tensor, int, SymInt, float, bool, str, Scalar, ScalarType, ... "
              "and their lists and optionals) [SG-101]", label);
    return false;
}

/* The node of t that carries an annotation other than `allowed`, or NULL. */
static const sg_type *stray_alias(const sg_type *t, const sg_type *allowed) {
    if (t->alias && t != allowed) return t;
    for (uint32_t i = 0; i < t->nelems; i++) {
        const sg_type *x = stray_alias(t->elems[i], allowed);
        if (x) return x;
    }
    return NULL;
}

/* The Tensor node that may carry an annotation in torchgen's forms Tensor(a), Tensor(a)?
 * and Tensor(a)[], or NULL when t has none of those shapes. */
static const sg_type *alias_slot(const sg_type *t) {
    if (t->kind == SG_TY_TENSOR) return t;
    bool wrap = t->kind == SG_TY_OPTIONAL || (t->kind == SG_TY_LIST && t->size < 0);
    return wrap && t->elems[0]->kind == SG_TY_TENSOR ? t->elems[0] : NULL;
}

static bool letter_set(const char *const *set, uint32_t n, bool wildcard_ok) {
    if (wildcard_ok && n == 1 && sgv_streq(set[0], "*")) return true;
    for (uint32_t i = 0; i < n; i++)
        if (strlen(set[i]) != 1 || set[i][0] < 'a' || set[i][0] > 'z') return false;
    return true;
}

/* What is wrong with an annotation's form for torchgen, or NULL. */
static const char *alias_form_problem(const sg_alias *a) {
    if (a->fresh) return "torchgen does not accept 'Tensor!'; name the set, as in Tensor(a!)";
    if (!letter_set(a->before, a->nbefore, false))
        return "torchgen's alias sets are single lower-case letters, as in (a) or (a|b)";
    if (a->arrow && !letter_set(a->after, a->nafter, true))
        return "torchgen's set after '->' is '*' or single lower-case letters";
    if (a->write && a->nbefore > 1) return "a written annotation names one set: (a!), not (a|b!)";
    if (a->arrow && a->nbefore > 1 && a->nafter > 1)
        return "the sets before and after '->' cannot both have more than one name";
    return NULL;
}

static void torchgen_alias(sgv_ctx *cx, const sg_op *op, const sg_type *t) {
    const sg_type *slot = alias_slot(t), *stray = stray_alias(t, slot);
    if (stray) {
        SGV_ERROR(cx, at(op, stray->alias->offset), "torchgen accepts an annotation only on "
                  "Tensor, written Tensor(a), Tensor(a)? or Tensor(a)[] [SG-102]");
        return;
    }
    const char *why = slot && slot->alias ? alias_form_problem(slot->alias) : NULL;
    if (why) SGV_ERROR(cx, at(op, slot->alias->offset), "%s [SG-102]", why);
}

static void torchgen_language(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    for (uint32_t i = 0; i < s->nargs + s->nrets; i++) {
        const sg_arg *a = i < s->nargs ? &s->args[i] : &s->rets[i - s->nargs];
        if (torchgen_type(cx, op, a->type)) torchgen_alias(cx, op, a->type);
    }
}

/* V-02: what torchgen cannot print back the way it was written. */
static void round_trip(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    uint32_t end = s->npositional ? arg_end(&s->args[s->npositional - 1]) : s->overload_offset;
    if (s->star && s->npositional == s->nargs)
        SGV_ERROR(cx, at(op, find_from(op, end, "*")), "'*' with no keyword-only argument after "
                  "it; torchgen cannot print it back: remove it [SG-103]");
    if (s->varargs)
        SGV_ERROR(cx, at(op, find_from(op, args_end(op), "...")), "torchgen does not accept "
                  "'...' (varargs) [SG-103]");
    if (s->varret) {
        const char *p = strstr(op->func + find_from(op, args_end(op), "->"), "...");
        SGV_ERROR(cx, at(op, p ? (uint32_t)(p - op->func) : 0), "torchgen does not accept '...' "
                  "among the returns [SG-103]");
    }
    if (s->ret_parens && s->nrets == 1 && !s->varret)
        SGV_ERROR(cx, at(op, s->rets[0].offset), "torchgen writes a single return without "
                  "parentheses: drop them [SG-103]");
}

/* ---- names (V-11, V-17) ------------------------------------------------------------------ */

static void overload_functional(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    sg_schema_kind k = sg_schema_kind_of(s);
    if (strstr(s->overload, "functional") && k != SG_KIND_FUNCTIONAL)
        SGV_ERROR(cx, at(op, s->overload_offset), "overload name '%s' contains 'functional', "
                  "which torchgen reserves for functional operators; this one is %s [SG-116]",
                  s->overload, sg_schema_kind_names[k]);
}

/* ---- arguments (V-12, V-13, V-14, V-10, V-45) ------------------------------------------- */

/* V-13: once an out argument appears, every later argument is one. */
static void outs_last(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    const sg_arg *first_out = NULL;
    for (uint32_t i = s->npositional; i < s->nargs; i++) {
        const sg_arg *a = &s->args[i];
        if (sg_arg_is_write(a)) {
            if (!first_out) first_out = a;
        } else if (first_out) {
            SGV_ERROR(cx, at(op, a->offset), "keyword-only argument '%s' follows out argument "
                      "'%s'; out arguments (written, after '*') come last [SG-105]", a->name,
                      first_out->name);
            return;
        }
    }
}

/* V-14: no written argument before self. V-12: an in-place op has no out arguments. */
static void mutable_places(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    int self = sgv_self_index(s);
    for (int i = 0; i < self; i++)
        if (sg_arg_is_write(&s->args[i]))
            SGV_ERROR(cx, at(op, s->args[i].offset), "argument '%s' is written but comes before "
                      "'self'; torchgen does not support that [SG-106]", s->args[i].name);
    for (uint32_t i = s->npositional; s->inplace && i < s->nargs; i++)
        if (sg_arg_is_out(s, &s->args[i])) {
            SGV_ERROR(cx, at(op, s->args[i].offset), "in-place operator '%s' cannot also have "
                      "out argument '%s' [SG-107]", s->name, s->args[i].name);
            return;
        }
}

/* V-10: the TensorOptions group (dtype, layout, device, pin_memory) once, on functional ops. */
static void tensor_options(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    int to = sgv_tensor_options(s, 0);
    if (to < 0) return;
    sg_schema_kind k = sg_schema_kind_of(s);
    if (k != SG_KIND_FUNCTIONAL)
        SGV_ERROR(cx, at(op, s->args[to].offset), "TensorOptions arguments (dtype, layout, device, "
                  "pin_memory) are allowed only on functional operators; this one is %s [SG-115]",
                  sg_schema_kind_names[k]);
    int again = sgv_tensor_options(s, (uint32_t)to + 4);
    if (again >= 0)
        SGV_ERROR(cx, at(op, s->args[again].offset), "a second TensorOptions group (dtype, "
                  "layout, device, pin_memory); torchgen allows one [SG-115]");
}

/* V-45: argument names that are Python keywords, but for torchgen's three old exceptions
 * (each of them for an argument named 'from'). */
static bool keyword_exempt(const sg_op *op, const char *arg) {
    static const char *const exempt[] = {"_has_compatible_shallow_copy_type", "random_.from",
                                         "uniform_"};
    char name[256];
    sgv_full_name(op, name, sizeof name);
    for (size_t e = 0; e < sizeof exempt / sizeof *exempt; e++)
        if (sgv_streq(arg, "from") && sgv_streq(name, exempt[e])) return true;
    return false;
}

static int cmp_name(const void *key, const void *item) {
    return strcmp(key, *(const char *const *)item);
}

static bool python_keyword(const char *name) {
    /* most names are longer than any keyword (8) or start where none does: no search */
    size_t n = 0;
    while (n < 9 && name[n]) n++;
    if (n < 2 || n > 8 || !strchr("FNTabcdefgilnoprtwy", name[0])) return false;
    static const char *const kw[] = { /* sorted (strcmp order) for bsearch */
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
        "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
        "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
        "return", "try", "while", "with", "yield"};
    return bsearch(name, kw, sizeof kw / sizeof *kw, sizeof *kw, cmp_name) != NULL;
}

static void python_keywords(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    for (uint32_t i = 0; i < s->nargs; i++)
        if (python_keyword(s->args[i].name) && !keyword_exempt(op, s->args[i].name))
            SGV_ERROR(cx, at(op, s->args[i].name_offset), "argument name '%s' is a Python "
                      "keyword; Python bindings could not pass it by name [SG-118]",
                      s->args[i].name);
}

/* ---- returns (V-03..V-09, V-18) ---------------------------------------------------------- */

static bool ret_written(const sg_arg *r) {
    const sg_alias *a = sgv_alias(r);
    return a && a->write;
}

/* V-03: the i-th out argument and the i-th return carry the same annotation. */
static void outs_match_returns(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    char x[64], y[64];
    for (uint32_t i = s->npositional, j = 0; i < s->nargs && j < s->nrets; i++) {
        const sg_arg *a = &s->args[i], *r = &s->rets[j];
        if (!sg_arg_is_out(s, a)) continue;
        j++;
        if (sgv_alias_equal(sgv_alias(a), sgv_alias(r))) continue;
        SGV_ERROR(cx, at(op, r->offset), "return %u has %s but out argument %u, '%s', has %s; "
                  "the i-th return must alias the i-th out argument [SG-108]", j,
                  sgv_alias_str(sgv_alias(r), x, sizeof x), j, a->name,
                  sgv_alias_str(sgv_alias(a), y, sizeof y));
        return;
    }
}

/* The first argument whose annotation equals the return's (not counting `skip`), or NULL. */
static const sg_arg *aliased_arg(const sg_schema *s, const sg_arg *r, const sg_arg *skip) {
    const sg_alias *ra = sgv_alias(r);
    for (uint32_t i = 0; ra && i < s->nargs; i++)
        if (&s->args[i] != skip && sgv_alias_equal(sgv_alias(&s->args[i]), ra)) return &s->args[i];
    return NULL;
}

/* V-04: a written post-self positional argument is not returned. */
static void mutable_positional_not_returned(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    for (uint32_t i = (uint32_t)(sgv_self_index(s) + 1); i < s->npositional; i++) {
        const sg_arg *a = &s->args[i];
        for (uint32_t j = 0; sg_arg_is_write(a) && j < s->nrets; j++)
            if (sgv_alias_equal(sgv_alias(a), sgv_alias(&s->rets[j]))) {
                SGV_ERROR(cx, at(op, s->rets[j].offset), "return %u aliases written positional "
                          "argument '%s'; torchgen wants such arguments not returned [SG-109]",
                          j + 1, a->name);
                return;
            }
    }
}

/* V-05: returns are all written or none is. */
static void returns_uniform(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    for (uint32_t j = 1; j < s->nrets; j++)
        if (ret_written(&s->rets[j]) != ret_written(&s->rets[0])) {
            SGV_ERROR(cx, at(op, s->rets[j].offset), "return %u is %s but return 1 is %s; "
                      "returns are all written (a!) or none is [SG-110]", j + 1,
                      ret_written(&s->rets[j]) ? "written" : "not written",
                      ret_written(&s->rets[0]) ? "written" : "not written");
            return;
        }
}

static bool is_out_or_self(const sg_schema *s, const sg_arg *a) {
    uint32_t i = (uint32_t)(a - s->args);
    return sg_arg_is_out(s, a) || (i < s->npositional && sgv_streq(a->name, "self"));
}

/* V-06: a written return aliases an out argument or self. V-18: at most one input. */
static void returns_alias(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    for (uint32_t j = 0; j < s->nrets; j++) {
        const sg_arg *r = &s->rets[j], *a = aliased_arg(s, r, NULL);
        const sg_arg *b = a ? aliased_arg(s, r, a) : NULL;
        bool to_out = false;
        for (uint32_t i = 0; i < s->nargs && ret_written(r); i++)
            to_out |= sgv_alias_equal(sgv_alias(&s->args[i]), sgv_alias(r)) &&
                      is_out_or_self(s, &s->args[i]);
        if (ret_written(r) && !to_out)
            SGV_ERROR(cx, at(op, r->offset), "written return %u aliases no out argument and not "
                      "'self'; did you mean to make the argument keyword-only (after '*')? "
                      "[SG-111]", j + 1);
        if (b)
            SGV_ERROR(cx, at(op, r->offset), "return %u aliases two inputs, '%s' and '%s'; "
                      "a return may alias one input only [SG-117]", j + 1, a->name, b->name);
    }
}

/* V-07, V-08: how many returns an out operator has. */
static void out_returns(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    uint32_t nout = 0, counted = 0;
    const sg_arg *not_plain = NULL;
    for (uint32_t i = s->npositional; i < s->nargs; i++) {
        const sg_arg *a = &s->args[i];
        if (!sg_arg_is_out(s, a)) continue;
        nout++;
        counted += strncmp(a->name, "_scratch_", 9) != 0;
        if (!not_plain && !is_plain_tensor(a->type)) not_plain = a;
    }
    if (!nout) return;
    if (not_plain && s->nrets)
        SGV_ERROR(cx, rets_pos(op), "out argument '%s' is not a plain Tensor, so the operator "
                  "returns nothing: write '-> ()' [SG-112]", not_plain->name);
    else if (!not_plain && counted != s->nrets)
        SGV_ERROR(cx, rets_pos(op), "%u return%s for %u out argument%s; an out operator returns "
                  "its out arguments (scratch ones aside), one each [SG-113]", s->nrets,
                  s->nrets == 1 ? "" : "s", counted, counted == 1 ? "" : "s");
}

/* V-09: an in-place op writes self and returns it (nothing when self is not a Tensor). */
static void inplace_self(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    int self = sgv_self_index(s);
    if (!s->inplace) return;
    if (self < 0) {
        SGV_ERROR(cx, at(op, s->name_offset), "in-place operator '%s' needs a 'self' argument "
                  "[SG-114]", s->name);
        return;
    }
    const sg_arg *a = &s->args[self];
    if (!sg_arg_is_write(a)) {
        SGV_ERROR(cx, at(op, a->offset), "in-place operator '%s' must write 'self': annotate it "
                  "Tensor(a!) [SG-114]", s->name);
    } else if (is_plain_tensor(a->type)) {
        if (s->nrets != 1 || !sgv_alias_equal(sgv_alias(&s->rets[0]), sgv_alias(a)))
            SGV_ERROR(cx, rets_pos(op), "in-place operator '%s' must return 'self' (one return, "
                      "annotated like self) [SG-114]", s->name);
    } else if (s->nrets) {
        SGV_ERROR(cx, rets_pos(op), "in-place operator '%s' on a 'self' that is not a Tensor "
                  "returns nothing: write '-> ()' [SG-114]", s->name);
    }
}

/* ---- outside aten: what c10 accepts and torchgen does not, as warnings ------------------ */

/* The first node of t, outside Tensor elements, that carries an annotation, or NULL. */
static const sg_type *non_tensor_alias(const sg_type *t) {
    if (t->alias && sg_type_base(t)->kind != SG_TY_TENSOR) return t;
    for (uint32_t i = 0; i < t->nelems; i++) {
        const sg_type *x = non_tensor_alias(t->elems[i]);
        if (x) return x;
    }
    return NULL;
}

/* SG-102 on a custom op: c10 reads an annotation on any type (int(a!), str!, Dict(k, v)(a)),
 * but only a Tensor's annotation means something to the dispatcher and the generated C. */
void sgv_check_custom_schema(sgv_ctx *cx, const sg_op *op) {
    const sg_schema *s = &op->schema;
    char label[96];
    for (uint32_t i = 0; i < s->nargs + s->nrets; i++) {
        const sg_arg  *a = i < s->nargs ? &s->args[i] : &s->rets[i - s->nargs];
        const sg_type *t = non_tensor_alias(a->type);
        if (!t) continue;
        type_label(t, label, sizeof label);
        sg_diag_report(cx->d, SG_WARNING, at(op, t->alias->offset), "alias annotation on type "
                       "'%s', which is not a Tensor: PyTorch accepts it outside aten, torchgen "
                       "does not%s [SG-102]", label,
                       t->alias->write ? "; the argument is not treated as written" : "");
    }
}

void sgv_check_schema(sgv_ctx *cx, const sg_op *op) {
    torchgen_language(cx, op);
    round_trip(cx, op);
    sgv_check_op_name(cx, op->schema.name, strlen(op->schema.name),
                      sg_op_pos_at(op, op->schema.name_offset), "operator name");
    overload_functional(cx, op);
    outs_last(cx, op);
    mutable_places(cx, op);
    tensor_options(cx, op);
    python_keywords(cx, op);
    outs_match_returns(cx, op);
    mutable_positional_not_returned(cx, op);
    returns_uniform(cx, op);
    returns_alias(cx, op);
    out_returns(cx, op);
    inplace_self(cx, op);
}
