/* cases.c: --emit=cases, the conformance case plan (docs/conformance.md): for each op of the
 * model, cases drawn from rules per argument type family and per tag, one line each.
 *
 * A case is a list of argument tokens in schema order. An op's cases start from one primary
 * case (every tensor input of a base shape, every other argument its primary sample); each
 * variant changes one thing: the dtypes, the layout of the first tensor, the shapes, or one
 * non-tensor argument. Rationale: one change at a time keeps the count linear in the rules and
 * tells, where a case fails, what the failing thing is. The in-place and out= ops of a group
 * take the cases of its functional op, their extra arguments derived (the out tensors empty,
 * so both sides resize them). */
#include "cases.h"

#include <stdio.h>
#include <string.h>

enum { MAX_ARGS = 24, TOK = SG_CASE_TOKEN_MAX + 1 };
_Static_assert(TOK > 2 + 8 * (1 + 8 + 1 + 3 + 10) + 64 + 1, "a Tensor[] token fits");

/* One case: its tokens, each a small string. */
typedef struct kase {
    char tok[MAX_ARGS][TOK];
    int  n;
} kase;

enum { MAX_OP_CASES = 512 };

typedef struct plan {
    sg_buf     *b;
    const char *family;
    uint32_t    ncases;
    uint64_t    seen[MAX_OP_CASES]; /* hashes of the current op's cases: none twice */
    uint32_t    nseen;
} plan;

static const char *const DTYPES[] = {"float32", "float64", "float16", "bfloat16", "int64",
                                     "int32",   "int16",   "int8",    "uint8",    "bool"};
enum { NDTYPES = sizeof DTYPES / sizeof DTYPES[0] };

/* pairs of differing dtypes for ops of several tensor inputs: promotion */
static const char *const MIXED[][2] = {{"float32", "int64"},  {"int32", "float16"},
                                       {"bool", "float32"},   {"uint8", "int8"},
                                       {"bfloat16", "float16"}, {"int64", "float64"}};

static bool has_tag(const sg_op *op, const char *tag) {
    for (uint32_t i = 0; i < op->tags.n; i++)
        if (!strcmp(op->tags.items[i], tag)) return true;
    return false;
}

static bool is_tensor(sg_type_family_id f) { return f == SG_FAM_TENSOR || f == SG_FAM_OPT_TENSOR; }

/* The sizes a tensor input takes in the primary case of an op of this family. */
static const char *base_sizes(const char *family) {
    return !strcmp(family, "reduction") ? "2x3x4" : "2x3";
}

/* ---- tokens of non-tensor arguments ---------------------------------------------------------- */

/* A schema default as a token; false where the plan has no token for it. */
static bool default_token(const sg_arg *a, sg_type_family_id f, char *t) {
    const sg_value *v = a->default_value;
    if (!v) return false;
    switch (v->kind) {
    case SG_VAL_NONE: snprintf(t, TOK, "N"); return true;
    case SG_VAL_BOOL: snprintf(t, TOK, "b%d", v->u.b); return true;
    case SG_VAL_INT: {
        const char *pre = f == SG_FAM_SCALAR || f == SG_FAM_OPT_SCALAR ? "si"
                          : f == SG_FAM_INT_LIST || f == SG_FAM_OPT_INT_LIST
                              ? "l" /* int[1] dim=1: one int for the list */
                          : f == SG_FAM_FLOAT || f == SG_FAM_OPT_FLOAT ? "f"
                                                                       : "i";
        snprintf(t, TOK, "%s%lld", pre, (long long)v->u.i);
        return true;
    }
    case SG_VAL_FLOAT: {
        bool scalar = f == SG_FAM_SCALAR || f == SG_FAM_OPT_SCALAR;
        snprintf(t, TOK, "%s%.17g", scalar ? "sf" : "f", v->u.f);
        return true;
    }
    case SG_VAL_STR: snprintf(t, TOK, "q%.*s", (int)v->u.str.len, v->u.str.s); return true;
    case SG_VAL_LIST: {
        int k = snprintf(t, TOK, "l");
        for (uint32_t i = 0; i < v->u.list.n && k < TOK - 24; i++) {
            if (v->u.list.items[i].kind != SG_VAL_INT) return false;
            k += snprintf(t + k, (size_t)(TOK - k), "%s%lld", i ? "," : "",
                          (long long)v->u.list.items[i].u.i);
        }
        return true;
    }
    case SG_VAL_IDENT: {
        const char *s = v->u.str.s;
        size_t      len = v->u.str.len;
        if (f == SG_FAM_MEMORY_FORMAT || f == SG_FAM_OPT_MEMORY_FORMAT)
            snprintf(t, TOK, "m%.*s", (int)len, s);
        else if (f == SG_FAM_DTYPE || f == SG_FAM_OPT_DTYPE)
            snprintf(t, TOK, "d%s", len == 4 && !memcmp(s, "long", 4) ? "int64" : "float32");
        else if (len == 4 && !memcmp(s, "Mean", 4)) snprintf(t, TOK, "i1"); /* at::Reduction */
        else return false;
        return true;
    }
    default: return false;
    }
}

