/* gemm_tune.c: the offline tuner of aten::mm (docs/gemm.md). For each shape of the suite and
 * each dtype asked for, it measures, through the library as it ships them:
 *   - cuBLASLt with its heuristic (sg_cuda_mm_lt with no configuration): the baseline;
 *   - cuBLASLt with each of the heuristic's first N algorithms, made from their configuration
 *     as a table would make them (sg_cuda_mm_lt);
 *   - each point of the Triton template mm_tpl (kernels/dsl/mm.yaml) through aten_dsl_run_mm_tpl;
 * checks each candidate's result against the baseline's, and writes the decision table: for each
 * (dtype, N, K) of the suite and each M bucket (the suite's M values split the line: a bucket
 * takes the choice measured at its largest M), the fastest candidate where it beats the baseline
 * by the margin, else the heuristic; adjacent buckets with one choice are merged.
 *
 *   sg_gemm_tune --out TABLE.yaml [--suite FILE] [--dtype bfloat16|float16]... [--candidates N]
 *                [--margin R] [--records FILE] [--triton VERSION] [--target-ms MS] [--smoke]
 *
 * Shapes whose K or N is not a multiple of 8 are left out (the template needs them aligned, and
 * the odd-size kernels of kernels/dsl/mm.yaml serve the large ones). Timing: gemm_util.h, the
 * calls of one candidate filling about 20 ms (--target-ms).
 * --records: one line per shape and candidate, "dtype M N K candidate ms ok". Exit status 77
 * where no GPU is usable. */
#define _POSIX_C_SOURCE 200809L
#include "aten.h"
#include "aten_dsl.h"
#include "gemm_util.h"
#include "sg_aten_cuda.h"
#include "sg_lt_config.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SHAPES = 512, MAX_CANDIDATES = 32, MAX_DTYPES = 2 };

/* A candidate: a cuBLASLt configuration (point < 0) or a template point. */
typedef struct candidate {
    int32_t           point;
    sg_gemm_lt_config cfg;
    bool              heuristic;
} candidate;

typedef struct call_ctx {
    const candidate *c;
    sg_tensor       *a, *b;
} call_ctx;

/* The product a . b by candidate c into *r. */
static sg_status run(const candidate *c, sg_tensor *a, sg_tensor *b, sg_tensor **r) {
    return c->point >= 0 ? aten_dsl_run_mm_tpl(c->point, a, b, r)
                         : sg_cuda_mm_lt(c->heuristic ? NULL : &c->cfg, 0, a, b, r);
}

static sg_status call(void *p) {
    const call_ctx *x = p;
    sg_tensor      *r = NULL;
    sg_status       st = run(x->c, x->a, x->b, &r);
    sg_tensor_release(r);
    return st;
}

/* The largest |x| of t (on the GPU), as a double; -1 on failure. */
static double max_abs(sg_tensor *t) {
    sg_tensor *a = NULL, *m = NULL, *f = NULL, *h = NULL;
    double     v = -1;
    if (aten_abs(t, &a) == SG_OK && aten_max(a, &m) == SG_OK &&
        aten__to_copy(m, &(sg_dtype){SG_FLOAT64}, NULL, NULL, NULL, false, NULL, &f) == SG_OK &&
        sg_tensor_to(f, SG_CPU, &h) == SG_OK)
        v = *(const double *)sg_tensor_data(h);
    sg_tensor_release(a), sg_tensor_release(m), sg_tensor_release(f), sg_tensor_release(h);
    return v;
}

/* Whether r agrees with ref: |r - ref| within AGREE of ref's largest |value| (a few roundings
 * of a 16-bit result; a wrong kernel misses by about the values themselves). */
static const double AGREE = 0.02;

static bool agrees(sg_tensor *r, sg_tensor *ref, double ref_max) {
    sg_tensor *d = NULL;
    if (aten_sub_Tensor(r, ref, sg_scalar_int(1), &d) != SG_OK) return false;
    double e = max_abs(d);
    sg_tensor_release(d);
    return e >= 0 && e <= AGREE * ref_max + 1e-6;
}

/* ---- one shape ------------------------------------------------------------------------------ */

typedef struct choice {
    sg_gemm_shape s;
    sg_dtype      dt;
    double        base_ms, best_ms;
    candidate     best; /* heuristic: the baseline stays */
} choice;

static int    ncand = 16;
static double margin = 1.02;
static FILE  *records;

static const char *dtype_name(sg_dtype t) { return t == SG_FLOAT16 ? "float16" : "bfloat16"; }

/* Measures c for the shape: its ms, or -1 where it declines or disagrees with ref (said in the
 * records). */
