/* cuda.c: the CUDA kernels through the dispatcher on one GPU, against the GPU's own copy
 * bandwidth and the launch of an empty kernel. bench/run cuda runs bench/cuda_torch.py on the
 * same shapes in the same run and computes the ratios to PyTorch.
 *
 *   sg_bench_cuda [--smoke] [GROUP...]
 *
 * GROUPs: copy norm pointwise sum mm small (default: all). --smoke: one warm-up call and one
 * timed call per figure (the ctest smoke test). Exit status: 0, also where an op has no CUDA
 * kernel yet (said on stderr, figure left out); 1 where an op or CUDA call failed otherwise;
 * 77 where no GPU is usable.
 *
 * GPU time: CUDA events on the current stream around a batch of calls after warm-up, sized to
 * about 200 ms; the best of 5 batches. Bytes are what the op must move (read + written).
 * Host time (small ops, empty launch): wall time of 10,000 calls until a final synchronize.
 * Every figure is one line, "name value unit"; notes and errors go to stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include "aten.h"
#include "gpu_harness.h"
#include "sg_aten_cuda.h"
#include "sg_cuda.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

/* bench/cuda_empty.cu */
void sg_bench_empty_launch(void *stream);

enum { SMALL_CALLS = 10000 };

/* An op without a CUDA kernel yet: said, its figure left out, not a failure. */
static void say_skipped(sg_status st, const char *fig, const char *op) {
    fprintf(stderr, "sg_bench_cuda: %s: %s is not implemented on CUDA yet (%s: %s); skipped\n",
            fig, op, sg_status_name(st), sg_last_error());
}

/* ---- inputs ------------------------------------------------------------------------------ */

/* An uninitialised CUDA tensor (an out= argument); NULL (said) on failure. */
static sg_tensor *empty(const char *fig, const int64_t *sizes, int32_t ndim, sg_dtype dt) {
    sg_tensor *t = NULL;
    return sg_bench_op_ok(sg_tensor_empty(sizes, ndim, dt, SG_CUDA(0), &t), fig, "sg_tensor_empty (cuda)")
               ? t
               : NULL;
}

/* ---- timing ------------------------------------------------------------------------------ */

/* The tensors of the figure being timed; the op functions below read them. */
static sg_tensor *in0, *in1, *in2, *out0;

/* Host µs per call of fn, calls in a row then one synchronize; the best of SG_BENCH_REPS. -1
 * on failure. */
static double time_host(const char *fig, const char *op, sg_bench_op fn) {
    if (sg_bench_lost) return -1;
    int calls = sg_bench_smoke ? 100 : SMALL_CALLS;
    for (int i = 0; i < calls / 10; i++)
        if (!sg_bench_op_ok(fn(), fig, op)) return -1;
    if (!sg_bench_cuda_ok(cudaStreamSynchronize(sg_bench_stream), fig, "warm-up")) return -1;
    double best = 1e30;
    for (int r = 0; r < (sg_bench_smoke ? 1 : SG_BENCH_REPS); r++) {
        double t0 = sg_bench_now_s();
        for (int i = 0; i < calls; i++)
            if (!sg_bench_op_ok(fn(), fig, op)) return -1;
        if (!sg_bench_cuda_ok(cudaStreamSynchronize(sg_bench_stream), fig, "synchronize")) return -1;
        double us = (sg_bench_now_s() - t0) / calls * 1e6;
        if (us < best) best = us;
    }
    if (!sg_bench_cuda_ok(cudaGetLastError(), fig, "launch")) return -1;
    return best;
}

static void print_gbps(const char *name, double bytes, double ms) {
    if (ms > 0) printf("%s %.1f GB/s\n", name, bytes / (ms * 1e-3) * 1e-9);
    fflush(stdout);
}

static void release_all(void) {
    sg_tensor_release(in0), sg_tensor_release(in1), sg_tensor_release(in2);
    sg_tensor_release(out0);
    in0 = in1 = in2 = out0 = NULL;
}

/* ---- the ops ----------------------------------------------------------------------------- */

/* Set while probing: the op functions hand their first result over instead of releasing it. */
static bool       keep_result;
static sg_tensor *kept;

static void keep_or_release(sg_tensor *y) {
    if (keep_result && !kept)
        kept = y;
    else
        sg_tensor_release(y);
}

/* One call of a functional op before timing it: it runs, and its result is on the GPU (a
 * figure of an op that computed elsewhere would mean nothing). */
