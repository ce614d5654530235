/* gemm_ops.c: the matrix products besides mm that decision tables serve (docs/gemm.md), as a
 * model calls them: linear without and with a bias (nt: the weight is W^T of a row-major W;
 * mm's and addmm's tables) over the Llama shapes of bench/gemm_suite.txt, and bmm over
 * bench/gemm_suite_bmm.txt with B row-major (nn: attention's P.V) and transposed (nt: Q.K^T).
 * Each shape: ours (aten::linear / aten::bmm as the library ships them, tables included) and
 * the library's cuBLASLt heuristic (sg_cuda_{mm,addmm,bmm}_lt without a configuration: what
 * runs without a table), and with --torch PyTorch's F.linear or torch.bmm, timed in turn with
 * them through the peer (gemm_util.h: bench/gemm_torch.py --serve run by the shell command CMD),
 * its line per product ("op batch M N K ms") into --torch-records; bench/run gemm joins them
 * (bench/gemm_ops_join.awk).
 *
 *   sg_bench_gemm_ops [--smoke] --suite FILE --bmm-suite FILE --records FILE
 *                     [--torch CMD --torch-records FILE]
 *
 * --records: one line per product, "op batch M N K ours_ms heuristic_ms" (op linear,
 * linear_bias, bmm_nn, bmm_nt). Timing: gemm_util.h. Inputs: bfloat16 in [-0.5, 0.5).
 * Exit status 77 where no GPU is usable. */
#define _POSIX_C_SOURCE 200809L
#include "aten.h"
#include "gemm_util.h"
#include "sg_aten_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SHAPES = 512 };

typedef enum { LINEAR, LINEAR_BIAS, BMM_NN, BMM_NT, NOPS } op_kind;
static const char *const op_names[NOPS] = {"linear", "linear_bias", "bmm_nn", "bmm_nt"};

typedef struct operands {
    op_kind    op;
    sg_tensor *x, *w, *wt, *bias; /* linear: x [M,K], w [N,K], wt = w^T; bmm: x, wt */
} operands;

static sg_status call_ours(void *ctx) {
    const operands *o = ctx;
    sg_tensor      *r = NULL;
    sg_status st = o->op >= BMM_NN ? aten_bmm(o->x, o->wt, &r)
                                   : aten_linear(o->x, o->w, o->op == LINEAR_BIAS ? o->bias : NULL,
                                                 &r);
    sg_tensor_release(r);
    return st;
}

static sg_status call_heuristic(void *ctx) {
    const operands       *o = ctx;
    const sg_cuda_gemm_op op = o->op >= BMM_NN        ? SG_CUDA_GEMM_BMM
                               : o->op == LINEAR_BIAS ? SG_CUDA_GEMM_ADDMM
                                                      : SG_CUDA_GEMM_MM;
    sg_tensor *r = NULL;
    sg_status  st = sg_cuda_gemm(op, NULL, false, o->bias, o->x, o->wt, sg_scalar_int(1),
                                 sg_scalar_int(1), &r);
    sg_tensor_release(r);
    return st;
}

/* One product: its two times into rec, PyTorch's into trec where there is a peer. */
static void run(FILE *rec, FILE *trec, sg_gemm_peer *p, op_kind op, const sg_gemm_shape *s) {
    char what[96];
    snprintf(what, sizeof what, "%s %lldx%lldx%lldx%lld", op_names[op], (long long)s->batch,
             (long long)s->m, (long long)s->n, (long long)s->k);
    bool     bmm = op >= BMM_NN, t = op != BMM_NN;
    int32_t  nd = bmm ? 3 : 2, o0 = bmm ? 1 : 0;
    int64_t  sx[3] = {s->batch}, sw[3] = {s->batch};
    sx[o0] = s->m, sx[o0 + 1] = s->k;
    sw[o0] = t ? s->n : s->k, sw[o0 + 1] = t ? s->k : s->n; /* B's storage: [N,K] where t */
    operands o = {op, NULL, NULL, NULL, NULL};
    o.x = sg_bench_filled(what, sx, nd, SG_BFLOAT16, 21, 0.25f);
    o.w = o.x ? sg_bench_filled(what, sw, nd, SG_BFLOAT16, 22, 0.25f) : NULL;
    if (o.w && !t) o.wt = sg_tensor_retain(o.w);
    else if (o.w && !sg_bench_op_ok(sg_tensor_transpose(o.w, nd - 2, nd - 1, &o.wt), what,
                                    "transpose"))
        o.wt = NULL;
    if (o.wt && op == LINEAR_BIAS) o.bias = sg_bench_filled(what, &s->n, 1, SG_BFLOAT16, 23, 0.25f);
    if (o.wt && (op != LINEAR_BIAS || o.bias)) {
        sg_gemm_call fn[2] = {call_ours, call_heuristic};
        void        *ctx[2] = {&o, &o};
        double       ms[2], torch = -1;
        if (sg_gemm_in_turn_ms(what, 2, fn, ctx, p, op_names[op], s, ms, &torch))
            fprintf(rec, "%s %lld %lld %lld %lld %.5f %.5f\n", op_names[op], (long long)s->batch,
                    (long long)s->m, (long long)s->n, (long long)s->k, ms[0], ms[1]);
        if (trec && torch > 0)
            fprintf(trec, "%s %lld %lld %lld %lld %.5f\n", op_names[op], (long long)s->batch,
                    (long long)s->m, (long long)s->n, (long long)s->k, torch);
    }
    sg_tensor_release(o.x), sg_tensor_release(o.w), sg_tensor_release(o.wt);
    sg_tensor_release(o.bias);
}

