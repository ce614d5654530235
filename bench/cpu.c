/* cpu.c: CPU kernels through the dispatcher, against the machine's own limits, in one run.
 *
 *   sg_bench_cpu
 *
 * - memory bandwidth: per op family, memcpy of as many bytes as the op moves (read and
 *   written) and the op itself, taking turns, the best of 7 runs each; the op's bytes over its
 *   time as a ratio of memcpy's:
 *   pointwise add and mul (float32, 2 x 16 M elements in, 16 M out, written into a
 *   preallocated out=), a unary op (exp), a reduction (sum of 32 M floats), softmax over
 *   the rows of a 4096 x 4096 matrix. Goal >= 0.8 for the large ones.
 * - matmul 1024 x 1024 x 1024 float32 through aten_mm (out=) against cblas_sgemm on the same
 *   buffers (goal >= 0.98).
 * - small_add_ns: aten_add_Tensor on 1-element tensors, output allocation included
 *   (goal <= 100 ns).
 * Every figure is one line, "name value unit".
 */
#define _POSIX_C_SOURCE 200809L
#include "aten.h"
#include "sg_aten_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef SG_HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static sg_tensor *filled(int64_t n, float v) {
    sg_tensor *t = NULL;
    if (sg_tensor_empty(&n, 1, SG_FLOAT32, SG_CPU, &t)) return NULL;
    float *p = sg_tensor_data(t);
    for (int64_t i = 0; i < n; i++) p[i] = v + (float)(i % 7) * 0.125f;
    return t;
}

/* One memcpy of half the bytes from a to b (read + write make `bytes`), with the threads the
 * kernels use; its time. */
static double memcpy_once(char *b, const char *a, size_t half) {
    double t0 = now_s();
#ifdef _OPENMP
#pragma omp parallel
    {
        size_t nt = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
        size_t chunk = (half + nt - 1) / nt, lo = t * chunk, hi = lo + chunk < half ? lo + chunk : half;
        if (lo < hi) memcpy(b + lo, a + lo, hi - lo);
    }
#else
    memcpy(b, a, half);
#endif
    return now_s() - t0;
}

/* Rationale: the ops write into a preallocated out= tensor, as the memcpy writes into a buffer
 * it touched before: the figure is the kernel's throughput, not the first-touch cost of fresh
 * pages (which dominates on the VMs we measure: about 25 us a page). */
static sg_tensor *out_buf;

typedef sg_status (*op2)(sg_tensor *, sg_tensor *, sg_tensor **);

static sg_status add1(sg_tensor *a, sg_tensor *b, sg_tensor **r) {
    return aten_add_out(a, b, sg_scalar_int(1), out_buf, r);
}
static sg_status mul2(sg_tensor *a, sg_tensor *b, sg_tensor **r) {
    return aten_mul_out(a, b, out_buf, r);
}
static sg_status exp1(sg_tensor *a, sg_tensor *b, sg_tensor **r) {
    (void)b;
    return aten_exp_out(a, out_buf, r);
}
static sg_tensor *rows_out; /* [4096, 4096]: softmax's out= */
static sg_status softmax1(sg_tensor *a, sg_tensor *b, sg_tensor **r) {
    (void)b;
    return aten__softmax_out(a, -1, false, rows_out, r);
}
static sg_status sum1(sg_tensor *a, sg_tensor *b, sg_tensor **r) {
    (void)b;
    return aten_sum(a, NULL, r);
}

/* The op's best time and memcpy's over the same bytes, the two taking turns (the machine's
 * speed drifts over seconds: turns put both under the same conditions). */
static void family(const char *name, op2 f, sg_tensor *a, sg_tensor *b, double bytes) {
    size_t half = (size_t)bytes / 2;
    char  *x = malloc(half), *y = malloc(half);
    if (!x || !y) {
        free(x);
        free(y);
        return;
    }
    memset(x, 1, half);
    memset(y, 2, half);
    double best = 1e30, best_copy = 1e30;
    for (int r = 0; r < 7; r++) {
        sg_tensor *out = NULL;
        double     t0 = now_s();
        if (f(a, b, &out) != SG_OK) { /* not implemented yet */
            fprintf(stderr, "sg_bench_cpu: %s\n", sg_last_error());
            free(x);
            free(y);
            return;
        }
        double dt = now_s() - t0;
        sg_tensor_release(out);
        if (dt < best) best = dt;
        double dc = memcpy_once(y, x, half);
        if (dc < best_copy) best_copy = dc;
    }
    free(x);
    free(y);
    printf("%s_gbps %.2f GB/s\n", name, bytes / best * 1e-9);
    printf("%s_memcpy_gbps %.2f GB/s\n", name, bytes / best_copy * 1e-9);
    printf("%s_vs_memcpy %.3f ratio\n", name, best_copy / best);
}

