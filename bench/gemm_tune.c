/* gemm_tune.c: the offline tuner of the matrix products (docs/gemm.md). For each job (op,
 * layout, dtype) and each shape of the suites, it measures, through the library as it ships
 * them:
 *   - cuBLASLt with its heuristic (the op's sg_cuda_*_lt with no configuration): the baseline;
 *   - cuBLAS with its own choice (sg_cuda_*_cublas: cublasGemmEx, as PyTorch's eager ops);
 *   - cuBLASLt with each of the heuristic's first N algorithms for the very problem the library
 *     builds (sg_cuda_gemm_lt_candidates), made from their configuration as a table makes them;
 *   - for mm nn in bfloat16 and float16, each point of each template of aten::mm the build
 *     has (the generated aten_dsl_templates_aten_mm: the Triton mm_tpl, mm_persist_tpl and
 *     mm_splitk_tpl of kernels/dsl/mm.yaml, the CuTeDSL mm_cute_tpl of
 *     kernels/dsl/mm_cute.yaml where the build has CuTeDSL) through its aten_dsl_run_NAME;
 *     a point whose `when` does not take the shape is not a candidate there;
 * checks each candidate's result against the baseline's, writes every measurement to the
 * records file, and the decision tables from the records (gemm_tune_table.c): this run's and
 * those of --from files, so one table can gather several runs (--from alone measures nothing).
 *
 *   sg_gemm_tune --out TABLE.yaml --records FILE [--suite FILE]... [--job OP:LAYOUT:DTYPE]...
 *                [--from RECORDS]... [--candidates N] [--only cublas|TEMPLATE] [--margin R]
 *                [--triton VERSION]
 *                [--target-ms MS] [--smoke]
 *
 * OP is mm, addmm (with a bias row, beta and alpha 1: linear's) or bmm; LAYOUT nn or nt (B a
 * transposed row-major matrix: linear's weight); DTYPE bfloat16, float16 or float32 (through
 * TF32: the run allows it, and the table's float32 rules apply only where the user does).
 * bmm jobs take the suites' bmnk shapes, the others the rest. --only cublas (or a template's
 * name; repeatable) measures the heuristic and cuBLAS (or that template's points) alone, to
 * add to the records of a run made before it was a candidate (a later measurement of a
 * candidate replaces an earlier one). Timing: gemm_util.h, the calls of
 * one candidate filling about 20 ms (--target-ms). Exit status 77 where no GPU is usable. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "aten.h"
#include "aten_dsl.h"
#include "gemm_tune.h"
#include "gemm_util.h"
#include "sg_aten_cuda.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SHAPES = 512, MAX_CANDIDATES = 32, MAX_JOBS = 32, MAX_FILES = 16 };

typedef struct job {
    sg_cuda_gemm_op op;
    int32_t  layout; /* 0 nn, 1 nt */
    sg_dtype dt;
} job;

/* A candidate: the heuristic, cuBLAS, a cuBLASLt configuration or a template's point. */
typedef struct candidate {
    bool                 heuristic, blas;
    const tune_template *tpl; /* with point */
    int32_t              point;
    sg_gemm_lt_config    cfg;
} candidate;

/* One shape's operands, as the job's op takes them. */
typedef struct operands {
    const job *j;
    sg_tensor *self, *a, *b; /* self: addmm's bias row */
} operands;

typedef struct call_ctx {
    const candidate *c;
    const operands  *o;
} call_ctx;

/* The product by candidate c into *r. */
static sg_status run(const candidate *c, const operands *o, sg_tensor **r) {
    if (c->tpl) return c->tpl->run(c->point, o->a, o->b, r);
    return sg_cuda_gemm(o->j->op, c->heuristic ? NULL : &c->cfg, c->blas, o->self, o->a, o->b,
                        sg_scalar_int(1), sg_scalar_int(1), r);
}

static sg_status call(void *p) {
    const call_ctx *x = p;
    sg_tensor      *r = NULL;
    sg_status       st = run(x->c, x->o, &r);
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
 * of a 16-bit or TF32 result; a wrong kernel misses by about the values themselves). */
static const double AGREE = 0.02;

