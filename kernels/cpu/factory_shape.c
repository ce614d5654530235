/* factory_shape.c: the factories' and random ops' checks and sizes, one copy for the CPU and
 * CUDA kernels (sg_factory_shape.h). */
#include "sg_factory_shape.h"

#include "cpu.h"

#include <float.h>
#include <math.h>

sg_status sg_factory_check_sizes(const char *op, sg_int_list size) {
    char b[256];
    if (size.len > SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "%s: %d dimensions (at most %d)", op, size.len, SG_MAX_DIMS);
    for (int32_t i = 0; i < size.len; i++)
        if (size.items[i] < 0)
            return sg_error(SG_EINVAL, "%s: Trying to create tensor with negative dimension %lld: "
                                       "%s",
                            op, (long long)size.items[i],
                            sg_shape_str(size.items, size.len, b, sizeof b));
    return SG_OK;
}

sg_status sg_factory_options(const char *op, const sg_dtype *dtype, sg_dtype def,
                             const sg_layout *layout, const sg_device *device, sg_device defdev,
                             sg_factory_opts *o) {
    o->dtype = def;
    o->dev = defdev;
    if (layout && *layout != SG_STRIDED)
        return sg_error(SG_EUNSUPPORTED, "%s: only the strided layout is supported", op);
    if (dtype && !sg_dtype_valid((int)*dtype))
        return sg_error(SG_EINVAL, "%s: no dtype %d", op, (int)*dtype);
    o->dtype = dtype ? *dtype : def;
    o->dev = device ? *device : defdev;
    return SG_OK;
}


sg_dtype sg_factory_scalar_dtype(sg_scalar v) {
    switch (v.kind) {
    case SG_SCALAR_BOOL: return SG_BOOL;
    case SG_SCALAR_INT: return SG_INT64;
    case SG_SCALAR_COMPLEX: return SG_COMPLEX64;
    default: return SG_FLOAT32;
    }
}

sg_dtype sg_factory_arange_dtype(sg_scalar a, sg_scalar b, sg_scalar c) {
    return a.kind == SG_SCALAR_FLOAT || b.kind == SG_SCALAR_FLOAT || c.kind == SG_SCALAR_FLOAT
               ? SG_FLOAT32
               : SG_INT64;
}

sg_status sg_factory_no_names(const char *op, const sg_str_list *names) {
    return names ? sg_error(SG_EUNSUPPORTED, "%s: named tensors are not supported", op) : SG_OK;
}

sg_status sg_factory_arange_size(const char *kernel, sg_scalar start, sg_scalar end,
                                 sg_scalar step, sg_dtype t, int64_t *size) {
    if (!sg_dtype_valid((int)t) || sg_dtype_is_complex(t) || t == SG_BOOL)
        return sg_not_implemented(kernel, t);
    if (start.kind == SG_SCALAR_COMPLEX || end.kind == SG_SCALAR_COMPLEX ||
        step.kind == SG_SCALAR_COMPLEX)
        return sg_error(SG_EINVAL, "arange: complex bounds are not supported");
    double size_d;
    if (sg_dtype_is_integral(t, false)) {
        /* the bounds as the int64 accumulator sees them */
        double  fa = sg_scalar_to_double(start), fe = sg_scalar_to_double(end);
        double  fs = sg_scalar_to_double(step);
        if (!isfinite(fa) || !isfinite(fe))
            return sg_error(SG_EINVAL, "arange: unsupported range: %g -> %g", fa, fe);
        int64_t a = start.kind == SG_SCALAR_INT ? start.u.i : (int64_t)fa;
        int64_t e = end.kind == SG_SCALAR_INT ? end.u.i : (int64_t)fe;
        int64_t s = step.kind == SG_SCALAR_INT ? step.u.i : (int64_t)fs;
        if (s == 0) return sg_error(SG_EINVAL, "arange: step must be nonzero");
        if (!((s > 0 && e >= a) || (s < 0 && e <= a)))
            return sg_error(SG_EINVAL, "arange: upper bound and larger bound inconsistent with "
                                       "step sign");
        if (t == SG_INT64) {
            int64_t sgn = s > 0 ? 1 : -1;
            size_d = ceil((double)((e - a + s - sgn) / s));
        } else {
            size_d = ceil((fe - fa) / fs);
        }
    } else {
        double a = sg_scalar_to_double(start), e = sg_scalar_to_double(end);
        double s = sg_scalar_to_double(step);
        if (!(s > 0 || s < 0)) return sg_error(SG_EINVAL, "arange: step must be nonzero");
        if (!isfinite(a) || !isfinite(e))
            return sg_error(SG_EINVAL, "arange: unsupported range: %g -> %g", a, e);
        if (!((s > 0 && e >= a) || (s < 0 && e <= a)))
            return sg_error(SG_EINVAL, "arange: upper bound and larger bound inconsistent with "
                                       "step sign");
        size_d = ceil((e - a) / s);
    }
    if (!(size_d >= 0 && size_d <= 9.2233720368547758e18))
        return sg_error(SG_EINVAL, "arange: invalid size, possible overflow?");
    *size = (int64_t)size_d;
    return SG_OK;
}

