/* vmath.h: float32 functions written so that loops over them vectorise (no branches, no libm
 * calls): exp, and what is built on it. Accuracy: within 2 ulp of the correctly rounded
 * result over the whole range (checked against libm's expf in test_cpu_pointwise).
 *
 * exp(x) = 2^n * e^r with n = round(x / ln 2), r = x - n ln 2 (in two parts for precision),
 * e^r by Cephes's degree-6 minimax polynomial for expf on [-ln2/2, ln2/2]; 2^n is applied as
 * two halves so that results down to the subnormals stay representable. */
#ifndef SG_CPU_VMATH_H
#define SG_CPU_VMATH_H

#include <stdint.h>
#include <string.h>

static inline float sg_pow2i(int32_t n) {
    uint32_t bits = (uint32_t)(n + 127) << 23;
    float    f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline float sg_expf(float x) {
    float xc = x > 88.8f ? 88.8f : x < -104.0f ? -104.0f : x;
    float t = xc * 1.44269504088896341f + 12582912.0f; /* round to nearest: 1.5 * 2^23 */
    float n = t - 12582912.0f;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t ni = (int32_t)n, n1 = ni >> 1, n2 = ni - n1;
    float   y = p * sg_pow2i(n1) * sg_pow2i(n2);
    return x != x ? x : y;
}

static inline float sg_sigmoidf(float x) { return 1.0f / (1.0f + sg_expf(-x)); }
static inline float sg_siluf(float x) { return x / (1.0f + sg_expf(-x)); }
static inline float sg_tanhf(float x) {
    /* tanh(x) = 1 - 2 / (e^{2x} + 1); exact enough away from 0, and x itself near 0 */
    float e = sg_expf(2.0f * x);
    float t = 1.0f - 2.0f / (e + 1.0f);
    float ax = x < 0 ? -x : x;
    return ax < 0.0004f ? x : t;
}

#endif
