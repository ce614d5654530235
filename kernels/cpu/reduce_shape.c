/* reduce_shape.c: the reductions' argument checks, dims and result shapes, one copy for the CPU
 * and CUDA kernels (sg_reduce_shape.h). */
#include "sg_reduce_shape.h"

#include "cpu.h"

/* ---- dims and shapes ------------------------------------------------------------------------- */

/* n == 0 (None or []) reduces every dim (sg_iter.h) */
sg_status sg_reduce_dims(const sg_tensor *t, const int64_t *dims, int32_t n, bool *mask) {
    bool seen[SG_MAX_DIMS] = {false};
    memset(mask, 0, SG_MAX_DIMS * sizeof *mask);
    if (n == 0) {
        for (int32_t d = 0; d < t->ndim; d++) mask[d] = true;
        return SG_OK;
    }
    for (int32_t i = 0; i < n; i++) {
        int64_t   d = dims[i];
        sg_status st = sg_check_wrap_dim(&d, t->ndim);
        if (st) return st;
        if (seen[d])
            return sg_error(SG_EINVAL, "dim %lld appears multiple times in the list of dims",
                            (long long)d);
        seen[d] = true;
        if (t->ndim) mask[d] = true;
    }
    return SG_OK;
}

sg_status sg_reduce_dims_list(const sg_tensor *t, const sg_int_list *l, sg_rdims *r) {
    return sg_reduce_dims(t, l ? l->items : NULL, l ? l->len : 0, r->mask);
}

void sg_reduce_dims_one(const sg_tensor *t, int64_t dim, sg_rdims *r) {
    memset(r->mask, 0, sizeof r->mask);
    if (t->ndim) r->mask[dim] = true;
}

void sg_reduce_shape(const sg_tensor *t, const sg_rdims *r, bool keepdim, int64_t *sizes,
                     int32_t *n) {
    *n = 0;
    for (int32_t d = 0; d < t->ndim; d++)
        if (!r->mask[d]) sizes[(*n)++] = t->sizes[d];
        else if (keepdim) sizes[(*n)++] = 1;
}

sg_status sg_reduce_shape_out(sg_tensor *out, const sg_tensor *self, const sg_rdims *r,
                              bool keepdim) {
    int64_t sizes[SG_MAX_DIMS];
    int32_t n;
    sg_reduce_shape(self, r, keepdim, sizes, &n);
    return sg_tensor_resize_out_(out, sizes, n);
}

sg_status sg_reduce_new_result(const sg_tensor *self, const sg_rdims *r, bool keepdim,
                               sg_dtype dtype, sg_device dev, sg_tensor **out) {
    int64_t sizes[SG_MAX_DIMS];
    int32_t n;
    sg_reduce_shape(self, r, keepdim, sizes, &n);
    return sg_tensor_empty(sizes, n, dtype, dev, out);
}

