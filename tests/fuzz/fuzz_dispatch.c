/* libFuzzer target: the dispatcher under random schemas, registrations and boxed calls.
 *
 * Each input is read as a little program: it defines an op from a schema string (built from the
 * type-family table, gen/schema/sg_type_table.h, with optionals, lists, alias annotations,
 * defaults and kwarg markers; or plain garbage), registers kernels for it (boxed, typed through
 * a tiny adapter, fallthroughs, fallbacks, overrides, at real keys and at numbers that are no
 * keys), and calls it boxed with random arguments: the right ones, wrong tags, wrong counts,
 * NULL tensors, NULL lists of nonzero length, enums out of range, tensors of any dtype on the
 * CPU, Meta and a CUDA device (never touched). Then it releases some registrations.
 *
 * What must hold: nothing crashes, leaks or trips ASan/UBSan; every refusal leaves a non-empty
 * message; a kernel that runs sees arguments its schema allows (the count, each tag within its
 * family's, non-NULL tensors and item pointers, enums in range), else the target aborts.
 * sg_runtime_shutdown runs every so often to bound memory. Build with -DSG_FUZZ=ON (clang); see
 * docs/testing.md. */
#include "sg_api.h"
#include "sg_runtime.h"
#include "sg_schema.h"
#include "sg_type_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* ---- reading the input -------------------------------------------------------------------- */

typedef struct in {
    const unsigned char *p;
    size_t               n;
} in;

static unsigned byte(in *r) {
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}
static unsigned pick(in *r, unsigned n) { return n ? byte(r) % n : 0; }

/* ---- the type-family table, as (family, kind, shape) spellings ----------------------------- */

typedef struct spelling {
    sg_type_kind kind;
    int          shape;
} spelling;

#define SG_TAG(x)
#define SG_SPELL(k, s) {SG_TY_##k, SG_SHAPE_##s},
#define SPELLS(id, name, letter, ret_letter, param, result, tags, spells) spells
static const spelling spellings[] = {SG_TYPE_FAMILIES(SPELLS)};
#undef SPELLS
#undef SG_SPELL
#undef SG_TAG
enum { NSPELL = sizeof spellings / sizeof spellings[0] };

/* Types no row spells (family Any), and some that do not parse. */
static const char *const odd_types[] = {"Tensor[][]", "Any", "t", "Dict(str, Tensor)",
                                        "(int, int)", "int[-1]", "Tensor??", "Future(Tensor)",
                                        "Scalar[2]", "bool[3]", "SymInt[4]?", "Tensor(a!)[]"};

