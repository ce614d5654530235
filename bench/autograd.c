/* autograd.c: one training step of the demo's Llama block (examples/llama_model.c: forward,
 * mean squared error, backward through the generated Autograd kernels, SGD), on the CPU and on
 * GPU 0 where there is one; bench/autograd_torch.py times PyTorch eager doing the same step.
 *
 *   sg_bench_autograd [--reps N] [--smoke]
 *
 * Figures: autograd_step_{cpu,cuda}_ms (the median step, the device synchronized at its end),
 * autograd_forward_{cpu,cuda}_ms (the same forward with no gradient recorded, for where the
 * time goes) and autograd_saved_{cpu,cuda}_bytes (what the saved values hold once the forward
 * is recorded: sg_autograd_saved_bytes). */
#define _POSIX_C_SOURCE 200809L
#include "aten_autograd.h"
#include "llama_model.h"
#include "sg_aten_cpu.h"
#include "sg_autograd.h"
#ifdef SG_BENCH_CUDA
#include "sg_aten_cuda.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const double LR = 1e-3; /* small: many steps stay finite */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static sg_status step(block *b, sg_tensor *x, sg_tensor *target, sg_device dev) {
    sg_tensor *loss = NULL;
    sg_status  st = llama_loss(b, x, target, &loss);
    if (!st) st = sg_backward(&loss, NULL, 1, false);
    sg_tensor_release(loss);
    if (!st) st = llama_sgd(b, LR);
    if (!st) st = llama_sync(dev);
    return st;
}

static sg_status run(sg_device dev, const char *name, int reps) {
    block      b;
    sg_tensor *x = NULL, *target = NULL, *y = NULL, *loss = NULL;
    int64_t    td[2] = {T, D};
    double    *t = calloc((size_t)reps, sizeof *t);
    sg_status  st = t ? llama_make(&b) : sg_error(SG_ENOMEM, "out of memory");
    if (st) goto out;
    if ((st = llama_filled(10, 1.0, td, 2, &x)) || (st = llama_filled(11, 1.0, td, 2, &target)) ||
        (st = llama_move_block(&b, dev)) || (st = llama_move(&x, dev)) ||
        (st = llama_move(&target, dev)))
        goto done;
    for (int i = 0; i < LLAMA_NPARAMS && !st; i++)
        st = sg_tensor_set_requires_grad(*llama_param(&b, i), true);
    for (int i = 0; i < 3 && !st; i++) st = step(&b, x, target, dev); /* warm-up */
    for (int i = 0; i < reps && !st; i++) {
        double t0 = now_ms();
        st = step(&b, x, target, dev);
        t[i] = now_ms() - t0;
    }
    if (st) goto done;
    printf("autograd_step_%s_ms %.4f ms\n", name, median(t, reps));
    /* what the recorded forward keeps for backward */
    int64_t before = sg_autograd_saved_bytes();
    if ((st = llama_loss(&b, x, target, &loss))) goto done;
    printf("autograd_saved_%s_bytes %lld bytes\n", name,
           (long long)(sg_autograd_saved_bytes() - before));
    sg_tensor_release(loss);
    loss = NULL;
    bool was = sg_grad_set_enabled(false);
    for (int i = 0; i < reps && !st; i++) {
        double t0 = now_ms();
        if (!(st = llama_forward(&b, x, &y))) st = llama_sync(dev);
        sg_tensor_release(y);
        y = NULL;
        t[i] = now_ms() - t0;
    }
    sg_grad_set_enabled(was);
    if (!st) printf("autograd_forward_%s_ms %.4f ms\n", name, median(t, reps));
done:
    sg_tensor_release(x), sg_tensor_release(target), sg_tensor_release(loss);
    llama_free(&b);
out:
    free(t);
    if (st) fprintf(stderr, "sg_bench_autograd: %s: %s\n", name, sg_last_error());
    return st;
}

int main(int argc, char **argv) {
    int reps = 30;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--smoke")) reps = 1;
        else {
            fprintf(stderr, "usage: sg_bench_autograd [--reps N] [--smoke]\n");
            return 2;
        }
    }
    if (reps < 1) reps = 1;
#ifdef SG_BENCH_CUDA
    sg_status st = sg_aten_cuda_init();
#else
    sg_status st = sg_aten_cpu_init();
#endif
    if (!st) st = aten_autograd_init();
    if (!st) st = run(SG_CPU, "cpu", reps);
#ifdef SG_BENCH_CUDA
    const char *why = NULL;
    if (!st && sg_cuda_available(&why)) st = run(SG_CUDA(0), "cuda", reps);
    else if (!st) fprintf(stderr, "sg_bench_autograd: no CUDA: %s\n", why);
#endif
    if (st) fprintf(stderr, "sg_bench_autograd: %s\n", sg_last_error());
    sg_runtime_shutdown();
    return st ? 1 : 0;
}
