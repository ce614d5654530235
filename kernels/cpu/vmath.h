/* vmath.h: float32 exp and what is built on it, written so that loops over it vectorise (no
 * branches, no libm calls), plus the per-CPU versions of the loops that use it.
 *
 * exp(x) = 2^n * e^r with n = round(x / ln 2), r = x - n ln 2 (in two parts for precision),
 * e^r = 1 + r + r^2 P(r) with Cephes's degree-5 minimax P for expf on [-ln2/2, ln2/2]; 2^n is
 * applied as two halves so that results down to the subnormals stay representable. Inputs are
 * clamped to [-104, 88.8] first (beyond, the result is 0 or inf anyway); the clamps let NaN
 * through, and NaN then propagates through the arithmetic. Accuracy: within 2 ulp of the
 * correctly rounded result over the whole float range, with or without FMA (checked
 * exhaustively against double-precision exp when this was written).
 *
 * Two flavours of the same steps: sg_expf with separate multiplies and adds (any CPU; reduce.c's
 * logsumexp uses it), and sg_expf_fma with fused multiply-adds, for code built for CPUs that
 * have FMA (fewer instructions, and each step rounds once). sg_exp16 is sg_expf_fma on 16 lanes
 * of AVX-512 with the same operations in the same order, the scaling by 2^n done at once by
 * vscalefps (which rounds once, as the two halves do): it gives the same bits as sg_expf_fma.
 * sg_exp16_neg, for x <= 0 only (softmax), takes fewer steps and rounds its own way.
 *
 * Loops over these are built in several versions (SG_VM_VERSIONS) and one is picked by the CPU
 * on first use (SG_VM_PICK), as gcc's target_clones pick at load time; they alone cannot, because
 * the versions differ in their source (FMA or not, AVX-512 intrinsics), not only in flags. */
#ifndef SG_CPU_VMATH_H
#define SG_CPU_VMATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline float sg_pow2i(int32_t n) {
    uint32_t bits = (uint32_t)(n + 127) << 23;
    float    f;
    memcpy(&f, &bits, 4);
    return f;
}

/* The constants, shared by the scalar and the AVX-512 code. */
#define SG_EXP_HI    88.8f
#define SG_EXP_LO    -104.0f
#define SG_EXP_LOG2E 1.44269504088896341f
#define SG_EXP_SHIFT 12582912.0f /* 1.5 * 2^23: adding it rounds to an integer */
#define SG_EXP_LN2A  0.693359375f /* ln 2 = LN2A + LN2B; n * LN2A is exact */
#define SG_EXP_LN2B  -2.12194440e-4f
#define SG_EXP_P0    1.9875691500e-4f
#define SG_EXP_P1    1.3981999507e-3f
#define SG_EXP_P2    8.3334519073e-3f
#define SG_EXP_P3    4.1665795894e-2f
#define SG_EXP_P4    1.6666665459e-1f
#define SG_EXP_P5    5.0000001201e-1f

/* `fused` is a constant at every call, so each flavour compiles to straight-line code. */
static inline float sg_expf_with(float x, bool fused) {
#define SG_MADD(a, b, c) (fused ? fmaf((a), (b), (c)) : (a) * (b) + (c))
    /* written as min(HI, x), max(LO, .): NaN passes (the same as vminps/vmaxps with x second) */
    float xc = SG_EXP_HI < x ? SG_EXP_HI : x;
    xc = SG_EXP_LO > xc ? SG_EXP_LO : xc;
    float t = SG_MADD(xc, SG_EXP_LOG2E, SG_EXP_SHIFT);
    float n = t - SG_EXP_SHIFT;
    float r = SG_MADD(n, -SG_EXP_LN2A, xc);
    r = SG_MADD(n, -SG_EXP_LN2B, r);
    float p = SG_EXP_P0;
    p = SG_MADD(p, r, SG_EXP_P1);
    p = SG_MADD(p, r, SG_EXP_P2);
    p = SG_MADD(p, r, SG_EXP_P3);
    p = SG_MADD(p, r, SG_EXP_P4);
    p = SG_MADD(p, r, SG_EXP_P5);
    /* 1 + r + r^2 p: Horner with FMA (one rounding per step); without, Cephes's order, which
     * keeps the small terms apart from the 1 until the end */
    float y = fused ? fmaf(fmaf(p, r, 1.0f), r, 1.0f) : (p * r * r + r) + 1.0f;
#undef SG_MADD
    /* n as an integer from t's bits (t = SHIFT + n exactly): no float-to-int conversion */
    uint32_t tb;
    memcpy(&tb, &t, 4);
    int32_t ni = (int32_t)(tb - 0x4B400000u), n1 = ni >> 1, n2 = ni - n1;
    return y * sg_pow2i(n1) * sg_pow2i(n2);
}

