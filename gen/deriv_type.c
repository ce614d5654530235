/* deriv_type.c: backward formulas typed against the model (deriv_type.h). C++ overload
 * resolution, cut to what derivatives.yaml's formulas use: a call's candidates are the ops of
 * its name (`at::` and `_symint` dropped), each scored by the conversions its arguments need
 * (none for a Tensor passed as a Tensor, one for an int passed as a Scalar, ...), trailing
 * arguments taken from their defaults, a TensorOptions argument standing for the dtype,
 * layout, device and pin_memory that follow one another in the op's schema, and a
 * TensorGeometry one for the sizes, strides and storage offset. */
#include "deriv_type.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct oplist {
    const sg_op **ops;
    uint32_t      n, cap;
} oplist;

typedef struct tctx {
    sg_arena         *a;
    const sg_dt_ops  *ops;
    const sg_deriv   *dv;
    const sg_schema  *sc;
    sg_fx_error      *err;
    bool              failed;
} tctx;

/* ---- the ops by name ------------------------------------------------------------------------ */

int sg_dt_ops_init(sg_dt_ops *o, sg_arena *a, const sg_model *m) {
    if (sg_strmap_init(&o->by_name, a, m->nops)) return -1;
    for (uint32_t i = 0; i < m->nops; i++) {
        const sg_op *op = m->ops[i];
        if (!op->parsed || op->schema.kind == SG_KIND_OUT) continue;
        if (strcmp(op->ns, "aten") != 0 && strcmp(op->ns, "autograd") != 0) continue;
        const char *nm = op->schema.name;
        sg_strmap_slot *sl = sg_strmap_put(&o->by_name, nm, strlen(nm), NULL);
        if (!sl) return -1;
        oplist *l = sl->value;
        if (!l) {
            if (!(l = sg_arena_alloc(a, sizeof *l))) return -1;
            memset(l, 0, sizeof *l);
            sl->value = l;
        }
        if (l->n == l->cap) {
            uint32_t c = l->cap ? 2 * l->cap : 4;
            const sg_op **p = sg_arena_alloc(a, c * sizeof *p);
            if (!p) return -1;
            if (l->n) memcpy(p, l->ops, l->n * sizeof *p);
            l->ops = p, l->cap = c;
        }
        l->ops[l->n++] = op;
    }
    return 0;
}

/* ---- messages ------------------------------------------------------------------------------- */

const char *sg_dt_type_name(int type) {
    switch (type) {
    case SG_FT_OPTIONS: return "TensorOptions";
    case SG_FT_NONE: return "nullopt";
    case SG_FT_TUPLE: return "a tuple of Tensors";
    case SG_FT_GEOMETRY: return "TensorGeometry";
    default: return type >= 0 && type < SG_FAM__COUNT ? sg_type_family_rows[type].name : "?";
    }
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static sg_dtx *fail(tctx *c, const sg_fx *x, const char *fmt, ...) {
    if (!c->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err->msg, sizeof c->err->msg, fmt, ap);
        va_end(ap);
        c->err->off = x ? x->off : 0;
        c->failed = true;
    }
    return NULL;
}

static sg_dtx *node(tctx *c, sg_dt_what w, int type, const sg_fx *x, uint32_t nkids) {
    sg_dtx *n = sg_arena_alloc(c->a, sizeof *n);
    if (!n) return fail(c, x, "out of memory");
    memset(n, 0, sizeof *n);
    n->what = w, n->type = type, n->x = x, n->nkids = nkids;
    if (nkids && !(n->kids = sg_arena_alloc(c->a, nkids * sizeof *n->kids)))
        return fail(c, x, "out of memory");
    if (nkids) memset(n->kids, 0, nkids * sizeof *n->kids);
    return n;
}

/* ---- names ---------------------------------------------------------------------------------- */

/* name without a leading "::", "at::", "at::native::", "c10::" or "std::" */
static const char *bare(const char *name) {
    static const char *const ns[] = {"::", "at::native::", "at::", "c10::", "std::"};
    for (bool again = true; again;) {
        again = false;
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
            if (strncmp(name, ns[i], strlen(ns[i])) == 0) {
                name += strlen(ns[i]);
                again = true;
            }
    }
    return name;
}

/* The first result that is differentiable: what `grad` is the gradient of. */
static uint32_t first_diff(const sg_deriv *dv) {
    for (uint32_t i = 0; dv->out_diff && i < dv->nout_diff; i++)
        if (dv->out_diff[i]) return i;
    return 0;
}

/* The named constants formulas use: their type, and their C (deriv_emit_value.c writes it). */
static const struct {
    const char *name;
    int         type;
    const char *c;
} named_consts[] = {
    {"true", SG_FAM_BOOL, "true"},
    {"false", SG_FAM_BOOL, "false"},
    {"nullopt", SG_FT_NONE, "NULL"},
    {"kFloat", SG_FAM_DTYPE, "SG_FLOAT32"},
    {"kDouble", SG_FAM_DTYPE, "SG_FLOAT64"},
    {"kLong", SG_FAM_DTYPE, "SG_INT64"},
    {"kInt", SG_FAM_DTYPE, "SG_INT32"},
    {"kBool", SG_FAM_DTYPE, "SG_BOOL"},
    {"kHalf", SG_FAM_DTYPE, "SG_FLOAT16"},
    {"kBFloat16", SG_FAM_DTYPE, "SG_BFLOAT16"},
    {"kStrided", SG_FAM_LAYOUT, "SG_STRIDED"},
    {"MemoryFormat::Contiguous", SG_FAM_MEMORY_FORMAT, "SG_CONTIGUOUS_FORMAT"},
    {"MemoryFormat::Preserve", SG_FAM_MEMORY_FORMAT, "SG_PRESERVE_FORMAT"},
    {"LEGACY_CONTIGUOUS_MEMORY_FORMAT", SG_FAM_MEMORY_FORMAT, "SG_CONTIGUOUS_FORMAT"},
    {"M_PI", SG_FAM_FLOAT, "3.14159265358979323846"},
};

