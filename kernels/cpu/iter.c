/* iter.c: the strided iterator (cpu.h says what it does). */
#include "cpu.h"

#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

const char *sg_shape_str(const int64_t *sizes, int32_t n, char *buf, size_t len) {
    size_t k = (size_t)snprintf(buf, len, "[");
    for (int32_t i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%lld", i ? ", " : "", (long long)sizes[i]);
    if (k < len) snprintf(buf + k, len - k, "]");
    return buf;
}

bool sg_broadcast_shape(const int64_t *a, int32_t na, const int64_t *b, int32_t nb,
                        int64_t *out, int32_t *nout) {
    int32_t n = na > nb ? na : nb;
    for (int32_t i = 0; i < n; i++) {
        int64_t x = i < n - na ? 1 : a[i - (n - na)];
        int64_t y = i < n - nb ? 1 : b[i - (n - nb)];
        if (x != y && x != 1 && y != 1) return false;
        out[i] = x == 1 ? y : x;
    }
    *nout = n;
    return true;
}

static sg_dtype dtype_of(const sg_tensor *t) { return (sg_dtype)t->dtype; }

static const char *upper_name(sg_dtype t) {
    static const char *const names[SG_DTYPE__END] = {
        [SG_UINT8] = "Byte",     [SG_INT8] = "Char",       [SG_INT16] = "Short",
        [SG_INT32] = "Int",      [SG_INT64] = "Long",      [SG_FLOAT16] = "Half",
        [SG_FLOAT32] = "Float",  [SG_FLOAT64] = "Double",  [SG_COMPLEX64] = "ComplexFloat",
        [SG_COMPLEX128] = "ComplexDouble", [SG_BOOL] = "Bool", [SG_BFLOAT16] = "BFloat16"};
    return sg_dtype_valid((int)t) ? names[t] : "?";
}

/* Whether two views over one storage reach any common byte (a coarse test: their spans). */
static bool may_overlap(const sg_tensor *a, const sg_tensor *b) {
    if (a->storage->data != b->storage->data || !a->storage->data) return false;
    size_t  ea = sg_dtype_size(dtype_of(a)), eb = sg_dtype_size(dtype_of(b));
    int64_t sa = sg_tensor_span(a), sb = sg_tensor_span(b);
    if (!sa || !sb) return false;
    int64_t a0 = a->offset * (int64_t)ea, a1 = a0 + sa * (int64_t)ea;
    int64_t b0 = b->offset * (int64_t)eb, b1 = b0 + sb * (int64_t)eb;
    return a0 < b1 && b0 < a1;
}

static bool same_view(const sg_tensor *a, const sg_tensor *b) {
    if (a->storage->data != b->storage->data || a->offset != b->offset || a->ndim != b->ndim ||
        a->dtype != b->dtype)
        return false;
    for (int32_t i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i] || (a->sizes[i] > 1 && a->strides[i] != b->strides[i]))
            return false;
    return true;
}

static bool has_internal_overlap(const sg_tensor *t) {
    for (int32_t i = 0; i < t->ndim; i++)
        if (t->sizes[i] > 1 && t->strides[i] == 0) return true;
    return false;
}

static sg_status keep_tmp(sg_iter *it, sg_tensor *t) {
    it->tmp[it->ntmp++] = t;
    return SG_OK;
}

/* Operand k's strides for the broadcast shape (it->out_shape), innermost first, in bytes. */
static void set_strides(sg_iter *it, int k, const sg_tensor *t) {
    int32_t n = it->out_ndim;
    int64_t es = (int64_t)sg_dtype_size(dtype_of(t));
    for (int32_t i = 0; i < n; i++) {      /* i: outermost-first index */
        int32_t d = n - 1 - i;              /* innermost-first position */
        int32_t ti = i - (n - t->ndim);     /* t's own dim, right-aligned */
        it->stride[k][d] = ti < 0 || t->sizes[ti] == 1 ? 0 : t->strides[ti] * es;
    }
    it->data[k] = (char *)sg_tensor_data(t);
}

/* Drops size-1 dims, orders the rest by the output's strides (innermost first), then merges
 * dims that are contiguous across all operands. */