/* The primary sample of a non-tensor argument where its default does not give one: by type
 * family, and by name where the name says what the number means. False: no rule (the op is
 * left out, and listed). */
static bool primary_token(const sg_arg *a, sg_type_family_id f, int ndim, char *t) {
    const char *nm = a->name ? a->name : "";
    if (default_token(a, f, t)) return true;
    switch (f) {
    case SG_FAM_INT:
        snprintf(t, TOK, "i%d", !strcmp(nm, "dim") || !strcmp(nm, "dim0") ? (ndim ? ndim - 1 : 0)
                                : !strcmp(nm, "dim1")                    ? 0
                                                                          : 1);
        return true;
    case SG_FAM_FLOAT: snprintf(t, TOK, "f0.5"); return true;
    case SG_FAM_BOOL: snprintf(t, TOK, "b0"); return true;
    case SG_FAM_SCALAR: snprintf(t, TOK, "si2"); return true;
    case SG_FAM_DTYPE: snprintf(t, TOK, "dfloat64"); return true;
    case SG_FAM_INT_LIST:
        /* sizes of the base [2, 3] (6 elements) where the name says sizes, else dims */
        if (!strcmp(nm, "size") || !strcmp(nm, "shape"))
            snprintf(t, TOK, ndim == 3 ? "l4,6" : "l3,2");
        else if (!strcmp(nm, "dims")) snprintf(t, TOK, ndim == 3 ? "l2,0,1" : "l1,0");
        else if (!strcmp(nm, "stride")) snprintf(t, TOK, "l1,3");
        else if (!strcmp(nm, "dim")) snprintf(t, TOK, "l%d", ndim ? ndim - 1 : 0);
        else snprintf(t, TOK, "l1");
        return true;
    case SG_FAM_STR: /* a Dimname names a dim of an unnamed tensor: an error either way */
        if (!strcmp(nm, "reduce")) snprintf(t, TOK, "qadd");
        else if (strstr(nm, "dim")) snprintf(t, TOK, "qa");
        else return false;
        return true;
    case SG_FAM_STR_LIST: snprintf(t, TOK, "wa"); return true;
    case SG_FAM_DEVICE: snprintf(t, TOK, "vcpu"); return true;
    case SG_FAM_OPT_INT:
    case SG_FAM_OPT_FLOAT:
    case SG_FAM_OPT_BOOL:
    case SG_FAM_OPT_SCALAR:
    case SG_FAM_OPT_DTYPE:
    case SG_FAM_OPT_LAYOUT:
    case SG_FAM_OPT_DEVICE:
    case SG_FAM_OPT_MEMORY_FORMAT:
    case SG_FAM_OPT_INT_LIST:
    case SG_FAM_OPT_STR:
    case SG_FAM_OPT_STR_LIST:
    case SG_FAM_GENERATOR: snprintf(t, TOK, "N"); return true;
    default: return false;
    }
}

/* Other values of a non-tensor argument, tried one at a time: what a demanding user passes
 * (negative and out-of-range dims, repeated dims, each kind of Scalar, an optional present).
 * The first row that fits the argument gives its tokens; `dim*` fits a name that starts with
 * "dim", NULL any name; `i+` is the dim one past the last (an error either way). */
