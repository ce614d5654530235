/* gemm.c: matrix products over the shape suite (bench/gemm_suite.txt): ours (aten::mm as the
 * library ships it: cuBLASLt's heuristic, the DSL overrides where they take the shape),
 * plain cuBLASLt with its heuristic's first algorithm, and cuBLASLt's algorithm chosen by
 * measurement among the heuristic's first candidates (what offline tuning can get from
 * cuBLASLt alone), and with --torch PyTorch's torch.mm; bench/run gemm joins the records and
 * computes the figures.
 *
 *   sg_bench_gemm [--smoke] [--suite FILE] [--records FILE] [--candidates N]
 *                 [--torch CMD --torch-records FILE]
 *
 * --records FILE: one line per shape (docs/perf.md, "gemm"): "M N K dtype ours_ms lt_ms
 * tuned_ms rank config", config being the measured-best algorithm's cuBLASLt attributes
 * (algo=ID,tile=...,stages=...,splitk=...,reduction=...,swizzle=...,custom=...,inner=...,
 * cluster=...). stdout: the figures this program can make alone. --smoke: the first shapes,
 * one timed call each. Exit status 77 where no GPU is usable.
 *
 * --torch CMD: a shell command that runs bench/gemm_torch.py --serve, the peer that times
 * torch.mm in its own process: each shape's rounds then time ours, the heuristic's first
 * algorithm and torch.mm in turn, and --torch-records FILE gets PyTorch's line per shape, as
 * bench/gemm_join.awk reads it ("M N K dtype ms").
 *
 * Timing: gemm_util.h; ours, the heuristic's first algorithm (and torch.mm) in SG_GEMM_ROUNDS
 * interleaved rounds, each a median over a round's share of the target, the median of the
 * rounds kept; the other candidates one median each. Inputs: bfloat16 in [-0.5, 0.5). */
#define _POSIX_C_SOURCE 200809L
#include "aten.h"
#include "gemm_util.h"
#include "sg_aten_cuda.h"
#include "sg_cuda.h"
#include "sg_lt_config.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SHAPES = 512, MAX_CANDIDATES = 32 };

typedef sg_gemm_shape shape;

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

/* An algorithm's configuration (sg_lt_config.h): what a tuned table records to make the same
 * algorithm again. */
static void lt_config(const cublasLtMatmulAlgo_t *algo, char *buf, size_t cap) {
    sg_gemm_lt_config c;
    if (!sg_lt_config_get(algo, &c)) {
        snprintf(buf, cap, "unknown");
        return;
    }
    snprintf(buf, cap, "algo=%d,tile=%d,stages=%d,splitk=%d,reduction=%d,swizzle=%d,custom=%d,"
             "inner=%d,cluster=%d", c.algo, c.tile, c.stages, c.splitk, c.reduction, c.swizzle,
             c.custom, c.inner, c.cluster);
}

/* ---- one shape ------------------------------------------------------------------------------ */

static int ncandidates = 16;

typedef struct result {
    double ours, lt, tuned, torch; /* torch: -1 without a peer */
    int    rank;
    char   config[256];
} result;

