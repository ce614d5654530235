/* dsl.c: the DSL kernels (docs/dsl.md) on GPU 0: each shipped kernel through the generated API
 * with its override taking the call, against the stock CUDA kernel (the same call with the DSL
 * switched off); then the host cost of the override on the call path. bench/run dsl runs
 * bench/dsl_torch.py on the same shapes in the same run and computes the ratios.
 *
 *   sg_bench_dsl [--smoke] [GROUP...]
 *
 * GROUPs: bandwidth host (default: both). --smoke: one warm-up and one timed call per figure on
 * small shapes (the ctest smoke test). Exit status: 0; 1 where an op or CUDA call failed; 77
 * where no GPU is usable or the build has no DSL kernels (said on stderr).
 *
 * Routing is checked, not assumed: before a route is timed, one call must have launched the
 * artifact of that point (sg_dsl_launch_count) or, for the stock route, none; after timing, the
 * counts must have moved by exactly the calls made. A figure that fails a check is left out,
 * with a note. The DSL's results are compared with the stock kernel's (max |difference| per
 * output, on stderr).
 *
 * GPU time: CUDA events on the current stream around a batch of calls after warm-up, sized to
 * about 200 ms; the best of 5 batches. Bytes are what the op must move (read + written).
 * Host time: wall time of each call alone, in chunks of CHUNK calls with a synchronize after
 * each chunk that is not timed (the queue stays short, so launches never wait for the GPU); a
 * chunk's figure is its median call, whose time includes one read of the clock.
 * A declined call is set beside the same call with the op's overrides switched off
 * (sg_op_set_overrides_enabled), chunk against chunk; its figure is the median of those
 * pairs' differences. The launch variants run interleaved, round after round, and a difference
 * is the median over rounds of the paired differences.
 */
#define _POSIX_C_SOURCE 200809L
#include "aten.h"
#include "gpu_harness.h"
#include "sg_aten_cuda.h"
#include "sg_cuda.h"
#include "sg_dsl.h"
#ifdef SG_BENCH_HAVE_FUSED
#include "fused.h"
#include "sg_fused.h"
#endif

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PAIRS: pairs of chunks a round for each declined call (pair, below) */
enum { CHUNK = 128, ROUNDS = 41, ROUND_CALLS = 1024, PAIRS = 32, MAX_ARTS = 1024 };

static int capability;

static void note(const char *fig, const char *msg) {
    fprintf(stderr, "sg_bench_dsl: %s: %s\n", fig, msg);
}

/* An op the stock kernels do not cover (no kernel, unsupported): said, its figure left out. */
static void say_skipped(sg_status st, const char *fig, const char *what) {
    fprintf(stderr, "sg_bench_dsl: %s: %s: %s: %s; figure left out\n", fig, what,
            sg_status_name(st), sg_last_error());
}

