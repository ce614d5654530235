/* test_rt_threads.c: registration while other threads dispatch. Readers call an op in a loop,
 * typed and boxed, while a writer registers and releases kernels, fallbacks and overrides for
 * it; every call must run one of the kernels that could be current, and never fail. Meant to
 * run under ThreadSanitizer too (.ci/run builds it so). */
#include "check.h"
#include "sg_runtime.h"

#include <pthread.h>
#include <string.h>

enum { READERS = 3, ROUNDS = 500 };

static sg_op     *op;
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
        if (got < 1 || got > 4 || got2 < 1 || got2 > 4) __atomic_fetch_add(&bad_calls, 1, __ATOMIC_RELAXED);
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

    pthread_t th[READERS];
    for (int i = 0; i < READERS; i++) CHECK(pthread_create(&th[i], NULL, reader, NULL) == 0);
    for (int round = 0; round < ROUNDS; round++) {
        sg_handle *k, *f, *o;
        CHECK(sg_op_impl(op, SG_KEY_CPU, (sg_kernel){NULL, kernel, (void *)(intptr_t)2}, &k) == SG_OK);
        CHECK(sg_op_override(op, SG_KEY_CPU, round, even_round, kernel, (void *)(intptr_t)3, &o) == SG_OK);
        CHECK(sg_fallback_impl(SG_KEY_AUTOGRAD_CPU, kernel, (void *)(intptr_t)4, &f) == SG_OK);
        CHECK(sg_handle_release(f) == SG_OK);
        if (round % 2) sg_overrides_set_enabled(round % 4 == 1);
        CHECK(sg_handle_release(o) == SG_OK);
        CHECK(sg_handle_release(k) == SG_OK);
        /* defining ops grows the name table while readers may look names up */
        char schema[64];
        snprintf(schema, sizeof schema, "thr::g%d(Tensor x) -> int", round);
        sg_op *g;
        CHECK(sg_op_define(schema, &g) == SG_OK);
        sg_op *found;
        CHECK(sg_op_find("thr::f", NULL, &found) == SG_OK && found == op);
    }
    sg_overrides_set_enabled(true);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < READERS; i++) pthread_join(th[i], NULL);
    CHECK(bad_calls == 0);
    CHECK(calls > 0);
    printf("%ld calls during %d rounds of registration\n", calls, ROUNDS);
    sg_tensor_release(cpu);
    sg_runtime_shutdown();
    return check_result("test_rt_threads");
}
