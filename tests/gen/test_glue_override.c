/* test_glue_override.c: the generated typed API around the edges of a call, on the golden
 * glue: typed overrides (consulted by typed calls without boxing, by boxed calls through the
 * generated adapters, in priority order, mixed with boxed ones), the stand-in op handles hold
 * before the library's init and after shutdown, and NULL tensor arguments. */
#include "check.h"
#include "golden.h"

#include <string.h>

static sg_tensor *t, *u;
static int        stock_runs, impl_runs, boxed_impl_runs, pred_calls, boxed_pred_calls;

/* typed aten::add.Tensor kernel for CPU: the stock one, returns self */
static sg_status add_cpu(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_scalar alpha,
                         sg_tensor **ret) {
    (void)ks, (void)other, (void)alpha;
    stock_runs++;
    *ret = sg_tensor_retain(self);
    return SG_OK;
}

/* the same, boxed only */
static sg_status add_cpu_boxed(const sg_op *op, sg_keyset ks, const sg_any *a, sg_any *rets,
                               int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)ks, (void)nrets;
    stock_runs++;
    rets[0] = sg_any_tensor(sg_tensor_retain(a[0].u.t));
    return SG_OK;
}

/* typed override: takes the call where alpha is the int *ctx; returns other */
static bool add_pred(void *ctx, sg_keyset ks, sg_tensor *self, sg_tensor *other,
                     sg_scalar alpha) {
    (void)ks;
    pred_calls++;
    CHECK(self == t && other == u);
    return alpha.kind == SG_SCALAR_INT && alpha.u.i == *(const int64_t *)ctx;
}

static sg_status add_impl(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_scalar alpha,
                          sg_tensor **ret) {
    (void)ks, (void)self, (void)alpha;
    impl_runs++;
    *ret = sg_tensor_retain(other);
    return SG_OK;
}

/* boxed override: takes the call where alpha is 7 */
static bool boxed_pred(void *ctx, const sg_op *op, sg_keyset ks, const sg_any *a,
                       int32_t nargs) {
    (void)ctx, (void)op, (void)ks, (void)nargs;
    boxed_pred_calls++;
    return a[2].tag == SG_ANY_INT && a[2].u.i == 7;
}

static sg_status boxed_impl(const sg_op *op, sg_keyset ks, const sg_any *a, sg_any *rets,
                            int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)ks, (void)nrets;
    boxed_impl_runs++;
    rets[0] = sg_any_tensor(sg_tensor_retain(a[1].u.t));
    return SG_OK;
}

/* an adapter of our own, to see which path a call takes: it counts, then does what the
 * generated one does (unbox, call the typed function ctx points at, box the result) */
static int adapter_calls;
static sg_status count_adapter(const sg_op *op, sg_keyset ks, const sg_any *a, sg_any *rets,
                               int32_t nrets, void *ctx) {
    (void)op, (void)nrets;
    adapter_calls++;
    sg_tensor *r = NULL;
    sg_status  st = ((aten_add_Tensor_kernel) * (const sg_fn *)ctx)(ks, a[0].u.t, a[1].u.t,
                                                                   sg_unbox_scalar(&a[2]), &r);
    rets[0] = sg_any_tensor(r);
    return st;
}

static void reset(void) { stock_runs = impl_runs = boxed_impl_runs = pred_calls = boxed_pred_calls = 0; }

/* add(t, u, alpha) typed; returns which tensor came back (or NULL on failure) */
static sg_tensor *typed_add(int64_t alpha, sg_status *st) {
    sg_tensor *r = NULL;
    *st = aten_add_Tensor(t, u, sg_scalar_int(alpha), &r);
    sg_tensor_release(r);
    return *st ? NULL : r;
}

