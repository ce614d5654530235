/* test_rt_threads.c: registration while other threads dispatch. Readers call an op in a loop,
 * typed and boxed, while a writer registers and releases kernels, fallbacks and overrides for
 * it; every call must run one of the kernels that could be current, and never fail. They also
 * call a second op boxed, which the writer gives a boxed entry halfway (as a generated
 * library's init does), so the entry is published while calls read it. Meant to run under
 * ThreadSanitizer too (.ci/run builds it so). */
#include "check.h"
#include "sg_runtime.h"

#include <pthread.h>
#include <string.h>

enum { READERS = 3, ROUNDS = 500 };

static sg_op     *op, *op_e;
static long       entry_calls; /* atomic */
static sg_tensor *cpu;
static int        stop;      /* atomic */
static long       bad_calls; /* atomic */
static long       calls;     /* atomic */

/* Each kernel returns its own id through result 0 (an int). */
static sg_status kernel(const sg_op *o, sg_keyset ks, const sg_any *args, sg_any *rets,
                        int32_t nrets, void *ctx) {
    (void)o, (void)ks, (void)args;
    if (nrets > 0) rets[0] = sg_any_int((int64_t)(intptr_t)ctx);
    return SG_OK;
}

static bool even_round(void *ctx, const sg_op *o, sg_keyset ks, const sg_any *args,
                       int32_t nargs) {
    (void)ctx, (void)o, (void)ks, (void)args, (void)nargs;
    return true;
}

typedef sg_status (*typed_fn)(sg_keyset, sg_tensor *, int64_t *);

static sg_status typed_kernel(sg_keyset ks, sg_tensor *self, int64_t *out) {
    (void)ks, (void)self;
    *out = 1;
    return SG_OK;
}

static sg_status typed_adapter(const sg_op *o, sg_keyset ks, const sg_any *args, sg_any *rets,
                               int32_t nrets, void *ctx) {
    (void)ctx, (void)o, (void)nrets;
    int64_t   v = 0;
    sg_status st = typed_kernel(ks, args[0].u.t, &v);
    rets[0] = sg_any_int(v);
    return st;
}

/* op_e's typed call, as a generated wrapper makes it (a boxed fallback may stand at a key) */
static sg_status call_e(sg_tensor *x, int64_t *out) {
    sg_keyset       ks = sg_tls_apply(x->keys);
    const sg_entry *e = sg_dispatch_entry(op_e, ks);
    if (e->unboxed) return ((typed_fn)e->unboxed)(ks, x, out);
    sg_any a = sg_any_tensor(x), r = sg_any_none();
    sg_status st = e->boxed(op_e, ks, &a, &r, 1, e->ctx);
    *out = r.u.i;
    return st;
}

/* op_e's boxed entry, as a generated one: what it takes goes to the typed call */
static sg_status entry_e(const sg_op *o, const sg_any *args, int32_t nargs, sg_any *rets,
                         int32_t nrets, sg_fn typed) {
    if (nargs != 1 || nrets != 1 || !args || !rets || args[0].tag != SG_ANY_TENSOR || !args[0].u.t)
        return sg_op_call_boxed_generic(o, args, nargs, rets, nrets);
    __atomic_fetch_add(&entry_calls, 1, __ATOMIC_RELAXED);
    int64_t   v = 0;
    sg_status st = ((sg_status(*)(sg_tensor *, int64_t *))typed)(args[0].u.t, &v);
    rets[0] = st ? sg_any_none() : sg_any_int(v);
    return st;
}

/* an entry given too late: the op keeps its first */
static sg_status entry_late(const sg_op *o, const sg_any *args, int32_t nargs, sg_any *rets,
                            int32_t nrets, sg_fn typed) {
    (void)o, (void)args, (void)nargs, (void)rets, (void)nrets, (void)typed;
    return sg_error(SG_ESTATE, "the second entry ran");
}

