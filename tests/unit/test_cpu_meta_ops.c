/* test_cpu_meta_ops.c: every op of the aten library on Meta tensors against the same op on the
 * CPU. Arguments are built from each op's schema (small tensors, contiguous and transposed, of
 * several dtypes; out= tensors to be resized or of the right shape; the schema's defaults; a
 * value by argument name where there is none), and every argument set runs on both devices.
 * Where the CPU accepts a set, Meta must too (but for the documented data-dependent ops, which
 * must refuse with a message that says so) and agree with it: results and written arguments of
 * the same sizes, strides and dtype, on Meta, aliasing the same arguments. Where the CPU
 * refuses a set, Meta must refuse it too, but for a dtype the CPU's loops lack. Prints how many
 * ops and sets were run and why any op was not; an op with a CPU kernel that was not run, or
 * without a Meta kernel, fails the test. `-v` names each op as it runs. */
#include "check.h"
#include "cpu_tensors.h"
#include "sg_aten_cpu.h"
#include "aten.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ops whose result shape or value depends on tensor data: as PyTorch's Meta refuses them, ours
 * must fail (not crash, not invent a shape) and say why. */
static const char *const data_dependent[][2] = {
    {"aten::where", ""},           /* nonzero of the condition */
    {"aten::narrow", "Tensor"},    /* reads start's value */
};

static bool is_data_dependent(const sg_op_desc *d) {
    for (size_t i = 0; i < sizeof data_dependent / sizeof data_dependent[0]; i++)
        if (!strcmp(d->name, data_dependent[i][0]) && !strcmp(d->overload, data_dependent[i][1]))
            return true;
    return false;
}

/* One argument set: the knobs the builder turns. */
typedef struct variant {
    int32_t  ndim;
    int64_t  sizes[4];
    sg_dtype dtype;     /* of plain tensors */
    sg_dtype out_dtype; /* of the first out= tensor (later ones are int64: indices) */
    bool     opt;       /* Tensor? arguments given (else None) */
    bool     param1d;   /* weight, bias and index tensors 1-d (else the base shape) */
    int64_t  dim;
    int      out_shape; /* out= tensors: 0 of shape [0] (to be resized), 1 of the base shape,
                           2 0-dim, 3 as the op's functional variant returns them */
    bool     transposed; /* plain tensors are views with their last two dims swapped */
} variant;

#define MAXARGS 24
#define MAXT    16

/* What one call's arguments hold, so that they can be released and compared. */
typedef struct built {
    sg_any     args[MAXARGS];
    sg_tensor *owned[MAXT * 2];
    int32_t    nowned;
    sg_tensor *lists[MAXARGS][4];
    int64_t    ints[MAXARGS][8];
    sg_any     strs[MAXARGS][2];
} built;

static sg_tensor *own(built *b, sg_tensor *t) {
    if (t && b->nowned < MAXT * 2) b->owned[b->nowned++] = t;
    return t;
}

static sg_tensor *tensor(built *b, sg_device dev, sg_dtype dt, const int64_t *sizes, int32_t n,
                         double v) {
    sg_tensor *t = NULL;
    if (sg_tensor_empty(sizes, n, dt, dev, &t)) return NULL;
    if (dev.type == SG_DEV_CPU)
        for (int64_t i = 0; i < sg_tensor_numel(t); i++)
            put(dt, (char *)sg_tensor_data(t) + i * (int64_t)sg_dtype_size(dt), v);
    return own(b, t);
}

static bool is(const char *a, const char *b) { return !strcmp(a, b); }
static bool starts(const char *a, const char *p) { return !strncmp(a, p, strlen(p)); }

static bool has_tensor_input(const sg_op_desc *d) {
    for (int32_t i = 0; i < d->nargs; i++)
        if (starts(d->args[i].type, "Tensor") && !d->args[i].write) return true;
    return false;
}

static bool has_arg(const sg_op_desc *d, const char *name) {
    for (int32_t i = 0; i < d->nargs; i++)
        if (is(d->args[i].name, name)) return true;
    return false;
}

/* A tensor argument by name: index tensors are int64 zeros, masks bool, parameters 1-d (but
 * embedding's weight), a fill value 0-dim. */
