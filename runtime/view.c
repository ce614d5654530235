/* view.c: views: new tensor headers over the same storage, never a copy.
 *
 * The rules are PyTorch's, and so are the messages where it has one: dims wrap from the end
 * (a 0-dim tensor takes dims -1 and 0), slices clamp as Python's do, expand follows
 * broadcasting, and view succeeds exactly where the strides can express the new shape.
 *
 * as_strided takes any geometry, so it passes the runtime's whole geometry check (sizes and
 * strides non-negative, no product or sum overflowing, the elements reached inside the
 * storage). Every other view is derived from a valid tensor and reaches no element outside the
 * ones it reaches, so only the arithmetic that makes something new is checked: view's strides,
 * slice's stride * step and offset, select's offset, expand's element count (its stride-0 dims
 * may grow it past int64). Rationale: views are made on kernels' paths, and the full check
 * would cost them more than the view itself.
 */
#include "rt_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------------ */

/* A new header over t's storage; its one failure (memory) is reported as fn's. The geometry is
 * the caller's to check (see the top of the file). */
static sg_status make(const char *fn, sg_tensor *t, const int64_t *sizes, const int64_t *strides,
                      int32_t ndim, int64_t offset, sg_tensor **out) {
    sg_status st =
        sg__tensor_new(t->storage, (sg_dtype)t->dtype, sizes, strides, ndim, offset, out);
    return st ? sg_error(st, "%s: %s", fn, sg_last_error()) : SG_OK;
}

/* What every view checks first: an out-pointer, a tensor to view, and a rank it can hold. */
static sg_status check_args(const char *fn, const sg_tensor *t, int32_t ndim, sg_tensor **out) {
    if (!out) return sg_error(SG_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (!t) return sg_error(SG_EINVAL, "%s: the tensor is NULL", fn);
    if (ndim < 0 || ndim > SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "%s: %d dimensions (at most %d)", fn, ndim, SG_MAX_DIMS);
    return SG_OK;
}

/* sizes (and strides, where a call takes them) must be given for a rank above 0. */
static sg_status check_ptr(const char *fn, const char *what, const int64_t *p, int32_t ndim) {
    return ndim && !p ? sg_error(SG_EINVAL, "%s: %s is NULL with ndim %d", fn, what, ndim) : SG_OK;
}

/* dim wrapped into [0, ndim). A 0-dim tensor answers to dims -1 and 0, as in PyTorch. */
static sg_status wrap_dim(const char *fn, int64_t dim, int64_t ndim, int64_t *out) {
    int64_t n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n)
        return sg_error(SG_EINVAL,
                        "%s: dimension out of range (expected to be in range of [%lld, %lld], "
                        "but got %lld)",
                        fn, (long long)-n, (long long)(n - 1), (long long)dim);
    *out = dim < 0 ? dim + n : dim;
    return SG_OK;
}

/* t's offset moved by i steps of stride, into *at; false where it, or it in bytes, overflows.
 * Only an empty view can get here with an offset that large (it may start anywhere). */
static bool new_offset(const sg_tensor *t, int64_t i, int64_t stride, int64_t *at) {
    int64_t bytes;
    return sg__mul(i, stride, at) && sg__add(t->offset, *at, at) &&
           sg__mul(*at, (int64_t)sg_dtype_size((sg_dtype)t->dtype), &bytes);
}

/* Removes entry d of an array of n. */
static void drop(int64_t *v, int32_t n, int32_t d) {
    memmove(v + d, v + d + 1, (size_t)(n - 1 - d) * sizeof *v);
}

/* Inserts x at entry d of an array of n (room for n + 1). */
static void insert(int64_t *v, int32_t n, int32_t d, int64_t x) {
    memmove(v + d + 1, v + d, (size_t)(n - d) * sizeof *v);
    v[d] = x;
}

/* ---- as_strided --------------------------------------------------------------------------- */

/* Rationale: offset is the storage offset of the view, not one relative to t's, as in
 * PyTorch's as_strided(size, stride, storage_offset). */
