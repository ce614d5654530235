/* test_rt_backend.c: what a backend author gets (sg_backend.h): renaming a PrivateUse device
 * and where the name shows, device strings, the impl's size field and its guard, stream and
 * event hooks, per-argument schema facts, the same-device check, the message for a missing
 * CUDA device, and sg_cpu_fallback over ops defined here (the aten ops: test_cpu_fallback.c). */
#include "rt_check.h"
#include "host_device.h"
#include "sg_runtime.h"

#include <stdlib.h>
#include <string.h>

#define NPU(i) ((sg_device){SG_DEV_PRIVATEUSE1, (int8_t)(i)})

/* ---- a two-device "npu" over host memory, with every hook, counting what it is asked -------- */

static int     n_sync, n_events;
static int8_t  cur_dev;
static void   *cur_stream[2];

static int npu_count(const char **why) {
    (void)why;
    return 2;
}
static sg_status npu_get_device(int8_t *i) {
    *i = cur_dev;
    return SG_OK;
}
static sg_status npu_set_device(int8_t i) {
    cur_dev = i;
    return SG_OK;
}
static sg_status npu_get_stream(sg_device d, void **s) {
    *s = cur_stream[d.index];
    return SG_OK;
}
static sg_status npu_set_stream(sg_device d, void *s) {
    cur_stream[d.index] = s;
    return SG_OK;
}
static sg_status npu_sync(sg_device d) {
    (void)d;
    n_sync++;
    return SG_OK;
}
/* an event is an int: 0 created, 1 recorded, 2 waited for */
static sg_status ev_create(sg_device d, void **e) {
    (void)d;
    *e = calloc(1, sizeof(int));
    n_events++;
    return *e ? SG_OK : SG_ENOMEM;
}
static void ev_destroy(sg_device d, void *e) {
    (void)d;
    free(e);
    n_events--;
}
static sg_status ev_record(sg_device d, void *e, void *s) {
    (void)d;
    *(int *)e = s == cur_stream[d.index] ? 1 : -1;
    return SG_OK;
}
static sg_status ev_wait(sg_device d, void *e, void *s) {
    (void)d, (void)s;
    *(int *)e = 2;
    return SG_OK;
}
static sg_status ev_sync(sg_device d, void *e) {
    (void)d, (void)e;
    return SG_OK;
}

static const sg_device_impl npu = {
    .size = sizeof(sg_device_impl),
    .name = "npu",
    .count = npu_count,
    .alloc = host_dev_alloc,
    .free = host_dev_free,
    .copy_from_host = host_dev_in,
    .copy_to_host = host_dev_out,
    .get_device = npu_get_device,
    .set_device = npu_set_device,
    .get_stream = npu_get_stream,
    .set_stream = npu_set_stream,
    .synchronize = npu_sync,
    .event_create = ev_create,
    .event_destroy = ev_destroy,
    .event_record = ev_record,
    .event_wait = ev_wait,
    .event_synchronize = ev_sync,
};

/* ---- helpers --------------------------------------------------------------------------------- */

static sg_tensor *floats(sg_device dev, const float *v, int32_t ndim, const int64_t *sizes) {
    sg_tensor *c = NULL, *t = NULL;
    int64_t    n = 1;
    for (int32_t i = 0; i < ndim; i++) n *= sizes[i];
    CHECK(sg_tensor_empty(sizes, ndim, SG_FLOAT32, SG_CPU, &c) == SG_OK);
    if (n) memcpy(sg_tensor_data(c), v, (size_t)n * sizeof(float));
    CHECK(sg_tensor_to(c, dev, &t) == SG_OK);
    sg_tensor_release(c);
    return t;
}

/* The values of t (any device, any strides) as a contiguous float array in buf. */
static int64_t read_floats(sg_tensor *t, float *buf, int64_t cap) {
    sg_tensor *c = NULL, *k = NULL;
    CHECK(sg_tensor_to(t, SG_CPU, &c) == SG_OK);
    CHECK(sg_tensor_contiguous(c, &k) == SG_OK);
    int64_t n = sg_tensor_numel(k);
    if (n > cap) n = cap;
    memcpy(buf, sg_tensor_data(k), (size_t)n * sizeof(float));
    sg_tensor_release(k);
    sg_tensor_release(c);
    return n;
}