const char *sg_dt_const_c(const char *name) {
    for (size_t k = 0; k < sizeof named_consts / sizeof *named_consts; k++)
        if (strcmp(name, named_consts[k].name) == 0) return named_consts[k].c;
    return NULL;
}

static sg_dtx *ident(tctx *c, const sg_fx *x) {
    const sg_schema *sc = c->sc;
    const char *n = x->text;
    sg_dtx *d;
    if (strcmp(n, "grad") == 0) {
        if (!(d = node(c, SG_DT_GRAD, SG_FAM_TENSOR, x, 0))) return NULL;
        d->idx = first_diff(c->dv);
        return d;
    }
    if (strncmp(n, "grad_", 5) == 0 && strcmp(n, "grad_input_mask") != 0) {
        int r = sg_deriv_result_index(sc, n + 5);
        if (r >= 0 && sc->rets[r].name && sg_deriv_arg_index(sc, n) < 0) {
            if (!(d = node(c, SG_DT_GRAD, SG_FAM_TENSOR, x, 0))) return NULL;
            d->idx = (uint32_t)r;
            return d;
        }
    }
    int i = sg_deriv_arg_index(sc, n);
    if (i >= 0) {
        if (!(d = node(c, SG_DT_INPUT, sg_type_family_of(sc->args[i].type), x, 0))) return NULL;
        d->idx = (uint32_t)i;
        return d;
    }
    int r = sg_deriv_result_index(sc, n);
    if (r >= 0) {
        if (!(d = node(c, SG_DT_RESULT, sg_type_family_of(sc->rets[r].type), x, 0)))
            return NULL;
        d->idx = (uint32_t)r;
        return d;
    }
    if (strcmp(n, "grad_input_mask") == 0) return node(c, SG_DT_MASK, SG_FAM_BOOL_LIST, x, 0);
    const char *b = bare(n);
    for (size_t k = 0; k < sizeof named_consts / sizeof *named_consts; k++)
        if (strcmp(b, named_consts[k].name) == 0) {
            if (!(d = node(c, SG_DT_CONST, named_consts[k].type, x, 0))) return NULL;
            d->text = b;
            return d;
        }
    if (strcmp(n, "grads") == 0) { /* all of them (some undefined): Tensor?[] */
        if (!(d = node(c, SG_DT_GRAD, SG_FAM_OPT_TENSOR_LIST, x, 0))) return NULL;
        d->idx = UINT32_MAX;
        return d;
    }
    return fail(c, x, "unknown name '%s'", n);
}

/* ---- conversions ---------------------------------------------------------------------------- */

/* What passing a value of type t as a parameter of family f costs: 0 exact, more for a
 * conversion C++ makes implicitly, -1 where it makes none. */
