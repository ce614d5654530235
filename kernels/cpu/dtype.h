/* dtype.h: element types for CPU kernels: loads by dtype, the X-macros that stamp a loop out
 * once per C type, and the dtype arithmetic is done in (the conversions: sg_elem.h). */
#ifndef SG_CPU_DTYPE_H
#define SG_CPU_DTYPE_H

#include "sg_elem.h"
#include "sg_runtime.h"

#include <complex.h>
#include <string.h>

/* One element at p of a real dtype t as a double; of an integral dtype or bool as an int64. */
#define SG__LOAD_DOUBLE(NAME, NUM, KIND, SIZE, CTYPE, SUF, ...) \
    case SG_##NAME: return (double)SG_REAL_VALUE(KIND, SUF, *(const CTYPE *)p);
static inline double sg_load_double(sg_dtype t, const void *p) {
    switch (t) {
        SG_DTYPES_WHERE(SG__LOAD_DOUBLE, 1, 1, 1, 1, 1, 0)
    default: return 0;
    }
}
#undef SG__LOAD_DOUBLE
#define SG__LOAD_INT64(E, C) \
    case E: return (int64_t)*(const C *)p;
static inline int64_t sg_load_int64(sg_dtype t, const void *p) {
    switch (t) {
        SG_DTYPES_CTYPES_WHERE(SG__LOAD_INT64, 1, 1, 1, 0, 0, 0)
    default: return 0;
    }
}
#undef SG__LOAD_INT64

/* A real value as an int64, as C (and PyTorch) cast it: truncated toward zero; NaN and values
 * beyond int64's range give what that cast gives on x86, without undefined behaviour. */
static inline int64_t sg_double_to_int64(double x) {
    if (x != x) return 0;
    if (x >= 9.2233720368547758e18) return INT64_MAX;
    if (x <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)x;
}

/* x into an element at p of a real dtype t, as a cast does: bool takes x != 0, an integral
 * dtype sg_double_to_int64(x) wrapped to its width. */
#define SG__STORE_DOUBLE_BOOL(T, SUF)    *(T *)p = x != 0
#define SG__STORE_DOUBLE_UINT(T, SUF)    *(T *)p = (T)sg_double_to_int64(x)
#define SG__STORE_DOUBLE_SINT(T, SUF)    *(T *)p = (T)sg_double_to_int64(x)
#define SG__STORE_DOUBLE_FLOAT(T, SUF)   *(T *)p = SG_REAL_STORE(FLOAT, SUF, T, x)
#define SG__STORE_DOUBLE_REDUCED(T, SUF) *(T *)p = SG_REAL_STORE(REDUCED, SUF, T, x)
#define SG__STORE_DOUBLE(NAME, NUM, KIND, SIZE, T, SUF, ...) \
    case SG_##NAME: SG__STORE_DOUBLE_##KIND(T, SUF); break;
static inline void sg_store_double(sg_dtype t, void *p, double x) {
    switch (t) {
        SG_DTYPES_WHERE(SG__STORE_DOUBLE, 1, 1, 1, 1, 1, 0)
    default: break;
    }
}
#undef SG__STORE_DOUBLE

/* x as a floating dtype t holds it (c10's scalar_t of a value): rounded to t's element and
 * read back; x itself for other dtypes. */
#define SG__ROUND_TO(NAME, NUM, KIND, SIZE, T, SUF, ...) \
    case SG_##NAME: return SG_REAL_VALUE(KIND, SUF, SG_REAL_STORE(KIND, SUF, T, x));
static inline double sg_round_to(sg_dtype t, double x) {
    switch (t) {
        SG_DTYPES_WHERE(SG__ROUND_TO, 0, 0, 0, 1, 1, 0)
    default: return x;
    }
}
#undef SG__ROUND_TO

/* X(dtype enum, C type) for the dtypes loops are written for directly, from sg_dtypes.h's
 * table. float16 and bfloat16 are computed in float32 (as PyTorch's CPU kernels do) and only
 * converted. The flags are the kinds: bool, uint, sint, float, reduced, complex. */
#define SG_FOR_REAL(X)     SG_DTYPES_CTYPES_WHERE(X, 1, 1, 1, 1, 0, 0)
#define SG_FOR_INTEGRAL(X) SG_DTYPES_CTYPES_WHERE(X, 0, 1, 1, 0, 0, 0)
#define SG_FOR_FLOATING(X) SG_DTYPES_CTYPES_WHERE(X, 0, 0, 0, 1, 0, 0)

/* The dtype kernels compute in for a result dtype: float32 for the 16-bit floats. */
static inline sg_dtype sg_compute_dtype(sg_dtype t) {
    return t == SG_FLOAT16 || t == SG_BFLOAT16 ? SG_FLOAT32 : t;
}

#endif