/* ---- names ----------------------------------------------------------------------------------- */

static void test_rename(void) {
    CHECK_STR(sg_device_type_name(SG_DEV_PRIVATEUSE1), "privateuseone");
    CHECK_STR(sg_key_name(SG_KEY_PRIVATEUSE1), "PrivateUse1");
    CHECK(sg_device_rename(SG_DEV_CUDA, "npu") == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "cuda is built in");
    CHECK(sg_device_rename(SG_DEV_PRIVATEUSE1, "NPU") == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "'NPU' is not a device name");
    CHECK(sg_device_rename(SG_DEV_PRIVATEUSE1, "a_name_far_too_long") == SG_EINVAL);
    CHECK(sg_device_rename(SG_DEV_PRIVATEUSE1, "") == SG_EINVAL);
    CHECK(sg_device_rename(SG_DEV_PRIVATEUSE1, NULL) == SG_EINVAL);
    CHECK(sg_device_rename(SG_DEV_PRIVATEUSE1, "cuda") == SG_EEXISTS);
    CHECK(sg_device_rename(SG_DEV_PRIVATEUSE1, "privateusetwo") == SG_EEXISTS);
    CHECK(sg_device_rename(SG_DEV_PRIVATEUSE1, "npu") == SG_OK);
    CHECK(sg_device_rename(SG_DEV_PRIVATEUSE1, "npu") == SG_OK); /* the same again */
    CHECK(sg_device_rename(SG_DEV_PRIVATEUSE1, "xpu") == SG_EEXISTS);
    CHECK_HAS(sg_last_error(), "privateuseone was renamed 'npu' already");
    CHECK(sg_device_rename(SG_DEV_PRIVATEUSE2, "npu") == SG_EEXISTS);
    CHECK_STR(sg_device_type_name(SG_DEV_PRIVATEUSE1), "npu");
    CHECK_STR(sg_key_name(SG_KEY_PRIVATEUSE1), "NPU");
    CHECK_STR(sg_key_name(SG_KEY_AUTOGRAD_PRIVATEUSE1), "AutogradNPU");
    CHECK_STR(sg_key_name(SG_KEY_PRIVATEUSE2), "PrivateUse2");
    CHECK_STR(sg_key_name(SG_KEY_CUDA), "CUDA");
}

static void test_parse(void) {
    sg_device d;
    char      buf[32];
    CHECK(sg_device_parse("npu:1", &d) == SG_OK && sg_device_eq(d, NPU(1)));
    CHECK(sg_device_parse("privateuseone:0", &d) == SG_OK && sg_device_eq(d, NPU(0)));
    CHECK(sg_device_parse("cuda:3", &d) == SG_OK && sg_device_eq(d, SG_CUDA(3)));
    CHECK(sg_device_parse("cpu", &d) == SG_OK && sg_device_eq(d, SG_CPU));
    CHECK(sg_device_parse("cpu:0", &d) == SG_OK && sg_device_eq(d, SG_CPU));
    CHECK(sg_device_parse("meta", &d) == SG_OK && sg_device_eq(d, SG_META));
    CHECK(sg_device_parse("privateusethree", &d) == SG_OK && /* no backend: index 0 */
          sg_device_eq(d, ((sg_device){SG_DEV_PRIVATEUSE3, 0})));
    if (!sg_cuda_available(NULL)) CHECK(sg_device_parse("cuda", &d) == SG_OK && sg_device_eq(d, SG_CUDA(0)));
    CHECK(sg_device_set_current(NPU(1)) == SG_OK);
    CHECK(sg_device_parse("npu", &d) == SG_OK && sg_device_eq(d, NPU(1))); /* the current one */
    CHECK(sg_device_set_current(NPU(0)) == SG_OK);
    CHECK(sg_device_parse("cpu:1", &d) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "'cpu:1' is not a device: cpu and meta have one device");
    CHECK(sg_device_parse("gpu:0", &d) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "unknown device type (expected a device type, one of cpu, cuda, "
                               "meta, npu, privateusetwo, privateusethree");
    CHECK(sg_device_parse("npu:x", &d) == SG_EINVAL);
    CHECK(sg_device_parse("npu:", &d) == SG_EINVAL);
    CHECK(sg_device_parse("npu:01", &d) == SG_EINVAL);
    CHECK(sg_device_parse("npu:128", &d) == SG_EINVAL);
    CHECK(sg_device_parse(NULL, &d) == SG_EINVAL);
    CHECK_STR(sg_device_format(NPU(1), buf, sizeof buf), "npu:1");
    CHECK_STR(sg_device_format(SG_CPU, buf, sizeof buf), "cpu");
    CHECK_STR(sg_device_format(SG_CUDA(0), buf, sizeof buf), "cuda:0");
}

