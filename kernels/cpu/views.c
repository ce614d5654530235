/* views.c: the view ops (view, reshape, transpose, permute, expand, slice, select, narrow,
 * (un)squeeze, flatten, split, chunk, unbind, as_strided, alias, view.dtype), their in-place
 * forms, and their *_copy variants.
 *
 * A view is a new header over its input's storage: no element is read or written, so one kernel
 * serves every device. They are registered at CompositeExplicitAutograd, which makes them the
 * CPU's, Meta's and any other backend's kernels at once (as aten registers them). The *_copy
 * variants are a contiguous copy of the view (the runtime's copy moves bytes on any device, and
 * does nothing on Meta), and reshape copies only where no strides express the new shape.
 *
 * The geometry rules and most messages are the runtime's (sg_tensor_view and friends); the ones
 * written here follow aten's wording ("shape '[5]' is invalid for input of size 6"), prefixed
 * with the op's name as the other kernels do. */
#include "cpu.h"
#include "sg_checks.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- helpers ------------------------------------------------------------------------------ */

static const char *list_str(sg_int_list l, char *buf, size_t n) {
    return sg_shape_str(l.items, l.len, buf, n);
}

/* aten's infer_size: the shape asked for, its one -1 filled in, checked against numel. */
static sg_status infer_size(const char *op, sg_int_list size, int64_t numel, int64_t *shape) {
    char    b[256];
    int32_t infer = -1;
    int64_t known = 1;
    bool    fits = true;
    if (size.len > SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "%s: %d dimensions (at most %d)", op, size.len, SG_MAX_DIMS);
    for (int32_t i = 0; i < size.len; i++) {
        shape[i] = size.items[i];
        if (size.items[i] == -1) {
            if (infer >= 0) return sg_error(SG_EINVAL, "%s: only one dimension can be inferred", op);
            infer = i;
        } else if (size.items[i] < 0) {
            return sg_error(SG_EINVAL, "%s: invalid shape dimension %lld", op,
                            (long long)size.items[i]);
        } else {
            fits = fits && !__builtin_mul_overflow(known, size.items[i], &known);
        }
    }
    if (fits && (known == numel || (infer >= 0 && known > 0 && numel % known == 0))) {
        if (infer < 0) return SG_OK;
        if (known == 0)
            return sg_error(SG_EINVAL,
                            "%s: cannot reshape tensor of 0 elements into shape %s because the "
                            "unspecified dimension size -1 can be any value and is ambiguous",
                            op, list_str(size, b, sizeof b));
        shape[infer] = numel / known;
        return SG_OK;
    }
    return sg_error(SG_EINVAL, "%s: shape '%s' is invalid for input of size %lld", op,
                    list_str(size, b, sizeof b), (long long)numel);
}

/* A new header with self's own geometry (what alias returns, and what in-place ops edit). */
static sg_status same_view(sg_tensor *self, sg_tensor **out) {
    return sg_tensor_as_strided(self, self->sizes, self->strides, self->ndim, self->offset, out);
}

/* Gives self the geometry of v (an in-place view op) and releases v; *ret gets self. */
static sg_status adopt(const char *op, sg_tensor *self, sg_tensor *v, sg_tensor **ret) {
    *ret = NULL;
    sg_status st = sg_tensor_as_strided_(self, v->sizes, v->strides, v->ndim, v->offset);
    sg_tensor_release(v);
    if (st) return sg_error(st, "%s: %s", op, sg_last_error());
    *ret = sg_tensor_retain(self);
    return SG_OK;
}

/* A list of n tensors, owned by the caller (sg_tensor_list_release). */
static sg_status list_new(int64_t n, sg_tensor_list *l) {
    l->len = 0;
    l->items = calloc(n > 0 ? (size_t)n : 1, sizeof(sg_tensor *));
    return l->items ? SG_OK : sg_error(SG_ENOMEM, "out of memory");
}

static void list_put(sg_tensor_list *l, sg_tensor *t) { ((sg_tensor **)l->items)[l->len++] = t; }

/* ---- view, reshape ------------------------------------------------------------------------ */

static sg_status view_k(sg_keyset ks, sg_tensor *self, sg_int_list size, sg_tensor **ret) {
    (void)ks;
    int64_t   shape[SG_MAX_DIMS];
    *ret = NULL;
    sg_status st = infer_size("view", size, sg_tensor_numel(self), shape);
    return st ? st : sg_tensor_view(self, shape, size.len, ret);
}

/* view when the strides allow it, else a view of a contiguous copy (aten's reshape). With ad
 * (the CompositeImplicitAutograd kernels, which run where an input requires grad) the view and
 * the copy are aten calls, which autograd records. */