static void simplify(sg_iter *it) {
    int32_t n = 0;
    int64_t shape[SG_MAX_DIMS], stride[SG_ITER_MAX][SG_MAX_DIMS];
    for (int32_t d = 0; d < it->out_ndim; d++) {
        if (it->shape[d] == 1) continue;
        shape[n] = it->shape[d];
        for (int k = 0; k < it->nops; k++) stride[k][n] = it->stride[k][d];
        n++;
    }
    /* insertion sort by the output's stride, then the first input's: stable, few dims */
    for (int32_t i = 1; i < n; i++)
        for (int32_t j = i; j > 0; j--) {
            int64_t a = stride[0][j], b = stride[0][j - 1];
            if (a == b && it->nops > 1) a = stride[1][j], b = stride[1][j - 1];
            if (!(a < b)) break;
            int64_t t = shape[j];
            shape[j] = shape[j - 1];
            shape[j - 1] = t;
            for (int k = 0; k < it->nops; k++) {
                t = stride[k][j];
                stride[k][j] = stride[k][j - 1];
                stride[k][j - 1] = t;
            }
        }
    int32_t m = 0;
    for (int32_t d = 0; d < n; d++) {
        bool merge = m > 0;
        for (int k = 0; k < it->nops && merge; k++)
            merge = stride[k][d] == stride[k][m - 1] * shape[m - 1];
        if (merge) {
            shape[m - 1] *= shape[d];
            continue;
        }
        shape[m] = shape[d];
        for (int k = 0; k < it->nops; k++) stride[k][m] = stride[k][d];
        m++;
    }
    if (m == 0) { /* a single element */
        shape[0] = 1;
        for (int k = 0; k < it->nops; k++) stride[k][0] = 0;
        m = 1;
    }
    it->ndim = m;
    memcpy(it->shape, shape, (size_t)m * sizeof *shape);
    for (int k = 0; k < it->nops; k++) memcpy(it->stride[k], stride[k], (size_t)m * sizeof(int64_t));
}

sg_status sg_iter_build(sg_iter *it, const sg_iter_spec *s, sg_tensor **result) {
    char      a[160], b[160];
    sg_status st = SG_OK;
    memset(it, 0, sizeof *it);
    *result = NULL;
    it->compute = s->compute;
    it->out_dtype = s->out_dtype;
    it->nops = 1 + s->nin;

    /* the broadcast shape */
    it->out_ndim = 0;
    if (s->to_out && s->out) {
        it->out_ndim = s->out->ndim;
        memcpy(it->out_shape, s->out->sizes, (size_t)s->out->ndim * sizeof(int64_t));
    }
    for (int32_t i = 0; i < s->nin; i++) {
        const sg_tensor *t = s->in[i];
        if (t->device.type != SG_DEV_CPU)
            return sg_error(SG_EINVAL, "%s: expected all tensors to be on the CPU, but input %d "
                                       "is on %s",
                            s->op, (int)i, sg_device_type_name((sg_device_type)t->device.type));
        int64_t shape[SG_MAX_DIMS];
        int32_t n;
        if (!sg_broadcast_shape(it->out_shape, it->out_ndim, t->sizes, t->ndim, shape, &n) ||
            (s->to_out && s->out && n != s->out->ndim))
            return sg_error(SG_EINVAL, "%s: the shapes %s and %s cannot be broadcast together",
                            s->op, sg_shape_str(it->out_shape, it->out_ndim, a, sizeof a),
                            sg_shape_str(t->sizes, t->ndim, b, sizeof b));
        memcpy(it->out_shape, shape, (size_t)n * sizeof *shape);
        it->out_ndim = n;
    }

    if (s->to_out && s->out)
        for (int32_t i = 0; i < it->out_ndim; i++)
            if (it->out_shape[i] != s->out->sizes[i])
                return sg_error(SG_EINVAL, "%s: the shape %s cannot be broadcast to %s", s->op,
                                sg_shape_str(s->in[0]->sizes, s->in[0]->ndim, a, sizeof a),
                                sg_shape_str(s->out->sizes, s->out->ndim, b, sizeof b));

    /* the output: given (checked, resized) or allocated */
    sg_tensor *out = s->out;
    if (out) {
        if (out->device.type != SG_DEV_CPU)
            return sg_error(SG_EINVAL, "%s: the out= tensor is on %s, expected the CPU", s->op,
                            sg_device_type_name((sg_device_type)out->device.type));
        if (!sg_can_cast(s->result, dtype_of(out)))
            return sg_error(SG_EINVAL, "%s: result type %s can't be cast to the desired output "
                                       "type %s",
                            s->op, upper_name(s->result), upper_name(dtype_of(out)));
        bool same = out->ndim == it->out_ndim;
        for (int32_t i = 0; same && i < out->ndim; i++) same = out->sizes[i] == it->out_shape[i];
        if (!same && (st = sg_tensor_resize_(out, it->out_shape, it->out_ndim))) return st;
        if (has_internal_overlap(out))
            return sg_error(SG_EINVAL, "%s: unsupported operation: more than one element of the "
                                       "written-to tensor refers to a single memory location",
                            s->op);
        it->out = sg_tensor_retain(out);
    } else if ((st = sg_tensor_empty(it->out_shape, it->out_ndim, s->result, SG_CPU, &it->out))) {
        return st;
    }

    /* where loops write: the output itself, or a staging tensor of out_dtype */
    bool stage = dtype_of(it->out) != s->out_dtype;
    for (int32_t i = 0; i < s->nin && !stage; i++)
        stage = may_overlap(it->out, s->in[i]) && !same_view(it->out, s->in[i]);
    if (stage) {
        if ((st = sg_tensor_empty(it->out_shape, it->out_ndim, s->out_dtype, SG_CPU, &it->staged)))
            goto fail;
    }
    set_strides(it, 0, it->staged ? it->staged : it->out);

    /* inputs, cast to the compute dtype where they differ */
    for (int32_t i = 0; i < s->nin; i++) {
        const sg_tensor *t = s->in[i];
        if (dtype_of(t) != s->compute) {
            sg_tensor *c;
            if ((st = sg_cast(t, s->compute, &c))) goto fail;
            keep_tmp(it, c);
            t = c;
        }
        set_strides(it, 1 + i, t);
    }
    for (int32_t d = 0; d < it->out_ndim; d++) it->shape[d] = it->out_shape[it->out_ndim - 1 - d];
    it->numel = 1;
    for (int32_t d = 0; d < it->out_ndim; d++) it->numel *= it->out_shape[d];
    simplify(it);
    *result = sg_tensor_retain(it->out);
    return SG_OK;
fail:
    sg_iter_free(it);
    return st;
}

