/* index.c: joining (cat, stack), indexing (index_select, gather, scatter, scatter_add,
 * embedding, where(condition)), triangles (tril, triu), ordering (sort, topk), and the
 * elementwise selections (where, masked_fill, clamp, pow with a Scalar).
 *
 * The semantics are aten's: cat promotes its inputs and skips legacy empty [0] tensors, index
 * tensors are int64 (index_select and embedding also take int32) and are bounds-checked before
 * anything is written, sort is stable with NaN ordered above every number, topk returns the
 * first of equal values first, where needs a bool condition (uint8 too, as aten still allows)
 * and promotes self with other (wrapped numbers for the Scalar overloads), clamp promotes an
 * integral tensor with its bounds and propagates NaN, and pow refuses integers to negative
 * integer powers. Structured ops register their meta function and out kernel; the generator's
 * composites make the functional and in-place forms.
 *
 * Gathers and scatters move elements as bytes (any dtype); arithmetic (scatter's reductions,
 * clamp, pow) has one loop per dtype. The elementwise ones run on the strided iterator. */
#include "cpu.h"
#include "sg_index_shape.h"
#include "sg_pointwise_shape.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- helpers ------------------------------------------------------------------------------ */

static sg_dtype dt(const sg_tensor *t) { return (sg_dtype)t->dtype; }
static size_t   esize(const sg_tensor *t) { return sg_dtype_size(dt(t)); }

static sg_status need_cpu(const char *op, const sg_tensor *t) {
    if (t->device.type == SG_DEV_CPU) return SG_OK;
    return sg_error(SG_EINVAL, "%s: expected a tensor on the CPU, got one on %s", op,
                    sg_device_type_name((sg_device_type)t->device.type));
}

/* An out= tensor of a structured op made ready for its meta's result: on the CPU, of the
 * dtype (exactly, or one it casts to), resized where its shape differs. */
static sg_status prep_out(const char *op, sg_tensor *out, const sg_meta *m, bool exact) {
    sg_status st = need_cpu(op, out);
    return st ? st : sg_index_out_ready(op, out, m, exact);
}

static char *elem(const sg_tensor *t, const int64_t *c, int32_t n) {
    int64_t off = 0;
    for (int32_t d = 0; d < n && d < t->ndim; d++) off += c[d] * t->strides[d];
    return (char *)sg_tensor_data(t) + off * (int64_t)esize(t);
}

/* Advances an odometer over sizes (outermost first); false once it wraps. */
static bool next_coord(int64_t *c, const int64_t *sizes, int32_t n) {
    for (int32_t d = n - 1; d >= 0; d--) {
        if (++c[d] < sizes[d]) return true;
        c[d] = 0;
    }
    return false;
}

/* aten's ensure_nonempty: a 0-dim tensor seen as [1] */
static int32_t ne_dim(const sg_tensor *t) { return t->ndim > 0 ? t->ndim : 1; }
static int64_t ne_size(const sg_tensor *t, int32_t d) { return t->ndim > 0 ? t->sizes[d] : 1; }

/* ---- cat, stack --------------------------------------------------------------------------- */

/* aten's cat_should_skip_tensor: the legacy empty tensor of shape [0] */
static bool skipped(const sg_tensor *t) { return t->ndim == 1 && t->sizes[0] == 0; }

/* cat's checks and result (aten's cat meta); *dimp gets the wrapped dim. */
static sg_status cat_check(sg_tensor_list ts, int64_t *dimp, sg_meta *m) {
    if (ts.len == 0) return sg_error(SG_EINVAL, "cat: expected a non-empty list of Tensors");
    for (int32_t i = 0; i < ts.len; i++) {
        if (!ts.items[i]) return sg_error(SG_EINVAL, "cat: tensor %d is None", i);
        if (ts.items[i]->ndim == 0)
            return sg_error(SG_EINVAL, "cat: zero-dimensional tensor (at position %d) cannot be "
                                       "concatenated",
                            i);
        if (ts.items[i]->device.type != ts.items[0]->device.type ||
            ts.items[i]->device.index != ts.items[0]->device.index)
            return sg_error(SG_EINVAL, "cat: Expected all tensors to be on the same device, but "
                                       "found at least two devices, %s and %s!",
                            sg_device_type_name((sg_device_type)ts.items[0]->device.type),
                            sg_device_type_name((sg_device_type)ts.items[i]->device.type));
    }
    int32_t valid = ts.len;
    for (int32_t i = 0; i < ts.len && valid == ts.len; i++)
        if (!skipped(ts.items[i])) valid = i;
    sg_result_type r;
    sg_rt_init(&r);
    for (int32_t i = 0; i < ts.len; i++) sg_rt_tensor(&r, ts.items[i]);
    sg_dtype out_dtype = sg_rt_result(&r);
    if (valid == ts.len) { /* every input is a legacy empty tensor: the result is [0] */
        sg_index_meta_of(m, (int64_t[]){0}, 1, out_dtype, ts.items[0]->device);
        return SG_OK;
    }
    const sg_tensor *first = ts.items[valid];
    sg_status        st = sg_check_dim("cat", dimp, first->ndim);
    if (st) return st;
    int64_t dim = *dimp, total = 0;
    for (int32_t i = 0; i < ts.len; i++) {
        const sg_tensor *t = ts.items[i];
        if (skipped(t)) continue;
        if (t->ndim != first->ndim)
            return sg_error(SG_EINVAL, "cat: Tensors must have same number of dimensions: got %d "
                                       "and %d",
                            first->ndim, t->ndim);
        for (int32_t d = 0; d < t->ndim; d++)
            if (d != dim && t->sizes[d] != first->sizes[d])
                return sg_error(SG_EINVAL, "cat: Sizes of tensors must match except in dimension "
                                           "%lld. Expected size %lld but got size %lld for tensor "
                                           "number %d in the list.",
                                (long long)dim, (long long)first->sizes[d],
                                (long long)t->sizes[d], i);
        total += t->sizes[dim];
    }
    sg_index_meta_of(m, first->sizes, first->ndim, out_dtype, first->device);
    m->sizes[dim] = total;
    return SG_OK;
}

static sg_status cat_meta(sg_tensor_list ts, int64_t dim, sg_meta *m) {
    return cat_check(ts, &dim, m);
}

static sg_status cat_out_k(sg_keyset ks, sg_tensor_list ts, int64_t dim, sg_tensor *out,
                           sg_tensor **ret) {
    (void)ks;
    sg_meta   m;
    sg_status st = cat_check(ts, &dim, &m);
    *ret = NULL;
    if (st) return st;
    if (!sg_dtype_can_cast(m.dtype, dt(out)))
        return sg_error(SG_EINVAL, "cat: input types can't be cast to the desired output type %s",
                        sg_dtype_c10_name(dt(out)));
    for (int32_t i = 0; i < ts.len; i++)
        if ((st = need_cpu("cat", ts.items[i])) ||
            (st = sg_index_no_overlap("cat", out, ts.items[i])))
            return st;
    m.dtype = dt(out);
    if ((st = prep_out("cat", out, &m, false))) return st;
    int64_t at = 0;
    for (int32_t i = 0; i < ts.len && !st; i++) {
        sg_tensor *t = ts.items[i], *part;
        if (skipped(t)) continue;
        if (!(st = sg_tensor_slice(out, dim, at, at + t->sizes[dim], 1, &part))) {
            st = sg_cast_copy_(part, t);
            sg_tensor_release(part);
        }
        at += t->sizes[dim];
    }
    if (!st) *ret = sg_tensor_retain(out);
    return st;
}

/* stack: every tensor of one shape, each unsqueezed at dim, then cat. One kernel for every
 * backend (CompositeExplicitAutograd, as aten's): the cat it calls is dispatched, so the
 * backend's own cat does the work. */
static sg_status stack_run(sg_tensor_list ts, int64_t dim, sg_tensor *out, sg_tensor **ret) {
    sg_status st = sg_index_stack_check(ts, &dim);
    *ret = NULL;
    if (st) return st;
    sg_tensor **u = calloc((size_t)ts.len, sizeof *u);
    if (!u) return sg_error(SG_ENOMEM, "stack: out of memory");
    for (int32_t i = 0; i < ts.len && !st; i++) st = sg_tensor_unsqueeze(ts.items[i], dim, &u[i]);
    sg_tensor_list l = {u, ts.len};
    if (!st) st = out ? aten_cat_out(l, dim, out, ret) : aten_cat(l, dim, ret);
    for (int32_t i = 0; i < ts.len; i++) sg_tensor_release(u[i]);
    free(u);
    return st;
}

static sg_status stack_k(sg_keyset ks, sg_tensor_list ts, int64_t dim, sg_tensor **ret) {
    (void)ks;
    return stack_run(ts, dim, NULL, ret);
}

static sg_status stack_out_k(sg_keyset ks, sg_tensor_list ts, int64_t dim, sg_tensor *out,
                             sg_tensor **ret) {
    (void)ks;
    return stack_run(ts, dim, out, ret);
}

