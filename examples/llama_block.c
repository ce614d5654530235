/* llama_block.c: one Llama-style transformer block written in C against the generated aten
 * API: RMSNorm, q/k/v projections, rotary embedding, causal attention, output projection,
 * residuals, SwiGLU MLP. Weights and input come from a counter-based generator that
 * examples/llama_block_ref.py reproduces in PyTorch; the block's output is compared with what
 * PyTorch computed for the same numbers (examples/llama_block.ref). Then a few training steps
 * (forward, mean squared error against a target, backward through the generated Autograd
 * kernels, SGD) whose losses and first gradients are compared with PyTorch's
 * (examples/llama_train.ref, from examples/llama_train_ref.py).
 *
 *   sg_demo_llama [REF_FILE] [--device cuda]
 *
 * prints the checksum, the time per forward, the check, then the losses and their check (the
 * training reference is llama_train.ref beside REF_FILE). With --device cuda (a build with the
 * CUDA kernels) the weights and input are moved to the GPU and the same steps run there;
 * without a usable GPU it says so and exits 77 (a skip, for ctest). */
#define _POSIX_C_SOURCE 200809L
#include "aten_autograd.h"
#include "llama_model.h"
#include "sg_aten_cpu.h"
#include "sg_autograd.h"
#ifdef SG_DEMO_CUDA
#include "sg_aten_cuda.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The reference: "checksum V", "abs_sum V", "values V V V ..." (the first outputs). */
static int check(const char *path, const float *y, int64_t n, double checksum, double abs_sum) {
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("reference: %s not found (make it with examples/llama_block_ref.py)\n", path);
        return 0;
    }
    double ref_sum = NAN, ref_abs = NAN, worst = 0;
    char   key[32];
    int    bad = 0, nvals = 0;
    while (fscanf(f, "%31s", key) == 1) {
        if (strcmp(key, "checksum") == 0 && fscanf(f, "%lf", &ref_sum) == 1) continue;
        if (strcmp(key, "abs_sum") == 0 && fscanf(f, "%lf", &ref_abs) == 1) continue;
        if (strcmp(key, "values") == 0) {
            double v;
            while (nvals < n && fscanf(f, "%lf", &v) == 1) {
                double err = fabs(v - y[nvals]) / (1 + fabs(v));
                if (err > worst) worst = err;
                nvals++;
            }
        }
    }
    fclose(f);
    bad = !(fabs(checksum - ref_sum) <= 1e-3 * (1 + fabs(ref_sum))) ||
          !(fabs(abs_sum - ref_abs) <= 1e-4 * (1 + ref_abs)) || worst > 1e-4 || nvals == 0;
    printf("reference (PyTorch): checksum %.6f, abs_sum %.6f; %d values, worst relative error "
           "%.2e: %s\n",
           ref_sum, ref_abs, nvals, worst, bad ? "MISMATCH" : "agrees");
    return bad;
}

/* ---- training: forward, loss, backward, SGD ------------------------------------------------ */

enum { STEPS = 5, NFIRST = 8 };
static const double LR = 1.0; /* examples/llama_train_ref.py's */

/* A gradient as the reference gives it: sum, sum of |g|, the first values. */
typedef struct gstat {
    double sum, abs_sum, first[NFIRST];
    int64_t n;
} gstat;

static sg_status stat_of(sg_tensor *g, gstat *s) {
    sg_tensor *h = NULL;
    sg_status  st = sg_tensor_to(g, SG_CPU, &h);
    if (st) return st;
    const float *p = sg_tensor_data(h);
    memset(s, 0, sizeof *s);
    s->n = sg_tensor_numel(h);
    for (int64_t i = 0; i < s->n; i++) {
        s->sum += p[i], s->abs_sum += fabs(p[i]);
        if (i < NFIRST) s->first[i] = p[i];
    }
    sg_tensor_release(h);
    return SG_OK;
}

