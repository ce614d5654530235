/* reduce_stat.cu: var, std and logsumexp on CUDA, as kernels/cpu/reduce.c.
 *
 * var/std: one pass of Welford's algorithm in float64 (count, mean, sum of squared deviations;
 * partials joined by Chan's formula), so the input is read once; the result divides by the
 * count less the correction (never below 0). logsumexp: one pass keeping the running max m and
 * the sum of exp(x - m), rescaled when m grows (float32 for the 32-bit-or-narrower floats,
 * float64 for float64); an infinite max shifts by 0, as the CPU's (so all -inf gives -inf, any
 * +inf gives +inf, and a NaN gives NaN). */
#include "reduce.cuh"

namespace {

struct welford {
    double n, mean, m2;
};

template <class T, class W, bool ROOT> struct var_ops {
    using in_t = T;
    using acc = welford;
    double corr;
    __device__ __forceinline__ acc ident() const { return acc{0, 0, 0}; }
    __device__ __forceinline__ void step(acc &a, T x, int64_t) const {
        double v = sg_cu_racc<double>(x);
        a.n += 1;
        double d = v - a.mean;
        a.mean += d / a.n;
        a.m2 += d * (v - a.mean);
    }
    __device__ __forceinline__ acc join(acc a, acc b) const {
        if (b.n == 0) return a;
        if (a.n == 0) return b;
        double n = a.n + b.n, d = b.mean - a.mean, f = b.n / n;
        return acc{n, a.mean + d * f, a.m2 + b.m2 + d * d * a.n * f};
    }
    __device__ __forceinline__ void write(acc a, int64_t count, char *out, char *) const {
        double den = (double)count - corr;
        if (!(den > 0)) den = 0;
        double x = a.m2 / den;
        if (ROOT) x = sqrt(x);
        *reinterpret_cast<W *>(out) = sg_cu_convert<W>(x);
    }
};

sg_status var_run(const char *op, sg_tensor *self, const sg_int_list *dim,
                  const sg_scalar *correction, bool keepdim, bool root, sg_tensor *out) {
    sg_rdims  r;
    sg_status st = sg_reduce_var_args(op, self, dim, keepdim, out, &r);
    if (st) return st;
    sg_dtype t = dtype_of(self);
    double   corr = correction ? sg_scalar_to_double(*correction) : 1.0;
    sg_dtype w = sg_cu_w_dtype(t, dtype_of(out));
    return sg_cu_reduce_into(op, self, &r, keepdim, out, w, NULL, 0, [&](const sg_iter *it) {
        return sg_cu_visit(t, SG_CU_FLOATS, op, [&](auto tt) {
            using T = typename decltype(tt)::type;
            return sg_cu_visit_w<T>(w, [&](auto wt) {
                using W = typename decltype(wt)::type;
                if (root) return sg_cu_reduce(it, var_ops<T, W, true>{corr}, op);
                return sg_cu_reduce(it, var_ops<T, W, false>{corr}, op);
            });
        });
    });
}

template <bool ROOT>
sg_status var_correction_out(sg_keyset, sg_tensor *self, const sg_int_list *dim,
                             const sg_scalar *correction, bool keepdim, sg_tensor *out,
                             sg_tensor **ret) {
    return sg_reduce_give(var_run(ROOT ? "std" : "var", self, dim, correction, keepdim, ROOT, out),
                      out, ret);
}

template <bool ROOT>
sg_status var_correction(sg_keyset, sg_tensor *self, const sg_int_list *dim,
                         const sg_scalar *correction, bool keepdim, sg_tensor **ret) {
    sg_tensor *out = NULL;
    sg_status  st = sg_tensor_empty(NULL, 0, dtype_of(self), self->device, &out);
    if (!st) st = var_run(ROOT ? "std" : "var", self, dim, correction, keepdim, ROOT, out);
    return sg_reduce_give_new(st, out, ret);
}

/* ---- logsumexp ------------------------------------------------------------------------------ */

template <class A> struct lse_acc {
    A m, s; /* the max so far; the sum of exp(x - shift(m)) */
};

template <class A> __device__ __forceinline__ A lse_shift(A m) { return isinf(m) ? A(0) : m; }
template <class A> __device__ __forceinline__ A lse_exp(A x) {
    if constexpr (std::is_same<A, float>::value) return expf(x);
    else return exp(x);
}
/* s, a sum relative to max m, made relative to m2 >= m */
template <class A> __device__ __forceinline__ A lse_rescale(A s, A m, A m2) {
    return s == A(0) ? A(0) : s * lse_exp(lse_shift(m) - lse_shift(m2));
}
template <class A> __device__ __forceinline__ A lse_max(A a, A b) {
    return (b > a || b != b) ? b : a;
}

template <class T, class W> struct lse_ops {
    using in_t = T;
    using A = typename std::conditional<std::is_same<T, double>::value, double, float>::type;
    using acc = lse_acc<A>;
    __device__ __forceinline__ acc ident() const { return acc{(A)-INFINITY, A(0)}; }
    __device__ __forceinline__ void step(acc &a, T x, int64_t) const {
        A v = sg_cu_racc<A>(x);
        A m2 = lse_max(a.m, v);
        if (!(m2 == a.m)) { /* a larger max, or a NaN */
            a.s = lse_rescale(a.s, a.m, m2);
            a.m = m2;
        }
        a.s += lse_exp(v - lse_shift(a.m));
    }
    __device__ __forceinline__ acc join(acc a, acc b) const {
        A m2 = lse_max(a.m, b.m);
        return acc{m2, lse_rescale(a.s, a.m, m2) + lse_rescale(b.s, b.m, m2)};
    }
    __device__ __forceinline__ void write(acc a, int64_t, char *out, char *) const {
        A r;
        if constexpr (std::is_same<A, float>::value) r = logf(a.s) + lse_shift(a.m);
        else r = log(a.s) + lse_shift(a.m);
        *reinterpret_cast<W *>(out) = sg_cu_convert<W>(r);
    }
};

sg_status lse_run(sg_tensor *self, sg_int_list dim, bool keepdim, sg_tensor *out) {
    sg_rdims  r;
    sg_status st = sg_reduce_lse_args(self, dim, keepdim, out, &r);
    if (st) return st;
    sg_dtype   t = dtype_of(self);
    sg_dtype   read = sg_dtype_is_floating(t) ? t : SG_FLOAT32;
    sg_dtype   w = sg_cu_w_dtype(read, dtype_of(out));
    sg_tensor *x = NULL;
    if (read == t) x = sg_tensor_retain(self);
    else if ((st = sg_cast(self, read, &x))) return st;
    st = sg_cu_reduce_into("logsumexp", x, &r, keepdim, out, w, NULL, 0, [&](const sg_iter *it) {
        return sg_cu_visit(read, SG_CU_FLOATS, "logsumexp", [&](auto tt) {
            using T = typename decltype(tt)::type;
            return sg_cu_visit_w<T>(w, [&](auto wt) {
                using W = typename decltype(wt)::type;
                return sg_cu_reduce(it, lse_ops<T, W>{}, "logsumexp");
            });
        });
    });
    sg_tensor_release(x);
    return st;
}

sg_status logsumexp_out(sg_keyset, sg_tensor *self, sg_int_list dim, bool keepdim,
                        sg_tensor *out, sg_tensor **ret) {
    return sg_reduce_give(lse_run(self, dim, keepdim, out), out, ret);
}

sg_status logsumexp_fn(sg_keyset, sg_tensor *self, sg_int_list dim, bool keepdim,
                       sg_tensor **ret) {
    sg_dtype   t = dtype_of(self);
    sg_tensor *out = NULL;
    sg_status  st = sg_tensor_empty(NULL, 0, sg_dtype_is_integral(t, true) ? SG_FLOAT32 : t,
                                    self->device, &out);
    if (!st) st = lse_run(self, dim, keepdim, out);
    return sg_reduce_give_new(st, out, ret);
}

} // namespace

sg_status sg_cu_register_reduce_stat(void) {
    SG_CU_REG(aten_var_correction, var_correction<false>);
    SG_CU_REG(aten_var_correction_out, var_correction_out<false>);
    SG_CU_REG(aten_std_correction, var_correction<true>);
    SG_CU_REG(aten_std_correction_out, var_correction_out<true>);
    SG_CU_REG(aten_logsumexp, logsumexp_fn);
    SG_CU_REG(aten_logsumexp_out, logsumexp_out);
    return SG_OK;
}