static int cost(int f, const sg_dtx *v) {
    int t = v->type;
    bool none = t == SG_FT_NONE;
    switch (f) {
    case SG_FAM_TENSOR: return t == SG_FAM_TENSOR ? 0 : t == SG_FAM_OPT_TENSOR ? 1 : -1;
    case SG_FAM_OPT_TENSOR: return t == SG_FAM_OPT_TENSOR || none ? 0 : t == SG_FAM_TENSOR ? 1 : -1;
    case SG_FAM_TENSOR_LIST: return t == SG_FAM_TENSOR_LIST ? 0 : -1;
    case SG_FAM_OPT_TENSOR_LIST:
        return t == SG_FAM_OPT_TENSOR_LIST ? 0 : t == SG_FAM_TENSOR_LIST ? 1 : -1;
    case SG_FAM_SCALAR:
    case SG_FAM_OPT_SCALAR:
        if (t == SG_FAM_SCALAR || (none && f == SG_FAM_OPT_SCALAR)) return 0;
        return t == SG_FAM_INT || t == SG_FAM_FLOAT ? 2 : t == SG_FAM_BOOL ? 3
               : t == SG_FAM_OPT_SCALAR && f == SG_FAM_OPT_SCALAR ? 0 : -1;
    case SG_FAM_INT: return t == SG_FAM_INT ? 0 : t == SG_FAM_BOOL ? 3 : -1;
    case SG_FAM_OPT_INT: return t == SG_FAM_OPT_INT || none ? 0 : t == SG_FAM_INT ? 1 : -1;
    case SG_FAM_FLOAT: return t == SG_FAM_FLOAT ? 0 : t == SG_FAM_INT ? 1 : -1;
    case SG_FAM_OPT_FLOAT: return t == SG_FAM_OPT_FLOAT || none ? 0 : t == SG_FAM_FLOAT ? 1 : -1;
    case SG_FAM_BOOL: return t == SG_FAM_BOOL ? 0 : -1;
    case SG_FAM_OPT_BOOL: return t == SG_FAM_OPT_BOOL || none ? 0 : t == SG_FAM_BOOL ? 1 : -1;
    case SG_FAM_INT_LIST:
    case SG_FAM_OPT_INT_LIST:
        if (t == SG_FAM_INT_LIST || (none && f == SG_FAM_OPT_INT_LIST)) return 0;
        if (t == SG_FAM_OPT_INT_LIST && f == SG_FAM_OPT_INT_LIST) return 0;
        return t == SG_FAM_INT ? 2 : -1; /* IntArrayRef's constructor from one int */
    case SG_FAM_DTYPE: return t == SG_FAM_DTYPE ? 0 : -1;
    case SG_FAM_OPT_DTYPE: return t == SG_FAM_OPT_DTYPE || none ? 0 : t == SG_FAM_DTYPE ? 1 : -1;
    case SG_FAM_LAYOUT: return t == SG_FAM_LAYOUT ? 0 : -1;
    case SG_FAM_OPT_LAYOUT: return t == SG_FAM_OPT_LAYOUT || none ? 0 : t == SG_FAM_LAYOUT ? 1 : -1;
    case SG_FAM_DEVICE: return t == SG_FAM_DEVICE ? 0 : -1;
    case SG_FAM_OPT_DEVICE: return t == SG_FAM_OPT_DEVICE || none ? 0 : t == SG_FAM_DEVICE ? 1 : -1;
    case SG_FAM_MEMORY_FORMAT: return t == SG_FAM_MEMORY_FORMAT ? 0 : -1;
    case SG_FAM_OPT_MEMORY_FORMAT:
        return t == SG_FAM_OPT_MEMORY_FORMAT || none ? 0 : t == SG_FAM_MEMORY_FORMAT ? 1 : -1;
    case SG_FAM_STR: return t == SG_FAM_STR ? 0 : -1;
    case SG_FAM_OPT_STR: return t == SG_FAM_OPT_STR || t == SG_FAM_STR || none ? 0 : -1;
    case SG_FAM_BOOL_LIST: return t == SG_FAM_BOOL_LIST ? 0 : -1;
    case SG_FAM_GENERATOR: return none || t == SG_FAM_GENERATOR ? 0 : -1;
    default: return t == f ? 0 : -1;
    }
}

/* Whether params [p, p+4) of sc are dtype?, layout?, device?, pin_memory? (what a
 * TensorOptions argument stands for in C++'s API). */
static bool options_at(const sg_schema *sc, uint32_t p) {
    static const int fams[4] = {SG_FAM_OPT_DTYPE, SG_FAM_OPT_LAYOUT, SG_FAM_OPT_DEVICE,
                                SG_FAM_OPT_BOOL};
    if (p + 4 > sc->nargs) return false;
    for (int k = 0; k < 4; k++)
        if ((int)sg_type_family_of(sc->args[p + k].type) != fams[k]) return false;
    return true;
}

/* Whether params [p, p+3) of sc are int[], int[], int: the sizes, strides and storage offset a
 * TensorGeometry argument stands for (the helpers take them so: the schema language has no
 * geometry type). */
static bool geometry_at(const sg_schema *sc, uint32_t p) {
    static const int fams[3] = {SG_FAM_INT_LIST, SG_FAM_INT_LIST, SG_FAM_INT};
    if (p + 3 > sc->nargs) return false;
    for (int k = 0; k < 3; k++)
        if ((int)sg_type_family_of(sc->args[p + k].type) != fams[k]) return false;
    return true;
}

/* args (typed) against op's parameters: the total cost, or -1; the parameter each argument
 * lands on into slot[] (an OPTIONS or GEOMETRY argument: its first). */
static int match(const sg_op *op, sg_dtx *const *args, uint32_t nargs, uint32_t *slot) {
    const sg_schema *sc = &op->schema;
    uint32_t p = 0;
    int total = 0;
    for (uint32_t i = 0; i < nargs; i++, p++) {
        if (p >= sc->nargs) return -1;
        if (args[i]->type == SG_FT_OPTIONS) {
            if (!options_at(sc, p)) return -1;
            slot[i] = p;
            p += 3;
            continue;
        }
        if (args[i]->type == SG_FT_GEOMETRY) {
            if (!geometry_at(sc, p)) return -1;
            slot[i] = p;
            p += 2;
            continue;
        }
        int k = cost((int)sg_type_family_of(sc->args[p].type), args[i]);
        if (k < 0) return -1;
        slot[i] = p;
        total += k;
    }
    for (; p < sc->nargs; p++)
        if (!sc->args[p].default_value) return -1;
    return total;
}

/* A call of the ops named `name` on args (self first for a method); NULL where no op takes
 * them or two take them at one cost. */