/* The name shows where tensors print and where a kernel is missing. */
static void test_name_in_messages(void) {
    float      v[2] = {1, 2};
    int64_t    n[1] = {2};
    sg_tensor *t = floats(NPU(1), v, 1, n);
    char       d[64];
    sg_tensor_describe(t, d, sizeof d);
    CHECK_STR(d, "float32[2] on npu:1");
    sg_op *op = define("t20::nothing(Tensor self) -> Tensor");
    sg_any a = sg_any_tensor(t), r;
    CHECK(sg_op_call_boxed(op, &a, 1, &r, 1) == SG_ENOKERNEL);
    CHECK_HAS(sg_last_error(), "with arguments from the 'NPU' backend");
    sg_tensor *c = NULL;
    CHECK(sg_tensor_to(t, (sg_device){SG_DEV_PRIVATEUSE1, 5}, &c) == SG_EDEVICE);
    CHECK_HAS(sg_last_error(), "npu:5 does not exist");
    sg_tensor_release(t);
}

/* ---- the impl's size and hooks ------------------------------------------------------------- */

static void test_impl_size(void) {
    /* PrivateUse2 registered with the first layout's size: the hooks past it are not read */
    sg_device_impl old = npu;
    old.size = (uint32_t)SG_DEVICE_IMPL_SIZE_V1;
    sg_device_impl bad = npu;
    bad.size = 3;
    CHECK(sg_device_impl_register(SG_DEV_PRIVATEUSE2, &bad) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "size 3 is smaller than the first layout's");
    CHECK(sg_device_impl_register(SG_DEV_PRIVATEUSE2, &old) == SG_OK);
    cur_dev = 1;
    sg_device d;
    CHECK(sg_device_current(SG_DEV_PRIVATEUSE2, &d) == SG_OK && d.index == 0);
    CHECK(sg_device_set_current((sg_device){SG_DEV_PRIVATEUSE2, 1}) == SG_EUNSUPPORTED);
    CHECK_HAS(sg_last_error(), "privateusetwo backend has no device guard");
    CHECK(sg_device_set_current((sg_device){SG_DEV_PRIVATEUSE2, 0}) == SG_OK);
    cur_dev = 0;
    sg_event *ev = NULL;
    CHECK(sg_event_create((sg_device){SG_DEV_PRIVATEUSE2, 0}, &ev) == SG_EUNSUPPORTED && !ev);
    /* PrivateUse3: events come all together or not at all */
    sg_device_impl half = npu;
    half.event_wait = NULL;
    CHECK(sg_device_impl_register(SG_DEV_PRIVATEUSE3, &half) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "give all five or none");
    /* the struct is copied: changing the caller's afterwards changes nothing */
    CHECK(sg_device_impl_register(SG_DEV_PRIVATEUSE1, &npu) == SG_OK);
    CHECK(sg_device_impl_register(SG_DEV_PRIVATEUSE1, &npu) == SG_EEXISTS);
}