/* ---- index_select, embedding -------------------------------------------------------------- */

/* The index as contiguous int64 on the CPU (int32 widened). */
static sg_status index_i64(const sg_tensor *index, sg_tensor **out) {
    sg_status st = need_cpu("index", index);
    return st ? st : sg_cast(index, SG_INT64, out);
}

/* result = self's rows idx[] along dim: the shape of self with dim of size n (0-dim self: one
 * element). Checks the indices first. */
static sg_status index_select_run(const char *op, sg_tensor *self, int64_t dim, sg_tensor *index,
                                  sg_tensor *out, sg_tensor **ret) {
    int64_t   numel = sg_tensor_numel(index);
    sg_meta   m;
    sg_status st;
    *ret = NULL;
    if ((st = sg_index_select_check(op, self, &dim, index, out, &m)) ||
        (st = need_cpu(op, self)))
        return st;
    if (out && ((st = sg_index_no_overlap(op, out, self)) ||
                (st = sg_index_no_overlap(op, out, index)) || (st = prep_out(op, out, &m, true))))
        return st;

    sg_tensor *idx = NULL, *src = NULL, *res = NULL;
    if ((st = index_i64(index, &idx))) return st;
    const int64_t *iv = sg_tensor_data(idx);
    int64_t        dsize = self->ndim ? self->sizes[dim] : 1;
    for (int64_t i = 0; i < numel && !st; i++)
        if (iv[i] < 0 || iv[i] >= dsize) st = sg_error(SG_EINVAL, "%s: index out of range in self", op);
    if (!st) st = sg_cast(self, dt(self), &src); /* contiguous */
    if (!st) {
        if (out && sg_tensor_is_contiguous(out)) res = sg_tensor_retain(out);
        else st = sg_tensor_empty(m.sizes, m.ndim, dt(self), SG_CPU, &res);
    }
    if (!st) {
        int64_t outer = 1, inner = (int64_t)esize(self);
        for (int64_t d = 0; d < dim; d++) outer *= self->sizes[d];
        for (int64_t d = dim + 1; d < self->ndim; d++) inner *= self->sizes[d];
        const char *s = sg_tensor_data(src);
        char       *o = sg_tensor_data(res);
        for (int64_t a = 0; a < outer; a++)
            for (int64_t i = 0; i < numel; i++)
                memcpy(o + (a * numel + i) * inner, s + (a * dsize + iv[i]) * inner,
                       (size_t)inner);
        if (out && res != out) st = sg_tensor_copy_(out, res);
    }
    sg_tensor_release(src);
    sg_tensor_release(idx);
    if (st) {
        sg_tensor_release(res);
        return st;
    }
    if (out) {
        sg_tensor_release(res);
        *ret = sg_tensor_retain(out);
    } else {
        *ret = res;
    }
    return SG_OK;
}

static sg_status index_select_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                                sg_tensor **ret) {
    (void)ks;
    return index_select_run("index_select", self, dim, index, NULL, ret);
}

static sg_status index_select_out_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                                    sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return index_select_run("index_select", self, dim, index, out, ret);
}

/* embedding: the rows of weight the indices name, shaped indices.shape + [weight.size(1)]. One
 * kernel for every backend (CompositeExplicitAutograd, as aten's): the index_select it calls is
 * dispatched, so the backend's own gathers the rows. */
static sg_status embedding_k(sg_keyset ks, sg_tensor *weight, sg_tensor *indices,
                             int64_t padding_idx, bool scale_grad_by_freq, bool sparse,
                             sg_tensor **ret) {
    (void)ks, (void)padding_idx, (void)scale_grad_by_freq, (void)sparse;
    *ret = NULL;
    sg_status st = sg_index_embedding_check(weight, indices);
    if (st) return st;
    int64_t    all = -1, shape[SG_MAX_DIMS];
    sg_tensor *idx = NULL, *rows = NULL;
    if (!(st = aten_reshape(indices, (sg_int_list){&all, 1}, &idx)) &&
        !(st = aten_index_select(weight, 0, idx, &rows))) {
        memcpy(shape, indices->sizes, (size_t)indices->ndim * sizeof *shape);
        shape[indices->ndim] = weight->sizes[1];
        st = sg_tensor_view(rows, shape, indices->ndim + 1, ret);
    }
    sg_tensor_release(rows);
    sg_tensor_release(idx);
    return st;
}

/* ---- gather, scatter ---------------------------------------------------------------------- */

static sg_status gather_check(sg_tensor *self, int64_t *dim, sg_tensor *index, sg_meta *m) {
    char      a[160], b[160];
    sg_status st = sg_check_dim("gather", dim, self->ndim);
    if (st) return st;
    if (sg_tensor_numel(index) != 0) {
        if (dt(index) != SG_INT64 && dt(index) != SG_INT32)
            return sg_error(SG_EINVAL, "gather: gather(): Expected dtype int32/int64 for index");
        if (ne_dim(self) != ne_dim(index))
            return sg_error(SG_EINVAL, "gather: Index tensor must have the same number of "
                                       "dimensions as input tensor");
        for (int32_t d = 0; d < ne_dim(self); d++)
            if (d != *dim && ne_size(index, d) > ne_size(self, d))
                return sg_error(SG_EINVAL, "gather: Size does not match at dimension %d expected "
                                           "index %s to be no larger than self %s apart from "
                                           "dimension %lld",
                                d, sg_shape_str(index->sizes, index->ndim, a, sizeof a),
                                sg_shape_str(self->sizes, self->ndim, b, sizeof b),
                                (long long)*dim);
    }
    sg_index_meta_of(m, index->sizes, index->ndim, dt(self), self->device);
    return SG_OK;
}

static sg_status gather_meta(sg_tensor *self, int64_t dim, sg_tensor *index, bool sparse_grad,
                             sg_meta *m) {
    (void)sparse_grad;
    return gather_check(self, &dim, index, m);
}

/* Every index of idx (read through its strides) in [0, bound), else aten's message. */
static sg_status check_indices(const char *op, const sg_tensor *idx, int64_t dim,
                               int64_t bound) {
    int64_t c[SG_MAX_DIMS] = {0}, isz[SG_MAX_DIMS];
    int32_t n = ne_dim(idx);
    if (sg_tensor_numel(idx) == 0) return SG_OK;
    for (int32_t d = 0; d < n; d++) isz[d] = ne_size(idx, d);
    do {
        int64_t v = *(const int64_t *)elem(idx, c, n);
        if (v < 0 || v >= bound)
            return sg_error(SG_EINVAL, "%s: index %lld is out of bounds for dimension %lld with "
                                       "size %lld",
                            op, (long long)v, (long long)dim, (long long)bound);
    } while (next_coord(c, isz, n));
    return SG_OK;
}

