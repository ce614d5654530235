/* dispatch.c: what a call through the dispatcher costs over a direct call.
 *
 * One op, bench::noop(Tensor self) -> Tensor, with a CPU kernel that does nothing but hand its
 * argument back (no refcounting: the figure is the dispatcher's, not the tensor's). Four ways
 * to reach that kernel:
 *   direct   the kernel called by name (not inlined);
 *   unboxed  the typed wrapper the generator emits: key set from the tensor and the thread's
 *            sets, the table entry, an indirect call with the typed signature;
 *   boxed    sg_op_call_boxed: checks, key set from the boxed arguments, the entry's boxed
 *            function (the generated boxing adapter), the typed kernel;
 *   by name  sg_call_by_name: the lock-free name lookup, then the boxed call.
 *
 * Modes: with no argument, each way runs in timed batches and the figures are ns per call,
 * the best of several batches (`dispatch_*_ns`), and ratios to the direct call. With --count N,
 * each way runs N times in a function of its own (loop_direct, loop_unboxed, ...), so that
 * callgrind's inclusive counts divided by N are instructions per call; bench/run does that.
 */
#define _POSIX_C_SOURCE 200809L
#include "sg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

typedef sg_status (*noop_fn)(sg_keyset ks, sg_tensor *self, sg_tensor **out);

static NOINLINE sg_status noop_kernel(sg_keyset ks, sg_tensor *self, sg_tensor **out) {
    (void)ks;
    *out = self;
    return SG_OK;
}

/* The boxing adapter the generator pairs with a typed kernel. */
static sg_status noop_boxed(void *ctx, const sg_op *op, sg_keyset ks, const sg_any *args,
                            int32_t nargs, sg_any *rets, int32_t nrets) {
    (void)op, (void)nargs, (void)nrets;
    sg_tensor *out;
    sg_status  st = ((noop_fn) * (const sg_fn *)ctx)(ks, args[0].u.t, &out);
    rets[0] = sg_any_tensor(out);
    return st;
}

static sg_op *noop_op;

/* The typed wrapper's slow path: the entry has no typed kernel (a boxed kernel, a fallback,
 * overrides, or an error to report), so the arguments are boxed. Out of line, so the fast
 * path needs no stack frame. */
static NOINLINE __attribute__((cold)) sg_status bench_noop_boxed(const sg_entry *e, sg_keyset ks,
                                                                  sg_tensor *self,
                                                                  sg_tensor **out) {
    sg_any    arg = sg_any_tensor(self), ret = sg_any_none();
    sg_status st = e->boxed(e->ctx, noop_op, ks, &arg, 1, &ret, 1);
    *out = ret.u.t;
    return st;
}

/* The typed wrapper, as generated code writes it for this schema. */
static NOINLINE sg_status bench_noop(sg_tensor *self, sg_tensor **out) {
    sg_keyset       ks = sg_tls_apply(self->keys);
    const sg_entry *e = sg_dispatch_entry(noop_op, ks);
    if (SG_LIKELY(e->unboxed != NULL)) return ((noop_fn)e->unboxed)(ks, self, out);
    return bench_noop_boxed(e, ks, self, out);
}

/* Each way in a loop of its own. `sink` keeps the results alive for the compiler. */
static sg_tensor *volatile sink;
static int                 failures;

static NOINLINE void loop_direct(sg_tensor *t, long n) {
    for (long i = 0; i < n; i++) {
        sg_tensor *out;
        failures += noop_kernel(0, t, &out) != SG_OK;
        sink = out;
    }
}

static NOINLINE void loop_unboxed(sg_tensor *t, long n) {
    for (long i = 0; i < n; i++) {
        sg_tensor *out;
        failures += bench_noop(t, &out) != SG_OK;
        sink = out;
    }
}

static NOINLINE void loop_boxed(sg_tensor *t, long n) {
    for (long i = 0; i < n; i++) {
        sg_any arg = sg_any_tensor(t), ret;
        failures += sg_op_call_boxed(noop_op, &arg, 1, &ret, 1) != SG_OK;
        sink = ret.u.t;
    }
}

static NOINLINE void loop_by_name(sg_tensor *t, long n) {
    for (long i = 0; i < n; i++) {
        sg_any arg = sg_any_tensor(t), ret;
        failures += sg_call_by_name("bench::noop", "", &arg, 1, &ret, 1) != SG_OK;
        sink = ret.u.t;
    }
}

typedef void (*loop_fn)(sg_tensor *, long);

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The best of `batches` batches of n calls, in ns per call. */
static double time_loop(loop_fn f, sg_tensor *t, long n, int batches) {
    double best = 1e30;
    f(t, n / 10); /* warm */
    for (int b = 0; b < batches; b++) {
        double t0 = now_ns();
        f(t, n);
        double dt = (now_ns() - t0) / (double)n;
        if (dt < best) best = dt;
    }
    return best;
}

int main(int argc, char **argv) {
    long count = 0;
    if (argc == 3 && strcmp(argv[1], "--count") == 0) {
        count = strtol(argv[2], NULL, 10);
    } else if (argc != 1) {
        fprintf(stderr, "usage: sg_bench_dispatch [--count N]\n");
        return 2;
    }
    sg_handle *h;
    if (sg_op_define("bench::noop(Tensor self) -> Tensor", &noop_op) != SG_OK ||
        sg_op_impl(noop_op, SG_KEY_CPU,
                   (sg_kernel){(sg_fn)noop_kernel, noop_boxed, NULL},
                   &h) != SG_OK) {
        fprintf(stderr, "sg_bench_dispatch: %s\n", sg_last_error());
        return 1;
    }
    float      data[4] = {0};
    int64_t    sizes[1] = {4};
    sg_tensor *t;
    if (sg_tensor_from_blob(data, sizes, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &t) != SG_OK) {
        fprintf(stderr, "sg_bench_dispatch: %s\n", sg_last_error());
        return 1;
    }

    if (count > 0) { /* under callgrind: one loop function per way */
        loop_direct(t, count);
        loop_unboxed(t, count);
        loop_boxed(t, count);
        loop_by_name(t, count);
    } else {
        const long n = 20 * 1000 * 1000;
        const int  batches = 7;
        double     direct = time_loop(loop_direct, t, n, batches);
        double     unboxed = time_loop(loop_unboxed, t, n, batches);
        double     boxed = time_loop(loop_boxed, t, n, batches);
        double     by_name = time_loop(loop_by_name, t, n / 4, batches);
        printf("dispatch_direct_ns %.2f ns\n", direct);
        printf("dispatch_unboxed_ns %.2f ns\n", unboxed);
        printf("dispatch_unboxed_extra_ns %.2f ns\n", unboxed - direct);
        printf("dispatch_boxed_ns %.2f ns\n", boxed);
        printf("dispatch_by_name_ns %.2f ns\n", by_name);
        printf("dispatch_unboxed_vs_direct %.2f ratio\n", unboxed / direct);
        printf("dispatch_boxed_vs_direct %.2f ratio\n", boxed / direct);
        printf("dispatch_by_name_vs_direct %.2f ratio\n", by_name / direct);
    }
    sg_tensor_release(t);
    sg_runtime_shutdown();
    if (failures) {
        fprintf(stderr, "sg_bench_dispatch: %d calls failed\n", failures);
        return 1;
    }
    return 0;
}
