/* factory.cu: the filling factories on CUDA (full, ones, zeros.out, the _like forms, arange),
 * so that a CUDA tensor is filled by a kernel on its stream rather than on the host and
 * copied (the device-generic composites of kernels/cpu/factory.c do that). Checks, dtype rules
 * and messages are factory.c's (sg_factory_shape.h); the values are the CPU's to the bit (a
 * fill value is converted by the CPU's cast; arange computes as arange_fill does: int64 for
 * integers, double rounded once for float32 and float64, float for the 16-bit floats, with no
 * fused multiply-add). zeros and empty need no kernel (the runtime zeroes with
 * cudaMemsetAsync). The random ops are in random.cu. */
#include "factory.cuh"

/* ---- helpers (factory.cuh) ----------------------------------------------------------------- */

namespace {

/* 16-byte stores of a repeated pattern over nvec aligned chunks */
__global__ void __launch_bounds__(SG_CU_BLOCK) fill_vec_kernel(uint4 *p, uint4 pat, int64_t nvec) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nvec; i += step)
        p[i] = pat;
}

template <class E>
__global__ void __launch_bounds__(SG_CU_BLOCK) fill_lin_kernel(E *p, E v, int64_t n) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) p[i] = v;
}

template <class E>
__global__ void __launch_bounds__(SG_CU_BLOCK)
    fill_strided_kernel(const sg_cu_nd<1> g, E *p, E v, int64_t n) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        int64_t off = 0;
        sg_cu_coords(g, i, [&](int d, int64_t c) { off += c * g.st[0][d]; });
        p[off] = v;
    }
}

} // namespace

sg_status sg_cu_fill_bytes(sg_tensor *t, const void *value) {
    int64_t n = sg_tensor_numel(t);
    size_t  es = sg_dtype_size(dtype_of(t));
    if (n == 0 || t->device.type != SG_DEV_CUDA) return SG_OK;
    sg_cu_guard  guard(t->device);
    cudaStream_t s = sg_cu_stream();
    char        *p = (char *)sg_tensor_data(t);
    bool         dense = sg_tensor_is_dense(t); /* the elements fill [p, p + n) in some order */
    return sg_cu_visit_size(es, [&](auto tag) -> sg_status {
        using E = typename decltype(tag)::type;
        E v;
        memcpy(&v, value, sizeof v);
        if (!dense) {
            sg_cu_nd<1> g;
            g.ndim = t->ndim;
            for (int32_t d = 0; d < t->ndim; d++) g.size[d] = t->sizes[d], g.st[0][d] = t->strides[d];
            fill_strided_kernel<E><<<sg_cu_blocks(n), SG_CU_BLOCK, 0, s>>>(g, (E *)p, v, n);
            return sg_cu_check("fill");
        }
        int64_t head = 0;
        if ((uintptr_t)p % 16 == 0 && n * (int64_t)es >= 16) {
            uint4 pat;
            for (size_t k = 0; k < 16; k += es) memcpy((char *)&pat + k, value, es);
            int64_t nvec = n * (int64_t)es / 16;
            fill_vec_kernel<<<sg_cu_grid(nvec, 1), SG_CU_BLOCK, 0, s>>>((uint4 *)p, pat, nvec);
            head = nvec * 16 / (int64_t)es;
        }
        if (head < n)
            fill_lin_kernel<E><<<sg_cu_blocks(n - head), SG_CU_BLOCK, 0, s>>>((E *)p + head, v,
                                                                              n - head);
        return sg_cu_check("fill");
    });
}

