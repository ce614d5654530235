/* helpers.c: the kernels of the formulas' helper ops (schemas/autograd.yaml, docs/autograd.md):
 * what PyTorch's FunctionsManual.cpp computes, written as calls of aten ops through the typed C
 * API, so each runs on whatever device its tensors are on. They run inside a backward pass,
 * where grad mode is off and the aten calls record nothing. Real dtypes only: a complex
 * gradient is refused (SG_EUNSUPPORTED) rather than computed wrong. */
#include "aten.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Runs CALL (a call that returns sg_status); on failure, to `done`. */
#define TRY(call)                                                                             \
    do {                                                                                      \
        st = (call);                                                                          \
        if (st != SG_OK) goto done;                                                           \
    } while (0)

static sg_status no_complex(const char *fn, sg_dtype dt) {
    return sg_dtype_is_complex(dt)
               ? sg_error(SG_EUNSUPPORTED, "autograd::%s: complex gradients are not supported yet",
                          fn)
               : SG_OK;
}

static bool scalar_is(sg_scalar s, double v) {
    return s.kind != SG_SCALAR_COMPLEX && sg_scalar_to_double(s) == v;
}

/* s - 1, of s's kind */
static sg_scalar scalar_minus_one(sg_scalar s) {
    return s.kind == SG_SCALAR_INT ? sg_scalar_int(s.u.i - 1)
                                   : sg_scalar_float(sg_scalar_to_double(s) - 1);
}

sg_status sg_agf_handle_r_to_c(sg_keyset ks, sg_dtype self_st, sg_tensor *g, sg_tensor **ret) {
    (void)ks;
    sg_status st = no_complex("handle_r_to_c", self_st);
    if (st == SG_OK) st = no_complex("handle_r_to_c", (sg_dtype)g->dtype);
    if (st == SG_OK) *ret = sg_tensor_retain(g);
    return st;
}

sg_status sg_agf_conj(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    sg_status st = no_complex("conj", (sg_dtype)self->dtype);
    if (st == SG_OK) *ret = sg_tensor_retain(self);
    return st;
}

sg_status sg_agf_maybe_multiply(sg_keyset ks, sg_tensor *t, sg_scalar s, sg_tensor **ret) {
    (void)ks;
    if (scalar_is(s, 1)) {
        *ret = sg_tensor_retain(t);
        return SG_OK;
    }
    return aten_mul_Scalar(t, s, ret);
}

sg_status sg_agf_mul_tensor_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *other,
                                     sg_dtype self_st, sg_tensor **ret) {
    (void)ks;
    sg_status st = no_complex("mul_tensor_backward", (sg_dtype)other->dtype);
    if (st == SG_OK) st = no_complex("mul_tensor_backward", self_st);
    return st == SG_OK ? aten_mul_Tensor(grad, other, ret) : st;
}

sg_status sg_agf_mul_tensor_backward_scalar(sg_keyset ks, sg_tensor *grad, sg_scalar other,
                                            sg_dtype self_st, sg_tensor **ret) {
    (void)ks;
    sg_status st = no_complex("mul_tensor_backward", self_st);
    return st == SG_OK ? aten_mul_Scalar(grad, other, ret) : st;
}

/* Division that rounds (floor, trunc) is flat where it is differentiable: zeros. */
sg_status sg_agf_div_tensor_self_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *other,
                                          sg_dtype self_st, const char *rounding_mode,
                                          sg_tensor **ret) {
    (void)ks;
    sg_status st = no_complex("div_tensor_self_backward", self_st);
    if (st != SG_OK) return st;
    if (rounding_mode) return aten_zeros_like(grad, NULL, NULL, NULL, NULL, NULL, ret);
    return aten_div_Tensor(grad, other, ret);
}

sg_status sg_agf_div_tensor_self_backward_scalar(sg_keyset ks, sg_tensor *grad, sg_scalar other,
                                                 sg_dtype self_st, const char *rounding_mode,
                                                 sg_tensor **ret) {
    (void)ks;
    sg_status st = no_complex("div_tensor_self_backward", self_st);
    if (st != SG_OK) return st;
    if (rounding_mode) return aten_zeros_like(grad, NULL, NULL, NULL, NULL, NULL, ret);
    return aten_div_Scalar(grad, other, ret);
}