static sg_status gather_out_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                              bool sparse_grad, sg_tensor *out, sg_tensor **ret) {
    (void)ks, (void)sparse_grad;
    sg_meta   m;
    sg_status st = gather_check(self, &dim, index, &m);
    *ret = NULL;
    if (st || (st = need_cpu("gather", self)) || (st = need_cpu("gather", index)) ||
        (st = sg_index_no_overlap("gather", out, self)) ||
        (st = sg_index_no_overlap("gather", out, index)) || (st = prep_out("gather", out, &m, true)))
        return st;
    sg_tensor *idx = NULL;
    if (sg_tensor_numel(index) > 0) {
        if ((st = index_i64(index, &idx)) ||
            (st = check_indices("gather", idx, dim, ne_size(self, (int32_t)dim)))) {
            sg_tensor_release(idx);
            return st;
        }
        int64_t c[SG_MAX_DIMS] = {0}, sc[SG_MAX_DIMS], isz[SG_MAX_DIMS];
        int32_t n = ne_dim(idx);
        size_t  es = esize(self);
        for (int32_t d = 0; d < n; d++) isz[d] = ne_size(idx, d);
        do {
            memcpy(sc, c, (size_t)n * sizeof *sc);
            sc[dim] = *(const int64_t *)elem(idx, c, n);
            memcpy(elem(out, c, n), elem(self, sc, n), es);
        } while (next_coord(c, isz, n));
        sg_tensor_release(idx);
    }
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

static sg_status scatter_check(const char *op, sg_tensor *self, int64_t *dim, sg_tensor *index,
                               const sg_tensor *src, sg_meta *m) {
    char      a[160], b[160], c[160];
    sg_status st = sg_check_dim(op, dim, self->ndim);
    if (st) return st;
    if (sg_tensor_numel(index) != 0 && dt(index) != SG_INT64 && dt(index) != SG_INT32)
        return sg_error(SG_EINVAL, "%s: scatter(): Expected dtype int32/int64 for index", op);
    if (src && dt(src) != dt(self))
        return sg_error(SG_EINVAL, "%s: %s(): Expected self.dtype to be equal to src.dtype", op,
                        op);
    if (sg_tensor_numel(index) != 0) {
        if (ne_dim(self) != ne_dim(index))
            return sg_error(SG_EINVAL, "%s: Index tensor must have the same number of dimensions "
                                       "as self tensor",
                            op);
        bool wrong = false;
        for (int32_t d = 0; d < ne_dim(self) && !wrong; d++)
            wrong = d != *dim && ne_size(index, d) > ne_size(self, d);
        if (src && ne_dim(src) != ne_dim(index))
            return sg_error(SG_EINVAL, "%s: Index tensor must have the same number of dimensions "
                                       "as src tensor",
                            op);
        for (int32_t d = 0; src && d < ne_dim(self) && !wrong; d++)
            wrong = ne_size(index, d) > ne_size(src, d);
        if (wrong && src)
            return sg_error(SG_EINVAL, "%s: Expected index %s to be no larger than self %s apart "
                                       "from dimension %lld and to be no larger size than src %s",
                            op, sg_shape_str(index->sizes, index->ndim, a, sizeof a),
                            sg_shape_str(self->sizes, self->ndim, b, sizeof b), (long long)*dim,
                            sg_shape_str(src->sizes, src->ndim, c, sizeof c));
        if (wrong)
            return sg_error(SG_EINVAL, "%s: Expected index %s to be no larger than self %s apart "
                                       "from dimension %lld",
                            op, sg_shape_str(index->sizes, index->ndim, a, sizeof a),
                            sg_shape_str(self->sizes, self->ndim, b, sizeof b), (long long)*dim);
    }
    sg_index_meta_of(m, self->sizes, self->ndim, dt(self), self->device);
    return SG_OK;
}

/* *d = *d (op) *s for dtype t: mode 1 adds, 2 multiplies (bool: or, and) */
static void combine(sg_dtype t, int mode, char *d, const char *s) {
#define COMBINE(E, T)                                                                    \
    case E: {                                                                            \
        T x = *(T *)d, y = *(const T *)s;                                                \
        *(T *)d = (T)(mode == 1 ? x + y : x * y);                                        \
        break;                                                                           \
    }
#define COMBINE_REDUCED(NAME, NUM, KIND, SIZE, T, SUF, ...)                               \
    case SG_##NAME: {                                                                     \
        float x = SG_REAL_VALUE(KIND, SUF, *(T *)d), y = SG_REAL_VALUE(KIND, SUF, *(const T *)s); \
        *(T *)d = SG_REAL_STORE(KIND, SUF, T, mode == 1 ? x + y : x * y);                 \
        break;                                                                            \
    }
    switch (t) {
        SG_FOR_REAL(COMBINE)
        SG_DTYPES_WHERE(COMBINE_REDUCED, 0, 0, 0, 0, 1, 0)
    default: break;
    }
#undef COMBINE
#undef COMBINE_REDUCED
}

/* dst[index] (op)= src or the value's bytes, along dim, in the index's order (dst and src of
 * one dtype) */
static void scatter_loop(sg_tensor *dst, int64_t dim, const sg_tensor *index,
                         const sg_tensor *src, const char *value, int mode) {
    int64_t c[SG_MAX_DIMS] = {0}, oc[SG_MAX_DIMS], isz[SG_MAX_DIMS];
    int32_t n = ne_dim(index);
    size_t  es = esize(dst);
    for (int32_t d = 0; d < n; d++) isz[d] = ne_size(index, d);
    do {
        memcpy(oc, c, (size_t)n * sizeof *oc);
        oc[dim] = *(const int64_t *)elem(index, c, n);
        char       *d = elem(dst, oc, n);
        const char *s = value ? value : elem(src, c, n);
        if (mode) combine(dt(dst), mode, d, s);
        else memcpy(d, s, es);
    } while (next_coord(c, isz, n));
}

/* out = self (unless the same), then out[index] (op)= src or value, along dim */
static sg_status scatter_run(const char *op, sg_tensor *self, int64_t dim, sg_tensor *index,
                             sg_tensor *src, const sg_scalar *value, int mode, sg_tensor *out,
                             sg_tensor **ret) {
    sg_meta   m;
    sg_status st = scatter_check(op, self, &dim, index, src, &m);
    *ret = NULL;
    if (st || (st = need_cpu(op, self)) || (st = need_cpu(op, index)) ||
        (src && (st = need_cpu(op, src))) || (st = prep_out(op, out, &m, true)) ||
        (st = sg_index_no_overlap(op, out, index)) ||
        (src && (st = sg_index_no_overlap(op, out, src))))
        return st;
    sg_dtype t = dt(self);
    if (mode && sg_dtype_is_complex(t)) return sg_not_implemented(op, t);
    char vbuf[16];
    if (value && (st = sg_index_scalar_bytes(op, *value, t, vbuf))) return st;
    sg_tensor *idx = NULL; /* the index as int64 */
    if (sg_tensor_numel(index) > 0 &&
        ((st = index_i64(index, &idx)) ||
         (st = check_indices(op, idx, dim, ne_size(self, (int32_t)dim))))) {
        sg_tensor_release(idx);
        return st;
    }
    if (out != self && (st = sg_cast_copy_(out, self))) {
        sg_tensor_release(idx);
        return st;
    }
    if (idx) {
        if (mode && (t == SG_FLOAT16 || t == SG_BFLOAT16)) {
            /* reductions of the 16-bit floats accumulate in float, rounded once at the end
             * (aten's opmath) */
            sg_tensor *acc = NULL, *src32 = NULL;
            char       v32[16];
            st = sg_cast(out, SG_FLOAT32, &acc);
            if (!st && src) st = sg_cast(src, SG_FLOAT32, &src32);
            if (!st && value) st = sg_index_scalar_bytes(op, *value, SG_FLOAT32, v32);
            if (!st) {
                scatter_loop(acc, dim, idx, src32, value ? v32 : NULL, mode);
                st = sg_cast_copy_(out, acc);
            }
            sg_tensor_release(src32);
            sg_tensor_release(acc);
        } else {
            scatter_loop(out, dim, idx, src, value ? vbuf : NULL, mode);
        }
        sg_tensor_release(idx);
        if (st) return st;
    }
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

static sg_status scatter_src_meta(sg_tensor *self, int64_t dim, sg_tensor *index, sg_tensor *src,
                                  sg_meta *m) {
    return scatter_check("scatter", self, &dim, index, src, m);
}
static sg_status scatter_src_out_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                                   sg_tensor *src, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return scatter_run("scatter", self, dim, index, src, NULL, 0, out, ret);
}
static sg_status scatter_value_meta(sg_tensor *self, int64_t dim, sg_tensor *index,
                                    sg_scalar value, sg_meta *m) {
    (void)value;
    return scatter_check("scatter", self, &dim, index, NULL, m);
}
static sg_status scatter_value_out_k(sg_keyset ks, sg_tensor *self, int64_t dim,
                                     sg_tensor *index, sg_scalar value, sg_tensor *out,
                                     sg_tensor **ret) {
    (void)ks;
    return scatter_run("scatter", self, dim, index, NULL, &value, 0, out, ret);
}
static sg_status scatter_reduce_meta(sg_tensor *self, int64_t dim, sg_tensor *index,
                                     sg_tensor *src, const char *reduce, sg_meta *m) {
    int       mode = 0;
    sg_status st = scatter_check("scatter", self, &dim, index, src, m);
    return st ? st : sg_index_reduce_of(reduce, &mode);
}
static sg_status scatter_reduce_out_k(sg_keyset ks, sg_tensor *self, int64_t dim,
                                      sg_tensor *index, sg_tensor *src, const char *reduce,
                                      sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    int       mode = 0;
    sg_status st = sg_index_reduce_of(reduce, &mode);
    *ret = NULL;
    return st ? st : scatter_run("scatter", self, dim, index, src, NULL, mode, out, ret);
}
static sg_status scatter_value_reduce_meta(sg_tensor *self, int64_t dim, sg_tensor *index,
                                           sg_scalar value, const char *reduce, sg_meta *m) {
    (void)value;
    int       mode = 0;
    sg_status st = scatter_check("scatter", self, &dim, index, NULL, m);
    return st ? st : sg_index_reduce_of(reduce, &mode);
}
static sg_status scatter_value_reduce_out_k(sg_keyset ks, sg_tensor *self, int64_t dim,
                                            sg_tensor *index, sg_scalar value,
                                            const char *reduce, sg_tensor *out,
                                            sg_tensor **ret) {
    (void)ks;
    int       mode = 0;
    sg_status st = sg_index_reduce_of(reduce, &mode);
    *ret = NULL;
    return st ? st : scatter_run("scatter", self, dim, index, NULL, &value, mode, out, ret);
}
static sg_status scatter_add_meta(sg_tensor *self, int64_t dim, sg_tensor *index, sg_tensor *src,
                                  sg_meta *m) {
    return scatter_check("scatter_add", self, &dim, index, src, m);
}
static sg_status scatter_add_out_k(sg_keyset ks, sg_tensor *self, int64_t dim, sg_tensor *index,
                                   sg_tensor *src, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return scatter_run("scatter_add", self, dim, index, src, NULL, 1, out, ret);
}

