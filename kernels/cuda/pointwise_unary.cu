/* pointwise_unary.cu: unary elementwise ops on CUDA: the floating functions (exp, log, sqrt,
 * rsqrt, sin, cos, tanh, sigmoid, silu, erf, reciprocal, gelu none/tanh; integer inputs give
 * float32), the dtype-keeping ones (floor, ceil, round and round.decimals, sign, neg, abs,
 * relu). As kernels/cpu/pointwise.c: float16/bfloat16 are computed in float and rounded once,
 * float32 with CUDA's accurate libm (within 2 ulp; no __ intrinsics), sign(NaN) is 0, abs of
 * the most negative integer wraps to itself, relu keeps NaN. */
#include "pointwise.cuh"

namespace {

/* ---- element functions, on the accumulate type A ------------------------------------------ */

#define UNOP(NAME, EXPR)                                                                      \
    struct NAME {                                                                              \
        template <class A> __device__ __forceinline__ static A f(A x) { return (EXPR); }       \
    };
UNOP(op_exp, sg_pw_exp(x))
UNOP(op_log, sg_pw_log(x))
UNOP(op_sqrt, sg_pw_sqrt(x))
UNOP(op_rsqrt, (A)1 / sg_pw_sqrt(x))
UNOP(op_sin, sg_pw_sin(x))
UNOP(op_cos, sg_pw_cos(x))
UNOP(op_tanh, sg_pw_tanh(x))
UNOP(op_sigmoid, (A)1 / ((A)1 + sg_pw_exp(-x)))
UNOP(op_silu, x / ((A)1 + sg_pw_exp(-x)))
UNOP(op_erf, sg_pw_erf(x))
UNOP(op_recip, (A)1 / x)
UNOP(op_gelu, (A)0.5 * x * ((A)1 + sg_pw_erf(x * (A)0.70710678118654752440)))
UNOP(op_gelu_tanh,
     (A)0.5 * x * ((A)1 + sg_pw_tanh((A)0.79788456080286535588 * (x + (A)0.044715 * x * x * x))))
UNOP(op_floor, sg_pw_floor(x))
UNOP(op_ceil, sg_pw_ceil(x))
UNOP(op_round, sg_pw_rint(x)) /* half to even, as nearbyint */
#undef UNOP

/* a floating function of a floating T */
template <class T, class Op> struct float_fn {
    __device__ T operator()(T a) const { return sg_pw_st<T>(Op::f(sg_pw_ld(a))); }
};

/* round.decimals: x * 10^d rounded half to even, scaled back (the other way for d < 0) */
template <class T> struct round_dec_fn {
    sg_acc_t<T> ten; /* 10^|d| */
    bool        neg;
    __device__ T operator()(T a) const {
        sg_acc_t<T> x = sg_pw_ld(a);
        return sg_pw_st<T>(neg ? sg_pw_rint(x / ten) * ten : sg_pw_rint(x * ten) / ten);
    }
};

template <class T> struct ident_fn {
    __device__ T operator()(T a) const { return a; }
};

template <class T> struct neg_fn {
    __device__ T operator()(T a) const {
        if constexpr (sg_pw_is_int<T>()) return (T)(0 - (uint64_t)(int64_t)a);
        else return sg_pw_st<T>(-sg_pw_ld(a));
    }
};

template <class T> struct abs_fn {
    __device__ T operator()(T a) const {
        if constexpr (!sg_pw_is_int<T>()) return sg_pw_st<T>(sg_pw_fabs(sg_pw_ld(a)));
        else if constexpr (std::is_signed<T>::value) return a < 0 ? (T)(0 - (uint64_t)(int64_t)a) : a;
        else return a;
    }
};

template <class T> struct relu_fn {
    __device__ T operator()(T a) const {
        if constexpr (sg_pw_is_int<T>()) {
            return a > 0 ? a : (T)0;
        } else {
            sg_acc_t<T> x = sg_pw_ld(a);
            return x > 0 || x != x ? a : sg_pw_st<T>((sg_acc_t<T>)0);
        }
    }
};

/* (x > 0) - (x < 0): 0 for zeros and NaN */
template <class T> struct sign_fn {
    __device__ T operator()(T a) const {
        if constexpr (sg_pw_is_int<T>()) {
            if constexpr (std::is_signed<T>::value) return (T)((a > 0) - (a < 0));
            else return (T)(a > 0);
        } else {
            sg_acc_t<T> x = sg_pw_ld(a);
            return sg_pw_st<T>((sg_acc_t<T>)((x > 0) - (x < 0)));
        }
    }
};

constexpr unsigned NUM = SG_CU_FLOATS | SG_CU_INTS;

/* out = f(self) of one dtype r (the result and the compute dtype) */
template <unsigned K, template <class> class Fn, class Init>
sg_status un_run(const char *op, sg_tensor *self, sg_dtype r, sg_tensor *out, sg_tensor **ret,
                 Init init) {
    *ret = NULL;
    sg_iter_spec spec = sg_pw_spec(op, out, self, NULL, r, r, r);
    return sg_pw_visit<K>(r, op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        Fn<T> f{};
        init(f);
        return sg_pw_run<T, T>(spec, f, ret);
    });
}
constexpr auto no_init = [](auto &) {};