/* bfloat16 bits to float32 (exact), for comparing results. */
static float from_bf16(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float    f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- artifacts --------------------------------------------------------------------------- */

static const sg_dsl_artifact *arts[MAX_ARTS];
static size_t                 narts;

/* The artifact of op for (dtype, N) built for this GPU's capability; NULL where none. */
static const sg_dsl_artifact *find_artifact(const char *op, const char *dtype, int64_t n) {
    char want[96];
    if (n < 0) /* one artifact per dtype, any size */
        snprintf(want, sizeof want, "__%s__sm", dtype);
    else
        snprintf(want, sizeof want, "__%s_%lld__sm", dtype, (long long)n);
    for (size_t i = 0; i < narts; i++) {
        const sg_dsl_artifact *a = arts[i];
        if (strcmp(a->op, op) == 0 && strstr(a->prefix, want) &&
            a->cc_major * 10 + a->cc_minor == capability)
            return a;
    }
    return NULL;
}

/* Kernels launched by every DSL artifact together. */
static uint64_t all_launches(void) {
    uint64_t n = 0;
    for (size_t i = 0; i < narts; i++) n += sg_dsl_launch_count(arts[i]);
    return n;
}

/* The routes: the DSL override on, or the same call with the DSL switched off. */
static bool set_dsl(bool on, const char *fig) {
    return sg_bench_op_ok(sg_dsl_set_enabled("triton", on), fig, "sg_dsl_set_enabled(\"triton\")");
}

/* ---- the ops ----------------------------------------------------------------------------- */

static sg_tensor     *x, *w, *b, *r; /* the inputs of the point being measured */
static int64_t        cur_n;
static const double   rms_eps = 1e-6, ln_eps = 1e-5;
static bool           keep_results; /* set while probing: results are kept, not released */
static sg_tensor     *kept[3];
static int            nkept;
static uint64_t       calls_made; /* op calls since the counter was reset */

static void settle(sg_tensor **o, int n) {
    calls_made++;
    for (int i = 0; i < n; i++) {
        if (keep_results && nkept < 3 && i == nkept)
            kept[nkept++] = o[i];
        else
            sg_tensor_release(o[i]);
    }
}

static sg_status op_rms_norm(void) {
    sg_tensor *o[2] = {NULL, NULL};
    sg_status  st = aten__fused_rms_norm(x, (sg_int_list){&cur_n, 1}, w, &rms_eps, &o[0], &o[1]);
    settle(o, 2);
    return st;
}

static sg_status op_softmax(void) {
    sg_tensor *o[1] = {NULL};
    sg_status  st = aten__softmax(x, -1, false, &o[0]);
    settle(o, 1);
    return st;
}

static sg_status op_layer_norm(void) {
    sg_tensor *o[3] = {NULL, NULL, NULL};
    sg_status  st =
        aten_native_layer_norm(x, (sg_int_list){&cur_n, 1}, w, b, ln_eps, &o[0], &o[1], &o[2]);
    settle(o, 3);
    return st;
}

#ifdef SG_BENCH_HAVE_FUSED
static sg_status op_add_rms_norm(void) {
    sg_tensor *o[2] = {NULL, NULL};
    sg_status  st = fused_add_rms_norm(x, r, w, rms_eps, &o[0], &o[1]);
    settle(o, 2);
    return st;
}
#endif

#ifdef SG_HAVE_CUTEDSL_KERNELS
static sg_status op_silu_mul(void) {
    sg_tensor *o[1] = {NULL};
    sg_status  st = fused_silu_mul(x, r, &o[0]);
    settle(o, 1);
    return st;
}
#endif

/* The stock counterpart of fused::silu_mul: silu, then mul (two kernels). */
static sg_status op_silu_then_mul(void) {
    sg_tensor *s = NULL, *y = NULL;
    sg_status  st = aten_silu(x, &s);
    if (st == SG_OK) st = aten_mul_Tensor(s, r, &y);
    sg_tensor_release(s);
    sg_tensor *o[1] = {y};
    settle(o, 1);
    return st;
}

/* The stock counterpart of fused::add_rms_norm, which has no stock kernel: add.Tensor, then
 * _fused_rms_norm of the sum (two kernels); results (y, sum) as the fused op's. */
static sg_status op_add_then_rms_norm(void) {
    sg_tensor *s = NULL, *y = NULL, *rstd = NULL;
    sg_status  st = aten_add_Tensor(x, r, sg_scalar_int(1), &s);
    if (st == SG_OK)
        st = aten__fused_rms_norm(s, (sg_int_list){&cur_n, 1}, w, &rms_eps, &y, &rstd);
    sg_tensor_release(rstd);
    sg_tensor *o[2] = {y, s};
    settle(o, 2);
    return st;
}

/* ---- comparing results ------------------------------------------------------------------- */

/* max |a - b| over two tensors of one dtype and shape (float32 or bfloat16), read back to the
 * host; INFINITY where one is NaN and the other not, or the shapes differ; -1 on failure. */
static double max_abs_diff(const char *fig, sg_tensor *a, sg_tensor *bb) {
    if (!a || !bb || a->ndim != bb->ndim || a->dtype != bb->dtype) return INFINITY;
    for (int32_t d = 0; d < a->ndim; d++)
        if (a->sizes[d] != bb->sizes[d]) return INFINITY;
    if (a->dtype != SG_FLOAT32 && a->dtype != SG_BFLOAT16) {
        note(fig, "an output of a dtype the comparison does not read");
        return -1;
    }
    sg_tensor *ha = NULL, *hb = NULL;
    if (!sg_bench_op_ok(sg_tensor_to(a, SG_CPU, &ha), fig, "copy to the host") ||
        !sg_bench_op_ok(sg_tensor_to(bb, SG_CPU, &hb), fig, "copy to the host")) {
        sg_tensor_release(ha);
        return -1;
    }
    int64_t n = sg_tensor_numel(ha);
    double  m = 0;
    for (int64_t i = 0; i < n; i++) {
        double va, vb;
        if (a->dtype == SG_FLOAT32) {
            va = ((const float *)sg_tensor_data(ha))[i];
            vb = ((const float *)sg_tensor_data(hb))[i];
        } else {
            va = from_bf16(((const uint16_t *)sg_tensor_data(ha))[i]);
            vb = from_bf16(((const uint16_t *)sg_tensor_data(hb))[i]);
        }
        if (isnan(va) != isnan(vb)) {
            m = INFINITY;
            break;
        }
        if (!isnan(va) && fabs(va - vb) > m) m = fabs(va - vb);
    }
    sg_tensor_release(ha), sg_tensor_release(hb);
    return m;
}

/* ---- bandwidth --------------------------------------------------------------------------- */

typedef struct kernel {
    const char *name;  /* in the figures' names */
    const char *op;    /* the op its artifacts serve */
    sg_bench_op       call;  /* NULL: not in this build */
    sg_bench_op       stock; /* the same call run with the DSL switched off, or a stock composite */
    const char *stock_what;
    bool        any_n; /* elementwise: one artifact per dtype serves every size (measured at
                        * one N) */
} kernel;

static const kernel kernels[] = {
    {"rms_norm", "aten::_fused_rms_norm", op_rms_norm, op_rms_norm, "aten::_fused_rms_norm",
     false},
    {"softmax", "aten::_softmax", op_softmax, op_softmax, "aten::_softmax", false},
    {"layer_norm", "aten::native_layer_norm", op_layer_norm, op_layer_norm,
     "aten::native_layer_norm", false},
#ifdef SG_BENCH_HAVE_FUSED
    {"add_rms_norm", "fused::add_rms_norm", op_add_rms_norm, op_add_then_rms_norm,
     "aten::add.Tensor then aten::_fused_rms_norm", false},
#else
    {"add_rms_norm", "fused::add_rms_norm", NULL, op_add_then_rms_norm,
     "aten::add.Tensor then aten::_fused_rms_norm", false},
#endif
#ifdef SG_HAVE_CUTEDSL_KERNELS
    {"silu_mul", "fused::silu_mul", op_silu_mul, op_silu_then_mul,
     "aten::silu then aten::mul.Tensor", true},
#else
    {"silu_mul", "fused::silu_mul", NULL, op_silu_then_mul, "aten::silu then aten::mul.Tensor",
     true},
#endif
};
enum { NKERNELS = sizeof kernels / sizeof kernels[0] };

/* Bytes the op must move for rows x n of es-byte elements: its inputs read, its outputs
 * written (float32 statistics per row). add_rms_norm counts the fused op's traffic for both
 * routes, so the unfused one's figure is an effective bandwidth. */
static double op_bytes(const kernel *k, int64_t rows, int64_t n, int es) {
    double rn = (double)rows * (double)n * es, wn = (double)n * es;
    if (strcmp(k->name, "rms_norm") == 0) return 2 * rn + wn + 4.0 * (double)rows;
    if (strcmp(k->name, "softmax") == 0) return 2 * rn;
    if (strcmp(k->name, "layer_norm") == 0) return 2 * rn + 2 * wn + 8.0 * (double)rows;
    if (strcmp(k->name, "silu_mul") == 0) return 3 * rn; /* gate, up read; out written */
    return 4 * rn + wn; /* add_rms_norm: x, residual read; y, sum written */
}

static void release_kept(sg_tensor **into, int *n) {
    for (int i = 0; i < 3; i++) {
        if (into) into[i] = i < nkept ? kept[i] : NULL;
        else if (i < nkept) sg_tensor_release(kept[i]);
        kept[i] = NULL;
    }
    if (n) *n = nkept;
    nkept = 0;
}

/* One call of fn with its results kept: it ran, on cuda:0, and launched artifact a exactly
 * once (a NULL: launched no DSL kernel at all). The results go to out[0..2]. */
static bool probe(const char *fig, const char *what, sg_bench_op fn, const sg_dsl_artifact *a,
                  sg_tensor **out, int *nout) {
    if (sg_bench_lost) return false;
    uint64_t before = a ? sg_dsl_launch_count(a) : all_launches();
    keep_results = true;
    sg_status st = fn();
    keep_results = false;
    release_kept(out, nout);
    bool ok = sg_bench_op_ok(st, fig, what) &&
              sg_bench_cuda_ok(cudaStreamSynchronize(sg_bench_stream), fig, "synchronize after the probe");
    if (ok && (!out[0] || out[0]->device.type != SG_DEV_CUDA || out[0]->device.index != 0)) {
        note(fig, "the result is not a tensor on cuda:0; figure left out");
        ok = false;
    }
    uint64_t after = a ? sg_dsl_launch_count(a) : all_launches();
    if (ok && a && after != before + 1) {
        fprintf(stderr,
                "sg_bench_dsl: %s: the DSL route did not launch %s (launches %llu -> %llu); "
                "figure left out\n",
                fig, a->prefix, (unsigned long long)before, (unsigned long long)after);
        ok = false;
    }
    if (ok && !a && after != before) {
        fprintf(stderr, "sg_bench_dsl: %s: the stock route launched a DSL kernel; figure left out\n",
                fig);
        ok = false;
    }
    if (!ok)
        for (int i = 0; i < 3; i++) sg_tensor_release(out[i]), out[i] = NULL;
    return ok;
}

/* Times fn and checks that the DSL launches moved as the route says: by the calls made for
 * artifact a, not at all for a NULL one. The figure (GB/s), or -1 (said). */
static double timed_route(const char *fig, const char *what, sg_bench_op fn, const sg_dsl_artifact *a,
                          double bytes) {
    uint64_t before = a ? sg_dsl_launch_count(a) : all_launches();
    calls_made = 0;
    double ms = sg_bench_time_gpu(fig, what, fn);
    if (ms <= 0) return -1;
    uint64_t after = a ? sg_dsl_launch_count(a) : all_launches();
    uint64_t want = a ? before + calls_made : before;
    if (after != want) {
        fprintf(stderr,
                "sg_bench_dsl: %s: %llu calls moved the DSL launches %llu -> %llu, not to %llu; "
                "figure left out\n",
                fig, (unsigned long long)calls_made, (unsigned long long)before,
                (unsigned long long)after, (unsigned long long)want);
        return -1;
    }
    return bytes / (ms * 1e-3) * 1e-9;
}

/* A measured figure (v < 0: not measured, nothing printed). */
static void print_fig(const char *name, double v, const char *unit, int prec) {
    if (v >= 0) printf("%s %.*f %s\n", name, prec, v, unit);
    fflush(stdout);
}

/* A difference of two measured figures: printed whatever its sign (noise can make it < 0). */
static void print_diff(const char *name, double v, const char *unit, int prec) {
    printf("%s %.*f %s\n", name, prec, v, unit);
    fflush(stdout);
}

static void compare(const char *fig, const char *against, sg_tensor **d, int nd, sg_tensor **s,
                    int ns) {
    if (nd != ns) {
        fprintf(stderr, "sg_bench_dsl: %s: %d results against %d\n", fig, nd, ns);
        return;
    }
    /* one write for the whole line: stdout reaches a combined log later, through a pipe, and
     * must not land inside it */
    char   line[512] = "";
    size_t k = 0;
    bool   large = false;
    for (int i = 0; i < nd && k < sizeof line; i++) {
        double m = max_abs_diff(fig, d[i], s[i]);
        /* about two units in the last place of results near 1 */
        double tol = d[i] && d[i]->dtype == SG_BFLOAT16 ? 0.02 : 1e-4;
        k += (size_t)snprintf(line + k, sizeof line - k, " out%d %.3g", i, m);
        if (m > tol) large = true;
    }
    fprintf(stderr, "sg_bench_dsl: %s: max |dsl - %s|:%s%s\n", fig, against, line,
            large ? "  (larger than expected: look at this point)" : "");
}

static void bench_point(const kernel *k, sg_dtype dt, int64_t rows, int64_t n) {
    const char *dn = dt == SG_FLOAT32 ? "f32" : "bf16";
    const char *dtype = dt == SG_FLOAT32 ? "float32" : "bfloat16";
    int         es = dt == SG_FLOAT32 ? 4 : 2;
    char        dfig[96], sfig[96], head[128];
    snprintf(dfig, sizeof dfig, "dsl_%s_%s_%lld_gbps", k->name, dn, (long long)n);
    snprintf(sfig, sizeof sfig, "stock_%s_%s_%lld_gbps", k->name, dn, (long long)n);
    snprintf(head, sizeof head, "%s %s %lldx%lld", k->name, dn, (long long)rows, (long long)n);
    double bytes = op_bytes(k, rows, n, es);
    cur_n = n;

    sg_tensor *dres[3] = {NULL}, *sres[3] = {NULL};
    int        nd = 0, ns = 0;
    double     dg = -1, sg = -1;
    const sg_dsl_artifact *a = find_artifact(k->op, dtype, k->any_n ? -1 : n);
    if (!k->call)
        note(head, "this build has no fused library: no DSL figure");
    else if (!a)
        fprintf(stderr, "sg_bench_dsl: %s: no artifact of %s for %s N=%lld on sm_%d; no DSL figure\n",
                head, k->op, dtype, (long long)n, capability);
    else if (set_dsl(true, head) && probe(head, k->op, k->call, a, dres, &nd))
        dg = timed_route(dfig, k->op, k->call, a, bytes);

    if (set_dsl(false, head) && probe(head, k->stock_what, k->stock, NULL, sres, &ns))
        sg = timed_route(sfig, k->stock_what, k->stock, NULL, bytes);
    set_dsl(true, head);

    print_fig(dfig, dg, "GB/s", 1);
    print_fig(sfig, sg, "GB/s", 1);
    /* the headline figure of the issue: rms_norm float32 at 16384 x 4096 */
    if (!sg_bench_smoke && strcmp(k->name, "rms_norm") == 0 && dt == SG_FLOAT32 && n == 4096 &&
        rows == 16384)
        print_fig("dsl_rms_norm_f32_gbps", dg, "GB/s", 1);
    if (dres[0] && sres[0]) compare(head, "stock", dres, nd, sres, ns);
    for (int i = 0; i < 3; i++) sg_tensor_release(dres[i]), sg_tensor_release(sres[i]);
}

static void release_inputs(void) {
    sg_tensor_release(x), sg_tensor_release(w), sg_tensor_release(b), sg_tensor_release(r);
    x = w = b = r = NULL;
}

static size_t copy_bytes;

static sg_status op_copy(void) {
    calls_made++;
    cudaError_t e = cudaMemcpyAsync(sg_tensor_data(r), sg_tensor_data(x), copy_bytes,
                                    cudaMemcpyDeviceToDevice, sg_bench_stream);
    return e == cudaSuccess ? SG_OK
                            : sg_error(SG_EDEVICE, "cudaMemcpyAsync: %s", cudaGetErrorString(e));
}

/* The device-to-device copy of 256 MiB (512 MiB moved): the ceiling the kernels are read
 * against, in the same run. */
static void bench_copy(void) {
    const char   *fig = "copy_gbps";
    const int64_t n = sg_bench_smoke ? (int64_t)1 << 20 : (int64_t)256 << 20;
    copy_bytes = (size_t)n;
    bool ok = sg_bench_op_ok(sg_tensor_empty(&n, 1, SG_UINT8, SG_CUDA(0), &x), fig, "sg_tensor_empty") &&
              sg_bench_op_ok(sg_tensor_empty(&n, 1, SG_UINT8, SG_CUDA(0), &r), fig, "sg_tensor_empty") &&
              sg_bench_cuda_ok(cudaMemsetAsync(sg_tensor_data(x), 1, copy_bytes, sg_bench_stream), fig,
                      "cudaMemsetAsync");
    if (ok) {
        double ms = sg_bench_time_gpu(fig, "cudaMemcpyAsync", op_copy);
        if (ms > 0) print_fig(fig, 2.0 * (double)n / (ms * 1e-3) * 1e-9, "GB/s", 1);
    }
    sg_tensor_release(x), sg_tensor_release(r);
    x = r = NULL;
}

/* float32 and bfloat16 rows of every N the declarations ship (1024 to 16384), rows for 256 MiB
 * of input (16384 x 4096 in float32). */
static void bench_bandwidth(void) {
    bench_copy();
    static const int64_t ns[] = {1024, 2048, 4096, 8192, 16384};
    static const sg_dtype dts[2] = {SG_FLOAT32, SG_BFLOAT16};
    for (int di = 0; di < 2 && !sg_bench_lost; di++)
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0] && !sg_bench_lost; ni++) {
            int64_t n = ns[ni], es = dts[di] == SG_FLOAT32 ? 4 : 2;
            int64_t rows = sg_bench_smoke ? 256 : ((int64_t)256 << 20) / (n * es);
            int64_t sz[2] = {rows, n};
            char    fig[64];
            snprintf(fig, sizeof fig, "inputs %s %lldx%lld", sg_dtype_name(dts[di]),
                     (long long)rows, (long long)n);
            x = sg_bench_filled(fig, sz, 2, dts[di], 1, 1.0f);
            w = x ? sg_bench_filled(fig, &n, 1, dts[di], 2, 0.5f) : NULL;
            b = w ? sg_bench_filled(fig, &n, 1, dts[di], 3, 0.5f) : NULL;
            r = b ? sg_bench_filled(fig, sz, 2, dts[di], 4, 1.0f) : NULL;
            if (r)
                for (int k = 0; k < NKERNELS && !sg_bench_lost; k++)
                    if (!kernels[k].any_n || n == 4096) bench_point(&kernels[k], dts[di], rows, n);
            release_inputs();
        }
}