sg_status sg_tensor_as_strided(sg_tensor *t, const int64_t *sizes, const int64_t *strides,
                               int32_t ndim, int64_t offset, sg_tensor **out) {
    const char *fn = "as_strided";
    sg__extent  e;
    sg_status   st = check_args(fn, t, ndim, out);
    if (st) return st;
    size_t es = sg_dtype_size((sg_dtype)t->dtype);
    if ((st = sg__geometry(fn, sizes, strides, ndim, offset, es, &e)) ||
        (st = sg__check_in_storage(fn, sizes, strides, ndim, offset, es, &e, t->storage)))
        return st;
    return make(fn, t, sizes, strides, ndim, offset, out);
}

sg_status sg_tensor_as_strided_(sg_tensor *t, const int64_t *sizes, const int64_t *strides,
                                int32_t ndim, int64_t offset) {
    const char *fn = "as_strided_";
    sg__extent  e;
    sg_status   st = check_args(fn, t, ndim, &(sg_tensor *){NULL});
    if (st) return st;
    size_t es = sg_dtype_size((sg_dtype)t->dtype);
    if ((st = sg__geometry(fn, sizes, strides, ndim, offset, es, &e)) ||
        (st = sg__check_in_storage(fn, sizes, strides, ndim, offset, es, &e, t->storage)) ||
        (st = sg__reserve_dims(fn, t, ndim)))
        return st;
    /* memmove: sizes may be t's own (a caller passing t's geometry back) */
    t->ndim = ndim;
    if (ndim) {
        memmove(t->sizes, sizes, (size_t)ndim * sizeof *sizes);
        memmove(t->strides, strides, (size_t)ndim * sizeof *strides);
    }
    t->offset = offset;
    return SG_OK;
}

/* ---- view --------------------------------------------------------------------------------- */

/* The shape asked for with its -1 filled in, checked against numel (PyTorch's infer_size). */
static sg_status infer_shape(const int64_t *sizes, int32_t ndim, int64_t numel, int64_t *shape) {
    char    a[256];
    int32_t infer = -1;
    int64_t known = 1;
    bool    fits = true;
    for (int32_t i = 0; i < ndim; i++) {
        shape[i] = sizes[i];
        if (sizes[i] == -1) {
            if (infer >= 0) return sg_error(SG_EINVAL, "view: only one dimension can be inferred");
            infer = i;
        } else if (sizes[i] < 0) {
            return sg_error(SG_EINVAL, "view: invalid shape dimension %lld at %d",
                            (long long)sizes[i], i);
        } else {
            fits = fits && sg__mul(known, sizes[i], &known);
        }
    }
    if (fits && (known == numel || (infer >= 0 && known > 0 && numel % known == 0))) {
        if (infer < 0) return SG_OK;
        if (known == 0)
            return sg_error(SG_EINVAL,
                            "view: cannot reshape tensor of 0 elements into shape %s because the "
                            "unspecified dimension size -1 can be any value and is ambiguous",
                            sg__shape_str(a, sizeof a, sizes, ndim));
        shape[infer] = numel / known;
        return SG_OK;
    }
    return sg_error(SG_EINVAL, "view: shape '%s' is invalid for input of size %lld",
                    sg__shape_str(a, sizeof a, sizes, ndim), (long long)numel);
}

/* Strides that let (osz, ost) be seen as nsz without moving an element, or false where none do.
 *
 * The old dims fall, innermost first, into chunks: runs of dims each of which steps over exactly
 * the dims inside it (stride[i] == stride[i+1] * size[i+1]); a size-1 dim joins any chunk, as its
 * stride is never used. Inside a chunk the elements are one arithmetic sequence, so any run of
 * new dims whose sizes multiply to the chunk's element count can walk it, innermost new dim
 * taking the chunk's innermost stride. A new dim that would straddle two chunks cannot. New
 * size-1 dims fit anywhere; they are given the stride of the dims around them. */
