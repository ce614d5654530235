/* helpers_index.c: the backward helpers of indexing ops (schemas/autograd.yaml):
 * gather, index_select, select, embedding (dense), permute. Aten calls only, so they
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