/* ---- tril, triu --------------------------------------------------------------------------- */

static sg_status tri_meta(const char *op, sg_tensor *self, sg_meta *m) {
    if (self->ndim < 2)
        return sg_error(SG_EINVAL, "%s: input tensor must have at least 2 dimensions", op);
    sg_index_meta_of(m, self->sizes, self->ndim, dt(self), self->device);
    return SG_OK;
}
static sg_status tril_meta(sg_tensor *self, int64_t diagonal, sg_meta *m) {
    (void)diagonal;
    return tri_meta("tril", self, m);
}
static sg_status triu_meta(sg_tensor *self, int64_t diagonal, sg_meta *m) {
    (void)diagonal;
    return tri_meta("triu", self, m);
}

/* out = self with the elements off the triangle zeroed: tril keeps j - i <= k, triu j - i >= k */
static sg_status tri_run(const char *op, bool lower, sg_tensor *self, int64_t k, sg_tensor *out,
                         sg_tensor **ret) {
    sg_meta   m;
    sg_status st = tri_meta(op, self, &m);
    *ret = NULL;
    if (st || (st = need_cpu(op, self)) || (st = prep_out(op, out, &m, true))) return st;
    sg_tensor *src = NULL;
    if (out == self) {
        src = sg_tensor_retain(self);
    } else if (sg_may_overlap(out, self)) {
        if ((st = sg_tensor_clone(self, &src))) return st;
    } else {
        src = sg_tensor_retain(self);
    }
    int32_t n = self->ndim;
    int64_t c[SG_MAX_DIMS] = {0};
    size_t  es = esize(self);
    if (sg_tensor_numel(self) > 0) do {
            int64_t j = c[n - 1], i = c[n - 2];
            bool    keep = lower ? j - i <= k : j - i >= k;
            char   *o = elem(out, c, n);
            if (!keep) memset(o, 0, es);
            else if (out != self) memcpy(o, elem(src, c, n), es);
        } while (next_coord(c, self->sizes, n));
    sg_tensor_release(src);
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

static sg_status tril_out_k(sg_keyset ks, sg_tensor *self, int64_t diagonal, sg_tensor *out,
                            sg_tensor **ret) {
    (void)ks;
    return tri_run("tril", true, self, diagonal, out, ret);
}
static sg_status triu_out_k(sg_keyset ks, sg_tensor *self, int64_t diagonal, sg_tensor *out,
                            sg_tensor **ret) {
    (void)ks;
    return tri_run("triu", false, self, diagonal, out, ret);
}

/* ---- sort, topk --------------------------------------------------------------------------- */

/* One slice's keys: doubles for floating dtypes (NaN above every number), int64 otherwise. */
typedef struct sorter {
    const double  *f;
    const int64_t *i;
    bool           fl, desc;
} sorter;

static bool goes_before(const sorter *s, int64_t a, int64_t b) {
    if (s->fl) {
        double x = s->f[a], y = s->f[b];
        return s->desc ? (isnan(x) && !isnan(y)) || x > y : (!isnan(x) && isnan(y)) || x < y;
    }
    return s->desc ? s->i[a] > s->i[b] : s->i[a] < s->i[b];
}

/* A stable bottom-up merge sort of idx[0..n) (tmp: room for n). */
static void merge_sort(const sorter *s, int64_t *idx, int64_t *tmp, int64_t n) {
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) tmp[k++] = goes_before(s, idx[b], idx[a]) ? idx[b++] : idx[a++];
            while (a < mid) tmp[k++] = idx[a++];
            while (b < hi) tmp[k++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

static bool nonzero_at(const char *p, sg_dtype t) {
    if (sg_dtype_is_floating(t)) return sg_load_double(t, p) != 0;
    if (t == SG_COMPLEX64) return ((const float *)p)[0] != 0 || ((const float *)p)[1] != 0;
    if (t == SG_COMPLEX128) return ((const double *)p)[0] != 0 || ((const double *)p)[1] != 0;
    return sg_load_int64(t, p) != 0;
}

/* Sorts every slice of self along dim and writes the first k of each (values: self's elements,
 * indices: int64) into values and indices, shaped as self with dim of size k. */
static sg_status sort_slices(sg_tensor *self, int64_t dim, bool desc, int64_t k,
                             sg_tensor *values, sg_tensor *indices) {
    int32_t n = ne_dim(self);
    int64_t len = ne_size(self, (int32_t)dim), c[SG_MAX_DIMS] = {0}, sz[SG_MAX_DIMS];
    sg_dtype t = dt(self);
    size_t   es = esize(self);
    bool     fl = sg_dtype_is_floating(t);
    if (sg_tensor_numel(self) == 0 || k == 0) return SG_OK;
    double  *fk = fl ? malloc((size_t)len * sizeof *fk) : NULL;
    int64_t *ik = fl ? NULL : malloc((size_t)len * sizeof *ik);
    int64_t *idx = malloc((size_t)len * sizeof *idx), *tmp = malloc((size_t)len * sizeof *tmp);
    if ((!fk && !ik) || !idx || !tmp) {
        free(fk), free(ik), free(idx), free(tmp);
        return sg_error(SG_ENOMEM, "out of memory");
    }
    sorter s = {fk, ik, fl, desc};
    for (int32_t d = 0; d < n; d++) sz[d] = d == dim ? 1 : ne_size(self, d);
    int64_t vs = values->ndim ? values->strides[dim] * (int64_t)es : 0;
    int64_t xs = indices->ndim ? indices->strides[dim] * 8 : 0;
    int64_t ss = self->ndim ? self->strides[dim] * (int64_t)es : 0;
    do {
        const char *sp = elem(self, c, n);
        for (int64_t i = 0; i < len; i++) {
            if (fl) fk[i] = sg_load_double(t, sp + i * ss);
            else ik[i] = sg_load_int64(t, sp + i * ss);
            idx[i] = i;
        }
        merge_sort(&s, idx, tmp, len);
        char *vp = elem(values, c, n), *xp = elem(indices, c, n);
        for (int64_t i = 0; i < k; i++) {
            memcpy(vp + i * vs, sp + idx[i] * ss, es);
            *(int64_t *)(xp + i * xs) = idx[i];
        }
    } while (next_coord(c, sz, n));
    free(fk), free(ik), free(idx), free(tmp);
    return SG_OK;
}

static sg_status sort_meta(sg_tensor *self, const bool *stable, int64_t dim, bool descending,
                           sg_meta *m) {
    (void)stable, (void)descending;
    sg_status st = sg_check_dim("sort", &dim, self->ndim);
    if (st) return st;
    sg_index_meta_of(&m[0], self->sizes, self->ndim, dt(self), self->device);
    sg_index_meta_of(&m[1], self->sizes, self->ndim, SG_INT64, self->device);
    /* aten sorts into self's layout (made dense where self is not) */
    sg_meta_follow(&m[0], self, NULL, NULL);
    sg_meta_follow(&m[1], self, NULL, NULL);
    return SG_OK;
}

static sg_status sort_out_k(sg_keyset ks, sg_tensor *self, const bool *stable, int64_t dim,
                            bool descending, sg_tensor *values, sg_tensor *indices,
                            sg_tensor **ret_values, sg_tensor **ret_indices) {
    (void)ks, (void)stable;
    sg_meta   m[2];
    sg_status st = sort_meta(self, stable, dim, descending, m);
    *ret_values = *ret_indices = NULL;
    if (st || (st = sg_check_dim("sort", &dim, self->ndim))) return st;
    if (sg_dtype_is_complex(dt(self))) return sg_not_implemented("sort", dt(self));
    if ((st = need_cpu("sort", self)) || (st = prep_out("sort", values, &m[0], true)) ||
        (st = prep_out("sort", indices, &m[1], true)) ||
        (st = sg_index_no_overlap("sort", values, self)) ||
        (st = sg_index_no_overlap("sort", indices, self)))
        return st;
    if ((st = sort_slices(self, dim, descending, ne_size(self, (int32_t)dim), values, indices)))
        return st;
    *ret_values = sg_tensor_retain(values);
    *ret_indices = sg_tensor_retain(indices);
    return SG_OK;
}

/* sort and sort.values: the stable sort (a stable order is one of the orders they allow) */
static sg_status sort_k(sg_keyset ks, sg_tensor *self, int64_t dim, bool descending,
                        sg_tensor **values, sg_tensor **indices) {
    (void)ks;
    bool stable = false;
    return aten_sort_stable(self, &stable, dim, descending, values, indices);
}
static sg_status sort_values_k(sg_keyset ks, sg_tensor *self, int64_t dim, bool descending,
                               sg_tensor *values, sg_tensor *indices, sg_tensor **ret_values,
                               sg_tensor **ret_indices) {
    (void)ks;
    bool stable = false;
    return aten_sort_values_stable(self, &stable, dim, descending, values, indices, ret_values,
                                   ret_indices);
}

static sg_status topk_meta(sg_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted,
                           sg_meta *m) {
    (void)largest, (void)sorted;
    sg_status st = sg_check_dim("topk", &dim, self->ndim);
    if (st) return st;
    if (k < 0 || k > (self->ndim > 0 ? self->sizes[dim] : 1))
        return sg_error(SG_EINVAL, "topk: selected index k out of range");
    sg_index_meta_of(&m[0], self->sizes, self->ndim, dt(self), self->device);
    if (self->ndim) m[0].sizes[dim] = k;
    m[1] = m[0];
    m[1].dtype = SG_INT64;
    return SG_OK;
}

static sg_status topk_out_k(sg_keyset ks, sg_tensor *self, int64_t k, int64_t dim, bool largest,
                            bool sorted, sg_tensor *values, sg_tensor *indices,
                            sg_tensor **ret_values, sg_tensor **ret_indices) {
    (void)ks;
    sg_meta   m[2];
    sg_status st = topk_meta(self, k, dim, largest, sorted, m);
    *ret_values = *ret_indices = NULL;
    if (st || (st = sg_check_dim("topk", &dim, self->ndim))) return st;
    if (sg_dtype_is_complex(dt(self)) || dt(self) == SG_BOOL)
        return sg_not_implemented("topk_cpu", dt(self));
    if ((st = need_cpu("topk", self)) || (st = prep_out("topk", values, &m[0], true)) ||
        (st = prep_out("topk", indices, &m[1], true)) ||
        (st = sg_index_no_overlap("topk", values, self)) ||
        (st = sg_index_no_overlap("topk", indices, self)))
        return st;
    /* largest: descending with NaN first, as aten ranks NaN above every number */
    if ((st = sort_slices(self, dim, largest, k, values, indices))) return st;
    *ret_values = sg_tensor_retain(values);
    *ret_indices = sg_tensor_retain(indices);
    return SG_OK;
}

/* ---- where(condition): the coordinates of the nonzero elements ----------------------------- */

static sg_status where_cond_k(sg_keyset ks, sg_tensor *cond, sg_tensor_list *ret) {
    (void)ks;
    ret->items = NULL, ret->len = 0;
    sg_status st = need_cpu("where", cond);
    if (st) return st;
    int32_t n = ne_dim(cond);
    int64_t c[SG_MAX_DIMS] = {0}, sz[SG_MAX_DIMS], count = 0, total = sg_tensor_numel(cond);
    for (int32_t d = 0; d < n; d++) sz[d] = ne_size(cond, d);
    if (total > 0) do {
            count += nonzero_at(elem(cond, c, n), dt(cond));
        } while (next_coord(c, sz, n));
    sg_tensor **items = calloc((size_t)n, sizeof *items);
    if (!items) return sg_error(SG_ENOMEM, "out of memory");
    ret->items = items;
    /* rows of one [n, count] tensor, as aten's (nonzero's transposed result, unbound) */
    sg_tensor *all = NULL;
    st = sg_tensor_empty((int64_t[]){n, count}, 2, SG_INT64, SG_CPU, &all);
    for (int32_t d = 0; d < n && !st; d++)
        if (!(st = sg_tensor_select(all, 0, d, &items[d]))) ret->len = d + 1;
    sg_tensor_release(all);
    if (st) {
        sg_tensor_list_release(ret);
        return st;
    }
    int64_t k = 0;
    memset(c, 0, sizeof c);
    if (total > 0) do {
            if (nonzero_at(elem(cond, c, n), dt(cond))) {
                for (int32_t d = 0; d < n; d++) ((int64_t *)sg_tensor_data(items[d]))[k] = c[d];
                k++;
            }
        } while (next_coord(c, sz, n));
    return SG_OK;
}

/* ---- where -------------------------------------------------------------------------------- */

/* out = cond ? a : b, over bytes: the condition arrives cast to the compute dtype (so 0 or 1,
 * never -0.0), and a zero element is all zero bytes. */
static void where_loop(void *ctx, char *const *d, const int64_t *s, int64_t n) {
    size_t es = *(const size_t *)ctx;
    char  *o = d[0], *c = d[1], *a = d[2], *b = d[3];
    for (int64_t i = 0; i < n; i++, o += s[0], c += s[1], a += s[2], b += s[3]) {
        bool t = false;
        for (size_t k = 0; k < es && !t; k++) t = c[k] != 0;
        memcpy(o, t ? a : b, es);
    }
}

static sg_status where_run(sg_tensor *cond, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                           sg_tensor **ret) {
    sg_dtype  r;
    sg_status st = sg_pointwise_where_args(cond, self, other, out, &r);
    *ret = NULL;
    if (st) return st;
    sg_dtype     k = sg_compute_dtype(r);
    sg_iter      it;
    sg_iter_spec spec = {.op = "where", .out = out, .in = {cond, self, other}, .nin = 3,
                         .compute = k, .result = r, .out_dtype = k};
    if ((st = sg_iter_build(&it, &spec, ret))) return st;
    size_t es = sg_dtype_size(k);
    sg_iter_run(&it, where_loop, &es);
    return sg_iter_finish(&it, ret);
}

static sg_status where_k(sg_keyset ks, sg_tensor *cond, sg_tensor *self, sg_tensor *other,
                         sg_tensor **ret) {
    (void)ks;
    return where_run(cond, self, other, NULL, ret);
}
static sg_status where_out_k(sg_keyset ks, sg_tensor *cond, sg_tensor *self, sg_tensor *other,
                             sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return where_run(cond, self, other, out, ret);
}
/* the Scalar overloads: wrapped numbers (which rank below any tensor in promotion), then
 * where.self through the dispatcher. Rationale: these are composite kernels, registered for
 * every backend; calling the CPU loop here would run it on another device's pointers. */
static sg_status where_scalars(sg_tensor *cond, const sg_scalar *a, sg_tensor *ta,
                               const sg_scalar *b, sg_tensor *tb, sg_tensor **ret) {
    sg_tensor *wa = NULL, *wb = NULL;
    sg_status  st = a ? sg_scalar_tensor(*a, &wa) : SG_OK;
    if (!st && b) st = sg_scalar_tensor(*b, &wb);
    if (!st && (a == NULL) != (b == NULL)) { /* aten converts the scalar to the result type */
        sg_dtype r = sg_pointwise_result(a ? wa : ta, b ? wb : tb, NULL);
        if (sg_scalar_overflows(a ? *a : *b, r))
            st = sg_error(SG_EINVAL, "where: value cannot be converted to type %s without "
                                     "overflow",
                          sg_cpp_type_name(r));
    }
    if (!st) st = aten_where_self(cond, a ? wa : ta, b ? wb : tb, ret);
    sg_tensor_release(wa);
    sg_tensor_release(wb);
    return st;
}
static sg_status where_scalar_self_k(sg_keyset ks, sg_tensor *cond, sg_scalar self,
                                     sg_tensor *other, sg_tensor **ret) {
    (void)ks;
    return where_scalars(cond, &self, NULL, NULL, other, ret);
}
static sg_status where_scalar_other_k(sg_keyset ks, sg_tensor *cond, sg_tensor *self,
                                      sg_scalar other, sg_tensor **ret) {
    (void)ks;
    return where_scalars(cond, NULL, self, &other, NULL, ret);
}
static sg_status where_scalar_k(sg_keyset ks, sg_tensor *cond, sg_scalar self, sg_scalar other,
                                sg_tensor **ret) {
    (void)ks;
    return where_scalars(cond, &self, NULL, &other, NULL, ret);
}

/* ---- masked_fill -------------------------------------------------------------------------- */

typedef struct fillc {
    size_t es;
    char   v[16];
} fillc;

static void masked_loop(void *ctx, char *const *d, const int64_t *s, int64_t n) {
    const fillc *f = ctx;
    char        *o = d[0], *m = d[1];
    for (int64_t i = 0; i < n; i++, o += s[0], m += s[1])
        if (*(const bool *)m) memcpy(o, f->v, f->es);
}

/* self[mask] = v in place; mask broadcasts to self's shape */
static sg_status masked_fill_run(sg_tensor *self, sg_tensor *mask, sg_scalar v) {
    sg_status st = sg_index_masked_fill_check(self, mask);
    if (st || (st = need_cpu("masked_fill_", self)) || (st = need_cpu("masked_fill_", mask)))
        return st;
    fillc f = {esize(self), {0}};
    if ((st = sg_index_scalar_bytes("masked_fill_", v, dt(self), f.v))) return st;
    sg_iter      it;
    sg_tensor   *res;
    sg_iter_spec spec = {.op = "masked_fill_", .out = self, .in = {mask}, .nin = 1,
                         .compute = SG_BOOL, .result = dt(self), .out_dtype = dt(self),
                         .to_out = true};
    if ((st = sg_iter_build(&it, &spec, &res))) return st;
    sg_iter_run(&it, masked_loop, &f);
    st = sg_iter_finish(&it, &res);
    sg_tensor_release(res);
    return st;
}

/* the value of a 0-dim value tensor */
static sg_status value_of(sg_tensor *value, sg_scalar *v) {
    sg_status st = sg_index_masked_fill_value_check(value);
    if (st) return st;
    sg_tensor *host = NULL, *c = NULL;
    sg_dtype   t = dt(value);
    st = sg_tensor_to(value, SG_CPU, &host);
    if (st) return st;
    if (sg_dtype_is_complex(t)) {
        if (!(st = sg_cast(host, SG_COMPLEX128, &c))) {
            const double *p = sg_tensor_data(c);
            v->kind = SG_SCALAR_COMPLEX, v->u.c.re = p[0], v->u.c.im = p[1];
        }
    } else if (sg_dtype_is_floating(t)) {
        if (!(st = sg_cast(host, SG_FLOAT64, &c))) *v = sg_scalar_float(*(double *)sg_tensor_data(c));
    } else if (t == SG_BOOL) {
        *v = sg_scalar_bool(*(bool *)sg_tensor_data(host));
    } else if (!(st = sg_cast(host, SG_INT64, &c))) {
        *v = sg_scalar_int(*(int64_t *)sg_tensor_data(c));
    }
    sg_tensor_release(c);
    sg_tensor_release(host);
    return st;
}

static sg_status masked_fill__scalar_k(sg_keyset ks, sg_tensor *self, sg_tensor *mask,
                                       sg_scalar value, sg_tensor **ret) {
    (void)ks;
    sg_status st = masked_fill_run(self, mask, value);
    *ret = st ? NULL : sg_tensor_retain(self);
    return st;
}

static sg_status masked_fill__tensor_k(sg_keyset ks, sg_tensor *self, sg_tensor *mask,
                                       sg_tensor *value, sg_tensor **ret) {
    sg_scalar v;
    sg_status st = value_of(value, &v);
    *ret = NULL;
    return st ? st : masked_fill__scalar_k(ks, self, mask, v, ret);
}

/* masked_fill: a contiguous copy of self broadcast with mask, filled in place */
static sg_status masked_fill_scalar_k(sg_keyset ks, sg_tensor *self, sg_tensor *mask,
                                      sg_scalar value, sg_tensor **ret) {
    (void)ks;
    int64_t    shape[SG_MAX_DIMS];
    int32_t    n;
    sg_tensor *e = NULL, *r = NULL;
    *ret = NULL;
    sg_status st = sg_index_masked_fill_shape(self, mask, shape, &n);
    if (st) return st;
    st = sg_tensor_expand(self, shape, n, &e);
    if (!st) st = sg_tensor_clone(e, &r);
    sg_tensor_release(e);
    if (!st) st = masked_fill_run(r, mask, value);
    if (st) {
        sg_tensor_release(r);
        return st;
    }
    *ret = r;
    return SG_OK;
}

static sg_status masked_fill_tensor_k(sg_keyset ks, sg_tensor *self, sg_tensor *mask,
                                      sg_tensor *value, sg_tensor **ret) {
    sg_scalar v;
    sg_status st = value_of(value, &v);
    *ret = NULL;
    return st ? st : masked_fill_scalar_k(ks, self, mask, v, ret);
}

/* ---- clamp -------------------------------------------------------------------------------- */

typedef struct clampc {
    bool    lo_on, hi_on;
    double  lof, hif; /* bounds in a floating compute dtype */
    int64_t loi, hii; /* and in an integral one */
} clampc;

#define BOUND(T, F, I) _Generic((T)0, float: (T)(F), double: (T)(F), default: (T)(I))

/* scalar bounds: max(a, lo) then min(., hi); a NaN input stays, a NaN bound with both bounds
 * given makes NaN (aten's vectorised clamp) */
#define CLAMP_S(E, T)                                                                     \
    static void clamp_s_##T(void *ctx, char *const *d, const int64_t *s, int64_t n) {     \
        const clampc *c = ctx;                                                             \
        T lo = BOUND(T, c->lof, c->loi), hi = BOUND(T, c->hif, c->hii);                    \
        char *o = d[0], *x = d[1];                                                         \
        for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) {                            \
            T a = *(const T *)x, r = a;                                                    \
            if (c->lo_on && c->hi_on && (lo != lo || hi != hi)) {                           \
                r = lo != lo ? lo : hi;                                                     \
            } else {                                                                       \
                if (c->lo_on) r = r < lo ? lo : r;                                          \
                if (c->hi_on) r = hi < r ? hi : r;                                          \
            }                                                                              \
            *(T *)o = a != a ? a : r;                                                      \
        }                                                                                  \
    }