static bool view_strides(const int64_t *osz, const int64_t *ost, int32_t on, const int64_t *nsz,
                         int32_t nn, int64_t numel, int64_t *nst) {
    if (on == 0) { /* one element: any strides reach it */
        for (int32_t j = 0; j < nn; j++) nst[j] = 1;
        return true;
    }
    if (numel == 0) {
        /* Nothing to walk. PyTorch keeps the strides for the same shape, else contiguous ones. */
        if (on == nn && !memcmp(osz, nsz, (size_t)nn * sizeof *nsz)) {
            memcpy(nst, ost, (size_t)nn * sizeof *nst);
            return true;
        }
        int64_t acc = 1;
        for (int32_t j = nn - 1; j >= 0; j--) {
            nst[j] = acc;
            if (!sg__mul(acc, nsz[j] > 1 ? nsz[j] : 1, &acc)) return false;
        }
        return true;
    }
    int32_t j = nn - 1; /* the innermost new dim still without a stride */
    for (int32_t hi = on - 1; hi >= 0;) {
        /* Grow the chunk outwards from dim hi while the next dim continues the sequence. */
        int64_t base = ost[hi], count = osz[hi], next;
        int32_t lo = hi;
        while (lo > 0 && (osz[lo - 1] == 1 || (sg__mul(count, base, &next) && ost[lo - 1] == next)))
            if (!sg__mul(count, osz[--lo], &count)) return false;
        /* Hand it new dims until they cover it, then any size-1 ones that follow. */
        int64_t covered = 1;
        while (j >= 0 && (covered < count || nsz[j] == 1)) {
            if (!sg__mul(covered, base, &nst[j]) || !sg__mul(covered, nsz[j--], &covered))
                return false;
        }
        if (covered != count) return false;
        hi = lo - 1;
    }
    return j < 0;
}

sg_status sg_tensor_view(sg_tensor *t, const int64_t *sizes, int32_t ndim, sg_tensor **out) {
    int64_t   shape[SG_MAX_DIMS], strides[SG_MAX_DIMS];
    sg_status st = check_args("view", t, ndim, out);
    if (st || (st = check_ptr("view", "sizes", sizes, ndim))) return st;
    int64_t numel = sg_tensor_numel(t);
    if ((st = infer_shape(sizes, ndim, numel, shape))) return st;
    if (!view_strides(t->sizes, t->strides, t->ndim, shape, ndim, numel, strides))
        return sg_error(SG_EINVAL,
                        "view: view size is not compatible with input tensor's size and stride "
                        "(at least one dimension spans across two contiguous subspaces). Use "
                        ".reshape(...) instead.");
    return make("view", t, shape, strides, ndim, t->offset, out);
}

/* ---- reordering dims ---------------------------------------------------------------------- */

sg_status sg_tensor_transpose(sg_tensor *t, int64_t dim0, int64_t dim1, sg_tensor **out) {
    int64_t   sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], a = 0, b = 0;
    sg_status st = check_args("transpose", t, 0, out);
    if (st || (st = wrap_dim("transpose", dim0, t->ndim, &a)) ||
        (st = wrap_dim("transpose", dim1, t->ndim, &b)))
        return st;
    int32_t n = t->ndim;
    memcpy(sizes, t->sizes, (size_t)n * sizeof *sizes);
    memcpy(strides, t->strides, (size_t)n * sizeof *strides);
    if (n) { /* a 0-dim tensor transposes to itself */
        sizes[a] = t->sizes[b], sizes[b] = t->sizes[a];
        strides[a] = t->strides[b], strides[b] = t->strides[a];
    }
    return make("transpose", t, sizes, strides, n, t->offset, out);
}

sg_status sg_tensor_permute(sg_tensor *t, const int64_t *dims, int32_t ndim, sg_tensor **out) {
    int64_t   sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], d = 0;
    bool      seen[SG_MAX_DIMS] = {false};
    sg_status st = check_args("permute", t, ndim, out);
    if (st || (st = check_ptr("permute", "dims", dims, ndim))) return st;
    if (ndim != t->ndim)
        return sg_error(SG_EINVAL,
                        "permute: number of dims don't match in permute (the tensor has %d "
                        "dimensions, %d were given)",
                        t->ndim, ndim);
    for (int32_t i = 0; i < ndim; i++) {
        if ((st = wrap_dim("permute", dims[i], ndim, &d))) return st;
        if (seen[d])
            return sg_error(SG_EINVAL,
                            "permute: duplicate dims are not allowed (dimension %lld appears "
                            "twice)",
                            (long long)d);
        seen[d] = true;
        sizes[i] = t->sizes[d];
        strides[i] = t->strides[d];
    }
    return make("permute", t, sizes, strides, ndim, t->offset, out);
}

