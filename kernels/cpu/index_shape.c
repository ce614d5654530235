/* index_shape.c: the indexing, joining and selection ops' checks and result shapes, one copy
 * for the CPU and CUDA kernels (sg_index_shape.h). */
#include "sg_index_shape.h"

#include "cpu.h"

#include <float.h>
#include <math.h>

static sg_dtype dt(const sg_tensor *t) { return (sg_dtype)t->dtype; }


sg_status sg_index_no_overlap(const char *op, const sg_tensor *out, const sg_tensor *in) {
    if (!sg_may_overlap(out, in)) return SG_OK;
    return sg_error(SG_EINVAL, "%s: unsupported operation: some elements of the input tensor "
                               "and the written-to tensor refer to a single memory location. "
                               "Please clone() the tensor before performing the operation.",
                    op);
}

sg_status sg_index_no_internal_overlap(const char *op, const sg_tensor *t) {
    if (!sg_tensor_overlaps(t)) return SG_OK;
    return sg_error(SG_EINVAL, "%s: unsupported operation: more than one element of the "
                               "written-to tensor refers to a single memory location. Please "
                               "clone() the tensor before performing the operation.",
                    op);
}

sg_status sg_index_out_ready(const char *op, sg_tensor *out, const sg_meta *m, bool exact) {
    sg_status st;
    if (exact && dt(out) != m->dtype)
        return sg_error(SG_EINVAL, "%s: Expected out tensor to have dtype %s, but got %s instead",
                        op, sg_dtype_name(m->dtype), sg_dtype_name(dt(out)));
    if (!sg_dtype_can_cast(m->dtype, dt(out)))
        return sg_error(SG_EINVAL, "%s: result type %s can't be cast to the desired output type "
                                   "%s",
                        op, sg_dtype_c10_name(m->dtype), sg_dtype_c10_name(dt(out)));
    /* a resized out= takes the layout the op gives a new result */
    if ((st = sg_tensor_resize_out_strided_(out, m->sizes, m->strided ? m->strides : NULL,
                                            m->ndim)))
        return st;
    return sg_index_no_internal_overlap(op, out);
}

void sg_index_meta_of(sg_meta *m, const int64_t *sizes, int32_t n, sg_dtype t, sg_device d) {
    m->ndim = n;
    memcpy(m->sizes, sizes, (size_t)n * sizeof *sizes);
    m->dtype = t;
    m->device = d;
    m->strided = false;
}


sg_status sg_index_scalar_bytes(const char *op, sg_scalar v, sg_dtype t, void *buf) {
    if (sg_scalar_overflows(v, t))
        return sg_error(SG_EINVAL, "%s: value cannot be converted to type %s without overflow",
                        op, sg_cpp_type_name(t));
    sg_tensor *s = NULL, *c = NULL;
    sg_status  st = sg_scalar_tensor(v, &s);
    if (!st) st = sg_cast(s, t, &c);
    if (!st) memcpy(buf, sg_tensor_data(c), sg_dtype_size(t));
    sg_tensor_release(c);
    sg_tensor_release(s);
    return st;
}

sg_status sg_index_reduce_of(const char *reduce, int *mode) {
    if (!reduce) *mode = 0;
    else if (strcmp(reduce, "add") == 0) *mode = 1;
    else if (strcmp(reduce, "multiply") == 0) *mode = 2;
    else return sg_error(SG_EINVAL, "scatter: reduce argument must be either add or multiply.");
    return SG_OK;
}

sg_status sg_index_stack_check(sg_tensor_list ts, int64_t *dim) {
    char      a[160], b[160];
    sg_status st;
    if (ts.len == 0) return sg_error(SG_EINVAL, "stack: stack expects a non-empty TensorList");
    for (int32_t i = 0; i < ts.len; i++)
        if (!ts.items[i]) return sg_error(SG_EINVAL, "stack: tensor %d is None", i);
    if ((st = sg_check_dim("stack", dim, (int64_t)ts.items[0]->ndim + 1))) return st;
    for (int32_t i = 1; i < ts.len; i++) {
        const sg_tensor *t = ts.items[i], *t0 = ts.items[0];
        bool             same = t->ndim == t0->ndim;
        for (int32_t d = 0; same && d < t->ndim; d++) same = t->sizes[d] == t0->sizes[d];
        if (!same)
            return sg_error(SG_EINVAL, "stack: stack expects each tensor to be equal size, but got "
                                       "%s at entry 0 and %s at entry %d",
                            sg_shape_str(t0->sizes, t0->ndim, a, sizeof a),
                            sg_shape_str(t->sizes, t->ndim, b, sizeof b), i);
    }
    return SG_OK;
}

sg_status sg_index_select_check(const char *op, const sg_tensor *self, int64_t *dim,
                                const sg_tensor *index, const sg_tensor *out, sg_meta *m) {
    int64_t   numel = sg_tensor_numel(index);
    sg_status st = sg_check_dim(op, dim, self->ndim);
    if (st) return st;
    if (index->ndim > 1)
        return sg_error(SG_EINVAL, "%s: index_select(): Index is supposed to be a vector", op);
    if (self->ndim == 0 && numel != 1)
        return sg_error(SG_EINVAL, "%s: index_select(): Index to scalar can have only 1 value, got "
                                   "%lld value(s)",
                        op, (long long)numel);
    if (dt(index) != SG_INT64 && dt(index) != SG_INT32)
        return sg_error(SG_EINVAL, "%s: index_select(): Expected dtype int32 or int64 for index",
                        op);
    if (out && dt(out) != dt(self))
        return sg_error(SG_EINVAL, "%s: index_select(): self and result must have the same scalar "
                                   "type",
                        op);
    sg_index_meta_of(m, self->sizes, self->ndim, dt(self), self->device);
    if (self->ndim > 0) m->sizes[*dim] = numel;
    return SG_OK;
}