int main(void) {
    if (sg_aten_cpu_init() != SG_OK) {
        fprintf(stderr, "sg_bench_cpu: %s\n", sg_last_error());
        return 1;
    }
#ifdef _OPENMP
    printf("cpu_threads %d threads\n", omp_get_max_threads());
#endif
    /* a small op end to end: 1-element add, output allocated by the call. First, while no
     * other thread runs: after the big ops, OpenMP's and OpenBLAS's workers spin for a while on
     * the core's other hyperthread, which made this figure 90 or 140 ns from run to run. */
    sg_tensor *s1 = filled(1, 1), *s2 = filled(1, 2);
    const int  iters = 200000;
    double     best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        for (int i = 0; i < iters; i++) {
            sg_tensor *out = NULL;
            if (aten_add_Tensor(s1, s2, sg_scalar_int(1), &out) != SG_OK) return 1;
            sg_tensor_release(out);
        }
        double dt = (now_s() - t0) / iters;
        if (dt < best) best = dt;
    }
    printf("small_add_ns %.1f ns\n", best * 1e9);

    const int64_t n = 16 << 20;
    sg_tensor    *a = filled(n, 1), *b = filled(n, 2), *big = filled(2 * n, 0.5f);
    out_buf = filled(n, 0);
    family("add_f32", add1, a, b, 3.0 * 4 * (double)n);
    family("mul_f32", mul2, a, b, 3.0 * 4 * (double)n);
    family("exp_f32", exp1, a, NULL, 2.0 * 4 * (double)n);
    family("sum_f32", sum1, big, NULL, 4.0 * 2 * (double)n);
    /* softmax over the rows of [4096, 4096]: reads and writes 64 MB each */
    sg_tensor *rows = NULL;
    const int64_t rs[2] = {4096, 4096};
    if (!sg_tensor_empty(rs, 2, SG_FLOAT32, SG_CPU, &rows) &&
        !sg_tensor_empty(rs, 2, SG_FLOAT32, SG_CPU, &rows_out)) {
        for (int64_t i = 0; i < 4096 * 4096; i++) {
            ((float *)sg_tensor_data(rows))[i] = (float)(i % 97) * 0.01f;
            ((float *)sg_tensor_data(rows_out))[i] = 0;
        }
        family("softmax_f32", softmax1, rows, NULL, 2.0 * 4 * 4096 * 4096);
    }
    sg_tensor_release(rows);
    sg_tensor_release(rows_out);

    /* matmul 1024^3: aten_mm against cblas_sgemm on the same buffers */
    const int64_t m = 1024, sz[2] = {m, m};
    sg_tensor    *x = NULL, *y = NULL, *z = NULL;
    if (!sg_tensor_empty(sz, 2, SG_FLOAT32, SG_CPU, &x) && !sg_tensor_empty(sz, 2, SG_FLOAT32, SG_CPU, &y) &&
        !sg_tensor_empty(sz, 2, SG_FLOAT32, SG_CPU, &z)) {
        for (int64_t i = 0; i < m * m; i++) {
            ((float *)sg_tensor_data(x))[i] = (float)(i % 13) * 0.01f;
            ((float *)sg_tensor_data(y))[i] = (float)(i % 7) * 0.02f;
            ((float *)sg_tensor_data(z))[i] = 0;
        }
        /* the two take turns, as the families above do with memcpy, each going first in every
         * other round (the one that runs second finds the inputs in cache and the BLAS threads
         * awake); aten_mm writes into an out= tensor touched before, as sgemm writes into c (a
         * fresh 4 MB result costs first-touch faults that have nothing to do with the call) */
        double best_op = 1e30, best_blas = 1e30;
        bool   ok = true;
#ifdef SG_HAVE_OPENBLAS
        float *c = malloc((size_t)(m * m) * sizeof *c);
        ok = c != NULL;
#endif
        for (int r = 0; r < 14 && ok; r++) {
            double t0 = now_s();
            if (r % 4 == 0 || r % 4 == 3) {
                sg_tensor *res = NULL;
                ok = aten_mm_out(x, y, z, &res) == SG_OK;
                double t1 = now_s();
                if (t1 - t0 < best_op) best_op = t1 - t0;
                continue;
            }
#ifdef SG_HAVE_OPENBLAS
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)m, (int)m, 1.0f,
                        sg_tensor_data(x), (int)m, sg_tensor_data(y), (int)m, 0.0f, c, (int)m);
            double t1 = now_s();
            if (t1 - t0 < best_blas) best_blas = t1 - t0;
#endif
        }
#ifdef SG_HAVE_OPENBLAS
        free(c);
#endif
        if (ok) {
            printf("mm_1024_ms %.3f ms\n", best_op * 1e3);
            printf("mm_1024_gflops %.1f GFLOP/s\n", 2.0 * m * m * m / best_op * 1e-9);
#ifdef SG_HAVE_OPENBLAS
            printf("sgemm_1024_ms %.3f ms\n", best_blas * 1e3);
            printf("mm_vs_sgemm %.3f ratio\n", best_blas / best_op);
#endif
        } else {
            fprintf(stderr, "sg_bench_cpu: mm: %s\n", sg_last_error());
        }
    }


    sg_tensor *all[] = {a, b, big, x, y, z, s1, s2, out_buf};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sg_tensor_release(all[i]);
    sg_runtime_shutdown();
    return 0;
}
