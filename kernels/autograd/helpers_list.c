/* helpers_list.c: the helper ops (schemas/autograd.yaml, docs/autograd.md) of the formulas of
 * ops with a Tensor[] input or result: cat and stack, whose gradient is one tensor per input,
 * and split, split_with_sizes and unbind, whose gradient is made of one gradient per output,
 * some of them undefined. What PyTorch's FunctionsManual.cpp computes, written as calls of aten
 * ops through the typed C API, so each runs on whatever device its tensors are on.
 *
 * A Tensor[] input's per-element facts travel as int lists, since the schema language has no
 * list of lists and no list of dtypes: `sizes` holds, for each element in turn, its number of
 * dims and then its sizes (what the Autograd kernel saved for to_args_sizes), `dtypes` each
 * element's sg_dtype (to_args_scalartypes). */
#include "aten.h"

#include <stdbool.h>
#include <stdlib.h>

/* Runs CALL (a call that returns sg_status); on failure, to `done`. */
#define TRY(call)                                                                             \
    do {                                                                                      \
        st = (call);                                                                          \
        if (st != SG_OK) goto done;                                                           \
    } while (0)

static sg_status no_complex(const char *fn, const sg_tensor *t) {
    return t && sg_dtype_is_complex((sg_dtype)t->dtype)
               ? sg_error(SG_EUNSUPPORTED, "autograd::%s: complex gradients are not supported yet",
                          fn)
               : SG_OK;
}

/* A list of n tensors, all NULL, that sg_tensor_list_release gives back. */
static sg_status list_new(const char *fn, int32_t n, sg_tensor_list *out) {
    out->len = 0;
    out->items = calloc(n > 0 ? (size_t)n : 1, sizeof(sg_tensor *));
    if (!out->items) return sg_error(SG_ENOMEM, "autograd::%s: out of memory", fn);
    out->len = n;
    return SG_OK;
}

/* d wrapped into [0, ndim) as aten wraps a dim, or an error naming fn. */
static sg_status wrap_dim(const char *fn, int64_t *d, int64_t ndim) {
    int64_t lo = ndim ? -ndim : -1, hi = ndim ? ndim - 1 : 0;
    if (*d < lo || *d > hi)
        return sg_error(SG_EINVAL, "autograd::%s: dimension out of range (expected to be in "
                                   "range of [%lld, %lld], but got %lld)",
                        fn, (long long)lo, (long long)hi, (long long)*d);
    if (*d < 0) *d += ndim ? ndim : 1;
    return SG_OK;
}

/* ---- cat, stack ------------------------------------------------------------------------- */

/* The shape of element i of a `sizes` list: where its entry starts, into *at (walked from 0). */
static sg_status next_shape(const char *fn, sg_int_list sizes, int32_t *at, int64_t *ndim,
                            const int64_t **shape) {
    if (*at >= sizes.len || sizes.items[*at] < 0 || sizes.items[*at] > sizes.len - *at - 1)
        return sg_error(SG_EINVAL, "autograd::%s: the sizes list is not one entry (number of "
                                   "dims, then the sizes) per tensor",
                        fn);
    *ndim = sizes.items[*at];
    *shape = sizes.items + *at + 1;
    *at += 1 + (int32_t)*ndim;
    return SG_OK;
}

/* cat's legacy rule: a 1-dim tensor of size 0 takes part in cat whatever the others' shape. */
static bool legacy_empty(int64_t ndim, const int64_t *shape) { return ndim == 1 && !shape[0]; }

/* grad split back into each input of cat: the slice along dim each one filled, or zeros({0})
 * for an input cat skipped (legacy_empty). The dtypes say how many inputs there were; a complex
 * gradient is refused. */
sg_status sg_agf_cat_tensors_backward(sg_keyset ks, sg_tensor *grad, sg_int_list sizes,
                                      sg_int_list dtypes, int64_t dim, sg_tensor_list *ret) {
    (void)ks;
    const char *fn = "cat_tensors_backward";
    sg_status st = no_complex(fn, grad);
    if (st != SG_OK) return st;
    int32_t n = dtypes.len, at = 0;
    int64_t ndim = 0;
    const int64_t *shape = NULL;
    /* the dim wraps against the first input that is not legacy_empty (as aten's cat does) */
    for (int32_t i = 0; i < n; i++) {
        if ((st = next_shape(fn, sizes, &at, &ndim, &shape)) != SG_OK) return st;
        if (!legacy_empty(ndim, shape)) {
            if ((st = wrap_dim(fn, &dim, ndim)) != SG_OK) return st;
            break;
        }
    }
    if ((st = list_new(fn, n, ret)) != SG_OK) return st;
    sg_tensor **out = (sg_tensor **)ret->items;
    int64_t offset = 0;
    at = 0;
    for (int32_t i = 0; i < n; i++) {
        TRY(next_shape(fn, sizes, &at, &ndim, &shape));
        if (legacy_empty(ndim, shape)) {
            TRY(aten_zeros((sg_int_list){(const int64_t[]){0}, 1},
                           &(sg_dtype){(sg_dtype)grad->dtype}, NULL, &grad->device, NULL,
                           &out[i]));
            continue;
        }
        if (dim >= ndim) {
            st = sg_error(SG_EINVAL, "autograd::%s: input %d has %lld dims, too few for dim %lld",
                          fn, (int)i, (long long)ndim, (long long)dim);
            goto done;
        }
        TRY(aten_narrow(grad, dim, offset, shape[dim], &out[i]));
        offset += shape[dim];
    }
    return SG_OK;
done:
    sg_tensor_list_release(ret);
    return st;
}

