/* iter.c: the strided iterator (cpu.h says what it does). */
#include "cpu.h"
#include "sg_checks.h"

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


/* Operand t's stride along dim d of shape as TensorIterator sees it: 0 where t broadcasts. */
static int64_t follow_stride(const sg_tensor *t, const int64_t *shape, int32_t n, int32_t d) {
    int32_t td = d - (n - t->ndim);
    return td < 0 || (t->sizes[td] == 1 && shape[d] != 1) ? 0 : t->strides[td];
}

/* > 0 where dim a, now inside dim b, belongs outside it; < 0 where it stays; 0 where no
 * operand tells (aten's should_swap). */
static int follow_cmp(const int64_t *shape, int32_t n, const sg_tensor *const *ops,
                      int32_t nops, int32_t a, int32_t b) {
    for (int32_t k = 0; k < nops; k++) {
        if (!ops[k]) continue;
        int64_t sa = follow_stride(ops[k], shape, n, a), sb = follow_stride(ops[k], shape, n, b);
        if (sa == 0 || sb == 0) continue;
        if (sa != sb) return sa < sb ? -1 : 1;
        if (shape[a] > shape[b]) return 1;
    }
    return 0;
}

bool sg_follow_strides(const int64_t *shape, int32_t n, const sg_tensor *const *ops,
                       int32_t nops, int64_t *strides) {
    int32_t perm[SG_MAX_DIMS]; /* innermost first */
    for (int32_t i = 0; i < n; i++) perm[i] = n - 1 - i;
    /* aten's insertion sort, which an undecided pair does not stop, so the order is aten's */
    for (int32_t i = 1; i < n; i++) {
        int32_t j1 = i;
        for (int32_t j0 = i - 1; j0 >= 0; j0--) {
            int c = follow_cmp(shape, n, ops, nops, perm[j0], perm[j1]);
            if (c < 0) break;
            if (c > 0) {
                int32_t t = perm[j0];
                perm[j0] = perm[j1];
                perm[j1] = t;
                j1 = j0;
            }
        }
    }
    bool    moved = false;
    int64_t acc = 1;
    for (int32_t i = 0; i < n; i++) {
        moved |= perm[i] != n - 1 - i;
        strides[perm[i]] = acc;
        acc *= shape[perm[i]] > 1 ? shape[perm[i]] : 1;
    }
    return moved;
}

void sg_meta_follow(sg_meta *m, const sg_tensor *a, const sg_tensor *b, const sg_tensor *c) {
    const sg_tensor *ops[3] = {a, b, c};
    m->strided = sg_follow_strides(m->sizes, m->ndim, ops, 3, m->strides);
}

static bool same_sizes(const sg_tensor *t, const int64_t *sizes, int32_t n) {
    bool same = t->ndim == n;
    for (int32_t d = 0; same && d < n; d++) same = t->sizes[d] == sizes[d];
    return same;
}

/* The device an iteration runs on: the out= tensor's, else the first input's that is not a
 * host scalar, else the CPU. */
static sg_device iter_device(const sg_iter_spec *s) {
    if (s->out) return s->out->device;
    for (int32_t i = 0; i < s->nin; i++)
        if (s->in[i]->device.type != SG_DEV_CPU || s->in[i]->ndim != 0) return s->in[i]->device;
    return s->nin ? s->in[0]->device : SG_CPU;
}

/* A 0-dim CPU tensor beside another device's tensors: aten passes it to the kernel by value. */
static bool is_host_scalar(const sg_iter *it, const sg_tensor *t) {
    return it->device.type != SG_DEV_CPU && t->device.type == SG_DEV_CPU && t->ndim == 0;
}

