/* test_cpu_boxed_entry.c: a boxed call of a generated op goes through the op's boxed entry (the
 * tags tested for its C signature, then the typed wrapper); the generic boxed call checks every
 * argument and goes through the table's boxing adapter. The two must not be told apart: over
 * every aten op whose arguments this test can make, each call below is made both ways, on fresh
 * arguments, and the status, the message and the results' tags and shapes must agree. The calls:
 * plausible arguments; one argument too many, and the last left out; a result slot more, none,
 * and NULL args or rets; per argument a wrong tag, a tag that is no tag, a NULL tensor, None, a
 * bool and a complex where a number goes; a read-only tensor where the op writes. */
#include "check.h"
#include "sg_aten_cpu.h"
#include "aten.h"

#include <stdio.h>
#include <string.h>

enum { MAXA = 16, MAXR = 8 };

enum { A_TENSOR, A_INT, A_FLOAT, A_SCALAR, A_BOOL };

/* The kind of value this test makes for a schema type (optional or not); -1 where none. */
static int kind_of(const char *type) {
    static const struct {
        const char *type;
        int         kind;
    } kinds[] = {
        {"Tensor", A_TENSOR}, {"Tensor?", A_TENSOR}, {"int", A_INT},       {"SymInt", A_INT},
        {"int?", A_INT},      {"SymInt?", A_INT},    {"float", A_FLOAT},   {"float?", A_FLOAT},
        {"Scalar", A_SCALAR}, {"Scalar?", A_SCALAR}, {"bool", A_BOOL},     {"bool?", A_BOOL},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].type, type) == 0) return kinds[i].kind;
    return -1;
}

/* A call's arguments: plausible values, the tensors made afresh (in-place ops write them). */
typedef struct {
    sg_any     v[MAXA + 1];
    sg_tensor *owned[MAXA];
    int        nowned;
} call_args;

static sg_tensor *fresh_tensor(bool read_only) {
    static float   data[6] = {0.5f, -1.0f, 2.0f, 3.0f, -0.25f, 1.5f};
    static float   ro_data[6];
    int64_t        sizes[2] = {2, 3};
    sg_tensor     *t = NULL;
    if (read_only) {
        memcpy(ro_data, data, sizeof data);
        CHECK(sg_tensor_from_blob(ro_data, sizes, NULL, 2, SG_FLOAT32, SG_CPU,
                                  SG_STORAGE_READ_ONLY, NULL, NULL, &t) == SG_OK);
        return t;
    }
    CHECK(sg_tensor_empty(sizes, 2, SG_FLOAT32, SG_CPU, &t) == SG_OK);
    if (t) memcpy(sg_tensor_data(t), data, sizeof data);
    return t;
}

static void make_args(const sg_op_desc *d, call_args *c, int read_only_arg) {
    c->nowned = 0;
    for (int32_t i = 0; i < d->nargs; i++) {
        switch (kind_of(d->args[i].type)) {
        case A_TENSOR:
            c->owned[c->nowned] = fresh_tensor(i == read_only_arg);
            c->v[i] = sg_any_tensor(c->owned[c->nowned++]);
            break;
        case A_INT: c->v[i] = sg_any_int(1); break;
        case A_FLOAT: c->v[i] = sg_any_float(0.5); break;
        case A_SCALAR: c->v[i] = sg_any_int(2); break;
        default: c->v[i] = sg_any_bool(false); break;
        }
    }
    c->v[d->nargs] = sg_any_int(7); /* for the call with one argument too many */
}

static void free_args(call_args *c) {
    for (int i = 0; i < c->nowned; i++) sg_tensor_release(c->owned[i]);
}

/* What a call did: status, message, and the results' tags and shapes. */
typedef struct {
    sg_status st;
    char      msg[512];
    char      rets[256];
} outcome;

/* Appends to buf (size bytes, NUL-terminated, *k used), truncating quietly. */
static void put(char *buf, size_t size, size_t *k, const char *fmt, long long v) {
    if (*k >= size) return;
    int w = snprintf(buf + *k, size - *k, fmt, v);
    *k += w > 0 ? (size_t)w : 0;
}

/* Each result's tag; a tensor's dtype and sizes, a list's length. */
static void describe_rets(const sg_any *r, int32_t n, char *buf, size_t size) {
    size_t k = 0;
    buf[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        put(buf, size, &k, "%lld", r[i].tag);
        if (r[i].tag == SG_ANY_TENSOR && r[i].u.t) {
            const sg_tensor *t = r[i].u.t;
            put(buf, size, &k, "(%lld:", t->dtype);
            for (int32_t j = 0; j < t->ndim; j++) put(buf, size, &k, "%lld,", t->sizes[j]);
            put(buf, size, &k, ")", 0);
        } else if (r[i].tag != SG_ANY_NONE && r[i].tag != SG_ANY_TENSOR) {
            put(buf, size, &k, "[%lld]", r[i].len);
        }
        put(buf, size, &k, " ", 0);
    }
}