static bool run_shape(const shape *s, sg_gemm_peer *p, result *r) {
    char what[96];
    snprintf(what, sizeof what, "%lldx%lldx%lld", (long long)s->m, (long long)s->n,
             (long long)s->k);
    *r = (result){-1, -1, -1, -1, -1, ""};
    int64_t  sa[2] = {s->m, s->k}, sb[2] = {s->k, s->n}, sc[2] = {s->m, s->n};
    operands o = {sg_bench_filled(what, sa, 2, SG_BFLOAT16, 21, 0.25f), NULL, NULL};
    o.b = o.a ? sg_bench_filled(what, sb, 2, SG_BFLOAT16, 22, 0.25f) : NULL;
    if (o.b && !sg_bench_op_ok(sg_tensor_empty(sc, 2, SG_BFLOAT16, SG_CUDA(0), &o.c), what,
                               "sg_tensor_empty"))
        o.c = NULL;
    bool    ok = o.c != NULL;
    sg_gemm_lt_call l;
    if (ok && sg_gemm_lt_plan(what, s, o.a, o.b, o.c, &l)) {
        cublasLtMatmulHeuristicResult_t res[MAX_CANDIDATES];
        int got = sg_gemm_lt_candidates(what, &l, sg_bench_smoke ? 1 : ncandidates, res);
        /* ours against the heuristic's first (and PyTorch), in turn; then the others */
        l.algo = got > 0 ? &res[0].algo : NULL;
        sg_gemm_call fn[2] = {call_ours, sg_gemm_lt_run};
        void        *ctx[2] = {&o, &l};
        double       ms[2];
        if (got > 0 && sg_gemm_in_turn_ms(what, 2, fn, ctx, p, "mm", s, ms, &r->torch)) {
            r->ours = ms[0], r->lt = r->tuned = ms[1], r->rank = 0;
            lt_config(&res[0].algo, r->config, sizeof r->config);
        }
        for (int i = 1; i < got && r->lt > 0; i++) {
            l.algo = &res[i].algo;
            double t = sg_gemm_median_ms(what, sg_gemm_lt_run, &l);
            if (t < 0) continue; /* said; the other candidates still run */
            if (t < r->tuned) {
                r->tuned = t;
                r->rank = i;
                lt_config(&res[i].algo, r->config, sizeof r->config);
            }
        }
        if (got == 0) fprintf(stderr, "sg_bench_gemm: %s: cuBLASLt has no algorithm\n", what);
    }
    if (ok) sg_gemm_lt_unplan(&l);
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
    const char *suite = "bench/gemm_suite.txt", *records = NULL, *torch = NULL, *trec = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--smoke")) sg_bench_smoke = true;
        else if (!strcmp(argv[i], "--suite") && i + 1 < argc) suite = argv[++i];
        else if (!strcmp(argv[i], "--records") && i + 1 < argc) records = argv[++i];
        else if (!strcmp(argv[i], "--torch") && i + 1 < argc) torch = argv[++i];
        else if (!strcmp(argv[i], "--torch-records") && i + 1 < argc) trec = argv[++i];
        else if (!strcmp(argv[i], "--candidates") && i + 1 < argc &&
                 (ncandidates = atoi(argv[++i])) >= 1 && ncandidates <= MAX_CANDIDATES)
            ;
        else {
            fprintf(stderr, "usage: sg_bench_gemm [--smoke] [--suite FILE] [--records FILE] "
                            "[--candidates 1..%d] [--torch CMD --torch-records FILE]\n",
                    MAX_CANDIDATES);
            return 2;
        }
    }
    if (!torch != !trec) {
        fprintf(stderr, "sg_bench_gemm: --torch and --torch-records go together\n");
        return 2;
    }
    static shape shapes[MAX_SHAPES];
    int          n = sg_gemm_read_suite(suite, shapes, MAX_SHAPES);
    if (n < 0) return 2;
    if (sg_bench_smoke && n > 2) n = 2;
    if (!sg_bench_gpu_usable()) return 77;
    sg_status st = sg_aten_cuda_init();
    if (st != SG_OK) {
        fprintf(stderr, "sg_bench_gemm: sg_aten_cuda_init: %s\n", sg_last_error());
        return 1;
    }
    if (!sg_bench_use_gpu0()) return 1;
    if (!sg_gemm_timing_begin() ||
        !sg_bench_cuda_ok(cudaMalloc(&sg_gemm_lt_workspace, SG_GEMM_LT_WORKSPACE), "setup", "the workspace") ||
        !sg_gemm_lt_ok(cublasLtCreate(&sg_gemm_lt), "setup", "cublasLtCreate"))
        return 1;
    FILE *rec = records ? fopen(records, "w") : NULL;
    FILE *trf = trec ? fopen(trec, "w") : NULL;
    if ((records && !rec) || (trec && !trf)) {
        fprintf(stderr, "sg_bench_gemm: cannot write %s\n", records && !rec ? records : trec);
        return 1;
    }
    sg_gemm_peer pr, *p = NULL;
    if (torch && !sg_gemm_peer_start(&pr, torch)) return 1;
    if (torch) p = &pr;
    struct cudaDeviceProp prop;
    int                   drv = 0;
    (void)cudaGetDeviceProperties(&prop, 0);
    (void)cudaDriverGetVersion(&drv);
    fprintf(stderr, "sg_bench_gemm: %s, driver %d, cuBLASLt %zu; %d shapes, %d candidates each; "
                    "each call after a %zu MiB L2 flush, median\n",
            prop.name, drv, cublasLtGetVersion(), n, ncandidates, SG_GEMM_FLUSH_BYTES >> 20);

    double log_tuned = 0;
    int    done = 0;
    for (int i = 0; i < n && !sg_bench_lost; i++) {
        result r;
        if (!run_shape(&shapes[i], p, &r)) continue;
        if (trf && r.torch > 0)
            fprintf(trf, "%lld %lld %lld bf16 %.5f\n", (long long)shapes[i].m,
                    (long long)shapes[i].n, (long long)shapes[i].k, r.torch);
        if (rec)
            fprintf(rec, "%lld %lld %lld bf16 %.5f %.5f %.5f %d %s\n", (long long)shapes[i].m,
                    (long long)shapes[i].n, (long long)shapes[i].k, r.ours, r.lt, r.tuned, r.rank,
                    r.config);
        log_tuned += log(r.lt / r.tuned);
        done++;
    }
    if (rec) fclose(rec);
    if (trf) fclose(trf);
    if (p && !sg_gemm_peer_end(p)) {
        fprintf(stderr, "sg_bench_gemm: the PyTorch peer failed\n");
        sg_bench_failures++;
    }
    if (done > 0) {
        printf("gemm_shapes %d shapes\n", done);
        printf("gemm_lt_tuned_geomean_vs_cublaslt %.3f ratio\n", exp(log_tuned / done));
    }
    cublasLtDestroy(sg_gemm_lt);
    cudaFree(sg_gemm_lt_workspace);
    sg_gemm_timing_end();
    return sg_bench_finish();
}
