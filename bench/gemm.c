/* gemm.c: matrix products over the shape suite (bench/gemm_suite.txt): ours (aten::mm as the
 * library ships it: cuBLASLt's heuristic, the DSL overrides where they take the shape),
 * plain cuBLASLt with its heuristic's first algorithm, and cuBLASLt's algorithm chosen by
 * measurement among the heuristic's first candidates (what offline tuning can get from
 * cuBLASLt alone). bench/run gemm runs bench/gemm_torch.py on the same suite, joins the two and
 * computes the figures.
 *
 *   sg_bench_gemm [--smoke] [--suite FILE] [--records FILE] [--candidates N]
 *
 * --records FILE: one line per shape (docs/perf.md, "gemm"): "M N K dtype ours_ms lt_ms
 * tuned_ms rank config", config being the measured-best algorithm's cuBLASLt attributes
 * (algo=ID,tile=...,stages=...,splitk=...,reduction=...,swizzle=...,custom=...,inner=...,
 * cluster=...). stdout: the figures this program can make alone. --smoke: the first shapes,
 * one timed call each. Exit status 77 where no GPU is usable.
 *
 * Timing: each call after an L2 flush (a 256 MiB memset, more than any L2 today), CUDA events
 * around the call alone, calls queued back to back and synchronised once; the median of the
 * calls, as many as fill about 60 ms (at least 5, at most 64). Inputs: bfloat16 in [-0.5, 0.5).
 */
#define _POSIX_C_SOURCE 200809L
#include "aten.h"
#include "gpu_harness.h"
#include "sg_aten_cuda.h"
#include "sg_cuda.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SHAPES = 512, MAX_CALLS = 64, MIN_CALLS = 5, MAX_CANDIDATES = 32 };
static const double TARGET_MS = 60.0;
static const size_t FLUSH_BYTES = (size_t)256 << 20;
static const size_t WORKSPACE_BYTES = (size_t)32 << 20; /* as kernels/cuda/linalg.cu */

typedef struct shape {
    int64_t m, n, k;
} shape;

/* ---- the suite ------------------------------------------------------------------------------ */

/* Reads the suite file's m/nk/mnk lines into out; the count, or -1 with the line said. */
static int read_suite(const char *path, shape *out, int cap) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "sg_bench_gemm: cannot open %s\n", path);
        return -1;
    }
    int64_t ms[64];
    int     nm = 0, n = 0, line = 0;
    char    buf[1024];
    while (fgets(buf, sizeof buf, f)) {
        line++;
        char *p = buf, *end;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == 0) continue;
        int64_t v[64];
        int     nv = 0;
        char    word[8] = {0};
        int     used = 0;
        if (sscanf(p, "%7s%n", word, &used) != 1) goto bad;
        p += used;
        for (;;) {
            long long x = strtoll(p, &end, 10);
            if (end == p) break;
            if (x <= 0 || nv == 64) goto bad;
            v[nv++] = x;
            p = end;
        }
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (*p) goto bad;
        if (!strcmp(word, "m") && nv > 0) {
            memcpy(ms, v, sizeof v[0] * (size_t)nv);
            nm = nv;
        } else if (!strcmp(word, "nk") && nv == 2 && nm > 0) {
            for (int i = 0; i < nm && n < cap; i++) out[n++] = (shape){ms[i], v[0], v[1]};
        } else if (!strcmp(word, "mnk") && nv == 3 && n < cap) {
            out[n++] = (shape){v[0], v[1], v[2]};
        } else {
            goto bad;
        }
        continue;
    bad:
        fprintf(stderr, "sg_bench_gemm: %s:%d: expected 'm M...', 'nk N K' (after an m line) or "
                        "'mnk M N K' with positive numbers\n", path, line);
        fclose(f);
        return -1;
    }
    fclose(f);
    return n;
}

/* ---- timing: each call after an L2 flush --------------------------------------------------- */

typedef sg_status (*call_fn)(void *ctx);

static void       *flush_buf;
static cudaEvent_t ev[2][MAX_CALLS];

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* n calls, each after a flush, queued back to back: per-call ms into t. */
static bool timed_calls(const char *what, call_fn fn, void *ctx, int n, double *t) {
    for (int i = 0; i < n; i++) {
        if (!sg_bench_cuda_ok(cudaMemsetAsync(flush_buf, i & 0xff, FLUSH_BYTES, sg_bench_stream),
                              what, "the L2 flush") ||
            !sg_bench_cuda_ok(cudaEventRecord(ev[0][i], sg_bench_stream), what, "event") ||
            !sg_bench_op_ok(fn(ctx), what, "the call") ||
            !sg_bench_cuda_ok(cudaEventRecord(ev[1][i], sg_bench_stream), what, "event"))
            return false;
    }
    if (!sg_bench_cuda_ok(cudaStreamSynchronize(sg_bench_stream), what, "synchronize"))
        return false;
    for (int i = 0; i < n; i++) {
        float ms = 0;
        if (!sg_bench_cuda_ok(cudaEventElapsedTime(&ms, ev[0][i], ev[1][i]), what, "elapsed"))
            return false;
        t[i] = ms;
    }
    return true;
}