/* The tags a family's boxed value may carry (the table's column; none listed: any). */
static const uint32_t family_tags[SG_FAM__COUNT] = {
#define SG_TAG(x) | (1u << SG_ANY_##x)
#define SG_FAM_TAGS(id, name, letter, ret_letter, param, result, tags, spells) \
    [SG_FAM_##id] = 0 tags,
    SG_TYPE_FAMILIES(SG_FAM_TAGS)
#undef SG_FAM_TAGS
#undef SG_TAG
};

static const char *const shape_fmt[SG_SHAPE__COUNT] = {"%s", "%s?", "%s[]", "%s?[]", "%s[]?",
                                                       "%s?[]?"};

/* ---- what the kernel checks -------------------------------------------------------------- */

enum { MAX_ARGS = 8, MAX_RETS = 3 };

typedef struct expect {
    int      nargs;        /* -1: the schema was not built here (garbage): only shape checks */
    uint32_t tags[MAX_ARGS];
} expect;

static expect cur; /* the op being fuzzed */
static const sg_op *cur_op;
static int kernel_runs;

static void touch_tensor(const sg_tensor *t) {
    if (!t) abort();
    volatile int64_t s = t->ndim + t->dtype + (int64_t)t->keys;
    for (int32_t d = 0; d < t->ndim; d++) s += t->sizes[d] + t->strides[d];
    (void)s;
}

/* Reads every byte a kernel could follow from v, so ASan sees a bad pointer here. */
static void touch(const sg_any *v, int depth) {
    volatile int64_t s = 0;
    unsigned char    c;
    if ((uint32_t)v->tag >= SG_ANY__COUNT) abort();
    switch (v->tag) {
    case SG_ANY_TENSOR: touch_tensor(v->u.t); break;
    case SG_ANY_BOOL:
        memcpy(&c, &v->u, 1);
        if (c > 1) abort();
        break;
    case SG_ANY_COMPLEX: s += (int64_t)v->u.c->re; break;
    case SG_ANY_STR:
        if (!v->u.s || v->len < 0) abort();
        for (int32_t i = 0; i < v->len; i++) s += v->u.s[i];
        break;
    case SG_ANY_DTYPE:
        if (!sg_dtype_valid((int)v->u.i) || v->u.i < 0 || v->u.i >= SG_DTYPE__END) abort();
        break;
    case SG_ANY_LAYOUT:
        if (v->u.i < 0 || v->u.i > SG_JAGGED) abort();
        break;
    case SG_ANY_MEMORY_FORMAT:
        if (v->u.i < 0 || v->u.i > SG_CHANNELS_LAST_3D) abort();
        break;
    case SG_ANY_DEVICE:
        if (v->u.dev.type < 0 || v->u.dev.type >= SG_DEV__COUNT) abort();
        break;
    case SG_ANY_INT_LIST:
        if (v->len < 0) abort();
        for (int32_t i = 0; i < v->len; i++) s += v->u.ints[i];
        break;
    case SG_ANY_FLOAT_LIST:
        if (v->len < 0) abort();
        for (int32_t i = 0; i < v->len; i++) s += (int64_t)v->u.floats[i];
        break;
    case SG_ANY_BOOL_LIST:
        if (v->len < 0) abort();
        for (int32_t i = 0; i < v->len; i++) {
            memcpy(&c, &v->u.bools[i], 1);
            if (c > 1) abort();
        }
        break;
    case SG_ANY_TENSOR_LIST:
    case SG_ANY_OPT_TENSOR_LIST:
        if (v->len < 0) abort();
        for (int32_t i = 0; i < v->len; i++) {
            if (v->u.tensors[i]) touch_tensor(v->u.tensors[i]);
            else if (v->tag == SG_ANY_TENSOR_LIST) abort();
        }
        break;
    case SG_ANY_LIST:
        if (v->len < 0 || depth > 8) abort();
        for (int32_t i = 0; i < v->len; i++) touch(&v->u.items[i], depth + 1);
        break;
    default: break;
    }
    (void)s;
}

/* The boxed kernel every registration uses: checks what it was given, returns a tensor of its
 * arguments (retained) or None in each result slot. */
static sg_status check_kernel(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                              int32_t nrets, void *ctx) {
    int32_t nargs = sg_op_nargs(op);
    (void)ctx, (void)ks;
    kernel_runs++;
    if (op != cur_op) abort();
    if (nrets < sg_op_nrets(op)) abort();
    if (nargs > 0 && !args) abort();
    if (nrets > 0 && !rets) abort();
    sg_tensor *first = NULL;
    for (int32_t i = 0; i < nargs; i++) {
        touch(&args[i], 0); /* (the tag first: a shift by it follows) */
        if (cur.nargs == nargs && i < MAX_ARGS && !(cur.tags[i] >> args[i].tag & 1)) abort();
        if (!first && args[i].tag == SG_ANY_TENSOR) first = args[i].u.t;
    }
    for (int32_t i = 0; i < nrets; i++) {
        if (rets[i].tag != SG_ANY_NONE) abort(); /* zeroed by the caller */
        if (first && i == 0) rets[i] = sg_any_tensor(sg_tensor_retain(first));
    }
    return SG_OK;
}

/* A typed kernel of a made-up C type, and the adapter that finds it through its ctx: the way a
 * generated adapter reaches the typed kernel it adapts. */
typedef sg_status (*typed_fn)(sg_keyset ks, const sg_any *args, int32_t nargs, sg_any *rets,
                              int32_t nrets);
static sg_status typed_kernel(sg_keyset ks, const sg_any *args, int32_t nargs, sg_any *rets,
                              int32_t nrets) {
    (void)nargs;
    return check_kernel(cur_op, ks, args, rets, nrets, NULL);
}
static sg_status adapter(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                         int32_t nrets, void *ctx) {
    int32_t nargs = sg_op_nargs(op);
    if (op != cur_op || !ctx) abort();
    typed_fn fn = (typed_fn) * (const sg_fn *)ctx;
    if (fn != typed_kernel) abort();
    return fn(ks, args, nargs, rets, nrets);
}

/* A kernel that redispatches below the key it runs at, as an autograd kernel does. That key is
 * the highest of ks whose entry is no fallthrough (ctx: the key registered, an alias maybe). */
static sg_status redispatch_kernel(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                                   int32_t nrets, void *ctx) {
    (void)ctx;
    sg_key k = sg_keyset_highest(ks);
    while (k > SG_KEY_UNDEFINED && (!(ks >> k & 1) || sg_op_entry(op, k).kind == SG_ENTRY_FALLTHROUGH))
        k--;
    if (k == SG_KEY_UNDEFINED) return sg_error(SG_EINVAL, "fuzz: nothing to redispatch to");
    sg_status st = sg_op_redispatch_boxed(op, sg_keyset_below(ks, k), args, rets, nrets);
    if (st == SG_ENOKERNEL) st = sg_op_error_via(st, op, op);
    return st;
}

static bool pred(void *ctx, const sg_op *op, sg_keyset ks, const sg_any *args, int32_t nargs) {
    (void)op, (void)ks, (void)args;
    return ((uintptr_t)ctx + (uintptr_t)nargs) & 1;
}

/* ---- building a schema ------------------------------------------------------------------- */

typedef struct sbuf {
    char   s[1024];
    size_t n;
} sbuf;

static void put(sbuf *b, const char *fmt, const char *arg) {
    if (b->n >= sizeof b->s) return;
    int w = snprintf(b->s + b->n, sizeof b->s - b->n, fmt, arg);
    if (w > 0) b->n += (size_t)w;
    if (b->n >= sizeof b->s) b->n = sizeof b->s - 1;
}

static const char *const defaults[] = {"=None", "=1", "=-3", "=[1, 2]", "=[]", "=True",
                                       "=1.5", "=\"s\"", "=contiguous_format", "=long",
                                       "=[0.5]", "=\"cpu\"", "=(", "=strided"};
static const char *const annotations[] = {"(a)", "(a!)", "(b!)", "(a -> *)", "(*)", "!",
                                          "(a|b)"};
static const char *const names[] = {"fz::f", "fz::g", "fz::f.x", "fz::f.out", "aten::add",
                                    "add.Tensor", "fz::h.y"};
static const char *const returns[] = {"()", "Tensor", "Tensor(a!)", "(Tensor, Tensor)",
                                      "Tensor[]", "int", "float", "bool", "Scalar",
                                      "ScalarType", "(Tensor a, int b)", "Tensor(a)",
                                      "(Tensor, Tensor, Tensor)", "t", "str"};

static unsigned fresh_names;

/* Builds a schema into b and what its kernel may see into e. */
static void build_schema(in *r, sbuf *b, expect *e) {
    b->n = 0;
    b->s[0] = '\0';
    e->nargs = -1;
    if (pick(r, 8) == 7) { /* garbage */
        unsigned n = pick(r, 120);
        for (unsigned i = 0; i < n && b->n + 1 < sizeof b->s; i++) b->s[b->n++] = (char)byte(r);
        b->s[b->n] = '\0';
        return;
    }
    /* mostly a fresh name (one defined already under another schema is refused: EEXISTS) */
    unsigned which = pick(r, 16);
    if (which < sizeof names / sizeof names[0]) {
        put(b, "%s", names[which]);
    } else {
        char fresh[32];
        snprintf(fresh, sizeof fresh, "fz::op%u", ++fresh_names);
        put(b, "%s", fresh);
    }
    put(b, "%s", "(");
    int nargs = (int)pick(r, MAX_ARGS + 1), kw = (int)pick(r, MAX_ARGS + 2);
    for (int i = 0; i < nargs; i++) {
        if (i) put(b, "%s", ", ");
        if (i == kw) put(b, "%s", "*, ");
        const spelling *sp = &spellings[pick(r, NSPELL)];
        const char     *base = sg_type_infos[sp->kind].name;
        char            ty[96];
        snprintf(ty, sizeof ty, shape_fmt[sp->shape], base ? base : "Any");
        if (sp->kind == SG_TY_INT && sp->shape == SG_SHAPE_LIST && pick(r, 3) == 2)
            snprintf(ty, sizeof ty, "int[%u]", 1 + pick(r, 3));
        if (pick(r, 12) == 11)
            snprintf(ty, sizeof ty, "%s", odd_types[pick(r, sizeof odd_types / sizeof odd_types[0])]);
        put(b, "%s", ty);
        if (pick(r, 6) == 5)
            put(b, "%s", annotations[pick(r, sizeof annotations / sizeof annotations[0])]);
        char nm[16];
        snprintf(nm, sizeof nm, " a%d", i);
        put(b, "%s", nm);
        if (pick(r, 5) == 4) put(b, "%s", defaults[pick(r, sizeof defaults / sizeof defaults[0])]);
    }
    put(b, "%s", ") -> ");
    put(b, "%s", returns[pick(r, sizeof returns / sizeof returns[0])]);
}

/* What op's arguments may carry, from its canonical schema text (sg_op_schema): parsed again
 * here and walked with the table's families, independently of the runtime's own tables. */
static void expect_of(const sg_op *op, expect *e) {
    sg_arena       *a = sg_arena_new(NULL, NULL);
    sg_schema       s;
    sg_schema_error err;
    const char     *text = sg_op_schema(op);
    e->nargs = -1;
    if (a && sg_schema_parse(text, strlen(text), a, &s, &err) == SG_SCHEMA_OK &&
        s.nargs <= MAX_ARGS) {
        e->nargs = (int)s.nargs;
        for (uint32_t i = 0; i < s.nargs; i++) {
            const sg_type *t = s.args[i].type;
            int            f = sg_type_family_of(t);
            uint32_t       tags = family_tags[f] ? family_tags[f] : (1u << SG_ANY__COUNT) - 1;
            const sg_type *u = t->kind == SG_TY_OPTIONAL ? t->elems[0] : t;
            if (t->kind == SG_TY_OPTIONAL) tags |= 1u << SG_ANY_NONE;
            if ((f == SG_FAM_INT_LIST || f == SG_FAM_OPT_INT_LIST) && u->size > 0)
                tags |= 1u << SG_ANY_INT;
            e->tags[i] = tags;
        }
    }
    if (a) sg_arena_free(a);
}

/* ---- boxed values ------------------------------------------------------------------------ */

enum { NTENSORS = 5 };

typedef struct pool {
    sg_tensor *t[NTENSORS];
    int64_t    ints[4];
    double     floats[3];
    bool       bools[3];
    unsigned char badbools[2];
    sg_tensor *list[4];
    sg_any     items[3];
    sg_complex c;
} pool;

static void make_tensors(in *r, pool *p) {
    static float cuda_blob[4];
    for (int i = 0; i < NTENSORS; i++) {
        int64_t   sizes[3] = {(int64_t)pick(r, 4), (int64_t)pick(r, 3), 2};
        int32_t   ndim = (int32_t)pick(r, 4);
        int       dt = (int)pick(r, 18);
        if (pick(r, 8) && !sg_dtype_valid(dt)) dt = SG_FLOAT32; /* else some are no dtype */
        unsigned  where = pick(r, 4);
        sg_status st;
        p->t[i] = NULL;
        if (where == 3) {
            int64_t n[1] = {4};
            st = sg_tensor_from_blob(cuda_blob, n, NULL, 1, SG_FLOAT32, SG_CUDA(0), 0, NULL, NULL,
                                     &p->t[i]);
        } else {
            st = sg_tensor_empty(sizes, ndim, (sg_dtype)dt, where == 2 ? SG_META : SG_CPU,
                                 &p->t[i]);
        }
        if (st && !sg_last_error()[0]) abort();
    }
}

/* A value of the tags `want` allows (or, now and then, any other). */
static sg_any value(in *r, pool *p, uint32_t want, bool wrong) {
    int tag;
    if (wrong || !want) {
        tag = (int)pick(r, SG_ANY__COUNT + 2); /* two numbers past the last tag */
    } else {
        int n = (int)pick(r, 32);
        tag = 0;
        for (int k = 0; k < 64; k++) {
            int t = (n + k) % 32;
            if (want >> t & 1) {
                tag = t;
                break;
            }
        }
    }
    /* Rationale: {0} sets only the union's first member (a bool); .p zeroes its 8 bytes */
    sg_any v = {tag, 0, {.p = NULL}};
    unsigned odd = 15 - pick(r, 16); /* 0: a malformed payload (an input run dry: well-formed) */
    switch (tag) {
    case SG_ANY_BOOL: v.u.b = pick(r, 2); if (!odd) v.u.i = 2; break;
    case SG_ANY_INT: v.u.i = (int64_t)byte(r) - 128; break;
    case SG_ANY_FLOAT: v.u.f = byte(r) / 7.0; break;
    case SG_ANY_COMPLEX: v.u.c = odd ? &p->c : NULL; break;
    case SG_ANY_STR: v.u.s = odd ? "abc" : NULL; v.len = odd ? 3 : 0; break;
    case SG_ANY_DTYPE: v.u.i = odd ? SG_FLOAT32 : (int64_t)byte(r) - 2; break;
    case SG_ANY_LAYOUT: v.u.i = odd ? 0 : (int64_t)byte(r); break;
    case SG_ANY_MEMORY_FORMAT: v.u.i = odd ? 1 : -(int64_t)byte(r); break;
    case SG_ANY_DEVICE: v.u.dev = odd ? SG_CPU : (sg_device){(int8_t)byte(r), (int8_t)byte(r)}; break;
    case SG_ANY_TENSOR: v.u.t = odd ? p->t[pick(r, NTENSORS)] : NULL; break;
    case SG_ANY_GENERATOR: case SG_ANY_OPAQUE: v.u.p = NULL; break;
    case SG_ANY_INT_LIST: v.u.ints = odd ? p->ints : NULL; v.len = (int32_t)pick(r, 5) - (odd ? 0 : 1); break;
    case SG_ANY_FLOAT_LIST: v.u.floats = odd ? p->floats : NULL; v.len = (int32_t)pick(r, 4); break;
    case SG_ANY_BOOL_LIST:
        v.u.bools = odd == 1 ? (const bool *)(const void *)p->badbools : odd ? p->bools : NULL;
        v.len = (int32_t)pick(r, 3);
        break;
    case SG_ANY_TENSOR_LIST: case SG_ANY_OPT_TENSOR_LIST:
        for (int i = 0; i < 4; i++) p->list[i] = pick(r, 5) ? p->t[pick(r, NTENSORS)] : NULL;
        v.u.tensors = odd ? p->list : NULL;
        v.len = odd ? (int32_t)pick(r, 5) : (int32_t)pick(r, 3) - 1;
        break;
    case SG_ANY_LIST:
        p->items[0] = sg_any_int(1);
        p->items[1] = pick(r, 2) ? sg_any_str("s", 1) : sg_any_float(2);
        p->items[2] = (sg_any){(int32_t)pick(r, SG_ANY__COUNT + 1), 0, {.p = NULL}};
        v.u.items = odd ? p->items : NULL;
        v.len = (int32_t)pick(r, 4);
        break;
    default: break;
    }
    return v;
}

/* ---- one input --------------------------------------------------------------------------- */

enum { MAX_HANDLES = 8 };

static const sg_key keys[] = {SG_KEY_CPU, SG_KEY_CUDA, SG_KEY_META, SG_KEY_PRIVATEUSE1,
                              SG_KEY_AUTOGRAD_CPU, SG_KEY_AUTOGRAD_CUDA, SG_KEY_BACKEND_SELECT,
                              SG_KEY_OVERRIDE, SG_KEY_AUTOGRAD,
                              SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD,
                              SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, SG_KEY_UNDEFINED,
                              SG_KEY__COUNT, (sg_key)20, (sg_key)40, (sg_key)-1};
enum { NKEYS = sizeof keys / sizeof keys[0] };

/* A refused call must say why. */
static void refused(sg_status st) {
    if (st != SG_OK && !sg_last_error()[0]) abort();
}

static void registrations(in *r, sg_op *op, sg_handle **h, int *nh) {
    /* composites first: they run for every backend, and where no tensor selects one */
    static const sg_key likely[] = {SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, SG_KEY_CPU,
                                    SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD, SG_KEY_META};
    int n = 1 + (int)pick(r, 4);
    for (int i = 0; i < n && *nh < MAX_HANDLES; i++) {
        sg_key     key = pick(r, 4) < 3 ? likely[pick(r, 4)] : keys[pick(r, NKEYS)];
        sg_handle *got = NULL;
        sg_status  st;
        sg_error_clear();
        switch (pick(r, 8)) {
        case 0: st = sg_op_impl(op, key, (sg_kernel){NULL, check_kernel, NULL}, &got); break;
        case 1: st = sg_op_impl_typed(op, key, (sg_fn)typed_kernel, adapter, &got); break;
        case 2: st = sg_op_impl_fallthrough(op, key, &got); break;
        case 3: st = sg_fallback_impl(key, check_kernel, NULL, &got); break;
        case 4: st = sg_fallback_fallthrough(key, &got); break;
        case 5:
            st = sg_op_override(op, key, (int32_t)pick(r, 5) - 2, pred,
                                pick(r, 2) ? check_kernel : redispatch_kernel,
                                (void *)(uintptr_t)key, &got);
            break;
        case 6:
            st = sg_op_impl(op, key, (sg_kernel){NULL, redispatch_kernel, (void *)(uintptr_t)key},
                            &got);
            break;
        default: st = sg_op_impl(pick(r, 2) ? NULL : op, key, (sg_kernel){0}, &got); break;
        }
        refused(st);
        if (st == SG_OK) {
            if (!got) abort();
            h[(*nh)++] = got;
        } else if (got) {
            abort();
        }
    }
}

static void call(in *r, sg_op *op, pool *p) {
    sg_any  args[MAX_ARGS + 2], rets[MAX_RETS + 1];
    int32_t nargs = sg_op_nargs(op), nrets = sg_op_nrets(op);
    if (nargs > MAX_ARGS || nrets > MAX_RETS) return;
    /* how: what goes wrong, 0 to 5 (an input run dry: nothing) */
    unsigned how = 31 - pick(r, 32);
    if (how == 0) nargs = (int32_t)pick(r, MAX_ARGS + 2) - 1;
    if (how == 1) nrets = (int32_t)pick(r, MAX_RETS + 1) - 1;
    if (nargs > MAX_ARGS + 2) nargs = MAX_ARGS + 2;
    bool wrong = pick(r, 4) == 3;
    for (int32_t i = 0; i < nargs && i < MAX_ARGS + 2; i++)
        args[i] = value(r, p, i < cur.nargs ? cur.tags[i] : 0, wrong && pick(r, 3) == 2);
    for (int i = 0; i <= MAX_RETS; i++) rets[i] = sg_any_int(7); /* the call must zero them */
    const sg_any *ap = how == 2 ? NULL : args;
    sg_any       *rp = how == 3 ? NULL : rets;
    sg_error_clear();
    sg_status st;
    if (how == 4)
        st = sg_call_by_name(sg_op_name(op), sg_op_overload(op), ap, nargs, rp, nrets);
    else if (how == 5)
        st = sg_op_call_boxed(NULL, ap, nargs, rp, nrets);
    else
        st = sg_op_call_boxed(op, ap, nargs, rp, nrets);
    refused(st);
    if (st == SG_OK)
        for (int32_t i = 0; i < nrets; i++) sg_any_release(&rets[i]);
    (void)sg_op_keys_of_args(op, ap, nargs);
}

/* The typed path's boxing (sg_call_boxed_sig), as a generated wrapper takes it when the entry
 * has no typed kernel: for ops of up to three plain Tensor arguments and at most one result,
 * with tensors from the pool, NULL now and then. */
static void typed_call(in *r, sg_op *op, pool *p) {
    int32_t nargs = sg_op_nargs(op), nrets = sg_op_nrets(op);
    if (nargs > 3 || nrets > 1 || cur.nargs != nargs) return;
    for (int32_t i = 0; i < nargs; i++)
        if (cur.tags[i] != 1u << SG_ANY_TENSOR) return;
    sg_tensor *t[3] = {NULL, NULL, NULL}, *out = NULL;
    sg_keyset  ks = 0;
    for (int32_t i = 0; i < nargs; i++) {
        t[i] = pick(r, 8) == 7 ? NULL : p->t[pick(r, NTENSORS)];
        if (t[i]) ks |= t[i]->keys;
    }
    static const char *const sigs[2][4] = {{">", "t>", "tt>", "ttt>"},
                                           {">T", "t>T", "tt>T", "ttt>T"}};
    const char     *sig = sigs[nrets][nargs];
    const sg_entry *e = sg_dispatch_entry(op, sg_tls_apply(ks));
    sg_error_clear();
    sg_status st;
    switch (nargs) {
    case 0: st = nrets ? sg_call_boxed_sig(e, op, ks, sig, &out) : sg_call_boxed_sig(e, op, ks, sig); break;
    case 1: st = nrets ? sg_call_boxed_sig(e, op, ks, sig, t[0], &out) : sg_call_boxed_sig(e, op, ks, sig, t[0]); break;
    case 2: st = nrets ? sg_call_boxed_sig(e, op, ks, sig, t[0], t[1], &out) : sg_call_boxed_sig(e, op, ks, sig, t[0], t[1]); break;
    default: st = nrets ? sg_call_boxed_sig(e, op, ks, sig, t[0], t[1], t[2], &out) : sg_call_boxed_sig(e, op, ks, sig, t[0], t[1], t[2]); break;
    }
    refused(st);
    if (st && out) abort(); /* a failed call hands out nothing */
    sg_tensor_release(out);
}

static unsigned inputs;

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    in    r = {data, size};
    sbuf  b;
    pool  p = {.ints = {1, 2, 3, 4}, .floats = {1, 2, 3}, .bools = {true, false, true},
               .badbools = {1, 3}, .c = {1, 2}};
    expect e;
    if (++inputs % 64 == 0) sg_runtime_shutdown(); /* ops, tables and registrations */
    build_schema(&r, &b, &e);
    sg_op *op = NULL;
    sg_error_clear();
    sg_status st = sg_op_define(b.s, &op);
    refused(st);
    if (st) {
        if (op) abort();
        sg_op *found = NULL;
        refused(sg_op_find(b.s, pick(&r, 2) ? "" : NULL, &found));
        return 0;
    }
    expect_of(op, &cur);
    cur_op = op;
    (void)sg_op_entry(op, keys[pick(&r, NKEYS)]);
    make_tensors(&r, &p);
    sg_handle *h[MAX_HANDLES];
    int        nh = 0;
    for (int round = 0, rounds = 1 + (int)pick(&r, 3); round < rounds; round++) {
        registrations(&r, op, h, &nh);
        for (int c = 0, calls = 1 + (int)pick(&r, 3); c < calls; c++) call(&r, op, &p);
        if (pick(&r, 2)) typed_call(&r, op, &p);
        /* release some, and now and then one twice (refused, not freed twice) */
        for (int i = 0; i < nh; i++) {
            if (pick(&r, 2)) continue;
            sg_error_clear();
            if (sg_handle_release(h[i]) != SG_OK) abort();
            if (pick(&r, 4) == 3 && sg_handle_release(h[i]) != SG_ESTATE) abort();
            h[i--] = h[--nh];
        }
    }
    for (int i = 0; i < nh; i++)
        if (sg_handle_release(h[i]) != SG_OK) abort();
    for (int i = 0; i < NTENSORS; i++) sg_tensor_release(p.t[i]);
    cur_op = NULL;
    (void)kernel_runs;
    return 0;
}