static bool probe(const char *fig, const char *op, sg_bench_op fn) {
    if (sg_bench_lost) return false;
    keep_result = true;
    kept = NULL;
    sg_status st = fn();
    keep_result = false;
    sg_tensor *y = kept;
    kept = NULL;
    if (!sg_bench_op_ok(st, fig, op)) {
        sg_tensor_release(y);
        return false;
    }
    bool ok = y && y->device.type == SG_DEV_CUDA && y->device.index == 0;
    if (!ok) {
        fprintf(stderr, "sg_bench_cuda: %s: %s returned %s%s, not a tensor on cuda:0; skipped\n",
                fig, op, y ? "a tensor on " : "no tensor",
                y ? sg_device_type_name((sg_device_type)y->device.type) : "");
        sg_bench_failures++;
    }
    sg_tensor_release(y);
    return ok;
}

static size_t copy_bytes;

static sg_status op_copy(void) {
    cudaError_t e = cudaMemcpyAsync(sg_tensor_data(out0), sg_tensor_data(in0), copy_bytes,
                                    cudaMemcpyDeviceToDevice, sg_bench_stream);
    return e == cudaSuccess ? SG_OK
                            : sg_error(SG_EDEVICE, "cudaMemcpyAsync: %s", cudaGetErrorString(e));
}

static const int64_t norm_last[1] = {4096}, ln_last[1] = {1024};
static const double  rms_eps = 1e-6;

static sg_status op_fused_rms_norm(void) {
    sg_tensor *y = NULL, *rstd = NULL;
    sg_status  st =
        aten__fused_rms_norm(in0, (sg_int_list){norm_last, 1}, in1, &rms_eps, &y, &rstd);
    keep_or_release(y), sg_tensor_release(rstd);
    return st;
}
static sg_status op_rms_norm(void) {
    sg_tensor *y = NULL;
    sg_status  st = aten_rms_norm(in0, (sg_int_list){norm_last, 1}, in1, &rms_eps, &y);
    keep_or_release(y);
    return st;
}
static sg_status op_softmax(void) {
    sg_tensor *y = NULL;
    sg_status  st = aten__softmax(in0, -1, false, &y);
    keep_or_release(y);
    return st;
}
static sg_status op_layer_norm(void) {
    sg_tensor *y = NULL, *mean = NULL, *rstd = NULL;
    sg_status  st = aten_native_layer_norm(in0, (sg_int_list){ln_last, 1}, in1, in2, 1e-5, &y,
                                           &mean, &rstd);
    keep_or_release(y), sg_tensor_release(mean), sg_tensor_release(rstd);
    return st;
}
static sg_status op_add_out(void) {
    sg_tensor *r = NULL;
    sg_status  st = aten_add_out(in0, in1, sg_scalar_int(1), out0, &r);
    sg_tensor_release(r);
    return st;
}
static sg_status op_mul_out(void) {
    sg_tensor *r = NULL;
    sg_status  st = aten_mul_out(in0, in1, out0, &r);
    sg_tensor_release(r);
    return st;
}
static sg_status op_exp_out(void) {
    sg_tensor *r = NULL;
    sg_status  st = aten_exp_out(in0, out0, &r);
    sg_tensor_release(r);
    return st;
}
static const int64_t last_dim[1] = {-1};
static sg_status     op_sum_out(void) {
    sg_tensor  *r = NULL;
    sg_int_list dims = {last_dim, 1};
    sg_status   st = aten_sum_IntList_out(in0, &dims, false, NULL, out0, &r);
    sg_tensor_release(r);
    return st;
}
static sg_status op_mm_out(void) {
    sg_tensor *r = NULL;
    sg_status  st = aten_mm_out(in0, in1, out0, &r);
    sg_tensor_release(r);
    return st;
}
static sg_status op_small_add(void) {
    sg_tensor *r = NULL;
    sg_status  st = aten_add_Tensor(in0, in1, sg_scalar_int(1), &r);
    keep_or_release(r);
    return st;
}
static sg_status op_empty_launch(void) {
    sg_bench_empty_launch(sg_bench_stream);
    return SG_OK;
}

/* ---- the figures ------------------------------------------------------------------------- */

/* Device-to-device copy of 1 GiB: 2 GiB moved. */
static void bench_copy(void) {
    const char   *fig = "copy_gbps";
    const int64_t n = (int64_t)1 << 30;
    copy_bytes = (size_t)n;
    in0 = empty(fig, &n, 1, SG_UINT8);
    out0 = in0 ? empty(fig, &n, 1, SG_UINT8) : NULL;
    if (in0 && out0 && sg_bench_cuda_ok(cudaMemsetAsync(sg_tensor_data(in0), 1, copy_bytes, sg_bench_stream), fig,
                               "cudaMemsetAsync"))
        print_gbps(fig, 2.0 * (double)n, sg_bench_time_gpu(fig, "cudaMemcpyAsync", op_copy));
    release_all();
}

