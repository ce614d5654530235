/* helpers_index.c: the backward helpers of indexing ops (schemas/autograd.yaml):
 * gather, index_select, select, embedding (dense), permute, as_strided. Aten calls only, so they
 * run on any device. The gradients of indexing are zeros of the input's shape with the
 * gradient added (scatter_add) or copied in where the forward read. */
#include "helpers_util.h"

#include <string.h>

static sg_status zeros_of(sg_int_list sizes, const sg_tensor *like, sg_tensor **ret) {
    return aten_zeros(sizes, &(sg_dtype){(sg_dtype)like->dtype}, NULL, &like->device, NULL, ret);
}

sg_status sg_agf_gather_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *self, int64_t dim,
                                 sg_tensor *index, bool sparse_grad, sg_tensor **ret) {
    (void)ks;
    if (sparse_grad)
        return sg_error(SG_EUNSUPPORTED, "autograd::gather_backward: sparse gradients "
                        "(sparse_grad=true) are not supported");
    sg_tensor *z = NULL;
    sg_status st;
    TRY(zeros_of((sg_int_list){self->sizes, self->ndim}, grad, &z));
    TRY(aten_scatter_add(z, dim, index, grad, ret));
done:
    RELEASE(z);
    return st;
}

/* index (1-D or 0-D) as an int64 index of grad's shape that holds index[j] along dim */
static sg_status spread_index(sg_tensor *index, const sg_tensor *grad, int64_t dim,
                              sg_tensor **ret) {
    int64_t shape[SG_MAX_DIMS];
    for (int32_t d = 0; d < grad->ndim; d++) shape[d] = d == dim ? -1 : 1;
    sg_tensor *i64 = NULL, *v = NULL, *e = NULL;
    sg_status st;
    TRY(agf_to(index, SG_INT64, &i64));
    TRY(aten_reshape(i64, (sg_int_list){shape, grad->ndim}, &v));
    TRY(aten_expand(v, (sg_int_list){grad->sizes, grad->ndim}, false, &e));
    TRY(aten_contiguous(e, SG_CONTIGUOUS_FORMAT, ret));
done:
    RELEASE(i64, v, e);
    return st;
}

/* zeros of the input's sizes, the gradient's slices added at the indices they came from */
sg_status sg_agf_index_select_backward(sg_keyset ks, sg_tensor *grad, sg_int_list sizes,
                                       int64_t dim, sg_tensor *index, sg_tensor **ret) {
    (void)ks;
    if (!sizes.len) return aten_reshape(grad, sizes, ret); /* a 0-dim input: one element */
    int64_t d = 0;
    sg_tensor *z = NULL, *idx = NULL;
    sg_status st;
    TRY(agf_wrap_dim("index_select_backward", dim, sizes.len, &d));
    if (index->ndim > 1)
        return sg_error(SG_EINVAL, "autograd::index_select_backward: the index has %d dims, "
                        "not 1", (int)index->ndim);
    TRY(spread_index(index, grad, d, &idx));
    TRY(zeros_of(sizes, grad, &z));
    TRY(aten_scatter_add(z, d, idx, grad, ret));
done:
    RELEASE(z, idx);
    return st;
}

sg_status sg_agf_select_backward(sg_keyset ks, sg_tensor *grad, sg_int_list sizes, int64_t dim,
                                 int64_t index, sg_tensor **ret) {
    (void)ks;
    sg_tensor *z = NULL, *part = NULL, *same = NULL;
    sg_status st;
    TRY(zeros_of(sizes, grad, &z));
    TRY(aten_select_int(z, dim, index, &part));
    TRY(aten_copy_(part, grad, false, &same));
    *ret = z, z = NULL;
done:
    RELEASE(z, part, same);
    return st;
}

/* embedding's weight gradient: row i the sum of grad's rows whose index is i (divided by how
 * often i occurs where scale_grad_by_freq), none from indices equal to padding_idx */