/* tensor bounds: NaN from any operand (aten's clamp, maximum and minimum) */
#define CLAMP_T(E, T)                                                                     \
    static void clamp_t_##T(void *ctx, char *const *d, const int64_t *s, int64_t n) {     \
        (void)ctx;                                                                         \
        char *o = d[0], *x = d[1], *l = d[2], *h = d[3];                                   \
        for (int64_t i = 0; i < n; i++, o += s[0], x += s[1], l += s[2], h += s[3]) {      \
            T a = *(const T *)x, lo = *(const T *)l, hi = *(const T *)h;                   \
            T r = a < lo ? lo : a;                                                         \
            r = hi < r ? hi : r;                                                           \
            *(T *)o = a != a ? a : lo != lo ? lo : hi != hi ? hi : r;                      \
        }                                                                                  \
    }                                                                                      \
    static void max_t_##T(void *ctx, char *const *d, const int64_t *s, int64_t n) {       \
        (void)ctx;                                                                         \
        char *o = d[0], *x = d[1], *l = d[2];                                              \
        for (int64_t i = 0; i < n; i++, o += s[0], x += s[1], l += s[2]) {                 \
            T a = *(const T *)x, b = *(const T *)l;                                        \
            *(T *)o = a != a ? a : b != b ? b : a < b ? b : a;                             \
        }                                                                                  \
    }                                                                                      \
    static void min_t_##T(void *ctx, char *const *d, const int64_t *s, int64_t n) {       \
        (void)ctx;                                                                         \
        char *o = d[0], *x = d[1], *h = d[2];                                              \
        for (int64_t i = 0; i < n; i++, o += s[0], x += s[1], h += s[2]) {                 \
            T a = *(const T *)x, b = *(const T *)h;                                        \
            *(T *)o = a != a ? a : b != b ? b : b < a ? b : a;                             \
        }                                                                                  \
    }
