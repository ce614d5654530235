/* pointwise.c: elementwise ops on the CPU: arithmetic, comparisons, logical ops, and the
 * unary math functions, each one loop per dtype over the strided iterator. Structured ops
 * register their out kernel and a meta function (the functional and in-place variants then
 * come from the generator's composites); the Scalar overloads wrap the scalar as a 0-dim
 * tensor (aten's wrapped number) and call the Tensor overload.
 *
 * Semantics follow aten: type promotion with wrapped numbers, true division that makes
 * integers floating, floor and trunc division modes, NaN-propagating maximum/minimum, the
 * integer-division-by-zero error, no negation of bool tensors. */
#include "cpu.h"
#include "sg_pointwise_shape.h"

#include <math.h>

#include "vmath.h"

/* What a loop needs beyond its operands. */
typedef struct ew {
    double  af;   /* alpha (add, sub) as a real */
    int64_t ai;   /* and as an integer */
    int     mode; /* div: 0 true, 1 trunc, 2 floor; gelu: 0 none, 1 tanh */
    bool    zero_div; /* set by integer division loops that met a zero divisor */
    sg_dtype narrow;  /* float16/bfloat16 results computed in float32: the quotient is rounded
                         to that type before trunc/floor, as aten does */
    int64_t  decimals; /* round.decimals */
} ew;

/* x rounded to c->narrow (float16 or bfloat16), or x where there is none */
static inline float narrow_to(const ew *c, float x) {
    return c->narrow == SG_FLOAT16 || c->narrow == SG_BFLOAT16 ? (float)sg_round_to(c->narrow, x)
                                                                : x;
}

#define ALPHA(T) _Generic((T)0, float: (T)c->af, double: (T)c->af, default: (T)c->ai)

/* Rationale: exp and what uses it are compute-bound, and the arithmetic loops move more per
 * instruction with wider registers; where the compiler and the C library can
 * pick a function version per CPU at load time (gcc's target_clones on x86-64 with an ifunc
 * capable libc), the arithmetic loops also get AVX2 and AVX-512 versions, and float32 exp,
 * sigmoid and silu versions of their own (vmath.h: FMA, and AVX-512 code by hand). */

/* One loop over an inner line for a binary op on T, writing OT: a contiguous case the
 * compiler vectorises, a scalar-second-operand case, and the general strided case. */
#define BIN(NAME, T, OT, EXPR) BIN_ATTR(NAME, T, OT, EXPR, )
#define BIN_ATTR(NAME, T, OT, EXPR, ATTR)                                                   \
    ATTR static void NAME(void *ctx, char *const *d, const int64_t *s, int64_t n) {         \
        ew *c = ctx;                                                                        \
        (void)c;                                                                            \
        if (s[0] == sizeof(OT) && s[1] == sizeof(T) && s[2] == sizeof(T)) {                 \
            OT *o = (OT *)d[0];                                                             \
            const T *x = (const T *)d[1], *y = (const T *)d[2];                             \
            for (int64_t i = 0; i < n; i++) {                                               \
                T a = x[i], b = y[i];                                                       \
                o[i] = (OT)(EXPR);                                                          \
            }                                                                               \
        } else if (s[0] == sizeof(OT) && s[1] == sizeof(T) && s[2] == 0) {                  \
            OT *o = (OT *)d[0];                                                             \
            const T *x = (const T *)d[1];                                                   \
            const T  b = *(const T *)d[2];                                                  \
            for (int64_t i = 0; i < n; i++) {                                               \
                T a = x[i];                                                                 \
                o[i] = (OT)(EXPR);                                                          \
            }                                                                               \
        } else {                                                                            \
            char *o = d[0], *x = d[1], *y = d[2];                                           \
            for (int64_t i = 0; i < n; i++, o += s[0], x += s[1], y += s[2]) {              \
                T a = *(const T *)x, b = *(const T *)y;                                     \
                *(OT *)o = (OT)(EXPR);                                                      \
            }                                                                               \
        }                                                                                   \
    }

#define UN(NAME, T, OT, EXPR) UN_ATTR(NAME, T, OT, EXPR, )

#define UN_ATTR(NAME, T, OT, EXPR, ATTR)                                                    \
    ATTR static void NAME(void *ctx, char *const *d, const int64_t *s, int64_t n) {         \
        ew *c = ctx;                                                                        \
        (void)c;                                                                            \
        if (s[0] == sizeof(OT) && s[1] == sizeof(T)) {                                      \
            OT *o = (OT *)d[0];                                                             \
            const T *x = (const T *)d[1];                                                   \
            for (int64_t i = 0; i < n; i++) {                                               \
                T a = x[i];                                                                 \
                o[i] = (OT)(EXPR);                                                          \
            }                                                                               \
        } else {                                                                            \
            char *o = d[0], *x = d[1];                                                      \
            for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) {                         \
                T a = *(const T *)x;                                                        \
                *(OT *)o = (OT)(EXPR);                                                      \
            }                                                                               \
        }                                                                                   \
    }

/* ---- binary arithmetic ------------------------------------------------------------------ */

