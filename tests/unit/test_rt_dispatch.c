/* test_rt_dispatch.c: ops, keys, registration, alias keys, fallbacks, fallthroughs,
 * redispatch, overrides, boxed and typed calls, and their error messages. */
#include "rt_check.h"
#include "host_device.h"
#include "sg_runtime.h"

#include <stdlib.h>
#include <string.h>

/* ---- helpers ----------------------------------------------------------------------------- */

static float cpu_buf[64], cuda_buf[64];

/* A tensor on dev over a static buffer. Rationale: the dispatcher reads the device's keys and
 * nothing else, so a CUDA tensor needs no GPU here (its data is never touched). */
static sg_tensor *tensor_on(sg_device dev, uint32_t flags) {
    int64_t    sizes[1] = {4};
    sg_tensor *t = NULL;
    void      *data = dev.type == SG_DEV_CPU ? (void *)cpu_buf : (void *)cuda_buf;
    CHECK(sg_tensor_from_blob(data, sizes, NULL, 1, SG_FLOAT32, dev, flags, NULL, NULL, &t) ==
          SG_OK);
    return t;
}

/* What a kernel did: which one ran, and the key set it saw. */
static const char *last_ran;
static sg_keyset   last_ks;
static int         ran_count;

/* A boxed kernel whose ctx names it; it returns its argument 0 (a tensor) as result 0. */
static sg_status named(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                       int32_t nrets, void *ctx) {
    int32_t nargs = sg_op_nargs(op);
    (void)op;
    last_ran = ctx;
    last_ks = ks;
    ran_count++;
    if (nargs > 0 && nrets > 0 && args[0].tag == SG_ANY_TENSOR)
        rets[0] = sg_any_tensor(sg_tensor_retain(args[0].u.t));
    return SG_OK;
}

static sg_kernel boxed(const char *name) { return (sg_kernel){NULL, named, (void *)name}; }

/* Calls op(self) boxed and gives back the name of the kernel that ran (NULL on failure). */
static const char *call1(const sg_op *op, sg_tensor *self) {
    sg_any arg = sg_any_tensor(self), ret;
    last_ran = NULL;
    sg_status st = sg_op_call_boxed(op, &arg, 1, &ret, 1);
    if (st) return NULL;
    CHECK(ret.tag == SG_ANY_TENSOR && ret.u.t == self);
    sg_any_release(&ret);
    return last_ran;
}

/* ---- a typed path, as the generator will write it for "Tensor self -> Tensor" ------------- */

typedef sg_status (*abs_fn)(sg_keyset ks, sg_tensor *self, sg_tensor **out);

static sg_status typed_call(const sg_op *op, sg_tensor *self, sg_tensor **out) {
    sg_keyset       ks = sg_tls_apply(self->keys);
    const sg_entry *e = sg_dispatch_entry(op, ks);
    if (SG_LIKELY(e->unboxed != NULL)) return ((abs_fn)e->unboxed)(ks, self, out);
    sg_any arg = sg_any_tensor(self), ret = sg_any_none();
    sg_status st = e->boxed(op, ks, &arg, &ret, 1, e->ctx);
    *out = st ? NULL : ret.u.t;
    return st;
}

static sg_status typed_cpu(sg_keyset ks, sg_tensor *self, sg_tensor **out) {
    last_ran = "typed_cpu";
    last_ks = ks;
    *out = sg_tensor_retain(self);
    return SG_OK;
}