/* ---- floating functions: integers (and bool) become float32 ------------------------------- */

sg_dtype float_result(const sg_tensor *a) {
    sg_dtype t = dtype_of(a);
    return sg_dtype_is_integral(t, true) ? SG_FLOAT32 : t;
}

template <class Op> struct float_of {
    template <class T> using fn = float_fn<T, Op>;
};

template <class Op>
sg_status float_run(const char *op, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    return un_run<SG_CU_FLOATS, float_of<Op>::template fn>(op, self, float_result(self), out, ret,
                                                           no_init);
}

#define UNARY_FLOAT(NAME, OP)                                                                 \
    sg_status NAME##_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {    \
        (void)ks;                                                                              \
        return float_run<OP>(#NAME, self, out, ret);                                           \
    }
UNARY_FLOAT(exp, op_exp)
UNARY_FLOAT(log, op_log)
UNARY_FLOAT(sqrt, op_sqrt)
UNARY_FLOAT(rsqrt, op_rsqrt)
UNARY_FLOAT(sin, op_sin)
UNARY_FLOAT(cos, op_cos)
UNARY_FLOAT(tanh, op_tanh)
UNARY_FLOAT(sigmoid, op_sigmoid)
UNARY_FLOAT(erf, op_erf)
UNARY_FLOAT(reciprocal, op_recip)
#undef UNARY_FLOAT

sg_status silu_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    *ret = NULL;
    sg_status st = sg_pointwise_keep_args("silu", "cuda", dtype_of(self), out);
    return st ? st : float_run<op_silu>("silu", self, out, ret);
}

sg_status gelu_out(sg_keyset ks, sg_tensor *self, const char *approximate, sg_tensor *out,
                   sg_tensor **ret) {
    (void)ks;
    *ret = NULL;
    sg_status st = sg_pointwise_keep_args("gelu", "cuda", dtype_of(self), out);
    if (st) return st;
    if (!approximate || strcmp(approximate, "none") == 0)
        return float_run<op_gelu>("gelu", self, out, ret);
    if (strcmp(approximate, "tanh") == 0) return float_run<op_gelu_tanh>("gelu", self, out, ret);
    return sg_error(SG_EINVAL, "approximate argument must be either none or tanh.");
}

/* ---- dtype-keeping ops (sg_pointwise_keep_args); floor/ceil/round of integers are copies -- */

template <class Op>
sg_status same_run(const char *op, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    sg_dtype  r = dtype_of(self);
    sg_status st = sg_pointwise_keep_args(op, "cuda", r, out);
    *ret = NULL;
    if (st) return st;
    if (sg_dtype_is_integral(r, true))
        return un_run<SG_CU_INTS | SG_CU_BOOL, ident_fn>(op, self, r, out, ret, no_init);
    return un_run<SG_CU_FLOATS, float_of<Op>::template fn>(op, self, r, out, ret, no_init);
}
sg_status floor_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return same_run<op_floor>("floor", self, out, ret);
}
sg_status ceil_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return same_run<op_ceil>("ceil", self, out, ret);
}
sg_status round_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return same_run<op_round>("round", self, out, ret);
}