sg_status sg_index_embedding_check(const sg_tensor *weight, const sg_tensor *indices) {
    if (weight->ndim != 2) return sg_error(SG_EINVAL, "embedding: 'weight' must be 2-D");
    if (dt(indices) != SG_INT64 && dt(indices) != SG_INT32)
        return sg_error(SG_EINVAL, "embedding: Expected tensor for argument #1 'indices' to have "
                                   "one of the following scalar types: Long, Int; but got "
                                   "torch.%sTensor instead (while checking arguments for "
                                   "embedding)",
                        sg_dtype_c10_name(dt(indices)));
    if (indices->ndim + 1 > SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "embedding: too many dimensions");
    return SG_OK;
}

sg_status sg_index_clamp_type(const sg_tensor *self, const sg_scalar *lo, const sg_scalar *hi,
                              sg_dtype *r) {
    *r = dt(self);
    if (sg_dtype_is_complex(*r) || (lo && lo->kind == SG_SCALAR_COMPLEX) ||
        (hi && hi->kind == SG_SCALAR_COMPLEX))
        return sg_error(SG_EINVAL, "clamp: clamp is not supported for complex types");
    if (!sg_dtype_is_floating(*r)) {
        sg_result_type rt;
        sg_rt_init(&rt);
        sg_rt_tensor(&rt, self);
        if (lo) sg_rt_scalar(&rt, *lo);
        if (hi) sg_rt_scalar(&rt, *hi);
        *r = sg_rt_result(&rt);
    }
    return SG_OK;
}

sg_status sg_index_clamp_shape(const char *op, const sg_tensor *self, const sg_tensor *lo,
                               const sg_tensor *hi, int64_t *shape, int32_t *n) {
    char a[160], b[160];
    if (!lo && !hi)
        return sg_error(SG_EINVAL, "%s: torch.clamp: At least one of 'min' or 'max' must not be "
                                   "None",
                        op);
    if (sg_dtype_is_complex(dt(self)))
        return sg_error(SG_EINVAL, "%s: clamp is not supported for complex types", op);
    *n = self->ndim;
    memcpy(shape, self->sizes, (size_t)*n * sizeof *shape);
    const sg_tensor *bs[2] = {lo, hi};
    int64_t          prev[SG_MAX_DIMS]; /* sg_broadcast_shape's out may not alias an input */
    for (int i = 0; i < 2; i++)
        if (bs[i] && (memcpy(prev, shape, (size_t)*n * sizeof *prev),
                      !sg_broadcast_shape(prev, *n, bs[i]->sizes, bs[i]->ndim, shape, n)))
            return sg_error(SG_EINVAL, "%s: the size of tensor a %s must match the size of tensor "
                                       "b %s at a non-singleton dimension",
                            op, sg_shape_str(self->sizes, self->ndim, a, sizeof a),
                            sg_shape_str(bs[i]->sizes, bs[i]->ndim, b, sizeof b));
    return SG_OK;
}

sg_status sg_index_masked_fill_shape(const sg_tensor *self, const sg_tensor *mask, int64_t *shape,
                                     int32_t *n) {
    char a[160], b[160];
    if (!sg_broadcast_shape(self->sizes, self->ndim, mask->sizes, mask->ndim, shape, n))
        return sg_error(SG_EINVAL, "masked_fill: the size of tensor a %s must match the size of "
                                   "tensor b %s at a non-singleton dimension",
                        sg_shape_str(self->sizes, self->ndim, a, sizeof a),
                        sg_shape_str(mask->sizes, mask->ndim, b, sizeof b));
    return SG_OK;
}

sg_status sg_index_masked_fill_check(const sg_tensor *self, const sg_tensor *mask) {
    char    a[160], b[160];
    int64_t shape[SG_MAX_DIMS];
    int32_t n;
    if (dt(mask) != SG_BOOL)
        return sg_error(SG_EINVAL, "masked_fill_: masked_fill_ only supports boolean masks, but "
                                   "got mask with dtype %s",
                        sg_dtype_name(dt(mask)));
    bool same = sg_broadcast_shape(self->sizes, self->ndim, mask->sizes, mask->ndim, shape, &n) &&
                n == self->ndim;
    for (int32_t i = 0; same && i < n; i++) same = shape[i] == self->sizes[i];
    if (!same)
        return sg_error(SG_EINVAL, "masked_fill_: output with shape %s doesn't match the "
                                   "broadcast shape %s",
                        sg_shape_str(self->sizes, self->ndim, a, sizeof a),
                        sg_shape_str(mask->sizes, mask->ndim, b, sizeof b));
    return SG_OK;
}

sg_status sg_index_masked_fill_value_check(const sg_tensor *value) {
    if (value->ndim != 0)
        return sg_error(SG_EINVAL, "masked_fill_: masked_fill_ only supports a 0-dimensional "
                                   "value tensor, but got tensor with %d dimension(s).",
                        value->ndim);
    return SG_OK;
}