/* The boxing adapter the generator pairs with a typed kernel: boxed call -> typed kernel. */
static sg_status box_abs(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                         int32_t nrets, void *ctx) {
    (void)op, (void)nrets;
    sg_tensor *out = NULL;
    sg_status  st = ((abs_fn) * (const sg_fn *)ctx)(ks, args[0].u.t, &out);
    if (!st) rets[0] = sg_any_tensor(out);
    return st;
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_define_and_find(void) {
    sg_op *a = define("my_ops::short_kernel(Tensor x) -> Tensor");
    sg_op *b = define("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
    sg_op *found = NULL;
    CHECK(sg_op_find("my_ops::short_kernel", "", &found) == SG_OK && found == a);
    CHECK(sg_op_find("aten::add", "Tensor", &found) == SG_OK && found == b);
    CHECK(sg_op_find("add", "Tensor", &found) == SG_OK && found == b);
    CHECK_STR(sg_op_name(b), "aten::add");
    CHECK_STR(sg_op_overload(b), "Tensor");
    CHECK_STR(sg_op_schema(b), "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
    CHECK_STR(sg_op_schema(a), "my_ops::short_kernel(Tensor x) -> Tensor");
    CHECK(sg_op_nargs(b) == 3 && sg_op_nrets(b) == 1);

    CHECK(sg_op_find("aten::add", "Scalar", &found) == SG_ENOTFOUND && found == NULL);
    CHECK_STR(sg_last_error(), "no op aten::add.Scalar is defined; aten::add has overload: Tensor");

    /* the same schema again (whitespace aside) is the same op; another one is refused */
    sg_op *again = NULL;
    CHECK(sg_op_define("aten::add.Tensor(Tensor self,Tensor other,*,Scalar alpha=1)->Tensor",
                       &again) == SG_OK && again == b);
    CHECK(sg_op_define("add.Tensor(Tensor self, Tensor other) -> Tensor", &again) == SG_EEXISTS);
    CHECK(again == NULL);
    CHECK_STR(sg_last_error(), "aten::add.Tensor is defined already as 'aten::add.Tensor(Tensor "
                               "self, Tensor other, *, Scalar alpha=1) -> Tensor'; cannot define "
                               "it again as 'aten::add.Tensor(Tensor self, Tensor other) -> "
                               "Tensor'");
    CHECK(sg_op_define("my_ops::bad(Tensor x -> Tensor", &again) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "sg_op_define: ") == sg_last_error());
    CHECK(strstr(sg_last_error(), "of 'my_ops::bad(Tensor x -> Tensor'") != NULL);

    /* many ops: the name table grows while earlier handles stay valid */
    char schema[64];
    for (int i = 0; i < 600; i++) {
        snprintf(schema, sizeof schema, "grow::op%d(Tensor x) -> Tensor", i);
        define(schema);
    }
    CHECK(sg_op_find("grow::op599", NULL, &found) == SG_OK && found);
    CHECK(sg_op_find("my_ops::short_kernel", "", &found) == SG_OK && found == a);
}

static void test_missing_and_boxed_checks(void) {
    sg_op     *op = define("t1::abs(Tensor self) -> Tensor");
    sg_tensor *cpu = tensor_on(SG_CPU, 0), *cuda = tensor_on(SG_CUDA(0), 0);
    sg_any     arg = sg_any_tensor(cuda), ret;

    CHECK(sg_op_call_boxed(op, &arg, 1, &ret, 1) == SG_ENOKERNEL);
    CHECK_STR(sg_last_error(), "could not run 't1::abs' with arguments from the 'CUDA' backend "
                               "(tensors on cuda:0); kernels are registered for: nothing");
    sg_handle *h1, *h2;
    CHECK(sg_op_impl(op, SG_KEY_CPU, boxed("cpu"), &h1) == SG_OK);
    CHECK(sg_op_impl(op, SG_KEY_META, boxed("meta"), &h2) == SG_OK);
    CHECK(sg_op_call_boxed(op, &arg, 1, &ret, 1) == SG_ENOKERNEL);
    CHECK_STR(sg_last_error(), "could not run 't1::abs' with arguments from the 'CUDA' backend "
                               "(tensors on cuda:0); kernels are registered for: CPU, Meta");
    CHECK(sg_last_status() == SG_ENOKERNEL);
    CHECK_STR(call1(op, cpu), "cpu");

    /* a CPU scalar beside a CUDA tensor goes to CUDA, as in PyTorch */
    sg_op *add = define("t1::add(Tensor a, Tensor b) -> Tensor");
    sg_handle *h3, *h4;
    CHECK(sg_op_impl(add, SG_KEY_CPU, boxed("add_cpu"), &h3) == SG_OK);
    CHECK(sg_op_impl(add, SG_KEY_CUDA, boxed("add_cuda"), &h4) == SG_OK);
    sg_tensor *scalar = NULL;
    CHECK(sg_tensor_from_blob(cpu_buf, NULL, NULL, 0, SG_FLOAT32, SG_CPU, 0, NULL, NULL,
                              &scalar) == SG_OK);
    sg_any two[2] = {sg_any_tensor(scalar), sg_any_tensor(cuda)};
    CHECK(sg_op_call_boxed(add, two, 2, &ret, 1) == SG_OK && strcmp(last_ran, "add_cuda") == 0);
    sg_any_release(&ret);
    sg_tensor_release(scalar);
    /* a CPU tensor that is no scalar may not: aten's same-device rule */
    two[0] = sg_any_tensor(cpu);
    CHECK(sg_op_call_boxed(add, two, 2, &ret, 1) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "t1::add: Expected all tensors to be on the same device, but found "
                               "at least two devices, cpu and cuda:0! (argument 1 'b' is on cuda:0)");

    /* boxed checks: count, types, result slots */
    CHECK(sg_op_call_boxed(add, two, 1, &ret, 1) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "t1::add: expected 2 arguments, got 1; argument 1 'b' has no "
                               "default to fill in (schema: t1::add(Tensor a, Tensor b) -> "
                               "Tensor)");
    two[1] = sg_any_int(3);
    CHECK(sg_op_call_boxed(add, two, 2, &ret, 1) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "t1::add: argument 1 'b' expects Tensor, got int");
    two[1] = sg_any_tensor(cpu);
    CHECK(sg_op_call_boxed(add, two, 2, NULL, 0) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "t1::add: 0 result slots given for 1 result");
    two[1] = sg_any_none();
    CHECK(sg_op_call_boxed(add, two, 2, &ret, 1) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "t1::add: argument 1 'b' expects Tensor, got None");

    sg_any nul[2] = {sg_any_tensor(cpu), sg_any_tensor(NULL)};
    CHECK(sg_op_call_boxed(add, nul, 2, &ret, 1) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "t1::add: argument 1 'b' holds a NULL tensor (pass None for a "
                               "missing optional tensor)");

    /* Scalar takes bool, int, float and complex; optional takes None; int[2] takes an int */
    sg_op *f = define("t1::f(Tensor x, Scalar s, Tensor? y=None, int[2] k=1, str m='a') -> Tensor");
    sg_handle *h5;
    CHECK(sg_op_impl(f, SG_KEY_CPU, boxed("f_cpu"), &h5) == SG_OK);
    sg_complex c = {1, 2};
    sg_any     five[5] = {sg_any_tensor(cpu), sg_any_float(2), sg_any_none(), sg_any_int(3),
                          sg_any_str("x", 1)};
    CHECK(sg_op_call_boxed(f, five, 5, &ret, 1) == SG_OK);
    sg_any_release(&ret);
    five[1].tag = SG_ANY_COMPLEX;
    five[1].u.c = &c;
    five[2] = sg_any_tensor(cpu);
    CHECK(sg_op_call_boxed(f, five, 5, &ret, 1) == SG_OK);
    sg_any_release(&ret);
    five[1] = sg_any_str("x", 1);
    CHECK(sg_op_call_boxed(f, five, 5, &ret, 1) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "t1::f: argument 1 's' expects Scalar, got str");
    five[1] = sg_any_int(1);
    five[3] = sg_any_float(1);
    CHECK(sg_op_call_boxed(f, five, 5, &ret, 1) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "t1::f: argument 3 'k' expects int[2], got float");

    /* by name */
    sg_any one = sg_any_tensor(cpu);
    CHECK(sg_call_by_name("t1::abs", NULL, &one, 1, &ret, 1) == SG_OK && ret.u.t == cpu);
    sg_any_release(&ret);
    CHECK(sg_call_by_name("t1::nope", "x", &one, 1, &ret, 1) == SG_ENOTFOUND);
    CHECK_STR(sg_last_error(), "no op t1::nope.x is defined");

    /* a kernel registered without either function is refused */
    sg_handle *bad = (sg_handle *)1;
    CHECK(sg_op_impl(op, SG_KEY_CPU, (sg_kernel){0}, &bad) == SG_EINVAL && bad == NULL);
    CHECK(sg_op_impl(op, (sg_key)99, boxed("x"), &bad) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "sg_op_impl: 99 is not a dispatch key");

    sg_tensor_release(cpu);
    sg_tensor_release(cuda);
}

static void test_typed_path(void) {
    sg_op     *op = define("t2::abs(Tensor self) -> Tensor");
    sg_tensor *cpu = tensor_on(SG_CPU, 0), *out = NULL;
    sg_handle *h;
    CHECK(sg_op_impl(op, SG_KEY_CPU, (sg_kernel){(sg_fn)typed_cpu, box_abs, NULL},
                     &h) == SG_OK);
    CHECK(typed_call(op, cpu, &out) == SG_OK && out == cpu);
    CHECK_STR(last_ran, "typed_cpu");
    /* the kernel saw the tensor's keys and BackendSelect (included by default) */
    CHECK(last_ks == (SG_KEYSET(SG_KEY_CPU) | SG_KEYSET(SG_KEY_AUTOGRAD_CPU) |
                      SG_KEYSET(SG_KEY_BACKEND_SELECT)));
    sg_tensor_release(out);
    /* boxed calls reach the typed kernel through its adapter */
    CHECK_STR(call1(op, cpu), "typed_cpu");

    /* a typed call where only a boxed kernel exists goes through boxed */
    sg_handle *h2;
    CHECK(sg_op_impl(op, SG_KEY_CPU, boxed("boxed_cpu"), &h2) == SG_OK);
    CHECK(typed_call(op, cpu, &out) == SG_OK && out == cpu && strcmp(last_ran, "boxed_cpu") == 0);
    sg_tensor_release(out);
    CHECK(sg_handle_release(h2) == SG_OK);

    /* unboxed only: boxed calls say why they cannot run */
    sg_op     *op2 = define("t2::neg(Tensor self) -> Tensor");
    sg_handle *h3;
    CHECK(sg_op_impl(op2, SG_KEY_CPU, (sg_kernel){(sg_fn)typed_cpu, NULL, NULL}, &h3) == SG_OK);
    CHECK(typed_call(op2, cpu, &out) == SG_OK && out == cpu);
    sg_tensor_release(out);
    CHECK(call1(op2, cpu) == NULL && sg_last_status() == SG_EUNSUPPORTED);
    CHECK_STR(sg_last_error(), "cannot call 't2::neg' boxed: its CPU kernel was registered "
                               "unboxed only, without a boxed adapter");
    sg_tensor_release(cpu);
}

static void test_release_order(void) {
    sg_op     *op = define("t3::abs(Tensor self) -> Tensor");
    sg_tensor *cpu = tensor_on(SG_CPU, 0);
    sg_handle *a, *b, *c;
    CHECK(sg_op_impl(op, SG_KEY_CPU, boxed("A"), &a) == SG_OK);
    CHECK(sg_op_impl(op, SG_KEY_CPU, boxed("B"), &b) == SG_OK);
    CHECK(sg_op_impl(op, SG_KEY_CPU, boxed("C"), &c) == SG_OK);
    CHECK_STR(call1(op, cpu), "C");
    CHECK(sg_handle_release(b) == SG_OK); /* from the middle: C stays */
    CHECK_STR(call1(op, cpu), "C");
    CHECK(sg_handle_release(c) == SG_OK); /* the newest: back to A, not B */
    CHECK_STR(call1(op, cpu), "A");
    CHECK(sg_handle_release(c) == SG_ESTATE);
    CHECK_STR(sg_last_error(), "sg_handle_release: this registration was released already");
    CHECK(sg_handle_release(a) == SG_OK);
    CHECK(call1(op, cpu) == NULL && sg_last_status() == SG_ENOKERNEL);
    CHECK(sg_op_entry(op, SG_KEY_CPU).kind == SG_ENTRY_MISSING);
    sg_tensor_release(cpu);
}

/* A kernel at AutogradCPU that counts, then redispatches below its key. */
static int autograd_calls;
static sg_status autograd_kernel(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                                 int32_t nrets, void *ctx) {
    (void)ctx;
    autograd_calls++;
    return sg_op_redispatch_boxed(op, sg_keyset_below(ks, SG_KEY_AUTOGRAD_CPU), args,
                                  rets, nrets);
}

static void test_redispatch_and_fallthrough(void) {
    sg_op     *op = define("t4::abs(Tensor self) -> Tensor");
    sg_tensor *cpu = tensor_on(SG_CPU, 0);
    sg_handle *hc, *ha, *hf;
    CHECK(sg_op_impl(op, SG_KEY_CPU, boxed("cpu"), &hc) == SG_OK);
    /* Autograd falls through by default */
    CHECK(sg_op_entry(op, SG_KEY_AUTOGRAD_CPU).kind == SG_ENTRY_FALLTHROUGH);
    CHECK(sg_op_impl(op, SG_KEY_AUTOGRAD_CPU, (sg_kernel){NULL, autograd_kernel, NULL}, &ha) ==
          SG_OK);
    autograd_calls = 0;
    CHECK_STR(call1(op, cpu), "cpu");
    CHECK(autograd_calls == 1);
    /* the CPU kernel saw the set narrowed below AutogradCPU */
    CHECK(last_ks == (SG_KEYSET(SG_KEY_CPU) | SG_KEYSET(SG_KEY_BACKEND_SELECT)));

    /* excluding Autograd on this thread skips it */
    sg_tls_keys saved = sg_tls_keys_get();
    sg_tls_keys_exclude(SG_KEYSET_AUTOGRAD);
    CHECK_STR(call1(op, cpu), "cpu");
    CHECK(autograd_calls == 1);
    sg_tls_keys_set(saved);

    /* a per-op fallthrough in front of the kernel at the same key */
    CHECK(sg_op_impl_fallthrough(op, SG_KEY_AUTOGRAD_CPU, &hf) == SG_OK);
    CHECK_STR(call1(op, cpu), "cpu");
    CHECK(autograd_calls == 1);
    CHECK(sg_handle_release(hf) == SG_OK);
    CHECK_STR(call1(op, cpu), "cpu");
    CHECK(autograd_calls == 2);
    sg_tensor_release(cpu);
}

static void test_alias_keys(void) {
    sg_op     *op = define("t5::abs(Tensor self) -> Tensor");
    sg_tensor *cpu = tensor_on(SG_CPU, 0), *cuda = tensor_on(SG_CUDA(0), 0);
    sg_handle *cia, *cea, *kc, *ag;

    /* CompositeImplicitAutograd fills backends and autograd keys */
    CHECK(sg_op_impl(op, SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD, boxed("cia"), &cia) == SG_OK);
    CHECK(sg_op_entry(op, SG_KEY_CPU).kind == SG_ENTRY_COMPOSITE_IMPLICIT);
    CHECK(sg_op_entry(op, SG_KEY_AUTOGRAD_CUDA).kind == SG_ENTRY_COMPOSITE_IMPLICIT);
    CHECK(sg_op_entry(op, SG_KEY_BACKEND_SELECT).kind == SG_ENTRY_FALLTHROUGH);
    CHECK_STR(call1(op, cuda), "cia");
    /* it ran at the autograd key, the highest with an entry */
    CHECK(sg_keyset_highest(last_ks & ~SG_KEYSET(SG_KEY_BACKEND_SELECT)) == SG_KEY_AUTOGRAD_CUDA);

    /* a CPU kernel: CPU takes it, and AutogradCPU no longer takes the composite */
    CHECK(sg_op_impl(op, SG_KEY_CPU, boxed("cpu"), &kc) == SG_OK);
    CHECK(sg_op_entry(op, SG_KEY_AUTOGRAD_CPU).kind == SG_ENTRY_FALLTHROUGH);
    CHECK(sg_op_entry(op, SG_KEY_AUTOGRAD_CUDA).kind == SG_ENTRY_COMPOSITE_IMPLICIT);
    CHECK_STR(call1(op, cpu), "cpu");
    CHECK_STR(call1(op, cuda), "cia");

    /* CompositeExplicitAutograd beats the implicit one at backends, and autograd stops taking
     * the implicit one */
    CHECK(sg_op_impl(op, SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, boxed("cea"), &cea) == SG_OK);
    CHECK(sg_op_entry(op, SG_KEY_CUDA).kind == SG_ENTRY_COMPOSITE_EXPLICIT);
    CHECK(sg_op_entry(op, SG_KEY_AUTOGRAD_CUDA).kind == SG_ENTRY_FALLTHROUGH);
    CHECK_STR(call1(op, cuda), "cea");
    CHECK_STR(call1(op, cpu), "cpu");

    /* the Autograd alias */
    CHECK(sg_op_impl(op, SG_KEY_AUTOGRAD, boxed("autograd"), &ag) == SG_OK);
    CHECK(sg_op_entry(op, SG_KEY_AUTOGRAD_META).kind == SG_ENTRY_AUTOGRAD_ALIAS);
    CHECK_STR(call1(op, cuda), "autograd");

    /* the message lists alias registrations too */
    CHECK(sg_handle_release(ag) == SG_OK && sg_handle_release(cea) == SG_OK &&
          sg_handle_release(cia) == SG_OK);
    CHECK(call1(op, cuda) == NULL);
    CHECK_STR(sg_last_error(), "could not run 't5::abs' with arguments from the 'CUDA' backend "
                               "(tensors on cuda:0); kernels are registered for: CPU");
    CHECK(sg_op_impl(op, SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD, boxed("cia"), &cia) == SG_OK);
    CHECK(sg_op_impl_fallthrough(op, SG_KEY_META, &ag) == SG_OK);
    CHECK(sg_op_entry(op, SG_KEY_META).kind == SG_ENTRY_FALLTHROUGH);
    CHECK(sg_handle_release(cia) == SG_OK);
    sg_op *op2 = define("t5::neg(Tensor self) -> Tensor");
    CHECK(sg_op_impl(op2, SG_KEY_CPU, boxed("x"), &kc) == SG_OK);
    CHECK(sg_op_impl(op2, SG_KEY_META, boxed("z"), &kc) == SG_OK);
    CHECK(sg_op_impl(op2, SG_KEY_PRIVATEUSE1, boxed("z"), &kc) == SG_OK);
    sg_tls_keys saved = sg_tls_keys_get();
    sg_tls_keys_exclude(SG_KEYSET(SG_KEY_CUDA) | SG_KEYSET_AUTOGRAD);
    CHECK(call1(op2, cuda) == NULL && sg_last_status() == SG_ENOKERNEL);
    CHECK_STR(sg_last_error(), "could not run 't5::neg': its arguments select no backend (no "
                               "tensor arguments, and no BackendSelect kernel); kernels are "
                               "registered for: CPU, PrivateUse1, Meta");
    /* with a composite, the empty key set runs it (PyTorch's Undefined entry) */
    CHECK(sg_op_impl(op2, SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD, boxed("y"), &kc) == SG_OK);
    CHECK_STR(call1(op2, cuda), "y");
    sg_tls_keys_set(saved);
    sg_tensor_release(cpu);
    sg_tensor_release(cuda);
}

static sg_status fallback_kernel(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                                 int32_t nrets, void *ctx) {
    (void)ctx;
    last_ran = sg_op_name(op);
    last_ks = ks;
    ran_count++;
    /* run the op where the CPU kernel lives: the shape of a "copy to CPU" fallback */
    return sg_op_redispatch_boxed(op, SG_KEYSET(SG_KEY_CPU), args, rets, nrets);
}

static void test_fallbacks(void) {
    sg_op     *a = define("t6::a(Tensor self) -> Tensor");
    sg_op     *b = define("t6::b(Tensor self) -> Tensor");
    sg_tensor *cuda = tensor_on(SG_CUDA(0), 0), *cpu = tensor_on(SG_CPU, 0);
    sg_handle *ka, *kb, *kb_cuda, *fb, *ft, *fb2;
    CHECK(sg_op_impl(a, SG_KEY_CPU, boxed("a_cpu"), &ka) == SG_OK);
    CHECK(sg_op_impl(b, SG_KEY_CPU, boxed("b_cpu"), &kb) == SG_OK);
    CHECK(sg_op_impl(b, SG_KEY_CUDA, boxed("b_cuda"), &kb_cuda) == SG_OK);

    /* one boxed fallback serves every op at CUDA that has no kernel of its own */
    CHECK(sg_fallback_impl(SG_KEY_CUDA, fallback_kernel, NULL, &fb) == SG_OK);
    CHECK(sg_op_entry(a, SG_KEY_CUDA).kind == SG_ENTRY_FALLBACK);
    ran_count = 0;
    CHECK_STR(call1(a, cuda), "a_cpu");
    CHECK(ran_count == 2); /* the fallback, then the CPU kernel */
    CHECK_STR(call1(b, cuda), "b_cuda");
    /* ops defined after the fallback get it too */
    sg_op     *c = define("t6::c(Tensor self) -> Tensor");
    sg_handle *kc;
    CHECK(sg_op_impl(c, SG_KEY_CPU, boxed("c_cpu"), &kc) == SG_OK);
    CHECK_STR(call1(c, cuda), "c_cpu");

    /* a fallthrough fallback at the Override layer, entered by including it */
    sg_tls_keys saved = sg_tls_keys_get();
    sg_tls_keys_include(SG_KEYSET(SG_KEY_OVERRIDE));
    CHECK_STR(call1(a, cpu), "a_cpu"); /* Override falls through by default */
    CHECK(sg_fallback_impl(SG_KEY_OVERRIDE, named, (void *)"override_fb", &fb2) == SG_OK);
    CHECK_STR(call1(a, cpu), "override_fb");
    CHECK(sg_fallback_fallthrough(SG_KEY_OVERRIDE, &ft) == SG_OK);
    CHECK_STR(call1(a, cpu), "a_cpu");
    CHECK(sg_handle_release(ft) == SG_OK);
    CHECK_STR(call1(a, cpu), "override_fb");
    /* a per-op fallthrough beats the key's fallback for that op only */
    sg_handle *opft;
    CHECK(sg_op_impl_fallthrough(b, SG_KEY_OVERRIDE, &opft) == SG_OK);
    CHECK_STR(call1(b, cpu), "b_cpu");
    CHECK_STR(call1(a, cpu), "override_fb");
    CHECK(sg_handle_release(fb2) == SG_OK);
    sg_tls_keys_set(saved);

    CHECK(sg_handle_release(fb) == SG_OK);
    CHECK(call1(a, cuda) == NULL && sg_last_status() == SG_ENOKERNEL);
    CHECK(sg_fallback_impl(SG_KEY_UNDEFINED, fallback_kernel, NULL, &fb) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "sg_fallback_impl: Undefined is a key nothing can be registered "
                               "for");
    CHECK(sg_fallback_impl(SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD, fallback_kernel, NULL, &fb) ==
          SG_EINVAL);
    CHECK_STR(sg_last_error(), "sg_fallback_impl: CompositeImplicitAutograd is an alias key, "
                               "which takes kernels of ops (sg_op_impl), not backend fallbacks");
    sg_tensor_release(cuda);
    sg_tensor_release(cpu);
}

/* Predicates: "large" holds for tensors of 4 elements or more; "never" never holds. */
static int pred_calls;
static bool large(void *ctx, const sg_op *op, sg_keyset ks, const sg_any *args, int32_t nargs) {
    (void)ctx, (void)op, (void)ks, (void)nargs;
    pred_calls++;
    return sg_tensor_numel(args[0].u.t) >= 4;
}
static bool never(void *ctx, const sg_op *op, sg_keyset ks, const sg_any *args, int32_t nargs) {
    (void)ctx, (void)op, (void)ks, (void)args, (void)nargs;
    pred_calls++;
    return false;
}

static void test_overrides(void) {
    sg_op     *op = define("t7::abs(Tensor self) -> Tensor");
    sg_tensor *cpu = tensor_on(SG_CPU, 0);
    int64_t    small_size[1] = {2};
    sg_tensor *small = NULL;
    CHECK(sg_tensor_from_blob(cpu_buf, small_size, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL,
                              &small) == SG_OK);
    sg_handle *stock, *o1, *o2, *o3, *o4;
    CHECK(sg_op_impl(op, SG_KEY_CPU, boxed("stock"), &stock) == SG_OK);
    CHECK(sg_op_entry(op, SG_KEY_CPU).kind == SG_ENTRY_KERNEL);

    /* taken and declined */
    CHECK(sg_op_override(op, SG_KEY_CPU, 0, large, named, (void *)"big", &o1) == SG_OK);
    CHECK(sg_op_entry(op, SG_KEY_CPU).kind == SG_ENTRY_OVERRIDE);
    CHECK_STR(call1(op, cpu), "big");
    CHECK_STR(call1(op, small), "stock");

    /* priority: higher first; equal priorities in registration order */
    CHECK(sg_op_override(op, SG_KEY_CPU, 10, large, named, (void *)"big10", &o2) == SG_OK);
    CHECK(sg_op_override(op, SG_KEY_CPU, 10, large, named, (void *)"big10b", &o3) == SG_OK);
    CHECK(sg_op_override(op, SG_KEY_CPU, 20, never, named, (void *)"never", &o4) == SG_OK);
    pred_calls = 0;
    CHECK_STR(call1(op, cpu), "big10");
    CHECK(pred_calls == 2); /* never (20), then big10 (10): the rest are not asked */
    CHECK(sg_handle_release(o2) == SG_OK);
    CHECK_STR(call1(op, cpu), "big10b");

    /* switched off: the stock kernel, and the entry is the plain kernel again */
    sg_overrides_set_enabled(false);
    CHECK(!sg_overrides_enabled());
    CHECK(sg_op_entry(op, SG_KEY_CPU).kind == SG_ENTRY_KERNEL);
    pred_calls = 0;
    CHECK_STR(call1(op, cpu), "stock");
    CHECK(pred_calls == 0);
    sg_overrides_set_enabled(true);
    CHECK_STR(call1(op, cpu), "big10b");

    /* one op switched off: its table alone loses them; both switches must be on */
    sg_op     *other = define("t7::sgn(Tensor self) -> Tensor");
    sg_handle *ok1, *ok2;
    CHECK(sg_op_impl(other, SG_KEY_CPU, boxed("sgn"), &ok1) == SG_OK);
    CHECK(sg_op_override(other, SG_KEY_CPU, 0, large, named, (void *)"sgn_big", &ok2) == SG_OK);
    CHECK(sg_op_overrides_enabled(op));
    CHECK(sg_op_set_overrides_enabled(op, false) == SG_OK);
    CHECK(!sg_op_overrides_enabled(op) && sg_op_overrides_enabled(other));
    CHECK(sg_op_entry(op, SG_KEY_CPU).kind == SG_ENTRY_KERNEL);
    CHECK(sg_op_entry(other, SG_KEY_CPU).kind == SG_ENTRY_OVERRIDE);
    pred_calls = 0;
    CHECK_STR(call1(op, cpu), "stock");
    CHECK(pred_calls == 0);
    CHECK_STR(call1(other, cpu), "sgn_big");
    sg_overrides_set_enabled(false); /* the op's switch outlives the global one's turns */
    sg_overrides_set_enabled(true);
    CHECK_STR(call1(op, cpu), "stock");
    CHECK(sg_op_set_overrides_enabled(op, false) == SG_OK); /* again: no change */
    sg_overrides_set_enabled(false);
    CHECK(sg_op_set_overrides_enabled(op, true) == SG_OK); /* the global switch still off */
    CHECK(sg_op_entry(op, SG_KEY_CPU).kind == SG_ENTRY_KERNEL);
    CHECK_STR(call1(op, cpu), "stock");
    sg_overrides_set_enabled(true);
    CHECK_STR(call1(op, cpu), "big10b");
    CHECK(sg_op_set_overrides_enabled(NULL, false) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "NULL") != NULL);
    CHECK(!sg_op_overrides_enabled(NULL));
    CHECK(sg_op_set_overrides_enabled(&sg_op_uninit, false) == SG_ESTATE);
    CHECK(sg_handle_release(ok2) == SG_OK && sg_handle_release(ok1) == SG_OK);

    /* the stock kernel changes underneath the overrides */
    sg_handle *stock2;
    CHECK(sg_op_impl(op, SG_KEY_CPU, boxed("stock2"), &stock2) == SG_OK);
    CHECK_STR(call1(op, small), "stock2");
    CHECK(sg_handle_release(stock2) == SG_OK);
    CHECK_STR(call1(op, small), "stock");

    /* an override at a key that falls through: declined, the call goes on below */
    sg_handle *o5;
    CHECK(sg_op_override(op, SG_KEY_AUTOGRAD_CPU, 0, never, named, (void *)"ag", &o5) == SG_OK);
    CHECK(sg_op_entry(op, SG_KEY_AUTOGRAD_CPU).kind == SG_ENTRY_OVERRIDE);
    CHECK_STR(call1(op, small), "stock");
    CHECK(sg_handle_release(o5) == SG_OK);
    CHECK(sg_op_entry(op, SG_KEY_AUTOGRAD_CPU).kind == SG_ENTRY_FALLTHROUGH);

    /* an op with none pays nothing: its entry is the kernel itself */
    sg_op     *plain = define("t7::neg(Tensor self) -> Tensor");
    sg_handle *k;
    CHECK(sg_op_impl(plain, SG_KEY_CPU, boxed("neg"), &k) == SG_OK);
    CHECK(sg_op_entry(plain, SG_KEY_CPU).boxed == named);

    CHECK(sg_op_override(op, SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD, 0, never, named, NULL, &k) ==
          SG_EINVAL);
    CHECK(sg_op_override(op, SG_KEY_CPU, 0, NULL, named, NULL, &k) == SG_EINVAL);
    CHECK_STR(sg_last_error(), "sg_op_override: t7::abs at CPU: a predicate and an "
                               "implementation are both needed");
    CHECK(sg_handle_release(o1) == SG_OK && sg_handle_release(o3) == SG_OK &&
          sg_handle_release(o4) == SG_OK);
    CHECK(sg_op_entry(op, SG_KEY_CPU).kind == SG_ENTRY_KERNEL);
    sg_tensor_release(cpu);
    sg_tensor_release(small);
}

static void test_backend_select(void) {
    sg_op *make = define("t8::make(int n, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
    sg_op *nodev = define("t8::seed(int n) -> int");
    sg_handle *h1, *h2, *h3;
    CHECK(sg_op_impl(make, SG_KEY_CPU, boxed("make_cpu"), &h1) == SG_OK);
    CHECK(sg_op_impl(make, SG_KEY_META, boxed("make_meta"), &h2) == SG_OK);
    sg_any args[3] = {sg_any_int(3), sg_any_none(), sg_any_none()}, ret;
    CHECK(sg_op_call_boxed(make, args, 3, &ret, 1) == SG_OK && strcmp(last_ran, "make_cpu") == 0);
    args[2] = sg_any_device(SG_META);
    CHECK(sg_op_call_boxed(make, args, 3, &ret, 1) == SG_OK && strcmp(last_ran, "make_meta") == 0);
    CHECK(last_ks & SG_KEYSET(SG_KEY_META));
    args[2] = sg_any_device(SG_CUDA(0));
    CHECK(sg_op_call_boxed(make, args, 3, &ret, 1) == SG_ENOKERNEL);
    CHECK_STR(sg_last_error(), "could not run 't8::make' with arguments from the 'CUDA' "
                               "backend (its Device argument is cuda:0); kernels are "
                               "registered for: CPU, Meta");

    /* no tensors and no device: nothing selects a backend, unless a composite exists */
    CHECK(sg_op_call_boxed(nodev, args, 1, &ret, 1) == SG_ENOKERNEL);
    CHECK(strstr(sg_last_error(), "its arguments select no backend") != NULL);
    CHECK(sg_op_impl(nodev, SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, boxed("seed"), &h3) == SG_OK);
    CHECK(sg_op_call_boxed(nodev, args, 1, &ret, 1) == SG_OK && strcmp(last_ran, "seed") == 0);
}

static void test_read_only(void) {
    sg_op     *op = define("t9::abs_(Tensor(a!) self) -> Tensor(a!)");
    sg_op     *cat = define("t9::fill(Tensor(a!)[] out, Tensor src) -> ()");
    sg_tensor *ro = tensor_on(SG_CPU, SG_STORAGE_READ_ONLY), *rw = tensor_on(SG_CPU, 0);
    sg_handle *h, *h2;
    CHECK(sg_op_impl(op, SG_KEY_CPU, boxed("abs_"), &h) == SG_OK);
    CHECK(sg_op_impl(cat, SG_KEY_CPU, boxed("fill"), &h2) == SG_OK);
    CHECK(!sg_tensor_writable(ro) && sg_tensor_writable(rw));
    CHECK(call1(op, ro) == NULL && sg_last_status() == SG_EREADONLY);
    CHECK_STR(sg_last_error(), "t9::abs_: argument 0 'self' is written by the op, but the tensor "
                               "bound to it (float32[4] on cpu) is read-only");
    CHECK_STR(call1(op, rw), "abs_");
    sg_tensor *list[2] = {rw, ro};
    sg_any     args[2] = {sg_any_tensor_list(list, 2), sg_any_tensor(ro)}, ret;
    CHECK(sg_op_call_boxed(cat, args, 2, &ret, 0) == SG_EREADONLY);
    CHECK(strstr(sg_last_error(), "argument 0 'out' is written") != NULL);
    list[1] = rw; /* reading a read-only tensor is fine */
    CHECK(sg_op_call_boxed(cat, args, 2, &ret, 0) == SG_OK);
    sg_tensor_release(ro);
    sg_tensor_release(rw);
}

/* ---- a backend fallback that runs ops on the CPU: PrivateUse1 over host memory ------------ */

/* The CPU kernel: self *= 2 in place, returns self. */
static sg_status double_cpu(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                            int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)nrets;
    sg_tensor *t = args[0].u.t;
    CHECK(t->device.type == SG_DEV_CPU && (ks & SG_KEYSET(SG_KEY_CPU)));
    float *p = sg_tensor_data(t);
    for (int64_t i = 0; i < sg_tensor_numel(t); i++) p[i * t->strides[0]] *= 2;
    rets[0] = sg_any_tensor(sg_tensor_retain(t));
    return SG_OK;
}

/* Copy every tensor argument to the CPU, run the op there, copy written arguments back, and
 * hand back results on the original device (an aliased result is the original argument). */
static sg_status run_on_cpu(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                            int32_t nrets, void *ctx) {
    int32_t nargs = sg_op_nargs(op);
    (void)ctx, (void)ks;
    sg_any    cpu_args[8];
    sg_status st = SG_OK;
    CHECK(nargs <= 8);
    for (int32_t i = 0; i < nargs; i++) {
        cpu_args[i] = args[i];
        if (args[i].tag == SG_ANY_TENSOR && !st) st = sg_tensor_to(args[i].u.t, SG_CPU, &cpu_args[i].u.t);
        else if (args[i].tag == SG_ANY_TENSOR) cpu_args[i].u.t = NULL;
    }
    if (!st) st = sg_op_redispatch_boxed(op, sg_keyset_of_device(SG_CPU), cpu_args, rets, nrets);
    for (int32_t i = 0; i < nargs && !st; i++)
        if (args[i].tag == SG_ANY_TENSOR && sg_tensor_writable(args[i].u.t))
            st = sg_tensor_copy_(args[i].u.t, cpu_args[i].u.t);
    for (int32_t r = 0; r < nrets && !st; r++) {
        if (rets[r].tag != SG_ANY_TENSOR) continue;
        sg_tensor *back = NULL;
        for (int32_t i = 0; i < nargs; i++)
            if (args[i].tag == SG_ANY_TENSOR && cpu_args[i].u.t == rets[r].u.t)
                back = sg_tensor_retain(args[i].u.t);
        if (!back) st = sg_tensor_to(rets[r].u.t, args[0].u.t->device, &back);
        sg_tensor_release(rets[r].u.t);
        rets[r].u.t = back;
    }
    for (int32_t i = 0; i < nargs; i++)
        if (args[i].tag == SG_ANY_TENSOR) sg_tensor_release(cpu_args[i].u.t);
    return st;
}

static void test_cpu_fallback(void) {
    CHECK(sg_device_impl_register(SG_DEV_PRIVATEUSE1, &host_device) == SG_OK);
    sg_op     *op = define("t10::double_(Tensor(a!) self) -> Tensor(a!)");
    sg_handle *k, *fb;
    CHECK(sg_op_impl(op, SG_KEY_CPU, (sg_kernel){NULL, double_cpu, NULL}, &k) == SG_OK);
    float      host[4] = {1, 2, 3, 4};
    int64_t    n[1] = {4};
    sg_tensor *src, *dev;
    CHECK(sg_tensor_from_blob(host, n, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &src) == SG_OK);
    CHECK(sg_tensor_to(src, (sg_device){SG_DEV_PRIVATEUSE1, 0}, &dev) == SG_OK);
    sg_any arg = sg_any_tensor(dev), ret;
    CHECK(sg_op_call_boxed(op, &arg, 1, &ret, 1) == SG_ENOKERNEL);
    CHECK_STR(sg_last_error(), "could not run 't10::double_' with arguments from the "
                               "'PrivateUse1' backend (tensors on privateuseone:0); kernels "
                               "are registered for: CPU");
    CHECK(sg_fallback_impl(SG_KEY_PRIVATEUSE1, run_on_cpu, NULL, &fb) == SG_OK);
    CHECK(sg_op_call_boxed(op, &arg, 1, &ret, 1) == SG_OK);
    CHECK(ret.tag == SG_ANY_TENSOR && ret.u.t == dev); /* the alias, on its own device */
    sg_any_release(&ret);
    float back[4] = {0};
    sg_tensor *out;
    CHECK(sg_tensor_to(dev, SG_CPU, &out) == SG_OK);
    memcpy(back, sg_tensor_data(out), sizeof back);
    CHECK(back[0] == 2 && back[1] == 4 && back[2] == 6 && back[3] == 8);
    CHECK(host[0] == 1); /* the source stayed where it was */
    sg_tensor_release(out);
    CHECK(sg_handle_release(fb) == SG_OK);
    sg_tensor_release(dev);
    sg_tensor_release(src);
}

static void test_keys(void) {
    CHECK_STR(sg_key_name(SG_KEY_AUTOGRAD_PRIVATEUSE2), "AutogradPrivateUse2");
    CHECK_STR(sg_key_name(SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD), "CompositeExplicitAutograd");
    CHECK(sg_key_name((sg_key)20) == NULL);
    CHECK(sg_key_is_alias(SG_KEY_AUTOGRAD) && !sg_key_is_alias(SG_KEY_OVERRIDE));
    CHECK(sg_keyset_of_device(SG_META) ==
          (SG_KEYSET(SG_KEY_META) | SG_KEYSET(SG_KEY_AUTOGRAD_META)));
    CHECK(sg_keyset_highest(0) == SG_KEY_UNDEFINED);
    CHECK(sg_keyset_highest(SG_KEYSET(SG_KEY_CPU) | SG_KEYSET(SG_KEY_META)) == SG_KEY_META);
    CHECK(sg_keyset_below(SG_KEYSET_BACKENDS | SG_KEYSET_AUTOGRAD, SG_KEY_AUTOGRAD_CPU) ==
          (SG_KEYSET_BACKENDS | SG_KEYSET(SG_KEY_BACKEND_SELECT)) - SG_KEYSET(SG_KEY_BACKEND_SELECT));
    CHECK(SG_RUNTIME_CHECK_ABI() == SG_OK);
    CHECK(sg_runtime_check_abi(SG_RUNTIME_VERSION_MAJOR + 1, 0, sizeof(sg_tensor),
                               sizeof(sg_any)) == SG_EUNSUPPORTED);
    /* before 1.0 a program built for another minor version is refused: its ABI may differ */
    CHECK(sg_runtime_check_abi(0, SG_RUNTIME_VERSION_MINOR - 1, sizeof(sg_tensor),
                               sizeof(sg_any)) == (SG_RUNTIME_VERSION_MAJOR == 0 ? SG_EUNSUPPORTED : SG_OK));
    CHECK_STR(sg_status_name(SG_EREADONLY), "SG_EREADONLY");
}

int main(void) {
    test_keys();
    test_define_and_find();
    test_missing_and_boxed_checks();
    test_typed_path();
    test_release_order();
    test_redispatch_and_fallthrough();
    test_alias_keys();
    test_fallbacks();
    test_overrides();
    test_backend_select();
    test_read_only();
    test_cpu_fallback();
    sg_runtime_shutdown();
    return check_result("test_rt_dispatch");
}
