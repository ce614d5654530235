/* reduce.c: reductions on the CPU: sum, mean, prod, amax/amin, max/min (whole, and along a dim
 * with indices), argmax/argmin, var/std, logsumexp, and cumsum. Every reduction runs on the
 * iterator's reduction driver (cpu.h): this file gives it the typed loops (one reducer per op
 * and input dtype) around aten's argument handling (reduce_shape.c, one copy with CUDA's).
 * softmax.c has the softmaxes.
 *
 * Semantics follow aten: a dim list that is None or empty reduces every dim; dims wrap and may
 * not repeat; keepdim; the `dtype` argument casts the input before reducing (sum and prod of
 * integers and bools give int64 by default; mean wants a floating dtype); NaN wins in max/min
 * and their indices are the first occurrence; a sum over nothing is 0, a product 1, a mean NaN,
 * while max/min/amax/argmax of nothing are errors; float16 and bfloat16 accumulate in float32
 * or better and give their own dtype.
 *
 * Accumulation: float32, float16 and bfloat16 sums add in float32 lanes over blocks of 256
 * elements (rows of 8 across outputs), and the blocks' totals join in double: a cascade like
 * aten's, within about 1e-7 of the exact sum of millions of elements. float64 sums, products
 * and the second pass of var are in double; integers wrap in 64 bits; max and min compare in
 * the input's own precision. var/std take two passes (the mean, then the squared deviations);
 * logsumexp subtracts the max first. Each loop is written so that gcc vectorises it at -O3
 * with plain SSE2: independent lanes, branch-free selects, `restrict` pointers. */
#include "cpu.h"
#include "sg_reduce_shape.h"

#include "vmath.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- dims and shapes (sg_reduce_shape.h has the rest) ---------------------------------------- */

static sg_status fill_meta(const sg_tensor *t, const sg_rdims *r, bool keepdim, sg_dtype dtype,
                           sg_meta *m) {
    sg_reduce_shape(t, r, keepdim, m->sizes, &m->ndim);
    m->dtype = dtype;
    m->device = t->device;
    m->strided = false;
    return SG_OK;
}

/* ---- loading and storing --------------------------------------------------------------------- */

#define LOAD_PLAIN(x) (x)
#define LOAD_HALF(x)  sg_half_to_float(x)
#define LOAD_BF16(x)  sg_bf16_to_float(x)

/* Stores i (int64) into an element of an integral dtype. */
#define STORE_I(NAME, NUM, KIND, SIZE, T, ...) \
    case SG_##NAME: *(T *)p = (T)i; break;

/* An integer into any dtype (wrapping, as a cast does). */
static void store_i(sg_dtype t, char *p, int64_t i) {
    switch (t) {
        SG_DTYPES_INTEGRAL(STORE_I)
    case SG_BOOL: *(bool *)p = i != 0; break;
    default: sg_store_double(t, p, (double)i); break;
    }
}

/* ---- the reducers' shared state -------------------------------------------------------------- */

typedef struct rctx {
    sg_dtype out;     /* operand 0's dtype */
    bool     mean;    /* sum: divide by the count */
    bool     root;    /* var: take the square root (std) */
    double   corr;    /* var: the correction subtracted from the count */
    int      values;  /* arg reducers: the operand that gets the values (-1: none) */
    int      indices; /* and the one that gets the indices */
} rctx;

/* Folding x into an accumulator a. Branch-free, so that the compiler turns the selects into
 * vector blends; a NaN wins max and min and, once in an accumulator, stays. */
#define STEP_ADD(a, x)  ((a) += (x))
#define STEP_MUL(a, x)  ((a) *= (x))
#define STEP_FMAX(a, x) ((a) = (((x) > (a)) | ((x) != (x))) ? (x) : (a))
#define STEP_FMIN(a, x) ((a) = (((x) < (a)) | ((x) != (x))) ? (x) : (a))
#define STEP_IMAX(a, x) ((a) = (x) > (a) ? (x) : (a))
#define STEP_IMIN(a, x) ((a) = (x) < (a) ? (x) : (a))
/* whether x beats b for argmax/argmin: strictly better, or the first NaN */
#define ARG_BETTER_MAX(x, b) (((x) > (b)) | (((x) != (x)) & ((b) == (b))))
#define ARG_BETTER_MIN(x, b) (((x) < (b)) | (((x) != (x)) & ((b) == (b))))
#define IBETTER_MAX(x, b)    ((x) > (b))
#define IBETTER_MIN(x, b)    ((x) < (b))

/* identities */
#define INIT(NAME, FIELD, X)                                                                   \
    static void NAME(void *ctx, sg_rval *v, int64_t *idx, int64_t n) {                        \
        (void)ctx, (void)idx;                                                                  \
        for (int64_t j = 0; j < n; j++) v[j].FIELD = X;                                       \
    }
INIT(init_zero_f, f, 0.0)
INIT(init_one_f, f, 1.0)
INIT(init_ninf, f, -INFINITY)
INIT(init_pinf, f, INFINITY)
INIT(init_zero_i, u, 0)
INIT(init_one_i, u, 1)
INIT(init_min_i, i, INT64_MIN)
INIT(init_max_i, i, INT64_MAX)
static void init_arg(void *ctx, sg_rval *v, int64_t *idx, int64_t n) {
    (void)ctx;
    for (int64_t j = 0; j < n; j++) v[j].i = 0, idx[j] = -1; /* -1: nothing seen yet */
}

/* joining per-thread partials: a[j] = a[j] <op> b[j] */
#define COMBINE(NAME, FIELD, STEP)                                                             \
    static void NAME(void *ctx, sg_rval *a, int64_t *ai, const sg_rval *b, const int64_t *bi, \
                     int64_t n) {                                                              \
        (void)ctx, (void)ai, (void)bi;                                                         \
        for (int64_t j = 0; j < n; j++) STEP(a[j].FIELD, b[j].FIELD);                          \
    }
COMBINE(add_f, f, STEP_ADD)
COMBINE(add_i, u, STEP_ADD)
COMBINE(mul_f, f, STEP_MUL)
COMBINE(mul_i, u, STEP_MUL)
COMBINE(max_f, f, STEP_FMAX)
COMBINE(min_f, f, STEP_FMIN)
COMBINE(max_i, i, STEP_IMAX)
COMBINE(min_i, i, STEP_IMIN)

/* argmax/argmin partials: b's winner replaces a's where strictly better (b's elements come
 * later, so a tie keeps a's) */
#define ARG_COMBINE(NAME, FIELD, BETTER)                                                       \
    static void NAME(void *ctx, sg_rval *a, int64_t *ai, const sg_rval *b, const int64_t *bi, \
                     int64_t n) {                                                              \
        (void)ctx;                                                                             \
        for (int64_t j = 0; j < n; j++)                                                        \
            if (bi[j] >= 0 && (ai[j] < 0 || BETTER(b[j].FIELD, a[j].FIELD)))                   \
                a[j] = b[j], ai[j] = bi[j];                                                    \
    }
ARG_COMBINE(argmax_f, f, ARG_BETTER_MAX)
ARG_COMBINE(argmin_f, f, ARG_BETTER_MIN)
ARG_COMBINE(argmax_i, i, IBETTER_MAX)
ARG_COMBINE(argmin_i, i, IBETTER_MIN)

/* ---- finishing: accumulators into outputs ---------------------------------------------------- */

static void fin_f(void *ctx, const sg_rval *v, const int64_t *idx, int64_t n, int64_t count,
                  char *const *op, const int64_t *os) {
    const rctx *c = ctx;
    (void)idx;
    for (int64_t j = 0; j < n; j++) {
        double x = c->mean ? v[j].f / (double)count : v[j].f;
        sg_store_double(c->out, op[0] + j * os[0], x);
    }
}

static void fin_i(void *ctx, const sg_rval *v, const int64_t *idx, int64_t n, int64_t count,
                  char *const *op, const int64_t *os) {
    const rctx *c = ctx;
    (void)idx, (void)count;
    for (int64_t j = 0; j < n; j++) store_i(c->out, op[0] + j * os[0], v[j].i);
}

/* var/std: the squared deviations' sum over the count less the correction (never below 0) */
static void fin_var(void *ctx, const sg_rval *v, const int64_t *idx, int64_t n, int64_t count,
                    char *const *op, const int64_t *os) {
    const rctx *c = ctx;
    (void)idx;
    double den = (double)count - c->corr;
    if (!(den > 0)) den = 0;
    for (int64_t j = 0; j < n; j++) {
        double x = v[j].f / den;
        sg_store_double(c->out, op[0] + j * os[0], c->root ? sqrt(x) : x);
    }
}