sg_status round_decimals_out(sg_keyset ks, sg_tensor *self, int64_t decimals, sg_tensor *out,
                             sg_tensor **ret) {
    (void)ks;
    sg_dtype r = dtype_of(self);
    *ret = NULL;
    if (sg_dtype_is_integral(r, true))
        return sg_error(SG_EINVAL, "round_cuda not implemented for '%s' with decimals",
                        sg_dtype_name(r));
    sg_status st = sg_pointwise_keep_args("round", "cuda", r, out);
    if (st) return st;
    double ten = pow(10.0, (double)(decimals < 0 ? -decimals : decimals));
    return un_run<SG_CU_FLOATS, round_dec_fn>("round", self, r, out, ret, [&](auto &f) {
        f.ten = (decltype(f.ten))ten;
        f.neg = decimals < 0;
    });
}

sg_status sign_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_dtype  r = dtype_of(self);
    sg_status st = sg_pointwise_keep_args("sign", "cuda", r, out);
    *ret = NULL;
    if (st) return st;
    if (r == SG_BOOL) return un_run<SG_CU_BOOL, ident_fn>("sign", self, r, out, ret, no_init);
    return un_run<NUM, sign_fn>("sign", self, r, out, ret, no_init);
}

sg_status neg_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    *ret = NULL;
    if (self->dtype == SG_BOOL)
        return sg_error(SG_EINVAL, "Negation, the `-` operator, on a bool tensor is not "
                                   "supported. If you are trying to invert a mask, use the `~` or "
                                   "`logical_not()` operator instead.");
    sg_status st = sg_pointwise_keep_args("neg", "cuda", dtype_of(self), out);
    if (st) return st;
    return un_run<NUM, neg_fn>("neg", self, dtype_of(self), out, ret, no_init);
}

/* abs is not structured in aten: functional, in-place and out each */
sg_status abs_out(sg_keyset ks, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_dtype  r = dtype_of(self);
    sg_status st = sg_pointwise_keep_args("abs", "cuda", r, out);
    *ret = NULL;
    return st ? st : un_run<NUM, abs_fn>("abs", self, r, out, ret, no_init);
}
sg_status abs_fn_k(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    return abs_out(ks, self, NULL, ret);
}
sg_status abs_inplace(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    return abs_out(ks, self, self, ret);
}

/* relu: a kernel of its own (aten composes it from clamp_min, whose name its message has) */
sg_status relu_run(sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    sg_dtype r = dtype_of(self);
    *ret = NULL;
    if (r == SG_BOOL) return sg_pw_not_implemented("clamp", r);
    return un_run<NUM, relu_fn>("relu", self, r, out, ret, no_init);
}
sg_status relu_fn_k(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    return relu_run(self, NULL, ret);
}
sg_status relu_inplace(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    return relu_run(self, self, ret);
}

} // namespace

sg_status sg_pw_register_unary(void) {
    SG_CU_REG(aten_exp_out, exp_out);
    SG_CU_REG(aten_log_out, log_out);
    SG_CU_REG(aten_sqrt_out, sqrt_out);
    SG_CU_REG(aten_rsqrt_out, rsqrt_out);
    SG_CU_REG(aten_sin_out, sin_out);
    SG_CU_REG(aten_cos_out, cos_out);
    SG_CU_REG(aten_tanh_out, tanh_out);
    SG_CU_REG(aten_sigmoid_out, sigmoid_out);
    SG_CU_REG(aten_silu_out, silu_out);
    SG_CU_REG(aten_erf_out, erf_out);
    SG_CU_REG(aten_reciprocal_out, reciprocal_out);
    SG_CU_REG(aten_gelu_out, gelu_out);
    SG_CU_REG(aten_floor_out, floor_out);
    SG_CU_REG(aten_ceil_out, ceil_out);
    SG_CU_REG(aten_round_out, round_out);
    SG_CU_REG(aten_round_decimals_out, round_decimals_out);
    SG_CU_REG(aten_sign_out, sign_out);
    SG_CU_REG(aten_neg_out, neg_out);
    SG_CU_REG(aten_abs, abs_fn_k);
    SG_CU_REG(aten_abs_, abs_inplace);
    SG_CU_REG(aten_abs_out, abs_out);
    SG_CU_REG(aten_relu, relu_fn_k);
    SG_CU_REG(aten_relu_, relu_inplace);
    return SG_OK;
}