static sg_dtx *call_op(tctx *c, const sg_fx *x, const char *name, sg_dtx **args, uint32_t nargs,
                       bool method) {
    size_t n = strlen(name);
    if (n > 7 && strcmp(name + n - 7, "_symint") == 0) n -= 7; /* sizes are ints here */
    const oplist *l = sg_strmap_get(&c->ops->by_name, name, n);
    if (!l) return fail(c, x, "no op or helper named '%.*s'", (int)n, name);
    const sg_op *best = NULL;
    int best_cost = -1;
    bool tie = false;
    uint32_t slot[64], best_slot[64];
    if (nargs > 64) return fail(c, x, "too many arguments");
    for (uint32_t i = 0; i < l->n; i++) {
        const sg_op *op = l->ops[i];
        if (method && !(op->variants & SG_VARIANT_METHOD) && strcmp(op->ns, "aten") == 0 &&
            op->has_variants)
            continue;
        if (method && op->schema.self_index != 0) continue;
        int k = match(op, args, nargs, slot);
        if (k < 0) continue;
        if (best && k == best_cost) tie = true;
        if (!best || k < best_cost) {
            best = op, best_cost = k, tie = false;
            memcpy(best_slot, slot, nargs * sizeof *slot);
        }
    }
    if (!best) {
        char types[160] = "";
        size_t at = 0;
        for (uint32_t i = 0; i < nargs && at < sizeof types; i++)
            at += (size_t)snprintf(types + at, sizeof types - at, "%s%s", i ? ", " : "",
                                   sg_dt_type_name(args[i]->type));
        return fail(c, x, "no overload of '%.*s' takes (%s)", (int)n, name, types);
    }
    if (tie) return fail(c, x, "the call of '%.*s' is ambiguous", (int)n, name);
    sg_dtx *d = node(c, SG_DT_OP, SG_FAM_TENSOR, x, best->schema.nargs);
    if (!d) return NULL;
    d->op = best;
    for (uint32_t i = 0; i < nargs; i++) d->kids[best_slot[i]] = args[i];
    const sg_schema *bs = &best->schema;
    d->type = bs->nrets == 1 ? (int)sg_type_family_of(bs->rets[0].type)
              : bs->nrets > 1 ? SG_FT_TUPLE : SG_FT_NONE;
    d->idx = bs->nrets;
    return d;
}

/* ---- expressions ---------------------------------------------------------------------------- */

static sg_dtx *expr(tctx *c, const sg_fx *x);

/* Tensor properties: x.sizes(), x.size(d), ... (the C emitter reads them off the saved value).
 * meta: PyTorch's codegen keeps it in a node in place of the tensor (self_sym_sizes, ...);
 * another (defined(), device(), ...) leaves the tensor in the formula, saved whole. */
static const struct {
    const char *name;
    int         nargs;
    int         type;
    bool        meta;
} props[] = {
    {"sizes", 0, SG_FAM_INT_LIST, true},     {"sym_sizes", 0, SG_FAM_INT_LIST, true},
    {"strides", 0, SG_FAM_INT_LIST, true},   {"sym_strides", 0, SG_FAM_INT_LIST, true},
    {"size", 1, SG_FAM_INT, true},           {"sym_size", 1, SG_FAM_INT, true},
    {"numel", 0, SG_FAM_INT, true},          {"sym_numel", 0, SG_FAM_INT, true},
    {"dim", 0, SG_FAM_INT, true},            {"scalar_type", 0, SG_FAM_DTYPE, true},
    {"options", 0, SG_FT_OPTIONS, true},     {"defined", 0, SG_FAM_BOOL, false},
    {"is_complex", 0, SG_FAM_BOOL, false},   {"is_floating_point", 0, SG_FAM_BOOL, false},
    {"layout", 0, SG_FAM_LAYOUT, true},      {"device", 0, SG_FAM_DEVICE, false},
    {"is_cpu", 0, SG_FAM_BOOL, false},       {"is_cuda", 0, SG_FAM_BOOL, false},
    {"is_xpu", 0, SG_FAM_BOOL, false},
    {"suggest_memory_format", 0, SG_FAM_MEMORY_FORMAT, false},
    {"sym_storage_offset", 0, SG_FAM_INT, false}, {"storage_offset", 0, SG_FAM_INT, false},
};

bool sg_dt_prop_is_meta(const char *name) {
    for (size_t k = 0; k < sizeof props / sizeof *props; k++)
        if (!strcmp(name, props[k].name)) return props[k].meta;
    return false;
}

static sg_dtx *method(tctx *c, const sg_fx *x) {
    const sg_fx *callee = x->kids[0];
    sg_dtx *obj = expr(c, callee->kids[0]);
    if (!obj) return NULL;
    const char *m = callee->text;
    uint32_t nargs = x->nkids - 1;
    bool tensor = obj->type == SG_FAM_TENSOR || obj->type == SG_FAM_OPT_TENSOR;
    if (tensor)
        for (size_t k = 0; k < sizeof props / sizeof *props; k++) {
            if (strcmp(m, props[k].name) != 0) continue;
            if ((int)nargs != props[k].nargs)
                return fail(c, x, "'%s' takes %d argument%s", m, props[k].nargs,
                            props[k].nargs == 1 ? "" : "s");
            sg_dtx *d = node(c, SG_DT_PROP, props[k].type, x, 1 + nargs);
            if (!d) return NULL;
            d->text = m;
            d->kids[0] = obj;
            if (nargs && !(d->kids[1] = expr(c, x->kids[1]))) return NULL;
            if (nargs && d->kids[1]->type != SG_FAM_INT)
                return fail(c, x->kids[1], "'%s' takes an int", m);
            return d;
        }
    /* x.device().is_cpu(): the tensor's own property (a device has no other methods here) */
    if (obj->what == SG_DT_PROP && strcmp(obj->text, "device") == 0 && !nargs &&
        (strcmp(m, "is_cpu") == 0 || strcmp(m, "is_cuda") == 0 || strcmp(m, "is_xpu") == 0)) {
        sg_dtx *d = node(c, SG_DT_PROP, SG_FAM_BOOL, x, 1);
        if (d) d->text = m, d->kids[0] = obj->kids[0];
        return d;
    }
    if (obj->type == SG_FAM_SCALAR && strcmp(m, "conj") == 0 && !nargs)
        return obj; /* real scalars: conj is the value itself (complex Scalars: not yet) */
    if (!tensor)
        return fail(c, callee, "'.%s()' on %s", m, sg_dt_type_name(obj->type));
    sg_dtx *args[65];
    if (nargs > 64) return fail(c, x, "too many arguments");
    args[0] = obj;
    for (uint32_t i = 0; i < nargs; i++)
        if (!(args[1 + i] = expr(c, x->kids[1 + i]))) return NULL;
    return call_op(c, x, m, args, nargs + 1, true);
}

