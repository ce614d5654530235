/* sg_elem.h: one element of a dtype in host memory: the 16-bit floats' conversions to and from
 * float (round to nearest even, as c10::Half and c10::BFloat16 convert), and the macros that code
 * expanded from sg_dtypes.h's table reads and writes elements with. */
#ifndef SG_ELEM_H
#define SG_ELEM_H

#include "sg_dtypes.h"

#include <string.h>

/* Without branches, so that loops over it vectorise: the exponent rebiased (inf and nan to
 * exponent 255), zero and subnormals as their integer times 2^-24, then the sign. */
static inline float sg_half_to_float(sg_half h) {
    uint32_t em = h & 0x7fffu, sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t bits = (em << 13) + (112u << 23);
    bits += em >= 0x7c00u ? 112u << 23 : 0;
    float f;
    memcpy(&f, &bits, 4);
    f = em < 0x400u ? (float)em * 5.9604644775390625e-8f : f;
    memcpy(&bits, &f, 4);
    bits |= sign;
    memcpy(&f, &bits, 4);
    return f;
}

static inline sg_half sg_float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or nan */
        return (sg_half)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
    if (absx >= 0x477ff000u) return (sg_half)(sign | 0x7c00); /* rounds to inf */
    if (absx < 0x38800000u) { /* subnormal or zero in half */
        float a;
        memcpy(&a, &absx, 4);
        /* scale so that the half's subnormal unit is 1, then round to nearest even */
        float   scaled = a * 16777216.0f; /* 2^24 */
        int32_t r = (int32_t)scaled;
        float   rem = scaled - (float)r;
        if (rem > 0.5f || (rem == 0.5f && (r & 1))) r++;
        return (sg_half)(sign | (uint32_t)r);
    }
    uint32_t mant = absx & 0x7fffff, exp = (absx >> 23) - 127 + 15;
    uint32_t h = exp << 10 | mant >> 13, rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++; /* may carry into the exponent: fine */
    return (sg_half)(sign | h);
}

static inline float sg_bf16_to_float(sg_bf16 b) {
    uint32_t bits = (uint32_t)b << 16;
    float    f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline sg_bf16 sg_float_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (sg_bf16)((x >> 16) | 0x40); /* quiet nan */
    x += 0x7fff + ((x >> 16) & 1); /* round to nearest even */
    return (sg_bf16)(x >> 16);
}

/* The 16-bit conversions under the dtype table's SUF names (f16, bf16), for code expanded from
 * the table; bfloat16's already have them. */
#define sg_f16_to_float sg_half_to_float
#define sg_float_to_f16 sg_float_to_half

/* Code expanded from the dtype table reads and writes elements through these, by the KIND and
 * SUF columns: SG_REAL_VALUE gives a real dtype's element in the type arithmetic is done in
 * (the 16-bit floats as float); SG_REAL_STORE makes an element of C type CTYPE of a floating or
 * complex dtype from a real x (a complex one's imaginary part 0). */
#define SG_REAL_VALUE(KIND, SUF, v)            SG__REAL_VALUE_##KIND(SUF, v)
#define SG__REAL_VALUE_BOOL(SUF, v)            (v)
#define SG__REAL_VALUE_UINT(SUF, v)            (v)
#define SG__REAL_VALUE_SINT(SUF, v)            (v)
#define SG__REAL_VALUE_FLOAT(SUF, v)           (v)
#define SG__REAL_VALUE_REDUCED(SUF, v)         sg_##SUF##_to_float(v)
#define SG_REAL_STORE(KIND, SUF, CTYPE, x)     SG__REAL_STORE_##KIND(SUF, CTYPE, x)
#define SG__REAL_STORE_FLOAT(SUF, CTYPE, x)    ((CTYPE)(x))
#define SG__REAL_STORE_REDUCED(SUF, CTYPE, x)  sg_float_to_##SUF((float)(x))
#define SG__REAL_STORE_COMPLEX(SUF, CTYPE, x)  ((CTYPE)(x))

#endif
