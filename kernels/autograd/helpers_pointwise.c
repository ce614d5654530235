/* helpers_pointwise.c: the backward helpers of pointwise ops (schemas/autograd.yaml): relu's
 * threshold, gelu, log_softmax, abs's sgn, clamp, pow with a tensor exponent, masked_fill's
 * value and _to_copy. Aten calls only, so they run on any device; real dtypes only. */
#include "helpers_util.h"

#include <math.h>
#include <string.h>

/* C11 has no pi */
static const double pi = 3.14159265358979323846, sqrt1_2 = 0.70710678118654752440;

/* grad where self > threshold, 0 elsewhere */
sg_status sg_agf_threshold_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *self,
                                    sg_scalar threshold, sg_tensor **ret) {
    (void)ks;
    sg_tensor *m = NULL;
    sg_status st;
    TRY(aten_le_Scalar(self, threshold, &m));
    TRY(aten_where_ScalarSelf(m, sg_scalar_int(0), grad, ret));
done:
    RELEASE(m);
    return st;
}

/* gelu's derivative times grad. 'none': Phi(x) + x phi(x), Phi = (1 + erf(x / sqrt 2)) / 2 and
 * phi = exp(-x^2 / 2) / sqrt(2 pi). 'tanh': with u = b (x + k x^3), t = tanh(u),
 * b = sqrt(2 / pi), k = 0.044715: (1 + t) / 2 + x / 2 (1 - t^2) b (1 + 3 k x^2). */
sg_status sg_agf_gelu_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *x,
                               const char *approximate, sg_tensor **ret) {
    (void)ks;
    sg_status st = agf_real("gelu_backward", grad);
    if (st != SG_OK) return st;
    bool tanh_mode = approximate && strcmp(approximate, "tanh") == 0;
    if (!tanh_mode && approximate && strcmp(approximate, "none") != 0)
        return sg_error(SG_EINVAL, "autograd::gelu_backward: approximate is '%s', not 'none' "
                        "or 'tanh'", approximate);
    sg_tensor *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL, *f = NULL, *h = NULL;
    if (!tanh_mode) {
        TRY(aten_mul_Scalar(x, sg_scalar_float(sqrt1_2), &a));
        TRY(aten_erf(a, &b));
        TRY(aten_add_Scalar(b, sg_scalar_int(1), sg_scalar_int(1), &c)); /* 2 Phi */
        TRY(aten_mul_Tensor(x, x, &d));
        TRY(aten_mul_Scalar(d, sg_scalar_float(-0.5), &e));
        RELEASE(a), a = NULL;
        TRY(aten_exp(e, &a));
        RELEASE(d), d = NULL;
        TRY(aten_mul_Tensor(x, a, &d)); /* x phi sqrt(2 pi) */
        RELEASE(e), e = NULL;
        TRY(aten_mul_Scalar(d, sg_scalar_float(1 / sqrt(2 * pi)), &e));
        RELEASE(b), b = NULL;
        TRY(aten_mul_Scalar(c, sg_scalar_float(0.5), &b));
        TRY(aten_add_Tensor(b, e, sg_scalar_int(1), &f));
    } else {
        const double beta = sqrt(2 / pi), kappa = 0.044715;
        TRY(aten_mul_Tensor(x, x, &a));                                      /* x^2 */
        TRY(aten_mul_Scalar(a, sg_scalar_float(kappa), &b));
        TRY(aten_add_Scalar(b, sg_scalar_int(1), sg_scalar_int(1), &c));    /* 1 + k x^2 */
        TRY(aten_mul_Tensor(x, c, &d));
        RELEASE(b), b = NULL;
        TRY(aten_mul_Scalar(d, sg_scalar_float(beta), &b));                 /* u */
        RELEASE(c, d), c = d = NULL;
        TRY(aten_tanh(b, &c));                                              /* t */
        RELEASE(b), b = NULL;
        TRY(aten_mul_Tensor(c, c, &b));
        TRY(aten_sub_Scalar(b, sg_scalar_int(1), sg_scalar_int(1), &d));    /* t^2 - 1 */
        RELEASE(b), b = NULL;
        TRY(aten_mul_Scalar(a, sg_scalar_float(3 * kappa), &b));
        TRY(aten_add_Scalar(b, sg_scalar_int(1), sg_scalar_int(1), &e));    /* 1 + 3k x^2 */
        RELEASE(b), b = NULL;
        TRY(aten_mul_Tensor(d, e, &b));
        RELEASE(d), d = NULL;
        TRY(aten_mul_Tensor(b, x, &d));
        RELEASE(e), e = NULL;
        TRY(aten_mul_Scalar(d, sg_scalar_float(-0.5 * beta), &e));          /* right' */
        RELEASE(b), b = NULL;
        TRY(aten_add_Scalar(c, sg_scalar_int(1), sg_scalar_int(1), &b));
        RELEASE(d), d = NULL;
        TRY(aten_mul_Scalar(b, sg_scalar_float(0.5), &d));                  /* left' */
        TRY(aten_add_Tensor(d, e, sg_scalar_int(1), &f));
    }
    TRY(aten_mul_Tensor(grad, f, &h));
    *ret = h, h = NULL;
done:
    RELEASE(a, b, c, d, e, f, h);
    return st;
}

