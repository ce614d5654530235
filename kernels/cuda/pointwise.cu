/* pointwise.cu: elementwise arithmetic on CUDA (add/sub with alpha, mul, div in its three
 * rounding modes, maximum/minimum, pow of two tensors), what pointwise*.cu share (the runner's
 * fast path, promotion, Scalar checks), and the registration of every elementwise kernel.
 *
 * Semantics are the CPU kernels' (kernels/cpu/pointwise.c), which are aten's: the iteration is
 * built in the result dtype, and float16/bfloat16 elements are loaded, computed in float and
 * rounded once (aten's CUDA opmath). Integer arithmetic wraps. Integer division by zero is an
 * error where the divisor is a host scalar (read without a synchronisation); a zero in a device
 * tensor gives -1, as aten's CUDA kernels give without an error. */
#include "pointwise.cuh"

#include <float.h>

/* ---- shared helpers --------------------------------------------------------------------- */

sg_status sg_pw_not_implemented(const char *op, sg_dtype t) {
    return sg_error(SG_EUNSUPPORTED, "\"%s_cuda\" not implemented for '%s'", op,
                    sg_dtype_c10_name(t));
}


bool sg_pw_host_zero(const sg_tensor *t) {
    if (!t || t->device.type != SG_DEV_CPU || t->ndim != 0) return false;
    const unsigned char *p = (const unsigned char *)sg_tensor_data(t);
    size_t               n = sg_dtype_size(dtype_of(t));
    if (!p) return false;
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true; /* an integer's or bool's zero is all zero bytes */
}


static bool same_sizes(const sg_tensor *a, const sg_tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int32_t i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i]) return false;
    return true;
}

bool sg_pw_fast(const sg_iter_spec *s, sg_iter *it) {
    sg_tensor *out = s->out;
    if (!out || out->device.type != SG_DEV_CUDA || s->nin < 1 || s->nin >= SG_ITER_MAX ||
        dtype_of(out) != s->out_dtype || s->result != s->out_dtype ||
        !sg_tensor_is_contiguous(out))
        return false;
    char *po = (char *)sg_tensor_data(out);
    for (int32_t i = 0; i < s->nin; i++) {
        const sg_tensor *t = s->in[i];
        bool             keep = (s->keep >> i) & 1u;
        if (!sg_device_eq(t->device, out->device) || (!keep && dtype_of(t) != s->compute) ||
            !same_sizes(t, out) || !sg_tensor_is_contiguous(t))
            return false;
        if (t->storage->data && t->storage->data == out->storage->data &&
            ((char *)sg_tensor_data(t) != po || dtype_of(t) != dtype_of(out)))
            return false; /* another view of the output's memory: the iterator stages it */
    }
    memset(it, 0, offsetof(sg_iter, data));
    it->nops = 1 + s->nin;
    it->numel = sg_tensor_numel(out);
    it->compute = s->compute;
    it->out_dtype = s->out_dtype;
    it->device = out->device;
    it->ndim = 1;
    it->shape[0] = it->numel;
    it->data[0] = po;
    it->stride[0][0] = (int64_t)sg_dtype_size(dtype_of(out));
    for (int32_t i = 0; i < s->nin; i++) {
        it->data[1 + i] = (char *)sg_tensor_data(s->in[i]);
        it->stride[1 + i][0] = (int64_t)sg_dtype_size(dtype_of(s->in[i]));
    }
    return true;
}

/* ---- functors ----------------------------------------------------------------------------- */