/* ---- matmul ------------------------------------------------------------------------------ */

static sg_status op_mm(void) {
    sg_tensor *o[1] = {NULL};
    sg_status  st = aten_mm(x, r, &o[0]);
    settle(o, 1);
    return st;
}

/* bfloat16 products whose K or N (not both) is not a multiple of 8, where mm.yaml's Triton
 * kernels take the call (odd K: mm_triton_odd_k; odd N: mm_triton_odd_n), against the same call with the
 * DSL off (our cuBLASLt mm) and torch.mm (dsl_torch.py), in TFLOP/s. */
static void bench_matmul(void) {
    static const int64_t shapes[][3] = {
        {4096, 4096, 4097}, {4096, 4097, 4096}, {8192, 8192, 8193}, {2048, 2047, 2048}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0] && !sg_bench_lost; i++) {
        int64_t m = shapes[i][0], n = shapes[i][1], k = shapes[i][2];
        if (sg_bench_smoke) m = m / 4, n = n / 4 + (n % 8 != 0), k = k / 4 + (k % 8 != 0);
        char dfig[96], sfig[96], head[96], name[64];
        snprintf(dfig, sizeof dfig, "dsl_mm_bf16_%lldx%lldx%lld_tflops", (long long)m,
                 (long long)n, (long long)k);
        snprintf(sfig, sizeof sfig, "stock_mm_bf16_%lldx%lldx%lld_tflops", (long long)m,
                 (long long)n, (long long)k);
        snprintf(head, sizeof head, "mm bf16 %lldx%lldx%lld", (long long)m, (long long)n,
                 (long long)k);
        snprintf(name, sizeof name, "mm_triton_odd_%s__bfloat16__sm%d", n % 8 ? "n" : "k",
                 capability);
        const sg_dsl_artifact *a = NULL;
        for (size_t j = 0; j < narts; j++)
            if (strcmp(arts[j]->prefix, name) == 0) a = arts[j];
        int64_t sa[2] = {m, k}, sb[2] = {k, n};
        x = sg_bench_filled(head, sa, 2, SG_BFLOAT16, 5, 0.1f);
        r = x ? sg_bench_filled(head, sb, 2, SG_BFLOAT16, 6, 0.1f) : NULL;
        double     flop = 2.0 * (double)m * (double)n * (double)k, dt = -1, st = -1;
        sg_tensor *dres[3] = {NULL}, *sres[3] = {NULL};
        int        nd = 0, ns = 0;
        if (!r)
            ;
        else if (!a)
            fprintf(stderr, "sg_bench_dsl: %s: no artifact %s; no DSL figure\n", head, name);
        else if (set_dsl(true, head) && probe(head, "aten::mm", op_mm, a, dres, &nd))
            dt = timed_route(dfig, "aten::mm", op_mm, a, flop) * 1e-3;
        if (r && set_dsl(false, head) && probe(head, "aten::mm (stock)", op_mm, NULL, sres, &ns))
            st = timed_route(sfig, "aten::mm (stock)", op_mm, NULL, flop) * 1e-3;
        set_dsl(true, head);
        print_fig(dfig, dt, "TFLOP/s", 2);
        print_fig(sfig, st, "TFLOP/s", 2);
        if (dres[0] && sres[0]) compare(head, "stock", dres, nd, sres, ns);
        for (int j = 0; j < 3; j++) sg_tensor_release(dres[j]), sg_tensor_release(sres[j]);
        release_inputs();
    }
}