#define FOR_NUM(X) SG_FOR_INTEGRAL(X) SG_FOR_FLOATING(X)
FOR_NUM(CLAMP_S)
FOR_NUM(CLAMP_T)
#define ENTRY_S(E, T) [E] = clamp_s_##T,
#define ENTRY_T(E, T) [E] = clamp_t_##T,
#define ENTRY_MAX(E, T) [E] = max_t_##T,
#define ENTRY_MIN(E, T) [E] = min_t_##T,
static const sg_loop_fn clamp_s_loops[SG_DTYPE__END] = {FOR_NUM(ENTRY_S)};
static const sg_loop_fn clamp_t_loops[SG_DTYPE__END] = {FOR_NUM(ENTRY_T)};
/* one Tensor bound: aten's maximum or minimum, which take bool too (or, and) */
static void max_t_b(void *ctx, char *const *d, const int64_t *s, int64_t n) {
    (void)ctx;
    char *o = d[0], *x = d[1], *l = d[2];
    for (int64_t i = 0; i < n; i++, o += s[0], x += s[1], l += s[2])
        *(bool *)o = *(const bool *)x || *(const bool *)l;
}
static void min_t_b(void *ctx, char *const *d, const int64_t *s, int64_t n) {
    (void)ctx;
    char *o = d[0], *x = d[1], *h = d[2];
    for (int64_t i = 0; i < n; i++, o += s[0], x += s[1], h += s[2])
        *(bool *)o = *(const bool *)x && *(const bool *)h;
}
static const sg_loop_fn max_t_loops[SG_DTYPE__END] = {FOR_NUM(ENTRY_MAX)[SG_BOOL] = max_t_b};
static const sg_loop_fn min_t_loops[SG_DTYPE__END] = {FOR_NUM(ENTRY_MIN)[SG_BOOL] = min_t_b};

