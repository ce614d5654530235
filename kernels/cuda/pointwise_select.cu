/* pointwise_select.cu: the elementwise selections on CUDA: where (all overloads), masked_fill
 * (Scalar and Tensor values, in place and functional), clamp/clamp_min/clamp_max (Scalar and
 * Tensor bounds), and pow with a Scalar (Tensor_Scalar, Scalar). As kernels/cpu/index.c:
 * where needs a bool (or uint8) condition and promotes self with other, wrapped numbers ranked
 * lowest (its Scalar overloads are the CPU's composites, which call where.self); clamp
 * promotes an integral tensor with its bounds and propagates NaN; pow refuses integers to
 * negative integer powers and takes aten's shortcuts for common exponents.
 *
 * where and masked_fill move elements as bytes (an unsigned type of the element's size: four
 * kernels serve every dtype); the condition or mask is read as it is (spec.keep), its bytes 0
 * or 1. A masked_fill value tensor is an operand (0-dim, broadcast), so a value on the GPU is
 * never read back to the host. */
#include "index.cuh"
#include "pointwise.cuh"
#include "sg_index_shape.h"

namespace {

constexpr unsigned NUM = SG_CU_FLOATS | SG_CU_INTS;

/* ---- where -------------------------------------------------------------------------------- */

template <class U> struct where_fn {
    __device__ U operator()(uint8_t c, U a, U b) const { return c ? a : b; }
};

sg_status where_run(sg_tensor *cond, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                    sg_tensor **ret) {
    sg_dtype  r;
    sg_status st = sg_pointwise_where_args(cond, self, other, out, &r);
    *ret = NULL;
    if (st) return st;
    sg_iter_spec spec = {};
    spec.op = "where";
    spec.out = out;
    spec.in[0] = cond;
    spec.in[1] = self;
    spec.in[2] = other;
    spec.nin = 3;
    spec.compute = spec.result = spec.out_dtype = r;
    spec.keep = 1u; /* the condition as it is */
    return sg_pw_visit_size(r, "where", [&](auto tag) {
        using U = typename decltype(tag)::type;
        return sg_pw_run<U, uint8_t, U, U>(spec, where_fn<U>{}, ret);
    });
}

sg_status where_k(sg_keyset ks, sg_tensor *cond, sg_tensor *self, sg_tensor *other,
                  sg_tensor **ret) {
    (void)ks;
    return where_run(cond, self, other, NULL, ret);
}
sg_status where_out_k(sg_keyset ks, sg_tensor *cond, sg_tensor *self, sg_tensor *other,
                      sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return where_run(cond, self, other, out, ret);
}


/* ---- masked_fill -------------------------------------------------------------------------- */

template <class U> struct masked_fn {
    __device__ U operator()(uint8_t m, U x, U v) const { return m ? v : x; }
};

bool same_shape(const sg_tensor *t, const int64_t *sizes, int32_t n) {
    if (t->ndim != n) return false;
    for (int32_t i = 0; i < n; i++)
        if (t->sizes[i] != sizes[i]) return false;
    return true;
}

sg_status mask_check(const sg_tensor *mask) {
    if (dtype_of(mask) == SG_BOOL) return SG_OK;
    return sg_error(SG_EINVAL, "masked_fill_: masked_fill_ only supports boolean masks, but got "
                               "mask with dtype %s",
                    sg_dtype_name(dtype_of(mask)));
}

/* out = mask ? value : self, value a 0-dim tensor (CPU or device) cast to self's dtype; out is
 * self (in place) or a new contiguous tensor of the broadcast shape (aten clones self
 * contiguous, then fills it, whatever the operands' layouts) */
sg_status masked_run(sg_tensor *self, sg_tensor *mask, const sg_tensor *value, bool inplace,
                     sg_tensor **ret) {
    sg_dtype     t = dtype_of(self);
    sg_tensor   *out = self;
    sg_status    st;
    if (!inplace) {
        int64_t shape[SG_MAX_DIMS];
        int32_t n;
        sg_broadcast_shape(self->sizes, self->ndim, mask->sizes, mask->ndim, shape, &n);
        if ((st = sg_tensor_empty(shape, n, t, self->device, &out))) return st;
    }
    sg_iter_spec spec = {};
    spec.op = inplace ? "masked_fill_" : "masked_fill";
    spec.out = out;
    spec.in[0] = mask;
    spec.in[1] = self;
    spec.in[2] = value;
    spec.nin = 3;
    spec.compute = spec.result = spec.out_dtype = t;
    spec.keep = 1u; /* the mask as it is */
    spec.to_out = true;
    st = sg_pw_visit_size(t, spec.op, [&](auto tag) {
        using U = typename decltype(tag)::type;
        return sg_pw_run<U, uint8_t, U, U>(spec, masked_fn<U>{}, ret);
    });
    if (!inplace) sg_tensor_release(out);
    return st;
}

/* the checks of both forms: the mask's dtype and shape (self's shape for the in-place one) */
sg_status masked_check(sg_tensor *self, sg_tensor *mask, bool inplace) {
    char    a[160], b[160];
    int64_t shape[SG_MAX_DIMS];
    int32_t n;
    bool    ok = sg_broadcast_shape(self->sizes, self->ndim, mask->sizes, mask->ndim, shape, &n);
    if (!inplace && !ok)
        return sg_error(SG_EINVAL, "masked_fill: the size of tensor a %s must match the size of "
                                   "tensor b %s at a non-singleton dimension",
                        sg_shape_str(self->sizes, self->ndim, a, sizeof a),
                        sg_shape_str(mask->sizes, mask->ndim, b, sizeof b));
    sg_status st = mask_check(mask);
    if (st) return st;
    if (inplace && (!ok || !same_shape(self, shape, n)))
        return sg_error(SG_EINVAL, "masked_fill_: output with shape %s doesn't match the "
                                   "broadcast shape %s",
                        sg_shape_str(self->sizes, self->ndim, a, sizeof a),
                        sg_shape_str(mask->sizes, mask->ndim, b, sizeof b));
    return SG_OK;
}

sg_status masked_scalar(sg_tensor *self, sg_tensor *mask, sg_scalar value, bool inplace,
                        sg_tensor **ret) {
    *ret = NULL;
    sg_status st = masked_check(self, mask, inplace);
    if (st) return st;
    if (sg_scalar_overflows(value, dtype_of(self)))
        return sg_error(SG_EINVAL, "masked_fill_: value cannot be converted to type %s without "
                                   "overflow",
                        sg_cpp_type_name(dtype_of(self)));
    sg_tensor *v;
    if ((st = sg_scalar_tensor(value, &v))) return st;
    st = masked_run(self, mask, v, inplace, ret);
    sg_tensor_release(v);
    return st;
}

sg_status masked_tensor(sg_tensor *self, sg_tensor *mask, sg_tensor *value, bool inplace,
                        sg_tensor **ret) {
    *ret = NULL;
    if (value->ndim != 0)
        return sg_error(SG_EINVAL, "masked_fill_: masked_fill_ only supports a 0-dimensional "
                                   "value tensor, but got tensor with %d dimension(s).",
                        value->ndim);
    sg_status st = masked_check(self, mask, inplace);
    return st ? st : masked_run(self, mask, value, inplace, ret);
}

sg_status masked_fill__scalar_k(sg_keyset ks, sg_tensor *self, sg_tensor *mask, sg_scalar value,
                                sg_tensor **ret) {
    (void)ks;
    return masked_scalar(self, mask, value, true, ret);
}
sg_status masked_fill__tensor_k(sg_keyset ks, sg_tensor *self, sg_tensor *mask, sg_tensor *value,
                                sg_tensor **ret) {
    (void)ks;
    return masked_tensor(self, mask, value, true, ret);
}
sg_status masked_fill_scalar_k(sg_keyset ks, sg_tensor *self, sg_tensor *mask, sg_scalar value,
                               sg_tensor **ret) {
    (void)ks;
    return masked_scalar(self, mask, value, false, ret);
}
sg_status masked_fill_tensor_k(sg_keyset ks, sg_tensor *self, sg_tensor *mask, sg_tensor *value,
                               sg_tensor **ret) {
    (void)ks;
    return masked_tensor(self, mask, value, false, ret);
}

/* ---- clamp -------------------------------------------------------------------------------- */

/* scalar bounds: max(a, lo) then min(., hi); a NaN input stays, a NaN bound with both bounds
 * given makes NaN (aten's vectorised clamp) */
template <class T> struct clamp_s_fn {
    sg_acc_t<T> lo, hi;
    bool        lo_on, hi_on;
    __device__ T operator()(T a) const {
        sg_acc_t<T> x = sg_pw_ld(a), r = x;
        if (sg_pw_isnan(x)) return a;
        if (lo_on && hi_on && (sg_pw_isnan(lo) || sg_pw_isnan(hi))) {
            r = sg_pw_isnan(lo) ? lo : hi;
        } else {
            if (lo_on) r = r < lo ? lo : r;
            if (hi_on) r = hi < r ? hi : r;
        }
        return sg_pw_st<T>(r);
    }
};

enum { BOTH, LO_ONLY, HI_ONLY };

/* tensor bounds: NaN from any operand (aten's clamp, maximum and minimum); with one bound the
 * third operand repeats it */
template <class T> struct clamp_t_fn {
    int mode;
    __device__ T operator()(T a, T l, T h) const {
        sg_acc_t<T> x = sg_pw_ld(a), lo = sg_pw_ld(l), hi = sg_pw_ld(h);
        if (sg_pw_isnan(x)) return a;
        if (mode == LO_ONLY) return sg_pw_isnan(lo) ? l : x < lo ? l : a;
        if (mode == HI_ONLY) return sg_pw_isnan(hi) ? h : hi < x ? h : a;
        if (sg_pw_isnan(lo)) return l;
        if (sg_pw_isnan(hi)) return h;
        sg_acc_t<T> r = x < lo ? lo : x;
        r = hi < r ? hi : r;
        return sg_pw_st<T>(r);
    }
};

/* a bound as the loops compare it: rounded to a 16-bit float result's type first */
double bound_f(sg_scalar b, sg_dtype r) {
    double f = sg_scalar_to_double(b);
    if (r == SG_FLOAT16) f = (float)__half((float)f);
    if (r == SG_BFLOAT16) f = (float)__nv_bfloat16((float)f);
    return f;
}
int64_t bound_i(sg_scalar b) {
    return b.kind == SG_SCALAR_INT ? b.u.i : (int64_t)sg_scalar_to_double(b);
}

sg_status clamp_scalar_run(const char *op, sg_tensor *self, const sg_scalar *lo,
                           const sg_scalar *hi, sg_tensor *out, sg_tensor **ret) {
    sg_dtype  r = SG_FLOAT32;
    sg_status st = sg_pointwise_clamp_scalar_type(self, lo, hi, &r);
    *ret = NULL;
    if (st) return st;
    sg_iter_spec spec = sg_pw_spec(op, out, self, NULL, r, r, r);
    return sg_pw_visit<NUM>(r, "clamp_scalar", [&](auto tag) {
        using T = typename decltype(tag)::type;
        using A = sg_acc_t<T>;
        const sg_scalar *b[2] = {lo, hi};
        for (int i = 0; i < 2; i++)
            if (b[i] && sg_scalar_overflows(*b[i], r))
                return sg_error(SG_EINVAL, "%s: value cannot be converted to type %s without "
                                           "overflow",
                                op, sg_cpp_type_name(r));
        clamp_s_fn<T> f{};
        f.lo_on = lo != NULL;
        f.hi_on = hi != NULL;
        if constexpr (sg_cu_is_float<T>()) {
            if (lo) f.lo = (A)bound_f(*lo, r);
            if (hi) f.hi = (A)bound_f(*hi, r);
        } else {
            if (lo) f.lo = (A)bound_i(*lo);
            if (hi) f.hi = (A)bound_i(*hi);
        }
        return sg_pw_run<T, T>(spec, f, ret);
    });
}

sg_status clamp_out_k(sg_keyset ks, sg_tensor *self, const sg_scalar *min, const sg_scalar *max,
                      sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    /* aten's clamp builds a unary op that checks every operand's dtype: an out= must have the
     * result's (in place, self's own cast check speaks first) */
    sg_dtype  r = SG_FLOAT32;
    sg_status st = sg_pointwise_clamp_scalar_type(self, min, max, &r);
    *ret = NULL;
    if (!st && out != self) st = sg_out_dtype_exact("clamp", out, r);
    return st ? st : clamp_scalar_run("clamp", self, min, max, out, ret);
}
sg_status clamp_min_out_k(sg_keyset ks, sg_tensor *self, sg_scalar min, sg_tensor *out,
                          sg_tensor **ret) {
    (void)ks;
    sg_dtype  r = SG_FLOAT32; /* aten's clamp_min.out keeps the dtype: its out= must have it */
    sg_status st = sg_pointwise_clamp_scalar_type(self, &min, NULL, &r);
    if (!st) st = sg_pointwise_keep_args("clamp_min", "cuda", r, out);
    *ret = NULL;
    return st ? st : clamp_scalar_run("clamp_min", self, &min, NULL, out, ret);
}
sg_status clamp_max_out_k(sg_keyset ks, sg_tensor *self, sg_scalar max, sg_tensor *out,
                          sg_tensor **ret) {
    (void)ks;
    sg_dtype  r = SG_FLOAT32; /* aten's clamp_max.out keeps the dtype: its out= must have it */
    sg_status st = sg_pointwise_clamp_scalar_type(self, NULL, &max, &r);
    if (!st) st = sg_pointwise_keep_args("clamp_max", "cuda", r, out);
    *ret = NULL;
    return st ? st : clamp_scalar_run("clamp_max", self, NULL, &max, out, ret);
}

sg_status clamp_tensor_run(const char *op, sg_tensor *self, sg_tensor *lo, sg_tensor *hi,
                           sg_tensor *out, sg_tensor **ret) {
    int64_t   shape[SG_MAX_DIMS];
    int32_t   n = 0;
    sg_status st = sg_index_clamp_shape(op, self, lo, hi, shape, &n);
    *ret = NULL;
    if (st) return st;
    sg_dtype     r = sg_pointwise_result(self, lo, hi);
    sg_iter_spec spec = {};
    spec.op = op;
    spec.out = out;
    spec.in[0] = self;
    spec.in[1] = lo ? lo : hi;
    spec.in[2] = hi ? hi : lo;
    spec.nin = 3;
    spec.compute = spec.result = spec.out_dtype = r;
    int mode = lo && hi ? BOTH : lo ? LO_ONLY : HI_ONLY;
    /* one Tensor bound: aten's maximum or minimum, which take bool too (or, and) */
    if (mode != BOTH && r == SG_BOOL)
        return sg_pw_run<bool, bool, bool, bool>(spec, clamp_t_fn<bool>{mode}, ret);
    return sg_pw_visit<NUM>(r, "clamp", [&](auto tag) {
        using T = typename decltype(tag)::type;
        return sg_pw_run<T, T, T, T>(spec, clamp_t_fn<T>{mode}, ret);
    });
}

sg_status clamp_tensor_out_k(sg_keyset ks, sg_tensor *self, sg_tensor *min, sg_tensor *max,
                             sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return clamp_tensor_run("clamp", self, min, max, out, ret);
}
sg_status clamp_min_tensor_out_k(sg_keyset ks, sg_tensor *self, sg_tensor *min, sg_tensor *out,
                                 sg_tensor **ret) {
    (void)ks;
    return clamp_tensor_run("clamp_min", self, min, NULL, out, ret);
}
sg_status clamp_max_tensor_out_k(sg_keyset ks, sg_tensor *self, sg_tensor *max, sg_tensor *out,
                                 sg_tensor **ret) {
    (void)ks;
    return clamp_tensor_run("clamp_max", self, NULL, max, out, ret);
}

/* ---- pow with a Scalar -------------------------------------------------------------------- */

enum { P_SQRT, P_RSQRT, P_RECIP, P_SQUARE, P_CUBE, P_RSQUARE, P_GENERAL };

/* aten's pow_tensor_scalar_optimized_kernel and its sqrt, rsqrt and reciprocal shortcuts; the
 * general case in double, rounded once (the CPU's); integers as aten's powi */
template <class T> struct pow_s_fn {
    double  e;
    int64_t ei;
    int     kind;
    __device__ T operator()(T v) const {
        if constexpr (sg_pw_is_int<T>()) {
            int64_t  b = ei;
            uint64_t r = 1, x = (uint64_t)(int64_t)v;
            if (b < 0) {
                int64_t a = (int64_t)v;
                return (T)(a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0);
            }
            while (b) {
                if (b & 1) r *= x;
                x *= x;
                b >>= 1;
            }
            return (T)r;
        } else {
            using A = sg_acc_t<T>;
            A a = sg_pw_ld(v), r;
            switch (kind) {
            case P_SQRT: r = sg_pw_sqrt(a); break;
            case P_RSQRT: r = (A)1 / sg_pw_sqrt(a); break;
            case P_RECIP: r = (A)1 / a; break;
            case P_SQUARE: r = a * a; break;
            case P_CUBE: r = a * a * a; break;
            case P_RSQUARE: r = (A)(1.0 / (double)(a * a)); break;
            default: r = (A)pow((double)a, e); break;
            }
            return sg_pw_st<T>(r);
        }
    }
};

bool scalar_is(sg_scalar s, double v) {
    return s.kind == SG_SCALAR_INT       ? (double)s.u.i == v
           : s.kind == SG_SCALAR_FLOAT   ? s.u.f == v
           : s.kind == SG_SCALAR_COMPLEX ? s.u.c.re == v && s.u.c.im == 0
                                         : false;
}

/* An out= tensor made ready for a result of dtype r and self's shape: castable, resized,
 * without internal overlap. */
sg_status prep_out(const char *op, sg_tensor *out, const int64_t *sizes, int32_t n, sg_dtype r) {
    if (!sg_dtype_can_cast(r, dtype_of(out)))
        return sg_error(SG_EINVAL, "%s: result type %s can't be cast to the desired output type "
                                   "%s",
                        op, sg_dtype_c10_name(r), sg_dtype_c10_name(dtype_of(out)));
    sg_status st;
    if (!same_shape(out, sizes, n) && (st = sg_tensor_resize_(out, sizes, n))) return st;
    return sg_index_no_internal_overlap(op, out);
}

/* out takes the shape and every element becomes one (exponent 0, base 1) */
sg_status fill_one(sg_tensor *out, const int64_t *sizes, int32_t n, sg_dtype r, sg_tensor **ret) {
    sg_tensor *one = NULL;
    sg_status  st = prep_out("pow", out, sizes, n, r);
    if (!st) st = sg_scalar_tensor(sg_scalar_int(1), &one);
    if (!st) st = sg_cast_copy_(out, one); /* a host scalar broadcast on the device */
    sg_tensor_release(one);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

sg_status pow_ts_out_k(sg_keyset ks, sg_tensor *self, sg_scalar exponent, sg_tensor *out,
                       sg_tensor **ret) {
    (void)ks;
    *ret = NULL;
    if (sg_dtype_is_integral(dtype_of(self), true) && exponent.kind == SG_SCALAR_INT &&
        exponent.u.i < 0)
        return sg_error(SG_EINVAL, "pow: Integers to negative integer powers are not allowed.");
    sg_result_type rt;
    sg_rt_init(&rt);
    sg_rt_tensor(&rt, self);
    sg_rt_scalar(&rt, exponent);
    sg_dtype r = sg_rt_result(&rt);
    if (scalar_is(exponent, 0.0) || (exponent.kind == SG_SCALAR_BOOL && !exponent.u.b))
        return fill_one(out, self->sizes, self->ndim, r, ret);
    sg_status st;
    if (scalar_is(exponent, 1.0) || (exponent.kind == SG_SCALAR_BOOL && exponent.u.b)) {
        if (!(st = prep_out("pow", out, self->sizes, self->ndim, r))) st = sg_cast_copy_(out, self);
        *ret = st ? NULL : sg_tensor_retain(out);
        return st;
    }
    sg_iter_spec spec = sg_pw_spec("pow", out, self, NULL, r, r, r);
    return sg_pw_visit<NUM>(r, "pow", [&](auto tag) {
        using T = typename decltype(tag)::type;
        pow_s_fn<T> f{};
        if constexpr (sg_pw_is_int<T>()) {
            if (sg_scalar_overflows(exponent, r))
                return sg_error(SG_EINVAL, "pow: value cannot be converted to type %s without "
                                           "overflow",
                                sg_cpp_type_name(r));
        }
        f.e = sg_scalar_to_double(exponent);
        f.ei = exponent.kind == SG_SCALAR_INT ? exponent.u.i : (int64_t)f.e;
        if (r == SG_FLOAT16) f.e = (float)__half((float)f.e); /* aten: a Half exponent */
        f.kind = f.e == 0.5    ? P_SQRT
                 : f.e == -0.5 ? P_RSQRT
                 : f.e == -1.0 ? P_RECIP
                 : f.e == 2.0  ? P_SQUARE
                 : f.e == 3.0  ? P_CUBE
                 : f.e == -2.0 ? P_RSQUARE
                               : P_GENERAL;
        return sg_pw_run<T, T>(spec, f, ret);
    });
}

/* pow(Scalar base, Tensor exponent): ones for base 1, else pow(wrapped base, exponent) */
sg_status pow_s_out_k(sg_keyset ks, sg_scalar self, sg_tensor *exponent, sg_tensor *out,
                      sg_tensor **ret) {
    (void)ks;
    sg_result_type rt;
    sg_rt_init(&rt);
    sg_rt_scalar(&rt, self);
    sg_rt_tensor(&rt, exponent);
    *ret = NULL;
    if (scalar_is(self, 1.0))
        return fill_one(out, exponent->sizes, exponent->ndim, sg_rt_result(&rt), ret);
    /* out takes its shape here, contiguous, before pow(Tensor, Tensor) would give it
     * exponent's layout: aten's meta function resizes it first */
    sg_meta m;
    sg_index_meta_of(&m, exponent->sizes, exponent->ndim, sg_rt_result(&rt), exponent->device);
    sg_tensor *base;
    sg_status  st = sg_cu_prep_out("pow", out, &m, false);
    if (!st) st = sg_scalar_tensor(self, &base);
    if (st) return st;
    st = aten_pow_Tensor_Tensor_out(base, exponent, out, ret);
    sg_tensor_release(base);
    return st;
}

} // namespace

sg_status sg_pw_register_select(void) {
    SG_CU_REG(aten_where_self, where_k);
    SG_CU_REG(aten_where_self_out, where_out_k);
    SG_CU_REG(aten_masked_fill__Scalar, masked_fill__scalar_k);
    SG_CU_REG(aten_masked_fill__Tensor, masked_fill__tensor_k);
    SG_CU_REG(aten_masked_fill_Scalar, masked_fill_scalar_k);
    SG_CU_REG(aten_masked_fill_Tensor, masked_fill_tensor_k);
    SG_CU_REG(aten_clamp_out, clamp_out_k);
    SG_CU_REG(aten_clamp_Tensor_out, clamp_tensor_out_k);
    SG_CU_REG(aten_clamp_min_out, clamp_min_out_k);
    SG_CU_REG(aten_clamp_min_Tensor_out, clamp_min_tensor_out_k);
    SG_CU_REG(aten_clamp_max_out, clamp_max_out_k);
    SG_CU_REG(aten_clamp_max_Tensor_out, clamp_max_tensor_out_k);
    SG_CU_REG(aten_pow_Tensor_Scalar_out, pow_ts_out_k);
    SG_CU_REG(aten_pow_Scalar_out, pow_s_out_k);
    return SG_OK;
}
