/* test_cpu_fallback.c: sg_cpu_fallback over every op of schemas/aten_core.yaml that has a CPU
 * kernel, against the CPU kernel itself.
 *
 * For each op, arguments are built from its schema (small float, int64 or bool tensors of a few
 * shapes, defaults where written, plausible values otherwise) until the CPU kernel accepts a
 * set; ops whose arguments cannot be built (Dimname, str without a default, ...) or that no
 * set satisfies are counted as skipped. The same arguments, with their tensors copied to a
 * host-memory PrivateUse1 device ("npu", counting its allocations), go through sg_cpu_fallback,
 * and the results must agree: sizes, dtypes and bytes of every tensor result and every written
 * argument (bytes are skipped only for random and uninitialising ops), equal non-tensor results,
 * results on the device, and aliasing as the schema says: an in-place or out= result is the
 * very device tensor that was passed, a view shares its argument's device storage. */
#include "check.h"
#include "sg_aten_cpu.h"
#include "sg_runtime.h"
#include "host_device.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NPU ((sg_device){SG_DEV_PRIVATEUSE1, 0})

/* ---- building arguments ------------------------------------------------------------------ */

enum { MAXA = 32, NVARIANTS = 16 };

/* A variant: the shape and dtype of the tensors (out= tensors start empty with that dtype),
 * and whether optional arguments without a value of their own get one (fill) or None. */
typedef struct variant {
    int32_t  ndim;
    int64_t  sizes[3];
    sg_dtype dtype;
    bool     fill;
} variant;

static const variant variants[NVARIANTS] = {
    {2, {2, 3}, SG_FLOAT32, false},    {2, {3, 3}, SG_FLOAT32, false},
    {1, {4}, SG_FLOAT32, false},       {0, {0}, SG_FLOAT32, false},
    {2, {2, 3}, SG_INT64, false},      {2, {2, 3}, SG_BOOL, false},
    {2, {3, 3}, SG_INT64, false},      {3, {2, 3, 3}, SG_FLOAT32, false},
    {2, {2, 3}, SG_FLOAT32, true},     {2, {3, 3}, SG_FLOAT32, true},
    {1, {4}, SG_FLOAT32, true},        {2, {2, 3}, SG_INT64, true},
    {3, {2, 3, 3}, SG_FLOAT32, true},  {3, {2, 2, 3}, SG_FLOAT32, false},
    {3, {2, 2, 3}, SG_FLOAT32, true},  {0, {0}, SG_FLOAT32, true},
};

/* Everything one set of arguments owns. */
typedef struct argset {
    sg_any     a[MAXA];
    sg_tensor *lists[MAXA][2];
    int64_t    ints[MAXA][4];
    sg_complex cplx[MAXA];
    char       strs[MAXA][16];
} argset;

static sg_tensor *make(const variant *v, sg_dtype dtype, int kind, int seed) {
    sg_tensor *t = NULL;
    CHECK(sg_tensor_empty(v->sizes, v->ndim, dtype, SG_CPU, &t) == SG_OK);
    int64_t n = sg_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double x = kind == 1 ? (double)((i + seed) % 2) /* an index: 0 or 1 */
                             : 0.5 + 0.25 * (double)((i * 3 + seed) % 7);
        void  *p = (char *)sg_tensor_data(t) + i * (int64_t)sg_dtype_size(dtype);
        switch (dtype) {
        case SG_FLOAT32: *(float *)p = (float)x; break;
        case SG_INT64: *(int64_t *)p = kind == 1 ? (int64_t)x : (int64_t)(x * 4) % 5; break;
        case SG_BOOL: *(bool *)p = ((i + seed) % 3) != 0; break;
        default: break;
        }
    }
    return t;
}

static bool named(const char *n, const char *a) { return n && !strcmp(n, a); }