namespace {

/* Integer arithmetic in uint64: wraps, never undefined; the low bits are the narrow type's. */
template <class T> __device__ __forceinline__ uint64_t wide(T v) { return (uint64_t)(int64_t)v; }

/* a + alpha * b (sub passes -alpha) */
template <class T> struct add_fn {
    sg_acc_t<T> alpha;
    __device__ T operator()(T a, T b) const {
        if constexpr (sg_pw_is_int<T>()) return (T)(wide(a) + wide(alpha) * wide(b));
        else if constexpr (std::is_same<T, bool>::value) return (a + alpha * b) != 0;
        /* alpha * b rounded to a 16-bit type first, as aten's CPU loop (the reference) does */
        else if constexpr (sg_cu_is_half<T>())
            return sg_pw_st<T>(sg_pw_ld(a) + sg_pw_ld(sg_pw_st<T>(alpha * sg_pw_ld(b))));
        else return sg_pw_st<T>(sg_pw_ld(a) + alpha * sg_pw_ld(b));
    }
};

template <class T> struct mul_fn {
    __device__ T operator()(T a, T b) const {
        if constexpr (sg_pw_is_int<T>()) return (T)(wide(a) * wide(b));
        else if constexpr (std::is_same<T, bool>::value) return a && b;
        else return sg_pw_st<T>(sg_pw_ld(a) * sg_pw_ld(b));
    }
};

/* NaN from either side (the first where both), else the larger (smaller); ties give b */
template <class T> struct maxmin_fn {
    bool is_max;
    __device__ T operator()(T a, T b) const {
        sg_acc_t<T> x = sg_pw_ld(a), y = sg_pw_ld(b);
        if constexpr (sg_cu_is_float<T>()) {
            if (x != x) return a;
            if (y != y) return b;
        }
        return (is_max ? x > y : x < y) ? a : b;
    }
};

template <class T> struct div_fn {
    __device__ T operator()(T a, T b) const { return sg_pw_st<T>(sg_pw_ld(a) / sg_pw_ld(b)); }
};

/* integer quotients: -1 for a zero divisor (what aten's CUDA kernels give); the most negative
 * value over -1 wraps */
template <class T> __device__ __forceinline__ T int_div(T a, T b, bool floor) {
    if (b == 0) return (T)-1;
    if constexpr (std::is_signed<T>::value) {
        if (b == (T)-1) return (T)(0 - wide(a));
        T q = (T)(a / b);
        if (floor && (T)(a % b) != 0 && ((a < 0) != (b < 0))) q = (T)(q - 1);
        return q;
    } else {
        (void)floor;
        return (T)(a / b);
    }
}

template <class T> struct divt_fn {
    __device__ T operator()(T a, T b) const {
        if constexpr (sg_pw_is_int<T>()) {
            return int_div(a, b, false);
        } else {
            using A = sg_acc_t<T>;
            return sg_pw_st<T>(sg_pw_trunc(sg_pw_narrow<T, A>(sg_pw_ld(a) / sg_pw_ld(b))));
        }
    }
};

/* floating floor division as aten's div_floor_floating: fmod's remainder corrects the
 * quotient, which is then rounded to the nearest integer */
template <class T> struct divf_fn {
    __device__ T operator()(T a, T b) const {
        if constexpr (sg_pw_is_int<T>()) {
            return int_div(a, b, true);
        } else {
            using A = sg_acc_t<T>;
            A x = sg_pw_ld(a), y = sg_pw_ld(b);
            if (y == 0) return sg_pw_st<T>(x / y);
            A mod = sg_pw_fmod(x, y), div = (x - mod) / y;
            if (mod != 0 && ((y < 0) != (mod < 0))) div -= 1;
            A fl;
            if (div != 0) {
                fl = sg_pw_floor(div);
                if (div - fl > (A)0.5) fl += 1;
            } else {
                fl = sg_pw_copysign((A)0, x / y);
            }
            return sg_pw_st<T>(fl);
        }
    }
};

/* integer powers: wrap; negative exponents give 1 for 1, +-1 for -1, else 0 */
__device__ __forceinline__ uint64_t int_pow(int64_t a, int64_t b) {
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? (uint64_t)-1 : 1) : 0;
    uint64_t r = 1, x = (uint64_t)a;
    while (b) {
        if (b & 1) r *= x;
        x *= x;
        b >>= 1;
    }
    return r;
}

/* floating powers in double, rounded once (the CPU's libm pow on the same values) */
template <class T> struct pow_fn {
    __device__ T operator()(T a, T b) const {
        if constexpr (sg_pw_is_int<T>()) return (T)int_pow((int64_t)a, (int64_t)b);
        else return sg_pw_st<T>(pow((double)sg_pw_ld(a), (double)sg_pw_ld(b)));
    }
};

constexpr unsigned NUM = SG_CU_FLOATS | SG_CU_INTS;

/* ---- add, sub, mul ------------------------------------------------------------------------ */

sg_status add_sub(const char *op, sg_tensor *self, sg_tensor *other, sg_scalar alpha, bool sub,
                  sg_tensor *out, sg_tensor **ret) {
    *ret = NULL;
    sg_dtype  r;
    double    af = 0;
    int64_t   ai = 0;
    sg_status st = sg_pointwise_add_args(op, self, other, alpha, sub, &r, &af, &ai);
    if (st) return st;
    if (sub) { /* negated in uint64 for integers, so INT64_MIN wraps */
        af = -af;
        ai = (int64_t)(0 - (uint64_t)ai);
    }
    sg_iter_spec spec = sg_pw_spec(op, out, self, other, r, r, r);
    return sg_pw_visit<SG_CU_ALL>(r, op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        add_fn<T> f;
        if constexpr (sg_cu_is_float<T>()) f.alpha = (sg_acc_t<T>)af;
        else f.alpha = (T)ai;
        return sg_pw_run<T, T, T>(spec, f, ret);
    });
}

