/* reduce_ext.cu: amax, amin, max() and min() of everything, max.dim/min.dim (values and
 * indices), argmax and argmin on CUDA, as kernels/cpu/reduce.c: a NaN wins max and min; the
 * index is the first occurrence of the winner (the first NaN where there is one); reductions
 * with no identity refuse empty dims. Values compare in float32 for the 16-bit floats (exact),
 * in their own type otherwise (integers and bools as int64). */
#include "reduce.cuh"

namespace {

/* the type values compare in */
template <class T>
using ext_acc_t = typename std::conditional<sg_cu_is_half<T>(), float,
                                            typename std::conditional<sg_cu_is_float<T>(), T,
                                                                      int64_t>::type>::type;

template <class A, bool MAX> __device__ __forceinline__ A ext_ident() {
    if constexpr (std::is_floating_point<A>::value) return MAX ? (A)-INFINITY : (A)INFINITY;
    else return MAX ? INT64_MIN : INT64_MAX;
}

/* x beats b strictly; a NaN beats any number */
template <bool MAX, class A> __device__ __forceinline__ bool ext_better(A x, A b) {
    bool nan = sg_cu_isnan(x) && !sg_cu_isnan(b);
    return (MAX ? x > b : x < b) || nan;
}

template <class T, bool MAX> struct ext_ops {
    using in_t = T;
    using acc = ext_acc_t<T>;
    __device__ __forceinline__ acc ident() const { return ext_ident<acc, MAX>(); }
    __device__ __forceinline__ void step(acc &a, T x, int64_t) const { a = join(a, (acc)sg_cu_racc<acc>(x)); }
    __device__ __forceinline__ acc join(acc a, acc b) const {
        return ((MAX ? b > a : b < a) || sg_cu_isnan(b)) ? b : a;
    }
    __device__ __forceinline__ void write(acc a, int64_t, char *out, char *) const {
        *reinterpret_cast<T *>(out) = sg_cu_convert<T>(a);
    }
};

template <class A> struct arg_acc {
    A       v;
    int64_t i; /* -1: nothing seen */
};

/* values: operand 0 gets the values and operand 2 the indices; otherwise operand 0 the indices */
template <class T, bool MAX> struct arg_ops {
    bool values;
    using in_t = T;
    using V = ext_acc_t<T>;
    using acc = arg_acc<V>;
    __device__ __forceinline__ acc ident() const { return acc{V(0), -1}; }
    __device__ __forceinline__ void step(acc &a, T x, int64_t r) const {
        V v = sg_cu_racc<V>(x);
        if (a.i < 0 || ext_better<MAX>(v, a.v)) a.v = v, a.i = r;
    }
    __device__ __forceinline__ acc join(acc a, acc b) const {
        if (b.i < 0) return a;
        if (a.i < 0 || ext_better<MAX>(b.v, a.v)) return b;
        bool same = sg_cu_isnan(a.v) ? sg_cu_isnan(b.v) : b.v == a.v;
        return same && b.i < a.i ? b : a;
    }
    __device__ __forceinline__ void write(acc a, int64_t, char *out, char *ext) const {
        int64_t i = a.i < 0 ? 0 : a.i;
        if (values) {
            *reinterpret_cast<T *>(out) = sg_cu_convert<T>(a.v);
            *reinterpret_cast<int64_t *>(ext) = i;
        } else {
            *reinterpret_cast<int64_t *>(out) = i;
        }
    }
};

/* amax/amin/max()/min(): self into out (written in self's dtype, cast by the iterator) */
template <bool MAX>
sg_status extremum_run(const char *op, sg_tensor *self, const sg_cu_rdims *r, bool keepdim,
                       sg_tensor *out) {
    sg_status st;
    if ((st = sg_cu_no_complex(op, self)) || (st = sg_cu_shape_out(out, self, r, keepdim)))
        return st;
    return sg_cu_reduce_into(op, self, r, keepdim, out, dtype_of(self), NULL, 0,
                             [&](const sg_iter *it) {
                                 return sg_cu_visit(dtype_of(self), SG_CU_ALL, op, [&](auto tt) {
                                     using T = typename decltype(tt)::type;
                                     return sg_cu_reduce(it, ext_ops<T, MAX>{}, op);
                                 });
                             });
}

template <bool MAX>
sg_status amax_out(sg_keyset, sg_tensor *self, sg_int_list dim, bool keepdim, sg_tensor *out,
                   sg_tensor **ret) {
    const char *name = MAX ? "amax()" : "amin()";
    sg_cu_rdims r;
    sg_status   st = SG_OK;
    if (dtype_of(out) != dtype_of(self))
        st = sg_error(SG_EINVAL, "Expected the dtype for input and out to match, but got %s for "
                                 "input's dtype and %s for out's dtype.",
                      sg_aten_type_name(dtype_of(self)), sg_aten_type_name(dtype_of(out)));
    if (!st) st = sg_cu_dims_of(self, dim.items, dim.len, &r);
    if (!st) st = sg_cu_check_nonempty(name, self, dim.items, dim.len);
    if (!st) st = extremum_run<MAX>(MAX ? "amax" : "amin", self, &r, keepdim, out);
    return sg_cu_give(st, out, ret);
}

template <bool MAX>
sg_status unary_out(sg_keyset, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    const char *name = MAX ? "max()" : "min()";
    sg_cu_rdims r;
    sg_status   st = sg_cu_check_nonempty(name, self, NULL, 0);
    if (!st && !sg_can_cast(dtype_of(self), dtype_of(out)))
        st = sg_error(SG_EINVAL, "%s: result type %s can't be cast to the desired output type %s",
                      name, sg_aten_type_name(dtype_of(self)), sg_aten_type_name(dtype_of(out)));
    if (!st) st = sg_cu_dims_of(self, NULL, 0, &r);
    if (!st) st = extremum_run<MAX>(MAX ? "max" : "min", self, &r, false, out);
    return sg_cu_give(st, out, ret);
}

template <bool MAX> sg_status all_fn(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    sg_tensor *out = NULL;
    sg_status  st = sg_cu_check_nonempty(MAX ? "max()" : "min()", self, NULL, 0);
    if (!st) st = sg_tensor_empty(NULL, 0, dtype_of(self), self->device, &out);
    sg_tensor *r = NULL;
    if (!st) st = unary_out<MAX>(ks, self, out, &r);
    sg_tensor_release(r);
    return sg_cu_give_new(st, out, ret);
}

/* values (may be NULL) and indices of the best element along the dims of r */
template <bool MAX>
sg_status arg_run(const char *op, sg_tensor *self, const sg_cu_rdims *r, bool keepdim,
                  sg_tensor *values, sg_tensor *indices) {
    sg_status st;
    if ((st = sg_cu_no_complex(op, self))) return st;
    if ((st = sg_cu_shape_out(indices, self, r, keepdim))) return st;
    if (values && (st = sg_cu_shape_out(values, self, r, keepdim))) return st;
    /* positions count along the reduced dims in order: one dim, or all of them contiguous (so
     * that the iterator merges them into one) */
    int32_t nred = 0;
    for (int32_t d = 0; d < self->ndim; d++) nred += r->mask[d] && self->sizes[d] != 1;
    sg_tensor *x = NULL;
    if (nred > 1 && !sg_tensor_is_contiguous(self)) {
        if ((st = sg_tensor_contiguous(self, &x))) return st;
    } else {
        x = sg_tensor_retain(self);
    }
    sg_dtype t = dtype_of(x);
    auto     launch = [&](const sg_iter *it) {
        return sg_cu_visit(t, SG_CU_ALL, op, [&](auto tt) {
            using T = typename decltype(tt)::type;
            return sg_cu_reduce(it, arg_ops<T, MAX>{values != NULL}, op);
        });
    };
    if (values) st = sg_cu_reduce_into(op, x, r, keepdim, values, t, &indices, 1, launch);
    else st = sg_cu_reduce_into(op, x, r, keepdim, indices, SG_INT64, NULL, 0, launch);
    sg_tensor_release(x);
    return st;
}

sg_status dim_check(const char *fn, sg_tensor *self, int64_t *dim) {
    sg_status st = sg_cu_wrap_dim(dim, self->ndim);
    return st ? st : sg_cu_check_nonempty(fn, self, dim, 1);
}

template <bool MAX>
sg_status max_dim_out(sg_keyset, sg_tensor *self, int64_t dim, bool keepdim, sg_tensor *values,
                      sg_tensor *indices, sg_tensor **ret_values, sg_tensor **ret_indices) {
    sg_cu_rdims r;
    sg_status   st = dim_check(MAX ? "max()" : "min()", self, &dim);
    if (!st) st = sg_cu_check_out_dtype(values, dtype_of(self));
    if (!st) st = sg_cu_check_out_dtype(indices, SG_INT64);
    if (!st) {
        sg_cu_dims_one(self, dim, &r);
        st = arg_run<MAX>(MAX ? "max" : "min", self, &r, keepdim, values, indices);
    }
    *ret_values = st ? NULL : sg_tensor_retain(values);
    *ret_indices = st ? NULL : sg_tensor_retain(indices);
    return st;
}

/* argmax / argmin: dim None flattens */
sg_status arg_dims(const char *fn, sg_tensor *self, const int64_t *dim, sg_cu_rdims *r) {
    if (!dim) {
        if (sg_tensor_numel(self) == 0)
            return sg_error(SG_EINVAL, "%s: Expected reduction dim to be specified for "
                                       "input.numel() == 0.",
                            fn);
        return sg_cu_dims_of(self, NULL, 0, r);
    }
    int64_t   d = *dim;
    sg_status st = dim_check(fn, self, &d);
    if (!st) sg_cu_dims_one(self, d, r);
    return st;
}

template <bool MAX>
sg_status argmax_out(sg_keyset, sg_tensor *self, const int64_t *dim, bool keepdim,
                     sg_tensor *out, sg_tensor **ret) {
    sg_cu_rdims r;
    sg_status   st = arg_dims(MAX ? "argmax()" : "argmin()", self, dim, &r);
    if (!st) st = sg_cu_check_out_dtype(out, SG_INT64);
    if (!st && dtype_of(self) == SG_BOOL)
        st = sg_cu_not_implemented(MAX ? "argmax_cuda" : "argmin_cuda", SG_BOOL);
    if (!st) st = arg_run<MAX>(MAX ? "argmax" : "argmin", self, &r, keepdim, NULL, out);
    return sg_cu_give(st, out, ret);
}

} // namespace

sg_status sg_cu_register_reduce_ext(void) {
    SG_CU_REG(aten_amax_out, amax_out<true>);
    SG_CU_REG(aten_amin_out, amax_out<false>);
    SG_CU_REG(aten_max, all_fn<true>);
    SG_CU_REG(aten_min, all_fn<false>);
    SG_CU_REG(aten_max_unary_out, unary_out<true>);
    SG_CU_REG(aten_min_unary_out, unary_out<false>);
    SG_CU_REG(aten_max_dim_max, max_dim_out<true>);
    SG_CU_REG(aten_min_dim_min, max_dim_out<false>);
    SG_CU_REG(aten_argmax_out, argmax_out<true>);
    SG_CU_REG(aten_argmin_out, argmax_out<false>);
    return SG_OK;
}
