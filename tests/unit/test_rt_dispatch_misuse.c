/* test_rt_dispatch_misuse.c: the dispatcher's public calls given NULL, keys that are no keys, and boxed
 * values that are malformed: each returns SG_EINVAL with a message, crashes nothing, writes
 * nothing out of bounds and runs no kernel. And the messages of failed calls: a missing kernel
 * names the devices that chose its backend, a composite's missing inner kernel is reported
 * under the op the user called (sg_op_error_via), and a failed lookup lists the overloads or
 * the nearest name. */
#define _DEFAULT_SOURCE /* mmap, mkstemp */
#include "rt_check.h"
#include "sg_api.h"
#include "sg_runtime.h"

#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

static float cpu_buf[8], cuda_buf[8];

static sg_tensor *tensor_on(sg_device dev) {
    int64_t    sizes[1] = {4};
    sg_tensor *t = NULL;
    void      *data = dev.type == SG_DEV_CPU ? (void *)cpu_buf : (void *)cuda_buf;
    CHECK(sg_tensor_from_blob(data, sizes, NULL, 1, SG_FLOAT32, dev, 0, NULL, NULL, &t) == SG_OK);
    return t;
}

static int ran;

/* Returns its first argument where that is a tensor. */
static sg_status kernel(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                        int32_t nrets, void *ctx) {
    int32_t nargs = sg_op_nargs(op);
    (void)ctx, (void)op, (void)ks;
    ran++;
    if (nargs > 0 && nrets > 0 && args[0].tag == SG_ANY_TENSOR)
        rets[0] = sg_any_tensor(sg_tensor_retain(args[0].u.t));
    return SG_OK;
}

static bool pred_yes(void *ctx, const sg_op *op, sg_keyset ks, const sg_any *args,
                     int32_t nargs) {
    (void)ctx, (void)op, (void)ks, (void)args, (void)nargs;
    return true;
}

/* st is SG_EINVAL and the message starts with prefix. */
#define CHECK_EINVAL(st, prefix)                                                           \
    do {                                                                                   \
        CHECK((st) == SG_EINVAL);                                                          \
        CHECK(strncmp(sg_last_error(), (prefix), strlen(prefix)) == 0);                    \
        if (strncmp(sg_last_error(), (prefix), strlen(prefix)) != 0)                       \
            fprintf(stderr, "  message: %s\n", sg_last_error());                           \
    } while (0)

/* ---- NULL handles and keys that are no keys --------------------------------------------- */