/* The median ms of a call of fn; -1 on failure (said). */
static double median_ms(const char *what, call_fn fn, void *ctx) {
    double t[MAX_CALLS];
    if (sg_bench_lost || !timed_calls(what, fn, ctx, 2, t)) return -1; /* warm-up, estimate */
    if (sg_bench_smoke) return t[1];
    int n = t[1] > 0 ? (int)(TARGET_MS / t[1]) : MAX_CALLS;
    n = n < MIN_CALLS ? MIN_CALLS : n > MAX_CALLS ? MAX_CALLS : n;
    if (!timed_calls(what, fn, ctx, n, t)) return -1;
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* ---- ours: aten::mm -------------------------------------------------------------------------- */

typedef struct operands {
    sg_tensor *a, *b, *c; /* c: cuBLASLt's output */
} operands;

/* The functional op, as torch.mm(a, b): the overrides the library ships are on aten::mm, and
 * the result comes from the runtime's per-stream cache of blocks. */
static sg_status call_ours(void *ctx) {
    operands  *o = ctx;
    sg_tensor *r = NULL;
    sg_status  st = aten_mm(o->a, o->b, &r);
    sg_tensor_release(r);
    return st;
}

/* ---- plain cuBLASLt ------------------------------------------------------------------------- */

static cublasLtHandle_t lt;
static void            *workspace;

typedef struct lt_call {
    cublasLtMatmulDesc_t   op;
    cublasLtMatrixLayout_t la, lb, lc; /* column-major: C^T = B^T A^T (see lt_plan) */
    const void            *a, *b;
    void                  *c;
    const cublasLtMatmulAlgo_t *algo;
} lt_call;

static bool lt_ok(cublasStatus_t s, const char *what, const char *call) {
    if (s == CUBLAS_STATUS_SUCCESS) return true;
    fprintf(stderr, "sg_bench_gemm: %s: %s: %s\n", what, call, cublasLtGetStatusString(s));
    sg_bench_failures++;
    return false;
}

static sg_status call_lt(void *ctx) {
    const lt_call *l = ctx;
    const float    one = 1.0f, zero = 0.0f;
    cublasStatus_t s = cublasLtMatmul(lt, l->op, &one, l->b, l->la, l->a, l->lb, &zero, l->c,
                                      l->lc, l->c, l->lc, l->algo, workspace, WORKSPACE_BYTES,
                                      sg_bench_stream);
    return s == CUBLAS_STATUS_SUCCESS
               ? SG_OK
               : sg_error(SG_EDEVICE, "cublasLtMatmul: %s", cublasLtGetStatusString(s));
}

/* Row-major C[m,n] = A[m,k] B[k,n] is column-major C^T[n,m] = B^T[n,k] A^T[k,m] with every
 * leading dimension the row length: cuBLASLt's A is our B, its B our A. */
static bool lt_plan(const char *what, const shape *s, const operands *o, lt_call *l) {
    memset(l, 0, sizeof *l);
    l->a = sg_tensor_data(o->a), l->b = sg_tensor_data(o->b), l->c = sg_tensor_data(o->c);
    return lt_ok(cublasLtMatmulDescCreate(&l->op, CUBLAS_COMPUTE_32F, CUDA_R_32F), what,
                 "cublasLtMatmulDescCreate") &&
           lt_ok(cublasLtMatrixLayoutCreate(&l->la, CUDA_R_16BF, (uint64_t)s->n, (uint64_t)s->k,
                                            s->n), what, "layout") &&
           lt_ok(cublasLtMatrixLayoutCreate(&l->lb, CUDA_R_16BF, (uint64_t)s->k, (uint64_t)s->m,
                                            s->k), what, "layout") &&
           lt_ok(cublasLtMatrixLayoutCreate(&l->lc, CUDA_R_16BF, (uint64_t)s->n, (uint64_t)s->m,
                                            s->n), what, "layout");
}

static void lt_unplan(lt_call *l) {
    if (l->lc) cublasLtMatrixLayoutDestroy(l->lc);
    if (l->lb) cublasLtMatrixLayoutDestroy(l->lb);
    if (l->la) cublasLtMatrixLayoutDestroy(l->la);
    if (l->op) cublasLtMatmulDescDestroy(l->op);
}

/* The heuristic's first n candidates for the call (at most MAX_CANDIDATES); their count. */
static int lt_candidates(const char *what, const lt_call *l, int n,
                         cublasLtMatmulHeuristicResult_t *res) {
    cublasLtMatmulPreference_t pref;
    if (!lt_ok(cublasLtMatmulPreferenceCreate(&pref), what, "preference")) return 0;
    size_t ws = WORKSPACE_BYTES;
    int    got = 0;
    if (!lt_ok(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &ws, sizeof ws), what, "preference") ||
        !lt_ok(cublasLtMatmulAlgoGetHeuristic(lt, l->op, l->la, l->lb, l->lc, l->lc, pref, n, res,
                                              &got), what, "cublasLtMatmulAlgoGetHeuristic"))
        got = 0;
    cublasLtMatmulPreferenceDestroy(pref);
    return got;
}