/* logsumexp: log of the sum of exp(x - m), plus m (operand 2, a float64 max; 0 where inf) */
static inline double lse_shift(double m) { return isinf(m) ? 0.0 : m; }
static void fin_lse(void *ctx, const sg_rval *v, const int64_t *idx, int64_t n, int64_t count,
                    char *const *op, const int64_t *os) {
    const rctx *c = ctx;
    (void)idx, (void)count;
    for (int64_t j = 0; j < n; j++) {
        double m = lse_shift(*(const double *)(op[2] + j * os[2]));
        sg_store_double(c->out, op[0] + j * os[0], log(v[j].f) + m);
    }
}

static void fin_arg_f(void *ctx, const sg_rval *v, const int64_t *idx, int64_t n,
                      int64_t count, char *const *op, const int64_t *os) {
    const rctx *c = ctx;
    (void)count;
    for (int64_t j = 0; j < n; j++) {
        if (c->values >= 0) sg_store_double(c->out, op[c->values] + j * os[c->values], v[j].f);
        *(int64_t *)(op[c->indices] + j * os[c->indices]) = idx[j] < 0 ? 0 : idx[j];
    }
}

static void fin_arg_i(void *ctx, const sg_rval *v, const int64_t *idx, int64_t n,
                      int64_t count, char *const *op, const int64_t *os) {
    const rctx *c = ctx;
    (void)count;
    for (int64_t j = 0; j < n; j++) {
        if (c->values >= 0) store_i(c->out, op[c->values] + j * os[c->values], v[j].i);
        *(int64_t *)(op[c->indices] + j * os[c->indices]) = idx[j] < 0 ? 0 : idx[j];
    }
}

/* ---- the typed loops ------------------------------------------------------------------------- */

/* An associative reduction of lines into ACC. Contiguous lines: NL independent lanes of type
 * BT (the loop the compiler vectorises) over blocks of at most BLK elements; each block's lanes
 * are folded pairwise and the result joins the line's total in ACC, a cascade that keeps
 * float32 lanes accurate (BLK / NL additions each) and double totals exact enough. Strided
 * lines: one ACC per block. Across outputs (`outer`), groups of ROWS rows are folded in BT
 * before they reach the accumulators. STEP(a, x) folds x into a (and a lane into another); ID
 * is its identity (lanes start from the elements themselves, so need none). */
enum { ROWS = 8 };

/* a[0] = the pairwise fold of a[0, NL), unrolled so that the lanes stay in registers */
#define FOLD(a, NL, STEP)                                                                      \
    do {                                                                                       \
        _Pragma("GCC unroll 8") for (int w_ = (NL) / 2; w_ > 0; w_ /= 2)                       \
            _Pragma("GCC unroll 16") for (int k_ = 0; k_ < w_; k_++) STEP(a[k_], a[k_ + w_]);  \
    } while (0)
#define ASSOC_INNER(NAME, T, ACC, BT, NL, BLK, LOAD, ID, STEP, FIELD, FAST)                       \
    static void NAME##_inner(void *ctx, sg_rval *v, int64_t *idx, const char *in,             \
                             int64_t s, int64_t n, int64_t i0, char *const *op) {              \
        (void)ctx, (void)idx, (void)i0, (void)op;                                               \
        ACC total = (ACC)v->FIELD;                                                              \
        if (s == (int64_t)sizeof(T)) {                                                          \
            const T *restrict x = (const T *)in;                                                \
            int64_t i = 0;                                                                      \
            FAST(x, n, &total, &i);                                                             \
            while (n - i >= NL) {                                                               \
                int64_t m = n - i < BLK ? (n - i) / NL * NL : BLK;                              \
                BT      a[NL];                                                                  \
                for (int k = 0; k < NL; k++) a[k] = (BT)LOAD(x[i + k]);                         \
                for (int64_t b = NL; b < m; b += NL)                                            \
                    for (int k = 0; k < NL; k++) STEP(a[k], (BT)LOAD(x[i + b + k]));            \
                FOLD(a, NL, STEP);                                                              \
                STEP(total, (ACC)a[0]);                                                         \
                i += m;                                                                         \
            }                                                                                   \
            for (; i < n; i++) STEP(total, (ACC)LOAD(x[i]));                                    \
        } else {                                                                                \
            while (n > 0) {                                                                     \
                int64_t m = n < BLK ? n : BLK;                                                  \
                ACC     a = ID;                                                                 \
                for (int64_t i = 0; i < m; i++) STEP(a, (ACC)LOAD(*(const T *)(in + i * s)));   \
                STEP(total, a);                                                                 \
                in += m * s;                                                                    \
                n -= m;                                                                         \
            }                                                                                   \
        }                                                                                       \
        v->FIELD = total;                                                                       \
    }
#define ASSOC_LOOPS(NAME, T, ACC, BT, NL, BLK, LOAD, ID, STEP, FIELD, FAST)                       \
    ASSOC_INNER(NAME, T, ACC, BT, NL, BLK, LOAD, ID, STEP, FIELD, FAST)                            \
    ASSOC_OUTER(NAME, T, ACC, BT, LOAD, STEP, FIELD)
#define ASSOC_OUTER(NAME, T, ACC, BT, LOAD, STEP, FIELD)                                          \
    static void NAME##_outer(void *ctx, sg_rval *v, int64_t *idx, const char *in, int64_t s,  \
                             int64_t n, int64_t rs, int64_t rows, int64_t i0, char *const *op,  \
                             const int64_t *os) {                                              \
        (void)ctx, (void)idx, (void)i0, (void)op, (void)os;                                     \
        ACC    *restrict acc = &v->FIELD;                                                       \
        int64_t r = 0;                                                                          \
        if (s == (int64_t)sizeof(T)) {                                                          \
            /* ROWS rows folded in BT first: one update of the accumulators per group */        \
            for (; r + ROWS <= rows; r += ROWS, in += ROWS * rs) {                              \
                const T *restrict x = (const T *)in;                                            \
                int64_t           e = rs / (int64_t)sizeof(T);                                  \
                for (int64_t j = 0; j < n; j++) {                                               \
                    BT t = (BT)LOAD(x[j]);                                                      \
                    for (int g = 1; g < ROWS; g++) STEP(t, (BT)LOAD(x[g * e + j]));             \
                    STEP(acc[j], (ACC)t);                                                       \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        for (; r < rows; r++, in += rs)                                                         \
            for (int64_t j = 0; j < n; j++) STEP(acc[j], (ACC)LOAD(*(const T *)(in + j * s)));  \
    }

/* FAST(x, n, &total, &i) in a loop above: where it can, it runs the loop's first blocks itself
 * and advances i past them; NO_FAST leaves everything to the loop. */
#define NO_FAST(x, n, total, i) ((void)0)

/* The float32 sum's blocks (32 lanes, blocks of 256, the pairwise fold, double totals: the
 * loop above, same operations in the same order, so the same bits) in AVX-512 or AVX2
 * registers. Rationale: gcc's SSE2 version of that loop reads about 0.6 of what memcpy moves,
 * these read at memory speed. */
#ifdef SG_VM_X86
SG_VM_AVX512 static void sum_f32_blocks_avx512(const float *x, int64_t n, double *total,
                                               int64_t *done) {
    double  t = *total;
    int64_t i = 0;
    while (n - i >= 32) {
        int64_t m = n - i < 256 ? (n - i) / 32 * 32 : 256;
        __m512  a0 = _mm512_loadu_ps(x + i), a1 = _mm512_loadu_ps(x + i + 16);
        for (int64_t b = 32; b < m; b += 32) {
            a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i + b));
            a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + i + b + 16));
        }
        a0 = _mm512_add_ps(a0, a1);
        __m256 h = _mm256_add_ps(_mm512_castps512_ps256(a0),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a0), 1)));
        __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
        q = _mm_add_ps(q, _mm_movehl_ps(q, q));
        q = _mm_add_ss(q, _mm_shuffle_ps(q, q, 1));
        t += (double)_mm_cvtss_f32(q);
        i += m;
    }
    *total = t;
    *done = i;
}
SG_VM_AVX2 static void sum_f32_blocks_avx2(const float *x, int64_t n, double *total,
                                           int64_t *done) {
    double  t = *total;
    int64_t i = 0;
    while (n - i >= 32) {
        int64_t m = n - i < 256 ? (n - i) / 32 * 32 : 256;
        __m256  a0 = _mm256_loadu_ps(x + i), a1 = _mm256_loadu_ps(x + i + 8);
        __m256  a2 = _mm256_loadu_ps(x + i + 16), a3 = _mm256_loadu_ps(x + i + 24);
        for (int64_t b = 32; b < m; b += 32) {
            a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i + b));
            a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + b + 8));
            a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + b + 16));
            a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + b + 24));
        }
        a0 = _mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a1, a3)); /* w = 16, then 8 */
        __m128 q = _mm_add_ps(_mm256_castps256_ps128(a0), _mm256_extractf128_ps(a0, 1));
        q = _mm_add_ps(q, _mm_movehl_ps(q, q));
        q = _mm_add_ss(q, _mm_shuffle_ps(q, q, 1));
        t += (double)_mm_cvtss_f32(q);
        i += m;
    }
    *total = t;
    *done = i;
}
#endif
static void sum_f32_blocks_base(const float *x, int64_t n, double *total, int64_t *done) {
    (void)x, (void)n, (void)total;
    *done = 0; /* the loop itself */
}
typedef void sum_blocks_fn(const float *, int64_t, double *, int64_t *);
SG_VM_PICK(sum_f32_blocks, sum_blocks_fn, (const float *x, int64_t n, double *total, int64_t *done),
           (x, n, total, done))