static const struct variants {
    sg_type_family_id fam;
    const char       *name;
    int               min_ndim;
    const char       *tokens; /* space-separated */
} VARIANTS[] = {
    {SG_FAM_INT, "dim*", 0, "i0 i-1 i+"},
    {SG_FAM_BOOL, NULL, 0, "b0 b1"},
    {SG_FAM_SCALAR, NULL, 0, "si-3 sf0.5 sf-1.25 sb1"},
    {SG_FAM_OPT_SCALAR, NULL, 0, "si1 sf0.5"},
    {SG_FAM_FLOAT, NULL, 0, "f0.25 f-1.5"},
    {SG_FAM_OPT_FLOAT, NULL, 0, "f0.25 f-1.5"},
    {SG_FAM_OPT_INT, "dim*", 0, "i0 i-1"},
    {SG_FAM_OPT_INT, NULL, 0, "i1"},
    {SG_FAM_OPT_DTYPE, NULL, 0, "dfloat64 dfloat16 dint64"},
    {SG_FAM_OPT_BOOL, "pin_memory", 0, ""}, /* pinned memory needs a GPU's driver */
    {SG_FAM_OPT_BOOL, NULL, 0, "b0 b1"},
    {SG_FAM_INT_LIST, "dim*", 3, "l l0 l-1 l0,-1 l1,-2 l-3,-1"}, /* l1,-2: a dim twice */
    {SG_FAM_INT_LIST, "dim*", 0, "l l0 l-1 l0,-1"},
    {SG_FAM_OPT_INT_LIST, "dim*", 3, "l l0 l-1 l0,-1 l1,-2 l-3,-1"},
    {SG_FAM_OPT_INT_LIST, "dim*", 0, "l l0 l-1 l0,-1"},
    {SG_FAM_OPT_STR, "rounding_mode", 0, "qtrunc qfloor"},
    {SG_FAM_STR, "approximate", 0, "qtanh"},
    {SG_FAM_STR, "reduce", 0, "qmultiply"},
};

static bool name_fits(const char *want, const char *name) {
    if (!want) return true;
    if (!name) return false;
    size_t n = strlen(want);
    return want[n - 1] == '*' ? !strncmp(name, want, n - 1) : !strcmp(name, want);
}

static int variant_tokens(const sg_arg *a, sg_type_family_id f, int ndim, char out[][TOK]) {
    for (size_t r = 0; r < sizeof VARIANTS / sizeof *VARIANTS; r++) {
        const struct variants *v = &VARIANTS[r];
        if (v->fam != f || ndim < v->min_ndim || !name_fits(v->name, a->name)) continue;
        int n = 0;
        for (const char *t = v->tokens; *t && n < 8;) {
            size_t len = strcspn(t, " ");
            if (len == 2 && !memcmp(t, "i+", 2)) snprintf(out[n++], TOK, "i%d", ndim + 1);
            else snprintf(out[n++], TOK, "%.*s", (int)len, t);
            t += len + (t[len] == ' ');
        }
        return n;
    }
    return 0;
}

/* ---- one op ---------------------------------------------------------------------------------- */

typedef struct opinfo {
    const sg_op      *op;
    sg_type_family_id fam[MAX_ARGS];
    int               tensors[MAX_ARGS], ntensors; /* tensor inputs, by argument index */
    int               ndim;                        /* of the first tensor input's sizes */
    const char       *sizes;                       /* the base sizes */
    bool              geometry; /* the op takes sizes and strides of its own (as_strided): its
                                   input keeps the base geometry, for a view past the storage
                                   is undefined in aten (it reads out of bounds) */
    /* the override file's facts per argument (NULL: the rules'), and its extra cases */
    const char         *sizes_of[MAX_ARGS], *values_of[MAX_ARGS], *dtype_of[MAX_ARGS];
    const char         *token_of[MAX_ARGS];
    const sg_case_fact *extra[MAX_OP_CASES];
    int                 nextra;
} opinfo;

/* A tensor input's token; sizes NULL: the argument's own (the override file's, else the
 * base). Names carry what the type cannot: an index is int64 and in range of the smallest base
 * size (2), a mask or condition bool; the override file's dtype and values win over both. */