namespace {

sg_dtype dt(const sg_tensor *t) { return (sg_dtype)t->dtype; }

/* Every element of t becomes v converted to t's dtype (by the CPU's cast, checked as c10). */
sg_status fill(const char *op, sg_tensor *t, sg_scalar v) {
    if (sg_scalar_overflows(v, dt(t)))
        return sg_error(SG_EINVAL, "%s: value cannot be converted to type %s without overflow",
                        op, sg_cpp_type_name(dt(t)));
    if (t->device.type != SG_DEV_CUDA)
        return sg_error(SG_EINVAL, "%s: expected a tensor on cuda, got one on %s", op,
                        sg_device_type_name((sg_device_type)t->device.type));
    if (sg_tensor_numel(t) == 0) return SG_OK;
    if (!sg_tensor_writable(t)) return sg_error(SG_EREADONLY, "%s: the tensor is read-only", op);
    sg_tensor *s = NULL, *one = NULL;
    sg_status  st = sg_scalar_tensor(v, &s);
    if (!st) st = sg_cast(s, dt(t), &one); /* one element of t's dtype, on the host */
    if (!st) st = sg_cu_fill_bytes(t, sg_tensor_data(one));
    sg_tensor_release(one);
    sg_tensor_release(s);
    return st;
}

/* A new contiguous tensor of size and opts filled with v. */
sg_status make(const char *op, sg_int_list size, sg_factory_opts o, sg_scalar v,
               sg_tensor **ret) {
    sg_status st = sg_factory_check_sizes(op, size);
    *ret = NULL;
    if (st || (st = sg_tensor_empty(size.items, size.len, o.dtype, o.dev, ret))) return st;
    if ((st = fill(op, *ret, v))) {
        sg_tensor_release(*ret);
        *ret = NULL;
    }
    return st;
}

bool on_cuda(sg_device d) { return d.type == SG_DEV_CUDA; }

/* ---- full, ones, zeros -------------------------------------------------------------------- */

sg_status full_k(sg_keyset ks, sg_int_list size, sg_scalar v, const sg_dtype *dtype,
                 const sg_layout *layout, const sg_device *device, const bool *pin,
                 sg_tensor **ret) {
    sg_factory_opts o;
    sg_status       st = sg_factory_options("full", dtype, sg_factory_scalar_dtype(v), layout,
                                            device, SG_CPU, &o);
    *ret = NULL;
    if (st) return st;
    if (!on_cuda(o.dev)) /* reached with another device asked for: its kernel */
        return aten_full_redispatch(sg_keyset_of_device(o.dev), size, v, dtype, layout, device,
                                    pin, ret);
    (void)ks;
    return make("full", size, o, v, ret);
}

sg_status full_names_k(sg_keyset ks, sg_int_list size, sg_scalar v, const sg_str_list *names,
                       const sg_dtype *dtype, const sg_layout *layout, const sg_device *device,
                       const bool *pin, sg_tensor **ret) {
    sg_status st = sg_factory_no_names("full", names);
    *ret = NULL;
    return st ? st : full_k(ks, size, v, dtype, layout, device, pin, ret);
}

sg_status ones_k(sg_keyset ks, sg_int_list size, const sg_dtype *dtype, const sg_layout *layout,
                 const sg_device *device, const bool *pin, sg_tensor **ret) {
    sg_factory_opts o;
    sg_status       st = sg_factory_options("ones", dtype, SG_FLOAT32, layout, device, SG_CPU, &o);
    *ret = NULL;
    if (st) return st;
    if (!on_cuda(o.dev))
        return aten_ones_redispatch(sg_keyset_of_device(o.dev), size, dtype, layout, device, pin,
                                    ret);
    (void)ks;
    return make("ones", size, o, sg_scalar_int(1), ret);
}

sg_status ones_names_k(sg_keyset ks, sg_int_list size, const sg_str_list *names,
                       const sg_dtype *dtype, const sg_layout *layout, const sg_device *device,
                       const bool *pin, sg_tensor **ret) {
    sg_status st = sg_factory_no_names("ones", names);
    *ret = NULL;
    return st ? st : ones_k(ks, size, dtype, layout, device, pin, ret);
}

/* The fill of an out= form: out takes size, then every element becomes v. */
sg_status fill_out(const char *op, sg_int_list size, sg_scalar v, sg_tensor *out,
                   sg_tensor **ret) {
    sg_status st = sg_factory_check_sizes(op, size);
    *ret = NULL;
    if (st || (st = sg_tensor_resize_out_(out, size.items, size.len)) || (st = fill(op, out, v)))
        return st;
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

sg_status full_out_k(sg_keyset ks, sg_int_list size, sg_scalar v, sg_tensor *out,
                     sg_tensor **ret) {
    (void)ks;
    return fill_out("full", size, v, out, ret);
}
sg_status ones_out_k(sg_keyset ks, sg_int_list size, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return fill_out("ones", size, sg_scalar_int(1), out, ret);
}
sg_status zeros_out_k(sg_keyset ks, sg_int_list size, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return fill_out("zeros", size, sg_scalar_int(0), out, ret);
}

/* A _like tensor (empty_like's layout) filled with v, where it lands on CUDA. */
sg_status like(const char *op, sg_tensor *self, const sg_dtype *dtype, const sg_layout *layout,
               const sg_device *device, const bool *pin, const sg_memory_format *mf, sg_scalar v,
               sg_tensor **ret) {
    sg_factory_opts o;
    sg_status       st = sg_factory_options(op, dtype, dt(self), layout, device, self->device, &o);
    *ret = NULL;
    if (st || (st = aten_empty_like(self, dtype, layout, device, pin, mf, ret))) return st;
    if ((st = fill(op, *ret, v))) {
        sg_tensor_release(*ret);
        *ret = NULL;
    }
    return st;
}

sg_status full_like_k(sg_keyset ks, sg_tensor *self, sg_scalar v, const sg_dtype *dtype,
                      const sg_layout *layout, const sg_device *device, const bool *pin,
                      const sg_memory_format *mf, sg_tensor **ret) {
    if (device && !on_cuda(*device))
        return aten_full_like_redispatch(sg_keyset_of_device(*device), self, v, dtype, layout,
                                         device, pin, mf, ret);
    (void)ks;
    return like("full_like", self, dtype, layout, device, pin, mf, v, ret);
}
sg_status ones_like_k(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype,
                      const sg_layout *layout, const sg_device *device, const bool *pin,
                      const sg_memory_format *mf, sg_tensor **ret) {
    if (device && !on_cuda(*device))
        return aten_ones_like_redispatch(sg_keyset_of_device(*device), self, dtype, layout,
                                         device, pin, mf, ret);
    (void)ks;
    return like("ones_like", self, dtype, layout, device, pin, mf, sg_scalar_int(1), ret);
}
sg_status zeros_like_k(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype,
                       const sg_layout *layout, const sg_device *device, const bool *pin,
                       const sg_memory_format *mf, sg_tensor **ret) {
    if (device && !on_cuda(*device))
        return aten_zeros_like_redispatch(sg_keyset_of_device(*device), self, dtype, layout,
                                          device, pin, mf, ret);
    (void)ks;
    return like("zeros_like", self, dtype, layout, device, pin, mf, sg_scalar_int(0), ret);
}

/* ---- arange ------------------------------------------------------------------------------- */

/* start + step * i, rounded as factory.c's arange_fill (explicit roundings: no contraction) */
template <class T>
__global__ void __launch_bounds__(SG_CU_BLOCK)
    arange_kernel(T *out, int64_t n, int64_t ia, int64_t is, double fa, double fs) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        if constexpr (std::is_integral<T>::value) {
            out[i] = (T)(int64_t)((uint64_t)ia + (uint64_t)is * (uint64_t)i);
        } else if constexpr (sg_cu_is_half<T>()) {
            float v = __fadd_rn(__double2float_rn(fa),
                                __fmul_rn(__double2float_rn(fs), __ll2float_rn(i)));
            out[i] = T(v);
        } else if constexpr (std::is_same<T, float>::value) {
            out[i] = __double2float_rn(__dadd_rn(fa, __dmul_rn(fs, __ll2double_rn(i))));
        } else {
            out[i] = __dadd_rn(fa, __dmul_rn(fs, __ll2double_rn(i)));
        }
    }
}