/* ---- host cost --------------------------------------------------------------------------- */

/* A bare launch of an artifact: its image loaded by this program through the driver API (the
 * entry points from the CUDA runtime, as runtime/dsl.c finds them) and cuLaunchKernel with
 * arguments marshalled once. */
typedef CUresult (*pfn_load)(CUmodule *, const void *);
typedef CUresult (*pfn_get_function)(CUfunction *, CUmodule, const char *);
typedef CUresult (*pfn_func_set)(CUfunction, CUfunction_attribute, int);
typedef CUresult (*pfn_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void **, void **);

static struct {
    pfn_launch             launch;
    CUfunction             fn;
    const sg_dsl_artifact *a;
    void                  *p[16]; /* the parameters' values (pointers; NULL hidden ones) */
    float                  eps;
    void                  *args[16];
} bare;

static bool driver_entry(const char *name, void **fn) {
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &q);
#else
    cudaError_t e = cudaGetDriverEntryPoint(name, fn, cudaEnableDefault, &q);
#endif
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !*fn) {
        (void)cudaGetLastError();
        fprintf(stderr, "sg_bench_dsl: the CUDA driver has no %s: no bare launch figure\n", name);
        return false;
    }
    return true;
}

/* rms_norm.yaml's args for artifact a of rms_norm: x, w, y, rstd, eps, then the hidden
 * parameters (NULL). False (said) where a's parameter count cannot be that. */
