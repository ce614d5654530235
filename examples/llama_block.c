/* llama_block.c: one Llama-style transformer block, forward, written in C against the generated
 * aten API: RMSNorm, q/k/v projections, rotary embedding, causal attention, output projection,
 * residuals, SwiGLU MLP. Weights and input come from a counter-based generator that
 * examples/llama_block_ref.py reproduces in PyTorch; the block's output is compared with what
 * PyTorch computed for the same numbers (examples/llama_block.ref).
 *
 *   sg_demo_llama [REF_FILE] [--device cuda]
 *
 * prints the checksum, the time per forward, and the check. With --device cuda (a build with
 * the CUDA kernels) the weights and input are moved to the GPU and the same forward runs there;
 * without a usable GPU it says so and exits 77 (a skip, for ctest). */
#define _POSIX_C_SOURCE 200809L
#include "aten.h"
#include "sg_aten_cpu.h"
#ifdef SG_DEMO_CUDA
#include "sg_aten_cuda.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { T = 32, D = 256, H = 8, HD = D / H, HIDDEN = 688 };

/* ---- checked calls ------------------------------------------------------------------------ */

static const char *where_failed;
#define TRY(call)                                     \
    do {                                              \
        if ((call) != SG_OK) {                        \
            where_failed = #call;                     \
            goto fail;                                \
        }                                             \
    } while (0)

/* ---- deterministic numbers: splitmix64 of (seed, index), uniform in [-1, 1) ---------------- */