#define SUM_FAST_f32(x, n, total, i) sum_f32_blocks(x, n, total, i)
#define SUM_FAST_f16                 NO_FAST
#define SUM_FAST_bf16                NO_FAST
#define SUM_FAST_f64                 NO_FAST

/* X(suffix, C type, loader, lane type of exact max/min) per input dtype of a kind */
#define FOR_FLOAT_IN(X)                                                                        \
    X(f16, sg_half, LOAD_HALF, float) X(bf16, sg_bf16, LOAD_BF16, float)                       \
    X(f32, float, LOAD_PLAIN, float) X(f64, double, LOAD_PLAIN, double)
#define FOR_INT_IN(X)                                                                          \
    X(u8, uint8_t, LOAD_PLAIN, uint8_t) X(i8, int8_t, LOAD_PLAIN, int8_t)                      \
    X(i16, int16_t, LOAD_PLAIN, int16_t) X(i32, int32_t, LOAD_PLAIN, int32_t)                  \
    X(i64, int64_t, LOAD_PLAIN, int64_t) X(b8, uint8_t, LOAD_PLAIN, uint8_t)

/* integers wrap: their sums and products accumulate as uint64 (the value as int64 first) */
#define LOAD_WRAP(x) ((uint64_t)(int64_t)(x))

/* Sums of float32, float16 and bfloat16 run in float32 lanes over blocks of 256 (as aten's
 * cascade sums do), double from block to block; float64 in double lanes. */
#define SUM_BT_f16  float
#define SUM_BT_bf16 float
#define SUM_BT_f32  float
#define SUM_BT_f64  double
#define SUM_NL_f16  32
#define SUM_NL_bf16 32
#define SUM_NL_f32  32
#define SUM_NL_f64  16
#define SUM_BLK_f16  256
#define SUM_BLK_bf16 256
#define SUM_BLK_f32  256
#define SUM_BLK_f64  4096

/* Floating max and min along contiguous lines: lanes take the plain select (x86's maxps and
 * minps) and a sticky mask records NaNs beside them, three vector operations an element where
 * the NaN-propagating select takes six; a block with a NaN gives NaN. MT: an integer type as
 * wide as BT, for the mask. */
#define EXTREMUM_INNER(NAME, T, BT, MT, LOAD, CMP, STEP)                                          \
    static void NAME##_inner(void *ctx, sg_rval *v, int64_t *idx, const char *in,             \
                             int64_t s, int64_t n, int64_t i0, char *const *op) {              \
        (void)ctx, (void)idx, (void)i0, (void)op;                                               \
        double total = v->f;                                                                    \
        if (s == (int64_t)sizeof(T)) {                                                          \
            const T *restrict x = (const T *)in;                                                \
            int64_t i = 0;                                                                      \
            while (n - i >= 32) {                                                               \
                int64_t m = n - i < 4096 ? (n - i) / 32 * 32 : 4096;                            \
                BT      a[32];                                                                  \
                MT      nan[32];                                                                \
                for (int k = 0; k < 32; k++) {                                                  \
                    BT e = (BT)LOAD(x[i + k]);                                                  \
                    a[k] = e, nan[k] = -(MT)(e != e);                                           \
                }                                                                               \
                for (int64_t b = 32; b < m; b += 32)                                            \
                    for (int k = 0; k < 32; k++) {                                              \
                        BT e = (BT)LOAD(x[i + b + k]);                                          \
                        a[k] = a[k] CMP e ? a[k] : e;                                           \
                        nan[k] |= -(MT)(e != e);                                                \
                    }                                                                           \
                _Pragma("GCC unroll 8") for (int w = 16; w > 0; w /= 2)                         \
                    _Pragma("GCC unroll 16") for (int k = 0; k < w; k++) {                      \
                        a[k] = a[k] CMP a[k + w] ? a[k] : a[k + w];                             \
                        nan[k] |= nan[k + w];                                                   \
                    }                                                                           \
                STEP(total, nan[0] ? (double)NAN : (double)a[0]);                               \
                i += m;                                                                         \
            }                                                                                   \
            for (; i < n; i++) STEP(total, (double)LOAD(x[i]));                                 \
        } else {                                                                                \
            for (int64_t i = 0; i < n; i++) STEP(total, (double)LOAD(*(const T *)(in + i * s))); \
        }                                                                                       \
        v->f = total;                                                                           \
    }