static void tensor_token(const opinfo *o, int i, const char *dtype, const char *sizes,
                         char layout, char *t) {
    const sg_arg *a = &o->op->schema.args[i];
    const char   *nm = a->name ? a->name : "", *values = "n";
    if (!strcmp(nm, "index") || !strcmp(nm, "indices"))
        dtype = !strcmp(dtype, "int32") ? "int32" : "int64", values = "x2";
    else if (!strcmp(nm, "mask") || !strcmp(nm, "condition"))
        dtype = "bool";
    if (o->dtype_of[i]) dtype = o->dtype_of[i];
    if (o->values_of[i]) values = o->values_of[i];
    if (!sizes) sizes = o->sizes_of[i] ? o->sizes_of[i] : o->sizes;
    snprintf(t, TOK, "t%s:%s:%c:%s", dtype, sizes, layout, values);
}

/* An out= tensor's token: zeros, empty (so both sides resize it) or of the override file's
 * sizes, in the case's dtype or the file's. */
static void out_token(const opinfo *o, int i, const char *dtype, char *t) {
    snprintf(t, TOK, "t%s:%s:c:z", o->dtype_of[i] ? o->dtype_of[i] : dtype,
             o->sizes_of[i] ? o->sizes_of[i] : "0");
}

/* A Tensor[]'s token: two items of the base sizes (out=: empty zeros), or one item per sizes
 * of the override file's; its dtype and values apply to each. The file's limits (sizes= of at
 * most 64 bytes and 8 items, xN of at most 9 digits) keep it within TOK. */
static void list_token(const opinfo *o, int i, const char *dtype, bool out, char *t) {
    char        two[TOK];
    const char *values = o->values_of[i] ? o->values_of[i] : out ? "z" : "n";
    const char *sizes = o->sizes_of[i];
    if (!sizes) {
        snprintf(two, TOK, "%s,%s", out ? "0" : o->sizes, out ? "0" : o->sizes);
        sizes = two;
    }
    if (o->dtype_of[i]) dtype = o->dtype_of[i];
    int k = snprintf(t, TOK, "T[");
    for (const char *c = sizes; *c;) {
        int n = (int)strcspn(c, ",");
        k += snprintf(t + k, (size_t)(TOK - k), "%st%s:%.*s:c:%s", c == sizes ? "" : ",", dtype,
                      n, c, values);
        c += n + (c[n] == ',');
    }
    snprintf(t + k, (size_t)(TOK - k), "]");
}

/* The rank of sizes as the plan writes them (`-`: 0). */
static int rank_of(const char *sizes) {
    if (!strcmp(sizes, "-")) return 0;
    int n = 1;
    for (const char *c = sizes; *c; c++) n += *c == 'x';
    return n;
}