/* An algorithm's configuration as cuBLASLt's attributes name it: what a tuned table records to
 * make the same algorithm again (cublasLtMatmulAlgoInit, then these set). */
static void lt_config(const cublasLtMatmulAlgo_t *algo, char *buf, size_t cap) {
    static const struct {
        cublasLtMatmulAlgoConfigAttributes_t attr;
        size_t                               size;
        const char                          *name;
    } attrs[] = {
        {CUBLASLT_ALGO_CONFIG_ID, sizeof(int32_t), "algo"},
        {CUBLASLT_ALGO_CONFIG_TILE_ID, sizeof(uint32_t), "tile"},
        {CUBLASLT_ALGO_CONFIG_STAGES_ID, sizeof(uint32_t), "stages"},
        {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, sizeof(uint32_t), "splitk"},
        {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, sizeof(uint32_t), "reduction"},
        {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, sizeof(uint32_t), "swizzle"},
        {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, sizeof(uint32_t), "custom"},
        {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, sizeof(uint16_t), "inner"},
        {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, sizeof(uint16_t), "cluster"},
    };
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0] && at < cap; i++) {
        uint32_t v32 = 0;
        uint16_t v16 = 0;
        size_t   written = 0;
        void    *p = attrs[i].size == sizeof v16 ? (void *)&v16 : (void *)&v32;
        long     v = -1;
        if (cublasLtMatmulAlgoConfigGetAttribute(algo, attrs[i].attr, p, attrs[i].size,
                                                 &written) == CUBLAS_STATUS_SUCCESS)
            v = attrs[i].size == sizeof v16 ? (long)v16 : (long)v32;
        at += (size_t)snprintf(buf + at, cap - at, "%s%s=%ld", i ? "," : "", attrs[i].name, v);
    }
}

/* ---- one shape ------------------------------------------------------------------------------ */

static int ncandidates = 16;

typedef struct result {
    double ours, lt, tuned;
    int    rank;
    char   config[256];
} result;

static bool run_shape(const shape *s, result *r) {
    char what[96];
    snprintf(what, sizeof what, "%lldx%lldx%lld", (long long)s->m, (long long)s->n,
             (long long)s->k);
    *r = (result){-1, -1, -1, -1, ""};
    int64_t  sa[2] = {s->m, s->k}, sb[2] = {s->k, s->n}, sc[2] = {s->m, s->n};
    operands o = {sg_bench_filled(what, sa, 2, SG_BFLOAT16, 21, 0.25f), NULL, NULL};
    o.b = o.a ? sg_bench_filled(what, sb, 2, SG_BFLOAT16, 22, 0.25f) : NULL;
    if (o.b && !sg_bench_op_ok(sg_tensor_empty(sc, 2, SG_BFLOAT16, SG_CUDA(0), &o.c), what,
                               "sg_tensor_empty"))
        o.c = NULL;
    bool    ok = o.c != NULL;
    lt_call l;
    if (ok) r->ours = median_ms(what, call_ours, &o);
    if (ok && lt_plan(what, s, &o, &l)) {
        cublasLtMatmulHeuristicResult_t res[MAX_CANDIDATES];
        int got = lt_candidates(what, &l, sg_bench_smoke ? 1 : ncandidates, res);
        for (int i = 0; i < got; i++) {
            l.algo = &res[i].algo;
            double ms = median_ms(what, call_lt, &l);
            if (ms < 0) continue; /* said; the other candidates still run */
            if (i == 0) r->lt = ms;
            if (r->tuned < 0 || ms < r->tuned) {
                r->tuned = ms;
                r->rank = i;
                lt_config(&res[i].algo, r->config, sizeof r->config);
            }
        }
        if (got == 0) fprintf(stderr, "sg_bench_gemm: %s: cuBLASLt has no algorithm\n", what);
    }
    if (ok) lt_unplan(&l);
    sg_tensor_release(o.a);
    sg_tensor_release(o.b);
    sg_tensor_release(o.c);
    return r->ours > 0 && r->lt > 0;
}