/* d(self / other)/d(other) = -self / other^2 */
sg_status sg_agf_div_tensor_other_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *self,
                                           sg_tensor *other, const char *rounding_mode,
                                           sg_tensor **ret) {
    (void)ks;
    if (rounding_mode) return aten_zeros_like(grad, NULL, NULL, NULL, NULL, NULL, ret);
    sg_tensor *q = NULL, *q2 = NULL, *n = NULL;
    sg_status st;
    TRY(aten_div_Tensor(self, other, &q));
    TRY(aten_div_Tensor(q, other, &q2));
    TRY(aten_neg(grad, &n));
    TRY(aten_mul_Tensor(n, q2, ret));
done:
    sg_tensor_release(q), sg_tensor_release(q2), sg_tensor_release(n);
    return st;
}

/* The dims of t that sum down to shape: its leading ones, and those shape has as 1. */
sg_status sg_agf_sum_to(sg_keyset ks, sg_tensor *t, sg_int_list shape, sg_tensor **ret) {
    (void)ks;
    int32_t lead = t->ndim - shape.len;
    if (lead < 0)
        return sg_error(SG_EINVAL, "autograd::sum_to: a %d-dim tensor cannot sum to %d dims",
                        (int)t->ndim, (int)shape.len);
    int64_t dims[SG_MAX_DIMS];
    int32_t n = 0;
    for (int32_t d = 0; d < t->ndim; d++)
        if (d < lead || (shape.items[d - lead] == 1 && t->sizes[d] != 1)) dims[n++] = d;
    if (!n && !lead) {
        *ret = sg_tensor_retain(t);
        return SG_OK;
    }
    sg_tensor *s = NULL;
    sg_status st = aten_sum_dim_IntList(t, &(sg_int_list){dims, n}, true, NULL, &s);
    if (st == SG_OK) st = aten_view(s, shape, ret);
    sg_tensor_release(s);
    return st;
}

/* sum's gradient: the reduced dims put back (where keepdim dropped them), then expanded. */
sg_status sg_agf_sum_backward(sg_keyset ks, sg_tensor *grad, sg_int_list sizes,
                              const sg_int_list *dims, bool keepdim, sg_tensor **ret) {
    (void)ks;
    int32_t nd = sizes.len;
    bool reduced[SG_MAX_DIMS] = {false};
    if (!dims || !dims->len) {
        for (int32_t d = 0; d < nd; d++) reduced[d] = true;
    } else {
        for (int32_t i = 0; i < dims->len; i++) {
            int64_t d = dims->items[i] < 0 ? dims->items[i] + nd : dims->items[i];
            if (d < 0 || d >= nd)
                return sg_error(SG_EINVAL, "autograd::sum_backward: dim %lld out of range for %d "
                                "dims", (long long)dims->items[i], (int)nd);
            reduced[d] = true;
        }
    }
    sg_tensor *g = sg_tensor_retain(grad), *u = NULL;
    sg_status st = SG_OK;
    if (!keepdim && grad->ndim < nd)
        for (int32_t d = 0; d < nd && st == SG_OK; d++) {
            if (!reduced[d]) continue;
            st = aten_unsqueeze(g, d, &u);
            sg_tensor_release(g);
            g = u, u = NULL;
        }
    if (st == SG_OK) st = aten_expand(g, sizes, false, ret);
    sg_tensor_release(g);
    return st;
}

/* mm's gradients: grad @ mat2^T and mat1^T @ grad, times alpha */
static sg_status mm_backward(sg_tensor *a, bool ta, sg_tensor *b, bool tb, sg_scalar alpha,
                             sg_tensor **ret) {
    sg_tensor *at = NULL, *bt = NULL, *p = NULL;
    sg_status st = SG_OK;
    if (ta) TRY(aten_t(a, &at));
    if (tb) TRY(aten_t(b, &bt));
    TRY(aten_mm(ta ? at : a, tb ? bt : b, &p));
    if (scalar_is(alpha, 1)) {
        *ret = p;
        p = NULL;
    } else {
        TRY(aten_mul_Scalar(p, alpha, ret));
    }
done:
    sg_tensor_release(at), sg_tensor_release(bt), sg_tensor_release(p);
    return st;
}