static void put_case(plan *p, const sg_op *op, const kase *k) {
    uint64_t h = 1469598103934665603u; /* FNV-1a over the tokens */
    for (int i = 0; i < k->n; i++) {
        for (const char *c = k->tok[i]; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211u;
        h = (h ^ ' ') * 1099511628211u;
    }
    for (uint32_t i = 0; i < p->nseen; i++)
        if (p->seen[i] == h) return;
    if (p->nseen < MAX_OP_CASES) p->seen[p->nseen++] = h;
    sg_buf_printf(p->b, "%s %s::%s %s", p->family, op->ns, op->schema.name,
                  *op->schema.overload ? op->schema.overload : "-");
    for (int i = 0; i < k->n; i++) sg_buf_printf(p->b, " %s", k->tok[i]);
    sg_buf_putc(p->b, '\n');
    p->ncases++;
}

/* The primary case in `dtype` for every tensor input, of its own sizes; false where an
 * argument has no rule. */
static bool primary(const opinfo *o, const char *dtype, kase *k) {
    const sg_schema *s = &o->op->schema;
    k->n = (int)s->nargs;
    for (uint32_t i = 0; i < s->nargs; i++) {
        const sg_arg *a = &s->args[i];
        bool          out = a->write && s->kind == SG_KIND_OUT;
        if (o->fam[i] == SG_FAM_TENSOR_LIST) list_token(o, (int)i, dtype, out, k->tok[i]);
        else if (out) out_token(o, (int)i, dtype, k->tok[i]);
        else if (is_tensor(o->fam[i])) tensor_token(o, (int)i, dtype, NULL, 'c', k->tok[i]);
        else if (o->token_of[i]) snprintf(k->tok[i], TOK, "%s", o->token_of[i]);
        else if (!primary_token(a, o->fam[i], o->ndim, k->tok[i]))
            return false;
    }
    return true;
}

/* Sets the tensor inputs' sizes: the first to `first`, the others to `rest` (those with sizes
 * of their own in the override file keep them). */
static void resize(const opinfo *o, kase *k, const char *dtype, const char *first,
                   const char *rest) {
    for (int j = 0; j < o->ntensors; j++) {
        int i = o->tensors[j];
        tensor_token(o, i, dtype, !j ? first : o->sizes_of[i] ? NULL : rest, 'c', k->tok[i]);
    }
}

/* The cases of one op with a rule for every argument; the count, or -1 where an argument has
 * none (why: the argument). */
static int op_cases(plan *p, const opinfo *o, const sg_arg **why) {
    const sg_schema *s = &o->op->schema;
    kase             k;
    uint32_t         before = p->ncases;
    /* every dtype, the first tensor in every layout */
    for (int d = 0; d < NDTYPES; d++) {
        if (!primary(o, DTYPES[d], &k)) {
            for (uint32_t i = 0; i < s->nargs; i++) {
                char t[TOK];
                if (!is_tensor(o->fam[i]) && o->fam[i] != SG_FAM_TENSOR_LIST &&
                    !o->token_of[i] && !primary_token(&s->args[i], o->fam[i], o->ndim, t))
                    *why = &s->args[i];
            }
            return -1;
        }
        put_case(p, o->op, &k);
        if (!o->ntensors || o->geometry || (d != 0 && d != 2 && d != 4))
            continue; /* layouts: float32, float16, int64 */
        /* the first tensor in every layout; the second transposed or sliced, which is what
         * tells a result that follows one operand's layout from one that follows another's */
        static const char layouts[] = "tsoep", second[] = "ts";
        for (int j = 0; j < 2 && j < o->ntensors; j++) {
            for (const char *l = j ? second : layouts; *l; l++) {
                kase v = k;
                int  i = o->tensors[j];
                int  nd = j && o->sizes_of[i] ? rank_of(o->sizes_of[i]) : o->ndim;
                if ((*l == 't' && nd < 2) || ((*l == 's' || *l == 'e') && nd < 1) ||
                    (*l == 'p' && nd < 3))
                    continue;
                tensor_token(o, i, DTYPES[d], NULL, *l, v.tok[i]);
                put_case(p, o->op, &v);
            }
        }
    }
    if (o->ntensors && !o->geometry) {
        /* shapes: 0-d, size 0, rank 5 and 6, and broadcasting between the inputs */
        static const char *const same[] = {"-", "0x3", "4", "2x1x2x1x2", "1x2x1x2x1x2"};
        static const char *const pairs[][2] = {{"2x3", "3"}, {"2x1", "1x3"}, {"-", "2x3"},
                                               {"3", "2x3"}, {"2x3", "4x3"}};
        for (int d = 0; d < NDTYPES; d += 4) { /* float32, int64, bool */
            primary(o, DTYPES[d], &k);
            for (size_t j = 0; j < sizeof same / sizeof *same; j++) {
                kase v = k;
                resize(o, &v, DTYPES[d], same[j], same[j]);
                put_case(p, o->op, &v);
            }
            for (size_t j = 0; o->ntensors > 1 && j < sizeof pairs / sizeof *pairs; j++) {
                kase v = k;
                resize(o, &v, DTYPES[d], pairs[j][0], pairs[j][1]);
                put_case(p, o->op, &v);
            }
        }
        /* long rows, so that the kernels' vector loops run, not only their tails: 134 is 8
         * vectors of 16 and 6 more, 16 of 8 and 6 more */
        static const char *const longs[] = {"float32", "float16", "bfloat16",
                                            "int64",   "uint8",   "bool"};
        for (size_t j = 0; j < sizeof longs / sizeof *longs; j++) {
            primary(o, longs[j], &k);
            resize(o, &k, longs[j], "2x67", "2x67");
            put_case(p, o->op, &k);
        }
        /* promotion: the inputs in differing dtypes */
        for (size_t j = 0; o->ntensors > 1 && j < sizeof MIXED / sizeof *MIXED; j++) {
            primary(o, MIXED[j][1], &k);
            int i = o->tensors[0];
            tensor_token(o, i, MIXED[j][0], NULL, 'c', k.tok[i]);
            put_case(p, o->op, &k);
        }
    }
    /* out=: a result tensor of another dtype than the inputs' (refused, or cast on store) */
    static const char *const outs[][2] = {{"float32", "float64"}, {"int64", "float32"},
                                          {"float16", "float32"}, {"float32", "int64"}};
    for (size_t j = 0; s->kind == SG_KIND_OUT && j < sizeof outs / sizeof *outs; j++) {
        primary(o, outs[j][0], &k);
        for (uint32_t i = 0; i < s->nargs; i++)
            if (s->args[i].write && o->fam[i] == SG_FAM_TENSOR)
                out_token(o, (int)i, outs[j][1], k.tok[i]);
        put_case(p, o->op, &k);
    }
    /* a Scalar that does not fit the narrow integer dtypes */
    for (uint32_t i = 0; i < s->nargs && o->ntensors; i++) {
        if (o->fam[i] != SG_FAM_SCALAR) continue;
        primary(o, "int8", &k);
        snprintf(k.tok[i], TOK, "si300");
        put_case(p, o->op, &k);
        primary(o, "uint8", &k);
        snprintf(k.tok[i], TOK, "si-1");
        put_case(p, o->op, &k);
    }
    /* each non-tensor argument's other values, in float32 and int64 */
    for (int d = 0; d < NDTYPES; d += 4) {
        if (d == 8) break;
        primary(o, DTYPES[d], &k);
        for (uint32_t i = 0; i < s->nargs; i++) {
            char alt[8][TOK];
            int  n = is_tensor(o->fam[i]) ? 0
                                          : variant_tokens(&s->args[i], o->fam[i], o->ndim, alt);
            for (int j = 0; j < n; j++) {
                if (!strcmp(alt[j], k.tok[i])) continue;
                kase v = k;
                memcpy(v.tok[i], alt[j], TOK);
                put_case(p, o->op, &v);
            }
        }
    }
    /* the override file's cases, as written */
    for (int e = 0; e < o->nextra; e++) {
        const sg_case_fact *f = o->extra[e];
        k.n = (int)f->ntokens;
        for (uint32_t i = 0; i < f->ntokens; i++) snprintf(k.tok[i], TOK, "%s", f->tokens[i]);
        put_case(p, o->op, &k);
    }
    return (int)(p->ncases - before);
}

static const char *family_of(const sg_op *op, int ntensors) {
    if (has_tag(op, "nondeterministic_seeded")) return "random";
    if (has_tag(op, "pointwise")) return "pointwise";
    if (has_tag(op, "reduction")) return "reduction";
    for (uint32_t i = 0; i < op->schema.nrets; i++)
        if (op->schema.rets[i].type->alias && !op->schema.rets[i].type->alias->write)
            return "view";
    return ntensors ? "other" : "factory";
}

/* Why an op has no cases, or NULL where it has. */
static const char *left_out(const sg_op *op) {
    if (!op->parsed) return "its schema did not parse";
    if (op->schema.nargs > MAX_ARGS) return "too many arguments";
    if (op->schema.kind == SG_KIND_MUTABLE || op->schema.kind == SG_KIND_SCRATCH)
        return "a mutable op";
    return NULL;
}

/* The override file's facts for op, in file order (a later one wins), into o. The file was
 * checked where it was read; a fact applies to the ops it names that have its argument, where
 * the argument's type takes it, and an extra case to those whose arguments its tokens fit. */
static void apply_overrides(opinfo *o, const sg_case_overrides *ov) {
    const sg_schema *s = &o->op->schema;
    for (uint32_t n = 0; ov && n < ov->n; n++) {
        const sg_case_fact *f = &ov->facts[n];
        if (!sg_case_fact_names(f, o->op)) continue;
        if (!f->arg) {
            bool fits = f->ntokens == s->nargs && o->nextra < MAX_OP_CASES;
            for (uint32_t i = 0; fits && i < s->nargs; i++)
                fits = !sg_case_token_misfit(o->fam[i], f->tokens[i]);
            if (fits) o->extra[o->nextra++] = f;
            continue;
        }
        for (uint32_t i = 0; i < s->nargs; i++) {
            if (!s->args[i].name || strcmp(s->args[i].name, f->arg)) continue;
            bool out = s->args[i].write && s->kind == SG_KIND_OUT;
            bool list = o->fam[i] == SG_FAM_TENSOR_LIST;
            if (f->token && !is_tensor(o->fam[i]) && !list &&
                !sg_case_token_misfit(o->fam[i], f->token))
                o->token_of[i] = f->token;
            if ((!is_tensor(o->fam[i]) && !list) || (out && f->values) ||
                (f->sizes && strchr(f->sizes, ',') && !list))
                continue;
            if (f->sizes) o->sizes_of[i] = f->sizes;
            if (f->values) o->values_of[i] = f->values;
            if (f->dtype) o->dtype_of[i] = f->dtype;
        }
    }
}

void sg_emit_cases(sg_buf *b, const sg_model *m, const sg_case_overrides *ov) {
    plan p = {.b = b};
    sg_buf_puts(b, "# conformance case plan (docs/conformance.md), made by schemagen --emit=cases"
                   " from");
    for (uint32_t i = 0; i < m->nsources; i++) {
        const char *path = m->sources[i]->path, *base = strrchr(path, '/');
        sg_buf_printf(b, " %s", base ? base + 1 : path);
    }
    if (ov) {
        const char *base = strrchr(ov->path, '/');
        sg_buf_printf(b, " with %s", base ? base + 1 : ov->path);
    }
    sg_buf_putc(b, '\n');
    sg_buf notes;
    sg_buf_init(&notes);
    uint32_t covered = 0, total = 0;
    for (uint32_t n = 0; n < m->nops; n++) {
        const sg_op *op = m->ops[n];
        total++;
        const char *why = left_out(op);
        if (why) {
            sg_buf_printf(&notes, "# not covered: %s::%s%s%s: %s\n", op->ns, op->schema.name,
                          *op->schema.overload ? "." : "", op->schema.overload, why);
            continue;
        }
        opinfo o;
        memset(&o, 0, sizeof o);
        o.op = op;
        for (uint32_t i = 0; i < op->schema.nargs; i++) {
            o.fam[i] = sg_type_family_of(op->schema.args[i].type);
            o.geometry |= op->schema.args[i].name && !strcmp(op->schema.args[i].name, "stride");
            bool out = op->schema.args[i].write && op->schema.kind == SG_KIND_OUT;
            if (is_tensor(o.fam[i]) && !out) o.tensors[o.ntensors++] = (int)i;
        }
        apply_overrides(&o, ov);
        p.family = family_of(op, o.ntensors);
        o.sizes = base_sizes(p.family);
        o.ndim = !strcmp(o.sizes, "2x3x4") ? 3 : 2;
        if (o.ntensors && o.sizes_of[o.tensors[0]]) o.ndim = rank_of(o.sizes_of[o.tensors[0]]);
        const sg_arg *arg = NULL;
        p.nseen = 0;
        int           got = op_cases(&p, &o, &arg);
        if (got < 0)
            sg_buf_printf(&notes, "# not covered: %s::%s%s%s: no rule for argument '%s'\n", op->ns,
                          op->schema.name, *op->schema.overload ? "." : "", op->schema.overload,
                          arg && arg->name ? arg->name : "?");
        else
            covered++;
    }
    if (notes.len) sg_buf_putn(b, notes.data, notes.len);
    sg_buf_printf(b, "# %u cases; %u of %u ops covered\n", p.ncases, covered, total);
    sg_buf_free(&notes);
}
