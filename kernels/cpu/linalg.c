/* linalg.c: matrix products on the CPU: mm, addmm, bmm and baddbmm (structured: a meta function
 * and an out kernel each), and matmul and linear, composed over them as aten composes them
 * (registered for CompositeImplicitAutograd, linear.out for CompositeExplicitAutograd).
 *
 * One engine computes C = alpha * A.B + beta * C over a batch of strided matrices:
 *  - float32 and float64 through cblas_sgemm/dgemm where OpenBLAS is linked. A matrix whose
 *    rows or columns are contiguous goes as it is (NoTrans or Trans with its leading
 *    dimension); any other is packed first. C must be row- or column-major (the out kernels
 *    stage it in a contiguous tensor otherwise); a column-major C is computed as
 *    C^T = B^T.A^T.
 *  - float16 and bfloat16 converted to float32, multiplied there, and rounded once at the end
 *    (alpha and beta applied in float32), as aten's CPU gemm for them.
 *  - integers with plain loops accumulating modulo 2^64: aten's wraparound, without C's
 *    undefined signed overflow.
 *  - without OpenBLAS, or where a size does not fit BLAS's int, the float types run a blocked
 *    loop: blocks of 4 rows by 256 columns of accumulators over a row-packed B.
 * beta == 0 never reads C, so NaN or garbage there does not propagate (BLAS's and aten's rule);
 * an empty contraction (k == 0) gives beta * C.
 *
 * Semantics follow PyTorch 2.11's CPU kernels: aten's argument checks and messages, the result
 * dtype of each op (mm: self's; bmm: mat2's; addmm: mat1's), no bool or complex support, out=
 * tensors checked for dtype and resized, and matmul's dim cases (dot, mv, mm, folding a batched
 * operand into mm, broadcasting batch dims into bmm). */
#include "cpu.h"
#include "sg_mm_shape.h"

#include <stdlib.h>
#ifdef SG_HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- strided matrices ------------------------------------------------------------------------ */

/* One operand of a batched product: the first element and element strides. */
typedef struct operand {
    char   *p;
    int64_t bs, rs, cs; /* batch, row, column */
} operand;

/* ---- the blocked loop ------------------------------------------------------------------------
 * C[m x n] = alpha * A[m x k] . B[k x n] + beta * C for one matrix. B is packed into rows of unit
 * stride where it is not so already (pack: room for k * n elements, or NULL where B needs none);
 * each thread takes blocks of 4 rows and walks B's columns in panels of NB, keeping 4 x NB
 * accumulators of type ACC. ACC is T for floats and uint64_t for integers (modular). */

enum { NB = 256, MB = 4 };

/* A parallel loop where the local `par` says the work is worth threads. */
#ifdef _OPENMP
#define PAR_FOR _Pragma("omp parallel for schedule(static) if (par)")
#else
#define PAR_FOR
#endif