/* Parses a default's text into v; false where this test cannot. */
static bool parse_default(const sg_arg_info *in, int64_t *ints, char *str, sg_any *v) {
    const char *d = in->default_text;
    char       *end;
    if (!strcmp(d, "None")) return *v = sg_any_none(), true;
    if (!strcmp(d, "True") || !strcmp(d, "False")) return *v = sg_any_bool(d[0] == 'T'), true;
    if (!strcmp(d, "Mean")) return *v = sg_any_int(1), true;
    if (!strcmp(d, "contiguous_format"))
        return *v = (sg_any){SG_ANY_MEMORY_FORMAT, 0, {.i = SG_CONTIGUOUS_FORMAT}}, true;
    if (d[0] == '\'') {
        size_t n = strlen(d);
        if (n < 2 || n - 2 >= 16) return false;
        memcpy(str, d + 1, n - 2);
        str[n - 2] = '\0';
        *v = sg_any_str(str, (int32_t)(n - 2));
        return true;
    }
    if (d[0] == '[') {
        int32_t n = 0;
        for (const char *p = d + 1; *p && *p != ']' && n < 4;) {
            ints[n++] = strtoll(p, &end, 10);
            if (end == p) return false;
            p = end;
            while (*p == ',' || *p == ' ') p++;
        }
        *v = sg_any_int_list(ints, n);
        return true;
    }
    long long i = strtoll(d, &end, 10);
    bool      is_float = !strcmp(in->type, "float") || !strcmp(in->type, "float?");
    if (!*end && !is_float) return *v = sg_any_int(i), true;
    double f = strtod(d, &end);
    if (!*end) return *v = sg_any_float(f), true;
    return false;
}