sg_status add_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_scalar alpha,
                  sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return add_sub("add", self, other, alpha, false, out, ret);
}
sg_status sub_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_scalar alpha,
                  sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return add_sub("sub", self, other, alpha, true, out, ret);
}

sg_status mul_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                  sg_tensor **ret) {
    (void)ks;
    *ret = NULL;
    sg_dtype     r = sg_pointwise_result(self, other, NULL);
    sg_iter_spec spec = sg_pw_spec("mul", out, self, other, r, r, r);
    return sg_pw_visit<SG_CU_ALL>(r, "mul", [&](auto tag) {
        using T = typename decltype(tag)::type;
        return sg_pw_run<T, T, T>(spec, mul_fn<T>{}, ret);
    });
}

/* ---- div ---------------------------------------------------------------------------------- */

sg_status div_run(sg_tensor *self, sg_tensor *other, int mode, sg_tensor *out, sg_tensor **ret) {
    *ret = NULL;
    sg_dtype r = sg_pointwise_div_result(self, other, mode);
    if (mode && sg_dtype_is_integral(r, true) && sg_pw_host_zero(other) &&
        sg_tensor_numel(self) > 0)
        return sg_error(SG_EINVAL, "div: ZeroDivisionError");
    sg_iter_spec spec = sg_pw_spec("div", out, self, other, r, r, r);
    if (mode == 0)
        return sg_pw_visit<SG_CU_FLOATS>(r, "div", [&](auto tag) {
            using T = typename decltype(tag)::type;
            return sg_pw_run<T, T, T>(spec, div_fn<T>{}, ret);
        });
    return sg_pw_visit<NUM>(r, "div", [&](auto tag) {
        using T = typename decltype(tag)::type;
        return mode == 1 ? sg_pw_run<T, T, T>(spec, divt_fn<T>{}, ret)
                         : sg_pw_run<T, T, T>(spec, divf_fn<T>{}, ret);
    });
}

sg_status div_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                  sg_tensor **ret) {
    (void)ks;
    return div_run(self, other, 0, out, ret);
}
sg_status div_out_mode(sg_keyset ks, sg_tensor *self, sg_tensor *other, const char *rounding,
                       sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    int       mode = 0;
    sg_status st = sg_pointwise_div_mode(rounding, &mode);
    if (st) {
        *ret = NULL;
        return st;
    }
    return div_run(self, other, mode, out, ret);
}

/* ---- maximum, minimum, pow ---------------------------------------------------------------- */

sg_status maxmin(const char *op, bool is_max, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                 sg_tensor **ret) {
    *ret = NULL;
    sg_dtype     r = sg_pointwise_result(self, other, NULL);
    sg_iter_spec spec = sg_pw_spec(op, out, self, other, r, r, r);
    return sg_pw_visit<SG_CU_ALL>(r, op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        return sg_pw_run<T, T, T>(spec, maxmin_fn<T>{is_max}, ret);
    });
}
sg_status maximum_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                      sg_tensor **ret) {
    (void)ks;
    return maxmin("maximum", true, self, other, out, ret);
}
sg_status minimum_out(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                      sg_tensor **ret) {
    (void)ks;
    return maxmin("minimum", false, self, other, out, ret);
}

sg_status pow_out(sg_keyset ks, sg_tensor *self, sg_tensor *exponent, sg_tensor *out,
                  sg_tensor **ret) {
    (void)ks;
    *ret = NULL;
    sg_dtype     r = sg_pointwise_result(self, exponent, NULL);
    sg_iter_spec spec = sg_pw_spec("pow", out, self, exponent, r, r, r);
    return sg_pw_visit<NUM>(r, "pow", [&](auto tag) {
        using T = typename decltype(tag)::type;
        return sg_pw_run<T, T, T>(spec, pow_fn<T>{}, ret);
    });
}

} // namespace

/* ---- registration ------------------------------------------------------------------------- */

extern "C" sg_status sg_cu_register_pointwise(void) {
    SG_CU_REG(aten_add_out, add_out);
    SG_CU_REG(aten_sub_out, sub_out);
    SG_CU_REG(aten_mul_out, mul_out);
    SG_CU_REG(aten_div_out, div_out);
    SG_CU_REG(aten_div_out_mode, div_out_mode);
    SG_CU_REG(aten_maximum_out, maximum_out);
    SG_CU_REG(aten_minimum_out, minimum_out);
    SG_CU_REG(aten_pow_Tensor_Tensor_out, pow_out);
    sg_status st = sg_pw_register_compare();
    if (!st) st = sg_pw_register_unary();
    if (!st) st = sg_pw_register_select();
    return st;
}