#define GEMM_LOOP(NAME, T, ACC, CV)                                                             \
    static void NAME(int64_t m, int64_t n, int64_t k, ACC alpha, const T *a, int64_t ars,      \
                     int64_t acs, const T *b, int64_t brs, int64_t bcs, ACC beta, bool beta0,  \
                     T *c, int64_t crs, int64_t ccs, T *pack) {                                 \
        int64_t ldb = brs;                                                                      \
        if (k > 0 && !(bcs == 1 || n == 1)) {                                                   \
            for (int64_t p = 0; p < k; p++)                                                     \
                for (int64_t j = 0; j < n; j++) pack[p * n + j] = b[p * brs + j * bcs];         \
            b = pack;                                                                           \
            ldb = n;                                                                            \
        }                                                                                       \
        int64_t blocks = (m + MB - 1) / MB;                                                     \
        bool    par = m * n * k > 65536 && blocks > 1;                                          \
        (void)par;                                                                              \
        PAR_FOR                                                                                 \
        for (int64_t blk = 0; blk < blocks; blk++) {                                            \
            ACC     acc[MB][NB];                                                                \
            int64_t i0 = blk * MB, mb = m - i0 < MB ? m - i0 : MB;                              \
            for (int64_t j0 = 0; j0 < n; j0 += NB) {                                            \
                int64_t nb = n - j0 < NB ? n - j0 : NB;                                         \
                for (int64_t r = 0; r < mb; r++)                                                \
                    for (int64_t j = 0; j < nb; j++) acc[r][j] = 0;                             \
                for (int64_t p = 0; p < k; p++) {                                               \
                    const T *brow = b + p * ldb + j0;                                           \
                    if (mb == MB) {                                                             \
                        ACC a0 = CV(a[(i0 + 0) * ars + p * acs]);                               \
                        ACC a1 = CV(a[(i0 + 1) * ars + p * acs]);                               \
                        ACC a2 = CV(a[(i0 + 2) * ars + p * acs]);                               \
                        ACC a3 = CV(a[(i0 + 3) * ars + p * acs]);                               \
                        for (int64_t j = 0; j < nb; j++) {                                      \
                            ACC bj = CV(brow[j]);                                               \
                            acc[0][j] += a0 * bj;                                               \
                            acc[1][j] += a1 * bj;                                               \
                            acc[2][j] += a2 * bj;                                               \
                            acc[3][j] += a3 * bj;                                               \
                        }                                                                       \
                    } else {                                                                    \
                        for (int64_t r = 0; r < mb; r++) {                                      \
                            ACC ar = CV(a[(i0 + r) * ars + p * acs]);                           \
                            for (int64_t j = 0; j < nb; j++) acc[r][j] += ar * CV(brow[j]);     \
                        }                                                                       \
                    }                                                                           \
                }                                                                               \
                for (int64_t r = 0; r < mb; r++) {                                              \
                    T *crow = c + (i0 + r) * crs + j0 * ccs;                                    \
                    for (int64_t j = 0; j < nb; j++) {                                          \
                        ACC v = alpha * acc[r][j];                                              \
                        if (!beta0) v += beta * CV(crow[j * ccs]);                              \
                        crow[j * ccs] = (T)v;                                                   \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }

#define CV_SAME(x) (x)
#define CV_U64(x) ((uint64_t)(int64_t)(x))
GEMM_LOOP(loop_f32, float, float, CV_SAME)
GEMM_LOOP(loop_f64, double, double, CV_SAME)
GEMM_LOOP(loop_u8, uint8_t, uint64_t, CV_U64)
GEMM_LOOP(loop_i8, int8_t, uint64_t, CV_U64)
GEMM_LOOP(loop_i16, int16_t, uint64_t, CV_U64)
GEMM_LOOP(loop_i32, int32_t, uint64_t, CV_U64)
GEMM_LOOP(loop_i64, int64_t, uint64_t, CV_U64)

/* ---- BLAS ------------------------------------------------------------------------------------ */

#ifdef SG_HAVE_OPENBLAS
static bool fits_blas(int64_t x) { return (int64_t)(blasint)x == x; }

/* How a matrix goes to BLAS: as it is (trans false, ld), transposed (trans true, ld), or not
 * at all (false: it needs packing). */
static bool blas_view(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *trans,
                      int64_t *ld) {
    if (sg_mm_row_major(rows, cols, rs, cs, ld)) {
        *trans = false;
        return fits_blas(*ld);
    }
    if (sg_mm_row_major(cols, rows, cs, rs, ld)) {
        *trans = true;
        return fits_blas(*ld);
    }
    return false;
}
#endif

/* Scratch a product needs only sometimes (packed operands, float32 copies): allocated at its
 * first use, for the whole batch, and freed once. */
typedef struct scratch {
    void  *p[3];
    size_t bytes[3];
} scratch;

static void *room(scratch *s, int i) {
    if (!s->p[i]) s->p[i] = malloc(s->bytes[i] ? s->bytes[i] : 1);
    return s->p[i];
}

static sg_status no_room(const scratch *s, int i) {
    return sg_error(SG_ENOMEM, "mm: out of memory for %zu bytes of scratch", s->bytes[i]);
}

/* One float32 or float64 product with row-major C (unit column stride or n == 1). Scratch 0
 * and 1 have room for A (m x k) and B (k x n) packed. */
static sg_status gemm_real(sg_dtype t, int64_t m, int64_t n, int64_t k, double alpha,
                           const char *a, int64_t ars, int64_t acs, const char *b, int64_t brs,
                           int64_t bcs, double beta, char *c, int64_t crs, int64_t ccs,
                           scratch *sc) {
#ifdef SG_HAVE_OPENBLAS
    int64_t ldc, lda, ldb;
    bool    ta, tb;
    if (k > 0 && fits_blas(m) && fits_blas(n) && fits_blas(k) &&
        sg_mm_row_major(m, n, crs, ccs, &ldc) && fits_blas(ldc)) {
        size_t es = sg_dtype_size(t);
        if (!blas_view(m, k, ars, acs, &ta, &lda)) { /* pack A row-major */
            char *pa = room(sc, 0);
            if (!pa) return no_room(sc, 0);
            for (int64_t i = 0; i < m; i++)
                for (int64_t p = 0; p < k; p++)
                    memcpy(pa + (size_t)(i * k + p) * es, a + (size_t)(i * ars + p * acs) * es, es);
            a = pa, ta = false, lda = k;
        }
        if (!blas_view(k, n, brs, bcs, &tb, &ldb)) {
            char *pb = room(sc, 1);
            if (!pb) return no_room(sc, 1);
            for (int64_t p = 0; p < k; p++)
                for (int64_t j = 0; j < n; j++)
                    memcpy(pb + (size_t)(p * n + j) * es, b + (size_t)(p * brs + j * bcs) * es, es);
            b = pb, tb = false, ldb = n;
        }
        if (t == SG_FLOAT32)
            cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                        tb ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n, (blasint)k,
                        (float)alpha, (const float *)a, (blasint)lda, (const float *)b,
                        (blasint)ldb, (float)beta, (float *)c, (blasint)ldc);
        else
            cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                        tb ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n, (blasint)k,
                        alpha, (const double *)a, (blasint)lda, (const double *)b, (blasint)ldb,
                        beta, (double *)c, (blasint)ldc);
        return SG_OK;
    }
#endif
    void *pack = NULL;
    if (k > 0 && !(bcs == 1 || n == 1) && !(pack = room(sc, 1))) return no_room(sc, 1);
    if (t == SG_FLOAT32)
        loop_f32(m, n, k, (float)alpha, (const float *)a, ars, acs, (const float *)b, brs, bcs,
                 (float)beta, beta == 0, (float *)c, crs, ccs, pack);
    else
        loop_f64(m, n, k, alpha, (const double *)a, ars, acs, (const double *)b, brs, bcs, beta,
                 beta == 0, (double *)c, crs, ccs, pack);
    return SG_OK;
}

/* ---- the batched engine ---------------------------------------------------------------------- */

typedef struct gemm_job {
    sg_dtype dtype;
    int64_t  batch, m, n, k;
    operand  a, b, c; /* a: m x k, b: k x n, c: m x n (row- or column-major) */
    sg_scalar alpha, beta;
} gemm_job;

static float load_f(sg_dtype t, const char *p) {
    return t == SG_FLOAT16 ? sg_half_to_float(*(const sg_half *)p)
                           : sg_bf16_to_float(*(const sg_bf16 *)p);
}
static void store_f(sg_dtype t, char *p, float v) {
    if (t == SG_FLOAT16) *(sg_half *)p = sg_float_to_half(v);
    else *(sg_bf16 *)p = sg_float_to_bf16(v);
}

/* C = alpha * A.B + beta * C for one float16/bfloat16 matrix: A and B widened into float32
 * (scratch 2 holds A, B and the float32 product), multiplied there, rounded once. */
static sg_status gemm_half(sg_dtype t, int64_t m, int64_t n, int64_t k, float alpha,
                           const char *a, int64_t ars, int64_t acs, const char *b, int64_t brs,
                           int64_t bcs, float beta, char *c, int64_t crs, int64_t ccs,
                           scratch *sc) {
    int64_t es = (int64_t)sg_dtype_size(t);
    float  *fa = room(sc, 2), *fb = fa + m * k, *fc = fb + k * n;
    if (!fa) return no_room(sc, 2);
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++) fa[i * k + p] = load_f(t, a + (i * ars + p * acs) * es);
    for (int64_t p = 0; p < k; p++)
        for (int64_t j = 0; j < n; j++) fb[p * n + j] = load_f(t, b + (p * brs + j * bcs) * es);
    sg_status st = gemm_real(SG_FLOAT32, m, n, k, 1.0, (const char *)fa, k, 1, (const char *)fb,
                             n, 1, 0.0, (char *)fc, n, 1, sc);
    if (st) return st;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            char *q = c + (i * crs + j * ccs) * es;
            float v = alpha * fc[i * n + j];
            if (beta != 0) v += beta * load_f(t, q);
            store_f(t, q, v);
        }
    return SG_OK;
}

