/* main.c: calls the my_ops ops three ways (the typed C API, a boxed call, a call by name) on
 * the CPU and, where a GPU is there, on CUDA; checks every result and exits 0 when all agree.
 *
 *   my_ops_demo          prints one line per check and "my_ops: all N checks passed" */
#include "my_ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int checks, failed;

static void expect(int ok, const char *what) {
    checks++;
    if (!ok) failed++;
    printf("%s  %s\n", ok ? "ok  " : "FAIL", what);
}

/* A status that must be SG_OK; otherwise the runtime's message says why. */
static int must(sg_status st, const char *what) {
    if (st == SG_OK) return 1;
    printf("FAIL  %s: %s: %s\n", what, sg_status_name(st), sg_last_error());
    failed++;
    return 0;
}

/* Whether t (on any device) holds x * scale + shift, element by element. */
static int holds(sg_tensor *t, const float *x, int64_t n, float scale, float shift) {
    sg_tensor *h = NULL;
    if (!t || sg_tensor_numel(t) != n || !must(sg_tensor_to(t, SG_CPU, &h), "copy to cpu")) return 0;
    const float *p = sg_tensor_data(h);
    int ok = 1;
    for (int64_t i = 0; i < n; i++) ok &= fabsf(p[i] - (x[i] * scale + shift)) <= 1e-6f * (1 + fabsf(p[i]));
    sg_tensor_release(h);
    return ok;
}

static void run(sg_device dev, const char *name) {
    enum { N = 6 };
    const float x_host[N] = {-2.0f, -0.5f, 0.0f, 1.0f, 2.5f, 100.0f};
    int64_t     sizes[2] = {2, 3};
    sg_tensor  *xc = NULL, *x = NULL;
    if (!must(sg_tensor_empty(sizes, 2, SG_FLOAT32, SG_CPU, &xc), "empty")) return;
    memcpy(sg_tensor_data(xc), x_host, sizeof x_host);
    if (!must(sg_tensor_to(xc, dev, &x), "to device")) {
        sg_tensor_release(xc);
        return;
    }
    char what[128];

    /* the typed API: one C function per op, checked by the compiler */
    sg_tensor *y = NULL;
    if (must(my_ops_short_kernel(x, &y), "my_ops_short_kernel")) {
        snprintf(what, sizeof what, "%s: typed short_kernel(x) == x * 1.23", name);
        expect(holds(y, x_host, N, 1.23f, 0.0f), what);
    }

    /* out=: the result is `out` itself, resized from its empty shape to x's */
    sg_tensor *out = NULL, *r = NULL;
    int64_t    zero[1] = {0};
    if (must(sg_tensor_empty(zero, 1, SG_FLOAT32, dev, &out), "empty out") &&
        must(my_ops_short_kernel_out(x, out, &r), "my_ops_short_kernel_out")) {
        snprintf(what, sizeof what, "%s: short_kernel.out writes out and returns it", name);
        expect(r == out && out->ndim == 2 && holds(out, x_host, N, 1.23f, 0.0f), what);
    }

    /* boxed: arguments as sg_any, one per schema argument; the trailing ones with defaults
     * (scale=1.0, shift=0.0) may be left out and the runtime fills them in */
    sg_any args[3] = {sg_any_tensor(x), sg_any_float(2.0), sg_any_float(0.5)};
    sg_any ret[1];
    if (must(sg_op_call_boxed(my_ops_affine_op, args, 3, ret, 1), "boxed affine")) {
        snprintf(what, sizeof what, "%s: boxed affine(x, 2.0, 0.5) == 2x + 0.5", name);
        expect(holds(ret[0].u.t, x_host, N, 2.0f, 0.5f), what);
        sg_any_release(&ret[0]);
    }
    if (must(sg_op_call_boxed(my_ops_affine_op, args, 1, ret, 1), "boxed affine(x)")) {
        snprintf(what, sizeof what, "%s: boxed affine(x) fills scale=1.0, shift=0.0", name);
        expect(holds(ret[0].u.t, x_host, N, 1.0f, 0.0f), what);
        sg_any_release(&ret[0]);
    }

    /* by name, as a binding for another language calls: the op is looked up once per call */
    if (must(sg_call_by_name("my_ops::affine", "", args, 2, ret, 1), "affine by name")) {
        snprintf(what, sizeof what, "%s: by name affine(x, 2.0) fills shift=0.0", name);
        expect(holds(ret[0].u.t, x_host, N, 2.0f, 0.0f), what);
        sg_any_release(&ret[0]);
    }

    /* errors come back as a status and a message, never printed or aborted on */
    sg_tensor *xi = NULL, *bad = NULL;
    if (must(sg_tensor_zeros(sizes, 2, SG_INT32, dev, &xi), "zeros int32")) {
        snprintf(what, sizeof what, "%s: an int32 tensor is refused with a message", name);
        expect(my_ops_short_kernel(xi, &bad) == SG_EINVAL && bad == NULL &&
                   strstr(sg_last_error(), "x must be float32, not int32") != NULL,
               what);
    }

    sg_tensor_release(xi);
    sg_tensor_release(r);
    sg_tensor_release(out);
    sg_tensor_release(y);
    sg_tensor_release(x);
    sg_tensor_release(xc);
}

int main(void) {
    /* the header and the library linked must agree (the version and the types' sizes) */
    if (!must(SG_RUNTIME_CHECK_ABI(), "sg_runtime_check_abi") ||
        !must(my_ops_init(), "my_ops_init"))
        return 1;
    run(SG_CPU, "cpu");
    const char *why = NULL;
    if (sg_cuda_available(&why)) {
#ifdef MY_OPS_CUDA
        run(SG_CUDA(0), "cuda");
#else
        printf("skipped cuda: this build has no CUDA kernels for my_ops\n");
#endif
    } else {
        printf("skipped cuda: %s\n", why ? why : "unavailable");
    }
    if (failed) {
        printf("my_ops: %d of %d checks failed\n", failed, checks);
        return 1;
    }
    printf("my_ops: all %d checks passed\n", checks);
    return 0;
}