static void null_handles(void) {
    sg_op     *op = (sg_op *)1, *abs_op = define("m1::abs(Tensor self) -> Tensor");
    sg_handle *h = (sg_handle *)1;
    sg_kernel  k = {NULL, kernel, NULL};

    CHECK_EINVAL(sg_op_define(NULL, &op), "sg_op_define: no schema given");
    CHECK(op == NULL);
    CHECK_EINVAL(sg_op_define("m1::f(Tensor a) -> Tensor", NULL), "sg_op_define: no out pointer");
    CHECK_EINVAL(sg_op_find(NULL, "", &op), "sg_op_find: no name given");
    CHECK_EINVAL(sg_op_find("m1::abs", "", NULL), "sg_op_find: no out pointer");

    /* the accessors answer "" and -1 for no op */
    CHECK_STR(sg_op_name(NULL), "");
    CHECK_STR(sg_op_overload(NULL), "");
    CHECK_STR(sg_op_schema(NULL), "");
    CHECK(sg_op_nargs(NULL) == -1 && sg_op_nrets(NULL) == -1);

    /* sg_op_impl(NULL, ...) used to succeed and install a fallback for every op */
    CHECK_EINVAL(sg_op_impl(NULL, SG_KEY_CPU, k, &h), "sg_op_impl: no op given (NULL)");
    CHECK(h == NULL);
    sg_tensor *cpu = tensor_on(SG_CPU);
    sg_any     arg = sg_any_tensor(cpu), ret;
    ran = 0;
    CHECK(sg_op_call_boxed(abs_op, &arg, 1, &ret, 1) == SG_ENOKERNEL && ran == 0);
    /* ... and with an alias key it wrote past the fallbacks' array */
    CHECK_EINVAL(sg_op_impl(NULL, SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, k, NULL),
                 "sg_op_impl: no op given");
    CHECK_EINVAL(sg_op_impl(NULL, SG_KEY_AUTOGRAD, k, NULL), "sg_op_impl: no op given");
    CHECK_EINVAL(sg_op_impl_fallthrough(NULL, SG_KEY_AUTOGRAD, NULL),
                 "sg_op_impl_fallthrough: no op given");
    CHECK_EINVAL(sg_op_override(NULL, SG_KEY_CPU, 0, NULL, NULL, NULL, &h),
                 "sg_op_override: no op given");
    CHECK_EINVAL(sg_op_override(NULL, SG_KEY_CPU, 0, pred_yes, kernel, NULL, &h),
                 "sg_op_override: no op given");
    CHECK_EINVAL(sg_handle_release(NULL), "sg_handle_release: no handle given");

    /* keys: past the table, between the table and the alias keys, negative, Undefined */
    sg_key bad[] = {SG_KEY__COUNT, (sg_key)20, (sg_key)31, SG_KEY__ALIAS_END, (sg_key)99,
                    (sg_key)-1, (sg_key)1000};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "sg_op_impl: %d is not a dispatch key", (int)bad[i]);
        CHECK_EINVAL(sg_op_impl(abs_op, bad[i], k, &h), want);
        CHECK(h == NULL);
        CHECK_EINVAL(sg_op_impl_fallthrough(abs_op, bad[i], NULL), "sg_op_impl_fallthrough: ");
        CHECK_EINVAL(sg_fallback_impl(bad[i], kernel, NULL, NULL), "sg_fallback_impl: ");
        CHECK_EINVAL(sg_fallback_fallthrough(bad[i], NULL), "sg_fallback_fallthrough: ");
        CHECK_EINVAL(sg_op_override(abs_op, bad[i], 0, pred_yes, kernel, NULL, NULL),
                     "sg_op_override: ");
        sg_entry e = sg_op_entry(abs_op, bad[i]);
        CHECK(e.boxed == NULL && e.unboxed == NULL && e.kind == SG_ENTRY_MISSING);
        CHECK(sg_last_status() == SG_EINVAL);
    }
    CHECK_EINVAL(sg_op_impl(abs_op, SG_KEY_UNDEFINED, k, NULL),
                 "sg_op_impl: Undefined is a key nothing can be registered for");
    /* alias keys take op kernels, not fallbacks or overrides */
    CHECK_EINVAL(sg_fallback_impl(SG_KEY_AUTOGRAD, kernel, NULL, NULL),
                 "sg_fallback_impl: Autograd is an alias key");
    CHECK_EINVAL(sg_fallback_fallthrough(SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD, NULL),
                 "sg_fallback_fallthrough: CompositeImplicitAutograd is an alias key");
    CHECK_EINVAL(sg_op_override(abs_op, SG_KEY_AUTOGRAD, 0, pred_yes, kernel, NULL, NULL),
                 "sg_op_override: 32 (Autograd) is not a dispatch key with a table entry");
    /* none of it registered anything */
    ran = 0;
    CHECK(sg_op_call_boxed(abs_op, &arg, 1, &ret, 1) == SG_ENOKERNEL && ran == 0);

    sg_entry e = sg_op_entry(NULL, SG_KEY_CPU);
    CHECK(e.boxed == NULL && e.kind == SG_ENTRY_MISSING);
    CHECK_EINVAL(sg_last_status(), "sg_op_entry: no op given");

    /* calls */
    CHECK_EINVAL(sg_op_call_boxed(NULL, &arg, 1, &ret, 1), "sg_op_call_boxed: no op given");
    CHECK_EINVAL(sg_op_call_boxed(abs_op, NULL, 1, &ret, 1),
                 "m1::abs: 1 argument, but args is NULL");
    CHECK_EINVAL(sg_op_call_boxed(abs_op, &arg, 1, NULL, 1),
                 "m1::abs: 1 result slot, but rets is NULL");
    CHECK_EINVAL(sg_op_call_boxed(abs_op, &arg, -1, &ret, 1), "m1::abs: expected 1 argument");
    CHECK_EINVAL(sg_op_redispatch_boxed(NULL, SG_KEYSET(SG_KEY_CPU), &arg, &ret, 1),
                 "sg_op_redispatch_boxed: no op given");
    CHECK_EINVAL(sg_op_redispatch_boxed(abs_op, SG_KEYSET(SG_KEY_CPU), NULL, &ret, 1),
                 "sg_op_redispatch_boxed: m1::abs: args is NULL");
    CHECK_EINVAL(sg_op_redispatch_boxed(abs_op, SG_KEYSET(SG_KEY_CPU), &arg, NULL, 1),
                 "sg_op_redispatch_boxed: m1::abs: rets is NULL");
    CHECK_EINVAL(sg_call_by_name(NULL, "", &arg, 1, &ret, 1), "sg_op_find: no name given");
    CHECK(sg_op_keys_of_args(NULL, &arg, 1) == 0);
    CHECK(sg_op_keys_of_args(abs_op, NULL, 1) == 0);
    sg_any null_tensor = {SG_ANY_TENSOR, 0, {.t = NULL}};
    CHECK(sg_op_keys_of_args(abs_op, &null_tensor, 1) == 0);
    CHECK(sg_op_keys_of_args(abs_op, &arg, 1) == cpu->keys);
    CHECK_EINVAL(sg_op_check_writable(NULL, 0, cpu), "sg_op_check_writable: no op given");

    /* an op of no arguments and no results takes NULL for both */
    sg_op     *nothing = define("m1::nothing() -> ()");
    sg_handle *hn;
    CHECK(sg_op_impl(nothing, SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, k, &hn) == SG_OK);
    ran = 0;
    CHECK(sg_op_call_boxed(nothing, NULL, 0, NULL, 0) == SG_OK && ran == 1);
    CHECK(sg_handle_release(hn) == SG_OK);
    sg_tensor_release(cpu);
}

