/* gemm_util.h: what the matrix-product benchmark (gemm.c) and the tuner (gemm_tune.c) share.
 *
 * Timing: each call after an L2 flush (a memset of SG_GEMM_FLUSH_BYTES, more than the GPU's L2),
 * CUDA events
 * around the call alone, calls queued back to back and synchronised once; the median of the
 * calls, as many as fill about sg_gemm_target_ms (60 ms unless the program says; at least 5,
 * at most 64). Calls to compare are timed in interleaved rounds (sg_gemm_in_turn_ms). */
#ifndef SG_GEMM_UTIL_H
#define SG_GEMM_UTIL_H

#include "gemm_suite.h"
#include "gpu_harness.h"

#include <cublasLt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SG_GEMM_FLUSH_BYTES ((size_t)256 << 20)
enum { SG_GEMM_MIN_CALLS = 5, SG_GEMM_MAX_CALLS = 64 };


typedef sg_status (*sg_gemm_call)(void *ctx);

extern double sg_gemm_target_ms;

/* The events and the flush buffer; false (said) where they cannot be had. */
bool   sg_gemm_timing_begin(void);
void   sg_gemm_timing_end(void);
/* The median ms of a call of fn, as above (one call under --smoke); -1 on failure (said). */
double sg_gemm_median_ms(const char *what, sg_gemm_call fn, void *ctx);

/* PyTorch's side, timed in a process of its own: bench/gemm_torch.py --serve, started by a
 * shell command, its stdin and stdout as streams. Asked "OP BATCH M N K TARGET_MS" (OP mm,
 * linear, linear_bias, bmm_nn or bmm_nt), it answers with PyTorch's median ms over TARGET_MS.
 * lost: it stopped answering (said once); the run goes on without PyTorch's figures. */
typedef struct sg_gemm_peer {
    FILE *to, *from;
    int   pid;
    bool  lost;
} sg_gemm_peer;

bool sg_gemm_peer_start(sg_gemm_peer *p, const char *cmd);
/* Ends it: false where it failed (its exit status not 0) and was not lost before. */
bool sg_gemm_peer_end(sg_gemm_peer *p);

/* The ms of n calls to compare (fn[i] on ctx[i]) into ms[0..n), and with a peer (p not NULL
 * and not lost) PyTorch's on (op, s) into *torch_ms (else -1): SG_GEMM_ROUNDS rounds, each
 * timing every fn in turn (a median, as above, over a round's share of the target), then the
 * peer; the median of each one's rounds. The GPU's clocks drift over a run; timed in turn, all
 * see the same drift, so their ratios move less than those of medians taken apart. false on
 * failure (said). */
enum { SG_GEMM_ROUNDS = 5, SG_GEMM_MAX_FNS = 4 };
bool   sg_gemm_in_turn_ms(const char *what, int n, const sg_gemm_call *fn, void *const *ctx,
                          sg_gemm_peer *p, const char *op, const sg_gemm_shape *s, double *ms,
                          double *torch_ms);

/* ---- plain cuBLASLt: one handle and workspace, set up by the program ---------------------- */

#define SG_GEMM_LT_WORKSPACE ((size_t)32 << 20) /* as kernels/cuda/linalg.cu */
extern cublasLtHandle_t sg_gemm_lt;
extern void            *sg_gemm_lt_workspace;

/* Row-major C[m,n] = A[m,k] B[k,n] of contiguous bfloat16 or float16 tensors, as cuBLASLt's
 * column-major C^T = B^T A^T, and the algorithm to run it with. */
typedef struct sg_gemm_lt_call {
    cublasLtMatmulDesc_t        op;
    cublasLtMatrixLayout_t      la, lb, lc;
    const void                 *a, *b;
    void                       *c;
    const cublasLtMatmulAlgo_t *algo;
} sg_gemm_lt_call;

/* Whether s is success; else says so (what, call) and counts a failure. */
bool      sg_gemm_lt_ok(cublasStatus_t s, const char *what, const char *call);
bool      sg_gemm_lt_plan(const char *what, const sg_gemm_shape *s, sg_tensor *a, sg_tensor *b,
                          sg_tensor *c, sg_gemm_lt_call *l);
void      sg_gemm_lt_unplan(sg_gemm_lt_call *l);
/* The heuristic's first n candidates for the call; their count. */
int       sg_gemm_lt_candidates(const char *what, const sg_gemm_lt_call *l, int n,
                                cublasLtMatmulHeuristicResult_t *res);
/* An sg_gemm_call: cublasLtMatmul of l (a sg_gemm_lt_call) with l->algo. */
sg_status sg_gemm_lt_run(void *l);

#endif