static sg_status clamp_scalar_run(const char *op, sg_tensor *self, const sg_scalar *lo,
                                  const sg_scalar *hi, sg_tensor *out, sg_tensor **ret) {
    sg_dtype  r = SG_FLOAT32;
    sg_status st = sg_pointwise_clamp_scalar_type(self, lo, hi, &r);
    *ret = NULL;
    if (st) return st;
    sg_dtype   k = sg_compute_dtype(r);
    sg_loop_fn fn = sg_dtype_valid((int)k) ? clamp_s_loops[k] : NULL;
    if (!fn) return sg_not_implemented("clamp_scalar_cpu", r);
    clampc c = {lo != NULL, hi != NULL, 0, 0, 0, 0};
    const sg_scalar *b[2] = {lo, hi};
    for (int i = 0; i < 2; i++) {
        if (!b[i]) continue;
        if (sg_scalar_overflows(*b[i], r))
            return sg_error(SG_EINVAL, "%s: value cannot be converted to type %s without "
                                       "overflow",
                            op, sg_cpp_type_name(r));
        double  f = sg_scalar_to_double(*b[i]);
        int64_t v = b[i]->kind == SG_SCALAR_INT ? b[i]->u.i : (int64_t)f;
        if (r == SG_FLOAT16 || r == SG_BFLOAT16) f = sg_round_to(r, f);
        if (i == 0) c.lof = f, c.loi = v;
        else c.hif = f, c.hii = v;
    }
    sg_iter      it;
    sg_iter_spec spec = {.op = op, .out = out, .in = {self}, .nin = 1, .compute = k,
                         .result = r, .out_dtype = k};
    if ((st = sg_iter_build(&it, &spec, ret))) return st;
    sg_iter_run(&it, fn, &c);
    return sg_iter_finish(&it, ret);
}

static sg_status clamp_meta(sg_tensor *self, const sg_scalar *min, const sg_scalar *max,
                            sg_meta *m) {
    sg_dtype  r = SG_FLOAT32;
    sg_status st = sg_index_clamp_type(self, min, max, &r);
    if (st) return st;
    if (!min && !max)
        return sg_error(SG_EINVAL, "clamp: torch.clamp: At least one of 'min' or 'max' must not "
                                   "be None");
    sg_index_meta_of(m, self->sizes, self->ndim, r, self->device);
    sg_meta_follow(m, self, NULL, NULL);
    return SG_OK;
}
static sg_status clamp_out_k(sg_keyset ks, sg_tensor *self, const sg_scalar *min,
                             const sg_scalar *max, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    /* aten's clamp builds a unary op that checks every operand's dtype: an out= must have the
     * result's (in place, self's own cast check speaks first) */
    sg_dtype  r = SG_FLOAT32;
    sg_status st = sg_pointwise_clamp_scalar_type(self, min, max, &r);
    *ret = NULL;
    if (!st && out != self) st = sg_out_dtype_exact("clamp", out, r);
    return st ? st : clamp_scalar_run("clamp", self, min, max, out, ret);
}
static sg_status clamp_min_meta(sg_tensor *self, sg_scalar min, sg_meta *m) {
    return clamp_meta(self, &min, NULL, m);
}
static sg_status clamp_min_out_k(sg_keyset ks, sg_tensor *self, sg_scalar min, sg_tensor *out,
                                 sg_tensor **ret) {
    (void)ks;
    sg_dtype  r = SG_FLOAT32; /* aten's clamp_min.out keeps the dtype: its out= must have it */
    sg_status st = sg_pointwise_clamp_scalar_type(self, &min, NULL, &r);
    if (!st) st = sg_pointwise_keep_args("clamp_min", "cpu", r, out);
    return st ? st : clamp_scalar_run("clamp_min", self, &min, NULL, out, ret);
}
static sg_status clamp_max_meta(sg_tensor *self, sg_scalar max, sg_meta *m) {
    return clamp_meta(self, NULL, &max, m);
}
static sg_status clamp_max_out_k(sg_keyset ks, sg_tensor *self, sg_scalar max, sg_tensor *out,
                                 sg_tensor **ret) {
    (void)ks;
    sg_dtype  r = SG_FLOAT32; /* as clamp_min.out */
    sg_status st = sg_pointwise_clamp_scalar_type(self, NULL, &max, &r);
    if (!st) st = sg_pointwise_keep_args("clamp_max", "cpu", r, out);
    return st ? st : clamp_scalar_run("clamp_max", self, NULL, &max, out, ret);
}

/* tensor bounds: promoted and broadcast with self (NULL bounds left out) */
static sg_status clamp_tensor_check(const char *op, sg_tensor *self, sg_tensor *lo,
                                    sg_tensor *hi, sg_meta *m) {
    int64_t   shape[SG_MAX_DIMS];
    int32_t   n = 0;
    sg_status st = sg_index_clamp_shape(op, self, lo, hi, shape, &n);
    if (st) return st;
    sg_index_meta_of(m, shape, n, sg_pointwise_result(self, lo, hi), self->device);
    sg_meta_follow(m, self, lo, hi);
    return SG_OK;
}

static sg_status clamp_tensor_run(const char *op, sg_tensor *self, sg_tensor *lo, sg_tensor *hi,
                                  sg_tensor *out, sg_tensor **ret) {
    sg_meta   m;
    sg_status st = clamp_tensor_check(op, self, lo, hi, &m);
    *ret = NULL;
    if (st) return st;
    sg_dtype          r = m.dtype, k = sg_compute_dtype(r);
    const sg_loop_fn *loops = lo && hi ? clamp_t_loops : lo ? max_t_loops : min_t_loops;
    sg_loop_fn        fn = sg_dtype_valid((int)k) ? loops[k] : NULL;
    if (!fn) return sg_not_implemented("clamp_cpu", r);
    sg_iter      it;
    sg_iter_spec spec = {.op = op, .out = out, .in = {self, lo ? lo : hi, hi}, .nin = lo && hi ? 3 : 2,
                         .compute = k, .result = r, .out_dtype = k};
    if ((st = sg_iter_build(&it, &spec, ret))) return st;
    sg_iter_run(&it, fn, NULL);
    return sg_iter_finish(&it, ret);
}

static sg_status clamp_tensor_meta(sg_tensor *self, sg_tensor *min, sg_tensor *max, sg_meta *m) {
    return clamp_tensor_check("clamp", self, min, max, m);
}
static sg_status clamp_tensor_out_k(sg_keyset ks, sg_tensor *self, sg_tensor *min,
                                    sg_tensor *max, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return clamp_tensor_run("clamp", self, min, max, out, ret);
}
static sg_status clamp_min_tensor_meta(sg_tensor *self, sg_tensor *min, sg_meta *m) {
    return clamp_tensor_check("clamp_min", self, min, NULL, m);
}
static sg_status clamp_min_tensor_out_k(sg_keyset ks, sg_tensor *self, sg_tensor *min,
                                        sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return clamp_tensor_run("clamp_min", self, min, NULL, out, ret);
}
static sg_status clamp_max_tensor_meta(sg_tensor *self, sg_tensor *max, sg_meta *m) {
    return clamp_tensor_check("clamp_max", self, NULL, max, m);
}
static sg_status clamp_max_tensor_out_k(sg_keyset ks, sg_tensor *self, sg_tensor *max,
                                        sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return clamp_tensor_run("clamp_max", self, NULL, max, out, ret);
}

/* ---- pow with a Scalar -------------------------------------------------------------------- */

typedef struct powc {
    double  e;  /* the exponent, real */
    int64_t ei; /* and integral */
} powc;

/* aten's powi: integer powers wrap as the type does; negative exponents give 0, 1 or -1 */
static int64_t powi(int64_t a, int64_t b) {
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((-b) % 2 ? -1 : 1) : 0;
    uint64_t r = 1, x = (uint64_t)a;
    while (b) {
        if (b & 1) r *= x;
        b /= 2;
        x *= x;
    }
    return (int64_t)r;
}

#define POW_I(E, T)                                                                       \
    static void pow_##T(void *ctx, char *const *d, const int64_t *s, int64_t n) {         \
        const powc *c = ctx;                                                               \
        char       *o = d[0], *x = d[1];                                                   \
        for (int64_t i = 0; i < n; i++, o += s[0], x += s[1])                              \
            *(T *)o = (T)powi((int64_t) * (const T *)x, c->ei);                             \
    }
SG_FOR_INTEGRAL(POW_I)

/* aten's pow_tensor_scalar_optimized_kernel and its sqrt, rsqrt and reciprocal shortcuts */
#define POW_F(E, T)                                                                       \
    static void pow_##T(void *ctx, char *const *d, const int64_t *s, int64_t n) {         \
        const powc *c = ctx;                                                               \
        const double e = c->e;                                                             \
        char        *o = d[0], *x = d[1];                                                  \
        for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) {                            \
            T a = *(const T *)x, r;                                                        \
            if (e == 0.5) r = (T)sqrt(a);                                                  \
            else if (e == -0.5) r = (T)1 / (T)sqrt(a);                                     \
            else if (e == -1.0) r = (T)1 / a;                                              \
            else if (e == 2.0) r = a * a;                                                  \
            else if (e == 3.0) r = a * a * a;                                              \
            else if (e == -2.0) r = (T)(1.0 / (double)(a * a));                            \
            else r = (T)pow((double)a, e);                                                 \
            *(T *)o = r;                                                                   \
        }                                                                                  \
    }
SG_FOR_FLOATING(POW_F)
#define ENTRY_POW(E, T) [E] = pow_##T,
static const sg_loop_fn pow_loops[SG_DTYPE__END] = {FOR_NUM(ENTRY_POW)};