static sg_status reshape_to(const char *op, sg_tensor *self, sg_int_list size, bool ad,
                            sg_tensor **ret) {
    int64_t   shape[SG_MAX_DIMS];
    *ret = NULL;
    sg_status st = infer_size(op, size, sg_tensor_numel(self), shape);
    if (st) return st;
    sg_int_list to = {shape, size.len};
    st = sg_tensor_view(self, shape, size.len, ret);
    if (st == SG_OK && ad) {
        sg_tensor_release(*ret);
        return aten_view(self, to, ret);
    }
    if (st != SG_EINVAL) return st; /* a view, or no memory */
    sg_error_clear();
    sg_tensor *c;
    sg_memory_format cf = SG_CONTIGUOUS_FORMAT;
    if ((st = ad ? aten_clone(self, &cf, &c) : sg_tensor_clone(self, &c))) return st;
    st = ad ? aten__unsafe_view(c, to, ret) : sg_tensor_view(c, shape, size.len, ret);
    sg_tensor_release(c);
    return st;
}

static sg_status reshape_k(sg_keyset ks, sg_tensor *self, sg_int_list shape, sg_tensor **ret) {
    (void)ks;
    return reshape_to("reshape", self, shape, false, ret);
}

static sg_status reshape_ad(sg_keyset ks, sg_tensor *self, sg_int_list shape, sg_tensor **ret) {
    (void)ks;
    return reshape_to("reshape", self, shape, true, ret);
}

static sg_status as_strided_view(const char *op, sg_tensor *self, sg_int_list size,
                                 sg_int_list stride, const int64_t *offset, sg_tensor **ret) {
    *ret = NULL;
    if (size.len != stride.len)
        return sg_error(SG_EINVAL, "%s: mismatch in length of strides and shape", op);
    return sg_tensor_as_strided(self, size.items, stride.items, size.len,
                                offset ? *offset : self->offset, ret);
}

static sg_status reshape_alias_k(sg_keyset ks, sg_tensor *self, sg_int_list size,
                                 sg_int_list stride, sg_tensor **ret) {
    (void)ks;
    return as_strided_view("_reshape_alias", self, size, stride, NULL, ret);
}

static sg_status as_strided_k(sg_keyset ks, sg_tensor *self, sg_int_list size, sg_int_list stride,
                              const int64_t *offset, sg_tensor **ret) {
    (void)ks;
    return as_strided_view("as_strided", self, size, stride, offset, ret);
}

static sg_status as_strided__k(sg_keyset ks, sg_tensor *self, sg_int_list size,
                               sg_int_list stride, const int64_t *offset, sg_tensor **ret) {
    (void)ks;
    sg_tensor *v;
    sg_status  st = as_strided_view("as_strided_", self, size, stride, offset, &v);
    return st ? st : adopt("as_strided_", self, v, ret);
}

static sg_status alias_k(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    return same_view(self, ret);
}

static sg_status unsafe_view_k(sg_keyset ks, sg_tensor *self, sg_int_list size, sg_tensor **ret) {
    return view_k(ks, self, size, ret);
}

/* view.dtype: the same bytes seen as another dtype. Element sizes may differ where the last
 * dim is contiguous; its size, the other strides and the offset scale by their ratio. */
static sg_status view_dtype_k(sg_keyset ks, sg_tensor *self, sg_dtype dtype, sg_tensor **ret) {
    (void)ks;
    *ret = NULL;
    if (!sg_dtype_valid((int)dtype)) return sg_error(SG_EINVAL, "view: no dtype %d", (int)dtype);
    sg_dtype    from = (sg_dtype)self->dtype;
    int64_t     a = (int64_t)sg_dtype_size(from), b = (int64_t)sg_dtype_size(dtype);
    int64_t     sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], offset = self->offset;
    int32_t     n = self->ndim;
    const char *fn = sg_dtype_name(from), *tn = sg_dtype_name(dtype);
    memcpy(sizes, self->sizes, (size_t)n * sizeof *sizes);
    memcpy(strides, self->strides, (size_t)n * sizeof *strides);
    if (a != b) {
        if (n == 0)
            return sg_error(SG_EINVAL, "view: self.dim() cannot be 0 to view %s as %s (different "
                                       "element sizes)", fn, tn);
        if (strides[n - 1] != 1)
            return sg_error(SG_EINVAL, "view: self.stride(-1) must be 1 to view %s as %s "
                                       "(different element sizes), but got %lld",
                            fn, tn, (long long)strides[n - 1]);
        if (a > b) {
            int64_t r = a / b;
            for (int32_t i = 0; i < n - 1; i++) strides[i] *= r;
            sizes[n - 1] *= r;
            offset *= r;
        } else {
            int64_t r = b / a;
            if (sizes[n - 1] % r)
                return sg_error(SG_EINVAL, "view: self.size(-1) must be divisible by %lld to view "
                                           "%s as %s (different element sizes), but got %lld",
                                (long long)r, fn, tn, (long long)sizes[n - 1]);
            if (offset % r)
                return sg_error(SG_EINVAL, "view: self.storage_offset() must be divisible by %lld "
                                           "to view %s as %s (different element sizes), but got "
                                           "%lld",
                                (long long)r, fn, tn, (long long)offset);
            for (int32_t i = 0; i < n - 1; i++)
                if (strides[i] % r)
                    return sg_error(SG_EINVAL, "view: self.stride(%d) must be divisible by %lld "
                                               "to view %s as %s (different element sizes), but "
                                               "got %lld",
                                    i, (long long)r, fn, tn, (long long)strides[i]);
            for (int32_t i = 0; i < n - 1; i++) strides[i] /= r;
            sizes[n - 1] /= r;
            offset /= r;
        }
    }
    /* a fresh header over the same storage, then given the new dtype and geometry: the
     * geometry covers the same bytes, so it stays inside the storage */
    sg_status st = same_view(self, ret);
    if (st) return st;
    (*ret)->dtype = (uint8_t)dtype;
    memcpy((*ret)->sizes, sizes, (size_t)n * sizeof *sizes);
    memcpy((*ret)->strides, strides, (size_t)n * sizeof *strides);
    (*ret)->offset = offset;
    return SG_OK;
}