/* ---- taking parts ------------------------------------------------------------------------- */

sg_status sg_tensor_slice(sg_tensor *t, int64_t dim, int64_t start, int64_t end, int64_t step,
                          sg_tensor **out) {
    int64_t   sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], d = 0;
    sg_status st = check_args("slice", t, 0, out);
    if (st) return st;
    if (t->ndim == 0) return sg_error(SG_EINVAL, "slice: cannot be applied to a 0-dim tensor");
    if ((st = wrap_dim("slice", dim, t->ndim, &d))) return st;
    if (step <= 0)
        return sg_error(SG_EINVAL, "slice: slice step must be positive, got %lld",
                        (long long)step);
    int64_t size = t->sizes[d];
    /* Python's rules: count negatives from the end, then clamp into [0, size], end >= start. */
    if (start < 0) start += size;
    if (end < 0) end += size;
    start = start < 0 ? 0 : start > size ? size : start;
    end = end < start ? start : end > size ? size : end;
    int64_t len = end == start ? 0 : (end - start - 1) / step + 1; /* no overflow for big steps */

    memcpy(sizes, t->sizes, (size_t)t->ndim * sizeof *sizes);
    memcpy(strides, t->strides, (size_t)t->ndim * sizeof *strides);
    sizes[d] = len;
    if (!sg__mul(t->strides[d], step, &strides[d])) {
        /* (len - 1) * step < size, so only a slice of at most one element gets here, and its
         * stride is never used. */
        if (len > 1) return sg_error(SG_EINVAL, "slice: step %lld is too large", (long long)step);
        strides[d] = t->strides[d];
    }
    int64_t at;
    if (!new_offset(t, start, t->strides[d], &at))
        return sg_error(SG_EINVAL, "slice: start %lld with stride %lld overflows the offset",
                        (long long)start, (long long)t->strides[d]);
    return make("slice", t, sizes, strides, t->ndim, at, out);
}

sg_status sg_tensor_select(sg_tensor *t, int64_t dim, int64_t index, sg_tensor **out) {
    int64_t   sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], d = 0;
    sg_status st = check_args("select", t, 0, out);
    if (st) return st;
    if (t->ndim == 0) return sg_error(SG_EINVAL, "select: cannot be applied to a 0-dim tensor");
    if ((st = wrap_dim("select", dim, t->ndim, &d))) return st;
    int64_t size = t->sizes[d];
    if (index < -size || index >= size)
        return sg_error(SG_EINVAL,
                        "select: index %lld out of range for dimension %lld of size %lld",
                        (long long)index, (long long)d, (long long)size);
    if (index < 0) index += size;
    memcpy(sizes, t->sizes, (size_t)t->ndim * sizeof *sizes);
    memcpy(strides, t->strides, (size_t)t->ndim * sizeof *strides);
    drop(sizes, t->ndim, (int32_t)d);
    drop(strides, t->ndim, (int32_t)d);
    int64_t at;
    if (!new_offset(t, index, t->strides[d], &at))
        return sg_error(SG_EINVAL, "select: index %lld with stride %lld overflows the offset",
                        (long long)index, (long long)t->strides[d]);
    return make("select", t, sizes, strides, t->ndim - 1, at, out);
}

/* ---- changing the rank -------------------------------------------------------------------- */

/* PyTorch's inferExpandGeometry: sizes align from the right; a dim grows only from size 1 and
 * then takes stride 0; a new leading dim is size 1 grown the same way. */