/* C's math functions of a constant (sqrt(M_PI)): computed here, the value a float literal. */
static const struct {
    const char *name;
    double (*fn)(double);
} const_fns[] = {{"sqrt", sqrt}, {"exp", exp}, {"log", log}};

static sg_dtx *const_fn(tctx *c, const sg_fx *x, size_t k, const sg_dtx *arg) {
    const char *named = sg_dt_const_c(arg->text);
    double v = const_fns[k].fn(strtod(named ? named : arg->text, NULL));
    if (!isfinite(v)) return fail(c, x, "%s of %s is not a finite number", const_fns[k].name,
                                  arg->text);
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    sg_dtx *d = node(c, SG_DT_CONST, SG_FAM_FLOAT, x, 0);
    if (d && !(d->text = sg_arena_strndup(c->a, buf, strlen(buf))))
        return fail(c, x, "out of memory");
    return d;
}

/* to_args_sizes(l), to_args_scalartypes(l) of a Tensor[] input l: the elements' sizes and
 * dtypes, as int lists (kernels/autograd/helpers_list.c says how they are laid out), which the
 * node keeps in place of the tensors. */
static sg_dtx *list_facts(tctx *c, const sg_fx *x, const char *name) {
    if (x->nkids != 2) return fail(c, x, "'%s' takes one argument", name);
    sg_dtx *l = expr(c, x->kids[1]);
    if (!l) return NULL;
    if (l->what != SG_DT_INPUT || l->type != SG_FAM_TENSOR_LIST)
        return fail(c, x->kids[1], "'%s' of something other than a Tensor[] input", name);
    sg_dtx *d = node(c, SG_DT_PROP, SG_FAM_INT_LIST, x, 1);
    if (!d) return NULL;
    d->text = strstr(name, "sizes") ? "to_args_sizes" : "to_args_scalartypes";
    d->kids[0] = l;
    return d;
}

/* zeros_like(x) of an input x: zeros(x.sym_sizes(), x.options()), as PyTorch's codegen reads
 * it (load_derivatives.py keeps x_info, x's sizes and options, and calls its zeros()), so the
 * node keeps x's metadata rather than x. Where the schemas have no zeros, zeros_like stays. */
static sg_dtx *zeros_of_input(tctx *c, const sg_fx *x, sg_dtx *in) {
    sg_dtx *args[2] = {node(c, SG_DT_PROP, SG_FAM_INT_LIST, x, 1), NULL};
    if (!args[0] || !(args[1] = node(c, SG_DT_PROP, SG_FT_OPTIONS, x, 1))) return NULL;
    args[0]->text = "sym_sizes", args[0]->kids[0] = in;
    args[1]->text = "options", args[1]->kids[0] = in;
    return call_op(c, x, "zeros", args, 2, false);
}

static sg_dtx *call(tctx *c, const sg_fx *x) {
    const sg_fx *callee = x->kids[0];
    if (callee->kind == SG_FX_MEMBER) {
        if (callee->arrow) return fail(c, callee, "'->' (a pointer's member)");
        return method(c, x);
    }
    if (callee->kind == SG_FX_TEMPLATE) {
        /* std::tuple<Tensor, ...>(): undefined tensors */
        if (strcmp(bare(callee->text), "tuple") == 0 && x->nkids == 1) {
            sg_dtx *d = node(c, SG_DT_UNDEFINED, SG_FT_TUPLE, x, 0);
            if (d) d->idx = callee->nkids;
            return d;
        }
        return fail(c, callee, "the template '%s'", callee->text);
    }
    const char *name = bare(callee->text);
    uint32_t nargs = x->nkids - 1;
    if (strcmp(name, "Tensor") == 0 && !nargs) {
        sg_dtx *d = node(c, SG_DT_UNDEFINED, SG_FAM_TENSOR, x, 0);
        if (d) d->idx = 1;
        return d;
    }
    if (strcmp(name, "GradMode::is_enabled") == 0 && !nargs) {
        /* backward runs with grad mode off (no double backward) */
        sg_dtx *d = node(c, SG_DT_CONST, SG_FAM_BOOL, x, 0);
        if (d) d->text = "false";
        return d;
    }
    if (strcmp(name, "TensorGeometry") == 0 && nargs == 1) {
        sg_dtx *d = node(c, SG_DT_GEOMETRY, SG_FT_GEOMETRY, x, 1);
        if (d && (d->kids[0] = expr(c, x->kids[1])) == NULL) return NULL;
        if (d && d->kids[0]->type != SG_FAM_TENSOR)
            return fail(c, x->kids[1], "TensorGeometry takes a Tensor, not %s",
                        sg_dt_type_name(d->kids[0]->type));
        return d;
    }
    if (strcmp(name, "to_args_sizes") == 0 || strcmp(name, "to_args_sizes_symint") == 0 ||
        strcmp(name, "to_args_scalartypes") == 0)
        return list_facts(c, x, name);
    if (strcmp(name, "not_implemented") == 0)
        return fail(c, x, "not implemented in PyTorch either (not_implemented)");
    sg_dtx *args[64];
    if (nargs > 64) return fail(c, x, "too many arguments");
    for (uint32_t i = 0; i < nargs; i++)
        if (!(args[i] = expr(c, x->kids[1 + i]))) return NULL;
    if (nargs == 1 && strcmp(name, "zeros_like") == 0 && args[0]->what == SG_DT_INPUT &&
        args[0]->type == SG_FAM_TENSOR && sg_strmap_get(&c->ops->by_name, "zeros", 5))
        return zeros_of_input(c, x, args[0]);
    if (nargs == 1 && args[0]->what == SG_DT_CONST &&
        (args[0]->type == SG_FAM_FLOAT || args[0]->type == SG_FAM_INT))
        for (size_t k = 0; k < sizeof const_fns / sizeof *const_fns; k++)
            if (strcmp(name, const_fns[k].name) == 0) return const_fn(c, x, k, args[0]);
    return call_op(c, x, name, args, nargs, false);
}