/* ---- reordering dims ---------------------------------------------------------------------- */

static sg_status transpose_k(sg_keyset ks, sg_tensor *self, int64_t d0, int64_t d1,
                             sg_tensor **ret) {
    (void)ks;
    return sg_tensor_transpose(self, d0, d1, ret);
}

static sg_status transpose__k(sg_keyset ks, sg_tensor *self, int64_t d0, int64_t d1,
                              sg_tensor **ret) {
    (void)ks;
    sg_tensor *v;
    sg_status  st = sg_tensor_transpose(self, d0, d1, &v);
    return st ? st : adopt("transpose_", self, v, ret);
}

static sg_status t_view(const char *op, sg_tensor *self, sg_tensor **ret) {
    *ret = NULL;
    if (self->ndim > 2)
        return sg_error(SG_EINVAL, "%s: t() expects a tensor with <= 2 dimensions, but self is "
                                   "%dD",
                        op, self->ndim);
    return sg_tensor_transpose(self, 0, self->ndim < 2 ? 0 : 1, ret);
}

static sg_status t_k(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    return t_view("t", self, ret);
}

static sg_status t__k(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    sg_tensor *v;
    sg_status  st = t_view("t_", self, &v);
    return st ? st : adopt("t_", self, v, ret);
}

static sg_status permute_k(sg_keyset ks, sg_tensor *self, sg_int_list dims, sg_tensor **ret) {
    (void)ks;
    return sg_tensor_permute(self, dims.items, dims.len, ret);
}

static sg_status expand_k(sg_keyset ks, sg_tensor *self, sg_int_list size, bool implicit,
                          sg_tensor **ret) {
    (void)ks, (void)implicit;
    return sg_tensor_expand(self, size.items, size.len, ret);
}

/* ---- taking parts ------------------------------------------------------------------------- */

static sg_status slice_k(sg_keyset ks, sg_tensor *self, int64_t dim, const int64_t *start,
                         const int64_t *end, int64_t step, sg_tensor **ret) {
    (void)ks;
    return sg_tensor_slice(self, dim, start ? *start : 0, end ? *end : INT64_MAX, step, ret);
}

static sg_status select_k(sg_keyset ks, sg_tensor *self, int64_t dim, int64_t index,
                          sg_tensor **ret) {
    (void)ks;
    return sg_tensor_select(self, dim, index, ret);
}

/* aten's narrow: start may count from the end (start == size is allowed), the length must fit */
static sg_status narrow_view(const char *op, sg_tensor *self, int64_t dim, int64_t start,
                             int64_t length, bool ad, sg_tensor **ret) {
    *ret = NULL;
    if (self->ndim == 0)
        return sg_error(SG_EINVAL, "%s: narrow() cannot be applied to a 0-dim tensor.", op);
    if (length < 0) return sg_error(SG_EINVAL, "%s: narrow(): length must be non-negative.", op);
    sg_status st = sg_check_dim(op, &dim, self->ndim);
    if (st) return st;
    int64_t size = self->sizes[dim];
    /* as aten: maybe_wrap_dim */
    if (start != size && (st = sg_check_dim(op, &start, size))) return st;
    if (start > size || length > size - start)
        return sg_error(SG_EINVAL, "%s: start (%lld) + length (%lld) exceeds dimension size "
                                   "(%lld).",
                        op, (long long)start, (long long)length, (long long)size);
    int64_t end = start + length;
    return ad ? aten_slice_Tensor(self, dim, &start, &end, 1, ret)
              : sg_tensor_slice(self, dim, start, end, 1, ret);
}

static sg_status narrow_k(sg_keyset ks, sg_tensor *self, int64_t dim, int64_t start,
                          int64_t length, sg_tensor **ret) {
    (void)ks;
    return narrow_view("narrow", self, dim, start, length, false, ret);
}

static sg_status narrow_ad(sg_keyset ks, sg_tensor *self, int64_t dim, int64_t start,
                           int64_t length, sg_tensor **ret) {
    (void)ks;
    return narrow_view("narrow", self, dim, start, length, true, ret);
}