static sg_tensor *tensor_arg(built *b, sg_device dev, const variant *v, const sg_op_desc *d,
                             const char *name) {
    int64_t last = v->sizes[v->ndim - 1];
    if (is(name, "index") || is(name, "indices"))
        return v->param1d ? tensor(b, dev, SG_INT64, (int64_t[]){2}, 1, 0)
                          : tensor(b, dev, SG_INT64, v->sizes, v->ndim, 0);
    if (is(name, "mask") || is(name, "condition"))
        return tensor(b, dev, SG_BOOL, v->sizes, v->ndim, 1);
    if (is(name, "start")) return tensor(b, dev, SG_INT64, NULL, 0, 0);
    if (is(name, "value") && has_arg(d, "mask")) return tensor(b, dev, v->dtype, NULL, 0, 1);
    if (is(name, "p")) return tensor(b, dev, SG_FLOAT32, v->sizes, v->ndim, 0.5);
    if (v->param1d && (is(name, "weight") || is(name, "bias")) && !has_arg(d, "indices"))
        return tensor(b, dev, v->dtype, &last, 1, 1);
    if (!v->transposed || v->ndim < 2) return tensor(b, dev, v->dtype, v->sizes, v->ndim, 1);
    int64_t    sw[4];
    sg_tensor *base, *t = NULL;
    memcpy(sw, v->sizes, sizeof sw);
    sw[v->ndim - 2] = v->sizes[v->ndim - 1], sw[v->ndim - 1] = v->sizes[v->ndim - 2];
    if (sg_tensor_empty(sw, v->ndim, v->dtype, dev, &base)) return NULL;
    if (dev.type == SG_DEV_CPU)
        for (int64_t i = 0; i < sg_tensor_numel(base); i++)
            put(v->dtype, (char *)sg_tensor_data(base) + i * (int64_t)sg_dtype_size(v->dtype), 1);
    sg_status st = sg_tensor_transpose(base, -2, -1, &t);
    sg_tensor_release(base); /* the view holds the storage */
    return st ? NULL : own(b, t);
}

/* The results of an out= op's functional variant, for out_shape 3 (an autogen out= variant
 * copies into out= tensors of the right shape). */
static struct {
    int32_t  n, ndim[4];
    int64_t  sizes[4][SG_MAX_DIMS];
    sg_dtype dtype[4];
} presized;

/* An out= tensor (the k-th): indices are int64, the rest of the variant's out dtype and shape. */
static sg_tensor *out_arg(built *b, sg_device dev, const variant *v, const char *name, int k) {
    sg_dtype dt = strstr(name, "indices") || is(name, "max_values") ? SG_INT64 : v->out_dtype;
    if (v->out_shape == 3)
        return k < presized.n ? tensor(b, dev, presized.dtype[k], presized.sizes[k],
                                       presized.ndim[k], 0)
                              : NULL;
    if (v->out_shape == 1) return tensor(b, dev, dt, v->sizes, v->ndim, 0);
    if (v->out_shape == 2) return tensor(b, dev, dt, NULL, 0, 0);
    return tensor(b, dev, dt, (int64_t[]){0}, 1, 0);
}

static sg_any int_list(built *b, int32_t slot, const int64_t *p, int32_t n) {
    memcpy(b->ints[slot], p, (size_t)n * sizeof *p);
    return sg_any_int_list(b->ints[slot], n);
}

/* A default as the schema writes it; false where the text is not one this test reads. */
static bool from_default(built *b, int32_t slot, const char *type, const char *text, sg_any *out) {
    if (is(text, "None")) return *out = sg_any_none(), true;
    if (is(text, "True") || is(text, "False")) return *out = sg_any_bool(is(text, "True")), true;
    if (is(text, "[]")) return *out = sg_any_int_list(b->ints[slot], 0), true;
    if (is(text, "contiguous_format")) return *out = sg_box_tag_i(SG_ANY_MEMORY_FORMAT, 0), true;
    if (text[0] == '\'') {
        static const char none[] = "none";
        return *out = sg_any_str(none, 4), true;
    }
    char *end;
    if (starts(type, "float") || strchr(text, '.') || strchr(text, 'e')) {
        double f = strtod(text, &end);
        if (*end) return false;
        *out = sg_any_float(f);
        return true;
    }
    long long i = strtoll(text, &end, 10);
    if (*end) return false;
    if (starts(type, "int[") || starts(type, "SymInt[")) {
        b->ints[slot][0] = i;
        *out = sg_any_int_list(b->ints[slot], 1);
    } else {
        *out = sg_any_int(i);
    }
    return true;
}

