/* gpu_harness.c: the GPU benchmarks' shared frame (gpu_harness.h). */
#define _POSIX_C_SOURCE 200809L
#include "gpu_harness.h"

#include "sg_cuda.h"
#include "sg_dispatch.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { WARMUP = 3 };
static const double BATCH_MS = 200.0;

bool         sg_bench_smoke;
cudaStream_t sg_bench_stream;
int          sg_bench_failures;
bool         sg_bench_lost;

static const char      *prog = "sg_bench";
static sg_bench_skip_fn say_skipped;
static cudaEvent_t      ev0, ev1;

void sg_bench_begin(const char *name, sg_bench_skip_fn skipped) {
    prog = name;
    say_skipped = skipped;
}

static int usage(const sg_bench_group *groups, int n) {
    fprintf(stderr, "usage: %s [--smoke] [GROUP...]; groups:", prog);
    for (int g = 0; g < n; g++) fprintf(stderr, " %s", groups[g].name);
    fprintf(stderr, "\n");
    return 2;
}

int sg_bench_args(int argc, char **argv, const sg_bench_group *groups, int n, bool *want) {
    bool any = false;
    for (int g = 0; g < n; g++) want[g] = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0) {
            sg_bench_smoke = true;
            continue;
        }
        int g = 0;
        while (g < n && strcmp(argv[i], groups[g].name) != 0) g++;
        if (g == n) return usage(groups, n);
        want[g] = any = true;
    }
    if (!any)
        for (int g = 0; g < n; g++) want[g] = true;
    return 0;
}

bool sg_bench_gpu_usable(void) {
    const char *why = NULL;
    if (sg_cuda_available(&why)) return true;
    fprintf(stderr, "%s: no usable GPU: %s\n", prog, why ? why : "?");
    return false;
}

bool sg_bench_use_gpu0(void) {
    if (sg_cuda_set_device(0) != SG_OK) {
        fprintf(stderr, "%s: sg_cuda_set_device(0): %s\n", prog, sg_last_error());
        return false;
    }
    sg_bench_stream = (cudaStream_t)sg_cuda_current_stream();
    return true;
}

bool sg_bench_events_create(void) {
    return sg_bench_cuda_ok(cudaEventCreate(&ev0), "setup", "cudaEventCreate") &&
           sg_bench_cuda_ok(cudaEventCreate(&ev1), "setup", "cudaEventCreate");
}

void sg_bench_run(const sg_bench_group *groups, int n, const bool *want) {
    for (int g = 0; g < n && !sg_bench_lost; g++)
        if (want[g]) groups[g].run();
}

int sg_bench_finish(void) {
    cudaEventDestroy(ev0);
    cudaEventDestroy(ev1);
    sg_runtime_shutdown();
    if (sg_bench_lost || sg_bench_failures) {
        fprintf(stderr, "%s: %d failure(s)%s\n", prog, sg_bench_failures,
                sg_bench_lost ? ", the CUDA context was lost" : "");
        return 1;
    }
    return 0;
}

double sg_bench_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- errors ------------------------------------------------------------------------------ */

/* After a failure: clears CUDA's record of a non-sticky error; a sticky one (a kernel that
 * faulted) survives a synchronize, and then every later call would fail too. */
static void after_failure(void) {
    (void)cudaGetLastError();
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess && !sg_bench_lost) {
        sg_bench_lost = true;
        fprintf(stderr, "%s: the CUDA context is lost (%s: %s); stopping\n", prog,
                cudaGetErrorName(e), cudaGetErrorString(e));
    }
}

bool sg_bench_cuda_ok(cudaError_t e, const char *fig, const char *what) {
    if (e == cudaSuccess) return true;
    fprintf(stderr, "%s: %s: %s: %s (%s)\n", prog, fig, what, cudaGetErrorName(e),
            cudaGetErrorString(e));
    sg_bench_failures++;
    after_failure();
    return false;
}

bool sg_bench_op_ok(sg_status st, const char *fig, const char *what) {
    if (st == SG_OK) return true;
    if (st == SG_ENOKERNEL || st == SG_EUNSUPPORTED) {
        if (say_skipped) say_skipped(st, fig, what);
        return false;
    }
    fprintf(stderr, "%s: %s: %s failed: %s: %s\n", prog, fig, what, sg_status_name(st),
            sg_last_error());
    sg_bench_failures++;
    after_failure();
    return false;
}

/* ---- inputs ------------------------------------------------------------------------------ */