static bool agrees(sg_tensor *r, sg_tensor *ref, double ref_max) {
    sg_tensor *d = NULL;
    if (aten_sub_Tensor(r, ref, sg_scalar_int(1), &d) != SG_OK) return false;
    double e = max_abs(d);
    sg_tensor_release(d);
    return e >= 0 && e <= AGREE * ref_max + 1e-6;
}

/* ---- one shape ------------------------------------------------------------------------------ */

static int           ncand = 16;
/* --only (repeatable): the heuristic and these alone (cublas, templates); none: everything */
static const char   *only[MAX_FILES];
static int           nonly;

static bool wanted(const char *name) {
    bool w = nonly == 0;
    for (int i = 0; i < nonly; i++) w |= !strcmp(only[i], name);
    return w;
}
static tune_records  recs;
static FILE         *rec_file;
static const char   *layout_names[2] = {"nn", "nt"};

static const char *dtype_name(sg_dtype t) {
    return t == SG_FLOAT16 ? "float16" : t == SG_FLOAT32 ? "float32" : "bfloat16";
}

/* Measures c for the shape and records it (ms -1 where it declines or disagrees with ref). */
static void measure(const char *what, const job *j, const sg_gemm_shape *s, const candidate *c,
                    const operands *o, sg_tensor *ref, double ref_max, const char *label) {
    call_ctx   x = {c, o};
    sg_tensor *r = NULL;
    sg_status  st = run(c, o, &r);
    bool       ok = st == SG_OK && (!ref || agrees(r, ref, ref_max));
    sg_tensor_release(r);
    if (c->tpl && st == SG_EINVAL) return; /* its `when` does not take the shape */
    tune_record rec = {.op = j->op, .layout = j->layout, .batch = s->batch, .m = s->m,
                       .n = s->n, .k = s->k, .ms = ok ? sg_gemm_median_ms(what, call, &x) : -1};
    rec.ok = ok && rec.ms > 0;
    snprintf(rec.dtype, sizeof rec.dtype, "%s", dtype_name(j->dt));
    snprintf(rec.cand, sizeof rec.cand, "%s", label);
    const char *status = st != SG_OK ? "declined" : !ok ? "wrong" : rec.ok ? "ok" : "failed";
    fprintf(rec_file, "%s %s %s %lld %lld %lld %lld %s %.5f %s\n", sg_tune_op_names[j->op],
            layout_names[j->layout], rec.dtype, (long long)s->batch, (long long)s->m,
            (long long)s->n, (long long)s->k, label, rec.ms, status);
    fflush(rec_file); /* a run stopped midway keeps what it measured */
    if (!sg_tune_add(&recs, &rec)) sg_bench_failures++;
}

/* A filled tensor of sizes (the last two swapped and transposed back where t: a column-major
 * matrix of those sizes). */
static sg_tensor *operand(const char *what, const int64_t *sizes, int32_t nd, bool t,
                          sg_dtype dt, uint32_t seed) {
    int64_t sz[3];
    memcpy(sz, sizes, (size_t)nd * sizeof *sz);
    if (t) sz[nd - 2] = sizes[nd - 1], sz[nd - 1] = sizes[nd - 2];
    sg_tensor *x = sg_bench_filled(what, sz, nd, dt, seed, 0.25f), *v = NULL;
    if (!x || !t) return x;
    if (!sg_bench_op_ok(sg_tensor_transpose(x, nd - 2, nd - 1, &v), what, "transpose")) v = NULL;
    sg_tensor_release(x);
    return v;
}

static void measure_templates(const char *what, const job *j, const sg_gemm_shape *s,
                              const operands *o, sg_tensor *ref, double ref_max);

/* The candidates past the heuristic and cuBLAS: cuBLASLt's first algorithms for the problem
 * the library builds, and for mm nn the templates' points of the dtype. */
