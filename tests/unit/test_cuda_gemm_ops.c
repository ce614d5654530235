/* test_cuda_gemm_ops.c: the CUDA matrix products a decision table can serve besides mm (docs/
 * gemm.md): addmm with linear's bias row (cuBLASLt's bias epilogue) and without it, linear, bmm
 * with a transposed operand, and the tuners' entries: sg_cuda_gemm_lt_candidates names the
 * problem the library runs (its first configuration gives bit for bit the heuristic's result),
 * every candidate through sg_cuda_{mm,addmm,bmm}_lt is right, and so is cuBLAS's own choice
 * (sg_cuda_{mm,addmm,bmm}_cublas). Which path ran is not observable here: the results are. In bfloat16, float16 and
 * float32 (full and TF32), against float64 products of the same inputs: the largest
 * |got - ref| over the largest |ref| within a few units of the dtype's last place.
 * Skips (77) where no GPU is usable. */
#define _POSIX_C_SOURCE 200809L
#include "aten.h"
#include "check.h"
#include "sg_aten_cuda.h"
#include "sg_iter.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static sg_dtype dt;   /* the dtype under test */
static bool     tf32; /* float32 through TF32 */

static double tolerance(void) {
    return dt == SG_BFLOAT16 ? 4.0 / 256 : dt == SG_FLOAT16 || tf32 ? 4.0 / 2048 : 1e-5;
}

static sg_tensor *randn(const int64_t *sizes, int32_t nd) {
    sg_dtype   f = SG_FLOAT32;
    sg_device  dev = SG_CUDA(0);
    sg_tensor *r = NULL, *out = NULL;
    if (aten_randn((sg_int_list){sizes, nd}, &f, NULL, &dev, NULL, &r) == SG_OK)
        (void)sg_cast(r, dt, &out);
    sg_tensor_release(r);
    return out;
}

static sg_tensor *f64(sg_tensor *t) {
    sg_tensor *r = NULL;
    return t && sg_cast(t, SG_FLOAT64, &r) == SG_OK ? r : NULL;
}

static double max_abs(sg_tensor *t) {
    sg_tensor *a = NULL, *m = NULL, *d = NULL, *h = NULL;
    double     v = -1;
    if (aten_abs(t, &a) == SG_OK && aten_max(a, &m) == SG_OK && sg_cast(m, SG_FLOAT64, &d) == 0 &&
        sg_tensor_to(d, SG_CPU, &h) == SG_OK)
        v = *(const double *)sg_tensor_data(h);
    sg_tensor_release(a), sg_tensor_release(m), sg_tensor_release(d), sg_tensor_release(h);
    return v;
}

/* max |got - ref| / max |ref|; INFINITY where got is missing or misshapen. */
static double rel_error(sg_tensor *got, sg_tensor *ref) {
    if (!got || !ref || got->ndim != ref->ndim ||
        memcmp(got->sizes, ref->sizes, (size_t)ref->ndim * sizeof *ref->sizes) != 0)
        return INFINITY;
    sg_tensor *g = f64(got), *d = NULL;
    double     e = INFINITY, r = max_abs(ref);
    if (g && aten_sub_Tensor(g, ref, sg_scalar_int(1), &d) == SG_OK && r > 0) e = max_abs(d) / r;
    sg_tensor_release(g), sg_tensor_release(d);
    return e;
}

static void expect_close(const char *what, sg_tensor *got, sg_tensor *ref) {
    double e = rel_error(got, ref);
    if (!(e <= tolerance()))
        fprintf(stderr, "test_cuda_gemm_ops: %s %s%s: error %.3g (tolerance %.3g)\n", what,
                sg_dtype_name(dt), tf32 ? " tf32" : "", e, tolerance());
    CHECK(e <= tolerance());
}

/* Whether x and y are the same bits (as float64 values: same shape, no difference). */
static bool same(sg_tensor *x, sg_tensor *y) {
    sg_tensor *a = f64(x), *b = f64(y), *d = NULL;
    bool ok = a && b && aten_sub_Tensor(a, b, sg_scalar_int(1), &d) == SG_OK && max_abs(d) == 0;
    sg_tensor_release(a), sg_tensor_release(b), sg_tensor_release(d);
    return ok;
}

/* addmm(bias, x, w^T) as linear runs it, with the bias row 16-byte aligned (the epilogue) or
 * not (copied into the result), beta 1 or 2, alpha 1 or 0.5, against float64. */