/* ---- boxed values that are malformed ----------------------------------------------------- */

static void malformed_values(void) {
    sg_op *op = define("m2::f(Tensor[] ts, Tensor?[] os, int[] ns, float[] fs, bool[] bs, "
                       "Scalar[] ss, str s, ScalarType dt, Layout lay, MemoryFormat mf, "
                       "Device dev, bool b, complex c, str[] strs) -> Tensor");
    sg_handle *h;
    CHECK(sg_op_impl(op, SG_KEY_CPU, (sg_kernel){NULL, kernel, NULL}, &h) == SG_OK);
    sg_tensor  *cpu = tensor_on(SG_CPU);
    sg_tensor  *ts[2] = {cpu, cpu};
    int64_t     ns[2] = {1, 2};
    double      fs[2] = {1, 2};
    bool        bs[2] = {true, false};
    sg_any      ss[2] = {sg_any_int(1), sg_any_float(2)};
    sg_any      strs[1] = {sg_any_str("x", 1)};
    sg_complex  c = {1, 2};
    sg_any good[14] = {
        sg_any_tensor_list(ts, 2),     {SG_ANY_OPT_TENSOR_LIST, 2, {.tensors = ts}},
        sg_any_int_list(ns, 2),        {SG_ANY_FLOAT_LIST, 2, {.floats = fs}},
        {SG_ANY_BOOL_LIST, 2, {.bools = bs}}, {SG_ANY_LIST, 2, {.items = ss}},
        sg_any_str("abc", 3),          sg_any_dtype(SG_FLOAT32),
        {SG_ANY_LAYOUT, 0, {.i = SG_STRIDED}}, {SG_ANY_MEMORY_FORMAT, 0, {.i = SG_CHANNELS_LAST}},
        sg_any_device(SG_CPU),         sg_any_bool(true),
        {SG_ANY_COMPLEX, 0, {.c = &c}}, {SG_ANY_LIST, 1, {.items = strs}},
    };
    sg_any ret;
    ran = 0;
    CHECK(sg_op_call_boxed(op, good, 14, &ret, 1) == SG_OK && ran == 1);
    sg_any_release(&ret);

    struct {
        int         arg;
        sg_any      v;
        const char *msg;
    } bad[] = {
        {0, {SG_ANY_TENSOR_LIST, 2, {.tensors = NULL}},
         "argument 0 'ts' holds a NULL item pointer with a nonzero length"},
        {0, {SG_ANY_TENSOR_LIST, -1, {.tensors = ts}}, "argument 0 'ts' holds a list of negative"},
        {1, {SG_ANY_OPT_TENSOR_LIST, 3, {.tensors = NULL}}, "argument 1 'os' holds a NULL item"},
        {2, {SG_ANY_INT_LIST, 5, {.ints = NULL}}, "argument 2 'ns' holds a NULL item pointer"},
        {2, {SG_ANY_INT_LIST, -5, {.ints = ns}}, "argument 2 'ns' holds a list of negative"},
        {3, {SG_ANY_FLOAT_LIST, 1, {.floats = NULL}}, "argument 3 'fs' holds a NULL item"},
        {4, {SG_ANY_BOOL_LIST, 2, {.bools = NULL}}, "argument 4 'bs' holds a NULL item"},
        {5, {SG_ANY_LIST, 2, {.items = NULL}}, "argument 5 'ss' holds a NULL item pointer"},
        {5, {SG_ANY_LIST, 1, {.items = strs}},
         "argument 5 'ss' holds an item of a type the list does not take"},
        {6, {SG_ANY_STR, 0, {.s = NULL}}, "argument 6 's' holds a NULL string"},
        {7, {SG_ANY_DTYPE, 0, {.i = 99}}, "argument 7 'dt' holds a number that is no ScalarType"},
        {7, {SG_ANY_DTYPE, 0, {.i = -1}}, "argument 7 'dt' holds a number that is no ScalarType"},
        {8, {SG_ANY_LAYOUT, 0, {.i = SG_JAGGED + 1}}, "argument 8 'lay' holds a number that is no Layout"},
        {9, {SG_ANY_MEMORY_FORMAT, 0, {.i = 1 << 20}},
         "argument 9 'mf' holds a number that is no MemoryFormat"},
        {10, {SG_ANY_DEVICE, 0, {.dev = {50, 0}}},
         "argument 10 'dev' holds a device type or index that does not exist"},
        {11, {SG_ANY_BOOL, 0, {.i = 2}}, "argument 11 'b' holds a bool that is neither 0 nor 1"},
        {12, {SG_ANY_COMPLEX, 0, {.c = NULL}}, "argument 12 'c' holds a NULL complex pointer"},
        {13, {SG_ANY_LIST, 1, {.items = ss}},
         "argument 13 'strs' holds an item of a type the list does not take"},
        {0, {77, 0, {.p = NULL}}, "argument 0 'ts' expects Tensor[], got tag 77, which is no tag"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sg_any args[14];
        memcpy(args, good, sizeof args);
        args[bad[i].arg] = bad[i].v;
        char want[160];
        snprintf(want, sizeof want, "m2::f: %s", bad[i].msg);
        ran = 0;
        CHECK_EINVAL(sg_op_call_boxed(op, args, 14, &ret, 1), want);
        CHECK(ran == 0 && ret.tag == SG_ANY_NONE);
    }
    /* a bool list's items are checked one by one */
    unsigned char two[2] = {1, 2};
    sg_any        args[14];
    memcpy(args, good, sizeof args);
    args[4].u.bools = (const bool *)(const void *)two;
    CHECK_EINVAL(sg_op_call_boxed(op, args, 14, &ret, 1),
                 "m2::f: argument 4 'bs' holds a bool item that is neither 0 nor 1");
    CHECK(sg_handle_release(h) == SG_OK);
    sg_tensor_release(cpu);
}

/* Ops of one argument that takes a tensor, boxed: each refusal is named (NULL args, a NULL
 * tensor, another tag, NULL rets), and the checks beyond tags hold (a written argument, None
 * for an optional tensor, any value for Any). */
static void one_tensor(void) {
    sg_op *plain = define("m6::plain(Tensor self) -> Tensor");
    sg_op *opt = define("m6::opt(Tensor? self) -> Tensor");
    sg_op *inplace = define("m6::inplace(Tensor(a!) self) -> Tensor(a!)");
    sg_op *any = define("m6::any(Any self) -> Tensor");
    sg_handle *h[4];
    sg_op *ops[4] = {plain, opt, inplace, any};
    for (int i = 0; i < 4; i++)
        CHECK(sg_op_impl(ops[i], SG_KEY_CPU, (sg_kernel){NULL, kernel, NULL}, &h[i]) == SG_OK);
    sg_tensor *cpu = tensor_on(SG_CPU);
    sg_any     t = sg_any_tensor(cpu), ret;
    for (int i = 0; i < 4; i++) { /* a tensor: the kernel runs, the result is its argument */
        ran = 0;
        CHECK(sg_op_call_boxed(ops[i], &t, 1, &ret, 1) == SG_OK && ran == 1);
        CHECK(ret.tag == SG_ANY_TENSOR && ret.u.t == cpu);
        sg_any_release(&ret);
    }
    ran = 0;
    CHECK_EINVAL(sg_op_call_boxed(plain, NULL, 1, &ret, 1), "m6::plain: 1 argument, but args is NULL");
    sg_any null_t = {SG_ANY_TENSOR, 0, {.t = NULL}}, five = sg_any_int(5), none = sg_any_none();
    CHECK_EINVAL(sg_op_call_boxed(plain, &null_t, 1, &ret, 1),
                 "m6::plain: argument 0 'self' holds a NULL tensor");
    CHECK_EINVAL(sg_op_call_boxed(plain, &five, 1, &ret, 1),
                 "m6::plain: argument 0 'self' expects Tensor, got int");
    CHECK_EINVAL(sg_op_call_boxed(plain, &none, 1, &ret, 1),
                 "m6::plain: argument 0 'self' expects Tensor, got None");
    CHECK_EINVAL(sg_op_call_boxed(plain, &t, 1, NULL, 1), "m6::plain: 1 result slot, but rets is NULL");
    CHECK(ran == 0);
    /* None where a tensor is optional, an int where Any is taken: accepted, and with no tensor
     * no backend is selected */
    CHECK(sg_op_call_boxed(opt, &none, 1, &ret, 1) == SG_ENOKERNEL && ret.tag == SG_ANY_NONE);
    CHECK(strstr(sg_last_error(), "m6::opt") && strstr(sg_last_error(), "select no backend"));
    CHECK(sg_op_call_boxed(any, &five, 1, &ret, 1) == SG_ENOKERNEL);
    CHECK(strstr(sg_last_error(), "m6::any") && strstr(sg_last_error(), "select no backend"));
    /* a read-only tensor where the op writes: refused before the kernel */
    int64_t    sizes[1] = {4};
    sg_tensor *ro = NULL;
    CHECK(sg_tensor_from_blob(cpu_buf, sizes, NULL, 1, SG_FLOAT32, SG_CPU, SG_STORAGE_READ_ONLY,
                              NULL, NULL, &ro) == SG_OK);
    sg_any rov = sg_any_tensor(ro);
    CHECK(sg_op_call_boxed(inplace, &rov, 1, &ret, 1) == SG_EREADONLY && ran == 0);
    CHECK(ret.tag == SG_ANY_NONE);
    /* a refused call's slots are None, whatever they held */
    ret = sg_any_int(5);
    CHECK(sg_op_call_boxed(inplace, &rov, 1, &ret, 1) == SG_EREADONLY && ret.tag == SG_ANY_NONE);
    ret = sg_any_int(5);
    CHECK(sg_op_call_boxed(plain, &five, 1, &ret, 1) == SG_EINVAL && ret.tag == SG_ANY_NONE);
    ret = sg_any_int(5);
    CHECK(sg_op_call_boxed(plain, &t, 2, &ret, 1) == SG_EINVAL && ret.tag == SG_ANY_NONE);
    ret = sg_any_int(5);
    CHECK(sg_op_call_boxed(NULL, &t, 1, &ret, 1) == SG_EINVAL && ret.tag == SG_ANY_NONE);
    for (int i = 0; i < 4; i++) CHECK(sg_handle_release(h[i]) == SG_OK);
    sg_tensor_release(ro);
    sg_tensor_release(cpu);
}

/* The typed path's boxing (a generated wrapper whose entry has no typed kernel) hands a boxed
 * kernel no NULL tensor either. */
static void typed_boxing(void) {
    sg_op     *op = define("m5::f(Tensor self, Tensor[] others) -> Tensor");
    sg_handle *h;
    CHECK(sg_op_impl(op, SG_KEY_CPU, (sg_kernel){NULL, kernel, NULL}, &h) == SG_OK);
    sg_tensor     *cpu = tensor_on(SG_CPU), *out = NULL;
    sg_tensor     *items[2] = {cpu, NULL};
    sg_tensor_list two = {items, 1}, with_null = {items, 2}, no_items = {NULL, 3};
    sg_keyset      ks = sg_tls_apply(cpu->keys);
    const sg_entry *e = sg_dispatch_entry(op, ks);
    ran = 0;
    CHECK(sg_call_boxed_sig(e, op, ks, "tl>t", cpu, two, &out) == SG_OK && ran == 1 && out == cpu);
    sg_tensor_release(out);
    out = NULL;
    CHECK_EINVAL(sg_call_boxed_sig(e, op, ks, "tl>t", (sg_tensor *)NULL, two, &out),
                 "m5::f: argument 0 'self' is a NULL tensor");
    CHECK_EINVAL(sg_call_boxed_sig(e, op, ks, "tl>t", cpu, with_null, &out),
                 "m5::f: argument 1 'others' is a NULL tensor, or a tensor list with a NULL");
    CHECK_EINVAL(sg_call_boxed_sig(e, op, ks, "tl>t", cpu, no_items, &out),
                 "m5::f: argument 1 'others' is a NULL tensor, or a tensor list with a NULL");
    CHECK(ran == 1 && out == NULL);
    CHECK_EINVAL(sg_call_boxed_sig(NULL, op, ks, "tl>t", cpu, two, &out),
                 "sg_call_boxed_sig: no entry given");
    CHECK(sg_handle_release(h) == SG_OK);
    sg_tensor_release(cpu);
}

/* ---- messages: the devices behind a backend, and the op the user called ------------------ */

static sg_op *outer_op, *inner_op;

/* outer's CompositeExplicitAutograd kernel: inner (an out= op) into a fresh tensor, as a
 * structured op's generated kernel computes it. */
static sg_status outer_composite(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                                 int32_t nrets, void *ctx) {
    (void)ctx, (void)nrets;
    sg_any    a[2] = {args[0], args[0]}, r = sg_any_none();
    sg_status st = sg_op_redispatch_boxed(inner_op, ks, a, &r, 1);
    if (st) return sg_op_error_via(st, op, inner_op);
    rets[0] = r;
    return SG_OK;
}

/* top computes itself through outer (two levels of composites). */
static sg_op *top_op;
static sg_status top_composite(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                               int32_t nrets, void *ctx) {
    (void)ctx;
    sg_status st = sg_op_redispatch_boxed(outer_op, ks, args, rets, nrets);
    return st ? sg_op_error_via(st, op, outer_op) : SG_OK;
}

static sg_status fails_other(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                             int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)ks, (void)args, (void)rets, (void)nrets;
    return sg_error(SG_ENOKERNEL, "a kernel's own message");
}