/* log_softmax's: grad - exp(y) * sum(grad, dim), in the input's dtype (half_to_float gave y
 * in float32 for a half input) */
sg_status sg_agf_log_softmax_backward_data(sg_keyset ks, sg_tensor *grad, sg_tensor *y,
                                           int64_t dim, sg_dtype input_dtype, sg_tensor **ret) {
    (void)ks;
    sg_tensor *e = NULL, *s = NULL, *p = NULL, *d = NULL;
    sg_status st;
    TRY(aten_exp(y, &e));
    TRY(aten_sum_dim_IntList(grad, &(sg_int_list){&dim, 1}, true, NULL, &s));
    TRY(aten_mul_Tensor(e, s, &p));
    TRY(aten_sub_Tensor(grad, p, sg_scalar_int(1), &d));
    TRY(agf_to(d, input_dtype, ret));
done:
    RELEASE(e, s, p, d);
    return st;
}

sg_status sg_agf_sgn(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    sg_status st = agf_real("sgn", self);
    return st == SG_OK ? aten_sign(self, ret) : st;
}

/* grad where min <= self <= max (each bound where given), 0 elsewhere. cond_* make the test
 * against a Scalar or a Tensor bound. */
static sg_status keep_where(sg_tensor *grad, sg_tensor *lo, sg_tensor *hi, sg_tensor **ret) {
    sg_tensor *both = NULL;
    sg_status st = SG_OK;
    if (!lo && !hi) {
        *ret = sg_tensor_retain(grad);
        return SG_OK;
    }
    if (lo && hi) TRY(aten_logical_and(lo, hi, &both));
    TRY(aten_where_ScalarOther(both ? both : lo ? lo : hi, grad, sg_scalar_int(0), ret));
done:
    RELEASE(both);
    return st;
}

sg_status sg_agf_clamp_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *self,
                                const sg_scalar *min, const sg_scalar *max, sg_tensor **ret) {
    (void)ks;
    sg_tensor *lo = NULL, *hi = NULL;
    sg_status st = SG_OK;
    if (min) TRY(aten_ge_Scalar(self, *min, &lo));
    if (max) TRY(aten_le_Scalar(self, *max, &hi));
    TRY(keep_where(grad, lo, hi, ret));
done:
    RELEASE(lo, hi);
    return st;
}

sg_status sg_agf_clamp_backward_tensor(sg_keyset ks, sg_tensor *grad, sg_tensor *self,
                                       sg_tensor *min, sg_tensor *max, sg_tensor **ret) {
    (void)ks;
    sg_tensor *lo = NULL, *hi = NULL;
    sg_status st = SG_OK;
    if (min) TRY(aten_ge_Tensor(self, min, &lo));
    if (max) TRY(aten_le_Tensor(self, max, &hi));
    TRY(keep_where(grad, lo, hi, ret));
done:
    RELEASE(lo, hi);
    return st;
}

/* clamp's bounds: min takes grad where self < min (and min < max), max where self > max (or
 * max < min: max wins) */
sg_status sg_agf_clamp_backward_min_max(sg_keyset ks, sg_tensor *grad, sg_tensor *self,
                                        sg_tensor *min, sg_tensor *max, sg_bool_list mask,
                                        sg_tensor **gmin, sg_tensor **gmax) {
    (void)ks;
    if (mask.len != 2)
        return sg_error(SG_EINVAL, "autograd::clamp_backward_min_max: the mask has %d entries, "
                        "not 2", (int)mask.len);
    if (!grad) return SG_OK;
    sg_tensor *a = NULL, *b = NULL, *c = NULL;
    sg_status st = SG_OK;
    if (min && mask.items[0]) {
        TRY(aten_lt_Tensor(self, min, &a));
        if (max) {
            TRY(aten_lt_Tensor(min, max, &b));
            TRY(aten_logical_and(a, b, &c));
        }
        TRY(aten_where_ScalarOther(c ? c : a, grad, sg_scalar_int(0), gmin));
        RELEASE(a, b, c), a = b = c = NULL;
    }
    if (max && mask.items[1]) {
        TRY(aten_gt_Tensor(self, max, &a));
        if (min) {
            TRY(aten_lt_Tensor(max, min, &b));
            TRY(aten_logical_or(a, b, &c));
        }
        TRY(aten_where_ScalarOther(c ? c : a, grad, sg_scalar_int(0), gmax));
    }
done:
    RELEASE(a, b, c);
    if (st != SG_OK) {
        sg_tensor_release(*gmin), sg_tensor_release(*gmax);
        *gmin = *gmax = NULL;
    }
    return st;
}

