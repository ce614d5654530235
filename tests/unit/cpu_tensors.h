/* cpu_tensors.h: what the CPU kernel tests share: small CPU tensors made from doubles (zeros
 * where no values are given), element i (row-major, whatever the strides) read back as a
 * double, and a shape check. Every dtype the kernels support; float16/bfloat16 via float32. */
#ifndef SG_TEST_CPU_TENSORS_H
#define SG_TEST_CPU_TENSORS_H

#include "check.h"
#include "dtype.h"

#include <math.h>

static inline void put(sg_dtype dt, char *p, double v) {
    switch (dt) {
    case SG_FLOAT32: *(float *)p = (float)v; break;
    case SG_FLOAT64: *(double *)p = v; break;
    case SG_FLOAT16: *(sg_half *)p = sg_float_to_half((float)v); break;
    case SG_BFLOAT16: *(sg_bf16 *)p = sg_float_to_bf16((float)v); break;
    case SG_INT64: *(int64_t *)p = (int64_t)v; break;
    case SG_INT32: *(int32_t *)p = (int32_t)v; break;
    case SG_INT16: *(int16_t *)p = (int16_t)v; break;
    case SG_INT8: *(int8_t *)p = (int8_t)v; break;
    case SG_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case SG_BOOL: *(bool *)p = v != 0; break;
    default: break;
    }
}

static inline sg_tensor *make(sg_dtype dt, const int64_t *sizes, int32_t n, const double *v) {
    sg_tensor *t = NULL;
    CHECK(sg_tensor_empty(sizes, n, dt, SG_CPU, &t) == SG_OK);
    int64_t k = t ? sg_tensor_numel(t) : 0;
    for (int64_t i = 0; i < k; i++)
        put(dt, (char *)sg_tensor_data(t) + i * (int64_t)sg_dtype_size(dt), v ? v[i] : 0);
    return t;
}

static inline double at(const sg_tensor *t, int64_t i) {
    int64_t off = 0, rest = i;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
        off += (rest % t->sizes[d]) * t->strides[d];
        rest /= t->sizes[d];
    }
    const char *p = (const char *)sg_tensor_data(t) + off * (int64_t)sg_dtype_size((sg_dtype)t->dtype);
    switch (t->dtype) {
    case SG_FLOAT32: return *(const float *)p;
    case SG_FLOAT64: return *(const double *)p;
    case SG_FLOAT16: return sg_half_to_float(*(const sg_half *)p);
    case SG_BFLOAT16: return sg_bf16_to_float(*(const sg_bf16 *)p);
    case SG_INT64: return (double)*(const int64_t *)p;
    case SG_INT32: return *(const int32_t *)p;
    case SG_INT16: return *(const int16_t *)p;
    case SG_INT8: return *(const int8_t *)p;
    case SG_UINT8: return *(const uint8_t *)p;
    case SG_BOOL: return *(const bool *)p;
    default: return NAN;
    }
}

static inline bool shape_is(const sg_tensor *t, const int64_t *sizes, int32_t n) {
    if (!t || t->ndim != n) return false;
    for (int32_t i = 0; i < n; i++)
        if (t->sizes[i] != sizes[i]) return false;
    return true;
}

#endif