static void messages(void) {
    outer_op = define("m3::add.Tensor(Tensor self) -> Tensor");
    inner_op = define("m3::add.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
    top_op = define("m3::top(Tensor self) -> Tensor");
    sg_handle *hc, *hi, *ht;
    CHECK(sg_op_impl(outer_op, SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD,
                     (sg_kernel){NULL, outer_composite, NULL}, &hc) == SG_OK);
    CHECK(sg_op_impl(inner_op, SG_KEY_CPU, (sg_kernel){NULL, kernel, NULL}, &hi) == SG_OK);
    CHECK(sg_op_impl(top_op, SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD,
                     (sg_kernel){NULL, top_composite, NULL}, &ht) == SG_OK);
    sg_tensor *cpu = tensor_on(SG_CPU), *cuda = tensor_on(SG_CUDA(0));
    sg_any     arg = sg_any_tensor(cpu), ret;

    ran = 0;
    CHECK(sg_op_call_boxed(outer_op, &arg, 1, &ret, 1) == SG_OK && ran == 1);
    sg_any_release(&ret);

    /* the inner op's own message names the devices */
    sg_any two[2] = {sg_any_tensor(cuda), sg_any_tensor(cuda)};
    CHECK(sg_op_call_boxed(inner_op, two, 2, &ret, 1) == SG_ENOKERNEL);
    CHECK_STR(sg_last_error(), "could not run 'm3::add.out' with arguments from the 'CUDA' "
                               "backend (tensors on cuda:0); kernels are registered for: CPU");
    /* a CPU scalar may sit beside a CUDA tensor (aten's rule), and is named too */
    sg_tensor *scalar = NULL;
    CHECK(sg_tensor_from_blob(cpu_buf, NULL, NULL, 0, SG_FLOAT32, SG_CPU, 0, NULL, NULL,
                              &scalar) == SG_OK);
    two[0] = sg_any_tensor(scalar);
    two[1] = sg_any_tensor(cuda);
    CHECK(sg_op_call_boxed(inner_op, two, 2, &ret, 1) == SG_ENOKERNEL);
    CHECK_STR(sg_last_error(), "could not run 'm3::add.out' with arguments from the 'CUDA' "
                               "backend (tensors on cpu, cuda:0); kernels are registered for: "
                               "CPU");
    sg_tensor_release(scalar);

    /* through the composite, the message names what the user called */
    arg = sg_any_tensor(cuda);
    CHECK(sg_op_call_boxed(outer_op, &arg, 1, &ret, 1) == SG_ENOKERNEL);
    CHECK_STR(sg_last_error(), "could not run 'm3::add.Tensor' with arguments from the 'CUDA' "
                               "backend (tensors on cuda:0): it is computed through "
                               "'m3::add.out', which has no CUDA kernel (kernels are registered "
                               "for: CPU)");
    /* two levels */
    CHECK(sg_op_call_boxed(top_op, &arg, 1, &ret, 1) == SG_ENOKERNEL);
    CHECK_STR(sg_last_error(), "could not run 'm3::top' with arguments from the 'CUDA' backend "
                               "(tensors on cuda:0): it is computed through 'm3::add.Tensor', "
                               "then 'm3::add.out', which has no CUDA kernel (kernels are "
                               "registered for: CPU)");

    /* an ENOKERNEL that is not the dispatcher's, and other statuses, pass unchanged */
    sg_handle *hf;
    CHECK(sg_op_impl(inner_op, SG_KEY_CUDA, (sg_kernel){NULL, fails_other, NULL}, &hf) == SG_OK);
    CHECK(sg_op_call_boxed(outer_op, &arg, 1, &ret, 1) == SG_ENOKERNEL);
    CHECK_STR(sg_last_error(), "a kernel's own message");
    CHECK(sg_handle_release(hf) == SG_OK);
    sg_error(SG_EINVAL, "unrelated");
    CHECK(sg_op_error_via(SG_EINVAL, outer_op, inner_op) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "unrelated");
    CHECK(sg_op_error_via(SG_ENOKERNEL, NULL, inner_op) == SG_ENOKERNEL);
    CHECK_STR(sg_last_error(), "unrelated");

    CHECK(sg_handle_release(hc) == SG_OK && sg_handle_release(hi) == SG_OK &&
          sg_handle_release(ht) == SG_OK);
    sg_tensor_release(cpu);
    sg_tensor_release(cuda);
}

static void lookups(void) {
    define("m4::add.Tensor(Tensor self, Tensor other) -> Tensor");
    define("m4::add.Scalar(Tensor self, Scalar other) -> Tensor");
    define("m4::add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
    define("m4::frobnicate(Tensor self) -> Tensor");
    define("frobnicate_all(Tensor self) -> Tensor");
    sg_op *op = (sg_op *)1;
    CHECK(sg_op_find("m4::add", "Tnsor", &op) == SG_ENOTFOUND && op == NULL);
    CHECK_STR(sg_last_error(), "no op m4::add.Tnsor is defined; m4::add has overloads: Tensor, "
                               "Scalar, out");
    CHECK(sg_op_find("m4::add", NULL, &op) == SG_ENOTFOUND);
    CHECK_STR(sg_last_error(), "no op m4::add is defined; m4::add has overloads: Tensor, Scalar, "
                               "out");
    CHECK(sg_op_find("m4::frobnicat", "", &op) == SG_ENOTFOUND);
    CHECK_STR(sg_last_error(), "no op m4::frobnicat is defined; did you mean m4::frobnicate?");
    CHECK(sg_op_find("frobnicate_al", "", &op) == SG_ENOTFOUND);
    CHECK_STR(sg_last_error(), "no op aten::frobnicate_al is defined; did you mean "
                               "aten::frobnicate_all?");
    /* no near miss: no suggestion */
    CHECK(sg_op_find("m4::zzz", "", &op) == SG_ENOTFOUND);
    CHECK_STR(sg_last_error(), "no op m4::zzz is defined");
    CHECK(sg_op_find("m4::frobnicate", "", &op) == SG_OK && op);
}

/* The boxed call's fast loop takes tensors and plain values from the last argument down, and
 * hands anything else to a check from the first argument on: a message names the first
 * argument that is wrong, wherever others are. */
static void first_wrong_named(void) {
    sg_op *op;
    CHECK(sg_op_define("m1::three(Tensor a, int n, Tensor b) -> Tensor", &op) == SG_OK);
    sg_tensor *t = tensor_on(SG_CPU);
    sg_any     null_t = {SG_ANY_TENSOR, 0, {.t = NULL}}, ret;
    sg_any     args[3] = {null_t, sg_any_int(1), null_t};
    CHECK_EINVAL(sg_op_call_boxed(op, args, 3, &ret, 1),
                 "m1::three: argument 0 'a' holds a NULL tensor");
    args[0] = sg_any_tensor(t);
    CHECK_EINVAL(sg_op_call_boxed(op, args, 3, &ret, 1),
                 "m1::three: argument 2 'b' holds a NULL tensor");
    args[0] = sg_any_float(1);
    CHECK_EINVAL(sg_op_call_boxed(op, args, 3, &ret, 1),
                 "m1::three: argument 0 'a' expects Tensor, got float");
    args[0] = sg_any_tensor(t);
    args[1] = sg_any_float(1);
    args[2] = sg_any_tensor(t);
    CHECK_EINVAL(sg_op_call_boxed(op, args, 3, &ret, 1),
                 "m1::three: argument 1 'n' expects int, got float");
    /* all well: the call gets as far as the missing kernel */
    args[1] = sg_any_int(1);
    CHECK(sg_op_call_boxed(op, args, 3, &ret, 1) == SG_ENOKERNEL);
    CHECK(ret.tag == SG_ANY_NONE);
    sg_tensor_release(t);
}

/* Numbers at the edges: key numbers beyond every key in sg_keyset_below (a shift by 64 or more
 * would be undefined), and a string too long for a boxed length. */
static void limits(void) {
    sg_keyset ks = SG_KEYSET(SG_KEY_CPU) | SG_KEYSET(SG_KEY_AUTOGRAD_CPU);
    CHECK(sg_keyset_below(ks, SG_KEY_AUTOGRAD_CPU) == SG_KEYSET(SG_KEY_CPU));
    CHECK(sg_keyset_below(ks, (sg_key)63) == ks);
    CHECK(sg_keyset_below(ks, (sg_key)64) == ks);
    CHECK(sg_keyset_below(ks, (sg_key)1000) == ks);
    CHECK(sg_keyset_below(ks, (sg_key)-1) == 0);
#ifdef __linux__
    /* 2 GiB of 'a' then a NUL, without 2 GiB of memory: one 1 MiB page run of 'a' mapped 2048
     * times side by side, and a zero page after them */
    const size_t chunk = (size_t)1 << 20, n = 2048, total = chunk * n + 4096;
    char        *base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char         path[] = "/tmp/sg_box_strXXXXXX";
    int          fd = base == MAP_FAILED ? -1 : mkstemp(path);
    bool         ok = fd >= 0;
    if (fd >= 0) unlink(path);
    if (ok) {
        char *a = malloc(chunk);
        ok = a && (memset(a, 'a', chunk), write(fd, a, chunk) == (ssize_t)chunk);
        free(a);
    }
    for (size_t i = 0; ok && i < n; i++)
        ok = mmap(base + i * chunk, chunk, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) !=
             MAP_FAILED;
    ok = ok && mmap(base + n * chunk, 4096, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS,
                    -1, 0) != MAP_FAILED;
    if (ok) {
        sg_any v = sg_box_str(base);
        CHECK(v.tag == SG_ANY_STR && v.len == -1 && v.u.s == base);
        sg_op     *op = define("m7::f(Tensor t, str s) -> ()");
        sg_handle *h;
        CHECK(sg_op_impl(op, SG_KEY_CPU, (sg_kernel){NULL, kernel, NULL}, &h) == SG_OK);
        sg_tensor *cpu = tensor_on(SG_CPU);
        sg_any     args[2] = {sg_any_tensor(cpu), v};
        ran = 0;
        CHECK_EINVAL(sg_op_call_boxed(op, args, 2, NULL, 0),
                     "m7::f: argument 1 's' holds a NULL string or a negative length");
        CHECK(ran == 0);
        /* one byte shorter than 2^31 still boxes with its length */
        v = sg_box_str(base + 1); /* n * chunk is 2^31 */
        CHECK(v.tag == SG_ANY_STR && v.len == INT32_MAX);
        sg_tensor_release(cpu);
    } else {
        fprintf(stderr, "test_rt_dispatch_misuse: no 2 GiB string mapped; that case skipped\n");
    }
    if (fd >= 0) close(fd);
    if (base != MAP_FAILED) munmap(base, total);
#endif
}

int main(void) {
    first_wrong_named();
    null_handles();
    malformed_values();
    typed_boxing();
    one_tensor();
    messages();
    lookups();
    limits();
    sg_runtime_shutdown();
    return check_result("test_rt_dispatch_misuse");
}