sg_status sg_agf_mm_mat1_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *mat2,
                                  sg_int_list sizes, sg_int_list strides, sg_layout layout,
                                  sg_scalar alpha, sg_tensor **ret) {
    (void)ks, (void)sizes, (void)strides, (void)layout;
    return mm_backward(grad, false, mat2, true, alpha, ret);
}

sg_status sg_agf_mm_mat2_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *mat1,
                                  sg_int_list sizes, sg_int_list strides, sg_layout layout,
                                  sg_scalar alpha, sg_tensor **ret) {
    (void)ks, (void)sizes, (void)strides, (void)layout;
    return mm_backward(mat1, true, grad, false, alpha, ret);
}

/* d(x^e)/dx = e x^(e-1), and 0 for e == 0 */
sg_status sg_agf_pow_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *self, sg_scalar exponent,
                              sg_tensor **ret) {
    (void)ks;
    if (scalar_is(exponent, 0)) return aten_zeros_like(self, NULL, NULL, NULL, NULL, NULL, ret);
    sg_tensor *p = NULL, *q = NULL;
    sg_status st;
    TRY(aten_pow_Tensor_Scalar(self, scalar_minus_one(exponent), &p));
    TRY(aten_mul_Scalar(p, exponent, &q));
    TRY(aten_mul_Tensor(grad, q, ret));
done:
    sg_tensor_release(p), sg_tensor_release(q);
    return st;
}

/* 1 - t, as t * -1 + 1 */
static sg_status one_minus(sg_tensor *t, sg_tensor **ret) {
    sg_tensor *n = NULL;
    sg_status st = aten_neg(t, &n);
    if (st == SG_OK) st = aten_add_Scalar(n, sg_scalar_int(1), sg_scalar_int(1), ret);
    sg_tensor_release(n);
    return st;
}

/* grad * y * (1 - y), y = sigmoid(x) */
sg_status sg_agf_sigmoid_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *y, sg_tensor **ret) {
    (void)ks;
    sg_tensor *a = NULL, *b = NULL;
    sg_status st;
    TRY(one_minus(y, &a));
    TRY(aten_mul_Tensor(y, a, &b));
    TRY(aten_mul_Tensor(grad, b, ret));
done:
    sg_tensor_release(a), sg_tensor_release(b);
    return st;
}

/* grad * (1 - y^2), y = tanh(x) */
sg_status sg_agf_tanh_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *y, sg_tensor **ret) {
    (void)ks;
    sg_tensor *a = NULL, *b = NULL;
    sg_status st;
    TRY(aten_mul_Tensor(y, y, &a));
    TRY(one_minus(a, &b));
    TRY(aten_mul_Tensor(grad, b, ret));
done:
    sg_tensor_release(a), sg_tensor_release(b);
    return st;
}

/* grad * s * (1 + x * (1 - s)), s = sigmoid(x) */
sg_status sg_agf_silu_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *x, sg_tensor **ret) {
    (void)ks;
    sg_tensor *s = NULL, *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    sg_status st;
    TRY(aten_sigmoid(x, &s));
    TRY(one_minus(s, &a));
    TRY(aten_mul_Tensor(x, a, &b));
    TRY(aten_add_Scalar(b, sg_scalar_int(1), sg_scalar_int(1), &c));
    TRY(aten_mul_Tensor(s, c, &d));
    TRY(aten_mul_Tensor(grad, d, ret));
done:
    sg_tensor_release(s), sg_tensor_release(a), sg_tensor_release(b);
    sg_tensor_release(c), sg_tensor_release(d);
    return st;
}

