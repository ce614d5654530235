/* gemm_util.c: what the matrix-product benchmarks (gemm.c, gemm_ops.c) and the tuner
 * (gemm_tune.c) share: the timing of one call after an L2 flush, timing in turn with the PyTorch
 * peer, and plain cuBLASLt (gemm_util.h). */
#define _POSIX_C_SOURCE 200809L
#include "gemm_util.h"

#include <cublasLt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_CALLS = SG_GEMM_MAX_CALLS, MIN_CALLS = SG_GEMM_MIN_CALLS };
double sg_gemm_target_ms = 60.0;

/* ---- timing: each call after an L2 flush --------------------------------------------------- */

static void       *flush_buf;
static cudaEvent_t ev[2][MAX_CALLS];

bool sg_gemm_timing_begin(void) {
    for (int i = 0; i < MAX_CALLS; i++)
        if (!sg_bench_cuda_ok(cudaEventCreate(&ev[0][i]), "setup", "cudaEventCreate") ||
            !sg_bench_cuda_ok(cudaEventCreate(&ev[1][i]), "setup", "cudaEventCreate"))
            return false;
    return sg_bench_cuda_ok(cudaMalloc(&flush_buf, SG_GEMM_FLUSH_BYTES), "setup",
                            "the flush buffer");
}