static void check_addmm(int64_t m, int64_t n, int64_t k) {
    int64_t    sx[2] = {m, k}, sw[2] = {n, k}, sb[1] = {n + 1};
    sg_tensor *x = randn(sx, 2), *w = randn(sw, 2), *bb = randn(sb, 1);
    sg_tensor *wt = NULL, *bias = NULL, *odd = NULL;
    CHECK(x && w && bb && sg_tensor_transpose(w, 0, 1, &wt) == SG_OK);
    CHECK(sg_tensor_slice(bb, 0, 0, n, 1, &bias) == SG_OK);
    CHECK(sg_tensor_slice(bb, 0, 1, n + 1, 1, &odd) == SG_OK); /* 2 or 4 bytes off */
    sg_tensor *xd = f64(x), *wtd = f64(wt), *mm = NULL;
    CHECK(aten_mm(xd, wtd, &mm) == SG_OK);
    for (int beta = 1; beta <= 2; beta++)
        for (int half = 0; half < 2; half++)
            for (int aligned = 0; aligned < 2; aligned++) {
                sg_tensor *b = aligned ? bias : odd, *bd = f64(b), *bb2 = NULL, *ref = NULL;
                sg_tensor *got = NULL;
                sg_scalar  alpha = half ? sg_scalar_float(0.5) : sg_scalar_int(1);
                /* beta * bias + alpha * x.w^T */
                CHECK(aten_add_Tensor(bd, bd, sg_scalar_int(beta - 1), &bb2) == SG_OK);
                CHECK(aten_add_Tensor(bb2, mm, alpha, &ref) == SG_OK);
                CHECK(aten_addmm(b, x, wt, sg_scalar_int(beta), alpha, &got) == SG_OK);
                expect_close("addmm", got, ref);
                sg_tensor_release(got);
                got = NULL;
                CHECK(sg_cuda_addmm_lt(NULL, 0, b, x, wt, sg_scalar_int(beta), alpha, &got) == 0);
                expect_close("sg_cuda_addmm_lt", got, ref);
                sg_tensor_release(got), sg_tensor_release(ref), sg_tensor_release(bd);
                sg_tensor_release(bb2);
            }
    /* linear over a 3-D input folds it to addmm */
    sg_tensor *x3 = NULL, *got = NULL, *ref = NULL, *bd = f64(bias);
    int64_t    s3[3] = {1, m, k};
    CHECK(sg_tensor_view(x, s3, 3, &x3) == SG_OK);
    CHECK(aten_linear(x3, w, bias, &got) == SG_OK);
    CHECK(aten_add_Tensor(mm, bd, sg_scalar_int(1), &ref) == SG_OK);
    sg_tensor *g2 = NULL;
    int64_t    s2[2] = {m, n};
    CHECK(got && got->ndim == 3 && sg_tensor_view(got, s2, 2, &g2) == SG_OK);
    expect_close("linear", g2, ref);
    sg_tensor_release(g2), sg_tensor_release(got), sg_tensor_release(ref), sg_tensor_release(bd);
    sg_tensor_release(x3), sg_tensor_release(x), sg_tensor_release(w), sg_tensor_release(bb);
    sg_tensor_release(wt), sg_tensor_release(bias), sg_tensor_release(odd);
    sg_tensor_release(xd), sg_tensor_release(wtd), sg_tensor_release(mm);
}

/* addmm_ whose self is one row, the result itself: no epilogue reads what it writes. */
static void check_addmm_inplace(void) {
    int64_t    sr[2] = {1, 96}, sx[2] = {1, 64}, sw[2] = {64, 96};
    sg_tensor *r = randn(sr, 2), *x = randn(sx, 2), *w = randn(sw, 2), *ref = NULL, *mm = NULL;
    sg_tensor *rd = f64(r), *xd = f64(x), *wd = f64(w), *same_r = NULL;
    CHECK(aten_mm(xd, wd, &mm) == SG_OK && aten_add_Tensor(mm, rd, sg_scalar_int(1), &ref) == 0);
    CHECK(aten_addmm_(r, x, w, sg_scalar_int(1), sg_scalar_int(1), &same_r) == SG_OK);
    CHECK(same_r == r);
    expect_close("addmm_ (self one row)", r, ref);
    sg_tensor_release(same_r), sg_tensor_release(r), sg_tensor_release(x), sg_tensor_release(w);
    sg_tensor_release(ref), sg_tensor_release(mm), sg_tensor_release(rd), sg_tensor_release(xd);
    sg_tensor_release(wd);
}

/* Every candidate of op's problem is right, and the first is the heuristic's own. */
static void check_candidates(sg_cuda_gemm_op op, sg_tensor *self, sg_tensor *a, sg_tensor *b,
                             sg_tensor *ref, const char *what) {
    sg_gemm_lt_config cfg[8];
    int32_t           got = -1;
    CHECK(sg_cuda_gemm_lt_candidates(op, self, a, b, sg_scalar_int(1), sg_scalar_int(1), 8, cfg,
                                     &got) == SG_OK);
    CHECK(got >= 1 && got <= 8);
    sg_tensor *heur = NULL;
    CHECK(sg_cuda_gemm(op, NULL, false, self, a, b, sg_scalar_int(1), sg_scalar_int(1), &heur) ==
          SG_OK);
    for (int32_t i = 0; i < got; i++) {
        sg_tensor *r = NULL;
        CHECK(sg_cuda_gemm(op, &cfg[i], false, self, a, b, sg_scalar_int(1), sg_scalar_int(1),
                           &r) == SG_OK);
        expect_close(what, r, ref);
        if (i == 0) CHECK(same(r, heur));
        sg_tensor_release(r);
    }
    sg_tensor_release(heur);
}