sg_status sg_factory_uniform_check(sg_dtype t, double from, double to, float *fa, float *fd) {
    *fa = *fd = 0;
    if (!sg_dtype_is_floating(t)) return sg_not_implemented("check_uniform_bounds", t);
    if (!(from <= to))
        return sg_error(SG_EINVAL, "uniform_: uniform_ expects to return a [from, to) range, but "
                                   "found from=%g > to=%g",
                        from, to);
    double max = t == SG_FLOAT64 ? DBL_MAX : t == SG_FLOAT32 ? FLT_MAX
               : t == SG_FLOAT16 ? 65504.0 : 3.3895313892515355e38;
    if (from < -max || to > max)
        return sg_error(SG_EINVAL, "uniform_: %s is out of bounds for %s",
                        from < -max ? "from" : "to", sg_dtype_c10_name(t));
    if (to - from > max)
        return sg_error(SG_EINVAL, "uniform_: uniform_ expects to-from <= std::numeric_limits<%s>"
                                   "::max(), but found to=%g and from=%g which result in "
                                   "to-from to exceed the limit",
                        sg_dtype_c10_name(t), to, from);
    if (t == SG_FLOAT32 || t == SG_FLOAT16 || t == SG_BFLOAT16) {
        /* from, to and to - from are scalar_t values */
        *fa = (float)sg_round_to(t, from);
        float fb = (float)sg_round_to(t, to);
        *fd = (float)sg_round_to(t, fb - *fa);
    }
    return SG_OK;
}

sg_status sg_factory_normal_check(const char *kernel, const sg_tensor *self, double std) {
    sg_dtype t = dtype_of(self);
    if (!(std >= 0.0))
        return sg_error(SG_EINVAL, "normal_: normal expects std >= 0.0, but found std %g", std);
    /* an empty tensor is drawn by no kernel, so any dtype does, as in aten */
    bool ok = sg_dtype_is_floating(t) || sg_tensor_numel(self) == 0;
    return ok ? SG_OK : sg_not_implemented(kernel, t);
}

sg_status sg_factory_bernoulli_p_check(double p) {
    if (!(p >= 0 && p <= 1))
        return sg_error(SG_EINVAL, "bernoulli_: bernoulli_ expects p to be in [0, 1], but got "
                                   "p=%g",
                        p);
    return SG_OK;
}

sg_status sg_factory_normal_tensors(sg_tensor *mean_t, double mean, sg_tensor *std_t,
                                    double std, sg_generator *gen, sg_tensor *out,
                                    sg_factory_std_ok_fn std_ok, sg_factory_normal_fn draw,
                                    sg_tensor **ret) {
    char      a[160], b[160];
    int64_t   shape[SG_MAX_DIMS];
    int32_t   n = 0;
    sg_status st = SG_OK;
    *ret = NULL;
    if (std_t) {
        if (sg_dtype_is_complex((sg_dtype)std_t->dtype))
            return sg_error(SG_EINVAL, "normal: normal expects standard deviation to be "
                                       "non-complex");
        bool ok = true;
        if ((st = std_ok(std_t, &ok))) return st;
        if (!ok) return sg_error(SG_EINVAL, "normal: normal expects all elements of std >= 0.0");
    } else if (!(std >= 0.0)) {
        return sg_error(SG_EINVAL, "normal: normal expects std >= 0.0, but found std %g", std);
    }
    /* mean and std broadcast; a Tensor mean with a float std broadcasts with out's own sizes
     * instead (aten draws into a std tensor shaped like out) */
    const sg_tensor *x = mean_t ? mean_t : std_t;
    const sg_tensor *y = mean_t && std_t ? std_t : mean_t && out ? out : x;
    if (!sg_broadcast_shape(x->sizes, x->ndim, y->sizes, y->ndim, shape, &n))
        return sg_error(SG_EINVAL, "normal: the size of tensor a %s must match the size of "
                                   "tensor b %s at a non-singleton dimension",
                        sg_shape_str(x->sizes, x->ndim, a, sizeof a),
                        sg_shape_str(y->sizes, y->ndim, b, sizeof b));
    sg_tensor *o = out;
    if (!o) {
        if ((st = sg_tensor_empty(shape, n, (sg_dtype)x->dtype, x->device, &o))) return st;
    } else if ((st = sg_tensor_resize_out_(o, shape, n))) {
        return st;
    }
    sg_tensor *r = NULL;
    st = draw(o, 0, std_t ? 1 : std, gen);
    if (!st && o->device.type == SG_DEV_META) { /* shapes only */
        *ret = out ? sg_tensor_retain(out) : o;
        return SG_OK;
    }
    if (!st && std_t) {
        st = aten_mul__Tensor(o, std_t, &r);
        sg_tensor_release(r);
        r = NULL;
    }
    if (!st && mean_t) {
        st = aten_add__Tensor(o, mean_t, sg_scalar_int(1), &r);
    } else if (!st && mean != 0) {
        /* aten adds mean as a 0-d tensor of out's own dtype */
        sg_tensor *m = NULL, *mc = NULL;
        if (!(st = sg_scalar_tensor(sg_scalar_float(mean), &m)) &&
            !(st = sg_cast(m, dtype_of(o), &mc)))
            st = aten_add__Tensor(o, mc, sg_scalar_int(1), &r);
        sg_tensor_release(mc);
        sg_tensor_release(m);
    }
    sg_tensor_release(r);
    if (st) {
        if (!out) sg_tensor_release(o);
        return st;
    }
    *ret = out ? sg_tensor_retain(out) : o;
    return SG_OK;
}