sg_status sg_tensor_expand(sg_tensor *t, const int64_t *sizes, int32_t ndim, sg_tensor **out) {
    int64_t   sz[SG_MAX_DIMS], sd[SG_MAX_DIMS], numel = 1;
    bool      too_large = false;
    char      a[256], b[256];
    sg_status st = check_args("expand", t, ndim, out);
    if (st || (st = check_ptr("expand", "sizes", sizes, ndim))) return st;
    if (ndim < t->ndim)
        return sg_error(SG_EINVAL,
                        "expand: the number of sizes provided (%d) must be greater or equal to "
                        "the number of dimensions in the tensor (%d)",
                        ndim, t->ndim);
    for (int32_t i = ndim - 1; i >= 0; i--) {
        int32_t d = i - (ndim - t->ndim); /* t's dim under i; < 0 for a new leading dim */
        int64_t size = d >= 0 ? t->sizes[d] : 1, want = sizes[i], stride;
        /* A new dim steps over the dims inside it (as PyTorch's do) until it grows. */
        if (d >= 0)
            stride = t->strides[d];
        else if (i + 1 == ndim)
            stride = 1;
        else if (!sg__mul(sz[i + 1], sd[i + 1], &stride))
            stride = 0; /* still size 1 here, so the stride is never used */
        if (want == -1) {
            if (d < 0)
                return sg_error(SG_EINVAL,
                                "expand: the expanded size of the tensor (-1) isn't allowed in a "
                                "leading, non-existing dimension %d",
                                i);
            want = size;
        } else if (want < 0) {
            return sg_error(SG_EINVAL, "expand: invalid size %lld at dimension %d",
                            (long long)want, i);
        }
        if (want != size) {
            if (size != 1)
                return sg_error(SG_EINVAL,
                                "expand: the expanded size of the tensor (%lld) must match the "
                                "existing size (%lld) at non-singleton dimension %d.  Target "
                                "sizes: %s.  Tensor sizes: %s",
                                (long long)want, (long long)size, i,
                                sg__shape_str(a, sizeof a, sizes, ndim),
                                sg__shape_str(b, sizeof b, t->sizes, t->ndim));
            size = want;
            stride = 0;
        }
        sz[i] = size;
        sd[i] = stride;
        if (!sg__mul(numel, size, &numel)) too_large = true;
    }
    /* As every tensor's, numel * itemsize fits in int64 (sg_tensor_nbytes never overflows). */
    if (too_large || !sg__mul(numel, (int64_t)sg_dtype_size((sg_dtype)t->dtype), &numel))
        return sg_error(SG_EINVAL, "expand: the tensor is too large: sizes %s hold more than "
                                   "2^63 bytes",
                        sg__shape_str(a, sizeof a, sizes, ndim));
    return make("expand", t, sz, sd, ndim, t->offset, out);
}

sg_status sg_tensor_unsqueeze(sg_tensor *t, int64_t dim, sg_tensor **out) {
    int64_t   sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], d = 0;
    sg_status st = check_args("unsqueeze", t, 0, out);
    if (st) return st;
    if ((st = wrap_dim("unsqueeze", dim, (int64_t)t->ndim + 1, &d))) return st;
    int32_t n = t->ndim;
    if (n == SG_MAX_DIMS)
        return sg_error(SG_EINVAL, "unsqueeze: the tensor has %d dimensions already (at most %d)",
                        n, SG_MAX_DIMS);
    memcpy(sizes, t->sizes, (size_t)n * sizeof *sizes);
    memcpy(strides, t->strides, (size_t)n * sizeof *strides);
    /* The new dim steps over the dims inside it, as a contiguous tensor's would. */
    int64_t stride = 1;
    if (d < n && !sg__mul(t->sizes[d], t->strides[d], &stride)) stride = 1; /* never used: size 1 */
    insert(sizes, n, (int32_t)d, 1);
    insert(strides, n, (int32_t)d, stride);
    return make("unsqueeze", t, sizes, strides, n + 1, t->offset, out);
}

sg_status sg_tensor_squeeze(sg_tensor *t, int64_t dim, sg_tensor **out) {
    int64_t   sizes[SG_MAX_DIMS], strides[SG_MAX_DIMS], d = 0;
    sg_status st = check_args("squeeze", t, 0, out);
    if (st) return st;
    if ((st = wrap_dim("squeeze", dim, t->ndim, &d))) return st;
    int32_t n = t->ndim;
    memcpy(sizes, t->sizes, (size_t)n * sizeof *sizes);
    memcpy(strides, t->strides, (size_t)n * sizeof *strides);
    if (n > 0 && sizes[d] == 1) { /* a dim of another size stays, as in PyTorch */
        drop(sizes, n, (int32_t)d);
        drop(strides, n, (int32_t)d);
        n--;
    }
    return make("squeeze", t, sizes, strides, n, t->offset, out);
}