/* the same boxed: through the op's entry (sg_op_call_boxed), or the generic boxed call */
static sg_tensor *boxed_add_by(bool generic, int64_t alpha, sg_status *st) {
    sg_any args[3] = {sg_any_tensor(t), sg_any_tensor(u), sg_any_int(alpha)}, ret;
    *st = (generic ? sg_op_call_boxed_generic : sg_op_call_boxed)(aten_add_Tensor_op, args, 3,
                                                                  &ret, 1);
    sg_tensor *r = *st ? NULL : ret.u.t;
    if (!*st) sg_any_release(&ret);
    return r;
}
static sg_tensor *boxed_add(int64_t alpha, sg_status *st) { return boxed_add_by(false, alpha, st); }
static sg_tensor *generic_add(int64_t alpha, sg_status *st) { return boxed_add_by(true, alpha, st); }

static void make_tensors(void) {
    int64_t sizes[1] = {2};
    CHECK(sg_tensor_empty(sizes, 1, SG_FLOAT32, SG_CPU, &t) == SG_OK);
    CHECK(sg_tensor_empty(sizes, 1, SG_FLOAT32, SG_CPU, &u) == SG_OK);
}

static void test_before_init(void) {
    sg_status st;
    CHECK(aten_add_Tensor_op == &sg_op_uninit);
    CHECK(typed_add(1, &st) == NULL && st == SG_ESTATE);
    CHECK(strstr(sg_last_error(), "init") != NULL);
    sg_tensor *r = NULL;
    CHECK(aten_relu_(t, &r) == SG_ESTATE && r == NULL);
    /* registrations and boxed calls through a stand-in handle say the same */
    sg_handle *h = NULL;
    CHECK(aten_add_Tensor_register(SG_KEY_CPU, add_cpu, &h) == SG_ESTATE && !h);
    CHECK(strstr(sg_last_error(), "init") != NULL);
    static const int64_t two = 2;
    CHECK(aten_add_Tensor_override(SG_KEY_CPU, 0, add_pred, add_impl, (void *)&two, &h) ==
          SG_ESTATE);
    CHECK(boxed_add(1, &st) == NULL && st == SG_ESTATE);
}

static void test_null_tensor(void) {
    sg_tensor *r = NULL;
    CHECK(aten_add_Tensor(t, NULL, sg_scalar_int(1), &r) == SG_EINVAL && r == NULL);
    CHECK(strstr(sg_last_error(), "aten::add.Tensor") && strstr(sg_last_error(), "'other'"));
    CHECK(aten_add_Tensor(NULL, u, sg_scalar_int(1), &r) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "'self'") != NULL);
}

/* typed calls check that their tensors share a device, as aten does (a CPU 0-dim tensor may
 * join any device) */
static void test_same_device(void) {
    int64_t    sizes[1] = {2};
    sg_tensor *m, *s, *r = NULL;
    CHECK(sg_tensor_empty(sizes, 1, SG_FLOAT32, SG_META, &m) == SG_OK);
    CHECK(sg_tensor_empty(sizes, 0, SG_FLOAT32, SG_CPU, &s) == SG_OK);
    CHECK(aten_add_Tensor(t, m, sg_scalar_int(1), &r) == SG_EINVAL && r == NULL);
    CHECK(strstr(sg_last_error(), "Expected all tensors to be on the same device") != NULL);
    CHECK(strstr(sg_last_error(), "aten::add.Tensor") != NULL);
    /* the scalar passes the check (the call then stops further on: golden's add has no meta
     * function set) */
    sg_status st = aten_add_Tensor(m, s, sg_scalar_int(1), &r);
    CHECK(st == SG_EUNSUPPORTED && strstr(sg_last_error(), "meta function") != NULL);
    sg_tensor_release(m);
    sg_tensor_release(s);
}