static double measure(const char *what, const choice *ch, const candidate *c, sg_tensor *a,
                      sg_tensor *b, sg_tensor *ref, double ref_max, const char *label) {
    call_ctx   x = {c, a, b};
    sg_tensor *r = NULL;
    sg_status  st = run(c, a, b, &r);
    double     ms = -1;
    bool       ok = st == SG_OK && (!ref || agrees(r, ref, ref_max));
    sg_tensor_release(r);
    if (ok) ms = sg_gemm_median_ms(what, call, &x);
    if (records)
        fprintf(records, "%s %lld %lld %lld %s %.5f %s\n", dtype_name(ch->dt), (long long)ch->s.m,
                (long long)ch->s.n, (long long)ch->s.k, label, ms,
                st != SG_OK ? "declined" : ok ? "ok" : "wrong");
    return ms;
}

static void lt_label(char *buf, size_t cap, const sg_gemm_lt_config *c) {
    snprintf(buf, cap, "lt:%d/%d/%d/%d/%d/%d/%d/%d/%d", c->algo, c->tile, c->stages, c->splitk,
             c->reduction, c->swizzle, c->custom, c->inner, c->cluster);
}

static bool tune_shape(choice *ch) {
    char what[96];
    snprintf(what, sizeof what, "%s %lldx%lldx%lld", dtype_name(ch->dt), (long long)ch->s.m,
             (long long)ch->s.n, (long long)ch->s.k);
    int64_t    sa[2] = {ch->s.m, ch->s.k}, sb[2] = {ch->s.k, ch->s.n}, sc[2] = {ch->s.m, ch->s.n};
    sg_tensor *a = sg_bench_filled(what, sa, 2, ch->dt, 21, 0.25f);
    sg_tensor *b = a ? sg_bench_filled(what, sb, 2, ch->dt, 22, 0.25f) : NULL;
    sg_tensor *c = NULL, *ref = NULL;
    if (b) (void)sg_bench_op_ok(sg_tensor_empty(sc, 2, ch->dt, SG_CUDA(0), &c), what, "empty");
    candidate base = {.point = -1, .heuristic = true};
    if (!c || !sg_bench_op_ok(sg_cuda_mm_lt(NULL, 0, a, b, &ref), what, "the heuristic")) {
        sg_tensor_release(a), sg_tensor_release(b), sg_tensor_release(c);
        return false;
    }
    double ref_max = max_abs(ref);
    ch->base_ms = ch->best_ms = measure(what, ch, &base, a, b, NULL, 0, "heuristic");
    ch->best = base;
    /* cuBLASLt's candidates, by configuration */
    sg_gemm_lt_call l;
    if (sg_gemm_lt_plan(what, &ch->s, a, b, c, &l)) {
        cublasLtMatmulHeuristicResult_t res[MAX_CANDIDATES];
        int got = sg_gemm_lt_candidates(what, &l, sg_bench_smoke ? 1 : ncand, res);
        for (int i = 0; i < got; i++) {
            candidate k = {.point = -1};
            char      label[96];
            if (!sg_lt_config_get(&res[i].algo, &k.cfg)) continue;
            lt_label(label, sizeof label, &k.cfg);
            double ms = measure(what, ch, &k, a, b, ref, ref_max, label);
            if (ms > 0 && ms < ch->best_ms) ch->best_ms = ms, ch->best = k;
        }
        sg_gemm_lt_unplan(&l);
    }
    /* the template's points of this dtype */
    const char *p;
    for (int32_t i = 0; (p = aten_dsl_point_mm_tpl(i)) != NULL; i++) {
        char want[32];
        snprintf(want, sizeof want, "{dtype: %s,", dtype_name(ch->dt));
        if (strncmp(p, want, strlen(want)) != 0) continue;
        if (sg_bench_smoke && i > 0) break;
        candidate k = {.point = i};
        char      label[32];
        snprintf(label, sizeof label, "mm_tpl:%d", i);
        double ms = measure(what, ch, &k, a, b, ref, ref_max, label);
        if (ms > 0 && ms < ch->best_ms) ch->best_ms = ms, ch->best = k;
    }
    if (ch->base_ms > 0 && ch->best_ms * margin > ch->base_ms)
        ch->best = base, ch->best_ms = ch->base_ms;
    sg_tensor_release(a), sg_tensor_release(b), sg_tensor_release(c), sg_tensor_release(ref);
    return ch->base_ms > 0;
}

/* ---- the table ------------------------------------------------------------------------------ */

static bool same_choice(const candidate *x, const candidate *y) {
    return x->heuristic == y->heuristic && x->point == y->point &&
           (x->point >= 0 || x->heuristic || memcmp(&x->cfg, &y->cfg, sizeof x->cfg) == 0);
}