static double uniform(uint64_t seed, uint64_t i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15u + i + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* A float32 tensor of the given shape, filled from seed and scaled. */
static sg_status filled(uint64_t seed, double scale, const int64_t *sizes, int32_t n,
                        sg_tensor **out) {
    sg_status st = sg_tensor_empty(sizes, n, SG_FLOAT32, SG_CPU, out);
    if (st) return st;
    float  *p = sg_tensor_data(*out);
    int64_t k = sg_tensor_numel(*out);
    for (int64_t i = 0; i < k; i++) p[i] = (float)(uniform(seed, (uint64_t)i) * scale);
    return SG_OK;
}

typedef struct block {
    sg_tensor *wq, *wk, *wv, *wo;   /* [D, D] (out, in), as torch.nn.Linear */
    sg_tensor *w_gate, *w_up;       /* [HIDDEN, D] */
    sg_tensor *w_down;              /* [D, HIDDEN] */
    sg_tensor *norm1, *norm2;       /* [D] */
    sg_tensor *cos, *sin;           /* [T, HD] */
} block;

static sg_status make_block(block *b) {
    memset(b, 0, sizeof *b);
    const int64_t dd[2] = {D, D}, hd_[2] = {HIDDEN, D}, dh[2] = {D, HIDDEN}, d1[1] = {D};
    double        s = 1.0 / sqrt((double)D), sh = 1.0 / sqrt((double)HIDDEN);
    sg_status     st;
    if ((st = filled(1, s, dd, 2, &b->wq)) || (st = filled(2, s, dd, 2, &b->wk)) ||
        (st = filled(3, s, dd, 2, &b->wv)) || (st = filled(4, s, dd, 2, &b->wo)) ||
        (st = filled(5, s, hd_, 2, &b->w_gate)) || (st = filled(6, s, hd_, 2, &b->w_up)) ||
        (st = filled(7, sh, dh, 2, &b->w_down)) || (st = filled(8, 0.1, d1, 1, &b->norm1)) ||
        (st = filled(9, 0.1, d1, 1, &b->norm2)))
        return st;
    /* norm weights around 1 */
    for (int i = 0; i < D; i++) {
        ((float *)sg_tensor_data(b->norm1))[i] += 1;
        ((float *)sg_tensor_data(b->norm2))[i] += 1;
    }
    /* rotary tables: angle t * 10000^(-2j/HD), each frequency used twice (halves layout) */
    const int64_t th[2] = {T, HD};
    if ((st = sg_tensor_empty(th, 2, SG_FLOAT32, SG_CPU, &b->cos)) ||
        (st = sg_tensor_empty(th, 2, SG_FLOAT32, SG_CPU, &b->sin)))
        return st;
    for (int t = 0; t < T; t++)
        for (int j = 0; j < HD; j++) {
            double inv = pow(10000.0, -2.0 * (j % (HD / 2)) / HD);
            ((float *)sg_tensor_data(b->cos))[t * HD + j] = (float)cos(t * inv);
            ((float *)sg_tensor_data(b->sin))[t * HD + j] = (float)sin(t * inv);
        }
    return SG_OK;
}

/* Moves *t to dev (a no-op for the CPU). */
static sg_status move(sg_tensor **t, sg_device dev) {
    if (dev.type == SG_DEV_CPU) return SG_OK;
    sg_tensor *m;
    sg_status  st = sg_tensor_to(*t, dev, &m);
    if (st) return st;
    sg_tensor_release(*t);
    *t = m;
    return SG_OK;
}

static sg_status move_block(block *b, sg_device dev) {
    sg_tensor **all[] = {&b->wq, &b->wk, &b->wv, &b->wo, &b->w_gate, &b->w_up, &b->w_down,
                         &b->norm1, &b->norm2, &b->cos, &b->sin};
    sg_status   st = SG_OK;
    for (size_t i = 0; i < sizeof all / sizeof all[0] && !st; i++) st = move(all[i], dev);
    return st;
}

/* Waits for the device's queued work, so a time covers it (any device type: its hook). */
static sg_status sync_device(sg_device dev) { return sg_device_synchronize(dev); }

static void free_block(block *b) {
    sg_tensor *all[] = {b->wq, b->wk, b->wv, b->wo, b->w_gate, b->w_up, b->w_down, b->norm1,
                        b->norm2, b->cos, b->sin};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sg_tensor_release(all[i]);
}

/* rotate_half(x) = cat(-x[..., HD/2:], x[..., :HD/2]); x * cos + rotate_half(x) * sin */
static sg_status rotary(const block *b, sg_tensor *x, sg_tensor **out) {
    sg_tensor *lo = NULL, *hi = NULL, *nhi = NULL, *rot = NULL, *a = NULL, *c = NULL;
    int64_t    half = HD / 2, zero = 0, end = HD;
    sg_status  st;
    if ((st = aten_slice_Tensor(x, -1, &zero, &half, 1, &lo)) ||
        (st = aten_slice_Tensor(x, -1, &half, &end, 1, &hi)) || (st = aten_neg(hi, &nhi)))
        goto done;
    sg_tensor     *parts[2] = {nhi, lo};
    sg_tensor_list l = {parts, 2};
    if ((st = aten_cat(l, -1, &rot)) || (st = aten_mul_Tensor(x, b->cos, &a)) ||
        (st = aten_mul_Tensor(rot, b->sin, &c)) ||
        (st = aten_add_Tensor(a, c, sg_scalar_int(1), out)))
        goto done;
done:
    sg_tensor_release(lo);
    sg_tensor_release(hi);
    sg_tensor_release(nhi);
    sg_tensor_release(rot);
    sg_tensor_release(a);
    sg_tensor_release(c);
    return st;
}

/* [T, D] -> [H, T, HD] */
static sg_status heads(sg_tensor *x, sg_tensor **out) {
    int64_t        shape[3] = {T, H, HD};
    sg_tensor     *v = NULL;
    sg_status      st = aten_view(x, (sg_int_list){shape, 3}, &v);
    if (!st) st = aten_transpose_int(v, 0, 1, out);
    sg_tensor_release(v);
    return st;
}

static sg_status forward(const block *b, sg_tensor *x, sg_tensor **out) {
    sg_tensor *n1 = NULL, *q = NULL, *k = NULL, *v = NULL, *qh = NULL, *kh = NULL, *vh = NULL;
    sg_tensor *qr = NULL, *kr = NULL, *att = NULL, *att_t = NULL, *att_c = NULL, *att_d = NULL;
    sg_tensor *proj = NULL, *h = NULL, *n2 = NULL, *g = NULL, *u = NULL, *sg = NULL, *gu = NULL;
    sg_tensor *down = NULL;
    int64_t    d[1] = {D}, td[2] = {T, D};
    sg_int_list norm_shape = {d, 1}, flat = {td, 2};
    TRY(aten_rms_norm(x, norm_shape, b->norm1, NULL, &n1));
    TRY(aten_linear(n1, b->wq, NULL, &q));
    TRY(aten_linear(n1, b->wk, NULL, &k));
    TRY(aten_linear(n1, b->wv, NULL, &v));
    TRY(heads(q, &qh));
    TRY(heads(k, &kh));
    TRY(heads(v, &vh));
    TRY(rotary(b, qh, &qr));
    TRY(rotary(b, kh, &kr));
    TRY(aten_scaled_dot_product_attention(qr, kr, vh, NULL, 0.0, true, NULL, false, &att));
    TRY(aten_transpose_int(att, 0, 1, &att_t));
    TRY(aten_contiguous(att_t, SG_CONTIGUOUS_FORMAT, &att_c));
    TRY(aten_view(att_c, flat, &att_d));
    TRY(aten_linear(att_d, b->wo, NULL, &proj));
    TRY(aten_add_Tensor(x, proj, sg_scalar_int(1), &h));
    TRY(aten_rms_norm(h, norm_shape, b->norm2, NULL, &n2));
    TRY(aten_linear(n2, b->w_gate, NULL, &g));
    TRY(aten_linear(n2, b->w_up, NULL, &u));
    TRY(aten_silu(g, &sg));
    TRY(aten_mul_Tensor(sg, u, &gu));
    TRY(aten_linear(gu, b->w_down, NULL, &down));
    TRY(aten_add_Tensor(h, down, sg_scalar_int(1), out));
    sg_status st = SG_OK;
    if (0) {
    fail:
        st = sg_last_status() ? sg_last_status() : SG_EINVAL;
    }
    sg_tensor *all[] = {n1, q, k, v, qh, kh, vh, qr, kr, att, att_t, att_c, att_d, proj, h, n2,
                        g, u, sg, gu, down};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sg_tensor_release(all[i]);
    return st;
}

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
    if (init() != SG_OK || make_block(&b) != SG_OK || filled(10, 1.0, td, 2, &x) ||
        move_block(&b, dev) || move(&x, dev)) {
        fprintf(stderr, "sg_demo_llama: setup: %s\n", sg_last_error());
        return 1;
    }
    if (forward(&b, x, &y) != SG_OK) {
        fprintf(stderr, "sg_demo_llama: %s: %s\n", where_failed, sg_last_error());
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
        if (forward(&b, x, &z) != SG_OK || sync_device(dev) != SG_OK) break;
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
done:
    sg_tensor_release(x);
    sg_tensor_release(y);
    sg_tensor_release(host);
    free_block(&b);
    sg_runtime_shutdown();
    return rc;
}