sg_status sg_reduce_keepdim_view(sg_tensor *t, const sg_rdims *r, int32_t ndim, bool keepdim,
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

sg_dtype sg_reduce_int_to_long(sg_dtype t) {
    return sg_dtype_is_integral(t, true) ? SG_INT64 : t;
}

/* ---- results --------------------------------------------------------------------------------- */

sg_status sg_reduce_give(sg_status st, sg_tensor *out, sg_tensor **ret) {
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

sg_status sg_reduce_give_new(sg_status st, sg_tensor *out, sg_tensor **ret) {
    if (st) sg_tensor_release(out), out = NULL;
    *ret = out;
    return st;
}

/* ---- checks ---------------------------------------------------------------------------------- */

sg_status sg_reduce_no_complex(const char *op, const sg_tensor *t) {
    return sg_dtype_is_complex(dtype_of(t)) ? sg_not_implemented(op, dtype_of(t)) : SG_OK;
}

sg_status sg_reduce_check_nonempty(const char *fn, const sg_tensor *self, const int64_t *dims,
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
        sg_status st = sg_check_wrap_dim(&w, self->ndim);
        if (st) return st;
        if (self->sizes[w] == 0)
            return sg_error(SG_EINVAL, "%s: Expected reduction dim %lld to have non-zero size.", fn,
                            (long long)d);
    }
    return SG_OK;
}

sg_status sg_reduce_sum_args(const sg_tensor *self, const sg_int_list *dim,
                             const sg_dtype *dtype, const sg_tensor *out, sg_rdims *r) {
    sg_status st = sg_reduce_dims_list(self, dim, r);
    if (!st && dtype) st = sg_check_out_dtype(out, *dtype);
    return st;
}

sg_status sg_reduce_mean_dtype(const sg_tensor *self, const sg_dtype *dtype) {
    sg_dtype in = dtype ? *dtype : sg_reduce_int_to_long(dtype_of(self));
    if (sg_dtype_is_floating(in) || sg_dtype_is_complex(in)) return SG_OK;
    return sg_error(SG_EINVAL, "mean(): could not infer output dtype. %s dtype must be either a "
                               "floating point or complex dtype. Got: %s",
                    dtype ? "Optional" : "Input",
                    sg_dtype_c10_name(dtype ? *dtype : dtype_of(self)));
}

sg_status sg_reduce_mean_args(const sg_tensor *self, const sg_int_list *dim,
                              const sg_dtype *dtype, const sg_tensor *out, sg_rdims *r) {
    sg_status st = sg_reduce_mean_dtype(self, dtype);
    if (!st) st = sg_reduce_sum_args(self, dim, dtype, out, r);
    if (!st && !sg_dtype_is_floating(dtype_of(out)) && !sg_dtype_is_complex(dtype_of(out)))
        st = sg_error(SG_EINVAL, "mean(): result type Float can't be cast to the desired output "
                                 "type %s",
                      sg_dtype_c10_name(dtype_of(out)));
    return st;
}

sg_status sg_reduce_prod_args(const sg_tensor *self, int64_t *dim, const sg_dtype *dtype,
                              const sg_tensor *out, sg_rdims *r) {
    sg_status st = sg_check_wrap_dim(dim, self->ndim);
    if (!st && dtype) st = sg_check_out_dtype(out, *dtype);
    if (!st) sg_reduce_dims_one(self, *dim, r);
    return st;
}

sg_status sg_reduce_amax_args(const char *fn, const sg_tensor *self, sg_int_list dim,
                              const sg_tensor *out, sg_rdims *r) {
    if (dtype_of(out) != dtype_of(self))
        return sg_error(SG_EINVAL, "Expected the dtype for input and out to match, but got %s for "
                                   "input's dtype and %s for out's dtype.",
                        sg_dtype_c10_name(dtype_of(self)), sg_dtype_c10_name(dtype_of(out)));
    sg_status st = sg_reduce_dims_list(self, &dim, r);
    return st ? st : sg_reduce_check_nonempty(fn, self, dim.items, dim.len);
}

sg_status sg_reduce_all_args(const char *fn, const sg_tensor *self, const sg_tensor *out,
                             sg_rdims *r) {
    sg_status st = SG_OK;
    if (!sg_dtype_can_cast(dtype_of(self), dtype_of(out)))
        st = sg_error(SG_EINVAL, "%s: result type %s can't be cast to the desired output type %s",
                      fn, sg_dtype_c10_name(dtype_of(self)), sg_dtype_c10_name(dtype_of(out)));
    return st ? st : sg_reduce_dims_list(self, NULL, r);
}

sg_status sg_reduce_dim_check(const char *fn, const sg_tensor *self, int64_t *dim) {
    sg_status st = sg_check_wrap_dim(dim, self->ndim);
    return st ? st : sg_reduce_check_nonempty(fn, self, dim, 1);
}

sg_status sg_reduce_max_dim_args(const char *fn, const sg_tensor *self, int64_t dim,
                                 const sg_tensor *values, const sg_tensor *indices, sg_rdims *r) {
    sg_status st = sg_reduce_dim_check(fn, self, &dim);
    if (!st) st = sg_check_out_dtype(values, dtype_of(self));
    if (!st) st = sg_check_out_dtype(indices, SG_INT64);
    if (!st) sg_reduce_dims_one(self, dim, r);
    return st;
}

sg_status sg_reduce_arg_dims(const char *fn, const sg_tensor *self, const int64_t *dim,
                             sg_rdims *r) {
    if (!dim) {
        if (sg_tensor_numel(self) == 0)
            return sg_error(SG_EINVAL, "%s: Expected reduction dim to be specified for "
                                       "input.numel() == 0.",
                            fn);
        return sg_reduce_dims_list(self, NULL, r);
    }
    int64_t   d = *dim;
    sg_status st = sg_reduce_dim_check(fn, self, &d);
    if (!st) sg_reduce_dims_one(self, d, r);
    return st;
}

sg_status sg_reduce_argmax_args(const char *fn, const char *kernel, const sg_tensor *self,
                                const int64_t *dim, const sg_tensor *out, sg_rdims *r) {
    sg_status st = sg_reduce_arg_dims(fn, self, dim, r);
    if (!st) st = sg_check_out_dtype(out, SG_INT64);
    if (!st && dtype_of(self) == SG_BOOL) st = sg_not_implemented(kernel, SG_BOOL);
    return st;
}

sg_status sg_reduce_arg_prepare(const char *op, sg_tensor *self, const sg_rdims *r, bool keepdim,
                                sg_tensor *values, sg_tensor *indices, sg_tensor **x) {
    sg_status st;
    *x = NULL;
    if ((st = sg_reduce_no_complex(op, self))) return st;
    if ((st = sg_reduce_shape_out(indices, self, r, keepdim))) return st;
    if (values && (st = sg_reduce_shape_out(values, self, r, keepdim))) return st;
    int32_t nred = 0;
    for (int32_t d = 0; d < self->ndim; d++) nred += r->mask[d] && self->sizes[d] != 1;
    if (nred > 1 && !sg_tensor_is_contiguous(self)) return sg_tensor_contiguous(self, x);
    *x = sg_tensor_retain(self);
    return SG_OK;
}

sg_status sg_reduce_var_args(const char *op, const sg_tensor *self, const sg_int_list *dim,
                             bool keepdim, sg_tensor *out, sg_rdims *r) {
    sg_status st;
    sg_dtype  t = dtype_of(self);
    if (!sg_dtype_is_floating(t) && !sg_dtype_is_complex(t))
        return sg_error(SG_EINVAL, "std and var only support floating point and complex dtypes");
    if ((st = sg_reduce_no_complex(op, self)) || (st = sg_reduce_dims_list(self, dim, r)))
        return st;
    if (!sg_dtype_can_cast(t, dtype_of(out)))
        return sg_error(SG_EINVAL, "result type %s can't be cast to the desired output type %s",
                        sg_dtype_c10_name(t), sg_dtype_c10_name(dtype_of(out)));
    return sg_reduce_shape_out(out, self, r, keepdim);
}

sg_status sg_reduce_lse_args(const sg_tensor *self, sg_int_list dim, bool keepdim,
                             sg_tensor *out, sg_rdims *r) {
    sg_status st;
    if (!sg_dtype_is_floating(dtype_of(out)))
        return sg_error(SG_EINVAL, "logsumexp(): Expected floating point type for result tensor, "
                                   "but got: %s",
                        sg_dtype_c10_name(dtype_of(out)));
    if ((st = sg_reduce_no_complex("logsumexp", self)) ||
        (st = sg_reduce_dims_list(self, &dim, r)))
        return st;
    /* Rationale: aten adds the max, kept over the reduced dims and squeezed over the dims
     * given, to the sum: with no dims given (all reduced) and keepdim false that max keeps
     * self's rank, and the in-place add cannot broadcast it into the 0-d sum. */
    if (!dim.len && !keepdim && self->ndim > 0 && sg_tensor_numel(self) != 0) {
        char    b[160];
        int64_t ones[SG_MAX_DIMS];
        for (int32_t i = 0; i < self->ndim; i++) ones[i] = 1;
        return sg_error(SG_EINVAL, "logsumexp: output with shape [] doesn't match the broadcast "
                                   "shape %s",
                        sg_shape_str(ones, self->ndim, b, sizeof b));
    }
    return sg_reduce_shape_out(out, self, r, keepdim);
}

sg_status sg_reduce_cumsum_args(const sg_tensor *self, int64_t *dim, const sg_dtype *dtype,
                                const sg_tensor *out, bool inplace) {
    sg_status st = sg_check_wrap_dim(dim, self->ndim);
    if (!st && dtype) st = sg_check_out_dtype(out, *dtype);
    if (!st && inplace && !sg_tensor_writable(self))
        st = sg_error(SG_EREADONLY, "cumsum_: the tensor is read-only");
    return st;
}

sg_status sg_reduce_lines(const sg_tensor *self, int64_t dim, sg_tensor *out, int64_t *outer,
                          int64_t *len, int64_t *inner) {
    sg_status st = sg_tensor_resize_out_(out, self->sizes, self->ndim);
    if (st) return st;
    *outer = 1, *len = 1, *inner = 1;
    for (int32_t d = 0; d < self->ndim; d++) {
        if (d < dim) *outer *= self->sizes[d];
        else if (d == dim) *len = self->sizes[d];
        else *inner *= self->sizes[d];
    }
    return SG_OK;
}