/* Runs the job: C = alpha * A.B + beta * C for every matrix of the batch. */
static sg_status gemm_run(gemm_job *g) {
    sg_dtype t = g->dtype;
    int64_t  es = (int64_t)sg_dtype_size(t), m = g->m, n = g->n, k = g->k, ld;
    operand  a = g->a, b = g->b, c = g->c;
    if (m == 0 || n == 0 || g->batch == 0) return SG_OK;
    /* A column-major C: compute C^T = B^T . A^T, whose C is row-major. */
    if (!sg_mm_row_major(m, n, c.rs, c.cs, &ld)) {
        operand at = {a.p, a.bs, a.cs, a.rs}, bt = {b.p, b.bs, b.cs, b.rs};
        c = (operand){c.p, c.bs, c.cs, c.rs};
        a = bt, b = at;
        int64_t tmp = m;
        m = n, n = tmp;
    }
    bool    half = t == SG_FLOAT16 || t == SG_BFLOAT16;
    size_t  fes = half ? sizeof(float) : (size_t)es;
    scratch sc = {{NULL, NULL, NULL},
                  {(size_t)(m * k) * fes, (size_t)(k * n) * fes,
                   half ? (size_t)(m * k + k * n + m * n) * sizeof(float) : 0}};
    double    al = sg_scalar_to_double(g->alpha), be = sg_scalar_to_double(g->beta);
    uint64_t  ial = (uint64_t)sg_mm_scalar_to_int(g->alpha);
    uint64_t  ibe = (uint64_t)sg_mm_scalar_to_int(g->beta);
    sg_status st = SG_OK;
    for (int64_t bi = 0; bi < g->batch && !st; bi++) {
        const char *ab = a.p + bi * a.bs * es, *bb = b.p + bi * b.bs * es;
        char       *cb = c.p + bi * c.bs * es;
        void       *pack = NULL;
        if (t == SG_FLOAT32 || t == SG_FLOAT64) {
            st = gemm_real(t, m, n, k, al, ab, a.rs, a.cs, bb, b.rs, b.cs, be, cb, c.rs, c.cs, &sc);
            continue;
        }
        if (half) {
            st = gemm_half(t, m, n, k, (float)al, ab, a.rs, a.cs, bb, b.rs, b.cs, (float)be, cb,
                           c.rs, c.cs, &sc);
            continue;
        }
        if (k > 0 && !(b.cs == 1 || n == 1) && !(pack = room(&sc, 1))) {
            st = no_room(&sc, 1);
            continue;
        }
#define INT_CASE(NAME, NUM, KIND, SIZE, T, SUF, ...)                                           \
    case SG_##NAME:                                                                              \
        loop_##SUF(m, n, k, ial, (const T *)ab, a.rs, a.cs, (const T *)bb, b.rs, b.cs, ibe,      \
                   ibe == 0, (T *)cb, c.rs, c.cs, (T *)pack);                                    \
        break;
        switch (t) {
            SG_DTYPES_INTEGRAL(INT_CASE)
        default: break;
        }
#undef INT_CASE
    }
    for (int i = 0; i < 3; i++) free(sc.p[i]);
    return st;
}