static bool is_tensor(const sg_dtx *d) {
    return d->type == SG_FAM_TENSOR || d->type == SG_FAM_OPT_TENSOR;
}

static bool is_number(const sg_dtx *d) {
    return d->type == SG_FAM_INT || d->type == SG_FAM_FLOAT || d->type == SG_FAM_SCALAR ||
           d->type == SG_FAM_BOOL;
}

/* Tensor operators: the aten op each stands for (C++'s operator overloads of Tensor). */
static const struct {
    const char *op, *name;
    bool        commutes; /* scalar op tensor is tensor op scalar */
} tensor_ops[] = {
    {"*", "mul", true}, {"+", "add", true}, {"-", "sub", false}, {"/", "div", false},
    {">=", "ge", false}, {">", "gt", false}, {"<=", "le", false}, {"<", "lt", false},
    {"==", "eq", true}, {"!=", "ne", true}, {"&&", "logical_and", true},
    {"||", "logical_or", true},
};

static sg_dtx *binary(tctx *c, const sg_fx *x) {
    sg_dtx *l = expr(c, x->kids[0]), *r = l ? expr(c, x->kids[1]) : NULL;
    if (!r) return NULL;
    const char *op = x->text;
    if (is_tensor(l) || is_tensor(r)) {
        for (size_t k = 0; k < sizeof tensor_ops / sizeof *tensor_ops; k++) {
            if (strcmp(op, tensor_ops[k].op) != 0) continue;
            sg_dtx *args[2] = {l, r};
            if (!is_tensor(l)) {
                if (!is_number(l)) break;
                if (tensor_ops[k].commutes) {
                    args[0] = r, args[1] = l;
                } else if (strcmp(op, "-") == 0) { /* s - t: rsub(t, s) */
                    args[0] = r, args[1] = l;
                    return call_op(c, x, "rsub", args, 2, false);
                } else if (strcmp(op, "/") == 0) { /* s / t: reciprocal(t) * s */
                    sg_dtx *rec = call_op(c, x, "reciprocal", &r, 1, false);
                    if (!rec) return NULL;
                    args[0] = rec, args[1] = l;
                    return call_op(c, x, "mul", args, 2, false);
                } else {
                    break;
                }
            }
            return call_op(c, x, tensor_ops[k].name, args, 2, false);
        }
        return fail(c, x, "'%s' between %s and %s", op, sg_dt_type_name(l->type),
                    sg_dt_type_name(r->type));
    }
    bool ints = (l->type == SG_FAM_INT || l->type == SG_FAM_BOOL) &&
                (r->type == SG_FAM_INT || r->type == SG_FAM_BOOL);
    bool nums = is_number(l) && is_number(r);
    static const char *const cmp[] = {"==", "!=", "<", "<=", ">", ">=", "&&", "||"};
    static const char *const arith[] = {"+", "-", "*", "/", "%"};
    for (size_t k = 0; k < sizeof cmp / sizeof *cmp; k++)
        if (strcmp(op, cmp[k]) == 0 && (nums || l->type == r->type)) {
            sg_dtx *d = node(c, SG_DT_CBIN, SG_FAM_BOOL, x, 2);
            if (d) d->text = op, d->kids[0] = l, d->kids[1] = r;
            return d;
        }
    for (size_t k = 0; k < sizeof arith / sizeof *arith; k++)
        if (strcmp(op, arith[k]) == 0 && nums && (ints || strcmp(op, "%") != 0)) {
            int t = ints ? SG_FAM_INT
                    : l->type == SG_FAM_SCALAR || r->type == SG_FAM_SCALAR ? SG_FAM_SCALAR
                                                                           : SG_FAM_FLOAT;
            sg_dtx *d = node(c, SG_DT_CBIN, t, x, 2);
            if (d) d->text = op, d->kids[0] = l, d->kids[1] = r;
            return d;
        }
    return fail(c, x, "'%s' between %s and %s", op, sg_dt_type_name(l->type),
                sg_dt_type_name(r->type));
}