void sg_gemm_timing_end(void) {
    cudaFree(flush_buf);
    for (int i = 0; i < MAX_CALLS; i++) cudaEventDestroy(ev[0][i]), cudaEventDestroy(ev[1][i]);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* n calls, each after a flush, queued back to back: per-call ms into t. */
static bool timed_calls(const char *what, sg_gemm_call fn, void *ctx, int n, double *t) {
    for (int i = 0; i < n; i++) {
        if (!sg_bench_cuda_ok(cudaMemsetAsync(flush_buf, i & 0xff, SG_GEMM_FLUSH_BYTES,
                                              sg_bench_stream),
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
double sg_gemm_median_ms(const char *what, sg_gemm_call fn, void *ctx) {
    double t[MAX_CALLS];
    if (sg_bench_lost || !timed_calls(what, fn, ctx, 2, t)) return -1; /* warm-up, estimate */
    if (sg_bench_smoke) return t[1];
    int n = t[1] > 0 ? (int)(sg_gemm_target_ms / t[1]) : MAX_CALLS;
    n = n < MIN_CALLS ? MIN_CALLS : n > MAX_CALLS ? MAX_CALLS : n;
    if (!timed_calls(what, fn, ctx, n, t)) return -1;
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* ---- the PyTorch peer ----------------------------------------------------------------------- */

bool sg_gemm_peer_start(sg_gemm_peer *p, const char *cmd) {
    int in[2], out[2];
    *p = (sg_gemm_peer){NULL, NULL, -1, false};
    signal(SIGPIPE, SIG_IGN); /* a peer that died is a failed write, not the end of this run */
    if (pipe(in) != 0 || pipe(out) != 0) {
        fprintf(stderr, "gemm: cannot start the PyTorch peer '%s': no pipe\n", cmd);
        return false; /* the run ends: what is open goes with it */
    }
    fflush(NULL);
    p->pid = fork();
    if (p->pid == 0) {
        dup2(in[0], 0), dup2(out[1], 1);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(in[0]), close(out[1]);
    p->to = p->pid > 0 ? fdopen(in[1], "w") : NULL;
    p->from = p->pid > 0 ? fdopen(out[0], "r") : NULL;
    if (!p->to || !p->from) {
        fprintf(stderr, "gemm: cannot start the PyTorch peer '%s'\n", cmd);
        return false;
    }
    return true;
}

/* PyTorch's ms on (op, s) over target_ms; -1 where the peer did not answer. */
static double peer_ms(sg_gemm_peer *p, const char *op, const sg_gemm_shape *s, double target_ms) {
    double ms = -1;
    char   line[64];
    if (fprintf(p->to, "%s %lld %lld %lld %lld %.3f\n", op, (long long)s->batch,
                (long long)s->m, (long long)s->n, (long long)s->k, target_ms) < 0 ||
        fflush(p->to) != 0 || !fgets(line, sizeof line, p->from) ||
        sscanf(line, "%lf", &ms) != 1)
        return -1;
    return ms;
}

bool sg_gemm_peer_end(sg_gemm_peer *p) {
    int st = 0;
    if (p->to) fclose(p->to);
    if (p->from) fclose(p->from);
    p->to = p->from = NULL;
    bool ok = p->pid > 0 && waitpid(p->pid, &st, 0) == p->pid && WIFEXITED(st) &&
              WEXITSTATUS(st) == 0;
    return ok || p->lost;
}

bool sg_gemm_in_turn_ms(const char *what, int n, const sg_gemm_call *fn, void *const *ctx,
                        sg_gemm_peer *p, const char *op, const sg_gemm_shape *s, double *ms,
                        double *torch_ms) {
    double t[SG_GEMM_MAX_FNS + 1][SG_GEMM_ROUNDS];
    double target = sg_gemm_target_ms;
    bool   ok = n >= 1 && n <= SG_GEMM_MAX_FNS, torch = p && !p->lost;
    int    rounds = sg_bench_smoke ? 1 : SG_GEMM_ROUNDS;
    sg_gemm_target_ms = target / SG_GEMM_ROUNDS; /* the same calls in all as one median */
    for (int r = 0; ok && r < rounds; r++) {
        for (int i = 0; ok && i < n; i++) ok = (t[i][r] = sg_gemm_median_ms(what, fn[i], ctx[i])) > 0;
        if (ok && torch && (t[n][r] = peer_ms(p, op, s, sg_gemm_target_ms)) <= 0) {
            fprintf(stderr, "gemm: %s: the PyTorch peer did not answer; no more PyTorch "
                            "figures\n", what);
            p->lost = true, torch = false;
            sg_bench_failures++;
        }
    }
    sg_gemm_target_ms = target;
    for (int i = 0; ok && i < n + torch; i++) {
        qsort(t[i], (size_t)rounds, sizeof t[i][0], cmp_double);
        if (i < n) ms[i] = t[i][rounds / 2];
        else *torch_ms = t[i][rounds / 2];
    }
    if (torch_ms && (!ok || !torch)) *torch_ms = -1;
    return ok;
}

cublasLtHandle_t sg_gemm_lt;
void            *sg_gemm_lt_workspace;

/* ---- plain cuBLASLt ------------------------------------------------------------------------- */

bool sg_gemm_lt_ok(cublasStatus_t s, const char *what, const char *call) {
    if (s == CUBLAS_STATUS_SUCCESS) return true;
    fprintf(stderr, "gemm: %s: %s: %s\n", what, call, cublasLtGetStatusString(s));
    sg_bench_failures++;
    return false;
}

sg_status sg_gemm_lt_run(void *ctx) {
    const sg_gemm_lt_call *l = ctx;
    const float            one = 1.0f, zero = 0.0f;
    cublasStatus_t s = cublasLtMatmul(sg_gemm_lt, l->op, &one, l->b, l->la, l->a, l->lb, &zero,
                                      l->c, l->lc, l->c, l->lc, l->algo, sg_gemm_lt_workspace,
                                      SG_GEMM_LT_WORKSPACE, sg_bench_stream);
    return s == CUBLAS_STATUS_SUCCESS
               ? SG_OK
               : sg_error(SG_EDEVICE, "cublasLtMatmul: %s", cublasLtGetStatusString(s));
}

/* Row-major C[m,n] = A[m,k] B[k,n] is column-major C^T[n,m] = B^T[n,k] A^T[k,m] with every
 * leading dimension the row length: cuBLASLt's A is our B, its B our A. */
bool sg_gemm_lt_plan(const char *what, const sg_gemm_shape *s, sg_tensor *a, sg_tensor *b,
                     sg_tensor *c, sg_gemm_lt_call *l) {
    memset(l, 0, sizeof *l);
    l->a = sg_tensor_data(a), l->b = sg_tensor_data(b), l->c = sg_tensor_data(c);
    cudaDataType_t t = a->dtype == SG_FLOAT16 ? CUDA_R_16F : CUDA_R_16BF;
    return sg_gemm_lt_ok(cublasLtMatmulDescCreate(&l->op, CUBLAS_COMPUTE_32F, CUDA_R_32F), what,
                         "cublasLtMatmulDescCreate") &&
           sg_gemm_lt_ok(cublasLtMatrixLayoutCreate(&l->la, t, (uint64_t)s->n, (uint64_t)s->k,
                                                    s->n), what, "layout") &&
           sg_gemm_lt_ok(cublasLtMatrixLayoutCreate(&l->lb, t, (uint64_t)s->k, (uint64_t)s->m,
                                                    s->k), what, "layout") &&
           sg_gemm_lt_ok(cublasLtMatrixLayoutCreate(&l->lc, t, (uint64_t)s->n, (uint64_t)s->m,
                                                    s->n), what, "layout");
}

void sg_gemm_lt_unplan(sg_gemm_lt_call *l) {
    if (l->lc) cublasLtMatrixLayoutDestroy(l->lc);
    if (l->lb) cublasLtMatrixLayoutDestroy(l->lb);
    if (l->la) cublasLtMatrixLayoutDestroy(l->la);
    if (l->op) cublasLtMatmulDescDestroy(l->op);
}

int sg_gemm_lt_candidates(const char *what, const sg_gemm_lt_call *l, int n,
                         cublasLtMatmulHeuristicResult_t *res) {
    cublasLtMatmulPreference_t pref;
    if (!sg_gemm_lt_ok(cublasLtMatmulPreferenceCreate(&pref), what, "preference")) return 0;
    size_t ws = SG_GEMM_LT_WORKSPACE;
    int    got = 0;
    cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (!sg_gemm_lt_ok(s, what, "preference")) {
        got = 0;
    } else {
        s = cublasLtMatmulAlgoGetHeuristic(sg_gemm_lt, l->op, l->la, l->lb, l->lc, l->lc, pref, n,
                                           res, &got);
        if (!sg_gemm_lt_ok(s, what, "cublasLtMatmulAlgoGetHeuristic")) got = 0;
    }
    cublasLtMatmulPreferenceDestroy(pref);
    return got;
}