/* Builds the arguments of d for dev; false where a type is one this test cannot make. */
static bool build(built *b, const sg_op_desc *d, const variant *v, sg_device dev,
                  const char **why) {
    memset(b, 0, sizeof *b);
    int64_t n0 = v->sizes[0], dimsz = v->sizes[v->dim];
    bool    factory = !has_tensor_input(d);
    int     nout = 0;
    if (d->nargs > MAXARGS) return *why = "too many arguments", false;
    for (int32_t i = 0; i < d->nargs; i++) {
        const sg_arg_desc *a = &d->args[i];
        const char *t = a->type, *n = a->name;
        sg_any     *o = &b->args[i];
        if (is(t, "Tensor") && a->write && a->kwarg_only) { /* out= */
            sg_tensor *ot = out_arg(b, dev, v, n, nout++);
            if (!ot) return *why = "no out= shape", false;
            *o = sg_any_tensor(ot);
        } else if (is(t, "Tensor")) {
            *o = sg_any_tensor(tensor_arg(b, dev, v, d, n));
        } else if (is(t, "Tensor?")) {
            *o = v->opt ? sg_any_tensor(tensor_arg(b, dev, v, d, n)) : sg_any_none();
        } else if (is(t, "Tensor[]")) {
            for (int k = 0; k < 2; k++)
                b->lists[i][k] = a->write ? out_arg(b, dev, v, n, k) : tensor_arg(b, dev, v, d, n);
            if (!b->lists[i][0] || !b->lists[i][1]) return *why = "no out= shape", false;
            *o = sg_any_tensor_list(b->lists[i], 2);
        } else if (is(t, "Scalar?") && v->opt) {
            *o = sg_any_int(is(n, "min") ? 0 : 1);
        } else if (a->default_text && !(is(n, "device") && factory) &&
                   from_default(b, i, t, a->default_text, o)) {
            continue;
        } else if (is(t, "Device") || is(t, "Device?")) {
            *o = factory || is(t, "Device") ? sg_any_device(dev) : sg_any_none();
        } else if (is(t, "int") || is(t, "SymInt")) {
            int64_t x = is(n, "dim") ? v->dim : is(n, "dim1") ? 1 : is(n, "end_dim") ? -1
                      : is(n, "chunks") ? 2 : is(n, "N") ? n0 : is(n, "C") ? v->sizes[1]
                      : is(n, "length") || is(n, "k") || is(n, "split_size") || is(n, "decimals") ||
                                is(n, "num_groups") || is(n, "group")
                          ? 1
                          : 0;
            if (is(n, "HxW")) {
                x = 1;
                for (int32_t k = 2; k < v->ndim; k++) x *= v->sizes[k];
            }
            *o = sg_any_int(x);
        } else if (starts(t, "int[") || starts(t, "SymInt[")) {
            int64_t l[4];
            int32_t len = v->ndim;
            if (is(n, "size") || is(n, "shape")) {
                memcpy(l, v->sizes, sizeof l);
            } else if (is(n, "stride")) {
                for (int32_t k = len - 1, s = 1; k >= 0; s *= (int32_t)v->sizes[k], k--) l[k] = s;
            } else if (is(n, "dims")) {
                for (int32_t k = 0; k < len; k++) l[k] = len - 1 - k;
            } else if (is(n, "normalized_shape")) {
                l[0] = v->sizes[len - 1], len = 1;
            } else if (is(n, "split_sizes") || is(n, "split_size")) {
                l[0] = 1, l[1] = dimsz - 1, len = 2;
            } else {
                l[0] = v->dim, len = 1;
            }
            *o = int_list(b, i, l, len);
        } else if (is(t, "Dimname")) {
            *o = sg_any_str("N", 1);
        } else if (starts(t, "Dimname[") && !strchr(t, '?')) {
            b->strs[i][0] = sg_any_str("N", 1);
            *o = (sg_any){SG_ANY_LIST, 1, {0}};
            o->u.items = b->strs[i];
        } else if (is(t, "int?") || is(t, "SymInt?") || is(t, "float?") || is(t, "bool?") ||
                   is(t, "str?") || is(t, "Scalar?") || is(t, "Generator?") ||
                   is(t, "Dimname[]?") ||
                   is(t, "Layout?") || is(t, "MemoryFormat?") || is(t, "ScalarType?")) {
            *o = sg_any_none();
        } else if (is(t, "int[1]?")) {
            *o = int_list(b, i, &v->dim, 1);
        } else if (is(t, "ScalarType")) {
            *o = sg_any_dtype(v->dtype);
        } else if (is(t, "Scalar")) {
            *o = sg_any_int(is(n, "min") || is(n, "start") ? 0
                            : is(n, "end")                   ? 4
                            : is(n, "max")                   ? 1
                                                             : 2);
        } else if (is(t, "float")) {
            *o = sg_any_float(is(n, "p") ? 0.5 : is(n, "mean") ? 0 : 1);
        } else if (is(t, "bool")) {
            *o = sg_any_bool(false);
        } else if (is(t, "str")) {
            static const char add[] = "add";
            *o = sg_any_str(add, 3);
        } else {
            return *why = "an argument type this test does not make", false;
        }
    }
    return true;
}