static sg_dtx *unary(tctx *c, const sg_fx *x) {
    sg_dtx *v = expr(c, x->kids[0]);
    if (!v) return NULL;
    if (strcmp(x->text, "-") == 0 && is_tensor(v)) return call_op(c, x, "neg", &v, 1, false);
    if (strcmp(x->text, "+") == 0) return v;
    bool ok = strcmp(x->text, "!") == 0 ? v->type == SG_FAM_BOOL
              : strcmp(x->text, "-") == 0 ? is_number(v) : false;
    if (!ok) return fail(c, x, "'%s' on %s", x->text, sg_dt_type_name(v->type));
    sg_dtx *d = node(c, SG_DT_CUNARY, v->type, x, 1);
    if (d) d->text = x->text, d->kids[0] = v;
    return d;
}

static sg_dtx *ternary(tctx *c, const sg_fx *x) {
    sg_dtx *k = expr(c, x->kids[0]);
    sg_dtx *a = k ? expr(c, x->kids[1]) : NULL, *b = a ? expr(c, x->kids[2]) : NULL;
    if (!b) return NULL;
    if (k->type != SG_FAM_BOOL) return fail(c, x->kids[0], "a condition that is %s",
                                            sg_dt_type_name(k->type));
    int t = a->type;
    if (a->what == SG_DT_UNDEFINED) t = b->type;
    else if (b->what != SG_DT_UNDEFINED && b->type != a->type &&
             !(is_tensor(a) && is_tensor(b)) && !(is_number(a) && is_number(b)))
        return fail(c, x, "branches of %s and %s", sg_dt_type_name(a->type),
                    sg_dt_type_name(b->type));
    sg_dtx *d = node(c, SG_DT_TERNARY, t, x, 3);
    if (d) d->kids[0] = k, d->kids[1] = a, d->kids[2] = b;
    return d;
}

static sg_dtx *index_of(tctx *c, const sg_fx *x) {
    const sg_fx *o = x->kids[0];
    sg_dtx *i = expr(c, x->kids[1]);
    if (!i) return NULL;
    if (i->type != SG_FAM_INT) return fail(c, x->kids[1], "an index that is %s",
                                           sg_dt_type_name(i->type));
    if (o->kind == SG_FX_IDENT && strcmp(o->text, "grads") == 0) {
        if (i->what != SG_DT_CONST || x->kids[1]->kind != SG_FX_INT)
            return fail(c, x->kids[1], "grads[i] needs a literal index");
        long v = strtol(x->kids[1]->text, NULL, 0);
        if (v < 0 || (uint32_t)v >= c->sc->nrets)
            return fail(c, x->kids[1], "grads[%ld]: the op has %u results", v, c->sc->nrets);
        sg_dtx *d = node(c, SG_DT_GRAD, SG_FAM_TENSOR, x, 0);
        if (d) d->idx = (uint32_t)v;
        return d;
    }
    sg_dtx *obj = expr(c, o);
    if (!obj) return NULL;
    int t = obj->type == SG_FAM_INT_LIST ? SG_FAM_INT
            : obj->type == SG_FAM_BOOL_LIST ? SG_FAM_BOOL
            : obj->type == SG_FAM_TENSOR_LIST ? SG_FAM_TENSOR : -1;
    if (t < 0) return fail(c, x, "'[]' on %s", sg_dt_type_name(obj->type));
    sg_dtx *d = node(c, SG_DT_INDEX, t, x, 2);
    if (d) d->kids[0] = obj, d->kids[1] = i;
    return d;
}

static sg_dtx *brace(tctx *c, const sg_fx *x) {
    sg_dtx *d = node(c, SG_DT_LIST, SG_FAM_INT_LIST, x, x->nkids);
    if (!d) return NULL;
    for (uint32_t i = 0; i < x->nkids; i++) {
        if (!(d->kids[i] = expr(c, x->kids[i]))) return NULL;
        if (d->kids[i]->type != SG_FAM_INT)
            return fail(c, x->kids[i], "a list item that is %s", sg_dt_type_name(d->kids[i]->type));
    }
    return d;
}

static sg_dtx *expr(tctx *c, const sg_fx *x) {
    if (c->failed) return NULL;
    sg_dtx *d;
    switch (x->kind) {
    case SG_FX_IDENT: return ident(c, x);
    case SG_FX_INT:
    case SG_FX_FLOAT:
    case SG_FX_STRING:
        d = node(c, SG_DT_CONST, x->kind == SG_FX_INT     ? SG_FAM_INT
                                 : x->kind == SG_FX_FLOAT ? SG_FAM_FLOAT
                                                          : SG_FAM_STR, x, 0);
        if (d) d->text = x->text;
        return d;
    case SG_FX_CALL:
        if (x->braced) return fail(c, x, "a braced initialiser of '%s'", x->kids[0]->text);
        return call(c, x);
    case SG_FX_MEMBER: return fail(c, x, "the member '%s' (not a call)", x->text);
    case SG_FX_INDEX: return index_of(c, x);
    case SG_FX_UNARY: return unary(c, x);
    case SG_FX_BINARY: return binary(c, x);
    case SG_FX_TERNARY: return ternary(c, x);
    case SG_FX_BRACE: return brace(c, x);
    case SG_FX_TEMPLATE: return fail(c, x, "the template '%s'", x->text);
    }
    return fail(c, x, "an expression of an unknown kind");
}