/* result ([B,] m, n) = beta * self + alpha * a . b, as aten's addmm_impl_cpu_ and
 * bmm_out_or_baddbmm_: self broadcasts to the result (NULL where beta is 0); result is staged
 * in a contiguous tensor where its layout does not suit a gemm or it overlaps a or b. */
static sg_status mm_compute(const char *op, sg_tensor *result, const sg_tensor *self,
                            const sg_tensor *a, const sg_tensor *b, sg_scalar beta,
                            sg_scalar alpha) {
    sg_dtype t = dtype_of(result);
    if (!sg_mm_dtype_ok(t)) return sg_not_implemented(op, t);
    if (sg_tensor_numel(result) == 0) return SG_OK;
    sg_status st = sg_mm_scalars_check(op, t, a, beta, alpha);
    if (st) return st;
    bool       beta0 = sg_mm_scalar_is_zero(beta);
    sg_tensor *w = result;
    if (!sg_mm_gemm_layout_ok(result) || sg_may_overlap(result, a) ||
        sg_may_overlap(result, b)) {
        if ((st = sg_tensor_empty(result->sizes, result->ndim, t, SG_CPU, &w))) return st;
    }
    if (!beta0 && self && !sg_same_view(self, w) && (st = sg_cast_copy_(w, self))) goto done;
    int32_t  nd = a->ndim;
    bool     batched = nd == 3;
    gemm_job g = {
        .dtype = t,
        .batch = batched ? a->sizes[0] : 1,
        .m = a->sizes[nd - 2],
        .k = a->sizes[nd - 1],
        .n = b->sizes[nd - 1],
        .a = {(char *)sg_tensor_data(a), batched ? a->strides[0] : 0, a->strides[nd - 2],
              a->strides[nd - 1]},
        .b = {(char *)sg_tensor_data(b), batched ? b->strides[0] : 0, b->strides[nd - 2],
              b->strides[nd - 1]},
        .c = {(char *)sg_tensor_data(w), batched ? w->strides[0] : 0, w->strides[nd - 2],
              w->strides[nd - 1]},
        .alpha = alpha,
        .beta = beta0 ? sg_scalar_int(0) : beta,
    };
    if ((st = gemm_run(&g))) goto done;
    if (w != result) st = sg_tensor_copy_(result, w);
done:
    if (w != result) sg_tensor_release(w);
    return st;
}

/* ---- mm, addmm ------------------------------------------------------------------------------- */