static bool scalar_is(sg_scalar s, double v) {
    return s.kind == SG_SCALAR_INT     ? (double)s.u.i == v
           : s.kind == SG_SCALAR_FLOAT ? s.u.f == v
           : s.kind == SG_SCALAR_COMPLEX ? s.u.c.re == v && s.u.c.im == 0
                                       : false;
}

static sg_status pow_ts_check(sg_tensor *self, sg_scalar e, sg_dtype *r) {
    if (sg_dtype_is_integral(dt(self), true) && e.kind == SG_SCALAR_INT && e.u.i < 0)
        return sg_error(SG_EINVAL, "pow: Integers to negative integer powers are not allowed.");
    sg_result_type rt;
    sg_rt_init(&rt);
    sg_rt_tensor(&rt, self);
    sg_rt_scalar(&rt, e);
    *r = sg_rt_result(&rt);
    return SG_OK;
}

static sg_status pow_ts_meta(sg_tensor *self, sg_scalar exponent, sg_meta *m) {
    sg_dtype  r = SG_FLOAT32;
    sg_status st = pow_ts_check(self, exponent, &r);
    if (st) return st;
    sg_index_meta_of(m, self->sizes, self->ndim, r, self->device);
    sg_meta_follow(m, self, NULL, NULL);
    return SG_OK;
}

/* out takes shape [shape] and every element becomes one (exponent 0, base 1) */
static sg_status fill_one(const char *op, sg_tensor *out, const sg_meta *m, sg_tensor **ret) {
    sg_tensor *one = NULL;
    sg_status  st = prep_out(op, out, m, false);
    if (!st) st = sg_scalar_tensor(sg_scalar_int(1), &one);
    if (!st) st = sg_cast_copy_(out, one);
    sg_tensor_release(one);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

static sg_status pow_ts_out_k(sg_keyset ks, sg_tensor *self, sg_scalar exponent, sg_tensor *out,
                              sg_tensor **ret) {
    (void)ks;
    sg_meta   m;
    sg_status st = pow_ts_meta(self, exponent, &m);
    *ret = NULL;
    if (st || (st = need_cpu("pow", self))) return st;
    if (scalar_is(exponent, 0.0) || (exponent.kind == SG_SCALAR_BOOL && !exponent.u.b))
        return fill_one("pow", out, &m, ret);
    if (scalar_is(exponent, 1.0) || (exponent.kind == SG_SCALAR_BOOL && exponent.u.b)) {
        if (!(st = prep_out("pow", out, &m, false))) st = sg_cast_copy_(out, self);
        *ret = st ? NULL : sg_tensor_retain(out);
        return st;
    }
    sg_dtype   r = m.dtype, k = sg_compute_dtype(r);
    sg_loop_fn fn = sg_dtype_valid((int)k) ? pow_loops[k] : NULL;
    if (!fn) return sg_not_implemented("pow", r);
    if (sg_dtype_is_integral(k, false) && sg_scalar_overflows(exponent, k))
        return sg_error(SG_EINVAL, "pow: value cannot be converted to type %s without overflow",
                        sg_cpp_type_name(k));
    powc c = {sg_scalar_to_double(exponent),
              exponent.kind == SG_SCALAR_INT ? exponent.u.i : (int64_t)sg_scalar_to_double(exponent)};
    if (r == SG_FLOAT16) c.e = sg_round_to(r, c.e); /* aten: Half exp */
    sg_iter      it;
    sg_iter_spec spec = {.op = "pow", .out = out, .in = {self}, .nin = 1, .compute = k,
                         .result = r, .out_dtype = k};
    if ((st = sg_iter_build(&it, &spec, ret))) return st;
    sg_iter_run(&it, fn, &c);
    return sg_iter_finish(&it, ret);
}

/* pow(Scalar base, Tensor exponent): ones for base 1, else pow(wrapped base, exponent) */
static sg_status pow_s_meta(sg_scalar self, sg_tensor *exponent, sg_meta *m) {
    sg_result_type rt;
    sg_rt_init(&rt);
    sg_rt_scalar(&rt, self);
    sg_rt_tensor(&rt, exponent);
    /* contiguous, unlike pow(Tensor, Scalar): aten makes this result before its iterator */
    sg_index_meta_of(m, exponent->sizes, exponent->ndim, sg_rt_result(&rt), exponent->device);
    return SG_OK;
}

static sg_status pow_s_out_k(sg_keyset ks, sg_scalar self, sg_tensor *exponent, sg_tensor *out,
                             sg_tensor **ret) {
    (void)ks;
    sg_meta m;
    pow_s_meta(self, exponent, &m);
    *ret = NULL;
    if (scalar_is(self, 1.0)) return fill_one("pow", out, &m, ret);
    /* out takes its shape here, contiguous, before pow(Tensor, Tensor) would give it
     * exponent's layout: aten's meta function resizes it first */
    sg_tensor *base;
    sg_status  st = sg_index_out_ready("pow", out, &m, false);
    if (!st) st = sg_scalar_tensor(self, &base);
    if (st) return st;
    st = aten_pow_Tensor_Tensor_out(base, exponent, out, ret);
    sg_tensor_release(base);
    return st;
}

/* ---- registration ------------------------------------------------------------------------- */

sg_status sg_cpu_register_index(void) {
    SG_REG_STRUCTURED(aten_cat_out, cat_meta, cat_out_k);
    SG_REG_EXPLICIT(aten_stack, stack_k);
    SG_REG_EXPLICIT(aten_stack_out, stack_out_k);
    SG_REG(aten_index_select, index_select_k);
    SG_REG(aten_index_select_out, index_select_out_k);
    SG_REG_EXPLICIT(aten_embedding, embedding_k);
    SG_REG_STRUCTURED(aten_gather_out, gather_meta, gather_out_k);
    SG_REG_STRUCTURED(aten_scatter_src_out, scatter_src_meta, scatter_src_out_k);
    SG_REG_STRUCTURED(aten_scatter_value_out, scatter_value_meta, scatter_value_out_k);
    SG_REG_STRUCTURED(aten_scatter_reduce_out, scatter_reduce_meta, scatter_reduce_out_k);
    SG_REG_STRUCTURED(aten_scatter_value_reduce_out, scatter_value_reduce_meta,
                      scatter_value_reduce_out_k);
    SG_REG_STRUCTURED(aten_scatter_add_out, scatter_add_meta, scatter_add_out_k);
    SG_REG(aten_where, where_cond_k);
    SG_REG_STRUCTURED(aten_tril_out, tril_meta, tril_out_k);
    SG_REG_STRUCTURED(aten_triu_out, triu_meta, triu_out_k);
    SG_REG_STRUCTURED(aten_sort_values_stable, sort_meta, sort_out_k);
    SG_REG_EXPLICIT(aten_sort, sort_k);
    SG_REG_EXPLICIT(aten_sort_values, sort_values_k);
    SG_REG_STRUCTURED(aten_topk_values, topk_meta, topk_out_k);
    SG_REG_CPU_META(aten_where_self, where_k);
    SG_REG_CPU_META(aten_where_self_out, where_out_k);
    SG_REG_EXPLICIT(aten_where_ScalarSelf, where_scalar_self_k);
    SG_REG_EXPLICIT(aten_where_ScalarOther, where_scalar_other_k);
    SG_REG_EXPLICIT(aten_where_Scalar, where_scalar_k);
    /* where's scalar forms are aten's CompositeImplicitAutograd ops and their kernels above call
     * where.self: they are the decompositions too */
    SG_REG_DECOMP(aten_where_ScalarSelf, where_scalar_self_k);
    SG_REG_DECOMP(aten_where_ScalarOther, where_scalar_other_k);
    SG_REG(aten_masked_fill__Scalar, masked_fill__scalar_k);
    SG_REG(aten_masked_fill__Tensor, masked_fill__tensor_k);
    SG_REG(aten_masked_fill_Scalar, masked_fill_scalar_k);
    SG_REG(aten_masked_fill_Tensor, masked_fill_tensor_k);
    SG_REG_STRUCTURED(aten_clamp_out, clamp_meta, clamp_out_k);
    SG_REG_STRUCTURED(aten_clamp_Tensor_out, clamp_tensor_meta, clamp_tensor_out_k);
    SG_REG_STRUCTURED(aten_clamp_min_out, clamp_min_meta, clamp_min_out_k);
    SG_REG_STRUCTURED(aten_clamp_min_Tensor_out, clamp_min_tensor_meta, clamp_min_tensor_out_k);
    SG_REG_STRUCTURED(aten_clamp_max_out, clamp_max_meta, clamp_max_out_k);
    SG_REG_STRUCTURED(aten_clamp_max_Tensor_out, clamp_max_tensor_meta, clamp_max_tensor_out_k);
    SG_REG_STRUCTURED(aten_pow_Tensor_Scalar_out, pow_ts_meta, pow_ts_out_k);
    SG_REG_STRUCTURED(aten_pow_Scalar_out, pow_s_meta, pow_s_out_k);
    return SG_OK;
}