/* Builds argument i of op for variant v on the CPU; false where it cannot. */
static bool build_arg(const sg_op *op, int32_t i, const variant *v, argset *s, int seed) {
    sg_arg_info in;
    CHECK(sg_op_arg_info(op, i, &in) == SG_OK);
    sg_any     *a = &s->a[i];
    const char *t = in.type, *n = in.name;
    *a = sg_any_none();
    if (in.is_out) {
        variant e = *v;
        e.ndim = 1, e.sizes[0] = 0; /* the kernel resizes it */
        sg_tensor *x = make(&e, v->dtype, 0, seed);
        *a = sg_any_tensor(x);
        return true;
    }
    if (!strcmp(t, "Tensor") && (named(n, "start") || named(n, "length"))) {
        variant z = {0, {0}, SG_INT64, false}; /* narrow.Tensor's 0-dim start */
        sg_tensor *x = make(&z, SG_INT64, 1, named(n, "length"));
        *a = sg_any_tensor(x);
        return true;
    }
    if (!strcmp(t, "Tensor") || (!strcmp(t, "Tensor?") && v->fill)) {
        bool     index = named(n, "index") || named(n, "indices");
        bool     mask = named(n, "mask") || named(n, "condition");
        sg_dtype dt = index ? SG_INT64 : mask ? SG_BOOL : v->dtype;
        *a = sg_any_tensor(make(v, dt, index ? 1 : 0, seed + i));
        return true;
    }
    if (!strcmp(t, "Tensor[]")) {
        s->lists[i][0] = make(v, v->dtype, 0, seed + i);
        s->lists[i][1] = make(v, v->dtype, 0, seed + i + 1);
        *a = sg_any_tensor_list(s->lists[i], 2);
        return true;
    }
    if (!strcmp(t, "Tensor?[]")) {
        variant iv = {1, {2}, SG_INT64, false};
        s->lists[i][0] = make(&iv, SG_INT64, 1, seed);
        *a = (sg_any){SG_ANY_OPT_TENSOR_LIST, 1, {.tensors = s->lists[i]}};
        return true;
    }
    if (in.has_default && !(v->fill && !strcmp(in.default_text, "None")))
        return parse_default(&in, s->ints[i], s->strs[i], a);
    if (!v->fill && t[strlen(t) - 1] == '?') return true; /* None */
    if (!strcmp(t, "Scalar?")) return *a = sg_any_float(0.75), true;
    if (t[strlen(t) - 1] == '?' && strcmp(t, "int?") && strcmp(t, "float?") && strcmp(t, "bool?"))
        return true; /* None where this test has no value to fill in */
    if (!strcmp(t, "str") && named(n, "reduce")) {
        memcpy(s->strs[i], "add", 4);
        *a = sg_any_str(s->strs[i], 3);
        return true;
    }
    if (!strncmp(t, "int", 3) && (t[3] == '\0' || t[3] == '?')) t = "int";
    if (!strcmp(t, "float?")) t = "float";
    if (!strcmp(t, "bool?")) t = "bool";
    if (!strcmp(t, "int") || !strcmp(t, "SymInt")) {
        *a = sg_any_int(named(n, "dim1") || named(n, "end") || named(n, "length") ||
                                named(n, "k") || named(n, "chunks") || named(n, "sections") ||
                                named(n, "n") || named(n, "repeats") || named(n, "split_size") ||
                                named(n, "num_groups") || named(n, "group")
                            ? 1
                            : 0);
        return true;
    }
    if (!strncmp(t, "int[", 4) || !strncmp(t, "SymInt[", 7)) {
        int32_t m = 0;
        if (named(n, "size") || named(n, "shape")) {
            for (; m < v->ndim; m++) s->ints[i][m] = v->sizes[m];
        } else if (named(n, "normalized_shape")) {
            if (v->ndim) s->ints[i][m++] = v->sizes[v->ndim - 1];
        } else if (named(n, "split_sizes") || named(n, "split_size")) {
            if (!v->ndim || v->sizes[0] < 2) return false;
            s->ints[i][m++] = 1, s->ints[i][m++] = v->sizes[0] - 1;
        } else if (named(n, "stride")) {
            if (v->ndim == 3) s->ints[i][m++] = v->sizes[1] * v->sizes[2];
            if (v->ndim >= 2) s->ints[i][m++] = v->sizes[v->ndim - 1];
            if (v->ndim >= 1) s->ints[i][m++] = 1;
        } else if (named(n, "dims") && v->ndim == 2) {
            s->ints[i][m++] = 1, s->ints[i][m++] = 0; /* permute */
        } else {
            s->ints[i][m++] = named(n, "dim") || named(n, "dims") ? 0 : 1;
        }
        *a = sg_any_int_list(s->ints[i], m);
        return true;
    }
    if (!strcmp(t, "float")) return *a = sg_any_float(0.5), true;
    if (!strcmp(t, "bool")) return *a = sg_any_bool(false), true;
    if (!strcmp(t, "Scalar"))
        return *a = v->dtype == SG_FLOAT32 ? sg_any_float(2.0) : sg_any_int(2), true;
    if (!strcmp(t, "ScalarType")) return *a = sg_any_dtype(v->dtype), true;
    if (!strcmp(t, "Device")) return *a = sg_any_device(SG_CPU), true;
    if (!strcmp(t, "complex")) {
        s->cplx[i] = (sg_complex){1, 0};
        *a = (sg_any){SG_ANY_COMPLEX, 0, {.c = &s->cplx[i]}};
        return true;
    }
    return false;
}

static void free_set(argset *s, int32_t nargs) {
    for (int32_t i = 0; i < nargs; i++) {
        if (s->a[i].tag == SG_ANY_TENSOR) sg_tensor_release(s->a[i].u.t);
        if (s->a[i].tag == SG_ANY_TENSOR_LIST || s->a[i].tag == SG_ANY_OPT_TENSOR_LIST)
            for (int32_t j = 0; j < s->a[i].len; j++) sg_tensor_release(s->lists[i][j]);
        s->a[i] = sg_any_none();
    }
}

/* A copy of t on dev, never t itself (a kernel may write it). */
static sg_tensor *clone(sg_tensor *t, sg_device dev) {
    sg_tensor *c = NULL;
    CHECK(sg_tensor_empty_strided(t->sizes, t->strides, t->ndim, (sg_dtype)t->dtype, dev, &c) ==
          SG_OK);
    CHECK(c && sg_tensor_copy_(c, t) == SG_OK);
    return c;
}