bool sg_dt_formula(sg_arena *a, const sg_dt_ops *ops, const sg_deriv *dv,
                   const sg_deriv_formula *f, const sg_fx *tree, sg_dtx **out, sg_fx_error *err) {
    tctx c = {a, ops, dv, &dv->op->schema, err, false};
    err->off = 0, err->msg[0] = '\0';
    sg_dtx *d = expr(&c, tree);
    *out = d;
    if (!d) return false;
    bool tuple = f->nnames > 1;
    int  arg = f->nnames == 1 ? sg_deriv_arg_index(c.sc, f->names[0]) : -1;
    bool list = arg >= 0 && sg_type_family_of(c.sc->args[arg].type) == SG_FAM_TENSOR_LIST;
    if (tuple ? d->type != SG_FT_TUPLE && d->what != SG_DT_UNDEFINED
        : list ? d->type != SG_FAM_TENSOR_LIST
               : !is_tensor(d) && d->what != SG_DT_UNDEFINED) {
        fail(&c, tree, "the formula gives %s, not %s", sg_dt_type_name(d->type),
             tuple ? "a tuple of Tensors" : list ? "a Tensor[]" : "a Tensor");
        *out = NULL;
        return false;
    }
    return true;
}

/* ---- every formula of a set ----------------------------------------------------------------- */

int sg_deriv_resolve(sg_deriv_set *s, const sg_model *m) {
    sg_dt_ops ops;
    if (sg_dt_ops_init(&ops, s->a, m)) return -1;
    int ok = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        sg_deriv *dv = &s->items[i];
        for (uint32_t j = 0; j < dv->ngrads; j++) {
            sg_deriv_formula *f = &dv->grads[j];
            sg_fx_error e;
            const sg_fx *t = sg_fx_parse(s->a, f->text, strlen(f->text), &e);
            sg_dtx *d = NULL;
            if (t && sg_dt_formula(s->a, &ops, dv, f, t, &d, &e)) {
                f->tree = t, f->typed = d, ok++;
                continue;
            }
            if (strcmp(e.msg, "out of memory") == 0) return -1;
            f->tree = t;
            f->why = sg_arena_strndup(s->a, e.msg, strlen(e.msg));
            f->why_off = e.off;
            if (!f->why) return -1;
        }
    }
    return ok;
}

/* ---- printing ------------------------------------------------------------------------------- */

void sg_dt_print(sg_buf *b, const sg_dtx *d, const sg_deriv *dv) {
    const sg_schema *sc = &dv->op->schema;
    if (!d) {
        sg_buf_putc(b, '_');
        return;
    }
    switch (d->what) {
    case SG_DT_GRAD:
        if (d->idx == UINT32_MAX) sg_buf_puts(b, "grads");
        else sg_buf_printf(b, "grads[%u]", d->idx);
        return;
    case SG_DT_INPUT: sg_buf_puts(b, sc->args[d->idx].name); return;
    case SG_DT_RESULT: sg_buf_printf(b, "result%u", d->idx); return;
    case SG_DT_MASK: sg_buf_puts(b, "grad_input_mask"); return;
    case SG_DT_CONST: sg_buf_puts(b, d->text); return;
    case SG_DT_UNDEFINED: sg_buf_printf(b, "undefined%s", d->idx > 1 ? "s" : ""); return;
    case SG_DT_OP:
        sg_buf_printf(b, "%s::%s%s%s(", d->op->ns, d->op->schema.name,
                      *d->op->schema.overload ? "." : "", d->op->schema.overload);
        for (uint32_t i = 0; i < d->nkids; i++) {
            if (i) sg_buf_puts(b, ", ");
            sg_dt_print(b, d->kids[i], dv);
        }
        sg_buf_putc(b, ')');
        return;
    case SG_DT_PROP:
        if (!strncmp(d->text, "to_args_", 8)) { /* a function of a Tensor[], as written */
            sg_buf_printf(b, "%s(", d->text);
            sg_dt_print(b, d->kids[0], dv);
            sg_buf_putc(b, ')');
            return;
        }
        sg_dt_print(b, d->kids[0], dv);
        sg_buf_printf(b, ".%s(", d->text);
        if (d->nkids > 1) sg_dt_print(b, d->kids[1], dv);
        sg_buf_putc(b, ')');
        return;
    case SG_DT_CBIN:
        sg_buf_putc(b, '(');
        sg_dt_print(b, d->kids[0], dv);
        sg_buf_printf(b, " %s ", d->text);
        sg_dt_print(b, d->kids[1], dv);
        sg_buf_putc(b, ')');
        return;
    case SG_DT_CUNARY:
        sg_buf_puts(b, d->text);
        sg_dt_print(b, d->kids[0], dv);
        return;
    case SG_DT_TERNARY:
        sg_buf_putc(b, '(');
        for (int i = 0; i < 3; i++) {
            if (i) sg_buf_puts(b, i == 1 ? " ? " : " : ");
            sg_dt_print(b, d->kids[i], dv);
        }
        sg_buf_putc(b, ')');
        return;
    case SG_DT_LIST:
    case SG_DT_GEOMETRY:
        sg_buf_puts(b, d->what == SG_DT_LIST ? "{" : "TensorGeometry(");
        for (uint32_t i = 0; i < d->nkids; i++) {
            if (i) sg_buf_puts(b, ", ");
            sg_dt_print(b, d->kids[i], dv);
        }
        sg_buf_putc(b, d->what == SG_DT_LIST ? '}' : ')');
        return;
    case SG_DT_INDEX:
        sg_dt_print(b, d->kids[0], dv);
        sg_buf_putc(b, '[');
        sg_dt_print(b, d->kids[1], dv);
        sg_buf_putc(b, ']');
        return;
    }
}