/* narrow.Tensor: start is a 0-dim integer tensor (read from any device) */
static sg_status narrow_tensor(sg_tensor *self, int64_t dim, sg_tensor *start, int64_t length,
                               bool ad, sg_tensor **ret) {
    *ret = NULL;
    if (start->ndim != 0 || !sg_dtype_is_integral((sg_dtype)start->dtype, false))
        return sg_error(SG_EINVAL, "narrow: start must be an 0-dim integral Tensor.");
    if (start->device.type == SG_DEV_META) /* as PyTorch's Meta: the view depends on data */
        return sg_error(SG_EUNSUPPORTED, "aten::narrow.Tensor: its result depends on the value "
                                         "of start, a Meta tensor with no data: not implemented "
                                         "for Meta");
    sg_tensor *c = NULL, *v = NULL;
    sg_status  st = sg_tensor_to(start, SG_CPU, &c);
    if (!st) st = sg_cast(c, SG_INT64, &v);
    int64_t s = st ? 0 : *(const int64_t *)sg_tensor_data(v);
    sg_tensor_release(v);
    sg_tensor_release(c);
    return st ? st : narrow_view("narrow", self, dim, s, length, ad, ret);
}

static sg_status narrow_tensor_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *start,
                                 int64_t length, sg_tensor **ret) {
    (void)ks;
    return narrow_tensor(self, dim, start, length, false, ret);
}

static sg_status narrow_tensor_ad(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *start,
                                  int64_t length, sg_tensor **ret) {
    (void)ks;
    return narrow_tensor(self, dim, start, length, true, ret);
}

/* ---- changing the rank -------------------------------------------------------------------- */

static sg_status unsqueeze_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor **ret) {
    (void)ks;
    return sg_tensor_unsqueeze(self, dim, ret);
}

static sg_status unsqueeze__k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor **ret) {
    (void)ks;
    sg_tensor *v;
    sg_status  st = sg_tensor_unsqueeze(self, dim, &v);
    return st ? st : adopt("unsqueeze_", self, v, ret);
}

/* Drops the size-1 dims among those marked (all of them where mark is NULL). */
static sg_status squeeze_marked(sg_tensor *self, const bool *mark, sg_tensor **ret) {
    int64_t sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS];
    int32_t n = 0;
    for (int32_t d = 0; d < self->ndim; d++) {
        if (self->sizes[d] == 1 && (!mark || mark[d])) continue;
        sizes[n] = self->sizes[d];
        strides[n++] = self->strides[d];
    }
    return sg_tensor_as_strided(self, sizes, strides, n, self->offset, ret);
}

/* Marks the dims of a list (wrapped; each at most once, as aten's dim_list_to_bitset). */
static sg_status mark_dims(const char *op, const sg_tensor *self, sg_int_list dims, bool *mark) {
    memset(mark, 0, SG_MAX_DIMS * sizeof *mark);
    for (int32_t i = 0; i < dims.len; i++) {
        int64_t   d = dims.items[i];
        sg_status st = sg_check_dim(op, &d, self->ndim);
        if (st) return st;
        if (mark[d])
            return sg_error(SG_EINVAL, "%s: dim %lld appears multiple times in the list of dims",
                            op, (long long)d);
        mark[d] = true;
    }
    return SG_OK;
}

static sg_status squeeze_k(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    return squeeze_marked(self, NULL, ret);
}

static sg_status squeeze_dim_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor **ret) {
    (void)ks;
    return sg_tensor_squeeze(self, dim, ret);
}

static sg_status squeeze_dims_k(sg_keyset ks, sg_tensor *self, sg_int_list dims,
                                sg_tensor **ret) {
    (void)ks;
    bool      mark[SG_MAX_DIMS];
    sg_status st = mark_dims("squeeze", self, dims, mark);
    *ret = NULL;
    return st ? st : squeeze_marked(self, mark, ret);
}

static sg_status squeeze__k(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    sg_tensor *v;
    sg_status  st = squeeze_k(ks, self, &v);
    return st ? st : adopt("squeeze_", self, v, ret);
}

static sg_status squeeze__dim_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor **ret) {
    sg_tensor *v;
    sg_status  st = squeeze_dim_k(ks, self, dim, &v);
    return st ? st : adopt("squeeze_", self, v, ret);
}

static sg_status squeeze__dims_k(sg_keyset ks, sg_tensor *self, sg_int_list dims,
                                 sg_tensor **ret) {
    sg_tensor *v;
    sg_status  st = squeeze_dims_k(ks, self, dims, &v);
    return st ? st : adopt("squeeze_", self, v, ret);
}

/* flatten: dims start..end become one; a 0-dim tensor becomes [1]; start == end is self */
static sg_status flatten(sg_tensor *self, int64_t start, int64_t end, bool ad, sg_tensor **ret) {
    *ret = NULL;
    if (self->ndim == 0)
        return reshape_to("flatten", self, (sg_int_list){(int64_t[]){1}, 1}, ad, ret);
    sg_status st = sg_check_dim("flatten", &start, self->ndim);
    if (st || (st = sg_check_dim("flatten", &end, self->ndim))) return st;
    if (start > end)
        return sg_error(SG_EINVAL,
                        "flatten: flatten() has invalid args: start_dim cannot come after end_dim");
    if (start == end) {
        *ret = sg_tensor_retain(self);
        return SG_OK;
    }
    int64_t shape[SG_MAX_DIMS], n = 0, prod = 1;
    for (int64_t d = 0; d < self->ndim; d++) {
        if (d < start || d > end) {
            shape[n++] = self->sizes[d];
        } else {
            prod *= self->sizes[d];
            if (d == end) shape[n++] = prod;
        }
    }
    return reshape_to("flatten", self, (sg_int_list){shape, (int32_t)n}, ad, ret);
}