static void test_guard_streams_events(void) {
    sg_device d;
    CHECK(sg_device_set_current(NPU(0)) == SG_OK);
    sg_device_guard g;
    CHECK(sg_device_guard_enter(&g, NPU(1)) == SG_OK && cur_dev == 1);
    CHECK(sg_device_current(SG_DEV_PRIVATEUSE1, &d) == SG_OK && sg_device_eq(d, NPU(1)));
    sg_device_guard_exit(&g);
    CHECK(cur_dev == 0);
    CHECK(sg_device_guard_enter(&g, NPU(7)) == SG_EDEVICE && cur_dev == 0);
    CHECK(sg_device_set_current(NPU(2)) == SG_EDEVICE);
    CHECK_HAS(sg_last_error(), "sg_device_set_current: npu:2: device npu:2 does not exist");

    int   s1;
    void *s = &s1;
    CHECK(sg_stream_set(NPU(1), &s1) == SG_OK && cur_stream[1] == &s1 && !cur_stream[0]);
    CHECK(sg_stream_current(NPU(1), &s) == SG_OK && s == &s1);
    CHECK(sg_stream_current(NPU(0), &s) == SG_OK && s == NULL);
    int before = n_sync;
    CHECK(sg_device_synchronize(NPU(1)) == SG_OK && n_sync == before + 1);

    sg_event *ev = NULL;
    bool      done = false;
    CHECK(sg_event_create(NPU(1), &ev) == SG_OK && ev && n_events == 1);
    CHECK(sg_event_record(ev) == SG_OK);
    CHECK(sg_event_query(ev, &done) == SG_OK && done); /* no query hook: waits, then true */
    CHECK(sg_event_wait(ev, NPU(0)) == SG_OK);
    CHECK(sg_event_wait(ev, SG_CPU) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "an event of npu:1 cannot be waited for by a stream of cpu");
    CHECK(sg_event_synchronize(ev) == SG_OK);
    sg_event_destroy(ev);
    CHECK(n_events == 0);
    CHECK(sg_stream_set(NPU(1), NULL) == SG_OK);

    /* the CPU: one synchronous queue */
    CHECK(sg_device_current(SG_DEV_CPU, &d) == SG_OK && sg_device_eq(d, SG_CPU));
    CHECK(sg_device_synchronize(SG_CPU) == SG_OK);
    CHECK(sg_stream_set(SG_CPU, &s1) == SG_EUNSUPPORTED);
    CHECK(sg_stream_set(SG_CPU, NULL) == SG_OK);
    CHECK(sg_event_create(SG_CPU, &ev) == SG_EUNSUPPORTED);
    CHECK_HAS(sg_last_error(), "the cpu backend has no events");
    CHECK(sg_event_record(NULL) == SG_EINVAL);
    CHECK(sg_device_guard_enter(NULL, SG_CPU) == SG_EINVAL);
}

/* A machine without a GPU (or a build without CUDA) says that no CUDA device is there, not
 * that a driver is too old. */
static void test_no_cuda_message(void) {
    if (sg_cuda_available(NULL)) return;
    CHECK(sg_device_check(SG_CUDA(0)) == SG_EDEVICE);
    const char *m = sg_last_error();
    CHECK(strstr(m, "no CUDA device is present") || strstr(m, "this build has no CUDA support"));
    CHECK(!strstr(m, "driver version is insufficient") || strstr(m, "no CUDA device is present"));
}

/* ---- schema facts ---------------------------------------------------------------------------- */

static void test_arg_info(void) {
    sg_op *op = define("t20::info(Tensor(a!) self, Tensor? other, *, Scalar alpha=1, "
                       "int[2] k=[1, 2], Tensor(b!) out) -> (Tensor(a!), Tensor(b!), Tensor)");
    sg_arg_info i;
    CHECK(sg_op_arg_info(op, 0, &i) == SG_OK);
    CHECK_STR(i.name, "self");
    CHECK_STR(i.type, "Tensor");
    CHECK(i.alias == 'a' && i.alias_set && !strcmp(i.alias_set, "a") && i.write && !i.kwarg_only &&
          !i.is_out && i.is_tensor && !i.has_default && !i.default_text);
    CHECK(sg_op_arg_info(op, 1, &i) == SG_OK);
    CHECK_STR(i.type, "Tensor?");
    CHECK(i.alias == -1 && !i.alias_set && !i.write && i.is_tensor);
    CHECK(sg_op_arg_info(op, 2, &i) == SG_OK);
    CHECK_STR(i.name, "alpha");
    CHECK_STR(i.type, "Scalar");
    CHECK(i.kwarg_only && i.has_default && !i.is_tensor);
    CHECK_STR(i.default_text, "1");
    CHECK(sg_op_arg_info(op, 3, &i) == SG_OK);
    CHECK_STR(i.type, "int[2]");
    CHECK_STR(i.default_text, "[1, 2]");
    CHECK(sg_op_arg_info(op, 4, &i) == SG_OK);
    CHECK(i.is_out && i.write && i.alias == 'b');
    CHECK(sg_op_arg_info(op, 5, &i) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "t20::info has 5 arguments; there is no argument 5");
    CHECK(sg_op_arg_info(op, -1, &i) == SG_EINVAL);
    CHECK(sg_op_arg_info(NULL, 0, &i) == SG_EINVAL);
    CHECK(sg_op_ret_info(op, 1, &i) == SG_OK && !i.name && i.alias == 'b' && i.write);
    CHECK(sg_op_ret_info(op, 2, &i) == SG_OK && i.alias == -1 && !i.write);
    CHECK(sg_op_ret_info(op, 3, &i) == SG_EINVAL);
    CHECK(sg_op_ret_alias_arg(op, 0) == 0);
    CHECK(sg_op_ret_alias_arg(op, 1) == 4);
    CHECK(sg_op_ret_alias_arg(op, 2) == -1);
    CHECK(sg_op_ret_alias_arg(op, 3) == -1);
}