/* The reference's losses and step-1 gradients against ours; returns 1 on a mismatch. */
static int check_train(const char *path, const double *loss, const gstat *gs) {
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("training reference: %s not found (make it with examples/llama_train_ref.py)\n",
               path);
        return 0;
    }
    char   line[4096], name[32];
    int    bad = 0, nloss = 0, ngrad = 0;
    double worst_loss = 0, worst_grad = 0;
    while (fgets(line, sizeof line, f)) {
        int    step, used;
        double v, sum, abs_sum;
        if (sscanf(line, "loss %d %lf", &step, &v) == 2 && step >= 1 && step <= STEPS) {
            double err = fabs(v - loss[step - 1]) / fabs(v);
            worst_loss = err > worst_loss ? err : worst_loss;
            nloss++;
        } else if (sscanf(line, "grad %31s %lf %lf%n", name, &sum, &abs_sum, &used) == 3) {
            int i = 0;
            while (i < LLAMA_NPARAMS && strcmp(name, llama_param_names[i])) i++;
            if (i == LLAMA_NPARAMS) continue;
            /* every value against the gradient's mean magnitude: sums cancel, values are small */
            double      scale = abs_sum / (double)gs[i].n, err;
            const char *at = line + used;
            err = fabs(sum - gs[i].sum) / (abs_sum + 1e-30);
            err = fmax(err, fabs(abs_sum - gs[i].abs_sum) / (abs_sum + 1e-30));
            for (int k = 0; k < NFIRST; k++) {
                int n = 0;
                if (sscanf(at, "%lf%n", &v, &n) != 1) break;
                at += n;
                err = fmax(err, fabs(v - gs[i].first[k]) / (scale + fabs(v)));
            }
            worst_grad = err > worst_grad ? err : worst_grad;
            ngrad++;
        }
    }
    fclose(f);
    bad = nloss != STEPS || ngrad != LLAMA_NPARAMS || !(worst_loss <= 1e-4) ||
          !(worst_grad <= 1e-3);
    printf("training reference (PyTorch): %d losses, worst relative error %.2e; %d gradients "
           "at step 1, worst relative error %.2e: %s\n",
           nloss, worst_loss, ngrad, worst_grad, bad ? "MISMATCH" : "agrees");
    return bad;
}

/* STEPS steps of training; the losses printed and checked against ref. */
static int train(block *b, sg_tensor *x, sg_device dev, const char *ref) {
    int64_t    td[2] = {T, D};
    sg_tensor *target = NULL, *loss = NULL, *host = NULL;
    double     losses[STEPS];
    gstat      gs[LLAMA_NPARAMS];
    sg_status  st = aten_autograd_init();
    if (!st) st = llama_filled(11, 1.0, td, 2, &target);
    if (!st) st = llama_move(&target, dev);
    for (int i = 0; i < LLAMA_NPARAMS && !st; i++)
        st = sg_tensor_set_requires_grad(*llama_param(b, i), true);
    double t0 = now_ms();
    for (int step = 0; step < STEPS && !st; step++) {
        if ((st = llama_loss(b, x, target, &loss)) || (st = sg_backward(&loss, NULL, 1, false)) ||
            (st = sg_tensor_to(loss, SG_CPU, &host)))
            break;
        losses[step] = *(const float *)sg_tensor_data(host);
        sg_tensor_release(host), sg_tensor_release(loss);
        host = loss = NULL;
        for (int i = 0; i < LLAMA_NPARAMS && !st && step == 0; i++) {
            sg_tensor *g = NULL;
            if (!(st = sg_tensor_grad(*llama_param(b, i), &g))) st = stat_of(g, &gs[i]);
            sg_tensor_release(g);
        }
        if (!st) st = llama_sgd(b, LR);
    }
    double t1 = now_ms();
    sg_tensor_release(target), sg_tensor_release(loss), sg_tensor_release(host);
    if (st) {
        fprintf(stderr, "sg_demo_llama: training: %s\n", sg_last_error());
        return 1;
    }
    printf("training, SGD lr %g, mean squared error:", LR);
    for (int i = 0; i < STEPS; i++) printf(" %.6f", losses[i]);
    printf("\ntime per training step: %.3f ms\n", (t1 - t0) / STEPS);
    return check_train(ref, losses, gs);
}