static inline float sg_expf(float x) { return sg_expf_with(x, false); }
/* only for code built with FMA (elsewhere fmaf is a library call: right, but slow) */
static inline float sg_expf_fma(float x) { return sg_expf_with(x, true); }

static inline float sg_sigmoidf(float x) { return 1.0f / (1.0f + sg_expf(-x)); }
static inline float sg_siluf(float x) { return x / (1.0f + sg_expf(-x)); }
static inline float sg_tanhf(float x) {
    /* tanh(x) = 1 - 2 / (e^{2x} + 1); exact enough away from 0, and x itself near 0 */
    float e = sg_expf(2.0f * x);
    float t = 1.0f - 2.0f / (e + 1.0f);
    float ax = x < 0 ? -x : x;
    return ax < 0.0004f ? x : t;
}

/* ---- versions per CPU ---------------------------------------------------------------------
 * SG_VM_VERSIONS(DEF) expands DEF(suffix, attribute, scalar exp) once per version: avx512
 * (AVX-512F with FMA), avx2 (AVX2 with FMA) and base (the compiler's baseline), or base alone
 * where versions cannot be picked at load time (not gcc on x86-64 Linux, as SG_CLONES in cpu.h).
 * SG_VM_PICK(NAME, TYPE, PARAMS, ARGS) then defines NAME as the version for this CPU. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define SG_VM_X86 1
#include <immintrin.h>

#define SG_VM_AVX512 __attribute__((target("avx512f,fma")))
#define SG_VM_AVX2   __attribute__((target("avx2,fma")))
#define SG_VM_VERSIONS(DEF)                                                                     \
    DEF(avx512, SG_VM_AVX512, sg_expf_fma)                                                      \
    DEF(avx2, SG_VM_AVX2, sg_expf_fma)                                                          \
    DEF(base, , sg_expf)
/* The version is picked on first use and kept. Rationale: not an ifunc, whose resolver runs
 * while the program is being relocated, before a sanitizer's runtime has started (an
 * instrumented resolver crashes there). */
#define SG_VM_PICK(NAME, TYPE, PARAMS, ARGS)                                                    \
    static TYPE *NAME##_pick(void) {                                                            \
        __builtin_cpu_init();                                                                   \
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))                 \
            return NAME##_avx512;                                                               \
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))                    \
            return NAME##_avx2;                                                                 \
        return NAME##_base;                                                                     \
    }                                                                                           \
    static TYPE *NAME##_chosen;                                                                 \
    static void  NAME PARAMS {                                                                  \
        TYPE *f = __atomic_load_n(&NAME##_chosen, __ATOMIC_RELAXED);                            \
        if (!f) __atomic_store_n(&NAME##_chosen, f = NAME##_pick(), __ATOMIC_RELAXED);          \
        f ARGS;                                                                                 \
    }

/* sg_expf_fma on 16 lanes (same operations, same order, same results) */
SG_VM_AVX512 static inline __m512 sg_exp16(__m512 x) {
    __m512 xc = _mm512_min_ps(_mm512_set1_ps(SG_EXP_HI), x); /* x where NaN */
    xc = _mm512_max_ps(_mm512_set1_ps(SG_EXP_LO), xc);
    __m512 t = _mm512_fmadd_ps(xc, _mm512_set1_ps(SG_EXP_LOG2E), _mm512_set1_ps(SG_EXP_SHIFT));
    __m512 n = _mm512_sub_ps(t, _mm512_set1_ps(SG_EXP_SHIFT));
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(SG_EXP_LN2A), xc);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(SG_EXP_LN2B), r);
    __m512 p = _mm512_set1_ps(SG_EXP_P0);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SG_EXP_P1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SG_EXP_P2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SG_EXP_P3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SG_EXP_P4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SG_EXP_P5));
    __m512 one = _mm512_set1_ps(1.0f);
    __m512 y = _mm512_fmadd_ps(_mm512_fmadd_ps(p, r, one), r, one);
    return _mm512_scalef_ps(y, n); /* y * 2^n, one rounding, inf and subnormals included */
}