static void check_tuner_entries(void) {
    /* mm and addmm with B transposed (linear's weight), bmm with B transposed (attention's K) */
    int64_t    sx[2] = {40, 256}, sw[2] = {192, 256}, sbias[1] = {192};
    sg_tensor *x = randn(sx, 2), *w = randn(sw, 2), *bias = randn(sbias, 1), *wt = NULL;
    CHECK(x && w && bias && sg_tensor_transpose(w, 0, 1, &wt) == SG_OK);
    sg_tensor *xd = f64(x), *wtd = f64(wt), *bd = f64(bias), *mm = NULL, *addmm = NULL;
    CHECK(aten_mm(xd, wtd, &mm) == SG_OK && aten_add_Tensor(mm, bd, sg_scalar_int(1), &addmm) == 0);
    check_candidates(SG_CUDA_GEMM_MM, NULL, x, wt, mm, "mm candidate");
    check_candidates(SG_CUDA_GEMM_ADDMM, bias, x, wt, addmm, "addmm candidate");
    int64_t    sq[3] = {6, 80, 128}, sk[3] = {6, 96, 128};
    sg_tensor *q = randn(sq, 3), *kk = randn(sk, 3), *kt = NULL, *ref = NULL;
    CHECK(q && kk && sg_tensor_transpose(kk, 1, 2, &kt) == SG_OK);
    sg_tensor *qd = f64(q), *ktd = f64(kt);
    CHECK(aten_bmm(qd, ktd, &ref) == SG_OK);
    check_candidates(SG_CUDA_GEMM_BMM, NULL, q, kt, ref, "bmm candidate");
    /* cuBLAS's own choice, for each op */
    sg_tensor *r1 = NULL, *r2 = NULL, *r3 = NULL;
    CHECK(sg_cuda_mm_cublas(0, x, wt, &r1) == SG_OK);
    expect_close("sg_cuda_mm_cublas", r1, mm);
    CHECK(sg_cuda_addmm_cublas(0, bias, x, wt, sg_scalar_int(1), sg_scalar_int(1), &r2) == 0);
    expect_close("sg_cuda_addmm_cublas", r2, addmm);
    CHECK(sg_cuda_bmm_cublas(0, q, kt, &r3) == SG_OK);
    expect_close("sg_cuda_bmm_cublas", r3, ref);
    sg_tensor_release(r1), sg_tensor_release(r2), sg_tensor_release(r3);
    /* misuse: no place for the count, an unknown op, bmm of matrices */
    sg_gemm_lt_config cfg[1];
    int32_t           got = 5;
    CHECK(sg_cuda_gemm_lt_candidates(SG_CUDA_GEMM_MM, NULL, x, wt, sg_scalar_int(1),
                                     sg_scalar_int(1), 1, cfg, NULL) == SG_EINVAL);
    CHECK(sg_cuda_gemm_lt_candidates((sg_cuda_gemm_op)7, NULL, x, wt, sg_scalar_int(1),
                                     sg_scalar_int(1), 1, cfg, &got) == SG_EINVAL && got == 0);
    CHECK(sg_cuda_gemm_lt_candidates(SG_CUDA_GEMM_BMM, NULL, x, wt, sg_scalar_int(1),
                                     sg_scalar_int(1), 1, cfg, &got) != SG_OK && got == 0);
    sg_tensor *r = NULL;
    CHECK(sg_cuda_bmm_lt(NULL, 0, x, wt, &r) != SG_OK && !r);
    sg_tensor *tensors[] = {x, w, bias, wt, xd, wtd, bd, mm, addmm, q, kk, kt, ref, qd, ktd};
    for (size_t i = 0; i < sizeof tensors / sizeof *tensors; i++) sg_tensor_release(tensors[i]);
}

int main(void) {
    const char *why = NULL;
    if (sg_device_count(SG_DEV_CUDA, &why) < 1) {
        fprintf(stderr, "test_cuda_gemm_ops: no CUDA device (%s): skipped\n", why ? why : "none");
        return 77;
    }
    CHECK(sg_aten_cuda_init() == SG_OK);
    const sg_dtype dts[4] = {SG_BFLOAT16, SG_FLOAT16, SG_FLOAT32, SG_FLOAT32};
    for (int d = 0; d < 4; d++) {
        dt = dts[d], tf32 = d == 3;
        CHECK(sg_cuda_set_allow_tf32(tf32) == SG_OK);
        check_addmm(1, 256, 512);
        check_addmm(77, 1000, 520);
        check_addmm(128, 1024, 4096);
        check_addmm(5, 1, 64); /* one column: no epilogue, as aten */
        check_addmm_inplace();
        check_tuner_entries();
    }
    CHECK(sg_cuda_set_allow_tf32(false) == SG_OK);
    return check_result("test_cuda_gemm_ops");
}
