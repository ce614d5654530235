/* pointwise.cuh: what the CUDA elementwise kernels (pointwise*.cu) share: a dtype visit that
 * instantiates only the kinds an op takes, one runner (iterator, launch, finish) with a fast
 * path for small ops, type promotion helpers and the checked conversion of a Scalar. */
#ifndef SG_CU_POINTWISE_CUH
#define SG_CU_POINTWISE_CUH

#include "loops.cuh"
#include "sg_pointwise_shape.h"

#include <math.h>

#include <limits>

/* ---- element arithmetic ------------------------------------------------------------------- */

/* Integers other than bool: their arithmetic wraps (as aten's does in practice), done in
 * uint64 so that no signed overflow is undefined. */
template <class T> constexpr bool sg_pw_is_int() {
    return std::is_integral<T>::value && !std::is_same<T, bool>::value;
}
template <class T> __device__ __forceinline__ sg_acc_t<T> sg_pw_ld(T v) {
    return sg_cu_convert<sg_acc_t<T>>(v);
}
template <class T, class A> __device__ __forceinline__ T sg_pw_st(A v) {
    return sg_cu_convert<T>(v);
}
/* v rounded to T and back: the 16-bit floats round a quotient before trunc/floor, as aten's
 * CPU kernels do (the reference data's). */
template <class T, class A> __device__ __forceinline__ A sg_pw_narrow(A v) {
    if constexpr (sg_cu_is_half<T>()) return (float)T(v);
    else return v;
}

/* x != x for floating types; integers are never NaN (and comparing them with themselves
 * draws a warning) */
template <class A> __device__ __forceinline__ bool sg_pw_isnan(A x) {
    if constexpr (std::is_floating_point<A>::value) return x != x;
    else return ((void)x, false);
}

/* libm by the accumulate type: the float functions for float (accurate ones, not the __
 * intrinsics), the double ones for double */
#define SG_PW_MATH1(name)                                                                   \
    template <class A> __device__ __forceinline__ A sg_pw_##name(A x) {                    \
        if constexpr (std::is_same<A, float>::value) return name##f(x);                    \
        else return name(x);                                                               \
    }
#define SG_PW_MATH2(name)                                                                   \
    template <class A> __device__ __forceinline__ A sg_pw_##name(A x, A y) {               \
        if constexpr (std::is_same<A, float>::value) return name##f(x, y);                 \
        else return name(x, y);                                                            \
    }
SG_PW_MATH1(floor)
SG_PW_MATH1(ceil)
SG_PW_MATH1(trunc)
SG_PW_MATH1(rint)
SG_PW_MATH1(fabs)
SG_PW_MATH1(exp)
SG_PW_MATH1(log)
SG_PW_MATH1(sqrt)
SG_PW_MATH1(sin)
SG_PW_MATH1(cos)
SG_PW_MATH1(tanh)
SG_PW_MATH1(erf)
SG_PW_MATH2(fmod)
SG_PW_MATH2(copysign)
#undef SG_PW_MATH1
#undef SG_PW_MATH2

/* ---- dtype visit ---------------------------------------------------------------------------
 * As sg_cu_visit, but the kinds are a template argument, so that only those dtypes' kernels are
 * compiled. The message is the CPU's with "_cuda" (aten's). */
sg_status sg_pw_not_implemented(const char *op, sg_dtype t);

template <unsigned K, class F> sg_status sg_pw_visit(sg_dtype dt, const char *op, F &&f) {
#define SG_PW_VISIT_CASE(NAME, NUM, KIND, ...)                                               \
    case SG_##NAME:                                                                           \
        if constexpr ((K & SG_CU_KIND_##KIND) != 0) return f(sg_cu_tag<sg_cu_elem_t<SG_##NAME>>{}); \
        break;
    switch (dt) {
        SG_CU_DTYPES(SG_PW_VISIT_CASE)
    default: break;
    }
#undef SG_PW_VISIT_CASE
    return sg_pw_not_implemented(op, dt);
}

/* An unsigned type of a dtype's size, for kernels that move elements as bytes (where,
 * masked_fill). */
template <class F> sg_status sg_pw_visit_size(sg_dtype dt, const char *op, F &&f) {
    switch (sg_dtype_size(dt)) {
    case 1: return f(sg_cu_tag<uint8_t>{});
    case 2: return f(sg_cu_tag<uint16_t>{});
    case 4: return f(sg_cu_tag<uint32_t>{});
    case 8: return f(sg_cu_tag<uint64_t>{});
    default: return sg_pw_not_implemented(op, dt);
    }
}

/* ---- running one op ----------------------------------------------------------------------- */

/* Fills it as the iterator would for an iteration it need not build: an out= tensor and inputs
 * all contiguous, of one shape, on one CUDA device, of the dtypes the loops read, and no input a
 * different view of the output's memory. Rationale: building the iteration is most of the host
 * time of a small op (add on 64K floats) besides the launch. */
bool sg_pw_fast(const sg_iter_spec *s, sg_iter *it);

/* Runs f over spec's iteration: out = f(inputs...), element types Out and In... as the
 * iteration holds them (inputs cast to spec.compute unless spec.keep marks them). *ret gets a
 * reference to the result. */
template <class Out, class... In, class F>
sg_status sg_pw_run(const sg_iter_spec &spec, const F &f, sg_tensor **ret) {
    sg_iter   it;
    sg_status st;
    *ret = NULL;
    if (sg_pw_fast(&spec, &it)) {
        if ((st = sg_cu_pointwise<Out, In...>(&it, f, spec.op))) return st;
        *ret = sg_tensor_retain(spec.out);
        return SG_OK;
    }
    if ((st = sg_iter_build(&it, &spec, ret))) return st;
    if ((st = sg_cu_pointwise<Out, In...>(&it, f, spec.op))) {
        sg_iter_free(&it);
        sg_tensor_release(*ret);
        *ret = NULL;
        return st;
    }
    return sg_iter_finish(&it, ret);
}

/* A spec for out = f(a[, b]) in the compute dtype. */
static inline sg_iter_spec sg_pw_spec(const char *op, sg_tensor *out, const sg_tensor *a,
                                      const sg_tensor *b, sg_dtype result, sg_dtype compute,
                                      sg_dtype out_dtype) {
    sg_iter_spec s = {};
    s.op = op;
    s.out = out;
    s.in[0] = a;
    s.in[1] = b;
    s.nin = b ? 2 : 1;
    s.compute = compute;
    s.result = result;
    s.out_dtype = out_dtype;
    return s;
}

/* ---- promotion, scalars ------------------------------------------------------------------- */


/* Whether t is a 0-dim CPU tensor whose value is zero (an integer divisor read on the host;
 * a divisor on the device is not checked, as that would need a synchronisation). */
bool sg_pw_host_zero(const sg_tensor *t);


/* ---- the families (pointwise*.cu) --------------------------------------------------------- */

sg_status sg_pw_register_compare(void); /* pointwise_compare.cu */
sg_status sg_pw_register_unary(void);   /* pointwise_unary.cu */
sg_status sg_pw_register_select(void);  /* pointwise_select.cu */

#endif