static void say_skipped(sg_status st, const char *fig, const char *op) {
    fprintf(stderr, "sg_bench_gemm: %s: %s has no kernel (%s: %s); skipped\n", fig, op,
            sg_status_name(st), sg_last_error());
}

int main(int argc, char **argv) {
    sg_bench_begin("sg_bench_gemm", say_skipped);
    const char *suite = "bench/gemm_suite.txt", *records = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--smoke")) sg_bench_smoke = true;
        else if (!strcmp(argv[i], "--suite") && i + 1 < argc) suite = argv[++i];
        else if (!strcmp(argv[i], "--records") && i + 1 < argc) records = argv[++i];
        else if (!strcmp(argv[i], "--candidates") && i + 1 < argc &&
                 (ncandidates = atoi(argv[++i])) >= 1 && ncandidates <= MAX_CANDIDATES)
            ;
        else {
            fprintf(stderr, "usage: sg_bench_gemm [--smoke] [--suite FILE] [--records FILE] "
                            "[--candidates 1..%d]\n", MAX_CANDIDATES);
            return 2;
        }
    }
    static shape shapes[MAX_SHAPES];
    int          n = read_suite(suite, shapes, MAX_SHAPES);
    if (n < 0) return 2;
    if (sg_bench_smoke && n > 2) n = 2;
    if (!sg_bench_gpu_usable()) return 77;
    sg_status st = sg_aten_cuda_init();
    if (st != SG_OK) {
        fprintf(stderr, "sg_bench_gemm: sg_aten_cuda_init: %s\n", sg_last_error());
        return 1;
    }
    if (!sg_bench_use_gpu0()) return 1;
    for (int i = 0; i < MAX_CALLS; i++)
        if (!sg_bench_cuda_ok(cudaEventCreate(&ev[0][i]), "setup", "cudaEventCreate") ||
            !sg_bench_cuda_ok(cudaEventCreate(&ev[1][i]), "setup", "cudaEventCreate"))
            return 1;
    if (!sg_bench_cuda_ok(cudaMalloc(&flush_buf, FLUSH_BYTES), "setup", "the flush buffer") ||
        !sg_bench_cuda_ok(cudaMalloc(&workspace, WORKSPACE_BYTES), "setup", "the workspace") ||
        !lt_ok(cublasLtCreate(&lt), "setup", "cublasLtCreate"))
        return 1;
    FILE *rec = records ? fopen(records, "w") : NULL;
    if (records && !rec) {
        fprintf(stderr, "sg_bench_gemm: cannot write %s\n", records);
        return 1;
    }
    struct cudaDeviceProp prop;
    int                   drv = 0;
    (void)cudaGetDeviceProperties(&prop, 0);
    (void)cudaDriverGetVersion(&drv);
    fprintf(stderr, "sg_bench_gemm: %s, driver %d, cuBLASLt %zu; %d shapes, %d candidates each; "
                    "each call after a %zu MiB L2 flush, median\n",
            prop.name, drv, cublasLtGetVersion(), n, ncandidates, FLUSH_BYTES >> 20);

    double log_tuned = 0;
    int    done = 0;
    for (int i = 0; i < n && !sg_bench_lost; i++) {
        result r;
        if (!run_shape(&shapes[i], &r)) continue;
        if (rec)
            fprintf(rec, "%lld %lld %lld bf16 %.5f %.5f %.5f %d %s\n", (long long)shapes[i].m,
                    (long long)shapes[i].n, (long long)shapes[i].k, r.ours, r.lt, r.tuned, r.rank,
                    r.config);
        log_tuned += log(r.lt / r.tuned);
        done++;
    }
    if (rec) fclose(rec);
    if (done > 0) {
        printf("gemm_shapes %d shapes\n", done);
        printf("gemm_lt_tuned_geomean_vs_cublaslt %.3f ratio\n", exp(log_tuned / done));
    }
    cublasLtDestroy(lt);
    cudaFree(workspace);
    cudaFree(flush_buf);
    for (int i = 0; i < MAX_CALLS; i++) cudaEventDestroy(ev[0][i]), cudaEventDestroy(ev[1][i]);
    return sg_bench_finish();
}