static int by_class(const void *p, const void *q) {
    const choice *x = p, *y = q;
    if (x->dt != y->dt) return x->dt < y->dt ? -1 : 1;
    if (x->s.n != y->s.n) return x->s.n < y->s.n ? -1 : 1;
    if (x->s.k != y->s.k) return x->s.k < y->s.k ? -1 : 1;
    return (x->s.m > y->s.m) - (x->s.m < y->s.m);
}

static void rule(FILE *f, const choice *ch, int64_t lo, int64_t hi) {
    fprintf(f, "      - {dtype: %s, layout: nn, m: [%lld, %lld], n: %lld, k: %lld, ",
            dtype_name(ch->dt), (long long)lo, (long long)hi, (long long)ch->s.n,
            (long long)ch->s.k);
    const candidate *c = &ch->best;
    if (c->heuristic)
        fprintf(f, "use: heuristic");
    else if (c->point >= 0)
        fprintf(f, "use: mm_tpl, point: %s", aten_dsl_point_mm_tpl(c->point));
    else
        fprintf(f, "use: cublaslt, algo: {algo: %d, tile: %d, stages: %d, splitk: %d, "
                   "reduction: %d, swizzle: %d, custom: %d, inner: %d, cluster: %d}",
                c->cfg.algo, c->cfg.tile, c->cfg.stages, c->cfg.splitk, c->cfg.reduction,
                c->cfg.swizzle, c->cfg.custom, c->cfg.inner, c->cfg.cluster);
    fprintf(f, ", gain: %.3f}\n", ch->base_ms / ch->best_ms);
}

/* Writes the table to path through a temporary file and a rename. */
static bool write_table(const char *path, choice *ch, int n, const char *triton) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "sg_gemm_tune: cannot write %s\n", tmp);
        return false;
    }
    struct cudaDeviceProp prop;
    int                   drv = 0, rt = 0;
    (void)cudaGetDeviceProperties(&prop, 0);
    (void)cudaDriverGetVersion(&drv);
    (void)cudaRuntimeGetVersion(&rt);
    qsort(ch, (size_t)n, sizeof *ch, by_class);
    fprintf(f, "# A decision table for aten::mm (docs/gemm.md), written by bench/gemm_tune.c\n"
               "# (bash .ci/gpu gemm-tune) from measurements; tune again rather than edit it.\n"
               "# Each rule's gain is the heuristic's time over the choice's at the bucket's\n"
               "# largest M; 'heuristic' rules record that nothing beat it by %.0f%%.\n",
            (margin - 1) * 100);
    fprintf(f, "- name: mm_tuned\n  op: aten::mm\n  key: CUDA\n  priority: 1\n  table:\n"
               "    tuned:\n      device: \"%s\"\n      capability: %d\n      driver: \"%d\"\n"
               "      cuda: \"%d\"\n      cublaslt: \"%zu\"\n", prop.name,
            prop.major * 10 + prop.minor, drv, rt, cublasLtGetVersion());
    if (triton) fprintf(f, "      triton: \"%s\"\n", triton);
    fprintf(f, "      method: median of %d to %d calls (as many as fill %.0f ms), each after a "
               "%zu MiB L2 flush, CUDA events around the call; inputs in [-0.5, 0.5); "
               "candidates within %.0f%% of the heuristic's result; margin %.2f\n",
            SG_GEMM_MIN_CALLS, SG_GEMM_MAX_CALLS, sg_gemm_target_ms, SG_GEMM_FLUSH_BYTES >> 20,
            AGREE * 100, margin);
    fprintf(f, "    a: self\n    b: mat2\n    m: self.size(0)\n    n: mat2.size(1)\n"
               "    k: self.size(1)\n    cublaslt: sg_cuda_mm_lt\n    rules:\n");
    for (int i = 0; i < n;) {
        int j = i; /* one (dtype, n, k): [i, j) */
        while (j < n && ch[j].dt == ch[i].dt && ch[j].s.n == ch[i].s.n && ch[j].s.k == ch[i].s.k)
            j++;
        int64_t lo = 1;
        for (int q = i; q < j; q++) {
            /* merge into the next bucket where it makes the same choice */
            if (q + 1 < j && same_choice(&ch[q].best, &ch[q + 1].best)) continue;
            rule(f, &ch[q], lo, ch[q].s.m);
            lo = ch[q].s.m + 1;
        }
        i = j;
    }
    bool ok = fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        fprintf(stderr, "sg_gemm_tune: cannot write %s\n", path);
        remove(tmp);
        return false;
    }
    return true;
}