/* A value in [-2, 2) from an index (a hash, so rows differ and nothing is constant). */
static float pattern(int64_t i, uint32_t seed) {
    uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 32) ^ seed;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return (float)(x >> 8) * (4.0f / 16777216.0f) - 2.0f;
}

/* float32 to bfloat16 bits, rounded to nearest even (the values here are finite). */
static uint16_t to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* float32 to float16 bits, rounded to nearest even; for the fills' values (|f| < 65504, and
 * those below float16's normal range flushed to its subnormals as the rounding gives). */
static uint16_t to_f16(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    float    a = fabsf(f);
    if (a < 6.103515625e-05f) /* subnormal: a multiple of 2^-24 */
        return (uint16_t)(sign | (uint16_t)lrintf(a * 16777216.0f));
    uint32_t e = ((u >> 23) & 0xffu) - 127u + 15u, m = u & 0x7fffffu;
    uint32_t h = (e << 10) | (m >> 13), rest = m & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

sg_tensor *sg_bench_filled(const char *fig, const int64_t *sizes, int32_t ndim, sg_dtype dt,
                           uint32_t seed, float scale) {
    sg_tensor *h = NULL, *d = NULL;
    if (!sg_bench_op_ok(sg_tensor_empty(sizes, ndim, dt, SG_CPU, &h), fig,
                        "sg_tensor_empty (host)"))
        return NULL;
    int64_t n = sg_tensor_numel(h);
    if (dt == SG_FLOAT32) {
        float *p = sg_tensor_data(h);
        for (int64_t i = 0; i < n; i++) p[i] = pattern(i, seed) * scale;
    } else if (dt == SG_BFLOAT16) {
        uint16_t *p = sg_tensor_data(h);
        for (int64_t i = 0; i < n; i++) p[i] = to_bf16(pattern(i, seed) * scale);
    } else if (dt == SG_FLOAT16) {
        uint16_t *p = sg_tensor_data(h);
        for (int64_t i = 0; i < n; i++) p[i] = to_f16(pattern(i, seed) * scale);
    } else {
        fprintf(stderr, "%s: %s: no fill for %s\n", prog, fig, sg_dtype_name(dt));
        sg_tensor_release(h);
        sg_bench_failures++;
        return NULL;
    }
    bool ok = sg_bench_op_ok(sg_tensor_to(h, SG_CUDA(0), &d), fig, "copy to cuda:0");
    sg_tensor_release(h);
    return ok ? d : NULL;
}

/* ---- GPU timing -------------------------------------------------------------------------- */

/* The figure and op being timed, for batch_ms's messages. */
static const char *cur_fig, *cur_op;

/* Runs fn n times between the two events; the ms per call, or -1 (said) on failure. */
static double batch_ms(sg_bench_op fn, int n) {
    if (!sg_bench_cuda_ok(cudaEventRecord(ev0, sg_bench_stream), cur_fig, "cudaEventRecord"))
        return -1;
    for (int i = 0; i < n; i++)
        if (!sg_bench_op_ok(fn(), cur_fig, cur_op)) return -1;
    if (!sg_bench_cuda_ok(cudaEventRecord(ev1, sg_bench_stream), cur_fig, "cudaEventRecord") ||
        !sg_bench_cuda_ok(cudaEventSynchronize(ev1), cur_fig, "running the batch"))
        return -1;
    float ms = 0;
    if (!sg_bench_cuda_ok(cudaEventElapsedTime(&ms, ev0, ev1), cur_fig, "cudaEventElapsedTime"))
        return -1;
    return (double)ms / n;
}

double sg_bench_time_gpu(const char *fig, const char *op, sg_bench_op fn) {
    cur_fig = fig, cur_op = op;
    if (sg_bench_lost) return -1;
    for (int i = 0; i < (sg_bench_smoke ? 1 : WARMUP); i++)
        if (!sg_bench_op_ok(fn(), fig, op)) return -1;
    if (!sg_bench_cuda_ok(cudaStreamSynchronize(sg_bench_stream), fig, "warm-up")) return -1;
    if (sg_bench_smoke) return batch_ms(fn, 1);
    double est = batch_ms(fn, 3);
    if (est < 0) return -1;
    int    n = est > 0 ? (int)fmin(10000.0, fmax(3.0, BATCH_MS / est)) : 10000;
    double best = 1e30;
    for (int rep = 0; rep < SG_BENCH_REPS; rep++) {
        double t = batch_ms(fn, n);
        if (t < 0) return -1;
        if (t < best) best = t;
    }
    return best;
}
