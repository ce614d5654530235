/* dispatch.c: what a call through the dispatcher costs over a direct call.
 *
 * One op, bench::noop(Tensor self) -> Tensor (bench/ops.yaml, generated into the glue this
 * program links, as a user's library is), with a CPU kernel that does nothing but hand its
 * argument back (no refcounting: the figure is the dispatcher's, not the tensor's). The ways
 * to reach that kernel:
 *   direct    the kernel called by name (not inlined);
 *   unboxed   the generated typed wrapper, bench_noop: key set from the tensor and the
 *             thread's sets, the table entry, an indirect call with the typed signature;
 *   boxed     sg_op_call_boxed: the op's boxed entry (generated for its C signature: the
 *             tags tested with constants, the arguments unboxed), then the typed wrapper;
 *   generic   sg_op_call_boxed_generic, the boxed call of an op without an entry (which pays a
 *             load, a branch and a jump more) and of what an entry hands on: checks, key set
 *             from the boxed arguments, the table entry's boxed function (the generated
 *             boxing adapter), the typed kernel;
 *   by name   sg_call_by_name: the lock-free name lookup, then the boxed call;
 *   declined  the typed wrapper with one typed override (bench_noop_override) whose
 *             predicate says no: the predicate, then the kernel;
 *   taken     the same with a predicate that says yes: the predicate, then the override's
 *             implementation (compared with calling that implementation directly).
 *
 * Modes: with no argument, each way runs in timed batches and the figures are ns per call,
 * the best of several batches (`dispatch_*_ns`), and ratios to the direct call. With --count N,
 * each way runs N times in a function of its own (loop_direct, loop_unboxed, ...), so that
 * callgrind's inclusive counts divided by N are instructions per call; bench/run does that.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static NOINLINE sg_status noop_kernel(sg_keyset ks, sg_tensor *self, sg_tensor **out) {
    (void)ks;
    *out = self;
    return SG_OK;
}

/* an override's implementation: the same work as the kernel */
static NOINLINE sg_status noop_impl(sg_keyset ks, sg_tensor *self, sg_tensor **out) {
    (void)ks;
    *out = self;
    return SG_OK;
}

static bool pred_no(void *ctx, sg_keyset ks, sg_tensor *self) {
    (void)ctx, (void)ks, (void)self;
    return false;
}

static bool pred_yes(void *ctx, sg_keyset ks, sg_tensor *self) {
    (void)ctx, (void)ks, (void)self;
    return true;
}

/* Each way in a loop of its own. `sink` keeps the results alive for the compiler. */
static sg_tensor *volatile sink;
static int                 failures;

/* A typed way: CALL(t, &out) n times. Rationale: each way has a function of its own, so that
 * callgrind counts each apart, even where two ways make the same call (declined and taken run
 * the typed wrapper with different overrides registered). */
#define TYPED_LOOP(name, call)                                  \
    static NOINLINE void name(sg_tensor *t, long n) {           \
        for (long i = 0; i < n; i++) {                          \
            sg_tensor *out;                                     \
            failures += call != SG_OK;                          \
            sink = out;                                         \
        }                                                       \
    }
TYPED_LOOP(loop_direct, noop_kernel(0, t, &out))
TYPED_LOOP(loop_unboxed, bench_noop(t, &out))
TYPED_LOOP(loop_impl, noop_impl(0, t, &out))
TYPED_LOOP(loop_declined, bench_noop(t, &out))
TYPED_LOOP(loop_taken, bench_noop(t, &out))

static NOINLINE void loop_boxed(sg_tensor *t, long n) {
    for (long i = 0; i < n; i++) {
        sg_any arg = sg_any_tensor(t), ret;
        failures += sg_op_call_boxed(bench_noop_op, &arg, 1, &ret, 1) != SG_OK;
        sink = ret.u.t;
    }
}