static sg_status flatten_k(sg_keyset ks, sg_tensor *self, int64_t start, int64_t end,
                           sg_tensor **ret) {
    (void)ks;
    return flatten(self, start, end, false, ret);
}

static sg_status flatten_ad(sg_keyset ks, sg_tensor *self, int64_t start, int64_t end,
                            sg_tensor **ret) {
    (void)ks;
    return flatten(self, start, end, true, ret);
}

/* ---- splitting ---------------------------------------------------------------------------- */

/* Pieces of lengths sizes[0..n) along dim (checked by the caller), each a narrow view. */
static sg_status pieces(const char *op, sg_tensor *self, int64_t dim, const int64_t *sizes,
                        int64_t n, sg_tensor_list *ret) {
    sg_status st = list_new(n, ret);
    int64_t   at = 0;
    for (int64_t i = 0; i < n && !st; i++) {
        sg_tensor *v;
        if (!(st = narrow_view(op, self, dim, at, sizes[i], false, &v))) list_put(ret, v);
        at += sizes[i];
    }
    if (st) sg_tensor_list_release(ret);
    return st;
}

static sg_status split_with_sizes_view(const char *op, sg_tensor *self, sg_int_list split,
                                       int64_t dim, sg_tensor_list *ret) {
    char b[256];
    ret->items = NULL, ret->len = 0;
    if (self->ndim == 0)
        return sg_error(SG_EINVAL, "%s: split expects at least a 1-dimensional tensor", op);
    sg_status st = sg_check_dim(op, &dim, self->ndim);
    if (st) return st;
    int64_t sum = 0;
    for (int32_t i = 0; i < split.len; i++) {
        if (split.items[i] < 0)
            return sg_error(SG_EINVAL, "%s: split_with_sizes expects split_sizes have only "
                                       "non-negative entries, but got split_sizes=%s",
                            op, list_str(split, b, sizeof b));
        sum += split.items[i];
    }
    if (sum != self->sizes[dim])
        return sg_error(SG_EINVAL, "%s: split_with_sizes expects split_sizes to sum exactly to "
                                   "%lld (input tensor's size at dimension %lld), but got "
                                   "split_sizes=%s",
                        op, (long long)self->sizes[dim], (long long)dim,
                        list_str(split, b, sizeof b));
    return pieces(op, self, dim, split.items, split.len, ret);
}

static sg_status split_view(const char *op, sg_tensor *self, int64_t split_size, int64_t dim,
                            sg_tensor_list *ret) {
    ret->items = NULL, ret->len = 0;
    if (self->ndim == 0)
        return sg_error(SG_EINVAL, "%s: split expects at least a 1-dimensional tensor", op);
    if (split_size < 0)
        return sg_error(SG_EINVAL, "%s: split expects split_size be non-negative, but got "
                                   "split_size=%lld",
                        op, (long long)split_size);
    sg_status st = sg_check_dim(op, &dim, self->ndim);
    if (st) return st;
    int64_t size = self->sizes[dim];
    if (split_size == 0 && size != 0)
        return sg_error(SG_EINVAL, "%s: split_size can only be 0 if dimension size is 0, but got "
                                   "dimension size of %lld",
                        op, (long long)size);
    int64_t n = split_size ? (size + split_size - 1) / split_size : 1;
    if (n < 1) n = 1;
    int64_t *sizes = malloc((size_t)n * sizeof *sizes);
    if (!sizes) return sg_error(SG_ENOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) sizes[i] = split_size;
    sizes[n - 1] = split_size - (split_size * n - size);
    st = pieces(op, self, dim, sizes, n, ret);
    free(sizes);
    return st;
}

/* unbind: the select view at each index along dim */
static sg_status unbind_view(const char *op, sg_tensor *self, int64_t dim, sg_tensor_list *ret) {
    ret->items = NULL, ret->len = 0;
    if (self->ndim == 0)
        return sg_error(SG_EINVAL, "%s: Dimension specified as %lld but tensor has no dimensions",
                        op, (long long)dim);
    sg_status st = sg_check_dim(op, &dim, self->ndim);
    if (st) return st;
    int64_t n = self->sizes[dim];
    if ((st = list_new(n, ret))) return st;
    for (int64_t i = 0; i < n && !st; i++) {
        sg_tensor *v;
        if (!(st = sg_tensor_select(self, dim, i, &v))) list_put(ret, v);
    }
    if (st) sg_tensor_list_release(ret);
    return st;
}

static sg_status unbind_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor_list *ret) {
    (void)ks;
    return unbind_view("unbind", self, dim, ret);
}

static sg_status split_k(sg_keyset ks, sg_tensor *self, int64_t split_size, int64_t dim,
                         sg_tensor_list *ret) {
    (void)ks;
    return split_view("split", self, split_size, dim, ret);
}