static bool marshal(const sg_dsl_artifact *a, sg_tensor *xx, sg_tensor *ww, sg_tensor *y,
                    sg_tensor *rstd) {
    if (a->nparams < 5 || a->nparams > 16) {
        fprintf(stderr, "sg_bench_dsl: %s has %u parameters, not rms_norm_fwd's 5 and hidden "
                        "ones: no launch figures\n", a->prefix, a->nparams);
        return false;
    }
    bare.a = a;
    memset(bare.p, 0, sizeof bare.p);
    bare.p[0] = sg_tensor_data(xx), bare.p[1] = sg_tensor_data(ww);
    bare.p[2] = sg_tensor_data(y), bare.p[3] = sg_tensor_data(rstd);
    bare.eps = (float)rms_eps;
    for (uint32_t i = 0; i < a->nparams; i++) bare.args[i] = &bare.p[i];
    bare.args[4] = &bare.eps;
    return true;
}

/* Loads artifact a's image on cuda:0 (the primary context is current) for the bare launch. */
static bool bare_load(const sg_dsl_artifact *a) {
    void *p_load = NULL, *p_get = NULL, *p_set = NULL, *p_launch = NULL;
    if (!driver_entry("cuModuleLoadData", &p_load) ||
        !driver_entry("cuModuleGetFunction", &p_get) ||
        !driver_entry("cuFuncSetAttribute", &p_set) || !driver_entry("cuLaunchKernel", &p_launch))
        return false;
    pfn_load         load;
    pfn_get_function get;
    pfn_func_set     set;
    memcpy(&load, &p_load, sizeof p_load);
    memcpy(&get, &p_get, sizeof p_get);
    memcpy(&set, &p_set, sizeof p_set);
    memcpy(&bare.launch, &p_launch, sizeof p_launch);
    /* a copy: malloc's alignment suits the loader whatever the image's is */
    void *img = malloc(a->image_size);
    if (!img) return false;
    memcpy(img, a->image, a->image_size);
    CUmodule mod = NULL;
    CUresult e = load(&mod, img);
    free(img);
    if (e == CUDA_SUCCESS) e = get(&bare.fn, mod, a->symbol);
    if (e == CUDA_SUCCESS && a->shared > 48 * 1024)
        e = set(bare.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)a->shared);
    if (e != CUDA_SUCCESS) {
        fprintf(stderr, "sg_bench_dsl: loading %s for a bare launch: CUresult %d: no bare "
                        "launch figure\n", a->prefix, (int)e);
        return false;
    }
    return true;
}

static const uint32_t one_block[3] = {1, 1, 1};

/* cuLaunchKernel of the bare launch's function with args, on one block. */
static sg_status launch_bare(void **args) {
    const sg_dsl_artifact *a = bare.a;
    CUresult e = bare.launch(bare.fn, 1, 1, 1, a->block_x, 1, 1, a->shared,
                             (CUstream)sg_bench_stream, args, NULL);
    return e == CUDA_SUCCESS ? SG_OK : sg_error(SG_EDEVICE, "cuLaunchKernel: CUresult %d", (int)e);
}

static sg_status op_bare_launch(void) {
    calls_made++;
    return launch_bare(bare.args);
}

static sg_status op_runtime_launch(void) {
    calls_made++;
    return sg_dsl_launch(bare.a, 0, one_block, bare.args, sg_bench_stream);
}

/* What a taken rms_norm call allocates and its caller releases: y (1x1024) and rstd (1x1), from
 * the caching allocator. Part of the taken call's cost that the bare launch does not pay. */
static sg_status outputs_new(sg_tensor **y, sg_tensor **rstd) {
    static const int64_t s2[2] = {1, 1024}, one[2] = {1, 1};
    sg_status st = sg_tensor_empty(s2, 2, SG_FLOAT32, SG_CUDA(0), y);
    return st ? st : sg_tensor_empty(one, 2, SG_FLOAT32, SG_CUDA(0), rstd);
}

static sg_status op_alloc_outputs(void) {
    sg_tensor *y = NULL, *rs = NULL;
    calls_made++;
    sg_status st = outputs_new(&y, &rs);
    sg_tensor_release(y), sg_tensor_release(rs);
    return st;
}

