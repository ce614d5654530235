/* helpers_reduce.c: the backward helpers of reductions (schemas/autograd.yaml): logsumexp,
 * amax/amin (restore_reduced_dims, scale_grad_by_count), max()/min() of all
 * (evenly_distribute_backward), var, std, prod, cumsum. Aten calls only, so they run on any
 * device. A dim list that is empty reduces every dim, as the forward ops read it. */
#include "helpers_util.h"

#include <math.h>
#include <string.h>

/* marks[d] for each of dims wrapped against nd; an error for one out of range or repeated */
static sg_status mark_dims(const char *fn, sg_int_list dims, int64_t nd, bool *marks) {
    memset(marks, 0, SG_MAX_DIMS * sizeof *marks);
    if (nd > SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "autograd::%s: %lld dims, more than %d", fn, (long long)nd,
                        SG_MAX_DIMS);
    for (int32_t i = 0; i < dims.len; i++) {
        int64_t d = 0;
        sg_status st = agf_wrap_dim(fn, dims.items[i], nd, &d);
        if (st != SG_OK) return st;
        if (marks[d])
            return sg_error(SG_EINVAL, "autograd::%s: dim %lld appears twice in the list", fn,
                            (long long)d);
        marks[d] = true;
    }
    return SG_OK;
}

sg_status sg_agf_unsqueeze_multiple(const char *fn, sg_tensor *g, sg_int_list dims, int64_t nd,
                                    sg_tensor **ret) {
    bool marks[SG_MAX_DIMS];
    sg_status st = mark_dims(fn, dims, nd, marks);
    if (st != SG_OK) return st;
    sg_tensor *t = sg_tensor_retain(g), *u = NULL;
    for (int64_t d = 0; d < nd && st == SG_OK; d++) {
        if (!marks[d]) continue;
        st = aten_unsqueeze(t, d, &u);
        sg_tensor_release(t);
        t = u, u = NULL;
    }
    if (st == SG_OK) *ret = t;
    else sg_tensor_release(t);
    return st;
}

/* grad * exp(self - result), the reduced dims put back */
sg_status sg_agf_logsumexp_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *self,
                                    sg_tensor *result, sg_int_list dim, bool keepdim,
                                    sg_tensor **ret) {
    (void)ks;
    sg_tensor *g = NULL, *r = NULL, *d = NULL, *e = NULL;
    sg_status st = agf_real("logsumexp_backward", self);
    if (st != SG_OK) return st;
    if (!keepdim && self->ndim && dim.len) {
        TRY(sg_agf_unsqueeze_multiple("logsumexp_backward", grad, dim, self->ndim, &g));
        TRY(sg_agf_unsqueeze_multiple("logsumexp_backward", result, dim, self->ndim, &r));
    } else {
        g = sg_tensor_retain(grad), r = sg_tensor_retain(result);
    }
    TRY(aten_sub_Tensor(self, r, sg_scalar_int(1), &d));
    TRY(aten_exp(d, &e));
    TRY(aten_mul_Tensor(g, e, ret));
done:
    RELEASE(g, r, d, e);
    return st;
}

sg_status sg_agf_restore_reduced_dims(sg_keyset ks, sg_tensor *output, sg_int_list dims,
                                      bool keepdim, sg_tensor **ret) {
    (void)ks;
    if (keepdim || !dims.len) {
        *ret = sg_tensor_retain(output);
        return SG_OK;
    }
    return sg_agf_unsqueeze_multiple("restore_reduced_dims", output, dims,
                                     output->ndim + dims.len, ret);
}

/* (grad / count) * mask, count how many are set over dims (all for none), as aten's: a slice
 * with none set (amax of a NaN slice: no element equals it) gets 0 / 0 * 0, NaN */
sg_status sg_agf_scale_grad_by_count(sg_keyset ks, sg_tensor *grad, sg_tensor *mask,
                                     sg_int_list dims, sg_tensor **ret) {
    (void)ks;
    sg_tensor *n = NULL, *q = NULL;
    sg_dtype dt = (sg_dtype)grad->dtype;
    sg_status st;
    TRY(aten_sum_dim_IntList(mask, dims.len ? &dims : NULL, true, &dt, &n));
    TRY(aten_div_Tensor(grad, n, &q));
    TRY(aten_mul_Tensor(q, mask, ret));
done:
    RELEASE(n, q);
    return st;
}

/* grad shared among the elements of input equal to value (NaN equal to NaN) */
sg_status sg_agf_evenly_distribute_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *input,
                                            sg_tensor *value, sg_tensor **ret) {
    (void)ks;
    sg_tensor *eq = NULL, *a = NULL, *b = NULL, *nn = NULL, *m = NULL, *n = NULL, *q = NULL;
    sg_dtype dt = (sg_dtype)grad->dtype;
    sg_status st;
    TRY(aten_eq_Tensor(input, value, &eq));
    TRY(aten_ne_Tensor(input, input, &a));
    TRY(aten_ne_Tensor(value, value, &b));
    TRY(aten_logical_and(a, b, &nn));
    TRY(aten_logical_or(eq, nn, &m));
    TRY(aten_sum_dim_IntList(m, NULL, false, &dt, &n));
    TRY(aten_div_Tensor(grad, n, &q));
    TRY(aten_where_ScalarOther(m, q, sg_scalar_int(0), ret));
done:
    RELEASE(eq, a, b, nn, m, n, q);
    return st;
}