static void release(built *b) {
    for (int32_t i = 0; i < b->nowned; i++) sg_tensor_release(b->owned[i]);
    b->nowned = 0;
}

static void release_rets(sg_any *r, int32_t n) {
    for (int32_t i = 0; i < n; i++) sg_any_release(&r[i]);
}

/* The argument of `args` that t is (-1: none). */
static int32_t arg_of(const built *b, int32_t nargs, const sg_tensor *t) {
    for (int32_t i = 0; i < nargs; i++)
        if (b->args[i].tag == SG_ANY_TENSOR && b->args[i].u.t == t) return i;
    return -1;
}

static int op_failures;

static void fail(const sg_op_desc *d, const char *what) {
    op_failures++;
    check_failures++;
    fprintf(stderr, "FAIL %s%s%s: %s\n", d->name, *d->overload ? "." : "", d->overload, what);
}

/* Whether the Meta tensor m is the CPU tensor c's shape: sizes, strides, dtype, on Meta. */
static bool same_shape(const sg_tensor *c, const sg_tensor *m, char *why, size_t n) {
    if (!c || !m) return snprintf(why, n, "a tensor is missing"), false;
    if (m->device.type != SG_DEV_META)
        return snprintf(why, n, "result on %s",
                        sg_device_type_name((sg_device_type)m->device.type)),
               false;
    if (c->dtype != m->dtype)
        return snprintf(why, n, "dtype %s, CPU %s", sg_dtype_name((sg_dtype)m->dtype),
                        sg_dtype_name((sg_dtype)c->dtype)),
               false;
    bool ok = c->ndim == m->ndim;
    for (int32_t i = 0; ok && i < c->ndim; i++)
        ok = c->sizes[i] == m->sizes[i] && (c->sizes[i] < 2 || c->strides[i] == m->strides[i]);
    if (!ok) {
        int k = snprintf(why, n, "sizes/strides [");
        for (int32_t i = 0; i < m->ndim; i++)
            k += snprintf(why + k, n - (size_t)k, " %lld/%lld", (long long)m->sizes[i],
                          (long long)m->strides[i]);
        k += snprintf(why + k, n - (size_t)k, " ], CPU [");
        for (int32_t i = 0; i < c->ndim; i++)
            k += snprintf(why + k, n - (size_t)k, " %lld/%lld", (long long)c->sizes[i],
                          (long long)c->strides[i]);
        snprintf(why + k, n - (size_t)k, " ]");
    }
    return ok;
}

/* Compares one result of the two calls (rc on the CPU, rm on Meta). */
static void compare_ret(const sg_op_desc *d, int32_t r, const sg_any *rc, const sg_any *rm,
                        const built *bc, const built *bm) {
    char why[256], msg[320];
    if (rc->tag != rm->tag) {
        snprintf(msg, sizeof msg, "result %d is %s, CPU's %s", r, sg_any_tag_name(rm->tag),
                 sg_any_tag_name(rc->tag));
        { fail(d, msg); return; }
    }
    if (rc->tag == SG_ANY_TENSOR) {
        if (!same_shape(rc->u.t, rm->u.t, why, sizeof why)) {
            snprintf(msg, sizeof msg, "result %d: %s", r, why);
            { fail(d, msg); return; }
        }
        if (arg_of(bc, d->nargs, rc->u.t) != arg_of(bm, d->nargs, rm->u.t)) {
            snprintf(msg, sizeof msg, "result %d aliases argument %d, on the CPU %d", r,
                     arg_of(bm, d->nargs, rm->u.t), arg_of(bc, d->nargs, rc->u.t));
            { fail(d, msg); return; }
        }
    } else if (rc->tag == SG_ANY_TENSOR_LIST) {
        if (rc->len != rm->len) {
            snprintf(msg, sizeof msg, "result %d has %d tensors, CPU's %d", r, rm->len, rc->len);
            { fail(d, msg); return; }
        }
        for (int32_t k = 0; k < rc->len; k++)
            if (!same_shape(rc->u.tensors[k], rm->u.tensors[k], why, sizeof why)) {
                snprintf(msg, sizeof msg, "result %d[%d]: %s", r, k, why);
                { fail(d, msg); return; }
            }
    }
}