/* ---- the same-device check ------------------------------------------------------------------- */

static int ran;
static sg_status first_arg(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                           int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)ks, (void)nrets;
    ran++;
    rets[0] = sg_any_tensor(sg_tensor_retain(args[0].u.t));
    return SG_OK;
}

static void test_same_device(void) {
    sg_op *op = define("t20::pair(Tensor a, Tensor b) -> Tensor");
    sg_op *w = define("t20::pair_(Tensor a, Tensor(b!) b) -> Tensor");
    sg_kernel k = {NULL, first_arg, NULL};
    CHECK(sg_op_impl(op, SG_KEY_CPU, k, NULL) == SG_OK);
    CHECK(sg_op_impl(op, SG_KEY_PRIVATEUSE1, k, NULL) == SG_OK);
    CHECK(sg_op_impl(w, SG_KEY_PRIVATEUSE1, k, NULL) == SG_OK);
    float      v[4] = {1, 2, 3, 4};
    int64_t    n[1] = {4};
    sg_tensor *c = floats(SG_CPU, v, 1, n), *d = floats(NPU(0), v, 1, n), *d1 = floats(NPU(1), v, 1, n);
    sg_tensor *s = floats(SG_CPU, v, 0, n); /* a CPU 0-dim tensor */
    sg_any     args[2] = {sg_any_tensor(d), sg_any_tensor(c)}, r;
    ran = 0;
    CHECK(sg_op_call_boxed(op, args, 2, &r, 1) == SG_EINVAL && ran == 0);
    CHECK_STR(sg_last_error(), "t20::pair: Expected all tensors to be on the same device, but "
                               "found at least two devices, npu:0 and cpu! (argument 1 'b' is on "
                               "cpu)");
    args[1] = sg_any_tensor(s); /* a CPU scalar may sit beside a device tensor */
    CHECK(sg_op_call_boxed(op, args, 2, &r, 1) == SG_OK && ran == 1 && r.u.t == d);
    sg_any_release(&r);
    CHECK(sg_op_call_boxed(w, args, 2, &r, 1) == SG_EINVAL); /* ... but not as a written one */
    CHECK_HAS(sg_last_error(), "npu:0 and cpu!");
    args[1] = sg_any_tensor(d1); /* one backend key: the boxed call does not look */
    CHECK(sg_check_same_device(op, args, 2) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "found at least two devices, npu:0 and npu:1!");
    const sg_tensor *ts[3] = {d, NULL, d1};
    int32_t          ai[3] = {0, 2, 1};
    CHECK(sg_check_same_device_typed(op, ts, ai, 3) == SG_EINVAL);
    CHECK_HAS(sg_last_error(), "(argument 1 'b' is on npu:1)");
    ts[2] = d;
    CHECK(sg_check_same_device_typed(op, ts, ai, 3) == SG_OK);
    args[1] = sg_any_tensor(c);
    CHECK(sg_op_allow_mixed_devices(op) == SG_OK);
    CHECK(sg_op_call_boxed(op, args, 2, &r, 1) == SG_OK && ran == 2);
    sg_any_release(&r);
    sg_tensor_release(c);
    sg_tensor_release(d);
    sg_tensor_release(d1);
    sg_tensor_release(s);
}