static void say_skipped(sg_status st, const char *fig, const char *op) {
    fprintf(stderr, "sg_gemm_tune: %s: %s failed (%s: %s)\n", fig, op, sg_status_name(st),
            sg_last_error());
}

int main(int argc, char **argv) {
    sg_bench_begin("sg_gemm_tune", say_skipped);
    sg_gemm_target_ms = 20.0;
    const char *suite = "bench/gemm_suite.txt", *out = NULL, *rec = NULL, *triton = NULL;
    sg_dtype    dts[MAX_DTYPES];
    int         ndt = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--smoke")) sg_bench_smoke = true;
        else if (!strcmp(a, "--suite") && v) suite = argv[++i];
        else if (!strcmp(a, "--out") && v) out = argv[++i];
        else if (!strcmp(a, "--records") && v) rec = argv[++i];
        else if (!strcmp(a, "--triton") && v) triton = argv[++i];
        else if (!strcmp(a, "--candidates") && v && (ncand = atoi(argv[++i])) >= 1 &&
                 ncand <= MAX_CANDIDATES)
            ;
        else if (!strcmp(a, "--margin") && v && (margin = atof(argv[++i])) >= 1.0)
            ;
        else if (!strcmp(a, "--target-ms") && v && (sg_gemm_target_ms = atof(argv[++i])) > 0)
            ;
        else if (!strcmp(a, "--dtype") && v && ndt < MAX_DTYPES &&
                 (!strcmp(v, "bfloat16") || !strcmp(v, "float16")))
            dts[ndt++] = !strcmp(argv[++i], "float16") ? SG_FLOAT16 : SG_BFLOAT16;
        else {
            fprintf(stderr, "usage: sg_gemm_tune --out TABLE.yaml [--suite FILE] [--dtype "
                            "bfloat16|float16]... [--candidates 1..%d] [--margin R>=1] "
                            "[--records FILE] [--triton VERSION] [--target-ms MS] [--smoke]\n",
                    MAX_CANDIDATES);
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr, "sg_gemm_tune: --out TABLE.yaml is needed\n");
        return 2;
    }
    if (!ndt) dts[ndt++] = SG_BFLOAT16;
    static sg_gemm_shape shapes[MAX_SHAPES];
    int                  n = sg_gemm_read_suite(suite, shapes, MAX_SHAPES);
    if (n < 0) return 2;
    if (!sg_bench_gpu_usable()) return 77;
    if (sg_aten_cuda_init() != SG_OK) { /* with the DSL kernels, the template's included */
        fprintf(stderr, "sg_gemm_tune: init: %s\n", sg_last_error());
        return 1;
    }
    if (!sg_bench_use_gpu0() || !sg_gemm_timing_begin() ||
        !sg_bench_cuda_ok(cudaMalloc(&sg_gemm_lt_workspace, SG_GEMM_LT_WORKSPACE), "setup",
                          "the workspace") ||
        !sg_gemm_lt_ok(cublasLtCreate(&sg_gemm_lt), "setup", "cublasLtCreate"))
        return 1;
    records = rec ? fopen(rec, "w") : NULL;
    if (rec && !records) {
        fprintf(stderr, "sg_gemm_tune: cannot write %s\n", rec);
        return 1;
    }
    static choice ch[MAX_SHAPES * MAX_DTYPES];
    int           nch = 0, ntuned = 0;
    double        log_gain = 0;
    for (int d = 0; d < ndt; d++)
        for (int i = 0; i < n && !sg_bench_lost; i++) {
            const sg_gemm_shape *s = &shapes[i];
            if (s->k % 8 || s->n % 8) continue;
            bool dup = false; /* the suite may list a shape twice */
            for (int q = 0; q < nch && !dup; q++)
                dup = ch[q].dt == dts[d] && !memcmp(&ch[q].s, s, sizeof *s);
            if (dup || (sg_bench_smoke && nch == 2)) continue;
            ch[nch] = (choice){.s = *s, .dt = dts[d]};
            if (!tune_shape(&ch[nch])) continue;
            log_gain += log(ch[nch].base_ms / ch[nch].best_ms);
            ntuned += !ch[nch].best.heuristic;
            nch++;
        }
    if (records) fclose(records);
    if (!nch || !write_table(out, ch, nch, triton)) return 1;
    fprintf(stderr, "sg_gemm_tune: %d shapes, %d with a choice other than the heuristic; "
                    "geometric mean gain %.3f; table %s\n", nch, ntuned, exp(log_gain / nch), out);
    cublasLtDestroy(sg_gemm_lt);
    cudaFree(sg_gemm_lt_workspace);
    sg_gemm_timing_end();
    return sg_bench_finish();
}