static NOINLINE void loop_boxed_generic(sg_tensor *t, long n) {
    for (long i = 0; i < n; i++) {
        sg_any arg = sg_any_tensor(t), ret;
        failures += sg_op_call_boxed_generic(bench_noop_op, &arg, 1, &ret, 1) != SG_OK;
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

static void die(void) {
    fprintf(stderr, "sg_bench_dispatch: %s\n", sg_last_error());
    exit(1);
}

/* Installs a typed override of bench::noop at CPU with predicate pred (NULL: none). */
static void set_override(bool (*pred)(void *, sg_keyset, sg_tensor *)) {
    static sg_handle *h;
    if (h && sg_handle_release(h) != SG_OK) die();
    h = NULL;
    if (pred && bench_noop_override(SG_KEY_CPU, 0, pred, noop_impl, NULL, &h) != SG_OK) die();
}

static double min2(double a, double b) { return a < b ? a : b; }

int main(int argc, char **argv) {
    long count = 0;
    if (argc == 3 && strcmp(argv[1], "--count") == 0) {
        count = strtol(argv[2], NULL, 10);
    } else if (argc != 1) {
        fprintf(stderr, "usage: sg_bench_dispatch [--count N]\n");
        return 2;
    }
    if (bench_init() != SG_OK || bench_noop_register(SG_KEY_CPU, noop_kernel, NULL) != SG_OK) die();
    float      data[4] = {0};
    int64_t    sizes[1] = {4};
    sg_tensor *t;
    if (sg_tensor_from_blob(data, sizes, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &t) != SG_OK)
        die();

    if (count > 0) { /* under callgrind: one loop function per way */
        loop_direct(t, count);
        loop_unboxed(t, count);
        loop_boxed(t, count);
        loop_boxed_generic(t, count);
        loop_by_name(t, count);
        loop_impl(t, count);
        set_override(pred_no);
        loop_declined(t, count);
        set_override(pred_yes);
        loop_taken(t, count);
        set_override(NULL);
    } else {
        const long n = 20 * 1000 * 1000;
        const int  batches = 7;
        double     direct = time_loop(loop_direct, t, n, batches);
        double     unboxed = time_loop(loop_unboxed, t, n, batches);
        double     boxed = time_loop(loop_boxed, t, n, batches);
        double     generic = time_loop(loop_boxed_generic, t, n, batches);
        double     by_name = time_loop(loop_by_name, t, n / 4, batches);
        /* the override figures compare ways measured in turns, each its best over the turns,
         * so that a drifting machine moves both sides alike */
        double plain = 1e30, declined = 1e30, taken = 1e30, impl = 1e30;
        for (int turn = 0; turn < 3; turn++) {
            set_override(NULL);
            plain = min2(plain, time_loop(loop_unboxed, t, n / 2, batches));
            set_override(pred_no);
            declined = min2(declined, time_loop(loop_declined, t, n / 2, batches));
            set_override(pred_yes);
            taken = min2(taken, time_loop(loop_taken, t, n / 2, batches));
            impl = min2(impl, time_loop(loop_impl, t, n / 2, batches));
        }
        set_override(NULL);
        printf("dispatch_direct_ns %.2f ns\n", direct);
        printf("dispatch_unboxed_ns %.2f ns\n", unboxed);
        printf("dispatch_unboxed_extra_ns %.2f ns\n", unboxed - direct);
        printf("dispatch_boxed_ns %.2f ns\n", boxed);
        printf("dispatch_boxed_generic_ns %.2f ns\n", generic);
        printf("dispatch_by_name_ns %.2f ns\n", by_name);
        printf("dispatch_unboxed_vs_direct %.2f ratio\n", unboxed / direct);
        printf("dispatch_boxed_vs_direct %.2f ratio\n", boxed / direct);
        printf("dispatch_by_name_vs_direct %.2f ratio\n", by_name / direct);
        printf("dispatch_override_declined_extra_ns %.2f ns\n", declined - plain);
        printf("dispatch_override_taken_extra_ns %.2f ns\n", taken - impl);
    }
    sg_tensor_release(t);
    sg_runtime_shutdown();
    if (failures) {
        fprintf(stderr, "sg_bench_dispatch: %d calls failed\n", failures);
        return 1;
    }
    return 0;
}