/* var's: 2 / (n - correction) * grad * (self - mean(self)), n the elements each result
 * reduced; NaN where n - correction <= 0 */
sg_status sg_agf_var_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *self,
                              const sg_int_list *dim, const sg_scalar *correction, bool keepdim,
                              sg_tensor **ret) {
    (void)ks;
    if (correction && correction->kind == SG_SCALAR_COMPLEX)
        return sg_error(SG_EINVAL, "autograd::var_backward: a complex correction");
    sg_status st = agf_real("var_backward", self);
    if (st != SG_OK) return st;
    double corr = correction ? sg_scalar_to_double(*correction) : 1;
    bool all = !self->ndim || !dim || !dim->len;
    sg_tensor *g = NULL, *m = NULL, *xm = NULL, *p = NULL;
    double n = 1;
    if (all) {
        n = (double)sg_tensor_numel(self);
        g = sg_tensor_retain(grad);
        TRY(aten_mean_dim(self, NULL, true, NULL, &m));
    } else {
        bool marks[SG_MAX_DIMS];
        TRY(mark_dims("var_backward", *dim, self->ndim, marks));
        for (int32_t d = 0; d < self->ndim; d++)
            if (marks[d]) n *= (double)self->sizes[d];
        if (!keepdim && self->ndim > 1)
            TRY(sg_agf_unsqueeze_multiple("var_backward", grad, *dim, self->ndim, &g));
        else
            g = sg_tensor_retain(grad);
        TRY(aten_mean_dim(self, dim, true, NULL, &m));
    }
    double dof = n - corr;
    TRY(aten_sub_Tensor(self, m, sg_scalar_int(1), &xm));
    TRY(aten_mul_Tensor(g, xm, &p));
    TRY(aten_mul_Scalar(p, sg_scalar_float(dof > 0 ? 2 / dof : NAN), ret));
done:
    RELEASE(g, m, xm, p);
    return st;
}

/* std's: var's with grad / (2 std), 0 where std is 0 */
sg_status sg_agf_std_backward(sg_keyset ks, sg_tensor *result, sg_tensor *grad,
                              sg_tensor *self, const sg_int_list *dim,
                              const sg_scalar *correction, bool keepdim, sg_tensor **ret) {
    sg_tensor *r2 = NULL, *q = NULL, *z = NULL, *gv = NULL;
    sg_status st;
    TRY(aten_mul_Scalar(result, sg_scalar_int(2), &r2));
    TRY(aten_div_Tensor(grad, r2, &q));
    TRY(aten_eq_Scalar(result, sg_scalar_int(0), &z));
    TRY(aten_masked_fill_Scalar(q, z, sg_scalar_int(0), &gv));
    TRY(sg_agf_var_backward(ks, gv, self, dim, correction, keepdim, ret));
done:
    RELEASE(r2, q, z, gv);
    return st;
}

/* t shifted by s along dim (0 < s < its size L there), the s places it leaves holding 1:
 * toward the end (up) or toward the start */
static sg_status shift_ones(sg_tensor *t, int64_t dim, int64_t s, bool up, sg_tensor **ret) {
    int64_t    L = t->sizes[dim], a = up ? 0 : s, b = up ? L - s : L, shape[SG_MAX_DIMS];
    sg_tensor *ones = NULL, *part = NULL;
    sg_status  st;
    memcpy(shape, t->sizes, (size_t)t->ndim * sizeof *shape);
    shape[dim] = s;
    TRY(aten_ones((sg_int_list){shape, t->ndim}, &(sg_dtype){(sg_dtype)t->dtype}, NULL,
                  &t->device, NULL, &ones));
    TRY(aten_slice_Tensor(t, dim, &a, &b, 1, &part));
    {
        sg_tensor *items[2] = {up ? ones : part, up ? part : ones};
        TRY(aten_cat((sg_tensor_list){items, 2}, dim, ret));
    }
done:
    RELEASE(ones, part);
    return st;
}

/* For each element, the product of the others along dim: the exclusive prefix times the
 * exclusive suffix product (aten's prod_safe_zeros_backward), each an inclusive scan by
 * doubling (log2 of the size steps) shifted by one. No division, so a zero beside an inf or a
 * NaN gives NaN, as aten's does. */