static sg_status mm_out(sg_keyset ks, sg_tensor *self, sg_tensor *mat2, sg_tensor *out,
                        sg_tensor **ret) {
    (void)ks;
    sg_status st;
    if ((st = sg_mm_mm_prepare(self, mat2, out)) ||
        (st = mm_compute("addmm_impl_cpu_", out, NULL, self, mat2, sg_scalar_int(0),
                         sg_scalar_int(1))))
        return st;
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

static sg_status addmm_meta(sg_tensor *self, sg_tensor *mat1, sg_tensor *mat2, sg_scalar beta,
                            sg_scalar alpha, sg_meta *m) {
    (void)beta, (void)alpha;
    return sg_mm_addmm_checks(self, mat1, mat2, m);
}

static sg_status addmm_out(sg_keyset ks, sg_tensor *self, sg_tensor *mat1, sg_tensor *mat2,
                           sg_scalar beta, sg_scalar alpha, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_tensor *s = NULL;
    sg_status  st = sg_mm_addmm_prepare(self, mat1, mat2, out, &s);
    if (!st) st = mm_compute("addmm_impl_cpu_", out, s, mat1, mat2, beta, alpha);
    sg_tensor_release(s);
    if (!st) *ret = sg_tensor_retain(out);
    return st;
}

/* ---- bmm, baddbmm ---------------------------------------------------------------------------- */

static sg_status bmm_meta(sg_tensor *self, sg_tensor *mat2, sg_meta *m) {
    return sg_mm_bmm_checks(self, mat2, m);
}

static sg_status bmm_out(sg_keyset ks, sg_tensor *self, sg_tensor *mat2, sg_tensor *out,
                         sg_tensor **ret) {
    (void)ks;
    sg_status st;
    if ((st = sg_mm_bmm_prepare(self, mat2, out)) ||
        (st = mm_compute("bmm", out, NULL, self, mat2, sg_scalar_int(0), sg_scalar_int(1))))
        return st;
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

static sg_status baddbmm_meta(sg_tensor *self, sg_tensor *batch1, sg_tensor *batch2,
                              sg_scalar beta, sg_scalar alpha, sg_meta *m) {
    (void)beta, (void)alpha;
    sg_tensor *s = NULL;
    sg_status  st = sg_mm_baddbmm_checks(self, batch1, batch2, m, &s);
    sg_tensor_release(s);
    return st;
}

static sg_status baddbmm_out(sg_keyset ks, sg_tensor *self, sg_tensor *batch1, sg_tensor *batch2,
                             sg_scalar beta, sg_scalar alpha, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_tensor *s = NULL;
    sg_status  st = sg_mm_baddbmm_prepare(self, batch1, batch2, out, &s);
    if (!st) st = mm_compute("baddbmm", out, s, batch1, batch2, beta, alpha);
    sg_tensor_release(s);
    if (!st) *ret = sg_tensor_retain(out);
    return st;
}

/* ---- matmul ------------------------------------------------------------------------------------
 * aten's _matmul_impl, over the dispatched mm and bmm. Views are runtime views; a reshape that
 * no view can express copies, as aten's reshape. */

/* Tensors to release at the end of a composite. */
typedef struct pool {
    sg_tensor *t[24];
    int        n;
} pool;

static sg_tensor *keep(pool *p, sg_tensor *t) {
    if (p->n < (int)(sizeof p->t / sizeof p->t[0])) p->t[p->n++] = t;
    return t;
}
static void drain(pool *p) {
    while (p->n) sg_tensor_release(p->t[--p->n]);
}

/* t with new sizes: a view where one can be, else a contiguous copy viewed. */
static sg_status reshape(pool *p, sg_tensor *t, const int64_t *sizes, int32_t n,
                         sg_tensor **out) {
    sg_tensor *c = NULL;
    if (sg_tensor_view(t, sizes, n, out) == SG_OK) {
        keep(p, *out);
        return SG_OK;
    }
    sg_error_clear();
    sg_status st = sg_tensor_contiguous(t, &c);
    if (st) return st;
    keep(p, c);
    if ((st = sg_tensor_view(c, sizes, n, out))) return st;
    keep(p, *out);
    return SG_OK;
}

/* aten's infer_size: the broadcast of two shapes, or its error. */
static sg_status broadcast(const int64_t *a, int32_t na, const int64_t *b, int32_t nb,
                           int64_t *out, int32_t *nout) {
    int32_t n = na > nb ? na : nb;
    for (int32_t i = n - 1; i >= 0; i--) {
        int32_t ia = i - (n - na), ib = i - (n - nb);
        int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return sg_error(SG_EINVAL, "The size of tensor a (%lld) must match the size of "
                                       "tensor b (%lld) at non-singleton dimension %d",
                            (long long)sa, (long long)sb, i);
        out[i] = sa == 1 ? sb : sa;
    }
    *nout = n;
    return SG_OK;
}

static sg_status dot_(pool *p, sg_tensor *a, sg_tensor *b, sg_tensor **ret) {
    if (a->dtype != b->dtype)
        return sg_error(SG_EINVAL, "dot : expected both vectors to have same dtype, but found "
                                   "%s and %s",
                        sg_dtype_c10_name(dtype_of(a)), sg_dtype_c10_name(dtype_of(b)));
    if (a->sizes[0] != b->sizes[0])
        return sg_error(SG_EINVAL, "inconsistent tensor size, expected tensor [%lld] and src "
                                   "[%lld] to have the same number of elements, but got %lld "
                                   "and %lld elements respectively",
                        (long long)a->sizes[0], (long long)b->sizes[0], (long long)a->sizes[0],
                        (long long)b->sizes[0]);
    sg_tensor *ra, *cb, *r;
    sg_status  st;
    if ((st = sg_tensor_unsqueeze(a, 0, &ra))) return st;
    keep(p, ra);
    if ((st = sg_tensor_unsqueeze(b, 1, &cb))) return st;
    keep(p, cb);
    if ((st = aten_mm(ra, cb, &r))) return st;
    keep(p, r);
    return sg_tensor_view(r, r->sizes, 0, ret);
}

static sg_status mv_(pool *p, sg_tensor *mat, sg_tensor *vec, sg_tensor **ret) {
    if (mat->sizes[1] != vec->sizes[0])
        return sg_error(SG_EINVAL, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                        (long long)mat->sizes[0], (long long)mat->sizes[0],
                        (long long)mat->sizes[1], (long long)vec->sizes[0]);
    if (mat->dtype != vec->dtype) /* addmv's kernel reads vec as mat's type */
        return sg_error(SG_EINVAL, "expected scalar type %s but found %s",
                        sg_dtype_c10_name(dtype_of(mat)), sg_dtype_c10_name(dtype_of(vec)));
    sg_tensor *cv, *r;
    sg_status  st;
    if ((st = sg_tensor_unsqueeze(vec, 1, &cv))) return st;
    keep(p, cv);
    if ((st = aten_mm(mat, cv, &r))) return st;
    keep(p, r);
    return sg_tensor_view(r, r->sizes, 1, ret);
}

/* aten's should_fold: t1 (the larger, >= 3-D) folds into a matrix without a copy. */
static bool should_fold(const sg_tensor *a, const sg_tensor *b) {
    bool             a_larger = a->ndim >= b->ndim;
    const sg_tensor *t1 = a_larger ? a : b;
    int32_t          d1 = t1->ndim, d2 = a_larger ? b->ndim : a->ndim;
    if (!(d1 >= 3 && d2 <= 2)) return false;
    if (a->ndim == 2) return false;
    if (sg_tensor_numel(t1) == 0) return true;
    /* t1 is b^T where b is larger: its first n-1 dims are b's dims but the last two swapped */
    int64_t sz[SG_MAX_DIMS], sd[SG_MAX_DIMS];
    memcpy(sz, t1->sizes, (size_t)d1 * sizeof *sz);
    memcpy(sd, t1->strides, (size_t)d1 * sizeof *sd);
    if (!a_larger) {
        int64_t x = sz[d1 - 1];
        sz[d1 - 1] = sz[d1 - 2], sz[d1 - 2] = x;
        x = sd[d1 - 1];
        sd[d1 - 1] = sd[d1 - 2], sd[d1 - 2] = x;
    }
    for (int32_t i = 0; i < d1 - 2; i++)
        if (sd[i] != sd[i + 1] * sz[i + 1]) return false;
    return true;
}

static sg_status matmul_impl(pool *p, sg_tensor *t1, sg_tensor *t2, sg_tensor **ret) {
    int32_t   d1 = t1->ndim, d2 = t2->ndim;
    sg_status st;
    *ret = NULL;
    if (d1 == 0 || d2 == 0)
        return sg_error(SG_EINVAL, "both arguments to matmul need to be at least 1D, but they "
                                   "are %dD and %dD",
                        d1, d2);
    if (d1 == 1 && d2 == 1) return dot_(p, t1, t2, ret);
    if (d1 == 2 && d2 == 1) return mv_(p, t1, t2, ret);
    if (d1 == 1 && d2 == 2) {
        sg_tensor *r1, *r;
        if ((st = sg_tensor_unsqueeze(t1, 0, &r1))) return st;
        keep(p, r1);
        if ((st = aten_mm(r1, t2, &r))) return st;
        keep(p, r);
        return sg_tensor_view(r, r->sizes + 1, 1, ret);
    }
    if (d1 == 2 && d2 == 2) return aten_mm(t1, t2, ret);
    if (should_fold(t1, t2)) {
        bool       transpose = d2 > d1;
        sg_tensor *a = t1, *b = t2, *folded, *r, *o;
        if (transpose) {
            if ((st = sg_tensor_transpose(t2, -2, -1, &a))) return st;
            keep(p, a);
            b = t1;
            if (d1 == 2) {
                if ((st = sg_tensor_transpose(t1, 0, 1, &b))) return st;
                keep(p, b);
            }
        }
        int64_t shape[SG_MAX_DIMS], fold = 1;
        int32_t ns = a->ndim - 1;
        for (int32_t i = 0; i < ns; i++) fold *= (shape[i] = a->sizes[i]);
        bool matrix = b->ndim == 2;
        if (matrix) shape[ns++] = b->sizes[1];
        int64_t fs[2] = {fold, a->sizes[a->ndim - 1]};
        if ((st = reshape(p, a, fs, 2, &folded))) return st;
        if (matrix) {
            if ((st = aten_mm(folded, b, &r))) return st;
            keep(p, r);
            if (!transpose) return sg_tensor_view(r, shape, ns, ret);
            sg_tensor *v, *vt;
            if ((st = sg_tensor_view(r, shape, ns, &v))) return st;
            keep(p, v);
            if ((st = sg_tensor_transpose(v, -2, -1, &vt))) return st;
            keep(p, vt);
            return sg_tensor_contiguous(vt, ret);
        }
        if ((st = mv_(p, folded, b, &o))) return st;
        keep(p, o);
        return sg_tensor_view(o, shape, ns, ret);
    }
    /* batched: broadcast the batch dims, fold them into one, bmm */
    int64_t n = d1 > 1 ? t1->sizes[d1 - 2] : 1, m1 = t1->sizes[d1 - 1];
    int64_t m2 = d2 > 1 ? t2->sizes[d2 - 2] : t2->sizes[0], pp = d2 > 1 ? t2->sizes[d2 - 1] : 1;
    int32_t nb1 = d1 > 2 ? d1 - 2 : 0, nb2 = d2 > 2 ? d2 - 2 : 0, nb = 0;
    int64_t shape[SG_MAX_DIMS + 2], batch = 1;
    if ((st = broadcast(t1->sizes, nb1, t2->sizes, nb2, shape, &nb))) return st;
    for (int32_t i = 0; i < nb; i++) batch *= shape[i];
    sg_tensor *e1, *e2, *f1, *f2, *r;
    shape[nb] = n, shape[nb + 1] = m1;
    if ((st = sg_tensor_expand(t1, shape, nb + 2, &e1))) return st;
    keep(p, e1);
    int64_t s1[3] = {batch, n, m1};
    if ((st = reshape(p, e1, s1, 3, &f1))) return st;
    bool vec = d2 == 1;
    shape[nb] = m2, shape[nb + 1] = pp;
    if ((st = sg_tensor_expand(t2, shape, nb + (vec ? 1 : 2), &e2))) return st;
    keep(p, e2);
    int64_t s2[3] = {batch, m2, pp};
    if ((st = reshape(p, e2, s2, 3, &f2))) return st; /* a vector gains its column dim here */
    if ((st = aten_bmm(f1, f2, &r))) return st;
    keep(p, r);
    int32_t ns = nb;
    if (d1 > 1) shape[ns++] = n;
    if (d2 > 1) shape[ns++] = pp;
    return sg_tensor_view(r, shape, ns, ret);
}

static sg_status matmul_fn(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor **ret) {
    (void)ks;
    pool      p = {.n = 0};
    sg_status st = matmul_impl(&p, self, other, ret);
    drain(&p);
    return st;
}

/* An out= tensor given a computed result: aten's out checks, a resize, a copy. */
static sg_status copy_to_out(sg_tensor *r, sg_tensor *out) {
    sg_meta m;
    sg_mm_meta_set(&m, r, dtype_of(r), r->sizes, r->ndim);
    sg_status st = sg_mm_out_prepare(out, &m);
    return st ? st : sg_tensor_copy_(out, r);
}

static sg_status matmul_out_fn(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                               sg_tensor **ret) {
    (void)ks;
    if (self->ndim == 2 && other->ndim == 2) return aten_mm_out(self, other, out, ret);
    sg_tensor *r = NULL;
    sg_status  st = matmul_fn(ks, self, other, &r);
    if (!st) st = copy_to_out(r, out);
    sg_tensor_release(r);
    if (!st) *ret = sg_tensor_retain(out);
    return st;
}

/* ---- linear -------------------------------------------------------------------------------------
 * aten's linear: addmm for a 2-D input with a bias, or for a contiguous input folded to 2-D;
 * otherwise matmul with weight^T, then bias added in place. */

static sg_status weight_t(pool *p, sg_tensor *w, sg_tensor **out) {
    if (w->ndim > 2)
        return sg_error(SG_EINVAL, "t() expects a tensor with <= 2 dimensions, but self is %dD",
                        w->ndim);
    if (w->ndim < 2) {
        *out = w;
        return SG_OK;
    }
    sg_status st = sg_tensor_transpose(w, 0, 1, out);
    if (!st) keep(p, *out);
    return st;
}

static sg_status linear_impl(pool *p, sg_tensor *input, sg_tensor *weight, sg_tensor *bias,
                             sg_tensor **ret) {
    int32_t   di = input->ndim, dw = weight->ndim;
    sg_tensor *wt, *r, *x2;
    sg_status st;
    if (di == 0 || dw == 0)
        return sg_error(SG_EINVAL, "both arguments to linear need to be at least 1D, but they "
                                   "are %dD and %dD",
                        di, dw);
    if ((st = weight_t(p, weight, &wt))) return st;
    sg_scalar one = sg_scalar_int(1);
    if (bias && di == 2) return aten_addmm(bias, input, wt, one, one, ret);
    if (bias && sg_tensor_is_contiguous(input) && (di == 3 || bias->ndim == 1)) {
        int64_t fold = 1, shape[SG_MAX_DIMS];
        for (int32_t i = 0; i < di - 1; i++) fold *= (shape[i] = input->sizes[i]);
        int64_t fs[2] = {fold, input->sizes[di - 1]};
        if ((st = reshape(p, input, fs, 2, &x2))) return st;
        if ((st = aten_addmm(bias, x2, wt, one, one, &r))) return st;
        keep(p, r);
        int32_t ns = di - 1;
        if (dw == 2) shape[ns++] = r->sizes[1];
        return sg_tensor_view(r, shape, ns, ret);
    }
    if ((st = matmul_impl(p, input, wt, &r))) return st;
    if (bias) {
        sg_tensor *same = NULL;
        st = aten_add__Tensor(r, bias, one, &same);
        sg_tensor_release(same);
        if (st) {
            sg_tensor_release(r);
            return st;
        }
    }
    *ret = r;
    return SG_OK;
}

static sg_status linear_fn(sg_keyset ks, sg_tensor *input, sg_tensor *weight, sg_tensor *bias,
                           sg_tensor **ret) {
    (void)ks;
    pool      p = {.n = 0};
    sg_status st = linear_impl(&p, input, weight, bias, ret);
    drain(&p);
    return st;
}

static sg_status linear_out_fn(sg_keyset ks, sg_tensor *input, sg_tensor *weight,
                               sg_tensor *bias, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    pool       p = {.n = 0};
    sg_tensor *wt, *r = NULL;
    sg_scalar  one = sg_scalar_int(1);
    sg_status  st = weight_t(&p, weight, &wt);
    if (st) goto done;
    if (bias && input->ndim == 2) {
        st = aten_addmm_out(bias, input, wt, one, one, out, ret);
        goto done;
    }
    if ((st = aten_matmul_out(input, wt, out, &r))) goto done;
    if (bias) {
        sg_tensor *same = NULL;
        st = aten_add__Tensor(out, bias, one, &same);
        sg_tensor_release(same);
    }
    if (!st) {
        *ret = r;
        r = NULL;
    }
done:
    sg_tensor_release(r);
    drain(&p);
    return st;
}

/* ---- registration ---------------------------------------------------------------------------- */

sg_status sg_cpu_register_attention(void); /* attention.c */

sg_status sg_cpu_register_linalg(void) {
    SG_REG_STRUCTURED(aten_mm_out, sg_mm_meta, mm_out);
    SG_REG_STRUCTURED(aten_addmm_out, addmm_meta, addmm_out);
    SG_REG_STRUCTURED(aten_bmm_out, bmm_meta, bmm_out);
    SG_REG_STRUCTURED(aten_baddbmm_out, baddbmm_meta, baddbmm_out);
    SG_REG_DECOMP(aten_matmul, matmul_fn);
    SG_REG_DECOMP(aten_matmul_out, matmul_out_fn);
    SG_REG_DECOMP(aten_linear, linear_fn);
    SG_REG_EXPLICIT(aten_linear_out, linear_out_fn);
    return sg_cpu_register_attention();
}