static void compare_written(const sg_op_desc *d, const built *bc, const built *bm) {
    char why[256], msg[320];
    for (int32_t i = 0; i < d->nargs; i++) {
        if (!d->args[i].write) continue;
        const sg_any *c = &bc->args[i], *m = &bm->args[i];
        int32_t       n = c->tag == SG_ANY_TENSOR_LIST ? c->len : 1;
        for (int32_t k = 0; k < n; k++) {
            const sg_tensor *ct = c->tag == SG_ANY_TENSOR_LIST ? c->u.tensors[k] : c->u.t;
            const sg_tensor *mt = m->tag == SG_ANY_TENSOR_LIST ? m->u.tensors[k] : m->u.t;
            if (!same_shape(ct, mt, why, sizeof why)) {
                snprintf(msg, sizeof msg, "written argument %s: %s", d->args[i].name, why);
                fail(d, msg);
            }
        }
    }
}

/* The functional variant of an out= op: same name, overload less "out" / "_out" / "Tensor_out"
 * -> "Tensor" (NULL where none). */
static const sg_op_desc *functional_of(const sg_op_desc *d) {
    char        ov[128];
    size_t      n = strlen(d->overload);
    const char *cut = NULL;
    if (n >= 3 && is(d->overload + n - 3, "out")) cut = d->overload + n - 3;
    if (!cut || n >= sizeof ov) return NULL;
    memcpy(ov, d->overload, (size_t)(cut - d->overload));
    ov[cut - d->overload] = 0;
    if (cut > d->overload && ov[cut - d->overload - 1] == '_') ov[cut - d->overload - 1] = 0;
    return aten_find(d->name, ov);
}

/* Records the shapes the functional variant f returns for the arguments of v (false where it
 * fails). */
static bool presize(const sg_op_desc *f, const variant *v) {
    built       b;
    const char *why;
    sg_any      r[4] = {{0}};
    variant     w = *v;
    presized.n = 0;
    w.out_shape = 0;
    if (!f || f->nrets > 4 || !build(&b, f, &w, SG_CPU, &why)) return false;
    bool ok = !sg_op_call_boxed(*f->op, b.args, f->nargs, r, f->nrets);
    for (int32_t i = 0; ok && i < f->nrets; i++) {
        if (r[i].tag != SG_ANY_TENSOR) {
            ok = false;
            break;
        }
        presized.ndim[i] = r[i].u.t->ndim;
        presized.dtype[i] = (sg_dtype)r[i].u.t->dtype;
        memcpy(presized.sizes[i], r[i].u.t->sizes, (size_t)r[i].u.t->ndim * sizeof(int64_t));
        presized.n = i + 1;
    }
    release_rets(r, f->nrets);
    release(&b);
    return ok;
}

/* What running the argument sets of one op gave. */
typedef struct tally {
    int  accepted, refused, gaps; /* sets the CPU accepted; refused (gaps: for a dtype) */
    bool failed;                  /* one failure reported for the op is enough */
    char cpu_err[256];            /* the CPU's last refusal */
} tally;

/* Runs argument set v of d on the CPU and on Meta. Where the CPU accepts it, Meta must too and
 * agree; where the CPU refuses it (its checks: shapes, dtypes, dims, values of arguments),
 * Meta must refuse it too, but for a dtype the CPU's loops lack ("\"softmax_kernel_impl\" not
 * implemented for 'Long'"): that is the CPU's gap, not the op's rule, and PyTorch's Meta
 * accepts those too. Data-dependent ops must refuse Meta with a message that says so. */