/* d(x^e)/dx = e x^(e-1), 0 where e == 0 */
sg_status sg_agf_pow_backward_self(sg_keyset ks, sg_tensor *grad, sg_tensor *self,
                                   sg_tensor *exponent, sg_tensor **ret) {
    (void)ks;
    sg_status st = agf_real("pow_backward_self", grad);
    if (st != SG_OK) return st;
    sg_tensor *em1 = NULL, *p = NULL, *q = NULL, *g = NULL, *z = NULL;
    TRY(aten_sub_Scalar(exponent, sg_scalar_int(1), sg_scalar_int(1), &em1));
    TRY(aten_pow_Tensor_Tensor(self, em1, &p));
    TRY(aten_mul_Tensor(exponent, p, &q));
    TRY(aten_mul_Tensor(grad, q, &g));
    TRY(aten_eq_Scalar(exponent, sg_scalar_int(0), &z));
    TRY(aten_where_ScalarSelf(z, sg_scalar_int(0), g, ret));
done:
    RELEASE(em1, p, q, g, z);
    return st;
}

/* d(b^e)/de = b^e log b, 0 where b == 0 and e >= 0 */
sg_status sg_agf_pow_backward_exponent(sg_keyset ks, sg_tensor *grad, sg_tensor *self,
                                       sg_tensor *exponent, sg_tensor *result, sg_tensor **ret) {
    (void)ks;
    sg_status st = agf_real("pow_backward_exponent", grad);
    if (st != SG_OK) return st;
    sg_tensor *s = NULL, *l = NULL, *p = NULL, *a = NULL, *b = NULL, *c = NULL, *w = NULL;
    /* the log in the promoted dtype (the result's), as aten's: an int64 base with a float64
     * exponent takes float64's log, not the float32 one log(int64) gives */
    TRY(agf_to(self, (sg_dtype)result->dtype, &s));
    TRY(aten_log(s, &l));
    TRY(aten_mul_Tensor(result, l, &p));
    TRY(aten_eq_Scalar(self, sg_scalar_int(0), &a));
    TRY(aten_ge_Scalar(exponent, sg_scalar_int(0), &b));
    TRY(aten_logical_and(a, b, &c));
    TRY(aten_where_ScalarSelf(c, sg_scalar_int(0), p, &w));
    TRY(aten_mul_Tensor(grad, w, ret));
done:
    RELEASE(s, l, p, a, b, c, w);
    return st;
}

sg_status sg_agf_pow_backward_exponent_scalar(sg_keyset ks, sg_tensor *grad, sg_scalar base,
                                              sg_tensor *exponent, sg_tensor *result,
                                              sg_tensor **ret) {
    (void)ks;
    sg_status st = agf_real("pow_backward_exponent", grad);
    if (st != SG_OK) return st;
    if (base.kind == SG_SCALAR_COMPLEX)
        return sg_error(SG_EUNSUPPORTED, "autograd::pow_backward_exponent: a complex base is "
                        "not supported yet");
    double b = sg_scalar_to_double(base);
    sg_tensor *p = NULL, *c = NULL, *w = NULL;
    TRY(aten_mul_Scalar(result, sg_scalar_float(log(b)), &p));
    if (b == 0) {
        TRY(aten_ge_Scalar(exponent, sg_scalar_int(0), &c));
        TRY(aten_where_ScalarSelf(c, sg_scalar_int(0), p, &w));
    } else {
        w = sg_tensor_retain(p);
    }
    TRY(aten_mul_Tensor(grad, w, ret));
done:
    RELEASE(p, c, w);
    return st;
}

/* masked_fill.Tensor's value: the gradient summed where mask is set (0-dim) */
sg_status sg_agf_masked_fill_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *mask,
                                      sg_tensor **ret) {
    (void)ks;
    sg_tensor *w = NULL;
    sg_status st;
    TRY(aten_where_ScalarOther(mask, grad, sg_scalar_int(0), &w));
    TRY(aten_sum(w, NULL, ret));
done:
    RELEASE(w);
    return st;
}

/* _to_copy's: the gradient in the input's dtype, on its device */
sg_status sg_agf_to_copy_backward(sg_keyset ks, sg_tensor *grad, const sg_dtype *dtype,
                                  const sg_layout *layout, const sg_device *device,
                                  const bool *pin_memory, sg_tensor **ret) {
    (void)ks, (void)pin_memory;
    sg_status st = agf_real("_to_copy_backward", grad);
    if (st == SG_OK && dtype && sg_dtype_is_complex(*dtype))
        st = agf_real("_to_copy_backward", NULL);
    if (st != SG_OK) return st;
    return aten__to_copy(grad, dtype, layout, device, NULL, false, NULL, ret);
}