static sg_status others_prod(sg_tensor *x, int64_t dim, sg_tensor **ret) {
    int64_t    L = x->sizes[dim];
    sg_tensor *scan[2] = {NULL, NULL}, *t = NULL, *u = NULL;
    sg_status  st = SG_OK;
    if (L <= 1) return aten_ones_like(x, NULL, NULL, NULL, NULL, NULL, ret);
    for (int k = 0; k < 2; k++) {
        scan[k] = sg_tensor_retain(x);
        for (int64_t s = 1; s < L; s *= 2) {
            TRY(shift_ones(scan[k], dim, s, k == 0, &t));
            TRY(aten_mul_Tensor(scan[k], t, &u));
            RELEASE(scan[k], t), scan[k] = u, t = u = NULL;
        }
        TRY(shift_ones(scan[k], dim, 1, k == 0, &t));
        sg_tensor_release(scan[k]), scan[k] = t, t = NULL;
    }
    TRY(aten_mul_Tensor(scan[0], scan[1], ret));
done:
    RELEASE(scan[0], scan[1], t, u);
    return st;
}

/* prod's along dim, g with dim kept, as aten's prod_backward: where the whole input holds no
 * zero, g * prod / x; else g times the product of the others (others_prod); for the product
 * of all (all), zeros where it holds more than one zero. Chosen element by element from both,
 * so that no count is read back from the device. */
static sg_status prod_along(sg_tensor *g, sg_tensor *x, int64_t dim, bool all, sg_tensor **ret) {
    sg_tensor *z = NULL, *nz = NULL, *p = NULL, *q = NULL, *a = NULL, *o = NULL, *b = NULL;
    sg_tensor *c0 = NULL, *c1 = NULL, *t = NULL;
    sg_status  st;
    TRY(agf_real("prod_backward", x));
    TRY(aten_eq_Scalar(x, sg_scalar_int(0), &z));
    TRY(aten_sum(z, &(sg_dtype){SG_INT64}, &nz));
    TRY(aten_prod_dim_int(x, dim, true, NULL, &p));
    TRY(aten_div_Tensor(p, x, &q));
    TRY(aten_mul_Tensor(g, q, &a));
    TRY(others_prod(x, dim, &o));
    TRY(aten_mul_Tensor(g, o, &b));
    if (all) {
        TRY(aten_gt_Scalar(nz, sg_scalar_int(1), &c1));
        TRY(aten_where_ScalarSelf(c1, sg_scalar_int(0), b, &t));
        sg_tensor_release(b), b = t, t = NULL;
    }
    TRY(aten_eq_Scalar(nz, sg_scalar_int(0), &c0));
    TRY(aten_where_self(c0, a, b, ret));
done:
    RELEASE(z, nz, p, q, a, o, b, c0, c1, t);
    return st;
}

sg_status sg_agf_prod_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *input,
                               sg_tensor *result, sg_tensor **ret) {
    (void)ks, (void)result;
    if (!input->ndim) {
        *ret = sg_tensor_retain(grad);
        return SG_OK;
    }
    const int64_t one = 1, n = sg_tensor_numel(input);
    sg_tensor *x = NULL, *g = NULL, *r = NULL;
    sg_status st;
    TRY(aten_reshape(input, (sg_int_list){&n, 1}, &x));
    TRY(aten_reshape(grad, (sg_int_list){&one, 1}, &g));
    TRY(prod_along(g, x, 0, true, &r));
    TRY(aten_reshape(r, (sg_int_list){input->sizes, input->ndim}, ret));
done:
    RELEASE(x, g, r);
    return st;
}

sg_status sg_agf_prod_backward_dim(sg_keyset ks, sg_tensor *grad, sg_tensor *input,
                                   sg_tensor *result, int64_t dim, bool keepdim,
                                   sg_tensor **ret) {
    (void)ks, (void)result;
    if (!input->ndim) {
        *ret = sg_tensor_retain(grad);
        return SG_OK;
    }
    int64_t d = 0;
    sg_tensor *g = NULL;
    sg_status st;
    TRY(agf_wrap_dim("prod_backward", dim, input->ndim, &d));
    if (keepdim) g = sg_tensor_retain(grad);
    else TRY(aten_unsqueeze(grad, d, &g));
    TRY(prod_along(g, input, d, false, ret));
done:
    RELEASE(g);
    return st;
}

/* the sum of grad from each index to the end of dim: sum - cumsum + grad */
sg_status sg_agf_cumsum_backward(sg_keyset ks, sg_tensor *grad, int64_t dim, sg_tensor **ret) {
    (void)ks;
    int64_t d = 0;
    sg_status st = agf_wrap_dim("cumsum_backward", dim, grad->ndim, &d);
    if (st != SG_OK) return st;
    if (sg_tensor_numel(grad) <= 1 || !grad->ndim || grad->sizes[d] == 1) {
        *ret = sg_tensor_retain(grad);
        return SG_OK;
    }
    sg_tensor *s = NULL, *c = NULL, *a = NULL;
    TRY(aten_sum_dim_IntList(grad, &(sg_int_list){&d, 1}, true, NULL, &s));
    TRY(aten_cumsum(grad, d, NULL, &c));
    TRY(aten_sub_Tensor(s, c, sg_scalar_int(1), &a));
    TRY(aten_add_Tensor(a, grad, sg_scalar_int(1), ret));
done:
    RELEASE(s, c, a);
    return st;
}
