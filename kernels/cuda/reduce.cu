/* reduce.cu: sum, mean and prod on CUDA, the argument handling every reduction file shares,
 * and the registration of the reductions (reduce_ext.cu, reduce_stat.cu, reduce_scan.cu have
 * the rest). Semantics and messages as kernels/cpu/reduce.c: the input is cast to the result's
 * dtype first where that cast is not exact (read_dtype), integers and bools sum and multiply
 * in 64 bits (wrapping), float16/bfloat16/float32 sums accumulate in float32 (float64 where
 * either side is float64), products in float64 as the CPU's; a mean divides the sum by the
 * count (NaN over nothing). */
#include "reduce.cuh"

/* ---- argument handling ---------------------------------------------------------------------- */

sg_status sg_cu_not_implemented(const char *what, sg_dtype t) {
    return sg_error(SG_EUNSUPPORTED, "\"%s\" not implemented for '%s'", what, sg_aten_type_name(t));
}

sg_status sg_cu_check_out_dtype(const sg_tensor *out, sg_dtype want) {
    if (dtype_of(out) == want) return SG_OK;
    return sg_error(SG_EINVAL, "Expected out tensor to have dtype %s, but got %s instead",
                    sg_meta_type_name(want), sg_meta_type_name(dtype_of(out)));
}

sg_status sg_cu_no_complex(const char *op, const sg_tensor *t) {
    return sg_dtype_is_complex(dtype_of(t)) ? sg_cu_not_implemented(op, dtype_of(t)) : SG_OK;
}

sg_status sg_cu_wrap_dim(int64_t *dim, int32_t ndim) {
    int64_t d = *dim;
    if (sg_wrap_dim(dim, ndim)) return SG_OK;
    int32_t n = ndim > 0 ? ndim : 1;
    return sg_error(SG_EINVAL, "Dimension out of range (expected to be in range of [%d, %d], "
                               "but got %lld)",
                    -n, n - 1, (long long)d);
}

sg_status sg_cu_dims_of(const sg_tensor *t, const int64_t *dims, int32_t n, sg_cu_rdims *r) {
    return sg_reduce_dims(t, dims, n, r->mask);
}

void sg_cu_dims_one(const sg_tensor *t, int64_t dim, sg_cu_rdims *r) {
    memset(r->mask, 0, sizeof r->mask);
    if (t->ndim) r->mask[dim] = true;
}

void sg_cu_reduced_shape(const sg_tensor *t, const sg_cu_rdims *r, bool keepdim, int64_t *sizes,
                         int32_t *n) {
    *n = 0;
    for (int32_t d = 0; d < t->ndim; d++)
        if (!r->mask[d]) sizes[(*n)++] = t->sizes[d];
        else if (keepdim) sizes[(*n)++] = 1;
}

sg_status sg_cu_shape_out(sg_tensor *out, const sg_tensor *self, const sg_cu_rdims *r,
                          bool keepdim) {
    int64_t sizes[SG_MAX_DIMS];
    int32_t n;
    sg_cu_reduced_shape(self, r, keepdim, sizes, &n);
    bool same = out->ndim == n;
    for (int32_t i = 0; same && i < n; i++) same = out->sizes[i] == sizes[i];
    return same ? SG_OK : sg_tensor_resize_(out, sizes, n);
}

sg_status sg_cu_new_result(const sg_tensor *self, const sg_cu_rdims *r, bool keepdim,
                           sg_dtype dtype, sg_tensor **out) {
    int64_t sizes[SG_MAX_DIMS];
    int32_t n;
    sg_cu_reduced_shape(self, r, keepdim, sizes, &n);
    return sg_tensor_empty(sizes, n, dtype, self->device, out);
}

sg_status sg_cu_check_nonempty(const char *fn, const sg_tensor *self, const int64_t *dims,
                               int32_t n) {
    if (sg_tensor_numel(self) != 0) return SG_OK;
    if (n == 0)
        return sg_error(SG_EINVAL, "%s: Expected reduction dim to be specified for input.numel() "
                                   "== 0. Specify the reduction dim with the 'dim' argument.",
                        fn);
    for (int32_t i = 0; i < n; i++) {
        int64_t d = dims[i];
        if (self->ndim == 0) {
            if (d != 0 && d != -1)
                return sg_error(SG_EINVAL, "%s: Expected reduction dim -1 or 0 for scalar but got "
                                           "%lld",
                                fn, (long long)d);
            continue;
        }
        int64_t   w = d;
        sg_status st = sg_cu_wrap_dim(&w, self->ndim);
        if (st) return st;
        if (self->sizes[w] == 0)
            return sg_error(SG_EINVAL, "%s: Expected reduction dim %lld to have non-zero size.", fn,
                            (long long)d);
    }
    return SG_OK;
}