static void measure_lt_and_template(const char *what, const job *j, const sg_gemm_shape *s,
                                    const operands *o, sg_tensor *ref, double ref_max) {
    /* cuBLASLt's candidates for the problem the library builds */
    sg_gemm_lt_config cfg[MAX_CANDIDATES];
    int32_t           got = 0;
    if (sg_bench_op_ok(sg_cuda_gemm_lt_candidates(j->op, o->self, o->a, o->b, sg_scalar_int(1),
                                                  sg_scalar_int(1), sg_bench_smoke ? 1 : ncand,
                                                  cfg, &got),
                       what, "the candidates"))
        for (int i = 0; i < got; i++) {
            candidate         k = {.cfg = cfg[i]};
            const sg_gemm_lt_config *c = &cfg[i];
            char                     label[96];
            snprintf(label, sizeof label, "lt:%d/%d/%d/%d/%d/%d/%d/%d/%d", c->algo, c->tile,
                     c->stages, c->splitk, c->reduction, c->swizzle, c->custom, c->inner,
                     c->cluster);
            measure(what, j, s, &k, o, ref, ref_max, label);
        }
    measure_templates(what, j, s, o, ref, ref_max);
}

/* For mm nn in 16 bits, the points of the dtype of each template --only wants; each
 * template's `when` says what else it takes. */
static void measure_templates(const char *what, const job *j, const sg_gemm_shape *s,
                              const operands *o, sg_tensor *ref, double ref_max) {
    if (j->op != SG_CUDA_GEMM_MM || j->layout != 0 || j->dt == SG_FLOAT32) return;
    char want[32];
    snprintf(want, sizeof want, "{dtype: %s,", dtype_name(j->dt));
    for (int t = 0; t < SG_TUNE_NTEMPLATES; t++) {
        const tune_template *tp = &SG_TUNE_TEMPLATES[t];
        const char          *p;
        if (!wanted(tp->name)) continue;
        for (int32_t i = 0; (p = tp->point(i)) != NULL; i++) {
            if (strncmp(p, want, strlen(want)) != 0) continue;
            candidate k = {.tpl = tp, .point = i};
            char      label[64];
            snprintf(label, sizeof label, "%s:%d", tp->name, i);
            measure(what, j, s, &k, o, ref, ref_max, label);
            if (sg_bench_smoke) break;
        }
    }
}

static void tune_shape(const job *j, const sg_gemm_shape *s) {
    char what[128];
    snprintf(what, sizeof what, "%s %s %s %lldx%lldx%lldx%lld", sg_tune_op_names[j->op],
             layout_names[j->layout], dtype_name(j->dt), (long long)s->batch, (long long)s->m,
             (long long)s->n, (long long)s->k);
    bool     bmm = j->op == SG_CUDA_GEMM_BMM;
    int32_t  nd = bmm ? 3 : 2, o0 = bmm ? 1 : 0;
    int64_t  sa[3] = {s->batch}, sb[3] = {s->batch};
    sa[o0] = s->m, sa[o0 + 1] = s->k, sb[o0] = s->k, sb[o0 + 1] = s->n;
    operands o = {j, NULL, NULL, NULL};
    o.a = operand(what, sa, nd, false, j->dt, 21);
    o.b = o.a ? operand(what, sb, nd, j->layout == 1, j->dt, 22) : NULL;
    if (o.b && j->op == SG_CUDA_GEMM_ADDMM)
        o.self = sg_bench_filled(what, &s->n, 1, j->dt, 23, 0.25f);
    candidate  base = {.heuristic = true}, blas = {.blas = true};
    sg_tensor *ref = NULL;
    if (o.b && (j->op != SG_CUDA_GEMM_ADDMM || o.self) &&
        sg_bench_op_ok(run(&base, &o, &ref), what, "the heuristic")) {
        double ref_max = max_abs(ref);
        measure(what, j, s, &base, &o, NULL, 0, "heuristic");
        if (wanted("cublas")) measure(what, j, s, &blas, &o, ref, ref_max, "cublas");
        if (!nonly) measure_lt_and_template(what, j, s, &o, ref, ref_max);
        else measure_templates(what, j, s, &o, ref, ref_max);
    }
    sg_tensor_release(o.a), sg_tensor_release(o.b), sg_tensor_release(o.self);
    sg_tensor_release(ref);
}

/* ---- the run -------------------------------------------------------------------------------- */