/* split.sizes and chunk are CompositeImplicitAutograd, as in aten: each calls split_with_sizes or
 * split through the dispatcher, so that under autograd those ops' nodes differentiate them. */
static sg_status split_sizes_k(sg_keyset ks, sg_tensor *self, sg_int_list split, int64_t dim,
                               sg_tensor_list *ret) {
    (void)ks;
    return aten_split_with_sizes(self, split, dim, ret);
}

static sg_status split_with_sizes_k(sg_keyset ks, sg_tensor *self, sg_int_list split,
                                    int64_t dim, sg_tensor_list *ret) {
    (void)ks;
    return split_with_sizes_view("split_with_sizes", self, split, dim, ret);
}

static sg_status chunk_k(sg_keyset ks, sg_tensor *self, int64_t chunks, int64_t dim,
                         sg_tensor_list *ret) {
    (void)ks;
    ret->items = NULL, ret->len = 0;
    if (self->ndim == 0)
        return sg_error(SG_EINVAL, "chunk: chunk expects at least a 1-dimensional tensor");
    if (chunks <= 0)
        return sg_error(SG_EINVAL, "chunk: chunk expects `chunks` to be greater than 0, got: %lld",
                        (long long)chunks);
    sg_status st = sg_check_dim("chunk", &dim, self->ndim);
    if (st) return st;
    int64_t size = self->sizes[dim], split_size = (size + chunks - 1) / chunks;
    if (split_size == 0 && size == 0) { /* chunks empty pieces */
        int64_t *zeros = calloc((size_t)chunks, sizeof *zeros);
        if (!zeros) return sg_error(SG_ENOMEM, "out of memory");
        st = aten_split_with_sizes(self, (sg_int_list){zeros, (int32_t)chunks}, dim, ret);
        free(zeros);
        return st;
    }
    return aten_split_Tensor(self, split_size, dim, ret);
}

/* ---- the *_copy variants: the view, then a contiguous copy of it ---------------------------- */

/* Replaces *t by a contiguous copy of it (on its device). */
static sg_status materialize(sg_status st, sg_tensor **t) {
    if (st) return st;
    sg_tensor *c;
    st = sg_tensor_clone(*t, &c);
    sg_tensor_release(*t);
    *t = st ? NULL : c;
    return st;
}

static sg_status materialize_list(sg_status st, sg_tensor_list *l) {
    for (int32_t i = 0; i < l->len && !st; i++)
        st = materialize(SG_OK, (sg_tensor **)&l->items[i]);
    if (st && l->items) sg_tensor_list_release(l);
    return st;
}

/* aten's view_copy reshapes where no view has the sizes (a copy then already) */
static sg_status view_copy_k(sg_keyset ks, sg_tensor *self, sg_int_list size, sg_tensor **ret) {
    (void)ks;
    sg_status st = reshape_to("view_copy", self, size, false, ret);
    return !st && (*ret)->storage == self->storage ? materialize(SG_OK, ret) : st;
}
static sg_status view_copy_dtype_k(sg_keyset ks, sg_tensor *self, sg_dtype dtype,
                                   sg_tensor **ret) {
    return materialize(view_dtype_k(ks, self, dtype, ret), ret);
}
static sg_status as_strided_copy_k(sg_keyset ks, sg_tensor *self, sg_int_list size,
                                   sg_int_list stride, const int64_t *offset, sg_tensor **ret) {
    return materialize(as_strided_k(ks, self, size, stride, offset, ret), ret);
}
static sg_status expand_copy_k(sg_keyset ks, sg_tensor *self, sg_int_list size, bool implicit,
                               sg_tensor **ret) {
    return materialize(expand_k(ks, self, size, implicit, ret), ret);
}
static sg_status permute_copy_k(sg_keyset ks, sg_tensor *self, sg_int_list dims,
                                sg_tensor **ret) {
    return materialize(permute_k(ks, self, dims, ret), ret);
}
static sg_status reshape_alias_copy_k(sg_keyset ks, sg_tensor *self, sg_int_list size,
                                      sg_int_list stride, sg_tensor **ret) {
    return materialize(reshape_alias_k(ks, self, size, stride, ret), ret);
}
static sg_status select_copy_k(sg_keyset ks, sg_tensor *self, int64_t dim, int64_t index,
                               sg_tensor **ret) {
    return materialize(select_k(ks, self, dim, index, ret), ret);
}
static sg_status slice_copy_k(sg_keyset ks, sg_tensor *self, int64_t dim, const int64_t *start,
                              const int64_t *end, int64_t step, sg_tensor **ret) {
    return materialize(slice_k(ks, self, dim, start, end, step, ret), ret);
}
static sg_status squeeze_copy_k(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    return materialize(squeeze_k(ks, self, ret), ret);
}
static sg_status squeeze_copy_dim_k(sg_keyset ks, sg_tensor *self, int64_t dim,
                                    sg_tensor **ret) {
    return materialize(squeeze_dim_k(ks, self, dim, ret), ret);
}
static sg_status squeeze_copy_dims_k(sg_keyset ks, sg_tensor *self, sg_int_list dims,
                                     sg_tensor **ret) {
    return materialize(squeeze_dims_k(ks, self, dims, ret), ret);
}
static sg_status t_copy_k(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    return materialize(t_k(ks, self, ret), ret);
}
static sg_status transpose_copy_k(sg_keyset ks, sg_tensor *self, int64_t d0, int64_t d1,
                                  sg_tensor **ret) {
    return materialize(transpose_k(ks, self, d0, d1, ret), ret);
}
static sg_status unsqueeze_copy_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor **ret) {
    return materialize(unsqueeze_k(ks, self, dim, ret), ret);
}
static sg_status alias_copy_k(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    return sg_tensor_clone(self, ret);
}
static sg_status narrow_copy_k(sg_keyset ks, sg_tensor *self, int64_t dim, int64_t start,
                               int64_t length, sg_tensor **ret) {
    return materialize(narrow_k(ks, self, dim, start, length, ret), ret);
}
static sg_status split_copy_k(sg_keyset ks, sg_tensor *self, int64_t split_size, int64_t dim,
                              sg_tensor_list *ret) {
    return materialize_list(split_k(ks, self, split_size, dim, ret), ret);
}
static sg_status split_with_sizes_copy_k(sg_keyset ks, sg_tensor *self, sg_int_list split,
                                         int64_t dim, sg_tensor_list *ret) {
    return materialize_list(split_with_sizes_k(ks, self, split, dim, ret), ret);
}