/* Elements [begin, end) in iteration order: whole or partial inner lines. */
static void run_range(const sg_iter *it, sg_loop_fn fn, void *ctx, int64_t begin, int64_t end) {
    int64_t idx[SG_MAX_DIMS];
    char   *ptr[SG_ITER_MAX];
    int64_t inner[SG_ITER_MAX];
    int64_t rest = begin;
    for (int k = 0; k < it->nops; k++) {
        ptr[k] = it->data[k];
        inner[k] = it->stride[k][0];
    }
    for (int32_t d = 0; d < it->ndim; d++) {
        idx[d] = rest % it->shape[d];
        rest /= it->shape[d];
        for (int k = 0; k < it->nops; k++) ptr[k] += idx[d] * it->stride[k][d];
    }
    while (begin < end) {
        int64_t n = it->shape[0] - idx[0];
        if (n > end - begin) n = end - begin;
        fn(ctx, ptr, inner, n);
        begin += n;
        idx[0] += n;
        for (int k = 0; k < it->nops; k++) ptr[k] += n * it->stride[k][0];
        for (int32_t d = 0; d + 1 < it->ndim && idx[d] == it->shape[d]; d++) {
            idx[d] = 0;
            idx[d + 1]++;
            for (int k = 0; k < it->nops; k++)
                ptr[k] += it->stride[k][d + 1] - it->shape[d] * it->stride[k][d];
        }
    }
}

void sg_iter_run(const sg_iter *it, sg_loop_fn fn, void *ctx) {
    if (it->numel == 0) return;
#ifdef _OPENMP
    if (it->numel >= SG_GRAIN && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel
        {
            int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
            int64_t chunk = (it->numel + nt - 1) / nt;
            int64_t b = t * chunk, e = b + chunk < it->numel ? b + chunk : it->numel;
            if (b < e) run_range(it, fn, ctx, b, e);
        }
        return;
    }
#endif
    run_range(it, fn, ctx, 0, it->numel);
}

void sg_iter_free(sg_iter *it) {
    for (int32_t i = 0; i < it->ntmp; i++) sg_tensor_release(it->tmp[i]);
    it->ntmp = 0;
    sg_tensor_release(it->staged);
    sg_tensor_release(it->out);
    it->staged = it->out = NULL;
}

sg_status sg_iter_finish(sg_iter *it, sg_tensor **result) {
    sg_status st = it->staged ? sg_cast_copy_(it->out, it->staged) : SG_OK;
    sg_iter_free(it);
    if (st) {
        sg_tensor_release(*result);
        *result = NULL;
    }
    return st;
}