/* How a call is spoiled: which argument, and what it becomes. */
typedef enum {
    V_PLAIN, V_EXTRA_ARG, V_LAST_LEFT_OUT, V_EXTRA_SLOT, V_NO_SLOTS, V_NULL_ARGS, V_NULL_RETS,
    V_WRONG_TAG, V_NO_TAG, V_NULL_TENSOR, V_NONE, V_BOOL, V_COMPLEX, V_READ_ONLY, V__COUNT
} variant;

static const sg_complex one_i = {0.0, 1.0};

static outcome call(const sg_op_desc *d, variant v, int arg, bool generic) {
    call_args c;
    make_args(d, &c, v == V_READ_ONLY ? arg : -1);
    int32_t nargs = d->nargs, nrets = d->nrets;
    sg_any *args = c.v, rets[MAXR + 1];
    switch (v) {
    case V_EXTRA_ARG: nargs++; break;
    case V_LAST_LEFT_OUT: nargs--; break;
    case V_EXTRA_SLOT: nrets++; break;
    case V_NO_SLOTS: nrets = 0; break;
    case V_NULL_ARGS: args = NULL; break;
    case V_WRONG_TAG: c.v[arg] = sg_any_str("x", 1); break;
    case V_NO_TAG: c.v[arg].tag = 99; break;
    case V_NULL_TENSOR: c.v[arg] = sg_any_tensor(NULL); break;
    case V_NONE: c.v[arg] = sg_any_none(); break;
    case V_BOOL: c.v[arg] = sg_any_bool(true); break;
    case V_COMPLEX: c.v[arg].tag = SG_ANY_COMPLEX, c.v[arg].u.c = &one_i; break;
    default: break;
    }
    for (int i = 0; i <= MAXR; i++) rets[i] = sg_any_int(-1); /* not None: the call zeroes */
    sg_error_clear();
    outcome o;
    sg_any *r = v == V_NULL_RETS ? NULL : rets;
    o.st = (generic ? sg_op_call_boxed_generic : sg_op_call_boxed)(*d->op, args, nargs, r, nrets);
    snprintf(o.msg, sizeof o.msg, "%s", o.st ? sg_last_error() : "");
    describe_rets(rets, v == V_NULL_RETS ? 0 : nrets, o.rets, sizeof o.rets);
    if (v != V_NULL_RETS)
        for (int32_t i = 0; i < nrets; i++) sg_any_release(&rets[i]);
    free_args(&c);
    return o;
}

static int compared, differed;

static void compare(const sg_op_desc *d, variant v, int arg) {
    outcome e = call(d, v, arg, false), g = call(d, v, arg, true);
    compared++;
    if (e.st != g.st || strcmp(e.msg, g.msg) != 0 || strcmp(e.rets, g.rets) != 0) {
        if (differed++ < 10)
            fprintf(stderr,
                    "%s.%s, variant %d on argument %d:\n  entry:   %d %s [%s]\n"
                    "  generic: %d %s [%s]\n",
                    d->name, d->overload, (int)v, arg, (int)e.st, e.msg, e.rets, (int)g.st,
                    g.msg, g.rets);
    }
}

/* Which spoiled arguments apply to an argument of kind k (a read-only one only where the op
 * writes it). */
static bool applies(variant v, int base, const sg_arg_desc *a) {
    switch (v) {
    case V_WRONG_TAG: case V_NO_TAG: case V_NONE: return true;
    case V_NULL_TENSOR: return base == A_TENSOR;
    case V_BOOL: case V_COMPLEX: return base == A_INT || base == A_FLOAT || base == A_SCALAR;
    case V_READ_ONLY: return base == A_TENSOR && a->write;
    default: return false;
    }
}

int main(void) {
    CHECK(sg_aten_cpu_init() == SG_OK);
    int ops = 0;
    for (size_t i = 0; i < aten_nops; i++) {
        const sg_op_desc *d = &aten_ops[i];
        bool              ok = d->nargs <= MAXA && d->nrets <= MAXR;
        for (int32_t j = 0; ok && j < d->nargs; j++) ok = kind_of(d->args[j].type) >= 0;
        if (!ok) continue;
        ops++;
        for (variant v = V_PLAIN; v <= V_NULL_RETS; v++) {
            if ((v == V_NULL_ARGS && d->nargs == 0) || (v == V_NULL_RETS && d->nrets == 0) ||
                (v == V_LAST_LEFT_OUT && d->nargs == 0))
                continue;
            compare(d, v, -1);
        }
        for (int32_t j = 0; j < d->nargs; j++)
            for (variant v = V_WRONG_TAG; v < V__COUNT; v++)
                if (applies(v, kind_of(d->args[j].type), &d->args[j])) compare(d, v, j);
    }
    printf("test_cpu_boxed_entry: %d ops, %d calls made both ways, %d differed\n", ops, compared,
           differed);
    CHECK(ops > 200); /* the families above cover most of aten_core */
    CHECK(differed == 0);
    sg_runtime_shutdown();
    return check_result("test_cpu_boxed_entry");
}