static sg_status unbind_copy_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor_list *ret) {
    (void)ks;
    return materialize_list(unbind_view("unbind_copy", self, dim, ret), ret);
}

/* out= forms: each out tensor takes its piece's shape (resized where it differs), then the
 * piece's elements (same dtype, as aten's copy variants ask) */
static sg_status copy_into(const char *op, sg_tensor *out, const sg_tensor *v) {
    if (out->dtype != v->dtype)
        return sg_error(SG_EINVAL, "%s: expected out to have dtype %s, but got %s", op,
                        sg_dtype_name((sg_dtype)v->dtype), sg_dtype_name((sg_dtype)out->dtype));
    return sg_tensor_copy_out_(out, v);
}

static sg_status copy_list_out(const char *op, sg_status st, sg_tensor_list views,
                               sg_tensor_list out) {
    if (!st && views.len != out.len)
        st = sg_error(SG_EINVAL, "%s: expected %d output tensors, got %d", op, views.len, out.len);
    for (int32_t i = 0; i < out.len && !st; i++) st = copy_into(op, out.items[i], views.items[i]);
    if (views.items) sg_tensor_list_release(&views);
    return st;
}

/* Rationale: aten's split_copy.Tensor_out copy_s each piece into its out tensor, which is
 * neither resized nor dtype-checked: a piece broadcasts to it and is cast, unlike the other
 * copy variants here. */
static sg_status split_copy_out_k(sg_keyset ks, sg_tensor *self, int64_t split_size,
                                  int64_t dim, sg_tensor_list out) {
    sg_tensor_list v = {NULL, 0};
    sg_status      st = split_k(ks, self, split_size, dim, &v);
    if (!st && v.len != out.len)
        st = sg_error(SG_EINVAL, "split_copy: expected %d output tensors, got %d", v.len, out.len);
    for (int32_t i = 0; i < out.len && !st; i++) {
        sg_tensor *r = NULL;
        st = aten_copy_(out.items[i], v.items[i], false, &r);
        sg_tensor_release(r);
    }
    if (v.items) sg_tensor_list_release(&v);
    return st;
}

static sg_status split_with_sizes_copy_out_k(sg_keyset ks, sg_tensor *self, sg_int_list split,
                                             int64_t dim, sg_tensor_list out) {
    sg_tensor_list v = {NULL, 0};
    sg_status      st = split_with_sizes_k(ks, self, split, dim, &v);
    return copy_list_out("split_with_sizes_copy", st, v, out);
}

static sg_status unbind_copy_out_k(sg_keyset ks, sg_tensor *self, int64_t dim,
                                   sg_tensor_list out) {
    (void)ks;
    sg_tensor_list v = {NULL, 0};
    sg_status      st = unbind_view("unbind_copy", self, dim, &v);
    return copy_list_out("unbind_copy", st, v, out);
}