/* arange into out (resized to [size] where its element count differs, as aten does), or into
 * a new tensor of dtype t on dev. */
sg_status arange_run(sg_scalar start, sg_scalar end, sg_scalar step, sg_dtype t, sg_device dev,
                     sg_tensor *out, sg_tensor **ret) {
    int64_t   n = 0;
    sg_status st = sg_factory_arange_size("arange_cuda", start, end, step, t, &n);
    *ret = NULL;
    if (st) return st;
    sg_tensor *dst = out, *tmp = NULL;
    if (!out) {
        if ((st = sg_tensor_empty(&n, 1, t, dev, &dst))) return st;
    } else if (sg_tensor_numel(out) != n && (st = sg_tensor_resize_(out, &n, 1))) {
        return st;
    }
    if (n > 0 && dst->device.type == SG_DEV_CUDA) {
        /* a non-contiguous out gets the values in its logical order through a copy */
        sg_tensor *w = dst;
        if (!sg_tensor_is_contiguous(dst)) {
            st = sg_tensor_empty(dst->sizes, dst->ndim, t, dst->device, &tmp);
            w = tmp;
        }
        if (!st) {
            int64_t ia = start.kind == SG_SCALAR_INT ? start.u.i
                                                     : (int64_t)sg_scalar_to_double(start);
            int64_t is = step.kind == SG_SCALAR_INT ? step.u.i : (int64_t)sg_scalar_to_double(step);
            double  fa = sg_scalar_to_double(start), fs = sg_scalar_to_double(step);
            sg_cu_guard  guard(w->device);
            cudaStream_t s = sg_cu_stream();
            st = sg_cu_visit(t, SG_CU_FLOATS | SG_CU_INTS, "arange", [&](auto tag) {
                using T = typename decltype(tag)::type;
                arange_kernel<T><<<sg_cu_blocks(n), SG_CU_BLOCK, 0, s>>>(
                    (T *)sg_tensor_data(w), n, ia, is, fa, fs);
                return sg_cu_check("arange");
            });
        }
        if (!st && tmp) st = sg_tensor_copy_(dst, tmp);
        sg_tensor_release(tmp);
    }
    if (st) {
        if (!out) sg_tensor_release(dst);
        return st;
    }
    *ret = out ? sg_tensor_retain(out) : dst;
    return SG_OK;
}