#define DEF_ARITH(E, T)                                                                     \
    BIN_ATTR(add_##T, T, T, a + ALPHA(T) * b, SG_CLONES)                                     \
    BIN_ATTR(sub_##T, T, T, a - ALPHA(T) * b, SG_CLONES)                                     \
    BIN_ATTR(mul_##T, T, T, a * b, SG_CLONES)                                                \
    BIN(max_##T, T, T, (a != a || b != b) ? (a != a ? a : b) : (a > b ? a : b))              \
    BIN(min_##T, T, T, (a != a || b != b) ? (a != a ? a : b) : (a < b ? a : b))              \
    BIN(eq_##T, T, bool, a == b)                                                             \
    BIN(ne_##T, T, bool, a != b)                                                             \
    BIN(lt_##T, T, bool, a < b)                                                              \
    BIN(le_##T, T, bool, a <= b)                                                             \
    BIN(gt_##T, T, bool, a > b)                                                              \
    BIN(ge_##T, T, bool, a >= b)                                                             \
    BIN(land_##T, T, bool, a && b)                                                           \
    BIN(lor_##T, T, bool, a || b)                                                            \
    BIN(lxor_##T, T, bool, !a != !b)                                                         \
    UN(lnot_##T, T, bool, !a)
SG_FOR_REAL(DEF_ARITH)

/* exp, sigmoid and silu: float64 through libm; float32 (and float16/bfloat16, computed in
 * float32) through vmath.h's exp, in one version per instruction set (SG_VM_VERSIONS), picked
 * on first use. The AVX-512 version maps contiguous lines 16 lanes at a time by hand (gcc makes
 * compare-and-blend sequences of the clamps and cannot use vscalefps); the others are plain
 * loops the compiler vectorises, with FMA where the version has it. */
UN(exp_double, double, double, exp(a))
UN(sigmoid_double, double, double, 1 / (1 + exp(-a)))
UN(silu_double, double, double, a / (1 + exp(-a)))

#ifdef SG_VM_X86
/* contiguous lines through vmath.h's 16-lane loops, strided ones element by element */
#define UN_VM512(NAME, EXPR)                                                                \
    SG_VM_AVX512 static void NAME##_float_avx512(void *ctx, char *const *d, const int64_t *s, \
                                                 int64_t n) {                               \
        (void)ctx;                                                                          \
        if (s[0] == sizeof(float) && s[1] == sizeof(float)) {                               \
            sg_vm_##NAME((const float *)d[1], (float *)d[0], n);                            \
            return;                                                                         \
        }                                                                                   \
        char *o = d[0], *x = d[1];                                                          \
        for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) {                             \
            float a = *(const float *)x;                                                    \
            *(float *)o = (EXPR);                                                           \
        }                                                                                   \
    }
UN_VM512(exp, sg_expf_fma(a))
UN_VM512(sigmoid, 1 / (1 + sg_expf_fma(-a)))
UN_VM512(silu, a / (1 + sg_expf_fma(-a)))
#define DEF_EXPF(V, ATTR, EXPF)                                                             \
    UN_ATTR(exp_float_##V, float, float, EXPF(a), ATTR)                                     \
    UN_ATTR(sigmoid_float_##V, float, float, 1 / (1 + EXPF(-a)), ATTR)                      \
    UN_ATTR(silu_float_##V, float, float, a / (1 + EXPF(-a)), ATTR)
DEF_EXPF(avx2, SG_VM_AVX2, sg_expf_fma)
DEF_EXPF(base, , sg_expf)
#else
#define DEF_EXPF(V, ATTR, EXPF)                                                             \
    UN_ATTR(exp_float_##V, float, float, EXPF(a), ATTR)                                     \
    UN_ATTR(sigmoid_float_##V, float, float, 1 / (1 + EXPF(-a)), ATTR)                      \
    UN_ATTR(silu_float_##V, float, float, a / (1 + EXPF(-a)), ATTR)
SG_VM_VERSIONS(DEF_EXPF)
#endif
typedef void vm_loop(void *ctx, char *const *d, const int64_t *s, int64_t n);
#define PICK_LOOP(NAME)                                                                     \
    SG_VM_PICK(NAME, vm_loop, (void *ctx, char *const *d, const int64_t *s, int64_t n),     \
               (ctx, d, s, n))
PICK_LOOP(exp_float)
PICK_LOOP(sigmoid_float)
PICK_LOOP(silu_float)

/* division: true division on floats; trunc and floor modes on any real type */
static inline double floor_div(double a, double b) {
    /* as aten's div_floor_floating: the quotient of fmod's remainder-corrected division */
    if (b == 0) return a / b;
    double mod = fmod(a, b), div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
    double fl = floor(div);
    if (div - fl > 0.5) fl += 1;
    return div != 0 ? fl : copysign(0.0, a / b);
}
#define DEF_FDIV(E, T)                                                                      \
    BIN(div_##T, T, T, a / b)                                                                \
    BIN(divt_##T, T, T, trunc((double)a / (double)b))                                        \
    BIN(divf_##T, T, T, floor_div(a, b))                                                     \
    UN(log_##T, T, T, log(a))                                                                \
    UN(sqrt_##T, T, T, sqrt(a))                                                              \
    UN(rsqrt_##T, T, T, 1 / sqrt(a))                                                         \
    UN(sin_##T, T, T, sin(a))                                                                \
    UN(cos_##T, T, T, cos(a))                                                                \
    UN(tanh_##T, T, T, tanh(a))                                                              \
    UN(erf_##T, T, T, erf(a))                                                                \
    UN(recip_##T, T, T, 1 / a)                                                               \
    UN(gelu_##T, T, T, (T)0.5 * a * (1 + erf(a * (T)0.70710678118654752440)))                \
    UN(gelut_##T, T, T,                                                                      \
       (T)0.5 * a * (1 + tanh((T)0.79788456080286535588 * (a + (T)0.044715 * a * a * a))))  \
    UN(floor_##T, T, T, floor(a))                                                            \
    UN(ceil_##T, T, T, ceil(a))                                                              \
    UN(round_##T, T, T, nearbyint(a))                                                        \
    BIN(pow_##T, T, T, pow(a, b))
SG_FOR_FLOATING(DEF_FDIV)

/* round.decimals: as aten, x * 10^d rounded half to even, then scaled back (the other way for
 * d < 0), in the loop's type */
#define DEF_ROUNDD(E, T)                                                                    \
    UN(roundd_##T, T, T,                                                                    \
       c->decimals >= 0 ? nearbyint(a * (T)pow(10, (double)c->decimals)) / (T)pow(10, (double)c->decimals) \
                        : nearbyint(a / (T)pow(10, (double)-c->decimals)) * (T)pow(10, (double)-c->decimals))
SG_FOR_FLOATING(DEF_ROUNDD)

/* float32 loops for float16/bfloat16 add/sub with an alpha: alpha * b is rounded to the narrow
 * type before the sum, as aten's CPU loop computes in the element type (c10::Half arithmetic) */
BIN(add16_float, float, float, a + narrow_to(c, (float)c->af * b))
BIN(sub16_float, float, float, a - narrow_to(c, (float)c->af * b))
/* float32 loops for float16/bfloat16 results: the quotient rounded to the narrow type first */
BIN(divt16_float, float, float, truncf(narrow_to(c, a / b)))
BIN(divf16_float, float, float, narrow_to(c, (float)floor_div(a, b)))

/* integer division: C's / truncates; zero divisors are reported after the loop */
#define DEF_IDIV(E, T)                                                                      \
    BIN(divt_##T, T, T, b == 0 ? (c->zero_div = true, 0) : a / b)                            \
    BIN(divf_##T, T, T,                                                                      \
        b == 0 ? (c->zero_div = true, 0) : (a / b - ((a % b != 0) && ((a < 0) != (b < 0)))))   \
    BIN(pow_##T, T, T, ipow((int64_t)a, (int64_t)b))
/* Rationale: unsigned arithmetic, so that a power past the type wraps (as aten's does) without
 * C's undefined signed overflow; the caller narrows the result to the element type. */
static inline int64_t ipow(int64_t a, int64_t b) {
    if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
    uint64_t r = 1, x = (uint64_t)a;
    while (b) {
        if (b & 1) r *= x;
        x *= x;
        b >>= 1;
    }
    return (int64_t)r;
}
SG_FOR_INTEGRAL(DEF_IDIV)

/* dtype-preserving unary ops */
#define DEF_SIGNED(E, T)                                                                    \
    UN(neg_##T, T, T, -a)                                                                    \
    UN(abs_##T, T, T, a < 0 ? -a : a)                                                        \
    UN(relu_##T, T, T, a > 0 ? a : (a != a ? a : 0))                                          \
    UN(sign_##T, T, T, (a > 0) - (a < 0))                                                    \
    UN(ident_##T, T, T, a)
SG_FOR_INTEGRAL(DEF_SIGNED)
SG_FOR_FLOATING(DEF_SIGNED)
UN(abs_bool, bool, bool, a)
UN(relu_bool, bool, bool, a)
UN(sign_bool, bool, bool, a)
UN(ident_bool, bool, bool, a)

#define TABLE(NAME, FOR)                                                                    \
    static const sg_loop_fn NAME##_loops[SG_DTYPE__END] = {FOR(ENTRY_##NAME)};
#define ENTRY_add(E, T) [E] = add_##T,
#define ENTRY_sub(E, T) [E] = sub_##T,
#define ENTRY_mul(E, T) [E] = mul_##T,
#define ENTRY_max(E, T) [E] = max_##T,
#define ENTRY_min(E, T) [E] = min_##T,
#define ENTRY_eq(E, T) [E] = eq_##T,
#define ENTRY_ne(E, T) [E] = ne_##T,
#define ENTRY_lt(E, T) [E] = lt_##T,
#define ENTRY_le(E, T) [E] = le_##T,
#define ENTRY_gt(E, T) [E] = gt_##T,
#define ENTRY_ge(E, T) [E] = ge_##T,
#define ENTRY_land(E, T) [E] = land_##T,
#define ENTRY_lor(E, T) [E] = lor_##T,
#define ENTRY_lxor(E, T) [E] = lxor_##T,
#define ENTRY_lnot(E, T) [E] = lnot_##T,
#define ENTRY_div(E, T) [E] = div_##T,
#define ENTRY_divt(E, T) [E] = divt_##T,
#define ENTRY_divf(E, T) [E] = divf_##T,
#define ENTRY_pow(E, T) [E] = pow_##T,
#define ENTRY_exp(E, T) [E] = exp_##T,
#define ENTRY_log(E, T) [E] = log_##T,
#define ENTRY_sqrt(E, T) [E] = sqrt_##T,
#define ENTRY_rsqrt(E, T) [E] = rsqrt_##T,
#define ENTRY_sin(E, T) [E] = sin_##T,
#define ENTRY_cos(E, T) [E] = cos_##T,
#define ENTRY_tanh(E, T) [E] = tanh_##T,
#define ENTRY_sigmoid(E, T) [E] = sigmoid_##T,
#define ENTRY_silu(E, T) [E] = silu_##T,
#define ENTRY_erf(E, T) [E] = erf_##T,
#define ENTRY_recip(E, T) [E] = recip_##T,
#define ENTRY_gelu(E, T) [E] = gelu_##T,
#define ENTRY_gelut(E, T) [E] = gelut_##T,
#define ENTRY_floor(E, T) [E] = floor_##T,
#define ENTRY_ceil(E, T) [E] = ceil_##T,
#define ENTRY_round(E, T) [E] = round_##T,
#define ENTRY_neg(E, T) [E] = neg_##T,
#define ENTRY_abs(E, T) [E] = abs_##T,
#define ENTRY_relu(E, T) [E] = relu_##T,
#define ENTRY_sign(E, T) [E] = sign_##T,
#define ENTRY_ident(E, T) [E] = ident_##T,
#define FOR_SIGNED(X) SG_FOR_INTEGRAL(X) SG_FOR_FLOATING(X) X(SG_BOOL, bool)
#define FOR_INT_FLOAT(X) SG_FOR_INTEGRAL(X) SG_FOR_FLOATING(X)

TABLE(add, SG_FOR_REAL)
TABLE(sub, SG_FOR_REAL)
TABLE(mul, SG_FOR_REAL)
TABLE(max, SG_FOR_REAL)
TABLE(min, SG_FOR_REAL)
TABLE(eq, SG_FOR_REAL)
TABLE(ne, SG_FOR_REAL)
TABLE(lt, SG_FOR_REAL)
TABLE(le, SG_FOR_REAL)
TABLE(gt, SG_FOR_REAL)
TABLE(ge, SG_FOR_REAL)
TABLE(land, SG_FOR_REAL)
TABLE(lor, SG_FOR_REAL)
TABLE(lxor, SG_FOR_REAL)
TABLE(lnot, SG_FOR_REAL)
TABLE(div, SG_FOR_FLOATING)
TABLE(divt, FOR_INT_FLOAT)
TABLE(divf, FOR_INT_FLOAT)
TABLE(pow, FOR_INT_FLOAT)
TABLE(exp, SG_FOR_FLOATING)
TABLE(log, SG_FOR_FLOATING)
TABLE(sqrt, SG_FOR_FLOATING)
TABLE(rsqrt, SG_FOR_FLOATING)
TABLE(sin, SG_FOR_FLOATING)
TABLE(cos, SG_FOR_FLOATING)
TABLE(tanh, SG_FOR_FLOATING)
TABLE(sigmoid, SG_FOR_FLOATING)
TABLE(silu, SG_FOR_FLOATING)
TABLE(erf, SG_FOR_FLOATING)
TABLE(recip, SG_FOR_FLOATING)
TABLE(gelu, SG_FOR_FLOATING)
TABLE(gelut, SG_FOR_FLOATING)
TABLE(floor, SG_FOR_FLOATING)
TABLE(ceil, SG_FOR_FLOATING)
TABLE(round, SG_FOR_FLOATING)
#define ENTRY_roundd(E, T) [E] = roundd_##T,
TABLE(roundd, SG_FOR_FLOATING)
TABLE(neg, FOR_INT_FLOAT)
TABLE(abs, FOR_SIGNED)
TABLE(relu, FOR_SIGNED)
TABLE(sign, FOR_SIGNED)
TABLE(ident, FOR_SIGNED)

/* ---- running one op ------------------------------------------------------------------------ */

static sg_status not_implemented(const char *op, sg_dtype t) {
    return sg_error(SG_EUNSUPPORTED, "\"%s_cpu\" not implemented for '%s'", op,
                    sg_dtype_c10_name(t));
}

/* Runs loops[compute] over out = f(inputs); result dtype and compute dtype as given. With
 * out NULL the result is allocated; either way *ret gets a reference to it. */
/* Whether t is contiguous with exactly these sizes and this dtype. */
static bool plain(const sg_tensor *t, const sg_tensor *like, sg_dtype dtype) {
    if (!t || t->dtype != dtype || t->ndim != like->ndim || t->device.type != SG_DEV_CPU) return false;
    for (int32_t i = 0; i < t->ndim; i++)
        if (t->sizes[i] != like->sizes[i]) return false;
    return sg_tensor_is_contiguous(t);
}

/* The fast path of a small op: an out= tensor and inputs all contiguous, of one shape, in the
 * compute dtype, and no input a different view of the output's memory. Rationale: building the
 * iteration was the largest part of a 1-element op; this runs the inner loop at once. */
static bool fast(sg_loop_fn fn, ew *c, sg_tensor *out, const sg_tensor *a, const sg_tensor *b,
                 sg_dtype compute, sg_dtype out_dtype) {
    if (!out || out->device.type != SG_DEV_CPU || !plain(out, out, out_dtype) || !plain(a, out, compute) || (b && !plain(b, out, compute)))
        return false;
    int64_t n = sg_tensor_numel(out);
    if (n >= SG_GRAIN) return false; /* large: the iterator runs it in parallel */
    char *pa = sg_tensor_data(a), *pb = b ? sg_tensor_data(b) : NULL, *po = sg_tensor_data(out);
    if ((a->storage == out->storage && pa != po) || (b && b->storage == out->storage && pb != po))
        return false;
    char   *data[3] = {po, pa, pb};
    int64_t es = (int64_t)sg_dtype_size(compute);
    int64_t strides[3] = {(int64_t)sg_dtype_size(out_dtype), es, es};
    if (n) fn(c, data, strides, n);
    return true;
}

static sg_status run(const char *op, const sg_loop_fn *loops, ew *c, sg_tensor *out,
                     const sg_tensor *a, const sg_tensor *b, sg_dtype result, sg_dtype compute,
                     sg_dtype out_dtype, sg_tensor **ret) {
    sg_loop_fn fn = sg_dtype_valid((int)compute) ? loops[compute] : NULL;
    if (!fn) return not_implemented(op, result);
    if (out && (sg_dtype)out->dtype == result && fast(fn, c, out, a, b, compute, out_dtype)) {
        if (c->zero_div) return sg_error(SG_EINVAL, "%s: ZeroDivisionError", op);
        *ret = sg_tensor_retain(out);
        return SG_OK;
    }
    sg_iter      it;
    sg_iter_spec spec = {.op = op, .out = out, .in = {a, b}, .nin = b ? 2 : 1,
                         .compute = compute, .result = result, .out_dtype = out_dtype};
    sg_status    st = sg_iter_build(&it, &spec, ret);
    if (st) return st;
    sg_iter_run(&it, fn, c);
    st = sg_iter_finish(&it, ret);
    if (!st && c->zero_div) {
        sg_tensor_release(*ret);
        *ret = NULL;
        st = sg_error(SG_EINVAL, "%s: ZeroDivisionError", op);
    }
    return st;
}

/* ---- structured out kernels and meta functions --------------------------------------------- */

/* a meta function of a broadcasting binary op whose result is the promoted type */
static sg_status meta2(const sg_tensor *a, const sg_tensor *b, sg_dtype dtype, const char *op,
                       sg_meta *m) {
    char x[160], y[160];
    if (!sg_broadcast_shape(a->sizes, a->ndim, b->sizes, b->ndim, m->sizes, &m->ndim))
        return sg_error(SG_EINVAL, "%s: the size of tensor a %s must match the size of tensor b "
                                   "%s at a non-singleton dimension",
                        op, sg_shape_str(a->sizes, a->ndim, x, sizeof x),
                        sg_shape_str(b->sizes, b->ndim, y, sizeof y));
    m->dtype = dtype;
    m->device = a->ndim || !b->ndim ? a->device : b->device;
    sg_meta_follow(m, a, b, NULL);
    return SG_OK;
}

static sg_status meta1(const sg_tensor *a, sg_dtype dtype, sg_meta *m) {
    m->ndim = a->ndim;
    memcpy(m->sizes, a->sizes, (size_t)a->ndim * sizeof(int64_t));
    m->dtype = dtype;
    m->device = a->device;
    sg_meta_follow(m, a, NULL, NULL);
    return SG_OK;
}

/* add's and sub's meta functions make the ops' argument checks (alpha, sub of bools), as
 * aten's do, so that every variant and Meta refuse what the out kernel refuses */
static sg_status add_sub_meta(const char *op, bool sub, sg_tensor *self, sg_tensor *other,
                              sg_scalar alpha, sg_meta *m) {
    sg_dtype  r;
    double    af;
    int64_t   ai;
    sg_status st = sg_pointwise_add_args(op, self, other, alpha, sub, &r, &af, &ai);
    return st ? st : meta2(self, other, r, op, m);
}
static sg_status add_meta(sg_tensor *self, sg_tensor *other, sg_scalar alpha, sg_meta *m) {
    return add_sub_meta("add", false, self, other, alpha, m);
}
static sg_status sub_meta(sg_tensor *self, sg_tensor *other, sg_scalar alpha, sg_meta *m) {
    return add_sub_meta("sub", true, self, other, alpha, m);
}

static sg_status add_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_scalar alpha,
                         sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    ew        c = {0};
    sg_dtype  r;
    sg_status st = sg_pointwise_add_args("add", self, other, alpha, false, &r, &c.af, &c.ai);
    if (st) return st;
    sg_dtype k = sg_compute_dtype(r);
    if (k != r && c.af != 1) {
        static sg_loop_fn a16[SG_DTYPE__END] = {[SG_FLOAT32] = add16_float};
        c.narrow = r;
        return run("add", a16, &c, out, self, other, r, k, k, ret);
    }
    return run("add", add_loops, &c, out, self, other, r, k, k, ret);
}

static sg_status sub_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_scalar alpha,
                         sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    ew        c = {0};
    sg_dtype  r;
    sg_status st = sg_pointwise_add_args("sub", self, other, alpha, true, &r, &c.af, &c.ai);
    if (st) return st;
    sg_dtype k = sg_compute_dtype(r);
    if (k != r && c.af != 1) {
        static sg_loop_fn s16[SG_DTYPE__END] = {[SG_FLOAT32] = sub16_float};
        c.narrow = r;
        return run("sub", s16, &c, out, self, other, r, k, k, ret);
    }
    return run("sub", sub_loops, &c, out, self, other, r, k, k, ret);
}

static sg_status mul_meta(sg_tensor *self, sg_tensor *other, sg_meta *m) {
    return meta2(self, other, sg_pointwise_result(self, other, NULL), "mul", m);
}

static sg_status mul_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                         sg_tensor **ret) {
    (void)ks;
    ew       c = {0};
    sg_dtype r = sg_pointwise_result(self, other, NULL), k = sg_compute_dtype(r);
    return run("mul", mul_loops, &c, out, self, other, r, k, k, ret);
}

/* div: true division gives a floating result even for integers */
static sg_status div_run(sg_tensor *self, sg_tensor *other, int mode, sg_tensor *out,
                         sg_tensor **ret) {
    ew       c = {.mode = mode};
    sg_dtype r = sg_pointwise_div_result(self, other, mode), k = sg_compute_dtype(r);
    const sg_loop_fn *loops = mode == 0 ? div_loops : mode == 1 ? divt_loops : divf_loops;
    if (mode && k != r) { /* float16/bfloat16 computed in float32 */
        static sg_loop_fn t16[SG_DTYPE__END] = {[SG_FLOAT32] = divt16_float};
        static sg_loop_fn f16[SG_DTYPE__END] = {[SG_FLOAT32] = divf16_float};
        c.narrow = r;
        loops = mode == 1 ? t16 : f16;
    }
    return run("div", loops, &c, out, self, other, r, k, k, ret);
}

static sg_status div_meta(sg_tensor *self, sg_tensor *other, sg_meta *m) {
    return meta2(self, other, sg_pointwise_div_result(self, other, 0), "div", m);
}

static sg_status div_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                         sg_tensor **ret) {
    (void)ks;
    return div_run(self, other, 0, out, ret);
}

static sg_status div_mode_meta(sg_tensor *self, sg_tensor *other, const char *rounding,
                               sg_meta *m) {
    int       mode = 0;
    sg_status st = sg_pointwise_div_mode(rounding, &mode);
    return st ? st : meta2(self, other, sg_pointwise_div_result(self, other, mode), "div", m);
}

static sg_status div_out_mode(sg_keyset ks, sg_tensor *self, sg_tensor *other,
                              const char *rounding, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    int       mode = 0;
    sg_status st = sg_pointwise_div_mode(rounding, &mode);
    return st ? st : div_run(self, other, mode, out, ret);
}

/* comparisons and logical ops: computed in the promoted type, written as bool */
#define CMP(NAME)                                                                             \
    static sg_status NAME##_meta(sg_tensor *self, sg_tensor *other, sg_meta *m) {             \
        return meta2(self, other, SG_BOOL, #NAME, m);                                          \
    }                                                                                          \
    static sg_status NAME##_out(sg_keyset ks, sg_tensor *self, sg_tensor *other,               \
                                sg_tensor *out, sg_tensor **ret) {                             \
        (void)ks;                                                                              \
        ew       c = {0};                                                                      \
        sg_dtype k = sg_compute_dtype(sg_pointwise_result(self, other, NULL));                 \
        return run(#NAME, NAME##_loops, &c, out, self, other, SG_BOOL, k, SG_BOOL, ret);       \
    }
CMP(eq)
CMP(ne)
CMP(lt)
CMP(le)
CMP(gt)
CMP(ge)

/* the Scalar comparisons: the scalar as a wrapped number */
#define CMP_SCALAR(NAME)                                                                          static sg_status NAME##_scalar_meta(sg_tensor *self, sg_scalar other, sg_meta *m) {               (void)other;                                                                                   return meta1(self, SG_BOOL, m);                                                            }                                                                                              static sg_status NAME##_scalar_out(sg_keyset ks, sg_tensor *self, sg_scalar other,                                               sg_tensor *out, sg_tensor **ret) {                              sg_tensor *o;                                                                                  sg_status  st = sg_scalar_tensor(other, &o);                                                   if (st) return st;                                                                             st = NAME##_out(ks, self, o, out, ret);                                                        sg_tensor_release(o);                                                                          return st;                                                                                 }
CMP_SCALAR(eq)
CMP_SCALAR(ne)
CMP_SCALAR(lt)
CMP_SCALAR(le)
CMP_SCALAR(gt)
CMP_SCALAR(ge)

/* The in-place comparisons. PyTorch's comparison meta takes the dtype of the tensor written, so
 * self keeps its dtype and gets 1 or 0, where the generated in-place composite (which checks the
 * meta's bool against self) would refuse a non-bool self. The bool result is computed, must have
 * self's shape (self cannot grow), and is copied into self with a cast. Dispatched calls, so the
 * kernels serve every device; registered over the generated composites. */
static sg_status cmp_into(const char *op, sg_tensor *self, sg_tensor *r, sg_tensor **ret) {
    char a[256], b[256];
    if (r->ndim != self->ndim ||
        memcmp(r->sizes, self->sizes, (size_t)self->ndim * sizeof *self->sizes) != 0)
        return sg_error(SG_EINVAL, "%s: output with shape %s doesn't match the broadcast shape %s",
                        op, sg_shape_str(self->sizes, self->ndim, a, sizeof a),
                        sg_shape_str(r->sizes, r->ndim, b, sizeof b));
    return aten_copy_(self, r, false, ret);
}

#define CMP_INPLACE(NAME)                                                                      \
    static sg_status NAME##_inplace_tensor(sg_keyset ks, sg_tensor *self, sg_tensor *other,    \
                                           sg_tensor **ret) {                                  \
        (void)ks;                                                                              \
        sg_tensor *r = NULL;                                                                   \
        *ret = NULL;                                                                           \
        sg_status st = aten_##NAME##_Tensor(self, other, &r);                                  \
        if (!st) st = cmp_into(#NAME "_", self, r, ret);                                       \
        sg_tensor_release(r);                                                                  \
        return st;                                                                             \
    }                                                                                          \
    static sg_status NAME##_inplace_scalar(sg_keyset ks, sg_tensor *self, sg_scalar other,     \
                                           sg_tensor **ret) {                                  \
        (void)ks;                                                                              \
        sg_tensor *r = NULL;                                                                   \
        *ret = NULL;                                                                           \
        sg_status st = aten_##NAME##_Scalar(self, other, &r);                                  \
        if (!st) st = cmp_into(#NAME "_", self, r, ret);                                       \
        sg_tensor_release(r);                                                                  \
        return st;                                                                             \
    }
CMP_INPLACE(eq)
CMP_INPLACE(ne)
CMP_INPLACE(lt)
CMP_INPLACE(le)
CMP_INPLACE(gt)
CMP_INPLACE(ge)

static sg_status maximum_meta(sg_tensor *self, sg_tensor *other, sg_meta *m) {
    return meta2(self, other, sg_pointwise_result(self, other, NULL), "maximum", m);
}
static sg_status maximum_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                             sg_tensor **ret) {
    (void)ks;
    ew       c = {0};
    sg_dtype r = sg_pointwise_result(self, other, NULL), k = sg_compute_dtype(r);
    return run("maximum", max_loops, &c, out, self, other, r, k, k, ret);
}
static sg_status minimum_meta(sg_tensor *self, sg_tensor *other, sg_meta *m) {
    return meta2(self, other, sg_pointwise_result(self, other, NULL), "minimum", m);
}
static sg_status minimum_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                             sg_tensor **ret) {
    (void)ks;
    ew       c = {0};
    sg_dtype r = sg_pointwise_result(self, other, NULL), k = sg_compute_dtype(r);
    return run("minimum", min_loops, &c, out, self, other, r, k, k, ret);
}

/* unary floating functions: integers become the default dtype (float32) */
static sg_dtype float_result(const sg_tensor *a) {
    sg_dtype t = (sg_dtype)a->dtype;
    return sg_dtype_is_integral(t, true) ? SG_FLOAT32 : t;
}

#define UNARY_FLOAT(NAME, LOOPS)                                                              \
    static sg_status NAME##_meta(sg_tensor *self, sg_meta *m) {                               \
        return meta1(self, float_result(self), m);                                             \
    }                                                                                          \
    static sg_status NAME##_out(sg_keyset ks, sg_tensor *self, sg_tensor *out,                \
                                sg_tensor **ret) {                                             \
        (void)ks;                                                                              \
        ew       c = {0};                                                                      \
        sg_dtype r = float_result(self), k = sg_compute_dtype(r);                              \
        return run(#NAME, LOOPS, &c, out, self, NULL, r, k, k, ret);                           \
    }
UNARY_FLOAT(exp, exp_loops)
UNARY_FLOAT(log, log_loops)
UNARY_FLOAT(sqrt, sqrt_loops)
UNARY_FLOAT(rsqrt, rsqrt_loops)
UNARY_FLOAT(sin, sin_loops)
UNARY_FLOAT(cos, cos_loops)
UNARY_FLOAT(tanh, tanh_loops)
UNARY_FLOAT(sigmoid, sigmoid_loops)
UNARY_FLOAT(erf, erf_loops)
UNARY_FLOAT(reciprocal, recip_loops)

/* silu: floating types only; aten promotes no integer input for it */
static sg_status silu_meta(sg_tensor *self, sg_meta *m) {
    sg_dtype r = (sg_dtype)self->dtype;
    return sg_dtype_is_floating(r) ? meta1(self, r, m) : not_implemented("silu", r);
}
static sg_status silu_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    ew       c = {0};
    sg_dtype  r = (sg_dtype)self->dtype, k = sg_compute_dtype(r);
    sg_status st = sg_pointwise_keep_args("silu", "cpu", r, out);
    if (st) return st;
    return run("silu", silu_loops, &c, out, self, NULL, r, k, k, ret);
}

/* dtype-keeping unary ops; floor/ceil/round of integers are copies */
#define UNARY_SAME(NAME, LOOPS, INT_LOOPS)                                                     \
    static sg_status NAME##_meta(sg_tensor *self, sg_meta *m) {                               \
        return meta1(self, (sg_dtype)self->dtype, m);                                          \
    }                                                                                          \
    static sg_status NAME##_out(sg_keyset ks, sg_tensor *self, sg_tensor *out,                \
                                sg_tensor **ret) {                                             \
        (void)ks;                                                                              \
        ew       c = {0};                                                                      \
        sg_dtype  r = (sg_dtype)self->dtype, k = sg_compute_dtype(r);                          \
        sg_status st = sg_pointwise_keep_args(#NAME, "cpu", r, out);                           \
        if (st) return st;                                                                     \
        return run(#NAME, sg_dtype_is_integral(k, true) ? INT_LOOPS : LOOPS, &c, out, self,    \
                   NULL, r, k, k, ret);                                                        \
    }
UNARY_SAME(floor, floor_loops, ident_loops)
UNARY_SAME(ceil, ceil_loops, ident_loops)
UNARY_SAME(round, round_loops, ident_loops)
UNARY_SAME(sign, sign_loops, sign_loops)

static sg_status round_decimals_meta(sg_tensor *self, int64_t decimals, sg_meta *m) {
    (void)decimals;
    return meta1(self, (sg_dtype)self->dtype, m);
}
static sg_status round_decimals_out(sg_keyset ks, sg_tensor *self, int64_t decimals,
                                    sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    ew       c = {.decimals = decimals};
    sg_dtype r = (sg_dtype)self->dtype, k = sg_compute_dtype(r);
    if (sg_dtype_is_integral(r, true))
        return sg_error(SG_EINVAL, "round_cpu not implemented for '%s' with decimals",
                        sg_dtype_name(r));
    sg_status st = sg_pointwise_keep_args("round", "cpu", r, out);
    if (st) return st;
    return run("round", roundd_loops, &c, out, self, NULL, r, k, k, ret);
}

static sg_status neg_meta(sg_tensor *self, sg_meta *m) {
    if (self->dtype == SG_BOOL)
        return sg_error(SG_EINVAL, "Negation, the `-` operator, on a bool tensor is not "
                                   "supported. If you are trying to invert a mask, use the `~` or "
                                   "`logical_not()` operator instead.");
    return meta1(self, (sg_dtype)self->dtype, m);
}
static sg_status neg_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_meta   m;
    sg_status st = neg_meta(self, &m);
    if (st) return st;
    ew       c = {0};
    sg_dtype r = (sg_dtype)self->dtype, k = sg_compute_dtype(r);
    if ((st = sg_pointwise_keep_args("neg", "cpu", r, out))) return st;
    return run("neg", neg_loops, &c, out, self, NULL, r, k, k, ret);
}

/* abs is not structured in aten: functional, in-place and out each */
static sg_status abs_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    ew       c = {0};
    sg_dtype  r = (sg_dtype)self->dtype, k = sg_compute_dtype(r);
    sg_status st = sg_pointwise_keep_args("abs", "cpu", r, out);
    if (st) return st;
    return run("abs", abs_loops, &c, out, self, NULL, r, k, k, ret);
}
static sg_status abs_fn(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    return abs_out(ks, self, NULL, ret);
}
static sg_status abs_inplace(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    return abs_out(ks, self, self, ret);
}

/* relu: CompositeExplicitAutograd in aten (clamp_min(self, 0)); a kernel of its own here */
static sg_status relu_fn(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    ew       c = {0};
    sg_dtype r = (sg_dtype)self->dtype, k = sg_compute_dtype(r);
    if (r == SG_BOOL) return not_implemented("clamp", r);
    return run("relu", relu_loops, &c, NULL, self, NULL, r, k, k, ret);
}
static sg_status relu_inplace(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    ew       c = {0};
    sg_dtype r = (sg_dtype)self->dtype, k = sg_compute_dtype(r);
    if (r == SG_BOOL) return not_implemented("clamp", r);
    return run("relu", relu_loops, &c, self, self, NULL, r, k, k, ret);
}

/* gelu, structured, with its approximation */
static sg_status gelu_mode(const char *approximate, int *mode) {
    if (!approximate || strcmp(approximate, "none") == 0) *mode = 0;
    else if (strcmp(approximate, "tanh") == 0) *mode = 1;
    else return sg_error(SG_EINVAL, "approximate argument must be either none or tanh.");
    return SG_OK;
}
static sg_status gelu_meta(sg_tensor *self, const char *approximate, sg_meta *m) {
    int       mode = 0;
    sg_status st = gelu_mode(approximate, &mode);
    return st ? st : meta1(self, (sg_dtype)self->dtype, m);
}
static sg_status gelu_out(sg_keyset ks, sg_tensor *self, const char *approximate,
                          sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    ew        c = {0};
    int       mode = 0;
    sg_status st = gelu_mode(approximate, &mode);
    if (st) return st;
    sg_dtype r = (sg_dtype)self->dtype, k = sg_compute_dtype(r);
    if ((st = sg_pointwise_keep_args("gelu", "cpu", r, out))) return st;
    return run("gelu", mode ? gelut_loops : gelu_loops, &c, out, self, NULL, r, k, k, ret);
}

/* logical ops: any input dtype, a bool result (an out= of another dtype gets 0/1) */
#define LOGICAL(NAME, LOOPS)                                                                  \
    static sg_status NAME##_out(sg_keyset ks, sg_tensor *self, sg_tensor *other,              \
                                sg_tensor *out, sg_tensor **ret) {                             \
        (void)ks;                                                                              \
        ew       c = {0};                                                                      \
        sg_dtype k = sg_compute_dtype(sg_pointwise_result(self, other, NULL));                 \
        return run(#NAME, LOOPS, &c, out, self, other, SG_BOOL, k, SG_BOOL, ret);              \
    }                                                                                          \
    static sg_status NAME##_fn(sg_keyset ks, sg_tensor *self, sg_tensor *other,               \
                               sg_tensor **ret) {                                              \
        return NAME##_out(ks, self, other, NULL, ret);                                         \
    }                                                                                          \
    static sg_status NAME##_inplace(sg_keyset ks, sg_tensor *self, sg_tensor *other,          \
                                    sg_tensor **ret) {                                         \
        sg_meta   m; /* self is not resized: the broadcast shape must be its own */           \
        sg_status st = meta2(self, other, SG_BOOL, #NAME "_", &m);                             \
        if (!st) st = sg_meta_check(&m, self, #NAME "_");                                      \
        if (st) {                                                                              \
            *ret = NULL;                                                                       \
            return st;                                                                         \
        }                                                                                      \
        return NAME##_out(ks, self, other, self, ret);                                         \
    }
LOGICAL(logical_and, land_loops)
LOGICAL(logical_or, lor_loops)
LOGICAL(logical_xor, lxor_loops)

static sg_status logical_not_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    ew       c = {0};
    sg_dtype k = sg_compute_dtype((sg_dtype)self->dtype);
    return run("logical_not", lnot_loops, &c, out, self, NULL, SG_BOOL, k, SG_BOOL, ret);
}
static sg_status logical_not_fn(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    return logical_not_out(ks, self, NULL, ret);
}
static sg_status logical_not_inplace(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    return logical_not_out(ks, self, self, ret);
}

/* pow(Tensor, Tensor) */
static sg_status pow_meta(sg_tensor *self, sg_tensor *exponent, sg_meta *m) {
    return meta2(self, exponent, sg_pointwise_result(self, exponent, NULL), "pow", m);
}
static sg_status pow_out(sg_keyset ks, sg_tensor *self, sg_tensor *exponent, sg_tensor *out,
                         sg_tensor **ret) {
    (void)ks;
    ew       c = {0};
    sg_dtype r = sg_pointwise_result(self, exponent, NULL), k = sg_compute_dtype(r);
    if (r == SG_BOOL) return not_implemented("pow", r);
    return run("pow", pow_loops, &c, out, self, exponent, r, k, k, ret);
}

/* ---- Scalar overloads: the scalar as a wrapped number, then the Tensor overload ------------ */

#define WITH_SCALAR(s, t, body)                                                               \
    sg_tensor *t;                                                                              \
    sg_status  st_ = sg_scalar_tensor(s, &t);                                                  \
    if (st_) return st_;                                                                       \
    st_ = (body);                                                                              \
    sg_tensor_release(t);                                                                      \
    return st_;

static sg_status add_scalar(sg_keyset ks, sg_tensor *self, sg_scalar other, sg_scalar alpha,
                            sg_tensor **ret) {
    (void)ks;
    WITH_SCALAR(other, o, aten_add_Tensor(self, o, alpha, ret))
}
static sg_status add__scalar(sg_keyset ks, sg_tensor *self, sg_scalar other, sg_scalar alpha,
                             sg_tensor **ret) {
    (void)ks;
    WITH_SCALAR(other, o, aten_add__Tensor(self, o, alpha, ret))
}
static sg_status sub_scalar(sg_keyset ks, sg_tensor *self, sg_scalar other, sg_scalar alpha,
                            sg_tensor **ret) {
    (void)ks;
    WITH_SCALAR(other, o, aten_sub_Tensor(self, o, alpha, ret))
}
static sg_status sub__scalar(sg_keyset ks, sg_tensor *self, sg_scalar other, sg_scalar alpha,
                             sg_tensor **ret) {
    (void)ks;
    WITH_SCALAR(other, o, aten_sub__Tensor(self, o, alpha, ret))
}
static sg_status mul_scalar(sg_keyset ks, sg_tensor *self, sg_scalar other, sg_tensor **ret) {
    (void)ks;
    WITH_SCALAR(other, o, aten_mul_Tensor(self, o, ret))
}
static sg_status mul__scalar(sg_keyset ks, sg_tensor *self, sg_scalar other, sg_tensor **ret) {
    (void)ks;
    WITH_SCALAR(other, o, aten_mul__Tensor(self, o, ret))
}
static sg_status div_scalar(sg_keyset ks, sg_tensor *self, sg_scalar other, sg_tensor **ret) {
    (void)ks;
    WITH_SCALAR(other, o, aten_div_Tensor(self, o, ret))
}
static sg_status div__scalar(sg_keyset ks, sg_tensor *self, sg_scalar other, sg_tensor **ret) {
    (void)ks;
    WITH_SCALAR(other, o, aten_div__Tensor(self, o, ret))
}
static sg_status div_scalar_mode(sg_keyset ks, sg_tensor *self, sg_scalar other,
                                 const char *rounding, sg_tensor **ret) {
    (void)ks;
    WITH_SCALAR(other, o, aten_div_Tensor_mode(self, o, rounding, ret))
}
static sg_status div__scalar_mode(sg_keyset ks, sg_tensor *self, sg_scalar other,
                                  const char *rounding, sg_tensor **ret) {
    (void)ks;
    WITH_SCALAR(other, o, aten_div__Tensor_mode(self, o, rounding, ret))
}

/* ---- registration -------------------------------------------------------------------------- */

sg_status sg_cpu_register_pointwise(void) {
    SG_REG_STRUCTURED(aten_add_out, add_meta, add_out);
    SG_REG_STRUCTURED(aten_sub_out, sub_meta, sub_out);
    SG_REG_STRUCTURED(aten_mul_out, mul_meta, mul_out);
    SG_REG_STRUCTURED(aten_div_out, div_meta, div_out);
    SG_REG_STRUCTURED(aten_div_out_mode, div_mode_meta, div_out_mode);
    SG_REG_STRUCTURED(aten_eq_Tensor_out, eq_meta, eq_out);
    SG_REG_STRUCTURED(aten_ne_Tensor_out, ne_meta, ne_out);
    SG_REG_STRUCTURED(aten_lt_Tensor_out, lt_meta, lt_out);
    SG_REG_STRUCTURED(aten_le_Tensor_out, le_meta, le_out);
    SG_REG_STRUCTURED(aten_gt_Tensor_out, gt_meta, gt_out);
    SG_REG_STRUCTURED(aten_ge_Tensor_out, ge_meta, ge_out);
    SG_REG_STRUCTURED(aten_eq_Scalar_out, eq_scalar_meta, eq_scalar_out);
    SG_REG_STRUCTURED(aten_ne_Scalar_out, ne_scalar_meta, ne_scalar_out);
    SG_REG_STRUCTURED(aten_lt_Scalar_out, lt_scalar_meta, lt_scalar_out);
    SG_REG_STRUCTURED(aten_le_Scalar_out, le_scalar_meta, le_scalar_out);
    SG_REG_STRUCTURED(aten_gt_Scalar_out, gt_scalar_meta, gt_scalar_out);
    SG_REG_STRUCTURED(aten_ge_Scalar_out, ge_scalar_meta, ge_scalar_out);
#define REG_CMP_INPLACE(N)                                                                     \
    SG_REG_EXPLICIT(aten_##N##__Tensor, N##_inplace_tensor);                                \
    SG_REG_EXPLICIT(aten_##N##__Scalar, N##_inplace_scalar)
    REG_CMP_INPLACE(eq);
    REG_CMP_INPLACE(ne);
    REG_CMP_INPLACE(lt);
    REG_CMP_INPLACE(le);
    REG_CMP_INPLACE(gt);
    REG_CMP_INPLACE(ge);
    SG_REG_STRUCTURED(aten_maximum_out, maximum_meta, maximum_out);
    SG_REG_STRUCTURED(aten_minimum_out, minimum_meta, minimum_out);
    SG_REG_STRUCTURED(aten_pow_Tensor_Tensor_out, pow_meta, pow_out);
    SG_REG_STRUCTURED(aten_exp_out, exp_meta, exp_out);
    SG_REG_STRUCTURED(aten_log_out, log_meta, log_out);
    SG_REG_STRUCTURED(aten_sqrt_out, sqrt_meta, sqrt_out);
    SG_REG_STRUCTURED(aten_rsqrt_out, rsqrt_meta, rsqrt_out);
    SG_REG_STRUCTURED(aten_sin_out, sin_meta, sin_out);
    SG_REG_STRUCTURED(aten_cos_out, cos_meta, cos_out);
    SG_REG_STRUCTURED(aten_tanh_out, tanh_meta, tanh_out);
    SG_REG_STRUCTURED(aten_sigmoid_out, sigmoid_meta, sigmoid_out);
    SG_REG_STRUCTURED(aten_silu_out, silu_meta, silu_out);
    SG_REG_STRUCTURED(aten_erf_out, erf_meta, erf_out);
    SG_REG_STRUCTURED(aten_reciprocal_out, reciprocal_meta, reciprocal_out);
    SG_REG_STRUCTURED(aten_floor_out, floor_meta, floor_out);
    SG_REG_STRUCTURED(aten_ceil_out, ceil_meta, ceil_out);
    SG_REG_STRUCTURED(aten_round_out, round_meta, round_out);
    SG_REG_STRUCTURED(aten_round_decimals_out, round_decimals_meta, round_decimals_out);
    SG_REG_STRUCTURED(aten_sign_out, sign_meta, sign_out);
    SG_REG_STRUCTURED(aten_neg_out, neg_meta, neg_out);
    SG_REG_STRUCTURED(aten_gelu_out, gelu_meta, gelu_out);
    SG_REG_CPU_META(aten_abs, abs_fn);
    SG_REG_CPU_META(aten_abs_, abs_inplace);
    SG_REG_CPU_META(aten_abs_out, abs_out);
    SG_REG_CPU_META(aten_relu, relu_fn);
    SG_REG_CPU_META(aten_relu_, relu_inplace);
    SG_REG_CPU_META(aten_logical_and, logical_and_fn);
    SG_REG_CPU_META(aten_logical_and_, logical_and_inplace);
    SG_REG_CPU_META(aten_logical_and_out, logical_and_out);
    SG_REG_CPU_META(aten_logical_or, logical_or_fn);
    SG_REG_CPU_META(aten_logical_or_, logical_or_inplace);
    SG_REG_CPU_META(aten_logical_or_out, logical_or_out);
    SG_REG_CPU_META(aten_logical_xor, logical_xor_fn);
    SG_REG_CPU_META(aten_logical_xor_, logical_xor_inplace);
    SG_REG_CPU_META(aten_logical_xor_out, logical_xor_out);
    SG_REG_CPU_META(aten_logical_not, logical_not_fn);
    SG_REG_CPU_META(aten_logical_not_, logical_not_inplace);
    SG_REG_CPU_META(aten_logical_not_out, logical_not_out);
    SG_REG_EXPLICIT(aten_add_Scalar, add_scalar);
    SG_REG_EXPLICIT(aten_add__Scalar, add__scalar);
    SG_REG_EXPLICIT(aten_sub_Scalar, sub_scalar);
    SG_REG_EXPLICIT(aten_sub__Scalar, sub__scalar);
    SG_REG_EXPLICIT(aten_mul_Scalar, mul_scalar);
    SG_REG_EXPLICIT(aten_mul__Scalar, mul__scalar);
    SG_REG_EXPLICIT(aten_div_Scalar, div_scalar);
    SG_REG_EXPLICIT(aten_div__Scalar, div__scalar);
    SG_REG_EXPLICIT(aten_div_Scalar_mode, div_scalar_mode);
    SG_REG_EXPLICIT(aten_div__Scalar_mode, div__scalar_mode);
    return SG_OK;
}