static sg_status narrow_copy_out_k(sg_keyset ks, sg_tensor *self, int64_t dim, int64_t start,
                                   int64_t length, sg_tensor *out, sg_tensor **ret) {
    sg_tensor *v;
    sg_status  st = narrow_k(ks, self, dim, start, length, &v);
    if (st) return st;
    st = copy_into("narrow_copy", out, v);
    sg_tensor_release(v);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

/* ---- registration ------------------------------------------------------------------------- */

/* Every backend's at once (CompositeExplicitAutograd): the kernels touch no element, or copy
 * through the runtime; decompositions into other ops are CompositeImplicitAutograd. */
sg_status sg_cpu_register_views(void) {
    SG_REG_EXPLICIT(aten_view, view_k);
    SG_REG_EXPLICIT(aten_view_dtype, view_dtype_k);
    SG_REG_EXPLICIT(aten_reshape, reshape_k);
    SG_REG_EXPLICIT(aten__reshape_alias, reshape_alias_k);
    SG_REG_EXPLICIT(aten__unsafe_view, unsafe_view_k);
    SG_REG_EXPLICIT(aten_as_strided, as_strided_k);
    SG_REG_EXPLICIT(aten_as_strided_, as_strided__k);
    SG_REG_EXPLICIT(aten_alias, alias_k);
    SG_REG_EXPLICIT(aten_transpose_int, transpose_k);
    SG_REG_EXPLICIT(aten_transpose_, transpose__k);
    SG_REG_EXPLICIT(aten_t, t_k);
    SG_REG_EXPLICIT(aten_t_, t__k);
    SG_REG_EXPLICIT(aten_permute, permute_k);
    SG_REG_EXPLICIT(aten_expand, expand_k);
    SG_REG_EXPLICIT(aten_slice_Tensor, slice_k);
    SG_REG_EXPLICIT(aten_select_int, select_k);
    SG_REG_EXPLICIT(aten_narrow, narrow_k);
    SG_REG_EXPLICIT(aten_narrow_Tensor, narrow_tensor_k);
    SG_REG_EXPLICIT(aten_unsqueeze, unsqueeze_k);
    SG_REG_EXPLICIT(aten_unsqueeze_, unsqueeze__k);
    SG_REG_EXPLICIT(aten_squeeze, squeeze_k);
    SG_REG_EXPLICIT(aten_squeeze_dim, squeeze_dim_k);
    SG_REG_EXPLICIT(aten_squeeze_dims, squeeze_dims_k);
    SG_REG_EXPLICIT(aten_squeeze_, squeeze__k);
    SG_REG_EXPLICIT(aten_squeeze__dim, squeeze__dim_k);
    SG_REG_EXPLICIT(aten_squeeze__dims, squeeze__dims_k);
    SG_REG_EXPLICIT(aten_flatten_using_ints, flatten_k);
    /* their decompositions: the same checks, the view or copy made by aten calls */
    SG_REG_DECOMP(aten_reshape, reshape_ad);
    SG_REG_DECOMP(aten_narrow, narrow_ad);
    SG_REG_DECOMP(aten_narrow_Tensor, narrow_tensor_ad);
    SG_REG_DECOMP(aten_flatten_using_ints, flatten_ad);
    SG_REG_EXPLICIT(aten_split_Tensor, split_k);
    SG_REG_EXPLICIT(aten_split_with_sizes, split_with_sizes_k);
    SG_REG_EXPLICIT(aten_unbind_int, unbind_k);
    SG_REG_DECOMP(aten_split_sizes, split_sizes_k);
    SG_REG_DECOMP(aten_chunk, chunk_k);
    SG_REG_EXPLICIT(aten_view_copy, view_copy_k);
    SG_REG_EXPLICIT(aten_view_copy_dtype, view_copy_dtype_k);
    SG_REG_EXPLICIT(aten_as_strided_copy, as_strided_copy_k);
    SG_REG_EXPLICIT(aten_expand_copy, expand_copy_k);
    SG_REG_EXPLICIT(aten_permute_copy, permute_copy_k);
    SG_REG_EXPLICIT(aten__reshape_alias_copy, reshape_alias_copy_k);
    SG_REG_EXPLICIT(aten_select_copy_int, select_copy_k);
    SG_REG_EXPLICIT(aten_slice_copy_Tensor, slice_copy_k);
    SG_REG_EXPLICIT(aten_squeeze_copy, squeeze_copy_k);
    SG_REG_EXPLICIT(aten_squeeze_copy_dim, squeeze_copy_dim_k);
    SG_REG_EXPLICIT(aten_squeeze_copy_dims, squeeze_copy_dims_k);
    SG_REG_EXPLICIT(aten_t_copy, t_copy_k);
    SG_REG_EXPLICIT(aten_transpose_copy_int, transpose_copy_k);
    SG_REG_EXPLICIT(aten_unsqueeze_copy, unsqueeze_copy_k);
    SG_REG_EXPLICIT(aten_alias_copy, alias_copy_k);
    SG_REG_EXPLICIT(aten_narrow_copy, narrow_copy_k);
    SG_REG_EXPLICIT(aten_narrow_copy_out, narrow_copy_out_k);
    SG_REG_EXPLICIT(aten_split_copy_Tensor, split_copy_k);
    SG_REG_EXPLICIT(aten_split_with_sizes_copy, split_with_sizes_copy_k);
    SG_REG_EXPLICIT(aten_split_copy_Tensor_out, split_copy_out_k);
    SG_REG_EXPLICIT(aten_split_with_sizes_copy_out, split_with_sizes_copy_out_k);
    SG_REG_EXPLICIT(aten_unbind_copy_int, unbind_copy_k);
    SG_REG_EXPLICIT(aten_unbind_copy_int_out, unbind_copy_out_k);
    return SG_OK;
}