/* A bare launch writing into two outputs allocated for it and released after, as a taken call
 * does: what a launcher without the dispatcher and the override would cost. */
static sg_status op_alloc_bare_launch(void) {
    sg_tensor *y = NULL, *rs = NULL;
    calls_made++;
    sg_status st = outputs_new(&y, &rs);
    if (st == SG_OK) {
        /* the bare launch's arguments, y and rstd made to point at these outputs */
        void *py = sg_tensor_data(y), *prs = sg_tensor_data(rs), *args[16];
        memcpy(args, bare.args, sizeof args);
        args[2] = &py, args[3] = &prs;
        st = launch_bare(args);
    }
    sg_tensor_release(y), sg_tensor_release(rs);
    return st;
}

/* The calls that launch, timed with the op's overrides on: the call, and which DSL launches it
 * must make. */
typedef struct variant {
    const char *what;
    int         shape; /* 0: 1 x 1000, 1: 0 x 1000, 2: 1 x 1024 */
    sg_bench_op fn;
    int         launches; /* 0: no DSL launch; 1: the taken artifact's, once a call */
    double      ns[ROUNDS];
    bool        ok;
} variant;

/* A call the override declines, against the same call with the op's overrides switched off:
 * the two sides chunk against chunk. */
typedef struct pair {
    const char *what; /* the call with the overrides on */
    int         shape;
    bool        dsl;  /* the triton switch */
    bool        null; /* both sides switched off: the method against itself */
    double      d[ROUNDS * PAIRS]; /* per pair of chunks: on - off, ns a call */
    double      best[2];           /* the best chunk, ns a call: off, on */
    int         n;
    bool        ok;
} pair;

static sg_tensor *hx[3], *hw[3], *hy, *hrstd;
static const int64_t hn[3] = {1000, 1000, 1024};

static void set_shape(int shape) { x = hx[shape], w = hw[shape], cur_n = hn[shape]; }

static bool set_overrides(bool on, const char *what) {
    return sg_bench_op_ok(sg_op_set_overrides_enabled(aten__fused_rms_norm_op, on), what,
                          "sg_op_set_overrides_enabled");
}

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, c = *(const double *)pb;
    return (a > c) - (a < c);
}

/* The median of d[0..n) (sorted in place); its quartiles into q where not NULL. */
static double median_of(double *d, int n, double *q) {
    qsort(d, (size_t)n, sizeof d[0], cmp_double);
    if (q) q[0] = d[n / 4], q[1] = d[(3 * n) / 4];
    return n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
}

/* The median ns of CHUNK calls of fn, each timed on its own; the synchronize after them is
 * not timed. -1 on failure. Rationale: a launch now and then waits on the driver for many
 * times its usual time, whatever ran before it; the median call leaves those out. */
static double time_chunk(sg_bench_op fn, const char *what) {
    double t[CHUNK + 1], d[CHUNK];
    t[0] = sg_bench_now_s();
    for (int i = 0; i < CHUNK; i++) {
        if (!sg_bench_op_ok(fn(), what, "the call")) return -1;
        t[i + 1] = sg_bench_now_s();
    }
    if (!sg_bench_cuda_ok(cudaStreamSynchronize(sg_bench_stream), what, "synchronize")) return -1;
    for (int i = 0; i < CHUNK; i++) d[i] = (t[i + 1] - t[i]) * 1e9;
    return median_of(d, CHUNK, NULL);
}

/* Whether the DSL launches moved from `before` to `want`; said where not. */
static bool launches_ok(const char *what, uint64_t calls, uint64_t before, uint64_t after,
                        uint64_t want) {
    if (after == want) return true;
    fprintf(stderr, "sg_bench_dsl: %s: %llu calls moved the DSL launches %llu -> %llu, not to "
                    "%llu; figure left out\n",
            what, (unsigned long long)calls, (unsigned long long)before,
            (unsigned long long)after, (unsigned long long)want);
    return false;
}

/* ns a call of v's calls, CHUNK at a time: the median of the chunks' medians. */
static double host_round(variant *v, int calls) {
    const sg_dsl_artifact *a = bare.a;
    set_shape(v->shape);
    uint64_t before = v->launches ? sg_dsl_launch_count(a) : all_launches();
    calls_made = 0;
    double t[ROUND_CALLS / CHUNK];
    int    n = 0;
    for (int done = 0; done < calls; done += CHUNK)
        if ((t[n++] = time_chunk(v->fn, v->what)) < 0) return -1;
    uint64_t after = v->launches ? sg_dsl_launch_count(a) : all_launches();
    uint64_t want = v->launches ? before + calls_made : before;
    if (!launches_ok(v->what, calls_made, before, after, want)) return -1;
    return median_of(t, n, NULL);
}

/* npairs pairs of chunks of p's call, the side going first turning every pair; records the
 * differences where `keep`. No DSL kernel may launch: the override declines. */
static bool pair_round(pair *p, int npairs, int turn, bool keep) {
    if (!set_dsl(p->dsl, p->what)) return false;
    set_shape(p->shape);
    uint64_t before = all_launches();
    calls_made = 0;
    for (int i = 0; i < npairs; i++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            int on = (i + turn + k) % 2;
            if (!set_overrides(on && !p->null, p->what)) return false;
            if ((t[on] = time_chunk(op_rms_norm, p->what)) < 0) return false;
        }
        if (!keep) continue;
        p->d[p->n++] = t[1] - t[0];
        for (int k = 0; k < 2; k++)
            if (p->n == 1 || t[k] < p->best[k]) p->best[k] = t[k];
    }
    bool ok = launches_ok(p->what, calls_made, before, all_launches(), before);
    return set_overrides(true, p->what) && ok;
}

static double min_of(const variant *v, int rounds) {
    double m = v->ns[0];
    for (int i = 1; i < rounds; i++) m = fmin(m, v->ns[i]);
    return m;
}

/* The median over rounds of v - base, ns; said on stderr with both minima and the paired
 * differences' quartiles (their spread within a run, to set beside the spread between runs). */