static void bench_norm(void) {
    /* rms_norm float32 [16384, 4096], weight float32 [4096]: x read, y written */
    const int64_t rows[2] = {16384, 4096}, w4k = 4096;
    const char   *fig = "rms_norm_f32_gbps";
    in0 = sg_bench_filled(fig, rows, 2, SG_FLOAT32, 1, 1.0f);
    in1 = in0 ? sg_bench_filled(fig, &w4k, 1, SG_FLOAT32, 2, 0.5f) : NULL;
    if (in0 && in1) {
        double bytes = 2.0 * 4 * 16384 * 4096;
        /* Rationale: _fused_rms_norm is the fused kernel; rms_norm is tried where it is absent
         * (it may be a composite of pointwise ops). */
        sg_status st = op_fused_rms_norm();
        if (st == SG_ENOKERNEL || st == SG_EUNSUPPORTED) {
            fprintf(stderr, "sg_bench_cuda: %s: aten::_fused_rms_norm: %s; timing aten::rms_norm\n",
                    fig, sg_last_error());
            if (probe(fig, "aten::rms_norm", op_rms_norm))
                print_gbps(fig, bytes, sg_bench_time_gpu(fig, "aten::rms_norm", op_rms_norm));
        } else if (sg_bench_op_ok(st, fig, "aten::_fused_rms_norm") &&
                   probe(fig, "aten::_fused_rms_norm", op_fused_rms_norm)) {
            print_gbps(fig, bytes, sg_bench_time_gpu(fig, "aten::_fused_rms_norm", op_fused_rms_norm));
        }
    }
    release_all();

    /* softmax bfloat16 [16384, 4096] over the last dim */
    fig = "softmax_bf16_gbps";
    in0 = sg_bench_filled(fig, rows, 2, SG_BFLOAT16, 3, 2.0f);
    if (in0 && probe(fig, "aten::_softmax", op_softmax))
        print_gbps(fig, 2.0 * 2 * 16384 * 4096, sg_bench_time_gpu(fig, "aten::_softmax", op_softmax));
    release_all();

    /* native_layer_norm bfloat16 [65536, 1024], weight and bias bfloat16 [1024] */
    const int64_t ln[2] = {65536, 1024}, w1k = 1024;
    fig = "layer_norm_bf16_gbps";
    in0 = sg_bench_filled(fig, ln, 2, SG_BFLOAT16, 4, 1.0f);
    in1 = in0 ? sg_bench_filled(fig, &w1k, 1, SG_BFLOAT16, 5, 0.5f) : NULL;
    in2 = in1 ? sg_bench_filled(fig, &w1k, 1, SG_BFLOAT16, 6, 0.5f) : NULL;
    if (in2 && probe(fig, "aten::native_layer_norm", op_layer_norm))
        print_gbps(fig, 2.0 * 2 * 65536 * 1024,
                   sg_bench_time_gpu(fig, "aten::native_layer_norm", op_layer_norm));
    release_all();
}

/* 64 M elements, contiguous, written into a preallocated out= tensor. */
static void bench_pointwise(void) {
    const int64_t n = (int64_t)64 << 20;
    const char   *fig = "add_f32_gbps";
    in0 = sg_bench_filled(fig, &n, 1, SG_FLOAT32, 7, 1.0f);
    in1 = in0 ? sg_bench_filled(fig, &n, 1, SG_FLOAT32, 8, 1.0f) : NULL;
    out0 = in1 ? empty(fig, &n, 1, SG_FLOAT32) : NULL;
    if (out0) {
        print_gbps(fig, 3.0 * 4 * (double)n, sg_bench_time_gpu(fig, "aten::add.out", op_add_out));
        fig = "mul_f32_gbps";
        print_gbps(fig, 3.0 * 4 * (double)n, sg_bench_time_gpu(fig, "aten::mul.out", op_mul_out));
        fig = "exp_f32_gbps";
        print_gbps(fig, 2.0 * 4 * (double)n, sg_bench_time_gpu(fig, "aten::exp.out", op_exp_out));
    }
    release_all();

    fig = "add_bf16_gbps";
    in0 = sg_bench_filled(fig, &n, 1, SG_BFLOAT16, 9, 1.0f);
    in1 = in0 ? sg_bench_filled(fig, &n, 1, SG_BFLOAT16, 10, 1.0f) : NULL;
    out0 = in1 ? empty(fig, &n, 1, SG_BFLOAT16) : NULL;
    if (out0) print_gbps(fig, 3.0 * 2 * (double)n, sg_bench_time_gpu(fig, "aten::add.out", op_add_out));
    release_all();
}