/* softmax's: y * (grad - sum(grad * y, dim)) */
sg_status sg_agf_softmax_backward_data(sg_keyset ks, sg_tensor *grad, sg_tensor *y, int64_t dim,
                                       sg_dtype input_dtype, sg_tensor **ret) {
    (void)ks, (void)input_dtype;
    sg_tensor *gy = NULL, *s = NULL, *ys = NULL;
    sg_status st;
    TRY(aten_mul_Tensor(grad, y, &gy));
    TRY(aten_sum_dim_IntList(gy, &(sg_int_list){&dim, 1}, true, NULL, &s));
    TRY(aten_mul_Tensor(y, s, &ys));
    TRY(aten_sub_Tensor(gy, ys, sg_scalar_int(1), ret));
done:
    sg_tensor_release(gy), sg_tensor_release(s), sg_tensor_release(ys);
    return st;
}

/* linear's gradients: with g and x flattened to 2-D over the leading dims, grad_input is
 * g @ weight (back to x's shape), grad_weight g^T @ x, grad_bias g summed over rows */
sg_status sg_agf_linear_backward(sg_keyset ks, sg_tensor *self, sg_tensor *grad,
                                 sg_tensor *weight, sg_bool_list mask, sg_tensor **gi,
                                 sg_tensor **gw, sg_tensor **gb) {
    (void)ks;
    if (mask.len != 3)
        return sg_error(SG_EINVAL, "autograd::linear_backward: output_mask has %d entries, not 3",
                        (int)mask.len);
    int64_t out = weight->sizes[0], in = weight->sizes[weight->ndim - 1];
    sg_tensor *g2 = NULL, *x2 = NULL, *p = NULL, *gt = NULL;
    sg_status st;
    TRY(aten_reshape(grad, (sg_int_list){(const int64_t[]){-1, out}, 2}, &g2));
    if (mask.items[0]) {
        TRY(aten_mm(g2, weight, &p));
        TRY(aten_reshape(p, (sg_int_list){self->sizes, self->ndim}, gi));
    }
    if (mask.items[1]) {
        TRY(aten_reshape(self, (sg_int_list){(const int64_t[]){-1, in}, 2}, &x2));
        TRY(aten_t(g2, &gt));
        TRY(aten_mm(gt, x2, gw));
    }
    if (mask.items[2])
        TRY(aten_sum_dim_IntList(g2, &(sg_int_list){(const int64_t[]){0}, 1}, false, NULL, gb));
done:
    sg_tensor_release(g2), sg_tensor_release(x2), sg_tensor_release(p), sg_tensor_release(gt);
    if (st != SG_OK) {
        sg_tensor_release(*gi), sg_tensor_release(*gw), sg_tensor_release(*gb);
        *gi = *gw = *gb = NULL;
    }
    return st;
}

sg_status sg_agf_scalar_tensor(sg_keyset ks, sg_scalar s, const sg_dtype *dtype,
                               const sg_layout *layout, const sg_device *device,
                               const bool *pin_memory, sg_tensor **ret) {
    (void)ks;
    return aten_full((sg_int_list){NULL, 0}, s, dtype, layout, device, pin_memory, ret);
}

sg_status sg_agf_mean_backward(sg_keyset ks, sg_tensor *grad, sg_int_list shape,
                               const sg_int_list *dim, int64_t numel, bool keepdim,
                               sg_tensor **ret) {
    sg_tensor *s = NULL;
    sg_status  st = sg_agf_sum_backward(ks, grad, shape, dim, keepdim, &s);
    if (st != SG_OK) return st;
    /* how many elements each result averaged: all of them, or the reduced dims' product */
    int64_t n = numel;
    if (dim && dim->len) {
        n = 1;
        for (int32_t i = 0; i < dim->len; i++) {
            int64_t d = dim->items[i] < 0 ? dim->items[i] + shape.len : dim->items[i];
            n *= shape.items[d]; /* in range: sum_backward checked it */
        }
    }
    st = aten_div_Scalar(s, sg_scalar_int(n), ret);
    sg_tensor_release(s);
    return st;
}