static bool parse_job(const char *v, job *j) {
    char op[16], lay[8], dt[16];
    if (sscanf(v, "%15[^:]:%7[^:]:%15s", op, lay, dt) != 3) return false;
    int o = -1;
    for (int i = 0; i < TUNE_NOPS; i++)
        if (!strcmp(op, sg_tune_op_names[i])) o = i;
    j->op = (sg_cuda_gemm_op)o;
    j->layout = !strcmp(lay, "nn") ? 0 : !strcmp(lay, "nt") ? 1 : -1;
    bool known = !strcmp(dt, "bfloat16") || !strcmp(dt, "float16") || !strcmp(dt, "float32");
    j->dt = !strcmp(dt, "float16") ? SG_FLOAT16 : !strcmp(dt, "float32") ? SG_FLOAT32
                                                                         : SG_BFLOAT16;
    return o >= 0 && j->layout >= 0 && known;
}

/* The header of this run's records: where and how. */
static void header(FILE *f, const char *triton) {
    struct cudaDeviceProp prop;
    int                   drv = 0, rt = 0;
    (void)cudaGetDeviceProperties(&prop, 0);
    (void)cudaDriverGetVersion(&drv);
    (void)cudaRuntimeGetVersion(&rt);
    fprintf(f, "# sg_gemm_tune records: op layout dtype batch M N K candidate ms status\n"
               "# device: %s\n# capability: %d\n# driver: %d\n# cuda: %d\n# cublaslt: %zu\n",
            prop.name, prop.major * 10 + prop.minor, drv, rt, cublasLtGetVersion());
    if (triton) fprintf(f, "# triton: %s\n", triton);
    fprintf(f, "# method: median of %d to %d calls (as many as fill %.0f ms), each after a %zu "
               "MiB L2 flush, CUDA events around the call; inputs in [-0.5, 0.5); candidates "
               "within %.0f%% of the heuristic's result\n",
            SG_GEMM_MIN_CALLS, SG_GEMM_MAX_CALLS, sg_gemm_target_ms, SG_GEMM_FLUSH_BYTES >> 20,
            AGREE * 100);
}

static void say_skipped(sg_status st, const char *fig, const char *op) {
    fprintf(stderr, "sg_gemm_tune: %s: %s failed (%s: %s)\n", fig, op, sg_status_name(st),
            sg_last_error());
}

/* Whether --only's value is cublas or one of this build's templates. */
static bool known_only(const char *v) {
    bool known = !strcmp(v, "cublas");
    for (int t = 0; t < SG_TUNE_NTEMPLATES; t++) known |= !strcmp(v, SG_TUNE_TEMPLATES[t].name);
    return known;
}

static int usage(void) {
    fprintf(stderr, "usage: sg_gemm_tune --out TABLE.yaml [--records FILE] [--suite FILE]... "
                    "[--job mm|addmm|bmm:nn|nt:bfloat16|float16|float32]... [--from RECORDS]... "
                    "[--candidates 1..%d] [--only cublas|TEMPLATE] [--margin R>=1] [--triton VERSION] "
                    "[--target-ms MS] [--smoke]\n", MAX_CANDIDATES);
    return 2;
}