/* A copy of s with every tensor cloned onto dev (Device arguments become dev too). */
static void clone_set(const argset *s, int32_t nargs, sg_device dev, argset *out) {
    *out = *s;
    for (int32_t i = 0; i < nargs; i++) {
        const sg_any *v = &s->a[i];
        if (v->tag == SG_ANY_TENSOR) {
            out->a[i].u.t = clone(v->u.t, dev);
        } else if (v->tag == SG_ANY_TENSOR_LIST || v->tag == SG_ANY_OPT_TENSOR_LIST) {
            for (int32_t j = 0; j < v->len; j++)
                out->lists[i][j] = s->lists[i][j] ? clone(s->lists[i][j], dev) : NULL;
            out->a[i].u.tensors = out->lists[i];
        } else if (v->tag == SG_ANY_INT_LIST) {
            out->a[i].u.ints = out->ints[i];
        } else if (v->tag == SG_ANY_COMPLEX) {
            out->a[i].u.c = &out->cplx[i];
        } else if (v->tag == SG_ANY_STR) {
            out->a[i].u.s = out->strs[i];
        } else if (v->tag == SG_ANY_DEVICE) {
            out->a[i].u.dev = dev;
        }
    }
}

/* ---- comparing -------------------------------------------------------------------------- */

static const sg_op *cur_op;
static const char  *cur_name;