static void test_typed_override(void) {
    static const int64_t two = 2;
    sg_handle           *k, *o, *b;
    sg_status            st;
    CHECK(aten_add_Tensor_register(SG_KEY_CPU, add_cpu, &k) == SG_OK);
    CHECK(aten_add_Tensor_override(SG_KEY_CPU, 0, add_pred, add_impl, (void *)&two, &o) == SG_OK);
    CHECK(sg_op_entry(aten_add_Tensor_op, SG_KEY_CPU).kind == SG_ENTRY_OVERRIDE_TYPED);

    /* typed calls: declined -> the stock kernel; taken -> the implementation */
    reset();
    CHECK(typed_add(1, &st) == t && st == SG_OK);
    CHECK(stock_runs == 1 && impl_runs == 0 && pred_calls == 1);
    CHECK(typed_add(2, &st) == u && st == SG_OK);
    CHECK(stock_runs == 1 && impl_runs == 1 && pred_calls == 2);

    /* boxed calls reach the same typed functions through the adapters */
    reset();
    CHECK(boxed_add(1, &st) == t && st == SG_OK && stock_runs == 1 && pred_calls == 1);
    CHECK(boxed_add(2, &st) == u && st == SG_OK && impl_runs == 1 && pred_calls == 2);

    /* typed calls never box: our counting adapter serves boxed calls only, once a call */
    sg_handle *c;
    CHECK(sg_handle_release(o) == SG_OK);
    CHECK(sg_op_override_typed(aten_add_Tensor_op, SG_KEY_CPU, 0,
                               (sg_override_typed){(sg_fn)add_pred, (sg_fn)add_impl, (void *)&two},
                               count_adapter, (sg_fn)aten_add_Tensor_redispatch, &c) == SG_OK);
    reset();
    adapter_calls = 0;
    CHECK(typed_add(1, &st) == t && typed_add(2, &st) == u && adapter_calls == 0);
    CHECK(pred_calls == 2 && impl_runs == 1 && stock_runs == 1);
    /* a boxed call through the op's entry is the typed call, which needs no adapter; the
     * generic boxed call goes through the adapter, once a call */
    CHECK(boxed_add(1, &st) == t && adapter_calls == 0 && stock_runs == 2);
    CHECK(boxed_add(2, &st) == u && adapter_calls == 0 && impl_runs == 2);
    CHECK(generic_add(1, &st) == t && adapter_calls == 1 && stock_runs == 3);
    CHECK(generic_add(2, &st) == u && adapter_calls == 2 && impl_runs == 3);
    CHECK(sg_handle_release(c) == SG_OK);
    CHECK(aten_add_Tensor_override(SG_KEY_CPU, 0, add_pred, add_impl, (void *)&two, &o) == SG_OK);

    /* a second typed override, higher: tried first */
    static const int64_t three = 3;
    CHECK(aten_add_Tensor_override(SG_KEY_CPU, 9, add_pred, add_impl, (void *)&three, &c) == SG_OK);
    reset();
    CHECK(typed_add(3, &st) == u && pred_calls == 1 && impl_runs == 1);
    CHECK(typed_add(2, &st) == u && pred_calls == 3 && impl_runs == 2);
    CHECK(typed_add(5, &st) == t && pred_calls == 5 && stock_runs == 1);
    CHECK(sg_handle_release(c) == SG_OK);

    /* boxed and typed overrides of one (op, key) do not mix */
    b = NULL;
    CHECK(sg_op_override(aten_add_Tensor_op, SG_KEY_CPU, 5, boxed_pred, boxed_impl, NULL, &b) ==
              SG_EEXISTS &&
          !b);
    CHECK(strstr(sg_last_error(), "typed and boxed overrides") != NULL);

    /* boxed overrides alone: typed calls box for them */
    CHECK(sg_handle_release(o) == SG_OK);
    CHECK(sg_op_override(aten_add_Tensor_op, SG_KEY_CPU, 5, boxed_pred, boxed_impl, NULL, &b) ==
          SG_OK);
    CHECK(sg_op_entry(aten_add_Tensor_op, SG_KEY_CPU).kind == SG_ENTRY_OVERRIDE);
    reset();
    CHECK(typed_add(7, &st) == u && boxed_impl_runs == 1 && boxed_pred_calls == 1);
    CHECK(typed_add(3, &st) == t && stock_runs == 1 && boxed_pred_calls == 2);
    CHECK(aten_add_Tensor_override(SG_KEY_CPU, 0, add_pred, add_impl, (void *)&two, &o) ==
          SG_EEXISTS);
    CHECK(sg_handle_release(b) == SG_OK);
    CHECK(aten_add_Tensor_override(SG_KEY_CPU, 0, add_pred, add_impl, (void *)&two, &o) == SG_OK);
    CHECK(sg_op_entry(aten_add_Tensor_op, SG_KEY_CPU).kind == SG_ENTRY_OVERRIDE_TYPED);

    /* the stock kernel boxed only: a declined typed override boxes for it */
    CHECK(sg_handle_release(k) == SG_OK);
    CHECK(sg_op_impl(aten_add_Tensor_op, SG_KEY_CPU, (sg_kernel){NULL, add_cpu_boxed, NULL}, &k) ==
          SG_OK);
    reset();
    CHECK(typed_add(1, &st) == t && st == SG_OK && stock_runs == 1 && pred_calls == 1);
    CHECK(sg_handle_release(k) == SG_OK);
    CHECK(sg_handle_release(o) == SG_OK);

    /* at a key that falls through (AutogradCPU): declined -> the call goes on below it */
    CHECK(aten_add_Tensor_register(SG_KEY_CPU, add_cpu, &k) == SG_OK);
    CHECK(aten_add_Tensor_override(SG_KEY_AUTOGRAD_CPU, 0, add_pred, add_impl, (void *)&two, &o) ==
          SG_OK);
    reset();
    CHECK(typed_add(1, &st) == t && stock_runs == 1 && pred_calls == 1);
    CHECK(typed_add(2, &st) == u && impl_runs == 1 && stock_runs == 1);
    CHECK(boxed_add(1, &st) == t && stock_runs == 2);

    /* switched off: the stock kernel, without asking */
    sg_overrides_set_enabled(false);
    reset();
    CHECK(typed_add(2, &st) == t && pred_calls == 0 && stock_runs == 1);
    sg_overrides_set_enabled(true);
    /* the op's own switch: typed and boxed calls both skip its overrides */
    CHECK(sg_op_set_overrides_enabled(aten_add_Tensor_op, false) == SG_OK);
    CHECK(sg_op_entry(aten_add_Tensor_op, SG_KEY_AUTOGRAD_CPU).kind == SG_ENTRY_FALLTHROUGH);
    reset();
    CHECK(typed_add(2, &st) == t && boxed_add(2, &st) == t && pred_calls == 0 &&
          stock_runs == 2);
    CHECK(sg_op_set_overrides_enabled(aten_add_Tensor_op, true) == SG_OK);
    CHECK(typed_add(2, &st) == u && pred_calls == 1);
    CHECK(sg_handle_release(o) == SG_OK);
    CHECK(sg_handle_release(k) == SG_OK);

    /* refused: no predicate */
    CHECK(aten_add_Tensor_override(SG_KEY_CPU, 0, NULL, add_impl, NULL, &o) == SG_EINVAL && !o);
    CHECK(aten_add_Tensor_override(SG_KEY_AUTOGRAD, 0, add_pred, add_impl, NULL, &o) == SG_EINVAL);
}

int main(void) {
    make_tensors();
    test_before_init();
    CHECK(golden_init() == SG_OK);
    CHECK(aten_add_Tensor_op != &sg_op_uninit);
    test_null_tensor();
    test_same_device();
    test_typed_override();
    sg_tensor_release(t);
    sg_tensor_release(u);

    /* after shutdown the handles are stand-ins again, and a new init defines the ops anew */
    sg_runtime_shutdown();
    CHECK(aten_add_Tensor_op == &sg_op_uninit);
    make_tensors();
    test_before_init();
    CHECK(golden_init() == SG_OK && aten_add_Tensor_op != &sg_op_uninit);
    sg_tensor_release(t);
    sg_tensor_release(u);
    sg_runtime_shutdown();
    return check_result("test_glue_override");
}