static double paired_median(const variant *v, const variant *base, int rounds) {
    double d[ROUNDS], q[2];
    for (int i = 0; i < rounds; i++) d[i] = v->ns[i] - base->ns[i];
    double med = median_of(d, rounds, q);
    fprintf(stderr,
            "sg_bench_dsl: %s: %.1f ns against %s: %.1f ns (the best of %d rounds' median "
            "calls, %d calls a round); "
            "median paired difference %.1f ns (quartiles %.1f, %.1f), difference of the bests "
            "%.1f ns\n",
            v->what, min_of(v, rounds), base->what, min_of(base, rounds), rounds, ROUND_CALLS,
            med, q[0], q[1], min_of(v, rounds) - min_of(base, rounds));
    return med;
}

/* The median of p's differences, ns; said on stderr as paired_median says its own. */
static double pair_median(pair *p) {
    double q[2], med = median_of(p->d, p->n, q);
    fprintf(stderr,
            "sg_bench_dsl: %s: %.1f ns against the op's overrides switched off: %.1f ns (the "
            "best of %d chunks' median calls, %d calls a chunk); median paired difference "
            "%.1f ns (quartiles %.1f, %.1f), difference of the bests %.1f ns\n",
            p->what, p->best[1], p->best[0], p->n, CHUNK, med, q[0], q[1],
            p->best[1] - p->best[0]);
    return med;
}

/* The tensors of the three shapes and the taken call's outputs; false where one is missing
 * (said), but the 0x1000 shape alone may be (*ok_empty false). */
static bool host_tensors(const char *fig, const sg_dsl_artifact *a, bool *ok_empty) {
    const int64_t s0[2] = {1, 1000}, s1[2] = {0, 1000}, s2[2] = {1, 1024}, n1000 = 1000,
                  n1024 = 1024, one[2] = {1, 1};
    hx[0] = sg_bench_filled(fig, s0, 2, SG_FLOAT32, 5, 1.0f);
    /* nothing to fill; its figures only are left out where it cannot be made */
    if (sg_tensor_empty(s1, 2, SG_FLOAT32, SG_CUDA(0), &hx[1]) != SG_OK) {
        fprintf(stderr, "sg_bench_dsl: host: an empty 0x1000 tensor: %s; no figures on it\n",
                sg_last_error());
        hx[1] = NULL;
    }
    hx[2] = sg_bench_filled(fig, s2, 2, SG_FLOAT32, 5, 1.0f);
    hw[0] = sg_bench_filled(fig, &n1000, 1, SG_FLOAT32, 6, 0.5f);
    hw[1] = sg_bench_filled(fig, &n1000, 1, SG_FLOAT32, 6, 0.5f);
    hw[2] = sg_bench_filled(fig, &n1024, 1, SG_FLOAT32, 6, 0.5f);
    *ok_empty = hx[1] && hw[1];
    return hx[0] && hx[2] && hw[0] && hw[2] &&
           sg_bench_op_ok(sg_tensor_empty(s2, 2, SG_FLOAT32, SG_CUDA(0), &hy), fig,
                          "sg_tensor_empty") &&
           sg_bench_op_ok(sg_tensor_empty(one, 2, SG_FLOAT32, SG_CUDA(0), &hrstd), fig,
                          "sg_tensor_empty") &&
           marshal(a, hx[2], hw[2], hy, hrstd);
}