sg_status sg_agf_embedding_backward(sg_keyset ks, sg_tensor *grad, sg_tensor *indices,
                                    int64_t num_weights, int64_t padding_idx,
                                    bool scale_grad_by_freq, bool sparse, sg_tensor **ret) {
    (void)ks;
    if (sparse)
        return sg_error(SG_EUNSUPPORTED, "autograd::embedding_backward: sparse gradients "
                        "(sparse=true) are not supported; use sparse=false");
    if (!grad->ndim)
        return sg_error(SG_EINVAL, "autograd::embedding_backward: a 0-dim gradient");
    const int64_t n = sg_tensor_numel(indices), D = grad->sizes[grad->ndim - 1];
    const int64_t nd[2] = {n, D}, wd[2] = {num_weights, D}, n1[2] = {n, 1};
    sg_tensor *g = NULL, *i64 = NULL, *idx = NULL, *t = NULL, *u = NULL, *z = NULL;
    sg_tensor *cnt = NULL, *c = NULL, *ones = NULL, *idx2 = NULL;
    sg_status st;
    TRY(aten_reshape(grad, (sg_int_list){nd, 2}, &g));
    TRY(agf_to(indices, SG_INT64, &i64));
    TRY(aten_reshape(i64, (sg_int_list){&n, 1}, &idx));
    if (scale_grad_by_freq) {
        TRY(zeros_of((sg_int_list){&num_weights, 1}, grad, &z));
        TRY(aten_ones((sg_int_list){&n, 1}, &(sg_dtype){(sg_dtype)grad->dtype}, NULL,
                      &grad->device, NULL, &ones));
        TRY(aten_scatter_add(z, 0, idx, ones, &cnt));
        TRY(aten_index_select(cnt, 0, idx, &c));
        TRY(aten_reshape(c, (sg_int_list){n1, 2}, &t));
        TRY(aten_div_Tensor(g, t, &u));
        RELEASE(g, t, z), g = u, t = u = z = NULL;
    }
    if (padding_idx >= 0) {
        TRY(aten_eq_Scalar(idx, sg_scalar_int(padding_idx), &t));
        TRY(aten_reshape(t, (sg_int_list){n1, 2}, &u));
        sg_tensor *kept = NULL;
        TRY(aten_masked_fill_Scalar(g, u, sg_scalar_int(0), &kept));
        RELEASE(g, t, u), g = kept, t = u = NULL;
    }
    TRY(aten_reshape(idx, (sg_int_list){n1, 2}, &t));
    TRY(aten_expand(t, (sg_int_list){nd, 2}, false, &u));
    TRY(aten_contiguous(u, SG_CONTIGUOUS_FORMAT, &idx2));
    TRY(zeros_of((sg_int_list){wd, 2}, grad, &z));
    TRY(aten_scatter_add(z, 0, idx2, g, ret));
done:
    RELEASE(g, i64, idx, t, u, z, cnt, c, ones, idx2);
    return st;
}

/* the inverse permutation */
sg_status sg_agf_permute_backwards(sg_keyset ks, sg_tensor *grad, sg_int_list fwd,
                                   sg_tensor **ret) {
    (void)ks;
    int64_t inv[SG_MAX_DIMS];
    if (fwd.len != grad->ndim || fwd.len > SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "autograd::permute_backwards: %d dims for a %d-dim gradient",
                        (int)fwd.len, (int)grad->ndim);
    for (int32_t i = 0; i < fwd.len; i++) {
        int64_t d = 0;
        sg_status st = agf_wrap_dim("permute_backwards", fwd.items[i], fwd.len, &d);
        if (st != SG_OK) return st;
        inv[d] = i;
    }
    return aten_permute(grad, (sg_int_list){inv, fwd.len}, ret);
}

/* ---- as_strided --------------------------------------------------------------------------
 * A view at any geometry over its input's storage. The gradient flows through the storage
 * locations: each output element's gradient is added at the location it views (several may
 * view one: an overlapping output), and each input element reads the sum at its location,
 * shared evenly among the input elements that view that location (an expanded or otherwise
 * overlapping input), as PyTorch's as_strided_backward does. The locations are counted from
 * the lower of the two offsets, so the buffer covers just what the geometries reach. */

/* One geometry's lists checked: matching lengths, no negative size, stride or offset. */
static sg_status geometry_ok(const char *what, sg_int_list sizes, sg_int_list strides,
                             int64_t offset) {
    if (sizes.len != strides.len || sizes.len > SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "autograd::as_strided_backward: the %s geometry has %d "
                        "sizes and %d strides", what, (int)sizes.len, (int)strides.len);
    for (int32_t d = 0; d < sizes.len; d++)
        if (sizes.items[d] < 0 || strides.items[d] < 0)
            return sg_error(SG_EINVAL, "autograd::as_strided_backward: the %s geometry has "
                            "size %lld and stride %lld at dim %d", what,
                            (long long)sizes.items[d], (long long)strides.items[d], (int)d);
    if (offset < 0)
        return sg_error(SG_EINVAL, "autograd::as_strided_backward: the %s storage offset is "
                        "%lld", what, (long long)offset);
    return SG_OK;
}

/* *end: one past the last location the geometry reaches from offset (offset where it has no
 * element); false where that overflows */
static bool geometry_end(sg_int_list sizes, sg_int_list strides, int64_t offset, int64_t *end) {
    int64_t e = 0, step = 0;
    if (__builtin_add_overflow(offset, 1, &e)) return false;
    for (int32_t d = 0; d < sizes.len; d++) {
        if (!sizes.items[d]) {
            *end = offset;
            return true;
        }
        if (__builtin_mul_overflow(sizes.items[d] - 1, strides.items[d], &step) ||
            __builtin_add_overflow(e, step, &e))
            return false;
    }
    *end = e;
    return true;
}

/* Whether two elements of the geometry may view one location. Sufficient for "no": the dims
 * of size > 1, by increasing stride, each have a stride beyond the span of those before. */
