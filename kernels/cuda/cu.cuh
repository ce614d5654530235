/* cu.cuh: what the CUDA kernels share: element types per dtype, conversions, dtype dispatch,
 * the device guard and stream, and launch error reporting. CUDA C++; the kernels' entry points
 * are the generated aten API's C kernel types, so nothing of this crosses into C. */
#ifndef SG_CU_CUH
#define SG_CU_CUH

#include "sg_iter.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

/* ---- element types ------------------------------------------------------------------------ */

template <class T> struct sg_cu_tag { using type = T; };

/* The type kernels do arithmetic in: float for the 16-bit floats (as aten's opmath_type). */
template <class T> struct sg_cu_acc_of { using type = T; };
template <> struct sg_cu_acc_of<__half> { using type = float; };
template <> struct sg_cu_acc_of<__nv_bfloat16> { using type = float; };
template <class T> using sg_acc_t = typename sg_cu_acc_of<T>::type;

template <class T> constexpr bool sg_cu_is_half() {
    return std::is_same<T, __half>::value || std::is_same<T, __nv_bfloat16>::value;
}
template <class T> constexpr bool sg_cu_is_float() {
    return sg_cu_is_half<T>() || std::is_floating_point<T>::value;
}

/* Converts between element types as aten's static_cast_with_inter_type: through float for the
 * 16-bit floats, `!= 0` into bool. */
template <class To, class From> __host__ __device__ inline To sg_cu_convert(From v) {
    if constexpr (std::is_same<To, From>::value) {
        return v;
    } else if constexpr (std::is_same<To, bool>::value) {
        if constexpr (sg_cu_is_half<From>()) return (float)v != 0.0f;
        else return v != From(0);
    } else if constexpr (sg_cu_is_half<From>()) {
        return sg_cu_convert<To>((float)v);
    } else if constexpr (sg_cu_is_half<To>()) {
        return To((float)v);
    } else {
        return static_cast<To>(v);
    }
}

/* The kinds of dtype a kernel takes, for sg_cu_visit. */
enum : unsigned {
    SG_CU_FLOATS = 1u,     /* float32, float64, float16, bfloat16 */
    SG_CU_INTS = 2u,       /* uint8, int8, int16, int32, int64 */
    SG_CU_BOOL = 4u,
    SG_CU_ALL = 7u,
};
/* The sg_cu_visit kind of each KIND of sg_dtypes.h's table (complex has none). */
#define SG_CU_KIND_BOOL    SG_CU_BOOL
#define SG_CU_KIND_UINT    SG_CU_INTS
#define SG_CU_KIND_SINT    SG_CU_INTS
#define SG_CU_KIND_FLOAT   SG_CU_FLOATS
#define SG_CU_KIND_REDUCED SG_CU_FLOATS

/* The dtypes CUDA kernels take: the table's rows but complex. */
#define SG_CU_DTYPES(X) SG_DTYPES_WHERE(X, 1, 1, 1, 1, 1, 0)

/* The element type of dtype D on the device: the table's C type, but CUDA's own 16-bit floats
 * for the two whose C type is their bits. */
template <int D> struct sg_cu_elem {};
#define SG_CU_ELEM(E, T) \
    template <> struct sg_cu_elem<E> { using type = T; };
SG_DTYPES_CTYPES_WHERE(SG_CU_ELEM, 1, 1, 1, 1, 0, 0)
#undef SG_CU_ELEM
template <> struct sg_cu_elem<SG_FLOAT16> { using type = __half; };
template <> struct sg_cu_elem<SG_BFLOAT16> { using type = __nv_bfloat16; };
template <int D> using sg_cu_elem_t = typename sg_cu_elem<D>::type;

/* Calls f(sg_cu_tag<T>{}) with T the element type of dt, where dt is of a kind in `kinds`;
 * otherwise an error naming the op and dtype (aten's "not implemented for 'Bool'"). */
template <class F> sg_status sg_cu_visit(sg_dtype dt, unsigned kinds, const char *op, F &&f) {
#define SG_CU_VISIT_CASE(NAME, NUM, KIND, ...)                                   \
    case SG_##NAME:                                                               \
        if (kinds & SG_CU_KIND_##KIND) return f(sg_cu_tag<sg_cu_elem_t<SG_##NAME>>{}); \
        break;
    switch (dt) {
        SG_CU_DTYPES(SG_CU_VISIT_CASE)
    default: break;
    }
#undef SG_CU_VISIT_CASE
    return sg_error(SG_EUNSUPPORTED, "%s: \"%s_cuda\" not implemented for '%s'", op, op,
                    sg_dtype_c10_name(dt));
}

/* ---- devices, streams, errors ------------------------------------------------------------- */

/* Makes a tensor's device current for a scope and restores the previous one (aten's
 * CUDAGuard), so kernels and allocations land on the tensor's device and its current stream. */
struct sg_cu_guard {
    int prev = -1;
    explicit sg_cu_guard(sg_device d) {
        int cur = 0;
        if (d.type == SG_DEV_CUDA && cudaGetDevice(&cur) == cudaSuccess && cur != d.index &&
            cudaSetDevice(d.index) == cudaSuccess)
            prev = cur;
    }
    ~sg_cu_guard() {
        if (prev >= 0) (void)cudaSetDevice(prev);
    }
    sg_cu_guard(const sg_cu_guard &) = delete;
    sg_cu_guard &operator=(const sg_cu_guard &) = delete;
};

/* The calling thread's current stream of its current device. */
static inline cudaStream_t sg_cu_stream(void) { return (cudaStream_t)sg_cuda_current_stream(); }

/* SG_OK, or SG_EDEVICE with CUDA's message for the last launch (or call) that failed. */
static inline sg_status sg_cu_check(const char *op) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return SG_OK;
    return sg_error(SG_EDEVICE, "%s: CUDA error: %s", op, cudaGetErrorString(e));
}
static inline sg_status sg_cu_status(cudaError_t e, const char *op) {
    if (e == cudaSuccess) return SG_OK;
    (void)cudaGetLastError(); /* a sticky-free error is cleared so the next launch is not blamed */
    return sg_error(SG_EDEVICE, "%s: CUDA error: %s", op, cudaGetErrorString(e));
}

/* The number of streaming multiprocessors of the current device (cached per device). */
int sg_cu_sm_count(void);

static inline int64_t sg_cu_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Registers a typed kernel for CUDA, returning early on failure. */
#define SG_CU_REG(op, fn)                                                 \
    do {                                                                  \
        sg_status st_ = op##_register(SG_KEY_CUDA, fn, NULL);             \
        if (st_) return st_;                                              \
    } while (0)

/* ---- op families (each file's registration) -------------------------------------------- */

extern "C" {
sg_status sg_cu_register_cast(void);
sg_status sg_cu_register_pointwise(void);
sg_status sg_cu_register_reduce(void);
sg_status sg_cu_register_norm(void);
sg_status sg_cu_register_linalg(void);
sg_status sg_cu_register_index(void);
sg_status sg_cu_register_factory(void);
}

#endif