sg_status arange_start_step_k(sg_keyset ks, sg_scalar start, sg_scalar end, sg_scalar step,
                              const sg_dtype *dtype, const sg_layout *layout,
                              const sg_device *device, const bool *pin, sg_tensor **ret) {
    sg_factory_opts o;
    sg_dtype        def = sg_factory_arange_dtype(start, end, step);
    sg_status       st = sg_factory_options("arange", dtype, def, layout, device, SG_CPU, &o);
    *ret = NULL;
    if (st) return st;
    if (!on_cuda(o.dev))
        return aten_arange_start_step_redispatch(sg_keyset_of_device(o.dev), start, end, step,
                                                 dtype, layout, device, pin, ret);
    (void)ks;
    return arange_run(start, end, step, o.dtype, o.dev, NULL, ret);
}

sg_status arange_start_k(sg_keyset ks, sg_scalar start, sg_scalar end, const sg_dtype *dtype,
                         const sg_layout *layout, const sg_device *device, const bool *pin,
                         sg_tensor **ret) {
    return arange_start_step_k(ks, start, end, sg_scalar_int(1), dtype, layout, device, pin, ret);
}

sg_status arange_k(sg_keyset ks, sg_scalar end, const sg_dtype *dtype, const sg_layout *layout,
                   const sg_device *device, const bool *pin, sg_tensor **ret) {
    return arange_start_step_k(ks, sg_scalar_int(0), end, sg_scalar_int(1), dtype, layout,
                               device, pin, ret);
}

sg_status arange_out_k(sg_keyset ks, sg_scalar end, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return arange_run(sg_scalar_int(0), end, sg_scalar_int(1), dt(out), out->device, out, ret);
}

sg_status arange_start_out_k(sg_keyset ks, sg_scalar start, sg_scalar end, sg_scalar step,
                             sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return arange_run(start, end, step, dt(out), out->device, out, ret);
}

} // namespace

extern "C" sg_status sg_cu_register_factory(void) {
    SG_CU_REG(aten_full, full_k);
    SG_CU_REG(aten_full_names, full_names_k);
    SG_CU_REG(aten_full_out, full_out_k);
    SG_CU_REG(aten_full_like, full_like_k);
    SG_CU_REG(aten_ones, ones_k);
    SG_CU_REG(aten_ones_names, ones_names_k);
    SG_CU_REG(aten_ones_out, ones_out_k);
    SG_CU_REG(aten_ones_like, ones_like_k);
    SG_CU_REG(aten_zeros_out, zeros_out_k);
    SG_CU_REG(aten_zeros_like, zeros_like_k);
    SG_CU_REG(aten_arange, arange_k);
    SG_CU_REG(aten_arange_start, arange_start_k);
    SG_CU_REG(aten_arange_start_step, arange_start_step_k);
    SG_CU_REG(aten_arange_out, arange_out_k);
    SG_CU_REG(aten_arange_start_out, arange_start_out_k);
    return sg_cu_register_random();
}
