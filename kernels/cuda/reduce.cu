/* reduce.cu: sum, mean and prod on CUDA, and the registration of the reductions
 * (reduce_ext.cu, reduce_stat.cu, reduce_scan.cu have the rest). Semantics as
 * kernels/cpu/reduce.c, checks and messages from the same C (sg_reduce_shape.h): the input
 * is cast to the result's dtype first where that cast is not exact (read_dtype), integers and
 * bools sum and multiply in 64 bits (wrapping), float16/bfloat16/float32 sums accumulate in
 * float32 (float64 where either side is float64), products in float64 as the CPU's; a mean
 * divides the sum by the count (NaN over nothing). */
#include "reduce.cuh"

/* ---- sum, mean, prod ------------------------------------------------------------------------ */

namespace {

enum { K_SUM, K_MEAN, K_PROD };

template <class T, class A, class W, int KIND> struct sum_ops {
    using in_t = T;
    using acc = A;
    __device__ __forceinline__ A ident() const { return KIND == K_PROD ? A(1) : A(0); }
    __device__ __forceinline__ void step(A &a, T x, int64_t) const {
        A v = sg_cu_racc<A>(x);
        if (KIND == K_PROD) a *= v;
        else a += v;
    }
    __device__ __forceinline__ A join(A a, A b) const { return KIND == K_PROD ? a * b : a + b; }
    __device__ __forceinline__ void write(A a, int64_t count, char *out, char *) const {
        if constexpr (KIND == K_MEAN) a = a / (A)count;
        *reinterpret_cast<W *>(out) = sg_cu_convert<W>(a);
    }
};

/* the dtype the kernel reads for a reduction into `out` that casts its input to out first: the
 * input's own where that cast is exact or wraps alike (as the CPU's read_dtype) */
sg_dtype read_dtype(sg_dtype in, sg_dtype out) {
    if (sg_dtype_is_integral(out, true)) return sg_dtype_is_integral(in, true) ? in : out;
    if (in == out || out == SG_FLOAT64) return sg_dtype_is_floating(in) ? in : out;
    if (out == SG_FLOAT32) return in == SG_FLOAT16 || in == SG_BFLOAT16 ? in : out;
    return out;
}

sg_status sum_like(const char *op, int kind, sg_tensor *self, const sg_rdims *r, bool keepdim,
                   sg_tensor *out) {
    sg_status st;
    if ((st = sg_reduce_no_complex(op, self)) || (st = sg_reduce_no_complex(op, out))) return st;
    if ((st = sg_reduce_shape_out(out, self, r, keepdim))) return st;
    sg_dtype   o = dtype_of(out), read = read_dtype(dtype_of(self), o);
    sg_dtype   w = sg_cu_w_dtype(read, o);
    sg_tensor *x = NULL;
    if (read == dtype_of(self)) x = sg_tensor_retain(self);
    else if ((st = sg_cast(self, read, &x))) return st;
    st = sg_cu_reduce_into(op, x, r, keepdim, out, w, NULL, 0, [&](const sg_iter *it) {
        unsigned kinds = kind == K_MEAN ? SG_CU_FLOATS : SG_CU_ALL;
        return sg_cu_visit(read, kinds, op, [&](auto tt) {
            using T = typename decltype(tt)::type;
            return sg_cu_visit_w<T>(w, [&](auto wt) {
                using W = typename decltype(wt)::type;
                if constexpr (!sg_cu_is_float<T>()) {
                    if (kind == K_PROD)
                        return sg_cu_reduce(it, sum_ops<T, uint64_t, W, K_PROD>{}, op);
                    return sg_cu_reduce(it, sum_ops<T, uint64_t, W, K_SUM>{}, op);
                } else {
                    constexpr bool dbl = std::is_same<T, double>::value ||
                                         std::is_same<W, double>::value;
                    using A = typename std::conditional<dbl, double, float>::type;
                    if (kind == K_PROD)
                        return sg_cu_reduce(it, sum_ops<T, double, W, K_PROD>{}, op);
                    if (kind == K_MEAN) return sg_cu_reduce(it, sum_ops<T, A, W, K_MEAN>{}, op);
                    return sg_cu_reduce(it, sum_ops<T, A, W, K_SUM>{}, op);
                }
            });
        });
    });
    sg_tensor_release(x);
    return st;
}

sg_status sum_out(sg_keyset, sg_tensor *self, const sg_int_list *dim, bool keepdim,
                  const sg_dtype *dtype, sg_tensor *out, sg_tensor **ret) {
    sg_rdims  r;
    sg_status st = sg_reduce_sum_args(self, dim, dtype, out, &r);
    if (!st) st = sum_like("sum", K_SUM, self, &r, keepdim, out);
    return sg_reduce_give(st, out, ret);
}

sg_status mean_out(sg_keyset, sg_tensor *self, const sg_int_list *dim, bool keepdim,
                   const sg_dtype *dtype, sg_tensor *out, sg_tensor **ret) {
    sg_rdims  r;
    sg_status st = sg_reduce_mean_args(self, dim, dtype, out, &r);
    if (!st) st = sum_like("mean", K_MEAN, self, &r, keepdim, out);
    return sg_reduce_give(st, out, ret);
}

sg_status prod_all(sg_keyset, sg_tensor *self, const sg_dtype *dtype, sg_tensor **ret) {
    sg_rdims   r;
    sg_tensor *out = NULL;
    sg_status  st = sg_reduce_dims_list(self, NULL, &r);
    if (!st)
        st = sg_reduce_new_result(self, &r, false,
                                  dtype ? *dtype : sg_reduce_int_to_long(dtype_of(self)),
                                  self->device, &out);
    if (!st) st = sum_like("prod", K_PROD, self, &r, false, out);
    return sg_reduce_give_new(st, out, ret);
}

sg_status prod_out(sg_keyset, sg_tensor *self, int64_t dim, bool keepdim, const sg_dtype *dtype,
                   sg_tensor *out, sg_tensor **ret) {
    sg_rdims  r;
    sg_status st = sg_reduce_prod_args(self, &dim, dtype, out, &r);
    if (!st) st = sum_like("prod", K_PROD, self, &r, keepdim, out);
    return sg_reduce_give(st, out, ret);
}

} // namespace

extern "C" sg_status sg_cu_register_reduce(void) {
    SG_CU_REG(aten_sum_IntList_out, sum_out);
    SG_CU_REG(aten_mean_out, mean_out);
    SG_CU_REG(aten_prod_int_out, prod_out);
    SG_CU_REG(aten_prod, prod_all);
    sg_status st;
    if ((st = sg_cu_register_reduce_ext()) || (st = sg_cu_register_reduce_stat())) return st;
    return sg_cu_register_reduce_scan();
}