static void run_set(const sg_op_desc *d, const sg_op_desc *f, const variant *v, tally *t) {
    built       bc, bm;
    const char *why = NULL;
    sg_any      rc[4] = {{0}}, rm[4] = {{0}};
    char        msg[400];
    if (v->out_shape == 3 && !presize(f, v)) return;
    if (!build(&bc, d, v, SG_CPU, &why) || !build(&bm, d, v, SG_META, &why)) {
        release(&bc);
        return;
    }
    sg_status sc = sg_op_call_boxed(*d->op, bc.args, d->nargs, rc, d->nrets);
    if (sc) snprintf(t->cpu_err, sizeof t->cpu_err, "%s", sg_last_error());
    sg_status sm = sg_op_call_boxed(*d->op, bm.args, d->nargs, rm, d->nrets);
    int       before = op_failures;
    check_count++; /* one check per argument set: its outcome on both devices */
    if (sc) {
        t->refused++;
        if (strstr(t->cpu_err, "not implemented for")) {
            t->gaps++;
        } else if (!sm && !t->failed) {
            snprintf(msg, sizeof msg, "runs on Meta with arguments the CPU refuses (%s)",
                     t->cpu_err);
            fail(d, msg);
        }
    } else if (is_data_dependent(d)) {
        t->accepted++;
        if (!sm && !t->failed) fail(d, "a data-dependent op ran on Meta");
        else if (sm && !strstr(sg_last_error(), "Meta") && !t->failed) fail(d, sg_last_error());
    } else if (sm) {
        t->accepted++;
        if (!t->failed) {
            snprintf(msg, sizeof msg, "fails on Meta where the CPU runs: %s", sg_last_error());
            fail(d, msg);
        }
    } else {
        t->accepted++;
        if (!t->failed) {
            for (int32_t r = 0; r < d->nrets; r++) compare_ret(d, r, &rc[r], &rm[r], &bc, &bm);
            compare_written(d, &bc, &bm);
        }
    }
    t->failed |= op_failures != before;
    release_rets(rc, d->nrets);
    release_rets(rm, d->nrets);
    release(&bc);
    release(&bm);
}

/* The argument sets, simplest first. */
static int32_t variants(variant *out, int32_t cap) {
    static const struct { int32_t n; int64_t s[4]; } shapes[] = {
        {2, {2, 3}}, {2, {3, 3}}, {3, {2, 3, 3}}, {4, {2, 2, 3, 4}}};
    static const sg_dtype dts[] = {SG_FLOAT32, SG_INT64, SG_BOOL};
    int32_t k = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int p1 = 0; p1 < 2; p1++)
            for (int opt = 0; opt < 2; opt++)
                for (size_t t = 0; t < 3; t++)
                    for (size_t ot = 0; ot < 3; ot++)
                        for (int64_t dim = 0; dim < 2; dim++)
                            for (int os = 0; os < 4; os++)
                                for (int tr = 0; tr < 2; tr++) {
                                    if (k == cap) return k;
                                    variant v = {shapes[s].n, {0}, dts[t], dts[(t + ot) % 3],
                                                 opt, p1, dim, os, tr};
                                    memcpy(v.sizes, shapes[s].s, sizeof v.sizes);
                                    out[k++] = v;
                                }
    return k;
}