static bool may_overlap(sg_int_list sizes, sg_int_list strides) {
    int32_t order[SG_MAX_DIMS], m = 0;
    for (int32_t d = 0; d < sizes.len; d++) {
        if (sizes.items[d] <= 1) continue;
        int32_t at = m++;
        while (at > 0 && strides.items[order[at - 1]] > strides.items[d]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = d;
    }
    int64_t span = 0; /* the farthest location the dims so far reach, from the first */
    for (int32_t j = 0; j < m; j++) {
        int64_t s = strides.items[order[j]];
        if (s <= span) return true;
        span += (sizes.items[order[j]] - 1) * s; /* within the checked end: no overflow */
    }
    return false;
}

static bool same_list(sg_int_list a, sg_int_list b) {
    return a.len == b.len && (!a.len || !memcmp(a.items, b.items, (size_t)a.len * sizeof *a.items));
}

/* 1-D int64 indices of the locations geometry (sizes, strides, offset) views, in its elements'
 * order: arange over the buffer, seen through the geometry */
static sg_status locations(sg_tensor *ar, sg_int_list sizes, sg_int_list strides,
                           int64_t offset, sg_tensor **ret) {
    sg_tensor *v = NULL;
    const int64_t flat = -1;
    sg_status st;
    TRY(aten_as_strided(ar, sizes, strides, &offset, &v));
    TRY(aten_reshape(v, (sg_int_list){&flat, 1}, ret));
done:
    RELEASE(v);
    return st;
}

sg_status sg_agf_as_strided_backward(sg_keyset ks, sg_tensor *grad, sg_int_list input_sizes,
                                     sg_int_list input_strides, int64_t input_storage_offset,
                                     sg_int_list size, sg_int_list stride,
                                     const int64_t *storage_offset, sg_tensor **ret) {
    (void)ks;
    const int64_t in_off = input_storage_offset;
    const int64_t out_off = storage_offset ? *storage_offset : in_off;
    sg_status st = geometry_ok("input", input_sizes, input_strides, in_off);
    if (st == SG_OK) st = geometry_ok("output", size, stride, out_off);
    if (st != SG_OK) return st;
    if (!same_list((sg_int_list){grad->sizes, grad->ndim}, size))
        return sg_error(SG_EINVAL, "autograd::as_strided_backward: the gradient's shape is not "
                        "the output's size");
    const int64_t base = in_off < out_off ? in_off : out_off;
    int64_t in_end = 0, out_end = 0;
    if (!geometry_end(input_sizes, input_strides, in_off - base, &in_end) ||
        !geometry_end(size, stride, out_off - base, &out_end))
        return sg_error(SG_EINVAL, "autograd::as_strided_backward: a geometry reaches past "
                        "int64");
    if (in_end == in_off - base || out_end == out_off - base) /* no input or no output element */
        return zeros_of(input_sizes, grad, ret);
    const bool in_overlap = may_overlap(input_sizes, input_strides);
    if (!in_overlap && in_off == out_off && same_list(input_sizes, size) &&
        same_list(input_strides, stride)) { /* the same one-to-one view: the gradient itself */
        *ret = sg_tensor_retain(grad);
        return SG_OK;
    }
    const int64_t n = in_end > out_end ? in_end : out_end, flat = -1;
    const sg_dtype i64 = SG_INT64;
    sg_tensor *ar = NULL, *oidx = NULL, *g = NULL, *z = NULL, *acc = NULL, *iidx = NULL;
    sg_tensor *ones = NULL, *cnt = NULL, *a = NULL, *c = NULL;
    TRY(aten_arange(sg_scalar_int(n), &i64, NULL, &grad->device, NULL, &ar));
    TRY(locations(ar, size, stride, out_off - base, &oidx));
    TRY(aten_reshape(grad, (sg_int_list){&flat, 1}, &g));
    TRY(zeros_of((sg_int_list){&n, 1}, grad, &z));
    TRY(aten_scatter_add(z, 0, oidx, g, &acc)); /* accumulates where outputs overlap */
    TRY(aten_as_strided(acc, input_sizes, input_strides, &(int64_t){in_off - base}, &a));
    if (!in_overlap) {
        *ret = a, a = NULL;
        goto done;
    }
    TRY(locations(ar, input_sizes, input_strides, in_off - base, &iidx));
    TRY(aten_ones((sg_int_list){iidx->sizes, 1}, &(sg_dtype){(sg_dtype)grad->dtype}, NULL,
                  &grad->device, NULL, &ones));
    TRY(aten_scatter_add(z, 0, iidx, ones, &cnt)); /* how many input elements each location has */
    TRY(aten_as_strided(cnt, input_sizes, input_strides, &(int64_t){in_off - base}, &c));
    TRY(aten_div_Tensor(a, c, ret)); /* every count read is at least 1 */
done:
    RELEASE(ar, oidx, g, z, acc, iidx, ones, cnt, a, c);
    return st;
}