/* ---- the CPU fallback over ops of its own ------------------------------------------------ */

/* CPU kernels over contiguous float tensors. */
static sg_status scale_cpu(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                           int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)nrets;
    CHECK(ks == SG_KEYSET(SG_KEY_CPU));
    sg_tensor *t = args[0].u.t;
    CHECK(t->device.type == SG_DEV_CPU);
    float *p = sg_tensor_data(t);
    for (int64_t i = 0; i < sg_tensor_numel(t); i++) p[i] *= (float)args[1].u.f;
    rets[0] = sg_any_tensor(sg_tensor_retain(t));
    return SG_OK;
}

static sg_status twice_out_cpu(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                               int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)ks, (void)nrets;
    sg_tensor *x = args[0].u.t, *out = args[1].u.t;
    sg_status  st = sg_tensor_resize_(out, x->sizes, x->ndim);
    if (st) return st;
    for (int64_t i = 0; i < sg_tensor_numel(x); i++)
        ((float *)sg_tensor_data(out))[i] = 2 * ((float *)sg_tensor_data(x))[i];
    rets[0] = sg_any_tensor(sg_tensor_retain(out));
    return SG_OK;
}

static sg_status tail_cpu(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                          int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)ks, (void)nrets;
    sg_tensor *v = NULL;
    sg_status  st = sg_tensor_slice(args[0].u.t, 0, args[1].u.i, INT64_MAX, 1, &v);
    rets[0] = sg_any_tensor(v);
    return st;
}

static sg_status sum_list_cpu(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                              int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)ks, (void)nrets;
    sg_tensor *r = NULL;
    sg_tensor *a = args[0].u.tensors[0];
    sg_status  st = sg_tensor_zeros(a->sizes, a->ndim, SG_FLOAT32, SG_CPU, &r);
    for (int32_t j = 0; j < args[0].len && !st; j++) {
        CHECK(args[0].u.tensors[j]->device.type == SG_DEV_CPU);
        for (int64_t i = 0; i < sg_tensor_numel(r); i++)
            ((float *)sg_tensor_data(r))[i] += ((float *)sg_tensor_data(args[0].u.tensors[j]))[i];
    }
    rets[0] = sg_any_tensor(r);
    return st;
}

static sg_status iota_cpu(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                          int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)ks, (void)nrets;
    CHECK(args[1].tag == SG_ANY_DEVICE && args[1].u.dev.type == SG_DEV_CPU);
    int64_t    n = args[0].u.i;
    sg_tensor *r = NULL;
    sg_status  st = sg_tensor_empty(&n, 1, SG_FLOAT32, SG_CPU, &r);
    for (int64_t i = 0; i < n && !st; i++) ((float *)sg_tensor_data(r))[i] = (float)i;
    rets[0] = sg_any_tensor(r);
    return st;
}