/* What the walk does not look at: messages, memory, the documented example. */
static void test_cases(void) {
    sg_tensor *x = NULL, *w = NULL, *y = NULL, *c = NULL, *o = NULL, *r = NULL;
    /* planning: a bfloat16 linear layer, with no memory behind any tensor */
    CHECK(sg_tensor_empty((int64_t[]){64, 4096}, 2, SG_BFLOAT16, SG_META, &x) == SG_OK);
    CHECK(sg_tensor_empty((int64_t[]){11008, 4096}, 2, SG_BFLOAT16, SG_META, &w) == SG_OK);
    CHECK(aten_linear(x, w, NULL, &y) == SG_OK && y && y->device.type == SG_DEV_META);
    CHECK(y && y->dtype == SG_BFLOAT16 && y->ndim == 2 && y->sizes[0] == 64 &&
          y->sizes[1] == 11008 && sg_tensor_data(y) == NULL);
    sg_tensor_release(y);
    /* an out= on another device: refused, naming the op and both devices */
    CHECK(sg_tensor_empty((int64_t[]){0}, 1, SG_FLOAT32, SG_CPU, &o) == SG_OK);
    CHECK(sg_tensor_empty((int64_t[]){2, 3}, 2, SG_FLOAT32, SG_META, &c) == SG_OK);
    CHECK(aten_add_out(c, c, sg_scalar_int(1), o, &r) == SG_EINVAL && r == NULL);
    CHECK(strstr(sg_last_error(), "aten::add.out") && strstr(sg_last_error(), "meta") &&
          strstr(sg_last_error(), "cpu"));
    /* the shapes the CPU refuses, with the CPU's message */
    CHECK(aten_mm(c, c, &r) == SG_EINVAL && r == NULL);
    CHECK(strstr(sg_last_error(), "shapes cannot be multiplied (2x3 and 2x3)") != NULL);
    /* data-dependent ops: refused, saying why */
    sg_tensor_list l = {NULL, 0};
    CHECK(aten_where(c, &l) == SG_EUNSUPPORTED && l.len == 0);
    CHECK(strstr(sg_last_error(), "aten::where") && strstr(sg_last_error(), "Meta"));
    sg_tensor *start = NULL;
    CHECK(sg_tensor_empty(NULL, 0, SG_INT64, SG_META, &start) == SG_OK);
    CHECK(aten_narrow_Tensor(c, 1, start, 1, &r) == SG_EUNSUPPORTED && r == NULL);
    CHECK(strstr(sg_last_error(), "aten::narrow.Tensor") != NULL);
    sg_tensor_release(start);
    sg_tensor_release(c);
    sg_tensor_release(o);
    sg_tensor_release(w);
    sg_tensor_release(x);
}

int main(int argc, char **argv) {
    bool verbose = argc > 1 && is(argv[1], "-v");
    CHECK(sg_aten_cpu_init() == SG_OK);
    test_cases();
    static variant vs[2400];
    int32_t        nv = variants(vs, 2400);
    int     checked = 0, exceptions = 0, unrun = 0, no_cpu = 0;
    long    sets = 0, refused = 0, gaps = 0;
    for (size_t i = 0; i < aten_nops; i++) {
        const sg_op_desc *d = &aten_ops[i];
        const sg_op      *op = *d->op;
        tally             t = {0};
        if (verbose) fprintf(stderr, "%s.%s\n", d->name, d->overload);
        if (d->nrets > 4 || d->nargs > MAXARGS) {
            fail(d, "more arguments or results than this test holds");
            continue;
        }
        bool has_meta = sg_op_entry(op, SG_KEY_META).kind != SG_ENTRY_MISSING;
        if (sg_op_entry(op, SG_KEY_CPU).kind == SG_ENTRY_MISSING) {
            if (has_meta) fail(d, "a Meta kernel but none for the CPU");
            no_cpu++;
            printf("skipped %s%s%s: no CPU kernel\n", d->name, *d->overload ? "." : "",
                   d->overload);
            continue;
        }
        if (!has_meta && !is_data_dependent(d)) fail(d, "a CPU kernel but none for Meta");
        const sg_op_desc *f = functional_of(d);
        for (int32_t v = 0; v < nv; v++) run_set(d, f, &vs[v], &t);
        sets += t.accepted + t.refused, refused += t.refused, gaps += t.gaps;
        if (t.accepted == 0) {
            unrun++;
            printf("not run %s%s%s: no argument set runs on the CPU (last: %s)\n", d->name,
                   *d->overload ? "." : "", d->overload, t.cpu_err);
        } else if (is_data_dependent(d)) {
            exceptions++;
        } else {
            checked++;
        }
    }
    printf("meta ops: %zu ops: %d run on Meta against the CPU, %d data-dependent (refused on "
           "Meta, as PyTorch's), %d with no CPU kernel (none on Meta either), %d not run; %d "
           "failed\n",
           aten_nops, checked, exceptions, no_cpu, unrun, op_failures);
    printf("meta ops: %ld argument sets on both devices: %ld the CPU accepts, %ld it refuses "
           "(Meta refuses them too, but %ld for a dtype the CPU's loops lack)\n",
           sets, sets - refused, refused, gaps);
    /* an op with a CPU kernel that this walk could not run is an op whose Meta kernel is not
     * shown to work: give build() what it needs to run it */
    CHECK(unrun == 0);
    CHECK(checked > 400 && refused > gaps);
    return check_result("test_cpu_meta_ops");
}