static void *reader(void *arg) {
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        sg_any a = sg_any_tensor(cpu), r;
        int64_t got = -1;
        if (sg_op_call_boxed(op, &a, 1, &r, 1) == SG_OK && r.tag == SG_ANY_INT) got = r.u.i;
        /* the typed path, as generated code takes it */
        sg_keyset       ks = sg_tls_apply(cpu->keys);
        const sg_entry *e = sg_dispatch_entry(op, ks);
        int64_t         got2 = -1;
        if (e->unboxed) {
            ((typed_fn)e->unboxed)(ks, cpu, &got2);
        } else {
            sg_any r2 = sg_any_none();
            if (e->boxed(op, ks, &a, &r2, 1, e->ctx) == SG_OK) got2 = r2.u.i;
        }
        sg_any  r3;
        int64_t got3 = -1;
        if (sg_op_call_boxed(op_e, &a, 1, &r3, 1) == SG_OK && r3.tag == SG_ANY_INT) got3 = r3.u.i;
        if (got < 1 || got > 4 || got2 < 1 || got2 > 4 || (got3 != 1 && got3 != 4))
            __atomic_fetch_add(&bad_calls, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(void) {
    float   data[4];
    int64_t n[1] = {4};
    CHECK(sg_op_define("thr::f(Tensor x) -> int", &op) == SG_OK);
    CHECK(sg_tensor_from_blob(data, n, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &cpu) == SG_OK);
    sg_handle *base;
    CHECK(sg_op_impl(op, SG_KEY_CPU, (sg_kernel){(sg_fn)typed_kernel, typed_adapter, NULL},
                     &base) == SG_OK);
    CHECK(sg_op_define("thr::e(Tensor x) -> int", &op_e) == SG_OK);
    CHECK(sg_op_impl(op_e, SG_KEY_CPU, (sg_kernel){(sg_fn)typed_kernel, typed_adapter, NULL},
                     NULL) == SG_OK);
    /* what a boxed entry needs, refused where missing */
    CHECK(sg_op_set_boxed_entry(NULL, entry_e, (sg_fn)call_e) == SG_EINVAL);
    CHECK(sg_op_set_boxed_entry(op_e, NULL, (sg_fn)call_e) == SG_EINVAL);
    CHECK(sg_op_set_boxed_entry(op_e, entry_e, NULL) == SG_EINVAL);

    pthread_t th[READERS];
    for (int i = 0; i < READERS; i++) CHECK(pthread_create(&th[i], NULL, reader, NULL) == 0);
    for (int round = 0; round < ROUNDS; round++) {
        sg_handle *k, *f, *o;
        CHECK(sg_op_impl(op, SG_KEY_CPU, (sg_kernel){NULL, kernel, (void *)(intptr_t)2}, &k) == SG_OK);
        CHECK(sg_op_override(op, SG_KEY_CPU, round, even_round, kernel, (void *)(intptr_t)3, &o) == SG_OK);
        CHECK(sg_fallback_impl(SG_KEY_AUTOGRAD_CPU, kernel, (void *)(intptr_t)4, &f) == SG_OK);
        CHECK(sg_handle_release(f) == SG_OK);
        if (round % 2) sg_overrides_set_enabled(round % 4 == 1);
        if (round % 3 == 0) /* the op's own switch too, turned every third round */
            CHECK(sg_op_set_overrides_enabled(op, round % 6 != 0) == SG_OK);
        CHECK(sg_handle_release(o) == SG_OK);
        CHECK(sg_handle_release(k) == SG_OK);
        /* defining ops grows the name table while readers may look names up */
        char schema[64];
        snprintf(schema, sizeof schema, "thr::g%d(Tensor x) -> int", round);
        sg_op *g;
        CHECK(sg_op_define(schema, &g) == SG_OK);
        sg_op *found;
        CHECK(sg_op_find("thr::f", NULL, &found) == SG_OK && found == op);
        if (round == ROUNDS / 2)
            CHECK(sg_op_set_boxed_entry(op_e, entry_e, (sg_fn)call_e) == SG_OK);
    }
    sg_overrides_set_enabled(true);
    CHECK(sg_op_set_overrides_enabled(op, true) == SG_OK && sg_op_overrides_enabled(op));
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < READERS; i++) pthread_join(th[i], NULL);
    CHECK(bad_calls == 0);
    CHECK(calls > 0);
    /* the entry took calls once given, and the op keeps it against a second */
    long before = entry_calls;
    CHECK(before > 0);
    CHECK(sg_op_set_boxed_entry(op_e, entry_late, (sg_fn)call_e) == SG_OK);
    sg_any a = sg_any_tensor(cpu), r;
    CHECK(sg_op_call_boxed(op_e, &a, 1, &r, 1) == SG_OK && r.tag == SG_ANY_INT && r.u.i == 1);
    CHECK(entry_calls == before + 1);
    /* what the entry does not take goes to the generic call, with its message */
    CHECK(sg_op_call_boxed(op_e, &a, 2, &r, 1) == SG_EINVAL && r.tag == SG_ANY_NONE);
    CHECK(strstr(sg_last_error(), "thr::e: expected 1 argument, got 2") != NULL);
    CHECK(entry_calls == before + 1);
    printf("%ld calls during %d rounds of registration\n", calls, ROUNDS);
    sg_tensor_release(cpu);
    sg_runtime_shutdown();
    return check_result("test_rt_threads");
}