static void bench_host(void) {
    const char *fig = "host";
    const sg_dsl_artifact *a = find_artifact("aten::_fused_rms_norm", "float32", 1024);
    if (!a) {
        fprintf(stderr, "sg_bench_dsl: host: no artifact of aten::_fused_rms_norm for float32 "
                        "N=1024 on sm_%d: no host figures\n", capability);
        return;
    }
    bool ok_empty, ok = host_tensors(fig, a, &ok_empty);
    /* the bare launch loads its own module; the taken call's artifact loaded at preload or
     * loads on its first call (warm-up) */
    bool have_bare = ok && bare_load(a);

    pair p[] = {
        {"declined (N not in the grid), 1x1000", 0, true, false, {0}, {0}, 0, ok},
        {"declined (N not in the grid), 0x1000", 1, true, false, {0}, {0}, 0, ok && ok_empty},
        {"DSL switched off, 1x1024", 2, false, false, {0}, {0}, 0, ok},
        {"the overrides switched off on both sides, 1x1000", 0, true, true, {0}, {0}, 0, ok},
    };
    enum { NP = sizeof p / sizeof p[0] };
    variant v[] = {
        {"taken, 1x1024", 2, op_rms_norm, 1, {0}, ok},
        /* the bare launch does not pass the runtime's counter: no DSL launch counted */
        {"bare cuLaunchKernel, 1x1024", 2, op_bare_launch, 0, {0}, have_bare},
        {"sg_dsl_launch, 1x1024", 2, op_runtime_launch, 1, {0}, ok},
        {"the taken call's two outputs allocated and released", 2, op_alloc_outputs, 0, {0}, ok},
        {"bare cuLaunchKernel into two outputs allocated and released", 2, op_alloc_bare_launch,
         0, {0}, have_bare},
    };
    enum { NV = sizeof v / sizeof v[0] };

    /* the taken call and the bare launch give the same result */
    if (ok && have_bare && set_dsl(true, fig)) {
        sg_tensor *t[3] = {NULL};
        int        nt = 0;
        set_shape(2);
        if (probe(v[0].what, "aten::_fused_rms_norm", op_rms_norm, a, t, &nt) &&
            sg_bench_op_ok(op_bare_launch(), v[1].what, "cuLaunchKernel") &&
            sg_bench_cuda_ok(cudaStreamSynchronize(sg_bench_stream), v[1].what, "synchronize"))
            fprintf(stderr, "sg_bench_dsl: host: max |taken - bare launch|: y %.3g, rstd %.3g\n",
                    max_abs_diff(fig, t[0], hy), max_abs_diff(fig, t[1], hrstd));
        for (int i = 0; i < 3; i++) sg_tensor_release(t[i]);
    }
    /* warm-up: loads, first allocations, each op table built both ways */
    for (int i = 0; i < NP; i++)
        if (p[i].ok && !sg_bench_lost && !pair_round(&p[i], 2, 0, false)) p[i].ok = false;
    for (int i = 0; i < NV; i++)
        if (v[i].ok && !sg_bench_lost && (!set_dsl(true, fig) || host_round(&v[i], CHUNK) < 0))
            v[i].ok = false;
    /* Rationale: a call's launch time drifts by more than the override costs, so a declined
     * call is set beside the same call with the op's overrides switched off (its table rebuilt
     * without them, as an op with none has), one chunk against the next, the side going first
     * turning every pair. The launch variants then run in turn, their order turning every
     * round. */
    int rounds = sg_bench_smoke ? 1 : ROUNDS, npairs = sg_bench_smoke ? 1 : PAIRS;
    for (int rd = 0; rd < rounds && !sg_bench_lost; rd++) {
        for (int k = 0; k < NP; k++) {
            pair *pp = &p[(k + rd) % NP];
            if (pp->ok && !pair_round(pp, npairs, rd, true)) pp->ok = false;
        }
        for (int k = 0; k < NV; k++) {
            variant *vv = &v[(k + rd) % NV];
            if (!vv->ok) continue;
            double t = set_dsl(true, fig) ? host_round(vv, sg_bench_smoke ? CHUNK : ROUND_CALLS)
                                          : -1;
            if (t < 0) vv->ok = false;
            vv->ns[rd] = t;
        }
    }
    set_overrides(true, fig);
    set_dsl(true, fig);

    if (p[0].ok) print_diff("dsl_declined_extra_ns", pair_median(&p[0]), "ns", 1);
    if (p[1].ok) print_diff("dsl_declined_empty_extra_ns", pair_median(&p[1]), "ns", 1);
    if (p[2].ok) print_diff("dsl_switched_off_extra_ns", pair_median(&p[2]), "ns", 1);
    if (p[3].ok) pair_median(&p[3]); /* on stderr: what the method gives where nothing differs */
    if (v[0].ok && v[1].ok)
        print_diff("dsl_taken_extra_us", paired_median(&v[0], &v[1], rounds) * 1e-3, "us", 3);
    if (v[2].ok && v[1].ok)
        print_diff("dsl_runtime_launch_extra_us", paired_median(&v[2], &v[1], rounds) * 1e-3, "us",
                   3);
    if (v[4].ok && v[1].ok)
        print_diff("dsl_alloc_launch_extra_us", paired_median(&v[4], &v[1], rounds) * 1e-3,
                   "us", 3);
    if (v[0].ok && v[4].ok)
        print_diff("dsl_taken_vs_alloc_launch_extra_us",
                   paired_median(&v[0], &v[4], rounds) * 1e-3, "us", 3);
    if (v[3].ok) print_fig("dsl_outputs_alloc_us", min_of(&v[3], rounds) * 1e-3, "us", 3);
    if (v[0].ok) print_fig("dsl_taken_us", min_of(&v[0], rounds) * 1e-3, "us", 3);
    if (v[1].ok) print_fig("dsl_bare_launch_us", min_of(&v[1], rounds) * 1e-3, "us", 3);
    if (v[2].ok) print_fig("dsl_runtime_launch_us", min_of(&v[2], rounds) * 1e-3, "us", 3);
    if (p[2].ok) print_fig("stock_rms_norm_1x1024_us", p[2].best[0] * 1e-3, "us", 3);

    for (int i = 0; i < 3; i++) sg_tensor_release(hx[i]), hx[i] = NULL;
    sg_tensor_release(hw[0]), sg_tensor_release(hw[1]), sg_tensor_release(hw[2]);
    sg_tensor_release(hy), sg_tensor_release(hrstd);
    hw[0] = hw[1] = hw[2] = hy = hrstd = NULL;
    x = w = NULL;
}

/* ---- main -------------------------------------------------------------------------------- */

static const sg_bench_group groups[] = {
    {"bandwidth", bench_bandwidth}, {"matmul", bench_matmul}, {"host", bench_host}};
enum { NGROUPS = sizeof groups / sizeof groups[0] };

int main(int argc, char **argv) {
    sg_bench_begin("sg_bench_dsl", say_skipped);
    bool want[NGROUPS];
    int  rc = sg_bench_args(argc, argv, groups, NGROUPS, want);
    if (rc != 0) return rc;
    if (!sg_bench_gpu_usable()) return 77;
#ifdef SG_BENCH_HAVE_FUSED
    sg_status st = sg_fused_init();
#else
    sg_status st = sg_aten_cuda_init();
#endif
    if (st != SG_OK) {
        fprintf(stderr, "sg_bench_dsl: init: %s: %s\n", sg_status_name(st), sg_last_error());
        return 1;
    }
    narts = sg_dsl_list(arts, MAX_ARTS);
    if (narts == 0) {
        fprintf(stderr, "sg_bench_dsl: this build has no DSL kernels (a stock build: cmake said "
                        "why; bash cmake/do deps BUILD installs the pinned Triton): nothing to "
                        "measure\n");
        return 77;
    }
    if (narts > MAX_ARTS) narts = MAX_ARTS;
    if (!sg_bench_use_gpu0()) return 1;
    capability = sg_dsl_capability(0);
    struct cudaDeviceProp prop;
    if (!sg_bench_cuda_ok(cudaGetDeviceProperties(&prop, 0), "setup", "cudaGetDeviceProperties") ||
        !sg_bench_cuda_ok(cudaFree(NULL), "setup", "making the primary context current") ||
        !sg_bench_events_create())
        return 1;
    int rt = 0, drv = 0;
    (void)cudaRuntimeGetVersion(&rt);
    (void)cudaDriverGetVersion(&drv);
    size_t for_gpu = 0;
    for (size_t i = 0; i < narts; i++)
        if (arts[i]->cc_major * 10 + arts[i]->cc_minor == capability) for_gpu++;
    fprintf(stderr,
            "sg_bench_dsl: %s (sm_%d, %d SMs), CUDA runtime %d, driver %d; %zu DSL artifacts, "
            "%zu for this GPU%s\n",
            prop.name, capability, prop.multiProcessorCount, rt, drv, narts, for_gpu,
            sg_bench_smoke ? "; smoke run" : "");
    if (for_gpu == 0) {
        fprintf(stderr, "sg_bench_dsl: no DSL artifact is built for sm_%d (declarations list "
                        "their archs): nothing to measure\n", capability);
        return 77;
    }
    if ((st = sg_dsl_preload(0)) != SG_OK)
        fprintf(stderr, "sg_bench_dsl: sg_dsl_preload(0): %s (those decline: their figures are "
                        "left out)\n", sg_last_error());

    sg_bench_run(groups, NGROUPS, want);
    return sg_bench_finish();
}