/* "cuda:0", "cpu" as aten prints devices. */
static const char *device_str(sg_device d, char *buf, size_t n) {
    const char *name = sg_device_type_name((sg_device_type)d.type);
    if (d.type == SG_DEV_CPU || d.type == SG_DEV_META) snprintf(buf, n, "%s", name);
    else snprintf(buf, n, "%s:%d", name, d.index);
    return buf;
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
static void simplify(sg_iter *it, bool reduce) {
    int32_t n = 0;
    int64_t shape[SG_MAX_DIMS], stride[SG_ITER_MAX][SG_MAX_DIMS];
    for (int32_t d = 0; d < it->out_ndim; d++) {
        if (it->shape[d] == 1) continue;
        shape[n] = it->shape[d];
        for (int k = 0; k < it->nops; k++) stride[k][n] = it->stride[k][d];
        n++;
    }
    /* insertion sort by the output's stride, then the first input's (a reduction: the other
     * way round, so that the input is read in memory order): stable, few dims */
    int p = reduce ? 1 : 0, q = reduce ? 0 : 1;
    for (int32_t i = 1; i < n; i++)
        for (int32_t j = i; j > 0; j--) {
            int64_t a = stride[p][j], b = stride[p][j - 1];
            if (a == b && it->nops > 1) a = stride[q][j], b = stride[q][j - 1];
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

/* Both modes: pointwise (out broadcast from or to the inputs, inputs cast to `compute`) and
 * reduction (out in keepdim form, nothing cast or resized). */
static sg_status build(sg_iter *it, const sg_iter_spec *s, sg_tensor **result, bool reduce) {
    char      a[160], b[160];
    sg_status st = SG_OK;
    memset(it, 0, offsetof(sg_iter, data));
    *result = NULL;
    it->compute = s->compute;
    it->out_dtype = s->out_dtype;
    it->round_to = reduce ? s->out_dtype : s->result;
    it->nops = 1 + s->nin;

    /* the broadcast shape */
    it->out_ndim = 0;
    if (s->to_out && s->out) {
        it->out_ndim = s->out->ndim;
        memcpy(it->out_shape, s->out->sizes, (size_t)s->out->ndim * sizeof(int64_t));
    }
    it->device = iter_device(s);
    for (int32_t i = 0; i < s->nin; i++) {
        const sg_tensor *t = s->in[i];
        if (!sg_device_eq(t->device, it->device) && !(!reduce && is_host_scalar(it, t)))
            return sg_error(SG_EINVAL, "%s: expected all tensors to be on the same device, but "
                                       "found at least two devices, %s and %s",
                            s->op, device_str(it->device, a, sizeof a),
                            device_str(t->device, b, sizeof b));
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

    /* a reduction's output: the input's rank, each size the input's or 1 */
    if (reduce) {
        bool fits = s->out && s->nin > 0 && s->out->ndim == it->out_ndim;
        for (int32_t i = 0; fits && i < it->out_ndim; i++)
            fits = s->out->sizes[i] == it->out_shape[i] || s->out->sizes[i] == 1;
        if (!fits)
            return sg_error(SG_EINVAL, "%s: the output %s is not a reduction of %s", s->op,
                            s->out ? sg_shape_str(s->out->sizes, s->out->ndim, a, sizeof a) : "-",
                            sg_shape_str(it->out_shape, it->out_ndim, b, sizeof b));
    }

    /* the output: given (checked, resized) or allocated, in the inputs' layout where aten
     * gives it theirs (the inputs as given, before any cast) */
    int64_t    follow[SG_MAX_DIMS];
    bool       fresh = !reduce && (!s->out || !same_sizes(s->out, it->out_shape, it->out_ndim));
    bool       permuted = fresh && !s->to_out &&
                    sg_follow_strides(it->out_shape, it->out_ndim, s->in, s->nin, follow);
    sg_tensor *out = s->out;
    if (out) {
        if (!sg_device_eq(out->device, it->device))
            return sg_error(SG_EINVAL, "%s: expected the out= tensor on %s, but it is on %s",
                            s->op, device_str(it->device, a, sizeof a),
                            device_str(out->device, b, sizeof b));
        if (!sg_dtype_can_cast(s->result, dtype_of(out)))
            return sg_error(SG_EINVAL, "%s: result type %s can't be cast to the desired output "
                                       "type %s",
                            s->op, sg_dtype_c10_name(s->result), sg_dtype_c10_name(dtype_of(out)));
        if (fresh && (st = sg_tensor_resize_out_strided_(out, it->out_shape,
                                                         permuted ? follow : NULL, it->out_ndim)))
            return st;
        if (sg_tensor_overlaps(out))
            return sg_error(SG_EINVAL, "%s: unsupported operation: more than one element of the "
                                       "written-to tensor refers to a single memory location",
                            s->op);
        it->out = sg_tensor_retain(out);
    } else if ((st = permuted ? sg_tensor_empty_strided(it->out_shape, follow, it->out_ndim,
                                                        s->result, it->device, &it->out)
                              : sg_tensor_empty(it->out_shape, it->out_ndim, s->result,
                                                it->device, &it->out))) {
        return st;
    }

    /* where loops write: the output itself, or a staging tensor of out_dtype (also where the
     * output must get the result dtype's rounding first: sg_iter_finish) */
    bool stage = dtype_of(it->out) != s->out_dtype ||
                 (dtype_of(it->out) != it->round_to && s->out_dtype != it->round_to);
    for (int32_t i = 0; i < s->nin && !stage; i++)
        stage = sg_may_overlap(it->out, s->in[i]) && !sg_same_view(it->out, s->in[i]);
    if (stage) {
        const int64_t *shape = reduce ? it->out->sizes : it->out_shape;
        if ((st = sg_tensor_empty(shape, it->out_ndim, s->out_dtype, it->device, &it->staged)))
            goto fail;
    }
    set_strides(it, 0, it->staged ? it->staged : it->out);

    /* inputs, cast to the compute dtype where they differ */
    for (int32_t i = 0; i < s->nin; i++) {
        const sg_tensor *t = s->in[i];
        if (!reduce && dtype_of(t) != s->compute && !(s->keep >> i & 1u)) {
            sg_tensor *c;
            if ((st = sg_cast(t, s->compute, &c))) goto fail;
            keep_tmp(it, c);
            t = c;
        }
        if (!sg_device_eq(t->device, it->device)) it->host_scalars |= 1u << (1 + i);
        set_strides(it, 1 + i, t);
    }
    for (int32_t d = 0; d < it->out_ndim; d++) it->shape[d] = it->out_shape[it->out_ndim - 1 - d];
    it->numel = 1;
    for (int32_t d = 0; d < it->out_ndim; d++) it->numel *= it->out_shape[d];
    simplify(it, reduce);
    *result = sg_tensor_retain(it->out);
    return SG_OK;
fail:
    sg_iter_free(it);
    return st;
}

sg_status sg_iter_build(sg_iter *it, const sg_iter_spec *s, sg_tensor **result) {
    return build(it, s, result, false);
}

sg_status sg_iter_build_reduce(sg_iter *it, const sg_iter_spec *s, sg_tensor **result) {
    return build(it, s, result, true);
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
    /* Meta: the build made the output (the iterator is the op's shape function); no data */
    if (it->numel == 0 || it->device.type == SG_DEV_META) return;
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

/* ---- the reduction driver (cpu.h describes it) ---------------------------------------------- */

enum {
    RBLOCK_OUTER = 4096, /* outputs advanced together along K's innermost dim (`outer`): long
                            enough that each input row is read as a stream of whole pages */
    RBLOCK_INNER = 16,   /* outputs finished together when each reduces its own lines */
    RBLOCK_STACK = 64,   /* the block where no memory is left for accumulators */
    OUTER_MIN = 8,       /* fewer kept elements in the innermost dim: each output on its own */
};

/* The reduction's shape: kept dims K and reduced dims R, innermost first. */
typedef struct rplan {
    int32_t nk, nr;
    int64_t kshape[SG_MAX_DIMS], kstride[SG_ITER_MAX][SG_MAX_DIMS];
    int64_t rshape[SG_MAX_DIMS], rstride[SG_MAX_DIMS]; /* the input's: the others' are 0 */
    int64_t nout, nred, nrest;                         /* nrest: outputs per K[0] position */
    bool    outer;                                     /* the input's innermost dim is kept */
    int64_t bs, nblk, units;                           /* blocks of bs outputs along K[0] */
} rplan;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int max_threads(void) {
#ifdef _OPENMP
    return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
    return 1;
#endif
}

static void plan_reduce(const sg_iter *it, rplan *p, int threads, int64_t max_block) {
    p->nk = p->nr = 0;
    for (int32_t d = 0; d < it->ndim; d++) {
        if (it->stride[0][d] == 0) {
            p->rshape[p->nr] = it->shape[d];
            p->rstride[p->nr++] = it->stride[1][d];
        } else {
            p->kshape[p->nk] = it->shape[d];
            for (int k = 0; k < it->nops; k++) p->kstride[k][p->nk] = it->stride[k][d];
            p->nk++;
        }
    }
    if (p->nk == 0) { /* a single output */
        p->kshape[0] = 1;
        for (int k = 0; k < it->nops; k++) p->kstride[k][0] = 0;
        p->nk = 1;
    }
    bool no_r = p->nr == 0; /* only size-1 dims were reduced */
    if (no_r) {
        p->rshape[0] = 1;
        p->rstride[0] = 0;
        p->nr = 1;
    }
    p->nrest = 1;
    for (int32_t d = 1; d < p->nk; d++) p->nrest *= p->kshape[d];
    p->nout = p->nrest * p->kshape[0];
    p->nred = 1;
    for (int32_t d = 0; d < p->nr; d++) p->nred *= p->rshape[d];
    int64_t k0 = p->kshape[0], ks = p->kstride[1][0], rs = p->rstride[0];
    p->outer = k0 >= OUTER_MIN && (no_r || (ks < 0 ? -ks : ks) <= (rs < 0 ? -rs : rs));
    /* blocks: as large as their loops like, smaller where the threads would go short */
    int64_t bs = p->outer ? RBLOCK_OUTER : RBLOCK_INNER, least = p->outer ? OUTER_MIN : 1;
    if (bs > max_block) bs = max_block;
    if (bs > k0) bs = k0 > 0 ? k0 : 1;
    while (bs > least && p->nrest * ceil_div(k0, bs) < 4 * (int64_t)threads &&
           p->nred < 16 * (int64_t)threads)
        bs = (bs + 1) / 2;
    if (bs < least && k0 >= least) bs = least;
    p->bs = bs;
    p->nblk = ceil_div(k0, bs);
    p->units = p->nblk * p->nrest;
}

/* Walks reduced positions [rb, re) for one output (inner) or one block of them (outer). */
static void walk(const rplan *p, const sg_reducer *r, void *ctx, sg_rval *v, int64_t *idx,
                 int64_t n, char *const *op, const int64_t *ostride, int64_t rb, int64_t re) {
    int64_t ridx[SG_MAX_DIMS], rest = rb, off = 0;
    if (rb >= re) return; /* nothing (an empty reduced dim has size 0 to divide by) */
    for (int32_t d = 0; d < p->nr; d++) {
        ridx[d] = rest % p->rshape[d];
        rest /= p->rshape[d];
        off += ridx[d] * p->rstride[d];
    }
    const char *in = op[1];
    int64_t     s0 = p->rstride[0], pos = rb;
    while (pos < re) {
        int64_t len = p->rshape[0] - ridx[0];
        if (len > re - pos) len = re - pos;
        if (p->outer) {
            r->outer(ctx, v, idx, in + off, p->kstride[1][0], n, s0, len, pos, op, ostride);
        } else {
            r->inner(ctx, v, idx, in + off, s0, len, pos, op);
        }
        pos += len;
        ridx[0] += len;
        off += len * s0;
        for (int32_t d = 0; d + 1 < p->nr && ridx[d] == p->rshape[d]; d++) {
            ridx[d] = 0;
            ridx[d + 1]++;
            off += p->rstride[d + 1] - p->rshape[d] * p->rstride[d];
        }
    }
}

/* The first elements of unit u's outputs (and of every operand beside them). */
static int64_t unit_base(const sg_iter *it, const rplan *p, int64_t u, char **base,
                         int64_t *ostride) {
    int64_t blk = u % p->nblk, rest = u / p->nblk;
    for (int k = 0; k < it->nops; k++) {
        base[k] = it->data[k] + blk * p->bs * p->kstride[k][0];
        ostride[k] = p->kstride[k][0];
    }
    for (int32_t d = 1; d < p->nk; d++) {
        int64_t i = rest % p->kshape[d];
        rest /= p->kshape[d];
        for (int k = 0; k < it->nops; k++) base[k] += i * p->kstride[k][d];
    }
    int64_t n = p->kshape[0] - blk * p->bs;
    return n < p->bs ? n : p->bs;
}

/* One unit (a block of outputs): its accumulators over reduced positions [rb, re), then its
 * outputs written where `fin`. v and idx have room for p->bs. */
static void run_unit(const sg_iter *it, const rplan *p, const sg_reducer *r, void *ctx,
                     int64_t u, int64_t rb, int64_t re, sg_rval *v, int64_t *idx, bool fin) {
    char   *base[SG_ITER_MAX];
    int64_t ostride[SG_ITER_MAX];
    int64_t n = unit_base(it, p, u, base, ostride);
    r->init(ctx, v, idx, n);
    if (p->outer) {
        walk(p, r, ctx, v, idx, n, base, ostride, rb, re);
    } else if (p->nr == 1) { /* one reduced dim: a line per output */
        char *op[SG_ITER_MAX];
        memcpy(op, base, sizeof op);
        for (int64_t j = 0; j < n && rb < re; j++) {
            r->inner(ctx, v + j, idx + j, base[1] + j * ostride[1] + rb * p->rstride[0],
                     p->rstride[0], re - rb, rb, op);
            for (int k = 0; k < it->nops; k++) op[k] += ostride[k];
        }
    } else {
        for (int64_t j = 0; j < n; j++) {
            char *op[SG_ITER_MAX];
            for (int k = 0; k < it->nops; k++) op[k] = base[k] + j * ostride[k];
            walk(p, r, ctx, v + j, idx + j, 1, op, ostride, rb, re);
        }
    }
    if (fin) r->finish(ctx, v, idx, n, p->nred, base, ostride);
}

#ifdef _OPENMP
/* Per-thread partials over ranges of the reduced positions, joined in order. buf has room
 * for threads * units * bs accumulators (and as many indices). */
static void run_split(const sg_iter *it, const rplan *p, const sg_reducer *r, void *ctx,
                      int threads, sg_rval *v, int64_t *idx) {
    int64_t per = p->units * p->bs;
    int     used = 1;
#pragma omp parallel num_threads(threads)
    {
        int     nt = omp_get_num_threads(), t = omp_get_thread_num();
        int64_t chunk = ceil_div(p->nred, nt), rb = t * chunk;
        int64_t re = rb + chunk < p->nred ? rb + chunk : p->nred;
        if (t == 0) used = nt;
        if (rb < re)
            for (int64_t u = 0; u < p->units; u++)
                run_unit(it, p, r, ctx, u, rb, re, v + t * per + u * p->bs,
                         idx + t * per + u * p->bs, false);
    }
    int64_t chunk = ceil_div(p->nred, used);
    for (int64_t u = 0; u < p->units; u++) {
        char    *base[SG_ITER_MAX];
        int64_t  ostride[SG_ITER_MAX];
        int64_t  n = unit_base(it, p, u, base, ostride);
        sg_rval *a = v + u * p->bs;
        int64_t *ai = idx + u * p->bs;
        for (int t = 1; t < used && t * chunk < p->nred; t++)
            r->combine(ctx, a, ai, v + t * per + u * p->bs, idx + t * per + u * p->bs, n);
        r->finish(ctx, a, ai, n, p->nred, base, ostride);
    }
}
#endif

void sg_iter_reduce(const sg_iter *it, const sg_reducer *r, void *ctx) {
    rplan p;
    if (it->device.type == SG_DEV_META) return; /* shapes only, as sg_iter_run */
    int   threads = max_threads();
    plan_reduce(it, &p, threads, RBLOCK_OUTER);
    if (p.nout == 0) return;
    int64_t total = p.nout * p.nred;
    bool    par = threads > 1 && total >= SG_GRAIN;
    bool    by_units = par && (p.units >= 4 * (int64_t)threads ||
                               (p.nred < 16 * (int64_t)threads && p.units > 1));
    bool    split = par && !by_units && p.nred >= 16 * (int64_t)threads;
    int     nt = by_units ? (p.units < threads ? (int)p.units : threads) : split ? threads : 1;
    /* accumulators: a block per thread (by units), or every output's per thread (split) */
    int64_t  room = split ? nt * p.units * p.bs : nt * p.bs;
    sg_rval  vs[RBLOCK_STACK];
    int64_t  is[RBLOCK_STACK];
    sg_rval *v = malloc((size_t)room * sizeof *v);
    int64_t *idx = malloc((size_t)room * sizeof *idx);
    if (!v || !idx) { /* no memory: serially, in small blocks on the stack */
        free(v);
        free(idx);
        v = vs, idx = is, nt = 1, split = by_units = false;
        plan_reduce(it, &p, 1, RBLOCK_STACK);
    }
#ifdef _OPENMP
    if (by_units) {
#pragma omp parallel num_threads(nt)
        {
            int64_t n = omp_get_num_threads(), t = omp_get_thread_num();
            int64_t chunk = ceil_div(p.units, n), b = t * chunk;
            int64_t e = b + chunk < p.units ? b + chunk : p.units;
            for (int64_t u = b; u < e; u++)
                run_unit(it, &p, r, ctx, u, 0, p.nred, v + t * p.bs, idx + t * p.bs, true);
        }
    } else if (split) {
        run_split(it, &p, r, ctx, nt, v, idx);
    } else
#endif
    {
        for (int64_t u = 0; u < p.units; u++) run_unit(it, &p, r, ctx, u, 0, p.nred, v, idx, true);
    }
    if (v != vs) {
        free(v);
        free(idx);
    }
}

void sg_iter_free(sg_iter *it) {
    for (int32_t i = 0; i < it->ntmp; i++) sg_tensor_release(it->tmp[i]);
    it->ntmp = 0;
    sg_tensor_release(it->staged);
    sg_tensor_release(it->out);
    it->staged = it->out = NULL;
}

sg_status sg_out_dtype_exact(const char *op, const sg_tensor *out, sg_dtype r) {
    if (!out || dtype_of(out) == r) return SG_OK;
    return sg_error(SG_EINVAL, "%s: Found dtype %s but expected %s", op,
                    sg_dtype_c10_name(dtype_of(out)), sg_dtype_c10_name(r));
}

sg_status sg_iter_finish(sg_iter *it, sg_tensor **result) {
    sg_status st = SG_OK;
    if (it->staged && dtype_of(it->out) != it->round_to && it->out_dtype != it->round_to) {
        /* aten computes in the result dtype and casts on store: an out= of another dtype gets
         * the result's rounding (sin of float16 into float32 is a float16 value) */
        sg_tensor *r = NULL;
        if (!(st = sg_cast(it->staged, it->round_to, &r))) st = sg_cast_copy_(it->out, r);
        sg_tensor_release(r);
    } else if (it->staged) {
        st = sg_cast_copy_(it->out, it->staged);
    }
    sg_iter_free(it);
    if (st) {
        sg_tensor_release(*result);
        *result = NULL;
    }
    return st;
}
