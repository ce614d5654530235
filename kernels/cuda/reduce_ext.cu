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
sg_status extremum_run(const char *op, sg_tensor *self, const sg_rdims *r, bool keepdim,
                       sg_tensor *out) {
    sg_status st;
    if ((st = sg_reduce_no_complex(op, self)) || (st = sg_reduce_shape_out(out, self, r, keepdim)))
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
    sg_rdims  r;
    sg_status st = sg_reduce_amax_args(MAX ? "amax()" : "amin()", self, dim, out, &r);
    if (!st) st = extremum_run<MAX>(MAX ? "amax" : "amin", self, &r, keepdim, out);
    return sg_reduce_give(st, out, ret);
}

template <bool MAX>
sg_status unary_out(sg_keyset, sg_tensor *self, sg_tensor *out, sg_tensor **ret) {
    sg_rdims  r;
    sg_status st = sg_reduce_all_args(MAX ? "max()" : "min()", self, out, &r);
    if (!st) st = extremum_run<MAX>(MAX ? "max" : "min", self, &r, false, out);
    return sg_reduce_give(st, out, ret);
}

template <bool MAX> sg_status all_fn(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    sg_tensor *out = NULL;
    sg_status  st = sg_reduce_check_nonempty(MAX ? "max()" : "min()", self, NULL, 0);
    if (!st) st = sg_tensor_empty(NULL, 0, dtype_of(self), self->device, &out);
    sg_tensor *r = NULL;
    if (!st) st = unary_out<MAX>(ks, self, out, &r);
    sg_tensor_release(r);
    return sg_reduce_give_new(st, out, ret);
}

/* values (may be NULL) and indices of the best element along the dims of r */
template <bool MAX>
sg_status arg_run(const char *op, sg_tensor *self, const sg_rdims *r, bool keepdim,
                  sg_tensor *values, sg_tensor *indices) {
    /* x: self, or contiguous where several dims are reduced (the iterator merges them) */
    sg_tensor *x = NULL;
    sg_status  st = sg_reduce_arg_prepare(op, self, r, keepdim, values, indices, &x);
    if (st) return st;
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

template <bool MAX>
sg_status max_dim_out(sg_keyset, sg_tensor *self, int64_t dim, bool keepdim, sg_tensor *values,
                      sg_tensor *indices, sg_tensor **ret_values, sg_tensor **ret_indices) {
    sg_rdims  r;
    sg_status st = sg_reduce_max_dim_args(MAX ? "max()" : "min()", self, dim, values, indices, &r);
    if (!st) st = arg_run<MAX>(MAX ? "max" : "min", self, &r, keepdim, values, indices);
    *ret_values = st ? NULL : sg_tensor_retain(values);
    *ret_indices = st ? NULL : sg_tensor_retain(indices);
    return st;
}

template <bool MAX>
sg_status argmax_out(sg_keyset, sg_tensor *self, const int64_t *dim, bool keepdim,
                     sg_tensor *out, sg_tensor **ret) {
    sg_rdims  r;
    sg_status st = sg_reduce_argmax_args(MAX ? "argmax()" : "argmin()",
                                         MAX ? "argmax_cuda" : "argmin_cuda", self, dim, out, &r);
    if (!st) st = arg_run<MAX>(MAX ? "argmax" : "argmin", self, &r, keepdim, NULL, out);
    return sg_reduce_give(st, out, ret);
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