/* stack's gradient: the slice of grad at each index along dim (the new dim), one per input. */
sg_status sg_agf_stack_tensors_backward(sg_keyset ks, sg_tensor *grad, int64_t dim,
                                        sg_int_list dtypes, sg_tensor_list *ret) {
    (void)ks;
    const char *fn = "stack_tensors_backward";
    sg_status st = no_complex(fn, grad);
    if (st != SG_OK) return st;
    if ((st = list_new(fn, dtypes.len, ret)) != SG_OK) return st;
    for (int32_t i = 0; i < dtypes.len; i++)
        TRY(aten_select_int(grad, dim, i, (sg_tensor **)&ret->items[i]));
    return SG_OK;
done:
    sg_tensor_list_release(ret);
    return st;
}

/* ---- split, split_with_sizes, unbind ---------------------------------------------------- */

/* grads, each undefined one replaced by zeros of the piece's shape (sizes with sizes[dim] =
 * length(i)), then cat along dim: the gradient of the tensor the pieces were cut from. */
static sg_status join_pieces(const char *fn, sg_tensor_list grads, const int64_t *lengths,
                             int64_t dim, sg_int_list sizes, const sg_dtype *dtype,
                             const sg_device *device, bool stack, sg_tensor **ret) {
    sg_tensor_list all = {NULL, 0};
    sg_status st = list_new(fn, grads.len, &all);
    if (st != SG_OK) return st;
    sg_tensor **items = (sg_tensor **)all.items;
    int64_t shape[SG_MAX_DIMS];
    const sg_tensor *some = NULL;
    for (int32_t i = 0; i < grads.len && !some; i++) some = grads.items[i];
    if (sizes.len > SG_MAX_DIMS) {
        st = sg_error(SG_EINVAL, "autograd::%s: %d dims", fn, (int)sizes.len);
        goto done;
    }
    for (int32_t d = 0; d < sizes.len; d++) shape[d] = sizes.items[d];
    for (int32_t i = 0; i < grads.len; i++) {
        TRY(no_complex(fn, grads.items[i]));
        if (grads.items[i]) {
            items[i] = sg_tensor_retain(grads.items[i]);
            continue;
        }
        if (!stack) shape[dim] = lengths[i];
        /* a defined gradient's dtype and device where there is one, else the input's */
        sg_dtype dt = some ? (sg_dtype)some->dtype : dtype ? *dtype : SG_FLOAT32;
        const sg_device *dev = some ? &some->device : device;
        TRY(aten_zeros((sg_int_list){shape, sizes.len}, &dt, NULL, dev, NULL, &items[i]));
    }
    st = stack ? aten_stack(all, dim, ret) : aten_cat(all, dim, ret);
done:
    sg_tensor_list_release(&all);
    return st;
}

sg_status sg_agf_split_with_sizes_backward(sg_keyset ks, sg_tensor_list grads,
                                           sg_int_list split_sizes, int64_t dim,
                                           sg_int_list sym_sizes, const sg_dtype *dtype,
                                           const sg_layout *layout, const sg_device *device,
                                           const bool *pin_memory, sg_tensor **ret) {
    (void)ks, (void)layout, (void)pin_memory;
    const char *fn = "split_with_sizes_backward";
    sg_status st = wrap_dim(fn, &dim, sym_sizes.len);
    if (st != SG_OK) return st;
    if (split_sizes.len != grads.len)
        return sg_error(SG_EINVAL, "autograd::%s: %d gradients for %d pieces", fn,
                        (int)grads.len, (int)split_sizes.len);
    return join_pieces(fn, grads, split_sizes.items, dim, sym_sizes, dtype, device, false, ret);
}

/* split's pieces are split_size long but the last, which holds what is left. */
sg_status sg_agf_split_backward(sg_keyset ks, sg_tensor_list grads, int64_t split_size,
                                int64_t dim, sg_int_list sym_sizes, const sg_dtype *dtype,
                                const sg_layout *layout, const sg_device *device,
                                const bool *pin_memory, sg_tensor **ret) {
    (void)ks, (void)layout, (void)pin_memory;
    const char *fn = "split_backward";
    sg_status st = wrap_dim(fn, &dim, sym_sizes.len);
    if (st != SG_OK) return st;
    if (!grads.len) return sg_error(SG_EINVAL, "autograd::%s: no gradients", fn);
    int64_t *lengths = malloc((size_t)grads.len * sizeof *lengths);
    if (!lengths) return sg_error(SG_ENOMEM, "autograd::%s: out of memory", fn);
    int64_t n = grads.len;
    for (int64_t i = 0; i < n; i++) lengths[i] = split_size;
    lengths[n - 1] = split_size - (split_size * n - sym_sizes.items[dim]);
    st = join_pieces(fn, grads, lengths, dim, sym_sizes, dtype, device, false, ret);
    free(lengths);
    return st;
}

/* unbind's gradient: the gradients stacked along dim, zeros for the undefined ones (shaped as
 * a defined one: unbind's pieces all have one shape). */
sg_status sg_agf_unbind_backward(sg_keyset ks, sg_tensor_list grads, int64_t dim,
                                 sg_tensor **ret) {
    (void)ks;
    const char *fn = "unbind_backward";
    const sg_tensor *some = NULL;
    for (int32_t i = 0; i < grads.len && !some; i++) some = grads.items[i];
    if (!some) return sg_error(SG_EINVAL, "autograd::%s: no gradient is defined", fn);
    sg_int_list sizes = {some->sizes, some->ndim};
    return join_pieces(fn, grads, NULL, dim, sizes, NULL, NULL, true, ret);
}