/* llama_train.ref beside the forward's reference */
static void train_ref_path(const char *ref, char *out, size_t n) {
    const char *slash = strrchr(ref, '/');
    int         dir = slash ? (int)(slash - ref + 1) : 0;
    snprintf(out, n, "%.*sllama_train.ref", dir, ref);
}

int main(int argc, char **argv) {
    block       b;
    sg_tensor  *x = NULL, *y = NULL, *host = NULL;
    int64_t     td[2] = {T, D};
    int         rc = 1;
    const char *ref = "examples/llama_block.ref";
    sg_device   dev = SG_CPU;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc && !strcmp(argv[i + 1], "cuda")) {
            dev = SG_CUDA(0);
            i++;
        } else if (!strcmp(argv[i], "--device")) {
            fprintf(stderr, "usage: sg_demo_llama [REF_FILE] [--device cuda]\n");
            return 2;
        } else {
            ref = argv[i];
        }
    }
    sg_status (*init)(void) = sg_aten_cpu_init;
    if (dev.type == SG_DEV_CUDA) {
        const char *why = NULL;
#ifdef SG_DEMO_CUDA
        init = sg_aten_cuda_init;
#else
        why = "this build has no CUDA kernels";
#endif
        if (why || !sg_cuda_available(&why)) {
            printf("sg_demo_llama: no CUDA: %s\n", why);
            return 77;
        }
    }
    if (init() != SG_OK || llama_make(&b) != SG_OK || llama_filled(10, 1.0, td, 2, &x) ||
        llama_move_block(&b, dev) || llama_move(&x, dev)) {
        fprintf(stderr, "sg_demo_llama: setup: %s\n", sg_last_error());
        return 1;
    }
    if (llama_forward(&b, x, &y) != SG_OK) {
        fprintf(stderr, "sg_demo_llama: %s: %s\n", llama_where_failed, sg_last_error());
        goto done;
    }
    if (sg_tensor_to(y, SG_CPU, &host) != SG_OK) {
        fprintf(stderr, "sg_demo_llama: copying the result back: %s\n", sg_last_error());
        goto done;
    }
    const float *p = sg_tensor_data(host);
    double       sum = 0, abs_sum = 0;
    for (int64_t i = 0; i < T * D; i++) sum += p[i], abs_sum += fabs(p[i]);
    /* time: the best of several forwards, each until the device is done */
    double best = 1e30;
    for (int r = 0; r < 20; r++) {
        sg_tensor *z = NULL;
        double     t0 = now_ms();
        if (llama_forward(&b, x, &z) != SG_OK || llama_sync(dev) != SG_OK) break;
        double t1 = now_ms();
        sg_tensor_release(z);
        if (t1 - t0 < best) best = t1 - t0;
    }
    printf("llama block on %s: T=%d D=%d heads=%d hidden=%d\n",
           sg_device_type_name((sg_device_type)dev.type), T, D, H, HIDDEN);
    printf("checksum %.6f abs_sum %.6f first %.6f %.6f %.6f %.6f\n", sum, abs_sum, p[0], p[1],
           p[2], p[3]);
    printf("time per forward: %.3f ms\n", best);
    rc = check(ref, p, T * D, sum, abs_sum);
    char train_ref[4096];
    train_ref_path(ref, train_ref, sizeof train_ref);
    rc |= train(&b, x, dev, train_ref);
done:
    sg_tensor_release(x);
    sg_tensor_release(y);
    sg_tensor_release(host);
    llama_free(&b);
    sg_runtime_shutdown();
    return rc;
}
