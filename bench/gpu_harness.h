/* gpu_harness.h: what the GPU benchmarks (bench/cuda.c, bench/dsl.c) share: their command line
 * and setup on GPU 0, the error helpers that count failures and notice a lost CUDA context, the
 * inputs they fill, and the GPU timing of an op.
 *
 * GPU time: CUDA events on the current stream around a batch of calls after warm-up, sized to
 * about 200 ms; the best of SG_BENCH_REPS batches. --smoke: one warm-up and one timed call.
 * Messages go to stderr, each starting with the program's name.
 */
#ifndef SG_BENCH_GPU_HARNESS_H
#define SG_BENCH_GPU_HARNESS_H

#include "sg_tensor.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>

enum { SG_BENCH_REPS = 5 };

/* An op as the timers call it: one call, its status. */
typedef sg_status (*sg_bench_op)(void);

/* Says that fig's op what is not covered (SG_ENOKERNEL, SG_EUNSUPPORTED): each program words
 * that note its own way, so its figures' notes read as before. */
typedef void (*sg_bench_skip_fn)(sg_status st, const char *fig, const char *what);

typedef struct sg_bench_group {
    const char *name;
    void (*run)(void);
} sg_bench_group;

extern bool         sg_bench_smoke;
extern cudaStream_t sg_bench_stream;   /* the thread's current stream: where the ops run */
extern int          sg_bench_failures; /* errors: the exit status is 1 */
extern bool         sg_bench_lost;     /* CUDA's context is unusable: nothing more can run */

/* Names the program in messages and sets how it says a skipped op; call first. */
void sg_bench_begin(const char *prog, sg_bench_skip_fn skipped);

/* [--smoke] [GROUP...] into sg_bench_smoke and want[n] (every group where none is named).
 * 0, or 2 with the usage said. */
int sg_bench_args(int argc, char **argv, const sg_bench_group *groups, int n, bool *want);

/* False (said) where no GPU is usable: the program exits 77. */
bool sg_bench_gpu_usable(void);

/* Makes GPU 0 current and takes its current stream; false (said) on failure. */
bool sg_bench_use_gpu0(void);

/* The timing events; false (said, counted) on failure. */
bool sg_bench_events_create(void);

/* Runs the wanted groups in order until the context is lost. */
void sg_bench_run(const sg_bench_group *groups, int n, const bool *want);

/* Frees the events, shuts the runtime down and says the failures: the exit status. */
int sg_bench_finish(void);

/* Monotonic wall time, seconds. */
double sg_bench_now_s(void);

/* A CUDA call's error: said with fig and what, counted; true where e is cudaSuccess. */
bool sg_bench_cuda_ok(cudaError_t e, const char *fig, const char *what);

/* An op's status: one not covered (no kernel, unsupported) is said by the program's note and
 * its figure left out; anything else is said and counted. True where st is SG_OK. */
bool sg_bench_op_ok(sg_status st, const char *fig, const char *what);

/* A CUDA tensor of float32, bfloat16 or float16 filled with a hash of the index in [-2, 2) times
 * scale, seed varying it; NULL (said) on failure. */
sg_tensor *sg_bench_filled(const char *fig, const int64_t *sizes, int32_t ndim, sg_dtype dt,
                           uint32_t seed, float scale);

/* GPU ms per call of fn: warm-up (first calls load kernels and plan), then SG_BENCH_REPS
 * batches of about 200 ms each; the best. -1 on failure (said). */
double sg_bench_time_gpu(const char *fig, const char *op, sg_bench_op fn);

#endif