#define MASK_float  int32_t
#define MASK_double int64_t
#define DEF_FLOAT_ASSOC(SUF, T, LOAD, XT)                                                      \
    ASSOC_LOOPS(sum_##SUF, T, double, SUM_BT_##SUF, SUM_NL_##SUF, SUM_BLK_##SUF, LOAD, 0,       \
                STEP_ADD, f, SUM_FAST_##SUF)                                                    \
    ASSOC_LOOPS(prod_##SUF, T, double, double, 8, 4096, LOAD, 1, STEP_MUL, f, NO_FAST)         \
    EXTREMUM_INNER(max_##SUF, T, XT, MASK_##XT, LOAD, >, STEP_FMAX)                             \
    EXTREMUM_INNER(min_##SUF, T, XT, MASK_##XT, LOAD, <, STEP_FMIN)                             \
    ASSOC_OUTER(max_##SUF, T, double, XT, LOAD, STEP_FMAX, f)                                   \
    ASSOC_OUTER(min_##SUF, T, double, XT, LOAD, STEP_FMIN, f)
FOR_FLOAT_IN(DEF_FLOAT_ASSOC)

#define DEF_INT_ASSOC(SUF, T, LOAD, XT)                                                        \
    ASSOC_LOOPS(sum_##SUF, T, uint64_t, uint64_t, 8, 4096, LOAD_WRAP, 0, STEP_ADD, u, NO_FAST) \
    ASSOC_LOOPS(prod_##SUF, T, uint64_t, uint64_t, 8, 4096, LOAD_WRAP, 1, STEP_MUL, u, NO_FAST)\
    ASSOC_LOOPS(max_##SUF, T, int64_t, XT, 16, 4096, LOAD, INT64_MIN, STEP_IMAX, i, NO_FAST)   \
    ASSOC_LOOPS(min_##SUF, T, int64_t, XT, 16, 4096, LOAD, INT64_MAX, STEP_IMIN, i, NO_FAST)
FOR_INT_IN(DEF_INT_ASSOC)

/* Reductions with the position of the winner (argmax, max.dim): the first strictly better
 * element wins, and the first NaN beats everything. Contiguous lines go by blocks: the block's
 * extremum in lanes of BT (vectorised, NaN-propagating), and only where it beats the best so
 * far a search for its first position (the element found is kept, so that -0.0 and 0.0 keep
 * their own sign). Across outputs, branch-free selects. */
enum { ARG_BLOCK = 1024 };
#define SAME_AS(e, b) ((b) != (b) ? (e) != (e) : (e) == (b))
#define ARG_LOOPS(NAME, T, ACC, BT, LOAD, BETTER, STEP, FIELD)                                    \
    /* the extremum of x[0, m), m a multiple of 32 (32 lanes: gcc vectorises them, not 16) */  \
    static BT NAME##_block(const T *restrict x, int64_t m) {                                    \
        BT a[32];                                                                               \
        for (int k = 0; k < 32; k++) a[k] = (BT)LOAD(x[k]);                                     \
        for (int64_t b = 32; b < m; b += 32)                                                    \
            for (int k = 0; k < 32; k++) STEP(a[k], (BT)LOAD(x[b + k]));                        \
        FOLD(a, 32, STEP);                                                                      \
        return a[0];                                                                            \
    }                                                                                           \
    static void NAME##_inner(void *ctx, sg_rval *v, int64_t *idx, const char *in,             \
                             int64_t s, int64_t n, int64_t i0, char *const *op) {              \
        (void)ctx, (void)op;                                                                    \
        if (n <= 0) return;                                                                     \
        int64_t i = 0, bi = *idx;                                                               \
        ACC     best = (ACC)v->FIELD;                                                           \
        if (bi < 0) best = (ACC)LOAD(*(const T *)in), bi = i0, i = 1;                           \
        if (s == (int64_t)sizeof(T)) {                                                          \
            const T *restrict x = (const T *)in;                                                \
            while (n - i >= 32) {                                                               \
                int64_t m = n - i < ARG_BLOCK ? (n - i) / 32 * 32 : ARG_BLOCK;                  \
                BT      e = NAME##_block(x + i, m);                                             \
                if (BETTER((ACC)e, best)) {                                                     \
                    int64_t k = 0;                                                              \
                    while (!SAME_AS((BT)LOAD(x[i + k]), e)) k++;                                \
                    best = (ACC)LOAD(x[i + k]), bi = i0 + i + k;                                \
                }                                                                               \
                i += m;                                                                         \
            }                                                                                   \
            for (; i < n; i++) {                                                                \
                ACC e = (ACC)LOAD(x[i]);                                                        \
                if (BETTER(e, best)) best = e, bi = i0 + i;                                     \
            }                                                                                   \
        } else {                                                                                \
            for (; i < n; i++) {                                                                \
                ACC e = (ACC)LOAD(*(const T *)(in + i * s));                                    \
                if (BETTER(e, best)) best = e, bi = i0 + i;                                     \
            }                                                                                   \
        }                                                                                       \
        v->FIELD = best;                                                                        \
        *idx = bi;                                                                              \
    }                                                                                           \
    static void NAME##_outer(void *ctx, sg_rval *v, int64_t *idx, const char *in, int64_t s,  \
                             int64_t n, int64_t rs, int64_t rows, int64_t i0, char *const *op,  \
                             const int64_t *os) {                                              \
        (void)ctx, (void)op, (void)os;                                                          \
        ACC     *restrict acc = &v->FIELD;                                                      \
        int64_t *restrict ix = idx;                                                             \
        for (int64_t r = 0; r < rows; r++, in += rs)                                            \
            for (int64_t j = 0; j < n; j++) {                                                   \
                ACC  e = (ACC)LOAD(*(const T *)(in + j * s)), c = acc[j];                       \
                bool take = (ix[j] < 0) | BETTER(e, c);                                         \
                acc[j] = take ? e : c;                                                          \
                ix[j] = take ? i0 + r : ix[j];                                                  \
            }                                                                                   \
    }

#define DEF_FLOAT_ARG(SUF, T, LOAD, XT)                                                        \
    ARG_LOOPS(argmax_##SUF, T, double, XT, LOAD, ARG_BETTER_MAX, STEP_FMAX, f)                  \
    ARG_LOOPS(argmin_##SUF, T, double, XT, LOAD, ARG_BETTER_MIN, STEP_FMIN, f)
FOR_FLOAT_IN(DEF_FLOAT_ARG)
#define DEF_INT_ARG(SUF, T, LOAD, XT)                                                          \
    ARG_LOOPS(argmax_##SUF, T, int64_t, XT, LOAD, IBETTER_MAX, STEP_IMAX, i)                    \
    ARG_LOOPS(argmin_##SUF, T, int64_t, XT, LOAD, IBETTER_MIN, STEP_IMIN, i)
FOR_INT_IN(DEF_INT_ARG)

/* Loops that read a per-output parameter (operand 2, float64) and add up TERM(x, p) in lanes
 * of BT: the squared deviations from a mean (var, in double) and exp(x - max) (logsumexp: in
 * float32 with the vectorisable exp for the 32-bit-or-narrower floats, in double otherwise). */
#define PARAM_LOOPS(NAME, T, BT, LOAD, PREP, TERM)                                                \
    static void NAME##_inner(void *ctx, sg_rval *v, int64_t *idx, const char *in,             \
                             int64_t s, int64_t n, int64_t i0, char *const *op) {              \
        (void)ctx, (void)idx, (void)i0;                                                         \
        const BT p = (BT)PREP(*(const double *)op[2]);                                          \
        double   total = v->f;                                                                  \
        if (s == (int64_t)sizeof(T)) {                                                          \
            const T *restrict x = (const T *)in;                                                \
            int64_t i = 0;                                                                      \
            while (n - i >= 16) {                                                               \
                int64_t m = n - i < 1024 ? (n - i) / 16 * 16 : 1024;                            \
                BT      a[16];                                                                  \
                for (int k = 0; k < 16; k++) a[k] = TERM((BT)LOAD(x[i + k]), p);                \
                for (int64_t b = 16; b < m; b += 16)                                            \
                    for (int k = 0; k < 16; k++) a[k] += TERM((BT)LOAD(x[i + b + k]), p);       \
                FOLD(a, 16, STEP_ADD);                                                          \
                total += (double)a[0];                                                          \
                i += m;                                                                         \
            }                                                                                   \
            for (; i < n; i++) total += (double)TERM((BT)LOAD(x[i]), p);                        \
        } else {                                                                                \
            for (int64_t i = 0; i < n; i++)                                                     \
                total += (double)TERM((BT)LOAD(*(const T *)(in + i * s)), p);                   \
        }                                                                                       \
        v->f = total;                                                                           \
    }                                                                                           \
    static void NAME##_outer(void *ctx, sg_rval *v, int64_t *idx, const char *in, int64_t s,  \
                             int64_t n, int64_t rs, int64_t rows, int64_t i0, char *const *op,  \
                             const int64_t *os) {                                              \
        (void)ctx, (void)idx, (void)i0;                                                         \
        double *restrict acc = &v->f;                                                           \
        for (int64_t r = 0; r < rows; r++, in += rs)                                            \
            for (int64_t j = 0; j < n; j++) {                                                   \
                BT p = (BT)PREP(*(const double *)(op[2] + j * os[2]));                          \
                acc[j] += (double)TERM((BT)LOAD(*(const T *)(in + j * s)), p);                  \
            }                                                                                   \
    }

#define PREP_SAME(m)      (m)
#define TERM_SQDEV(x, m)  (((x) - (m)) * ((x) - (m)))
#define TERM_EXP(x, m)    _Generic((x), float: sg_expf, default: exp)((x) - (m))
#define DEF_PARAM(SUF, T, LOAD, XT)                                                            \
    PARAM_LOOPS(sqdev_##SUF, T, double, LOAD, PREP_SAME, TERM_SQDEV)                           \
    PARAM_LOOPS(sumexp_##SUF, T, XT, LOAD, lse_shift, TERM_EXP)
FOR_FLOAT_IN(DEF_PARAM)

/* ---- reducer tables: one reducer per op and input dtype -------------------------------------- */

typedef const sg_reducer *rtable[SG_DTYPE__END];

#define RED(NAME, SUF, INIT, COMBINE, FIN)                                                     \
    static const sg_reducer NAME##_##SUF##_r = {INIT, NAME##_##SUF##_inner,                    \
                                                NAME##_##SUF##_outer, COMBINE, FIN};
#define DEF_FLOAT_RED(SUF, T, LOAD, XT)                                                            \
    RED(sum, SUF, init_zero_f, add_f, fin_f)                                                   \
    RED(prod, SUF, init_one_f, mul_f, fin_f)                                                   \
    RED(max, SUF, init_ninf, max_f, fin_f)                                                     \
    RED(min, SUF, init_pinf, min_f, fin_f)                                                     \
    RED(argmax, SUF, init_arg, argmax_f, fin_arg_f)                                            \
    RED(argmin, SUF, init_arg, argmin_f, fin_arg_f)                                            \
    RED(sqdev, SUF, init_zero_f, add_f, fin_var)                                               \
    RED(sumexp, SUF, init_zero_f, add_f, fin_lse)
FOR_FLOAT_IN(DEF_FLOAT_RED)
#define DEF_INT_RED(SUF, T, LOAD, XT)                                                              \
    RED(sum, SUF, init_zero_i, add_i, fin_i)                                                   \
    RED(prod, SUF, init_one_i, mul_i, fin_i)                                                   \
    RED(max, SUF, init_min_i, max_i, fin_i)                                                    \
    RED(min, SUF, init_max_i, min_i, fin_i)                                                    \
    RED(argmax, SUF, init_arg, argmax_i, fin_arg_i)                                            \
    RED(argmin, SUF, init_arg, argmin_i, fin_arg_i)
FOR_INT_IN(DEF_INT_RED)

#define FLOAT_ROW(NAME)                                                                        \
    [SG_FLOAT16] = &NAME##_f16_r, [SG_BFLOAT16] = &NAME##_bf16_r, [SG_FLOAT32] = &NAME##_f32_r, \
    [SG_FLOAT64] = &NAME##_f64_r
#define INT_ROW(NAME)                                                                          \
    [SG_UINT8] = &NAME##_u8_r, [SG_INT8] = &NAME##_i8_r, [SG_INT16] = &NAME##_i16_r,           \
    [SG_INT32] = &NAME##_i32_r, [SG_INT64] = &NAME##_i64_r, [SG_BOOL] = &NAME##_b8_r

/* Rationale: the rows list the dtypes this file has loops for (FOR_FLOAT_IN, FOR_INT_IN); a new
 * dtype needs loops here before it needs a row. */
_Static_assert(SG_DTYPE__COUNT == 12, "the reducer tables above need a look for a new dtype");
static const rtable sum_t = {FLOAT_ROW(sum), INT_ROW(sum)};
static const rtable prod_t = {FLOAT_ROW(prod), INT_ROW(prod)};
static const rtable max_t = {FLOAT_ROW(max), INT_ROW(max)};
static const rtable min_t = {FLOAT_ROW(min), INT_ROW(min)};
static const rtable argmax_t = {FLOAT_ROW(argmax), INT_ROW(argmax)};
static const rtable argmin_t = {FLOAT_ROW(argmin), INT_ROW(argmin)};
static const rtable sqdev_t = {FLOAT_ROW(sqdev)};
static const rtable sumexp_t = {FLOAT_ROW(sumexp)};

/* ---- running a reduction --------------------------------------------------------------------- */

/* The dtype the loops must read for a reduction into `out` that casts its input to `out` first
 * (sum, prod): the input's own where that cast is exact or wraps alike, else `out`. */
static sg_dtype read_dtype(sg_dtype in, sg_dtype out) {
    if (sg_dtype_is_integral(out, true)) return sg_dtype_is_integral(in, true) ? in : out;
    if (in == out) return in;
    if (out == SG_FLOAT64) return out; /* summed in double, as aten casts first */
    if (out == SG_FLOAT32) return in == SG_FLOAT16 || in == SG_BFLOAT16 ? in : out;
    return out;
}

/* Runs reducer `red` of self (read as `read`, cast where it is not) into out (already shaped,
 * see sg_reduce_shape_out) and the extra operands (shaped like out, in keepdim form or not). */
static sg_status reduce_into(const char *op, const sg_reducer *red, rctx *c, sg_tensor *self,
                             sg_dtype read, const sg_rdims *r, bool keepdim, sg_tensor *out,
                             sg_tensor *const *extra, int32_t nextra) {
    if (!red) return sg_not_implemented(op, read);
    sg_tensor *x = NULL, *views[SG_ITER_MAX] = {NULL}, *res = NULL;
    sg_status  st;
    if (self->device.type != SG_DEV_CPU)
        return sg_error(SG_EINVAL, "%s: expected a CPU tensor, got one on %s", op,
                        sg_device_type_name((sg_device_type)self->device.type));
    if (read == dtype_of(self)) x = sg_tensor_retain(self); /* read where it lies */
    else if ((st = sg_cast(self, read, &x))) return st;
    st = sg_reduce_keepdim_view(out, r, self->ndim, keepdim, &views[0]);
    for (int32_t i = 0; !st && i < nextra; i++)
        st = sg_reduce_keepdim_view(extra[i], r, self->ndim, keepdim, &views[1 + i]);
    if (!st) {
        sg_iter      it;
        sg_iter_spec spec = {.op = op, .out = views[0], .in = {x}, .nin = 1 + nextra,
                             .compute = read, .result = dtype_of(out), .out_dtype = dtype_of(out)};
        for (int32_t i = 0; i < nextra; i++) spec.in[1 + i] = views[1 + i];
        c->out = dtype_of(out);
        if (!(st = sg_iter_build_reduce(&it, &spec, &res))) {
            sg_iter_reduce(&it, red, c);
            st = sg_iter_finish(&it, &res);
        }
    }
    sg_tensor_release(res);
    for (int32_t i = 0; i <= nextra; i++) sg_tensor_release(views[i]);
    sg_tensor_release(x);
    return st;
}

/* ---- sum, mean, prod ------------------------------------------------------------------------- */

/* sum and prod: the input cast to the result dtype, then reduced */
static sg_status sum_like(const char *op, const rtable *t, sg_tensor *self, const sg_rdims *r,
                          bool keepdim, sg_tensor *out, bool mean) {
    sg_status st;
    sg_dtype  res = dtype_of(out);
    if ((st = sg_reduce_no_complex(op, self)) || (st = sg_reduce_no_complex(op, out))) return st;
    if ((st = sg_reduce_shape_out(out, self, r, keepdim))) return st;
    sg_dtype read = read_dtype(dtype_of(self), res);
    rctx     c = {.mean = mean, .values = -1};
    return reduce_into(op, (*t)[read], &c, self, read, r, keepdim, out, NULL, 0);
}

static sg_status sum_meta(sg_tensor *self, const sg_int_list *dim, bool keepdim,
                          const sg_dtype *dtype, sg_meta *m) {
    sg_rdims  r;
    sg_status st = sg_reduce_dims_list(self, dim, &r);
    return st ? st
              : fill_meta(self, &r, keepdim,
                          dtype ? *dtype : sg_reduce_int_to_long(dtype_of(self)), m);
}

static sg_status sum_out(sg_keyset ks, sg_tensor *self, const sg_int_list *dim, bool keepdim,
                         const sg_dtype *dtype, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_rdims  r;
    sg_status st = sg_reduce_sum_args(self, dim, dtype, out, &r);
    if (!st) st = sum_like("sum", &sum_t, self, &r, keepdim, out, false);
    return sg_reduce_give(st, out, ret);
}

static sg_status sum_all(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype, sg_tensor **ret) {
    (void)ks;
    sg_int_list all = {NULL, 0};
    return aten_sum_dim_IntList(self, &all, false, dtype, ret);
}

static sg_status mean_meta(sg_tensor *self, const sg_int_list *dim, bool keepdim,
                           const sg_dtype *dtype, sg_meta *m) {
    sg_rdims  r;
    sg_status st = sg_reduce_mean_dtype(self, dtype);
    if (!st) st = sg_reduce_dims_list(self, dim, &r);
    return st ? st : fill_meta(self, &r, keepdim, dtype ? *dtype : dtype_of(self), m);
}

static sg_status mean_out(sg_keyset ks, sg_tensor *self, const sg_int_list *dim, bool keepdim,
                          const sg_dtype *dtype, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_rdims  r;
    sg_status st = sg_reduce_mean_args(self, dim, dtype, out, &r);
    if (!st) st = sum_like("mean", &sum_t, self, &r, keepdim, out, true);
    return sg_reduce_give(st, out, ret);
}

static sg_status mean_all(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype, sg_tensor **ret) {
    (void)ks;
    sg_int_list all = {NULL, 0};
    return aten_mean_dim(self, &all, false, dtype, ret);
}

static sg_status mean_dtype_out(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype,
                                sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_int_list all = {NULL, 0};
    return aten_mean_out(self, &all, false, dtype, out, ret);
}

static sg_status prod_all(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype, sg_tensor **ret) {
    (void)ks;
    sg_rdims   r;
    sg_tensor *out = NULL;
    sg_status  st = sg_reduce_dims_list(self, NULL, &r);
    if (!st)
        st = sg_reduce_new_result(self, &r, false,
                                  dtype ? *dtype : sg_reduce_int_to_long(dtype_of(self)), SG_CPU,
                                  &out);
    if (!st) st = sum_like("prod", &prod_t, self, &r, false, out, false);
    return sg_reduce_give_new(st, out, ret);
}

static sg_status prod_meta(sg_tensor *self, int64_t dim, bool keepdim, const sg_dtype *dtype,
                           sg_meta *m) {
    sg_rdims  r;
    sg_status st = sg_check_wrap_dim(&dim, self->ndim);
    if (st) return st;
    sg_reduce_dims_one(self, dim, &r);
    return fill_meta(self, &r, keepdim, dtype ? *dtype : sg_reduce_int_to_long(dtype_of(self)),
                     m);
}

static sg_status prod_out(sg_keyset ks, sg_tensor *self, int64_t dim, bool keepdim,
                          const sg_dtype *dtype, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_rdims  r;
    sg_status st = sg_reduce_prod_args(self, &dim, dtype, out, &r);
    if (!st) st = sum_like("prod", &prod_t, self, &r, keepdim, out, false);
    return sg_reduce_give(st, out, ret);
}

/* ---- amax, amin, max(), min() ---------------------------------------------------------------- */

static sg_status extremum_run(const char *op, const rtable *t, sg_tensor *self,
                              const sg_rdims *r, bool keepdim, sg_tensor *out) {
    sg_status st;
    if ((st = sg_reduce_no_complex(op, self)) ||
        (st = sg_reduce_shape_out(out, self, r, keepdim)))
        return st;
    rctx c = {.values = -1};
    return reduce_into(op, (*t)[dtype_of(self)], &c, self, dtype_of(self), r, keepdim, out,
                       NULL, 0);
}

#define AMAX_LIKE(NAME, TABLE)                                                                 \
    static sg_status NAME##_meta(sg_tensor *self, sg_int_list dim, bool keepdim, sg_meta *m) { \
        sg_rdims  r;                                                                           \
        sg_status st = sg_reduce_dims_list(self, &dim, &r);                                    \
        if (!st) st = sg_reduce_check_nonempty(#NAME "()", self, dim.items, dim.len);          \
        return st ? st : fill_meta(self, &r, keepdim, dtype_of(self), m);                      \
    }                                                                                          \
    static sg_status NAME##_out(sg_keyset ks, sg_tensor *self, sg_int_list dim, bool keepdim,  \
                                sg_tensor *out, sg_tensor **ret) {                             \
        (void)ks;                                                                              \
        sg_rdims  r;                                                                           \
        sg_status st = sg_reduce_amax_args(#NAME "()", self, dim, out, &r);                    \
        if (!st) st = extremum_run(#NAME, &TABLE, self, &r, keepdim, out);                     \
        return sg_reduce_give(st, out, ret);                                                   \
    }
AMAX_LIKE(amax, max_t)
AMAX_LIKE(amin, min_t)

#define ALL_EXTREMUM(NAME, TABLE)                                                              \
    static sg_status NAME##_unary_out(sg_keyset ks, sg_tensor *self, sg_tensor *out,           \
                                      sg_tensor **ret) {                                       \
        (void)ks;                                                                              \
        sg_rdims  r;                                                                           \
        sg_status st = sg_reduce_all_args(#NAME "()", self, out, &r);                          \
        if (!st) st = extremum_run(#NAME, &TABLE, self, &r, false, out);                       \
        return sg_reduce_give(st, out, ret);                                                   \
    }                                                                                          \
    static sg_status NAME##_all(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {              \
        sg_tensor *out = NULL;                                                                 \
        sg_status  st = sg_reduce_check_nonempty(#NAME "()", self, NULL, 0);                   \
        if (!st) st = sg_tensor_empty(NULL, 0, dtype_of(self), SG_CPU, &out);                  \
        sg_tensor *r = NULL;                                                                   \
        if (!st) st = NAME##_unary_out(ks, self, out, &r);                                     \
        sg_tensor_release(r);                                                                  \
        return sg_reduce_give_new(st, out, ret);                                               \
    }
ALL_EXTREMUM(max, max_t)
ALL_EXTREMUM(min, min_t)

/* ---- max.dim, min.dim, argmax, argmin -------------------------------------------------------- */

/* values (may be NULL) and indices of the best element along the dims of r */
static sg_status arg_run(const char *op, const rtable *t, sg_tensor *self, const sg_rdims *r,
                         bool keepdim, sg_tensor *values, sg_tensor *indices) {
    sg_tensor *x = NULL;
    sg_status  st = sg_reduce_arg_prepare(op, self, r, keepdim, values, indices, &x);
    if (st) return st;
    rctx c = {.values = values ? 0 : -1, .indices = values ? 2 : 0};
    if (values)
        st = reduce_into(op, (*t)[dtype_of(x)], &c, x, dtype_of(x), r, keepdim, values,
                         &indices, 1);
    else
        st = reduce_into(op, (*t)[dtype_of(x)], &c, x, dtype_of(x), r, keepdim, indices, NULL,
                         0);
    sg_tensor_release(x);
    return st;
}

#define MAX_DIM(NAME, TABLE)                                                                   \
    static sg_status NAME##_dim_meta(sg_tensor *self, int64_t dim, bool keepdim, sg_meta *m) { \
        sg_rdims  r;                                                                           \
        sg_status st = sg_reduce_dim_check(#NAME "()", self, &dim);                            \
        if (st) return st;                                                                     \
        sg_reduce_dims_one(self, dim, &r);                                                     \
        fill_meta(self, &r, keepdim, dtype_of(self), &m[0]);                                   \
        return fill_meta(self, &r, keepdim, SG_INT64, &m[1]);                                  \
    }                                                                                          \
    static sg_status NAME##_dim_out(sg_keyset ks, sg_tensor *self, int64_t dim, bool keepdim,  \
                                    sg_tensor *values, sg_tensor *indices,                     \
                                    sg_tensor **ret_values, sg_tensor **ret_indices) {         \
        (void)ks;                                                                              \
        sg_rdims  r;                                                                           \
        sg_status st = sg_reduce_max_dim_args(#NAME "()", self, dim, values, indices, &r);     \
        if (!st) st = arg_run(#NAME, &TABLE, self, &r, keepdim, values, indices);              \
        *ret_values = st ? NULL : sg_tensor_retain(values);                                    \
        *ret_indices = st ? NULL : sg_tensor_retain(indices);                                  \
        return st;                                                                             \
    }
MAX_DIM(max, argmax_t)
MAX_DIM(min, argmin_t)

#define ARG_OP(NAME, TABLE)                                                                     \
    static sg_status NAME##_meta(sg_tensor *self, const int64_t *dim, bool keepdim, sg_meta *m) { \
        sg_rdims  r;                                                                            \
        sg_status st = sg_reduce_arg_dims(#NAME "()", self, dim, &r);                           \
        return st ? st : fill_meta(self, &r, keepdim, SG_INT64, m);                             \
    }                                                                                           \
    static sg_status NAME##_out(sg_keyset ks, sg_tensor *self, const int64_t *dim, bool keepdim, \
                                sg_tensor *out, sg_tensor **ret) {                              \
        (void)ks;                                                                               \
        sg_rdims  r;                                                                            \
        sg_status st = sg_reduce_argmax_args(#NAME "()", #NAME "_cpu", self, dim, out, &r);     \
        if (!st) st = arg_run(#NAME, &TABLE, self, &r, keepdim, NULL, out);                     \
        return sg_reduce_give(st, out, ret);                                                    \
    }
ARG_OP(argmax, argmax_t)
ARG_OP(argmin, argmin_t)

/* ---- var, std -------------------------------------------------------------------------------- */

/* var/std into out (resized), dtype as out's: the mean first (float64), then the squared
 * deviations from it. */
static sg_status var_run(const char *op, sg_tensor *self, const sg_int_list *dim,
                         const sg_scalar *correction, bool keepdim, bool root, sg_tensor *out) {
    sg_rdims  r;
    sg_status st = sg_reduce_var_args(op, self, dim, keepdim, out, &r);
    if (st) return st;
    sg_dtype   read = dtype_of(self); /* every floating dtype has its loops */
    sg_tensor *mean = NULL;
    if ((st = sg_reduce_new_result(self, &r, true, SG_FLOAT64, SG_CPU, &mean))) return st;
    rctx cm = {.mean = true, .values = -1};
    st = reduce_into(op, sum_t[read], &cm, self, read, &r, true, mean, NULL, 0);
    rctx cv = {.root = root, .corr = correction ? sg_scalar_to_double(*correction) : 1.0,
               .values = -1};
    if (!st) st = reduce_into(op, sqdev_t[read], &cv, self, read, &r, keepdim, out, &mean, 1);
    sg_tensor_release(mean);
    return st;
}

#define VAR_OP(NAME, ROOT)                                                                     \
    static sg_status NAME##_correction_out(sg_keyset ks, sg_tensor *self,                      \
                                           const sg_int_list *dim,                             \
                                           const sg_scalar *correction, bool keepdim,          \
                                           sg_tensor *out, sg_tensor **ret) {                  \
        (void)ks;                                                                              \
        return sg_reduce_give(var_run(#NAME, self, dim, correction, keepdim, ROOT, out), out,  \
                              ret);                                                            \
    }                                                                                          \
    static sg_status NAME##_correction(sg_keyset ks, sg_tensor *self, const sg_int_list *dim,  \
                                       const sg_scalar *correction, bool keepdim,              \
                                       sg_tensor **ret) {                                      \
        (void)ks;                                                                              \
        sg_tensor *out = NULL;                                                                 \
        sg_status  st = sg_tensor_empty(NULL, 0, dtype_of(self), SG_CPU, &out);                \
        if (!st) st = var_run(#NAME, self, dim, correction, keepdim, ROOT, out);               \
        return sg_reduce_give_new(st, out, ret);                                               \
    }                                                                                          \
    static sg_status NAME##_unbiased(sg_keyset ks, sg_tensor *self, bool unbiased,             \
                                     sg_tensor **ret) {                                        \
        (void)ks;                                                                              \
        sg_scalar c = sg_scalar_int(unbiased ? 1 : 0);                                         \
        return aten_##NAME##_correction(self, NULL, &c, false, ret);                           \
    }                                                                                          \
    static sg_status NAME##_dim(sg_keyset ks, sg_tensor *self, const sg_int_list *dim,         \
                                bool unbiased, bool keepdim, sg_tensor **ret) {                \
        (void)ks;                                                                              \
        sg_scalar c = sg_scalar_int(unbiased ? 1 : 0);                                         \
        return aten_##NAME##_correction(self, dim, &c, keepdim, ret);                          \
    }                                                                                          \
    static sg_status NAME##_out(sg_keyset ks, sg_tensor *self, const sg_int_list *dim,         \
                                bool unbiased, bool keepdim, sg_tensor *out, sg_tensor **ret) { \
        (void)ks;                                                                              \
        sg_scalar c = sg_scalar_int(unbiased ? 1 : 0);                                         \
        return aten_##NAME##_correction_out(self, dim, &c, keepdim, out, ret);                 \
    }
VAR_OP(var, false)
VAR_OP(std, true)

/* ---- logsumexp ------------------------------------------------------------------------------- */

/* the max (float64, keepdim) first, then the sum of exp(x - max); integers become float32 */
static sg_status lse_run(sg_tensor *self, sg_int_list dim, bool keepdim, sg_tensor *out) {
    sg_rdims  r;
    sg_status st = sg_reduce_lse_args(self, dim, keepdim, out, &r);
    if (st) return st;
    sg_dtype t = dtype_of(self);
    sg_dtype read = sg_dtype_is_floating(t) ? t : SG_FLOAT32;
    sg_tensor *mx = NULL;
    if ((st = sg_reduce_new_result(self, &r, true, SG_FLOAT64, SG_CPU, &mx))) return st;
    rctx cm = {.values = -1};
    st = reduce_into("logsumexp", max_t[read], &cm, self, read, &r, true, mx, NULL, 0);
    rctx cs = {.values = -1};
    if (!st)
        st = reduce_into("logsumexp", sumexp_t[read], &cs, self, read, &r, keepdim, out, &mx, 1);
    sg_tensor_release(mx);
    return st;
}

static sg_status logsumexp_out(sg_keyset ks, sg_tensor *self, sg_int_list dim, bool keepdim,
                               sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return sg_reduce_give(lse_run(self, dim, keepdim, out), out, ret);
}

static sg_status logsumexp_fn(sg_keyset ks, sg_tensor *self, sg_int_list dim, bool keepdim,
                              sg_tensor **ret) {
    (void)ks;
    sg_dtype   t = dtype_of(self);
    sg_tensor *out = NULL;
    sg_status  st = sg_tensor_empty(NULL, 0, sg_dtype_is_integral(t, true) ? SG_FLOAT32 : t,
                                    SG_CPU, &out);
    if (!st) st = lse_run(self, dim, keepdim, out);
    return sg_reduce_give_new(st, out, ret);
}

/* ---- cumsum ---------------------------------------------------------------------------------- */

/* A scan along one dim of contiguous tensors seen as [outer, len, inner]. */
typedef struct scan {
    int64_t outer, len, inner;
} scan;

enum { SCAN_BLOCK = 1024 }; /* lines advanced together where the dim is not innermost */

/* Units [b, e): where the dim is innermost, lines, four at a time so that their dependent
 * additions overlap; otherwise blocks of SCAN_BLOCK neighbouring lines that advance together
 * a row at a time, so that every read is contiguous. x and o may be the same memory (each
 * element is read before it is written). */
#define SCAN_LOOP(SUF, T, ACC, LOAD, STORE)                                                       \
    static void scan_##SUF(const scan *p, const char *xin, char *oin, int64_t b, int64_t e) {   \
        const T *x = (const T *)xin;                                                            \
        T       *o = (T *)oin;                                                                  \
        int64_t  len = p->len;                                                                  \
        if (p->inner == 1) {                                                                    \
            int64_t j = b;                                                                      \
            for (; j + 4 <= e; j += 4) {                                                        \
                const T *x0 = x + j * len, *x1 = x0 + len, *x2 = x1 + len, *x3 = x2 + len;      \
                T       *o0 = o + j * len, *o1 = o0 + len, *o2 = o1 + len, *o3 = o2 + len;      \
                ACC      a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                        \
                for (int64_t i = 0; i < len; i++) {                                             \
                    a0 += (ACC)LOAD(x0[i]), a1 += (ACC)LOAD(x1[i]);                             \
                    a2 += (ACC)LOAD(x2[i]), a3 += (ACC)LOAD(x3[i]);                             \
                    o0[i] = STORE(a0), o1[i] = STORE(a1), o2[i] = STORE(a2), o3[i] = STORE(a3); \
                }                                                                               \
            }                                                                                   \
            for (; j < e; j++) {                                                                \
                ACC a = 0;                                                                      \
                for (int64_t i = 0; i < len; i++) {                                             \
                    a += (ACC)LOAD(x[j * len + i]);                                             \
                    o[j * len + i] = STORE(a);                                                  \
                }                                                                               \
            }                                                                                   \
            return;                                                                             \
        }                                                                                       \
        int64_t nb = (p->inner + SCAN_BLOCK - 1) / SCAN_BLOCK;                                  \
        for (int64_t u = b; u < e; u++) {                                                       \
            int64_t q = u / nb, j0 = (u % nb) * SCAN_BLOCK;                                     \
            int64_t w = p->inner - j0 < SCAN_BLOCK ? p->inner - j0 : SCAN_BLOCK;                \
            const T *xs = x + q * len * p->inner + j0;                                          \
            T       *os = o + q * len * p->inner + j0;                                          \
            ACC      a[SCAN_BLOCK];                                                             \
            for (int64_t j = 0; j < w; j++) a[j] = 0;                                           \
            for (int64_t i = 0; i < len; i++, xs += p->inner, os += p->inner)                   \
                for (int64_t j = 0; j < w; j++) {                                               \
                    a[j] += (ACC)LOAD(xs[j]);                                                   \
                    os[j] = STORE(a[j]);                                                        \
                }                                                                               \
        }                                                                                       \
    }
#define STORE_CAST_F32(a)  ((float)(a))
#define STORE_CAST_F64(a)  (a)
#define STORE_HALF(a)      sg_float_to_half(a)
#define STORE_BF16(a)      sg_float_to_bf16(a)
SCAN_LOOP(f32, float, double, LOAD_PLAIN, STORE_CAST_F32)
SCAN_LOOP(f64, double, double, LOAD_PLAIN, STORE_CAST_F64)
SCAN_LOOP(f16, sg_half, float, LOAD_HALF, STORE_HALF)
SCAN_LOOP(bf16, sg_bf16, float, LOAD_BF16, STORE_BF16)
SCAN_LOOP(u8, uint8_t, uint64_t, LOAD_WRAP, (uint8_t))
SCAN_LOOP(i8, int8_t, uint64_t, LOAD_WRAP, (int8_t))
SCAN_LOOP(i16, int16_t, uint64_t, LOAD_WRAP, (int16_t))
SCAN_LOOP(i32, int32_t, uint64_t, LOAD_WRAP, (int32_t))
SCAN_LOOP(i64, int64_t, uint64_t, LOAD_WRAP, (int64_t))

/* No bool: aten's cumsum_out_cpu has none (a bool input sums into int64 unless dtype= or an
 * in-place or out= bool result asks for bool, which it refuses). */
typedef void (*scan_fn)(const scan *p, const char *x, char *o, int64_t b, int64_t e);
#define SCAN_ENTRY(NAME, NUM, KIND, SIZE, T, SUF, ...) [SG_##NAME] = scan_##SUF,
static const scan_fn scans[SG_DTYPE__END] = {SG_DTYPES_WHERE(SCAN_ENTRY, 0, 1, 1, 1, 1, 0)};

/* Runs fn over every unit, in parallel where the work is large (a single line is serial). */
static void scan_units(scan_fn fn, const scan *p, const char *x, char *o) {
    int64_t units = p->inner == 1 ? p->outer
                                  : p->outer * ((p->inner + SCAN_BLOCK - 1) / SCAN_BLOCK);
#ifdef _OPENMP
    if (p->outer * p->len * p->inner >= SG_GRAIN && units > 1 && omp_get_max_threads() > 1 &&
        !omp_in_parallel()) {
        int nt = units < omp_get_max_threads() ? (int)units : omp_get_max_threads();
#pragma omp parallel num_threads(nt)
        {
            int64_t n = omp_get_num_threads(), t = omp_get_thread_num();
            int64_t chunk = (units + n - 1) / n, b = t * chunk;
            int64_t e = b + chunk < units ? b + chunk : units;
            if (b < e) fn(p, x, o, b, e);
        }
        return;
    }
#endif
    fn(p, x, o, 0, units);
}

/* out (of self's shape, dtype r) = the running sums of self along dim (wrapped) */
static sg_status cumsum_run(sg_tensor *self, int64_t dim, sg_dtype r, sg_tensor *out) {
    sg_status st;
    if (sg_dtype_is_complex(r) || !scans[r]) return sg_not_implemented("cumsum_out_cpu", r);
    if (self->device.type != SG_DEV_CPU || out->device.type != SG_DEV_CPU)
        return sg_error(SG_EINVAL, "cumsum: expected CPU tensors");
    scan p;
    if ((st = sg_reduce_lines(self, dim, out, &p.outer, &p.len, &p.inner))) return st;
    if (sg_tensor_numel(self) == 0) return SG_OK;
    /* the input contiguous in the result's dtype; the output contiguous, and either the input
     * itself or apart from it */
    sg_tensor *x = NULL, *o = NULL;
    if (dtype_of(self) == r) {
        st = sg_tensor_contiguous(self, &x);
    } else if (!(st = sg_tensor_empty(self->sizes, self->ndim, r, SG_CPU, &x))) {
        st = sg_cast_copy_(x, self);
    }
    if (st) {
        sg_tensor_release(x);
        return st;
    }
    bool direct = sg_tensor_is_contiguous(out) &&
                  (out->storage != x->storage || out->offset == x->offset);
    if (direct) o = sg_tensor_retain(out);
    else st = sg_tensor_empty(self->sizes, self->ndim, r, SG_CPU, &o);
    if (!st) {
        scan_units(scans[r], &p, sg_tensor_data(x), sg_tensor_data(o));
        if (!direct) st = sg_tensor_copy_(out, o);
    }
    sg_tensor_release(o);
    sg_tensor_release(x);
    return st;
}

static sg_status cumsum_meta(sg_tensor *self, int64_t dim, const sg_dtype *dtype, sg_meta *m) {
    sg_status st = sg_check_wrap_dim(&dim, self->ndim);
    if (st) return st;
    m->ndim = self->ndim;
    memcpy(m->sizes, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    m->dtype = dtype ? *dtype : sg_reduce_int_to_long(dtype_of(self));
    m->device = self->device;
    m->strided = false;
    return SG_OK;
}

static sg_status cumsum_out(sg_keyset ks, sg_tensor *self, int64_t dim, const sg_dtype *dtype,
                            sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_status st = sg_reduce_cumsum_args(self, &dim, dtype, out, false);
    if (!st) st = cumsum_run(self, dim, dtype_of(out), out);
    return sg_reduce_give(st, out, ret);
}

/* in place: the result keeps self's dtype (a dtype argument must be it) */
static sg_status cumsum_inplace(sg_keyset ks, sg_tensor *self, int64_t dim,
                                const sg_dtype *dtype, sg_tensor **ret) {
    (void)ks;
    sg_status st = sg_reduce_cumsum_args(self, &dim, dtype, self, true);
    if (!st) st = cumsum_run(self, dim, dtype_of(self), self);
    return sg_reduce_give(st, self, ret);
}

/* ---- max.other / min.other: aten's aliases of maximum / minimum ------------------------------ */

static sg_status max_other(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor **ret) {
    (void)ks;
    return aten_maximum(self, other, ret);
}
static sg_status max_other_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                               sg_tensor **ret) {
    (void)ks;
    return aten_maximum_out(self, other, out, ret);
}
static sg_status min_other(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor **ret) {
    (void)ks;
    return aten_minimum(self, other, ret);
}
static sg_status min_other_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                               sg_tensor **ret) {
    (void)ks;
    return aten_minimum_out(self, other, out, ret);
}

/* ---- registration ---------------------------------------------------------------------------- */

sg_status sg_cpu_register_softmax(void);

sg_status sg_cpu_register_reduce(void) {
    SG_REG_STRUCTURED(aten_sum_IntList_out, sum_meta, sum_out);
    SG_REG_STRUCTURED(aten_mean_out, mean_meta, mean_out);
    SG_REG_STRUCTURED(aten_prod_int_out, prod_meta, prod_out);
    SG_REG_STRUCTURED(aten_amax_out, amax_meta, amax_out);
    SG_REG_STRUCTURED(aten_amin_out, amin_meta, amin_out);
    SG_REG_STRUCTURED(aten_max_dim_max, max_dim_meta, max_dim_out);
    SG_REG_STRUCTURED(aten_min_dim_min, min_dim_meta, min_dim_out);
    SG_REG_STRUCTURED(aten_argmax_out, argmax_meta, argmax_out);
    SG_REG_STRUCTURED(aten_argmin_out, argmin_meta, argmin_out);
    SG_REG_STRUCTURED(aten_cumsum_out, cumsum_meta, cumsum_out);
    SG_REG(aten_cumsum_, cumsum_inplace);
    SG_REG(aten_prod, prod_all);
    SG_REG(aten_max, max_all);
    SG_REG(aten_min, min_all);
    SG_REG(aten_max_unary_out, max_unary_out);
    SG_REG(aten_min_unary_out, min_unary_out);
    SG_REG(aten_var_correction, var_correction);
    SG_REG(aten_var_correction_out, var_correction_out);
    SG_REG(aten_std_correction, std_correction);
    SG_REG(aten_std_correction_out, std_correction_out);
    SG_REG(aten_logsumexp, logsumexp_fn);
    SG_REG(aten_logsumexp_out, logsumexp_out);
    SG_REG_EXPLICIT(aten_sum, sum_all);
    SG_REG_EXPLICIT(aten_mean, mean_all);
    SG_REG_EXPLICIT(aten_mean_dtype_out, mean_dtype_out);
    SG_REG_DECOMP(aten_var, var_unbiased);
    SG_REG_DECOMP(aten_var_dim, var_dim);
    SG_REG_DECOMP(aten_var_out, var_out);
    SG_REG_DECOMP(aten_std, std_unbiased);
    SG_REG_DECOMP(aten_std_dim, std_dim);
    SG_REG_DECOMP(aten_std_out, std_out);
    SG_REG_DECOMP(aten_max_other, max_other);
    SG_REG_DECOMP(aten_max_out, max_other_out);
    SG_REG_DECOMP(aten_min_other, min_other);
    SG_REG_DECOMP(aten_min_out, min_other_out);
    return sg_cpu_register_softmax();
}