/* t (the result, in its final shape) seen with size 1 at the reduced dims of an input of rank
 * ndim: the keepdim form the iterator writes through */
sg_status sg_cu_keepdim_view(sg_tensor *t, const sg_cu_rdims *r, int32_t ndim, bool keepdim,
                             sg_tensor **out) {
    if (keepdim || t->ndim == ndim) {
        *out = sg_tensor_retain(t);
        return SG_OK;
    }
    int64_t sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS];
    int32_t k = 0;
    for (int32_t d = 0; d < ndim; d++) {
        if (r->mask[d]) {
            sizes[d] = 1, strides[d] = 0;
        } else {
            sizes[d] = t->sizes[k], strides[d] = t->strides[k];
            k++;
        }
    }
    return sg_tensor_as_strided(t, sizes, strides, ndim, t->offset, out);
}

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

sg_status sum_like(const char *op, int kind, sg_tensor *self, const sg_cu_rdims *r, bool keepdim,
                   sg_tensor *out) {
    sg_status st;
    if ((st = sg_cu_no_complex(op, self)) || (st = sg_cu_no_complex(op, out))) return st;
    if ((st = sg_cu_shape_out(out, self, r, keepdim))) return st;
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
    sg_cu_rdims r;
    sg_status   st = sg_cu_dims_of(self, dim ? dim->items : NULL, dim ? dim->len : 0, &r);
    if (!st && dtype) st = sg_cu_check_out_dtype(out, *dtype);
    if (!st) st = sum_like("sum", K_SUM, self, &r, keepdim, out);
    return sg_cu_give(st, out, ret);
}

sg_status mean_dtype(const sg_tensor *self, const sg_dtype *dtype) {
    sg_dtype in = dtype ? *dtype : sg_cu_int_to_long(dtype_of(self));
    if (sg_dtype_is_floating(in) || sg_dtype_is_complex(in)) return SG_OK;
    return sg_error(SG_EINVAL, "mean(): could not infer output dtype. %s dtype must be either a "
                               "floating point or complex dtype. Got: %s",
                    dtype ? "Optional" : "Input",
                    sg_aten_type_name(dtype ? *dtype : dtype_of(self)));
}

sg_status mean_out(sg_keyset, sg_tensor *self, const sg_int_list *dim, bool keepdim,
                   const sg_dtype *dtype, sg_tensor *out, sg_tensor **ret) {
    sg_cu_rdims r;
    sg_status   st = mean_dtype(self, dtype);
    if (!st) st = sg_cu_dims_of(self, dim ? dim->items : NULL, dim ? dim->len : 0, &r);
    if (!st && dtype) st = sg_cu_check_out_dtype(out, *dtype);
    if (!st && !sg_dtype_is_floating(dtype_of(out)) && !sg_dtype_is_complex(dtype_of(out)))
        st = sg_error(SG_EINVAL, "mean(): result type Float can't be cast to the desired output "
                                 "type %s",
                      sg_aten_type_name(dtype_of(out)));
    if (!st) st = sum_like("mean", K_MEAN, self, &r, keepdim, out);
    return sg_cu_give(st, out, ret);
}

sg_status prod_all(sg_keyset, sg_tensor *self, const sg_dtype *dtype, sg_tensor **ret) {
    sg_cu_rdims r;
    sg_tensor  *out = NULL;
    sg_status   st = sg_cu_dims_of(self, NULL, 0, &r);
    if (!st)
        st = sg_cu_new_result(self, &r, false, dtype ? *dtype : sg_cu_int_to_long(dtype_of(self)),
                              &out);
    if (!st) st = sum_like("prod", K_PROD, self, &r, false, out);
    return sg_cu_give_new(st, out, ret);
}

sg_status prod_out(sg_keyset, sg_tensor *self, int64_t dim, bool keepdim, const sg_dtype *dtype,
                   sg_tensor *out, sg_tensor **ret) {
    sg_cu_rdims r;
    sg_status   st = sg_cu_wrap_dim(&dim, self->ndim);
    if (!st && dtype) st = sg_cu_check_out_dtype(out, *dtype);
    if (!st) {
        sg_cu_dims_one(self, dim, &r);
        st = sum_like("prod", K_PROD, self, &r, keepdim, out);
    }
    return sg_cu_give(st, out, ret);
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