/* g with a dim of size 1 put back at each d < sizes.len where keep(d) and sizes[d] is 1 */
static sg_status unsqueeze_where(sg_tensor *g, sg_int_list sizes, const bool *keep,
                                 sg_tensor **ret) {
    sg_tensor *t = sg_tensor_retain(g), *u = NULL;
    sg_status st = SG_OK;
    for (int32_t d = 0; d < sizes.len && st == SG_OK; d++) {
        if (!keep[d] || sizes.items[d] != 1 || t->ndim >= sizes.len) continue;
        st = aten_unsqueeze(t, d, &u);
        sg_tensor_release(t);
        t = u, u = NULL;
    }
    if (st == SG_OK) *ret = t;
    else sg_tensor_release(t);
    return st;
}

static sg_status dims_of(const char *fn, sg_int_list sizes, const int64_t *dims, int32_t n,
                         bool *keep) {
    for (int32_t i = 0; i < n; i++) {
        int64_t d = dims[i] < 0 ? dims[i] + sizes.len : dims[i];
        if (d < 0 || d >= sizes.len)
            return sg_error(SG_EINVAL, "autograd::%s: dim %lld out of range for %d dims", fn,
                            (long long)dims[i], (int)sizes.len);
        keep[d] = true;
    }
    return SG_OK;
}

sg_status sg_agf_unsqueeze_to(sg_keyset ks, sg_tensor *self, sg_int_list sizes, sg_tensor **ret) {
    (void)ks;
    bool keep[SG_MAX_DIMS];
    for (int32_t d = 0; d < SG_MAX_DIMS; d++) keep[d] = true;
    return unsqueeze_where(self, sizes, keep, ret);
}

sg_status sg_agf_unsqueeze_to_dim(sg_keyset ks, sg_tensor *self, int64_t dim, sg_int_list sizes,
                                  sg_tensor **ret) {
    (void)ks;
    bool keep[SG_MAX_DIMS] = {false};
    sg_status st = dims_of("unsqueeze_to", sizes, &dim, 1, keep);
    return st == SG_OK ? unsqueeze_where(self, sizes, keep, ret) : st;
}

sg_status sg_agf_unsqueeze_to_dims(sg_keyset ks, sg_tensor *self, sg_int_list dims,
                                   sg_int_list sizes, sg_tensor **ret) {
    (void)ks;
    bool keep[SG_MAX_DIMS] = {false};
    sg_status st = dims_of("unsqueeze_to", sizes, dims.items, dims.len, keep);
    return st == SG_OK ? unsqueeze_where(self, sizes, keep, ret) : st;
}

/* zeros of the input's sizes, the gradient scattered along dim to where indices say */
sg_status sg_agf_value_selecting_reduction_backward(sg_keyset ks, sg_tensor *grad, int64_t dim,
                                                    sg_tensor *indices, sg_int_list sizes,
                                                    bool keepdim, sg_tensor **ret) {
    (void)ks;
    sg_tensor *g = NULL, *i = NULL, *z = NULL;
    sg_status st;
    int64_t d = dim < 0 ? dim + sizes.len : dim;
    if (keepdim || !sizes.len) {
        g = sg_tensor_retain(grad), i = sg_tensor_retain(indices);
    } else {
        TRY(aten_unsqueeze(grad, d, &g));
        TRY(aten_unsqueeze(indices, d, &i));
    }
    TRY(aten_zeros(sizes, &(sg_dtype){(sg_dtype)grad->dtype}, NULL, &grad->device, NULL, &z));
    TRY(aten_scatter_src(z, d, i, g, ret));
done:
    sg_tensor_release(g), sg_tensor_release(i), sg_tensor_release(z);
    return st;
}

sg_status sg_agf_slice_backward_wrapper(sg_keyset ks, sg_tensor *grad, sg_int_list input_sizes,
                                        int64_t dim, const int64_t *start, const int64_t *end,
                                        int64_t step, sg_tensor **ret) {
    (void)ks;
    sg_tensor *z = NULL, *part = NULL, *same = NULL;
    sg_status st;
    TRY(aten_zeros(input_sizes, &(sg_dtype){(sg_dtype)grad->dtype}, NULL, &grad->device, NULL,
                   &z));
    TRY(aten_slice_Tensor(z, dim, start, end, step, &part));
    TRY(aten_copy_(part, grad, false, &same));
    *ret = z;
    z = NULL;
done:
    sg_tensor_release(z), sg_tensor_release(part), sg_tensor_release(same);
    return st;
}