/* sum over the rows of [16384, 4096] float32 (each row to one value), into out=. */
static void bench_sum(void) {
    const int64_t sz[2] = {16384, 4096}, rows = 16384;
    const char   *fig = "sum_f32_gbps";
    in0 = sg_bench_filled(fig, sz, 2, SG_FLOAT32, 11, 1.0f);
    out0 = in0 ? empty(fig, &rows, 1, SG_FLOAT32) : NULL;
    if (out0)
        print_gbps(fig, 4.0 * (16384.0 * 4096 + 16384),
                   sg_bench_time_gpu(fig, "aten::sum.IntList_out", op_sum_out));
    release_all();
}

/* bfloat16 [8192, 8192] @ [8192, 8192] into out=. */
static void bench_mm(void) {
    const int64_t sz[2] = {8192, 8192};
    const char   *fig = "mm_bf16_tflops";
    in0 = sg_bench_filled(fig, sz, 2, SG_BFLOAT16, 12, 0.25f);
    in1 = in0 ? sg_bench_filled(fig, sz, 2, SG_BFLOAT16, 13, 0.25f) : NULL;
    out0 = in1 ? empty(fig, sz, 2, SG_BFLOAT16) : NULL;
    if (out0) {
        double ms = sg_bench_time_gpu(fig, "aten::mm.out", op_mm_out);
        if (ms > 0) printf("%s %.1f TFLOP/s\n", fig, 2.0 * 8192.0 * 8192 * 8192 / (ms * 1e-3) * 1e-12);
        fflush(stdout);
    }
    release_all();
}

/* add.Tensor on two 64 K-element float32 tensors, the result allocated and released each
 * call; and the empty kernel's launch, timed the same way. */
static void bench_small(void) {
    const int64_t n = 65536;
    const char   *fig = "small_add_us";
    in0 = sg_bench_filled(fig, &n, 1, SG_FLOAT32, 14, 1.0f);
    in1 = in0 ? sg_bench_filled(fig, &n, 1, SG_FLOAT32, 15, 1.0f) : NULL;
    if (in1 && probe(fig, "aten::add.Tensor", op_small_add)) {
        double us = time_host(fig, "aten::add.Tensor", op_small_add);
        if (us > 0) printf("%s %.3f us\n", fig, us);
    }
    release_all();
    fig = "empty_launch_us";
    double us = time_host(fig, "an empty kernel's launch", op_empty_launch);
    if (us > 0) printf("%s %.3f us\n", fig, us);
    fflush(stdout);
}

static const sg_bench_group groups[] = {
    {"copy", bench_copy}, {"norm", bench_norm}, {"pointwise", bench_pointwise},
    {"sum", bench_sum},   {"mm", bench_mm},     {"small", bench_small},
};
enum { NGROUPS = sizeof groups / sizeof groups[0] };

int main(int argc, char **argv) {
    sg_bench_begin("sg_bench_cuda", say_skipped);
    bool want[NGROUPS];
    int  rc = sg_bench_args(argc, argv, groups, NGROUPS, want);
    if (rc != 0) return rc;
    if (!sg_bench_gpu_usable()) return 77;
    sg_status st = sg_aten_cuda_init();
    if (st != SG_OK) {
        fprintf(stderr, "sg_bench_cuda: sg_aten_cuda_init: %s: %s\n", sg_status_name(st),
                sg_last_error());
        return 1;
    }
    if (!sg_bench_use_gpu0()) return 1;
    struct cudaDeviceProp prop;
    if (!sg_bench_cuda_ok(cudaGetDeviceProperties(&prop, 0), "setup", "cudaGetDeviceProperties") ||
        !sg_bench_events_create())
        return 1;
    int rt = 0, drv = 0;
    (void)cudaRuntimeGetVersion(&rt);
    (void)cudaDriverGetVersion(&drv);
    fprintf(stderr, "sg_bench_cuda: %s (sm_%d%d, %d SMs, %.0f GiB), CUDA runtime %d, driver %d%s\n",
            prop.name, prop.major, prop.minor, prop.multiProcessorCount,
            (double)prop.totalGlobalMem / (1 << 30), rt, drv, sg_bench_smoke ? ", smoke run" : "");

    sg_bench_run(groups, NGROUPS, want);
    return sg_bench_finish();
}