#define EXPECT(cond, ...)                                                             \
    do {                                                                              \
        check_count++;                                                                \
        if (!(cond)) {                                                                \
            check_failures++;                                                         \
            fprintf(stderr, "%s: %s: ", cur_name, #cond);                             \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
        }                                                                             \
    } while (0)

/* cpu and dev hold the same sizes and dtype, and (where values) the same bytes. */
static void same_tensor(const sg_tensor *cpu, sg_tensor *dev, bool values, const char *what) {
    EXPECT(cpu && dev, "%s: one side is missing", what);
    if (!cpu || !dev) return;
    bool sizes = cpu->ndim == dev->ndim && cpu->dtype == dev->dtype;
    for (int32_t d = 0; sizes && d < cpu->ndim; d++) sizes = cpu->sizes[d] == dev->sizes[d];
    EXPECT(sizes, "%s: sizes or dtype differ", what);
    if (!sizes || !values) return;
    sg_tensor *h = NULL, *hc = NULL, *cc = NULL;
    CHECK(sg_tensor_to(dev, SG_CPU, &h) == SG_OK);
    CHECK(sg_tensor_contiguous(h, &hc) == SG_OK);
    CHECK(sg_tensor_contiguous((sg_tensor *)cpu, &cc) == SG_OK);
    size_t n = sg_tensor_nbytes(cc);
    EXPECT(n == 0 || !memcmp(sg_tensor_data(cc), sg_tensor_data(hc), n), "%s: values differ", what);
    sg_tensor_release(cc);
    sg_tensor_release(hc);
    sg_tensor_release(h);
}

static bool on_expected_device(const sg_tensor *t, sg_device want) {
    return t && sg_device_eq(t->device, want);
}

static void compare(const sg_op *op, const argset *c, const argset *d, const sg_any *cr,
                    const sg_any *dr, int32_t nargs, int32_t nrets, bool values, sg_device want) {
    char what[64];
    for (int32_t i = 0; i < nrets; i++) {
        snprintf(what, sizeof what, "result %d", (int)i);
        EXPECT(cr[i].tag == dr[i].tag, "%s: tag %d vs %d", what, cr[i].tag, dr[i].tag);
        if (cr[i].tag != dr[i].tag) continue;
        int32_t a = sg_op_ret_alias_arg(op, i);
        switch (cr[i].tag) {
        case SG_ANY_TENSOR:
            same_tensor(cr[i].u.t, dr[i].u.t, values, what);
            if (a >= 0 && c->a[a].tag == SG_ANY_TENSOR && cr[i].u.t == c->a[a].u.t) {
                EXPECT(dr[i].u.t == d->a[a].u.t, "%s: not the device tensor passed in", what);
            } else if (a >= 0 && c->a[a].tag == SG_ANY_TENSOR &&
                       cr[i].u.t->storage == c->a[a].u.t->storage) {
                EXPECT(dr[i].u.t->storage == d->a[a].u.t->storage &&
                           dr[i].u.t->offset == cr[i].u.t->offset,
                       "%s: not a view of the device argument", what);
            } else {
                EXPECT(on_expected_device(dr[i].u.t, want), "%s: on the wrong device", what);
            }
            break;
        case SG_ANY_TENSOR_LIST:
        case SG_ANY_OPT_TENSOR_LIST:
            EXPECT(cr[i].len == dr[i].len, "%s: list lengths differ", what);
            for (int32_t j = 0; j < cr[i].len && j < dr[i].len; j++) {
                if (!cr[i].u.tensors[j] && !dr[i].u.tensors[j]) continue;
                same_tensor(cr[i].u.tensors[j], dr[i].u.tensors[j], values, what);
                EXPECT(on_expected_device(dr[i].u.tensors[j], want), "%s: on the wrong device", what);
                if (a >= 0 && c->a[a].tag == SG_ANY_TENSOR && cr[i].u.tensors[j] &&
                    cr[i].u.tensors[j]->storage == c->a[a].u.t->storage)
                    EXPECT(dr[i].u.tensors[j] && dr[i].u.tensors[j]->storage == d->a[a].u.t->storage,
                           "%s: item %d is not a view of the device argument", what, (int)j);
            }
            break;
        case SG_ANY_INT:
        case SG_ANY_FLOAT:
        case SG_ANY_BOOL:
        case SG_ANY_DTYPE:
            EXPECT(!memcmp(&cr[i].u, &dr[i].u, sizeof cr[i].u), "%s: values differ", what);
            break;
        case SG_ANY_INT_LIST:
        case SG_ANY_FLOAT_LIST:
            EXPECT(cr[i].len == dr[i].len && !memcmp(cr[i].u.p, dr[i].u.p, (size_t)cr[i].len * 8),
                   "%s: values differ", what);
            break;
        default: break;
        }
    }
    for (int32_t i = 0; i < nargs; i++) {
        sg_arg_info in;
        CHECK(sg_op_arg_info(op, i, &in) == SG_OK);
        if (!in.write) continue;
        snprintf(what, sizeof what, "written argument %d '%s'", (int)i, in.name);
        if (c->a[i].tag == SG_ANY_TENSOR) {
            same_tensor(c->a[i].u.t, d->a[i].u.t, values, what);
            EXPECT(on_expected_device(d->a[i].u.t, want), "%s: left the device", what);
        } else if (c->a[i].tag == SG_ANY_TENSOR_LIST) {
            for (int32_t j = 0; j < c->a[i].len; j++) {
                same_tensor(c->a[i].u.tensors[j], d->a[i].u.tensors[j], values, what);
                EXPECT(on_expected_device(d->a[i].u.tensors[j], want), "%s: left the device", what);
            }
        }
    }
}

/* Ops whose values are random or uninitialised: sizes and dtypes are compared, bytes not. */
static bool values_comparable(const char *name) {
    static const char *const words[] = {"rand", "bernoulli", "dropout", "normal", "uniform",
                                        "exponential", "multinomial", "geometric", "cauchy",
                                        "poisson", "empty", "resize"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(name, words[i])) return false;
    return true;
}

/* ---- the sweep --------------------------------------------------------------------------- */

typedef struct counts {
    int ops, no_cpu, unbuildable, rejected, checked, values_skipped;
} counts;

static void check_op(const sg_op *op, counts *k) {
    int32_t nargs = sg_op_nargs(op), nrets = sg_op_nrets(op);
    if (nargs > MAXA || nrets > 8) {
        k->unbuildable++;
        return;
    }
    bool built_any = false;
    for (int v = 0; v < NVARIANTS; v++) {
        argset s, c, d;
        bool   ok = true;
        memset(&s, 0, sizeof s);
        for (int32_t i = 0; i < nargs && ok; i++) ok = build_arg(op, i, &variants[v], &s, v);
        if (!ok) {
            free_set(&s, nargs);
            continue;
        }
        built_any = true;
        clone_set(&s, nargs, SG_CPU, &c);
        sg_any cr[8] = {{0}}, dr[8] = {{0}};
        sg_status st = sg_op_redispatch_boxed(op, SG_KEYSET(SG_KEY_CPU), c.a, cr, nrets);
        if (st) {
            for (int32_t r = 0; r < nrets; r++) sg_any_release(&cr[r]);
            free_set(&c, nargs);
            free_set(&s, nargs);
            continue;
        }
        bool      has_dev = false;
        for (int32_t i = 0; i < nargs; i++)
            has_dev |= s.a[i].tag == SG_ANY_TENSOR || s.a[i].tag == SG_ANY_TENSOR_LIST ||
                       s.a[i].tag == SG_ANY_OPT_TENSOR_LIST || s.a[i].tag == SG_ANY_DEVICE;
        clone_set(&s, nargs, NPU, &d);
        st = sg_cpu_fallback(op, SG_KEYSET(SG_KEY_PRIVATEUSE1), d.a, dr, nrets, NULL);
        EXPECT(st == SG_OK, "the fallback failed where the CPU kernel did not: %s",
               sg_last_error());
        bool values = values_comparable(cur_name);
        if (!st) compare(op, &c, &d, cr, dr, nargs, nrets, values, has_dev ? NPU : SG_CPU);
        for (int32_t r = 0; r < nrets; r++) {
            sg_any_release(&cr[r]);
            sg_any_release(&dr[r]);
        }
        free_set(&d, nargs);
        free_set(&c, nargs);
        free_set(&s, nargs);
        k->checked++;
        k->values_skipped += !values;
        return;
    }
    if (built_any)
        k->rejected++;
    else
        k->unbuildable++;
    printf("  skipped %s: %s\n", cur_name,
           built_any ? "the CPU kernel took none of the argument sets" : "arguments not built");
}

int main(void) {
    FILE *f = fopen(SG_TESTS_DIR "/../schemas/aten_core.yaml", "r");
    if (!f) SKIP("schemas/aten_core.yaml not found");
    CHECK(sg_aten_cpu_init() == SG_OK);
    CHECK(sg_device_impl_register(SG_DEV_PRIVATEUSE1, &host_device) == SG_OK);
    CHECK(sg_device_rename(SG_DEV_PRIVATEUSE1, "npu") == SG_OK);
    CHECK(sg_fallback_impl(SG_KEY_PRIVATEUSE1, sg_cpu_fallback, NULL, NULL) == SG_OK);
    counts k = {0};
    char   line[4096];
    while (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "- func: ");
        if (!p || p != line) continue;
        p += 8;
        char name[256], full[300];
        size_t n = strcspn(p, "(");
        if (n >= sizeof name) continue;
        memcpy(name, p, n);
        name[n] = '\0';
        char *dot = strchr(name, '.');
        if (dot) *dot = '\0';
        sg_op *op = NULL;
        snprintf(full, sizeof full, "aten::%s", name);
        CHECK(sg_op_find(full, dot ? dot + 1 : "", &op) == SG_OK);
        if (!op) continue;
        snprintf(full, sizeof full, "aten::%s%s%s", name, dot ? "." : "", dot ? dot + 1 : "");
        cur_op = op;
        cur_name = full;
        k.ops++;
        sg_entry e = sg_op_entry(op, SG_KEY_CPU);
        if (e.kind == SG_ENTRY_MISSING || e.kind == SG_ENTRY_FALLTHROUGH) {
            k.no_cpu++;
            continue;
        }
        check_op(op, &k);
    }
    fclose(f);
    printf("aten_core.yaml: %d ops, %d without a CPU kernel; of the rest, %d checked through "
           "sg_cpu_fallback (%d of them on sizes and dtypes only: random or uninitialised), "
           "%d skipped: arguments not built, %d skipped: no argument set the CPU kernel took\n",
           k.ops, k.no_cpu, k.checked, k.values_skipped, k.unbuildable, k.rejected);
    CHECK(k.checked > 0 && k.checked * 4 >= (k.ops - k.no_cpu) * 3);
    CHECK(host_dev_allocs > k.checked); /* the device's own allocator served the device tensors */
    sg_runtime_shutdown();
    return check_result("test_cpu_fallback");
}