/* Measures every job over its shapes, the records into rec_file and recs. */
static int measure_jobs(const job *jobs, int njobs, const char *const *suites, int nsuites,
                        const char *rec, const char *triton) {
    static sg_gemm_shape shapes[MAX_SHAPES];
    int                  n = 0;
    for (int i = 0; i < nsuites; i++) {
        int got = sg_gemm_read_suite(suites[i], shapes + n, MAX_SHAPES - n);
        if (got < 0) return 2;
        n += got;
    }
    if (!sg_bench_gpu_usable()) return 77;
    if (sg_aten_cuda_init() != SG_OK) { /* with the DSL kernels, the template's included */
        fprintf(stderr, "sg_gemm_tune: init: %s\n", sg_last_error());
        return 1;
    }
    if (!sg_bench_use_gpu0() || !sg_gemm_timing_begin()) return 1;
    if (!(rec_file = fopen(rec, "w"))) {
        fprintf(stderr, "sg_gemm_tune: cannot write %s\n", rec);
        return 1;
    }
    header(rec_file, triton);
    /* the header, read back as the table reads it: checked against --from's */
    if (fflush(rec_file) != 0 || !sg_tune_read(&recs, rec)) return 1;
    sg_cuda_set_allow_tf32(true); /* the float32 jobs measure TF32 */
    for (int q = 0; q < njobs && !sg_bench_lost; q++) {
        int done = 0;
        for (int i = 0; i < n && !sg_bench_lost; i++) {
            const sg_gemm_shape *s = &shapes[i];
            if ((s->batch > 1) != (jobs[q].op == SG_CUDA_GEMM_BMM)) continue;
            bool dup = false; /* the suites may list a shape twice */
            for (int p = 0; p < i && !dup; p++) dup = !memcmp(&shapes[p], s, sizeof *s);
            if (dup || (sg_bench_smoke && done == 2)) continue;
            tune_shape(&jobs[q], s);
            done++;
        }
    }
    sg_cuda_set_allow_tf32(false);
    sg_gemm_timing_end();
    return fclose(rec_file) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    sg_bench_begin("sg_gemm_tune", say_skipped);
    sg_gemm_target_ms = 20.0;
    const char *suites[MAX_FILES], *from[MAX_FILES];
    const char *out = NULL, *rec = NULL, *triton = NULL;
    job         jobs[MAX_JOBS];
    int         nsuites = 0, nfrom = 0, njobs = 0;
    double      margin = 1.02;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--smoke")) sg_bench_smoke = true;
        else if (!strcmp(a, "--suite") && v && nsuites < MAX_FILES) suites[nsuites++] = argv[++i];
        else if (!strcmp(a, "--from") && v && nfrom < MAX_FILES) from[nfrom++] = argv[++i];
        else if (!strcmp(a, "--out") && v) out = argv[++i];
        else if (!strcmp(a, "--records") && v) rec = argv[++i];
        else if (!strcmp(a, "--triton") && v) triton = argv[++i];
        else if (!strcmp(a, "--only") && v && known_only(v) && nonly < MAX_FILES)
            only[nonly++] = argv[++i];
        else if (!strcmp(a, "--job") && v && njobs < MAX_JOBS && parse_job(v, &jobs[njobs]))
            njobs++, i++;
        else if (!strcmp(a, "--candidates") && v && (ncand = atoi(argv[++i])) >= 1 &&
                 ncand <= MAX_CANDIDATES)
            ;
        else if (!strcmp(a, "--margin") && v && (margin = atof(argv[++i])) >= 1.0)
            ;
        else if (!strcmp(a, "--target-ms") && v && (sg_gemm_target_ms = atof(argv[++i])) > 0)
            ;
        else
            return usage();
    }
    if (!out || (njobs && !rec) || (!njobs && !nfrom)) {
        fprintf(stderr, "sg_gemm_tune: --out, and --job with --records or --from, are needed\n");
        return usage();
    }
    /* earlier runs first: this run's measurements replace theirs; the records written now
     * must not be one of them (opening it truncates it) */
    char rp[4096], fp[4096];
    for (int i = 0; rec && i < nfrom; i++)
        if (realpath(from[i], fp) &&
            (realpath(rec, rp) ? !strcmp(rp, fp) : !strcmp(rec, from[i]))) {
            fprintf(stderr, "sg_gemm_tune: --records %s is also read with --from: give this run's "
                            "records another file\n", rec);
            return 2;
        }
    for (int i = 0; i < nfrom; i++)
        if (!sg_tune_read(&recs, from[i])) return 1;
    if (njobs) {
        if (!nsuites) suites[nsuites++] = "bench/gemm_suite.txt";
        int st = measure_jobs(jobs, njobs, suites, nsuites, rec, triton);
        if (st) return st;
    }
    int    nshapes, nchosen;
    double gain;
    if (!sg_tune_write_table(&recs, out, margin, &nshapes, &nchosen, &gain))
        return 1;
    fprintf(stderr, "sg_gemm_tune: %d shapes, %d with a choice other than the heuristic; "
                    "geometric mean gain %.3f; table %s\n", nshapes, nchosen, gain, out);
    sg_tune_free(&recs);
    return njobs ? sg_bench_finish() : 0;
}