static void say_skipped(sg_status st, const char *fig, const char *op) {
    fprintf(stderr, "sg_bench_gemm_ops: %s: %s failed (%s: %s)\n", fig, op, sg_status_name(st),
            sg_last_error());
}

int main(int argc, char **argv) {
    sg_bench_begin("sg_bench_gemm_ops", say_skipped);
    const char *suite = NULL, *bsuite = NULL, *records = NULL, *torch = NULL, *trecords = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--smoke")) sg_bench_smoke = true;
        else if (!strcmp(argv[i], "--suite") && i + 1 < argc) suite = argv[++i];
        else if (!strcmp(argv[i], "--bmm-suite") && i + 1 < argc) bsuite = argv[++i];
        else if (!strcmp(argv[i], "--records") && i + 1 < argc) records = argv[++i];
        else if (!strcmp(argv[i], "--torch") && i + 1 < argc) torch = argv[++i];
        else if (!strcmp(argv[i], "--torch-records") && i + 1 < argc) trecords = argv[++i];
        else suite = NULL, i = argc;
    }
    if (!suite || !bsuite || !records || !torch != !trecords) {
        fprintf(stderr, "usage: sg_bench_gemm_ops [--smoke] --suite FILE --bmm-suite FILE "
                        "--records FILE [--torch CMD --torch-records FILE]\n");
        return 2;
    }
    static sg_gemm_shape shapes[MAX_SHAPES], bshapes[MAX_SHAPES];
    int n = sg_gemm_read_suite(suite, shapes, MAX_SHAPES);
    int nb = n < 0 ? -1 : sg_gemm_read_suite(bsuite, bshapes, MAX_SHAPES);
    if (n < 0 || nb < 0) return 2;
    if (sg_bench_smoke) n = n > 2 ? 2 : n, nb = nb > 2 ? 2 : nb;
    if (!sg_bench_gpu_usable()) return 77;
    if (sg_aten_cuda_init() != SG_OK) {
        fprintf(stderr, "sg_bench_gemm_ops: sg_aten_cuda_init: %s\n", sg_last_error());
        return 1;
    }
    if (!sg_bench_use_gpu0() || !sg_gemm_timing_begin()) return 1;
    FILE *rec = fopen(records, "w"), *trec = trecords ? fopen(trecords, "w") : NULL;
    if (!rec || (trecords && !trec)) {
        fprintf(stderr, "sg_bench_gemm_ops: cannot write %s\n", !rec ? records : trecords);
        return 1;
    }
    sg_gemm_peer pr, *p = NULL;
    if (torch && !sg_gemm_peer_start(&pr, torch)) return 1;
    if (torch) p = &pr;
    for (int op = LINEAR; op <= LINEAR_BIAS; op++)
        for (int i = 0; i < n && !sg_bench_lost; i++)
            if (shapes[i].batch == 1) run(rec, trec, p, (op_kind)op, &shapes[i]);
    for (int op = BMM_NN; op <= BMM_NT; op++)
        for (int i = 0; i < nb && !sg_bench_lost; i++) run(rec, trec, p, (op_kind)op, &bshapes[i]);
    fclose(rec);
    if (trec) fclose(trec);
    if (p && !sg_gemm_peer_end(p)) {
        fprintf(stderr, "sg_bench_gemm_ops: the PyTorch peer failed\n");
        sg_bench_failures++;
    }
    sg_gemm_timing_end();
    return sg_bench_finish();
}