static void test_cpu_fallback(void) {
    sg_handle *fb;
    CHECK(sg_fallback_impl(SG_KEY_PRIVATEUSE1, sg_cpu_fallback, NULL, &fb) == SG_OK);
    sg_op *scale = define("t20::scale_(Tensor(a!) self, float k) -> Tensor(a!)");
    sg_op *twice = define("t20::twice.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
    sg_op *tail = define("t20::tail(Tensor(a) self, int start) -> Tensor(a)");
    sg_op *sum = define("t20::sum_list(Tensor[] xs) -> Tensor");
    sg_op *iota = define("t20::iota(int n, Device? device=None) -> Tensor");
    CHECK(sg_op_impl(scale, SG_KEY_CPU, (sg_kernel){NULL, scale_cpu, NULL}, NULL) == SG_OK);
    CHECK(sg_op_impl(twice, SG_KEY_CPU, (sg_kernel){NULL, twice_out_cpu, NULL}, NULL) == SG_OK);
    CHECK(sg_op_impl(tail, SG_KEY_CPU, (sg_kernel){NULL, tail_cpu, NULL}, NULL) == SG_OK);
    CHECK(sg_op_impl(sum, SG_KEY_CPU, (sg_kernel){NULL, sum_list_cpu, NULL}, NULL) == SG_OK);
    CHECK(sg_op_impl(iota, SG_KEY_CPU, (sg_kernel){NULL, iota_cpu, NULL}, NULL) == SG_OK);

    float      v[4] = {1, 2, 3, 4}, got[8];
    int64_t    n[1] = {4}, zero[1] = {0};
    sg_tensor *x = floats(NPU(1), v, 1, n);
    sg_any     a[2] = {sg_any_tensor(x), sg_any_float(3)}, r;

    /* in place: the device tensor passed in is updated and returned */
    CHECK(sg_op_call_boxed(scale, a, 2, &r, 1) == SG_OK);
    CHECK(r.tag == SG_ANY_TENSOR && r.u.t == x && x->refs == 2);
    sg_any_release(&r);
    CHECK(read_floats(x, got, 8) == 4 && got[0] == 3 && got[3] == 12);

    /* out=: resized on the device and written */
    sg_tensor *out = floats(NPU(1), v, 1, zero);
    a[1] = sg_any_tensor(out);
    CHECK(sg_op_call_boxed(twice, a, 2, &r, 1) == SG_OK);
    CHECK(r.u.t == out && out->ndim == 1 && out->sizes[0] == 4 && sg_device_eq(out->device, NPU(1)));
    sg_any_release(&r);
    CHECK(read_floats(out, got, 8) == 4 && got[0] == 6 && got[3] == 24);

    /* a view: shares the device storage, at the view's offset */
    a[1] = sg_any_int(1);
    CHECK(sg_op_call_boxed(tail, a, 2, &r, 1) == SG_OK);
    CHECK(r.u.t && r.u.t != x && r.u.t->storage == x->storage && r.u.t->offset == 1 &&
          r.u.t->sizes[0] == 3 && sg_device_eq(r.u.t->device, NPU(1)));
    CHECK(read_floats(r.u.t, got, 8) == 3 && got[0] == 6 && got[2] == 12);
    sg_any_release(&r);

    /* a list in, a fresh tensor out, allocated by the device's allocator */
    sg_tensor *l[2] = {x, out};
    sg_any     la = sg_any_tensor_list(l, 2);
    int        allocs = host_dev_allocs;
    CHECK(sg_op_call_boxed(sum, &la, 1, &r, 1) == SG_OK);
    CHECK(r.u.t && sg_device_eq(r.u.t->device, NPU(1)) && host_dev_allocs == allocs + 1);
    CHECK(read_floats(r.u.t, got, 8) == 4 && got[0] == 9 && got[3] == 36);
    sg_any_release(&r);

    /* a factory through BackendSelect: runs on the CPU, lands on the device asked for */
    sg_any fa[2] = {sg_any_int(3), sg_any_device(NPU(0))};
    CHECK(sg_op_call_boxed(iota, fa, 2, &r, 1) == SG_OK);
    CHECK(r.u.t && sg_device_eq(r.u.t->device, NPU(0)));
    CHECK(read_floats(r.u.t, got, 8) == 3 && got[2] == 2);
    sg_any_release(&r);

    /* a CPU failure comes back as it was, with nothing leaked */
    a[1] = sg_any_int(1);
    a[0] = sg_any_tensor(x);
    CHECK(sg_handle_release(fb) == SG_OK);
    CHECK(sg_op_call_boxed(tail, a, 2, &r, 1) == SG_ENOKERNEL);
    CHECK(sg_cpu_fallback(NULL, 0, a, &r, 1, NULL) == SG_EINVAL);
    sg_tensor_release(out);
    sg_tensor_release(x);
}

int main(void) {
    test_rename();
    CHECK(sg_device_impl_register(SG_DEV_PRIVATEUSE1, NULL) == SG_EINVAL);
    test_impl_size();
    test_parse();
    test_name_in_messages();
    test_guard_streams_events();
    test_no_cuda_message();
    test_arg_info();
    test_same_device();
    test_cpu_fallback();
    sg_runtime_shutdown();
    return check_result("test_rt_backend");
}