/* exp(x) on 16 lanes for x <= 0 or NaN (softmax's x - max), in 10 arithmetic operations where
 * sg_exp16 takes 14: with k = round(16 x / ln 2), x = (k/16) ln 2 + r, |r| <= ln 2 / 32, and
 * e^x = 2^floor(k/16) * 2^((k mod 16)/16) * e^r. Adding 1.5 * 2^19 rounds to sixteenths and
 * leaves k mod 16 in the low mantissa bits, which index the table of 2^(j/16) by one vpermps;
 * e^r is 1 + r + c2 r^2 + c3 r^3 (minimax on [-ln2/32, ln2/32], relative error 1.6e-9);
 * vscalefps floors its exponent, so k/16 is given as it is. No upper clamp (x <= 0); the lower
 * one turns -inf (masked entries) into 0. Within 1 ulp of the correctly rounded result on
 * [-104, 0] (sg_exp16: 0.89), and equal to sg_exp16 on 98.4% of those floats (both checked
 * exhaustively against double-precision exp). */
#define SG_EXP_SHIFT19 786432.0f /* 1.5 * 2^19: adding it rounds to a multiple of 1/16 */
#define SG_EXP_C2      0x1.00021ep-1f
#define SG_EXP_C3      0x1.55559ap-3f
SG_VM_AVX512 static inline __m512 sg_exp16_neg(__m512 x) {
    const __m512 tab = _mm512_setr_ps( /* 2^(j/16), correctly rounded */
        0x1p+0f, 0x1.0b5586p+0f, 0x1.172b84p+0f, 0x1.2387a6p+0f, 0x1.306fe0p+0f, 0x1.3dea64p+0f,
        0x1.4bfdaep+0f, 0x1.5ab07ep+0f, 0x1.6a09e6p+0f, 0x1.7a1148p+0f, 0x1.8ace54p+0f,
        0x1.9c4918p+0f, 0x1.ae89fap+0f, 0x1.c199bep+0f, 0x1.d5818ep+0f, 0x1.ea4afap+0f);
    __m512 xc = _mm512_max_ps(_mm512_set1_ps(SG_EXP_LO), x); /* x where NaN */
    __m512 t = _mm512_fmadd_ps(xc, _mm512_set1_ps(SG_EXP_LOG2E), _mm512_set1_ps(SG_EXP_SHIFT19));
    __m512 n = _mm512_sub_ps(t, _mm512_set1_ps(SG_EXP_SHIFT19)); /* k/16, exactly */
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(SG_EXP_LN2A), xc);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(SG_EXP_LN2B), r);
    __m512 s = _mm512_permutexvar_ps(_mm512_castps_si512(t), tab); /* lanes by index bits 0-3 */
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(SG_EXP_C3), r, _mm512_set1_ps(SG_EXP_C2));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f));
    /* s + (s r)(1 + c2 r + c3 r^2): s r does not wait for the polynomial; one rounding last */
    __m512 y = _mm512_fmadd_ps(_mm512_mul_ps(s, r), q, s);
    return _mm512_scalef_ps(y, n);
}

SG_VM_AVX512 static inline __m512 sg_neg16(__m512 x) {
    /* -x as the scalar code's negation: the sign bit flipped (NaN included) */
    return _mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int32_t)0x80000000u)));
}
SG_VM_AVX512 static inline __m512 sg_sigmoid16(__m512 x) {
    __m512 one = _mm512_set1_ps(1.0f);
    return _mm512_div_ps(one, _mm512_add_ps(one, sg_exp16(sg_neg16(x))));
}
SG_VM_AVX512 static inline __m512 sg_silu16(__m512 x) {
    return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), sg_exp16(sg_neg16(x))));
}

/* o[i] = F(x[i]) for i < n, 16 at a time, the tail under a mask (masked-off lanes are neither
 * read nor written); o may be x. */
#define SG_VM_MAP16(F)                                                                          \
    SG_VM_AVX512 static inline void sg_vm_##F(const float *x, float *o, int64_t n) {            \
        int64_t i = 0;                                                                          \
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(o + i, sg_##F##16(_mm512_loadu_ps(x + i))); \
        if (i < n) {                                                                            \
            __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);                                    \
            _mm512_mask_storeu_ps(o + i, m, sg_##F##16(_mm512_maskz_loadu_ps(m, x + i)));       \
        }                                                                                       \
    }
SG_VM_MAP16(exp)
SG_VM_MAP16(sigmoid)
SG_VM_MAP16(silu)
#undef SG_VM_MAP16

#else
#define SG_VM_VERSIONS(DEF) DEF(base, , sg_expf)
#define SG_VM_PICK(NAME, TYPE, PARAMS, ARGS)                                                    \
    static void NAME PARAMS { NAME##_base ARGS; }
#endif

#endif
