/* ref_data.h: what the tests that replay PyTorch's recorded cases share (test_cpu_reference,
 * test_cuda_reference, test_cpu_grad_reference, test_{cpu,meta,npu}_conformance,
 * test_cpu_grad_conformance): reading the files that tests/reference/make_cpu_reference.py,
 * make_grad_reference.py and tests/conformance/oracle.py (and oracle_grad.py) write (the value
 * and tensor encoding, documented in make_cpu_reference.py; version 2's additions in oracle.py),
 * building the boxed arguments a case stands for, comparing results with what torch gave, the
 * lists of cases known to differ, and running the cases in child processes so that one that
 * crashes fails alone.
 *
 * ref_dev is where the arguments are built and the results must be: the CPU unless the test
 * sets it before building any. On Meta, tensors hold no data: arguments are built without
 * values and results are compared by dtype and shape alone. A reader that runs off its buffer
 * or meets a value it does not know sets ok to false and reads zeros from then on; callers check
 * ok once per case. */
#ifndef SG_TEST_REF_DATA_H
#define SG_TEST_REF_DATA_H

#include "dtype.h" /* the CPU kernels' float16 and bfloat16 conversions */
#include "sg_runtime.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static sg_device ref_dev = {SG_DEV_CPU, 0};

/* ---- per-case memory --------------------------------------------------------------------- */

typedef struct arena {
    void  **ptrs;
    size_t  n, cap;
} arena;

static inline void *arena_alloc(arena *a, size_t n) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        void **p = realloc(a->ptrs, cap * sizeof *p);
        if (!p) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        a->ptrs = p;
        a->cap = cap;
    }
    void *p = calloc(1, n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    a->ptrs[a->n++] = p;
    return p;
}

static inline void arena_reset(arena *a) {
    for (size_t i = 0; i < a->n; i++) free(a->ptrs[i]);
    a->n = 0;
}

/* ---- reading the file -------------------------------------------------------------------- */

typedef struct reader {
    const uint8_t *p, *end;
    bool           ok;
} reader;

static inline bool take(reader *r, void *dst, size_t n) {
    if (!r->ok || (size_t)(r->end - r->p) < n) {
        r->ok = false;
        if (dst) memset(dst, 0, n);
        return false;
    }
    if (dst) memcpy(dst, r->p, n);
    r->p += n;
    return true;
}

/* The file is little-endian; so is every host this runs on (checked in main). */
static inline uint8_t  rd_u8(reader *r) { uint8_t v; take(r, &v, 1); return v; }
static inline uint16_t rd_u16(reader *r) { uint16_t v; take(r, &v, 2); return v; }
static inline uint32_t rd_u32(reader *r) { uint32_t v; take(r, &v, 4); return v; }
static inline uint64_t rd_u64(reader *r) { uint64_t v; take(r, &v, 8); return v; }
static inline int64_t  rd_i64(reader *r) { int64_t v; take(r, &v, 8); return v; }
static inline double   rd_f64(reader *r) { double v; take(r, &v, 8); return v; }

static inline char *rd_str(reader *r, arena *a, int32_t *len) {
    uint16_t n = rd_u16(r);
    char    *s = arena_alloc(a, (size_t)n + 1);
    take(r, s, n);
    s[n] = '\0';
    if (len) *len = n;
    return s;
}

/* A tensor as stored. Layout 3 (a strided view of a base): strides and offset are the view's,
 * and ssizes is the base's one size, its element count. Layout 4 (a result): data as layout 0,
 * strides and offset the geometry torch's result had. */
typedef struct tdesc {
    uint8_t        dtype, layout;
    bool           none; /* an OPT_TENSOR_LIST's None item */
    int32_t        ndim, sndim;
    int64_t       *sizes, *ssizes, *strides;
    int64_t        offset;
    const uint8_t *data; /* into the file (unaligned) */
    uint64_t       nbytes;
} tdesc;

/* A value as stored: an argument or an expected result. */
typedef struct value {
    uint8_t  tag;
    bool     b;
    int64_t  i;
    double   f;
    char    *s;
    int32_t  len; /* STR bytes; list items */
    int64_t *ints;
    double  *floats;
    bool    *bools;
    tdesc   *ts; /* TENSOR: one; TENSOR_LIST: len */
    char   **strs; /* LIST (version 2): a list of strings, len items */
    int32_t *slens;
    uint8_t  dev[2];
} value;

static inline int64_t numel_of(const int64_t *sizes, int32_t n) {
    int64_t k = 1;
    for (int32_t i = 0; i < n; i++) k *= sizes[i];
    return k;
}

static inline void rd_tensor(reader *r, arena *a, tdesc *t) {
    t->dtype = rd_u8(r);
    t->ndim = rd_u8(r);
    if (!sg_dtype_valid(t->dtype) || t->ndim > SG_MAX_DIMS) r->ok = false;
    if (!r->ok) return;
    t->sizes = arena_alloc(a, (size_t)(t->ndim ? t->ndim : 1) * sizeof(int64_t));
    for (int32_t i = 0; i < t->ndim; i++) {
        t->sizes[i] = rd_i64(r);
        if (t->sizes[i] < 0 || t->sizes[i] > (1 << 24)) r->ok = false;
    }
    t->layout = rd_u8(r);
    t->sndim = t->ndim;
    t->ssizes = t->sizes;
    if (t->layout == 1 && t->ndim < 2) r->ok = false;
    if (t->layout == 2) {
        t->sndim = rd_u8(r);
        if (t->sndim > t->ndim) r->ok = false;
        if (!r->ok) return;
        t->ssizes = arena_alloc(a, (size_t)(t->sndim ? t->sndim : 1) * sizeof(int64_t));
        for (int32_t i = 0; i < t->sndim; i++) {
            t->ssizes[i] = rd_i64(r);
            if (t->ssizes[i] < 0 || t->ssizes[i] > (1 << 24)) r->ok = false;
        }
    } else if (t->layout == 3) {
        t->strides = arena_alloc(a, (size_t)(t->ndim ? t->ndim : 1) * sizeof(int64_t));
        int64_t last = 0; /* the view's furthest element, past its offset */
        for (int32_t i = 0; i < t->ndim; i++) {
            t->strides[i] = rd_i64(r);
            if (t->strides[i] < 0 || t->strides[i] > (1 << 24)) r->ok = false;
            if (t->sizes[i] > 0) last += (t->sizes[i] - 1) * t->strides[i];
        }
        t->offset = rd_i64(r);
        t->sndim = 1;
        t->ssizes = arena_alloc(a, sizeof(int64_t));
        uint64_t base = rd_u64(r);
        t->ssizes[0] = base <= (1 << 24) ? (int64_t)base : -1;
        if (t->offset < 0 || t->offset > (1 << 24) || t->ssizes[0] < 0 ||
            (numel_of(t->sizes, t->ndim) > 0 && t->offset + last >= t->ssizes[0]))
            r->ok = false;
    } else if (t->layout == 4) {
        /* version 3's results: the values in index order (as layout 0) and torch's geometry */
        t->strides = arena_alloc(a, (size_t)(t->ndim ? t->ndim : 1) * sizeof(int64_t));
        for (int32_t i = 0; i < t->ndim; i++) {
            t->strides[i] = rd_i64(r);
            if (t->strides[i] < 0 || t->strides[i] > (1LL << 40)) r->ok = false;
        }
        t->offset = rd_i64(r);
        if (t->offset < 0 || t->offset > (1LL << 40)) r->ok = false;
    } else if (t->layout > 4) {
        r->ok = false;
    }
    t->nbytes = rd_u64(r);
    if (!r->ok) return;
    if (t->nbytes != (uint64_t)numel_of(t->ssizes, t->sndim) * sg_dtype_size((sg_dtype)t->dtype) ||
        t->nbytes > (uint64_t)(r->end - r->p)) {
        r->ok = false;
        return;
    }
    t->data = r->p;
    r->p += t->nbytes;
}

static inline void rd_value(reader *r, arena *a, value *v) {
    memset(v, 0, sizeof *v);
    v->tag = rd_u8(r);
    switch (v->tag) {
    case SG_ANY_NONE: break;
    case SG_ANY_BOOL: v->b = rd_u8(r) != 0; break;
    case SG_ANY_INT: v->i = rd_i64(r); break;
    case SG_ANY_FLOAT: v->f = rd_f64(r); break;
    case SG_ANY_STR: v->s = rd_str(r, a, &v->len); break;
    case SG_ANY_DTYPE:
    case SG_ANY_LAYOUT:
    case SG_ANY_MEMORY_FORMAT: v->i = rd_u8(r); break;
    case SG_ANY_DEVICE:
        v->dev[0] = rd_u8(r);
        v->dev[1] = rd_u8(r);
        break;
    case SG_ANY_TENSOR:
        v->ts = arena_alloc(a, sizeof *v->ts);
        v->len = 1;
        rd_tensor(r, a, v->ts);
        break;
    case SG_ANY_INT_LIST:
    case SG_ANY_FLOAT_LIST:
    case SG_ANY_BOOL_LIST:
    case SG_ANY_TENSOR_LIST:
    case SG_ANY_OPT_TENSOR_LIST: {
        uint32_t n = rd_u32(r);
        if (n > (1u << 20)) {
            r->ok = false;
            break;
        }
        v->len = (int32_t)n;
        if (v->tag == SG_ANY_INT_LIST) {
            v->ints = arena_alloc(a, n * sizeof *v->ints);
            for (uint32_t k = 0; k < n; k++) v->ints[k] = rd_i64(r);
        } else if (v->tag == SG_ANY_FLOAT_LIST) {
            v->floats = arena_alloc(a, n * sizeof *v->floats);
            for (uint32_t k = 0; k < n; k++) v->floats[k] = rd_f64(r);
        } else if (v->tag == SG_ANY_BOOL_LIST) {
            v->bools = arena_alloc(a, n * sizeof *v->bools);
            for (uint32_t k = 0; k < n; k++) v->bools[k] = rd_u8(r) != 0;
        } else {
            v->ts = arena_alloc(a, n * sizeof *v->ts);
            for (uint32_t k = 0; k < n && r->ok; k++) {
                /* Tensor?[] (version 2): a u8 before each item, 0 for None */
                if (v->tag == SG_ANY_OPT_TENSOR_LIST && rd_u8(r) == 0)
                    v->ts[k].none = true;
                else
                    rd_tensor(r, a, &v->ts[k]);
            }
        }
        break;
    }
    case SG_ANY_LIST: { /* version 2: strings (Dimname[]): u32 n, then n strings */
        uint32_t n = rd_u32(r);
        if (n > 255) {
            r->ok = false;
            break;
        }
        v->len = (int32_t)n;
        v->strs = arena_alloc(a, n * sizeof *v->strs);
        v->slens = arena_alloc(a, n * sizeof *v->slens);
        for (uint32_t k = 0; k < n && r->ok; k++) v->strs[k] = rd_str(r, a, &v->slens[k]);
        break;
    }
    default: r->ok = false; break;
    }
}

/* ---- describing a case for messages ------------------------------------------------------ */

typedef struct sbuf {
    char   b[1024];
    size_t n;
} sbuf;

static inline void sb_printf(sbuf *s, const char *fmt, ...) SG_PRINTF(2, 3);
static inline void sb_printf(sbuf *s, const char *fmt, ...) {
    if (s->n >= sizeof s->b - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(s->b + s->n, sizeof s->b - s->n, fmt, ap);
    va_end(ap);
    if (w > 0) s->n += (size_t)w < sizeof s->b - s->n ? (size_t)w : sizeof s->b - s->n - 1;
}

static inline void sb_sizes(sbuf *s, const int64_t *sizes, int32_t n) {
    sb_printf(s, "[");
    for (int32_t i = 0; i < n; i++) sb_printf(s, "%s%" PRId64, i ? ", " : "", sizes[i]);
    sb_printf(s, "]");
}

static inline void sb_tensor(sbuf *s, const tdesc *t) {
    if (t->none) {
        sb_printf(s, "None");
        return;
    }
    sb_printf(s, "%s", sg_dtype_name((sg_dtype)t->dtype));
    sb_sizes(s, t->sizes, t->ndim);
    if (t->layout == 1) sb_printf(s, " transposed");
    if (t->layout == 2) {
        sb_printf(s, " expanded from ");
        sb_sizes(s, t->ssizes, t->sndim);
    }
    if (t->layout == 3) {
        sb_printf(s, " strides ");
        sb_sizes(s, t->strides, t->ndim);
        sb_printf(s, " offset %" PRId64 " of %" PRId64, t->offset, t->ssizes[0]);
    }
}

static inline void sb_value(sbuf *s, const value *v) {
    switch (v->tag) {
    case SG_ANY_NONE: sb_printf(s, "None"); break;
    case SG_ANY_BOOL: sb_printf(s, "%s", v->b ? "True" : "False"); break;
    case SG_ANY_INT: sb_printf(s, "%" PRId64, v->i); break;
    case SG_ANY_FLOAT: sb_printf(s, "%.17g", v->f); break;
    case SG_ANY_STR: sb_printf(s, "'%s'", v->s); break;
    case SG_ANY_LIST:
        sb_printf(s, "[");
        for (int32_t k = 0; k < v->len; k++) sb_printf(s, "%s'%s'", k ? ", " : "", v->strs[k]);
        sb_printf(s, "]");
        break;
    case SG_ANY_DTYPE: sb_printf(s, "%s", sg_dtype_name((sg_dtype)v->i)); break;
    case SG_ANY_LAYOUT: sb_printf(s, "layout %" PRId64, v->i); break;
    case SG_ANY_MEMORY_FORMAT: sb_printf(s, "memory_format %" PRId64, v->i); break;
    case SG_ANY_DEVICE: sb_printf(s, "device %d:%d", v->dev[0], v->dev[1]); break;
    case SG_ANY_TENSOR: sb_tensor(s, v->ts); break;
    case SG_ANY_INT_LIST: sb_sizes(s, v->ints, v->len); break;
    case SG_ANY_FLOAT_LIST:
        sb_printf(s, "[");
        for (int32_t k = 0; k < v->len; k++) sb_printf(s, "%s%g", k ? ", " : "", v->floats[k]);
        sb_printf(s, "]");
        break;
    case SG_ANY_BOOL_LIST:
        sb_printf(s, "[");
        for (int32_t k = 0; k < v->len; k++) sb_printf(s, "%s%d", k ? ", " : "", v->bools[k]);
        sb_printf(s, "]");
        break;
    case SG_ANY_TENSOR_LIST:
    case SG_ANY_OPT_TENSOR_LIST:
        sb_printf(s, "(");
        for (int32_t k = 0; k < v->len; k++) {
            if (k) sb_printf(s, ", ");
            sb_tensor(s, &v->ts[k]);
        }
        sb_printf(s, ")");
        break;
    default: sb_printf(s, "?"); break;
    }
}

/* ---- building arguments ------------------------------------------------------------------ */

typedef struct owned {
    sg_tensor **t;
    size_t      n, cap;
} owned;

static inline void own(owned *o, sg_tensor *t) {
    if (o->n == o->cap) {
        size_t      cap = o->cap ? 2 * o->cap : 16;
        sg_tensor **p = realloc(o->t, cap * sizeof *p);
        if (!p) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        o->t = p;
        o->cap = cap;
    }
    o->t[o->n++] = t;
}

static inline void release_owned(owned *o) {
    for (size_t i = 0; i < o->n; i++) sg_tensor_release(o->t[i]);
    o->n = 0;
}

/* The tensor a stored tensor stands for: contiguous, a transposed view, an expanded one, or a
 * strided view of a base. The base is made on ref_dev and the view there, so a view stays one. */
static inline sg_status build_tensor(const tdesc *d, sg_tensor **out) {
    *out = NULL;
    int64_t   sizes[SG_MAX_DIMS];
    sg_tensor *base = NULL;
    sg_status st;
    /* Meta holds no data: the base is made there directly */
    sg_device where = ref_dev.type == SG_DEV_META ? ref_dev : SG_CPU;
    if (d->layout == 1) {
        memcpy(sizes, d->sizes, (size_t)d->ndim * sizeof *sizes);
        sizes[d->ndim - 1] = d->sizes[d->ndim - 2];
        sizes[d->ndim - 2] = d->sizes[d->ndim - 1];
        st = sg_tensor_empty(sizes, d->ndim, (sg_dtype)d->dtype, where, &base);
    } else {
        st = sg_tensor_empty(d->ssizes, d->sndim, (sg_dtype)d->dtype, where, &base);
    }
    if (st) return st;
    if (d->nbytes && where.type == SG_DEV_CPU) memcpy(sg_tensor_data(base), d->data, d->nbytes);
    if (!sg_device_eq(where, ref_dev)) {
        sg_tensor *moved;
        st = sg_tensor_to(base, ref_dev, &moved);
        sg_tensor_release(base);
        if (st) return st;
        base = moved;
    }
    if (d->layout == 0) {
        *out = base;
        return SG_OK;
    }
    if (d->layout == 1)
        st = sg_tensor_transpose(base, d->ndim - 2, d->ndim - 1, out);
    else if (d->layout == 2)
        st = sg_tensor_expand(base, d->sizes, d->ndim, out);
    else
        st = sg_tensor_as_strided(base, d->sizes, d->strides, d->ndim, d->offset, out);
    sg_tensor_release(base);
    return st;
}

static inline sg_status build_arg(const value *v, arena *a, owned *o, sg_any *out) {
    sg_any r = sg_any_none();
    switch (v->tag) {
    case SG_ANY_NONE: break;
    case SG_ANY_BOOL: r = sg_any_bool(v->b); break;
    case SG_ANY_INT: r = sg_any_int(v->i); break;
    case SG_ANY_FLOAT: r = sg_any_float(v->f); break;
    case SG_ANY_STR: r = sg_any_str(v->s, v->len); break;
    case SG_ANY_LIST: {
        sg_any *items = arena_alloc(a, (size_t)(v->len ? v->len : 1) * sizeof *items);
        for (int32_t k = 0; k < v->len; k++) items[k] = sg_any_str(v->strs[k], v->slens[k]);
        r.tag = SG_ANY_LIST;
        r.len = v->len;
        r.u.items = items;
        break;
    }
    case SG_ANY_DTYPE: r = sg_any_dtype((sg_dtype)v->i); break;
    case SG_ANY_LAYOUT:
    case SG_ANY_MEMORY_FORMAT:
        r.tag = v->tag;
        r.u.i = v->i;
        break;
    case SG_ANY_DEVICE: {
        sg_device d = {(int8_t)v->dev[0], (int8_t)v->dev[1]};
        if (d.type == SG_DEV_CPU) d = ref_dev;
        r = sg_any_device(d);
        break;
    }
    case SG_ANY_INT_LIST: r = sg_any_int_list(v->ints, v->len); break;
    case SG_ANY_FLOAT_LIST:
        r.tag = SG_ANY_FLOAT_LIST;
        r.len = v->len;
        r.u.floats = v->floats;
        break;
    case SG_ANY_BOOL_LIST:
        r.tag = SG_ANY_BOOL_LIST;
        r.len = v->len;
        r.u.bools = v->bools;
        break;
    case SG_ANY_TENSOR: {
        sg_tensor *t;
        sg_status  st = build_tensor(v->ts, &t);
        if (st) return st;
        own(o, t);
        r = sg_any_tensor(t);
        break;
    }
    case SG_ANY_TENSOR_LIST:
    case SG_ANY_OPT_TENSOR_LIST: {
        sg_tensor **ts = arena_alloc(a, (size_t)v->len * sizeof *ts);
        for (int32_t k = 0; k < v->len; k++) {
            if (v->ts[k].none) continue; /* NULL: None */
            sg_status st = build_tensor(&v->ts[k], &ts[k]);
            if (st) return st;
            own(o, ts[k]);
        }
        r = sg_any_tensor_list(ts, v->len);
        r.tag = v->tag;
        break;
    }
    default: return sg_error(SG_EINVAL, "the harness cannot pass a value of tag %d", v->tag);
    }
    *out = r;
    return SG_OK;
}

/* ---- comparing --------------------------------------------------------------------------- */

static inline bool is_float_dtype(uint8_t dt) {
    return dt == SG_FLOAT16 || dt == SG_FLOAT32 || dt == SG_FLOAT64 || dt == SG_BFLOAT16;
}

static inline double read_float(const void *p, uint8_t dt) {
    switch (dt) {
    case SG_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return sg_half_to_float(h); }
    case SG_BFLOAT16: { uint16_t h; memcpy(&h, p, 2); return sg_bf16_to_float(h); }
    case SG_FLOAT32: { float f; memcpy(&f, p, 4); return f; }
    default: { double d; memcpy(&d, p, 8); return d; }
    }
}

static inline int64_t read_int(const void *p, uint8_t dt) {
    switch (dt) {
    case SG_UINT8: return *(const uint8_t *)p;
    case SG_BOOL: return *(const uint8_t *)p;
    case SG_INT8: return *(const int8_t *)p;
    case SG_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case SG_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    default: { int64_t v; memcpy(&v, p, 8); return v; }
    }
}

static inline bool float_close(double g, double w, double rtol, double atol) {
    if (isnan(w)) return isnan(g);
    if (isinf(w)) return g == w;
    if (isnan(g) || isinf(g)) return false;
    return fabs(g - w) <= atol + rtol * fabs(w);
}

static inline bool compare_host_tensor(const sg_tensor *g, const tdesc *w, double rtol, double atol,
                                       sbuf *why);
static inline bool compare_host_values(const sg_tensor *g, const tdesc *w, double rtol,
                                       double atol, sbuf *why);

/* Whether a result has the expected dtype and shape (on a mismatch, why says so). */
static inline bool compare_geometry(const sg_tensor *g, const tdesc *w, sbuf *why) {
    if (g->dtype != w->dtype) {
        sb_printf(why, "dtype %s, want %s", sg_dtype_name((sg_dtype)g->dtype),
                  sg_dtype_name((sg_dtype)w->dtype));
        return false;
    }
    bool same = g->ndim == w->ndim;
    for (int32_t d = 0; same && d < g->ndim; d++) same = g->sizes[d] == w->sizes[d];
    if (!same) {
        sb_printf(why, "shape ");
        sb_sizes(why, g->sizes, g->ndim);
        sb_printf(why, ", want ");
        sb_sizes(why, w->sizes, w->ndim);
        return false;
    }
    /* torch's strides where they matter: a dim of one element may have any stride, and an
     * empty tensor any geometry (the rule of torch's own check_significant_strides) */
    if (w->layout != 4 || numel_of(w->sizes, w->ndim) == 0) return true;
    for (int32_t d = 0; same && d < g->ndim; d++)
        same = w->sizes[d] < 2 || g->strides[d] == w->strides[d];
    if (!same || g->offset != w->offset) {
        sb_printf(why, "strides ");
        sb_sizes(why, g->strides, g->ndim);
        sb_printf(why, " offset %" PRId64 ", want ", g->offset);
        sb_sizes(why, w->strides, w->ndim);
        sb_printf(why, " offset %" PRId64, w->offset);
        return false;
    }
    return true;
}

/* Compares a result tensor with the expected one; on a mismatch writes why into why. A result
 * must be on the device under test; it is read through a copy on the host (on Meta, which has
 * no values, only its dtype and shape are compared). */
static inline bool compare_tensor(const sg_tensor *g, const tdesc *w, double rtol, double atol,
                                  sbuf *why) {
    if (!g) {
        sb_printf(why, "got no tensor (NULL)");
        return false;
    }
    if (!sg_device_eq(g->device, ref_dev)) {
        sb_printf(why, "got a tensor on %s", sg_device_type_name((sg_device_type)g->device.type));
        return false;
    }
    if (g->device.type == SG_DEV_META) return compare_geometry(g, w, why);
    if (g->device.type == SG_DEV_CPU) return compare_host_tensor(g, w, rtol, atol, why);
    if (!compare_geometry(g, w, why)) return false; /* the host copy has its own strides */
    sg_tensor *host;
    sg_status  st = sg_tensor_to((sg_tensor *)g, (sg_device){SG_DEV_CPU, 0}, &host);
    if (st) {
        sb_printf(why, "copying the result to the host: %s: %s", sg_status_name(st),
                  sg_last_error());
        return false;
    }
    bool same = compare_host_values(host, w, rtol, atol, why);
    sg_tensor_release(host);
    return same;
}

static inline bool compare_host_tensor(const sg_tensor *g, const tdesc *w, double rtol, double atol,
                                       sbuf *why) {
    return compare_geometry(g, w, why) && compare_host_values(g, w, rtol, atol, why);
}

/* The values of a host tensor of w's shape against w's. */
static inline bool compare_host_values(const sg_tensor *g, const tdesc *w, double rtol,
                                       double atol, sbuf *why) {
    int64_t n = numel_of(w->sizes, w->ndim);
    if (n == 0) return true;
    size_t      es = sg_dtype_size((sg_dtype)w->dtype);
    const char *base = sg_tensor_data(g);
    if (!base) {
        sb_printf(why, "a tensor of %" PRId64 " elements with no data", n);
        return false;
    }
    bool    fl = is_float_dtype(w->dtype);
    int64_t bad = 0, first = -1;
    double  gf = 0, wf = 0;
    int64_t gi = 0, wi = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0, rest = i;
        for (int32_t d = g->ndim - 1; d >= 0; d--) {
            off += (rest % g->sizes[d]) * g->strides[d];
            rest /= g->sizes[d];
        }
        const char *gp = base + off * (int64_t)es;
        const void *wp = w->data + (size_t)i * es;
        bool        ok;
        if (fl) {
            double a = read_float(gp, w->dtype), b = read_float(wp, w->dtype);
            ok = float_close(a, b, rtol, atol);
            if (!ok && first < 0) gf = a, wf = b;
        } else {
            int64_t a = read_int(gp, w->dtype), b = read_int(wp, w->dtype);
            ok = a == b;
            if (!ok && first < 0) gi = a, wi = b;
        }
        if (!ok) {
            bad++;
            if (first < 0) first = i;
        }
    }
    if (!bad) return true;
    int64_t idx[SG_MAX_DIMS], rest = first;
    for (int32_t d = w->ndim - 1; d >= 0; d--) {
        idx[d] = rest % w->sizes[d];
        rest /= w->sizes[d];
    }
    sb_printf(why, "element ");
    sb_sizes(why, idx, w->ndim);
    if (fl)
        sb_printf(why, ": got %.9g, want %.9g (rtol %g, atol %g)", gf, wf, rtol, atol);
    else
        sb_printf(why, ": got %" PRId64 ", want %" PRId64, gi, wi);
    sb_printf(why, "; %" PRId64 " of %" PRId64 " elements differ", bad, n);
    return false;
}

/* values false: tensors by dtype and shape alone (results whose values torch leaves undefined or
 * draws at random, version 2's flags bit 1). */
static inline bool compare_value(const sg_any *g, const value *w, double rtol, double atol,
                                 bool values, sbuf *why) {
    int32_t want_tag = w->tag;
    if (g->tag != want_tag) {
        sb_printf(why, "got a %s, want a %s", sg_any_tag_name(g->tag), sg_any_tag_name(want_tag));
        return false;
    }
    switch (w->tag) {
    case SG_ANY_NONE: return true;
    case SG_ANY_TENSOR:
        if (!values && g->u.t) return compare_geometry(g->u.t, w->ts, why);
        return compare_tensor(g->u.t, w->ts, rtol, atol, why);
    case SG_ANY_TENSOR_LIST:
        if (g->len != w->len) {
            sb_printf(why, "%d tensors, want %d", g->len, w->len);
            return false;
        }
        for (int32_t k = 0; k < w->len; k++) {
            const sg_tensor *gk = g->u.tensors[k];
            bool             same = !values && gk ? compare_geometry(gk, &w->ts[k], why)
                                              : compare_tensor(gk, &w->ts[k], rtol, atol, why);
            if (!same) {
                sb_printf(why, " (in tensor %d of the list)", k);
                return false;
            }
        }
        return true;
    case SG_ANY_INT:
        if (g->u.i == w->i) return true;
        sb_printf(why, "got %" PRId64 ", want %" PRId64, g->u.i, w->i);
        return false;
    case SG_ANY_BOOL:
        if (g->u.b == w->b) return true;
        sb_printf(why, "got %d, want %d", g->u.b, w->b);
        return false;
    case SG_ANY_FLOAT:
        if (float_close(g->u.f, w->f, rtol, atol)) return true;
        sb_printf(why, "got %.17g, want %.17g", g->u.f, w->f);
        return false;
    case SG_ANY_DTYPE:
    case SG_ANY_LAYOUT:
    case SG_ANY_MEMORY_FORMAT:
        if (g->u.i == w->i) return true;
        sb_printf(why, "got %" PRId64 ", want %" PRId64, g->u.i, w->i);
        return false;
    case SG_ANY_INT_LIST: {
        bool same = g->len == w->len;
        for (int32_t k = 0; same && k < w->len; k++) same = g->u.ints[k] == w->ints[k];
        if (same) return true;
        sb_printf(why, "got ");
        sb_sizes(why, g->u.ints, g->len);
        sb_printf(why, ", want ");
        sb_sizes(why, w->ints, w->len);
        return false;
    }
    case SG_ANY_STR:
        if (g->len == w->len && !memcmp(g->u.s, w->s, (size_t)w->len)) return true;
        sb_printf(why, "got '%.*s', want '%s'", (int)g->len, g->u.s, w->s);
        return false;
    default:
        sb_printf(why, "the harness cannot compare a %s", sg_any_tag_name(w->tag));
        return false;
    }
}

/* ---- the file ---------------------------------------------------------------------------- */

/* Reads the reference file at path whole and checks its header (magic, a version from vmin to
 * vmax). Returns 0 with *buf (malloc'd), *size, *version and *ncases set, and a reader placed
 * after the header in *r; 77 where the file is missing; 1 where it cannot be read or is not such
 * a file. Either of the last two has said why (maker: the script that makes the file). */
static inline int ref_load(const char *path, const char magic[8], uint32_t vmin, uint32_t vmax,
                           const char *maker, uint8_t **buf, size_t *size, uint32_t *version,
                           uint32_t *ncases, reader *r) {
    *buf = NULL;
    uint16_t one = 1;
    if (*(const uint8_t *)&one != 1) {
        fprintf(stderr, "skipped: the reference file is little-endian; this host is not\n");
        return 77;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno != ENOENT) {
            fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
            return 1;
        }
        fprintf(stderr, "skipped: %s is missing (make it with %s)\n", path, maker);
        return 77;
    }
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    uint8_t *b = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc(n > 0 ? (size_t)n : 1) : NULL;
    if (!b || n < 16 || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: cannot read%s\n", path,
                n >= 0 && n < 16 ? ": shorter than a header (16 bytes)" : "");
        fclose(f);
        free(b);
        return 1;
    }
    fclose(f);
    *r = (reader){b, b + n, true};
    char got[8];
    take(r, got, 8);
    uint32_t v = rd_u32(r), k = rd_u32(r);
    bool known = v >= vmin && v <= vmax;
    if (memcmp(got, magic, 8) != 0 || !known || k > (1u << 20)) {
        char vs[32];
        if (vmin == vmax)
            snprintf(vs, sizeof vs, "%u", vmin);
        else
            snprintf(vs, sizeof vs, "%u to %u", vmin, vmax);
        fprintf(stderr, "%s: not a version %s %.8s file (%s)\n", path, vs, magic,
                memcmp(got, magic, 8) ? "its first 8 bytes are not the magic"
                : !known              ? "another version"
                                      : "too many cases");
        free(b);
        return 1;
    }
    *buf = b;
    *size = (size_t)n;
    *version = v;
    *ncases = k;
    return 0;
}

/* ---- the listed differences ---------------------------------------------------------------
 * The cases a file lists, by plan line, as differing from PyTorch (docs/conformance.md, "Listed
 * differences"; the gradients' list likewise). A listed case that differs is counted apart; one
 * that agrees fails, so that the list holds exactly what differs, except in a group whose
 * comment starts with REF_UNORDERED: what such a case gives is not fixed (which of several writes
 * to one element lands, on a GPU), so it may agree or differ. Loaded before any case runs. */
#define REF_UNORDERED "# deliberate, nondeterministic:"

typedef struct listed_case {
    char *label;
    bool  unordered; /* may agree too */
} listed_case;

static listed_case *listed;
static size_t       nlisted;

static inline int ref_cmp_str(const void *x, const void *y) {
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* false where the file exists and cannot be read; a missing file lists nothing. A group is
 * the case lines after a comment, up to the next blank line. */
static inline bool load_listed(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT;
    char   line[4096];
    size_t cap = 0;
    bool   unordered = false, in_comment = false;
    while (fgets(line, sizeof line, f)) {
        size_t n = strcspn(line, "\r\n");
        line[n] = 0;
        if (!n) {
            unordered = in_comment = false;
            continue;
        }
        if (line[0] == '#') {
            if (!in_comment) unordered = strncmp(line, REF_UNORDERED, strlen(REF_UNORDERED)) == 0;
            in_comment = true;
            continue;
        }
        in_comment = false;
        if (nlisted == cap) {
            cap = cap ? 2 * cap : 256;
            listed_case *p = realloc(listed, cap * sizeof *p);
            if (!p) break;
            listed = p;
        }
        if (!(listed[nlisted].label = strdup(line))) break;
        listed[nlisted++].unordered = unordered;
    }
    bool ok = !ferror(f) && feof(f);
    fclose(f);
    if (nlisted) qsort(listed, nlisted, sizeof *listed, ref_cmp_str);
    return ok;
}

/* The list's entry for label, or NULL. */
static inline const listed_case *is_listed(const char *label) {
    return nlisted ? bsearch(&label, listed, nlisted, sizeof *listed, ref_cmp_str) : NULL;
}

static inline void free_listed(void) {
    for (size_t i = 0; i < nlisted; i++) free(listed[i].label);
    free(listed);
    listed = NULL, nlisted = 0;
}

/* ---- the GPU ----------------------------------------------------------------------------- */

/* Whether a GPU is usable: 0 where one is, 77 where none is (said), 1 where asking failed (said).
 * Rationale: asked in a child, since a process that has started CUDA cannot use it in the
 * children it forks, and the cases run in children. */
static inline int ref_cuda_probe(void) {
    fflush(stdout);
    pid_t probe = fork();
    if (probe == 0) {
        const char *why = NULL;
        if (sg_cuda_available(&why)) _exit(0);
        printf("skipped: no usable GPU: %s\n", why);
        fflush(stdout);
        _exit(77);
    }
    int pst = 0;
    while (probe > 0 && waitpid(probe, &pst, 0) < 0 && errno == EINTR) {
    }
    if (probe < 0 || !WIFEXITED(pst)) {
        fprintf(stderr, "cannot probe for a GPU\n");
        return 1;
    }
    return WEXITSTATUS(pst) != 0 ? 77 : 0;
}

/* ---- running cases, each in a child that a crash may take down ----------------------------
 * Rationale: the kernels are young, and one that crashes would otherwise hide every case after
 * it. A child runs the cases in order and sends a record for each through a pipe; where it
 * dies, the case it was running is a failure and a new child goes on after it. nofork runs them
 * in this process instead (for a debugger). */

/* What running a case gave: sent from the child that ran it to the parent. */
typedef struct ref_record {
    int32_t index, outcome, status;
    int32_t crashed; /* set by the parent for the case a child died in */
    int32_t mark;    /* the runner's own note on the case (test_npu_conformance: its route;
                      * test_cuda_conformance: whether a DSL kernel took it) */
    int32_t typed;   /* the conformance runner's typed path (typed_replay.h); else 0 */
    char    desc[1024];
    char    why[1024]; /* the mismatch or error */
} ref_record;

typedef struct ref_runner {
    uint32_t ncases;
    sg_status (*init)(void); /* the library's init, in each child */
    /* runs case i in this process: fills rec (index set, the rest zeroed) */
    void (*run)(void *ctx, uint32_t i, ref_record *rec);
    /* fills rec->desc for case i, in the parent (a case a child died in) */
    void (*describe)(void *ctx, uint32_t i, ref_record *rec);
    /* counts a record, in the parent */
    void (*account)(void *ctx, const ref_record *rec);
    /* frees what a child holds before it exits (the leak checker runs at exit); may be NULL */
    void (*child_done)(void *ctx);
    void *ctx;
    int32_t fail_outcome; /* the outcome a crash records */
    uint32_t every;       /* nofork only: every every-th case (0 or 1: all; ref_every) */
} ref_runner;

/* SG_REF_EVERY=N: where the cases run in this process (nofork; compute-sanitizer's runs), only
 * every N-th, from the first; 1 otherwise. */
static inline uint32_t ref_every(bool nofork) {
    const char *env = getenv("SG_REF_EVERY");
    long        n = env && nofork ? strtol(env, NULL, 10) : 1;
    return n > 1 && n < 1000000 ? (uint32_t)n : 1;
}

/* How many cases ref_run_all runs. */
static inline uint32_t ref_cases_run(const ref_runner *rn) {
    uint32_t every = rn->every > 1 ? rn->every : 1;
    return rn->ncases / every + (rn->ncases % every != 0);
}

static inline bool ref_write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        c += w, n -= (size_t)w;
    }
    return true;
}

/* Reads a whole record; false at the end of the stream. */
static inline bool ref_read_record(int fd, ref_record *rec) {
    char  *c = (char *)rec;
    size_t n = sizeof *rec;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        c += r, n -= (size_t)r;
    }
    return true;
}

/* Runs cases [from, ncases), reporting each to fd, or accounting here where fd < 0. */
static inline void ref_run_range(const ref_runner *rn, uint32_t from, int fd, ref_record *rec) {
    uint32_t step = fd < 0 && rn->every > 1 ? rn->every : 1;
    for (uint32_t i = from; i < rn->ncases; i += step) {
        memset(rec, 0, sizeof *rec);
        rec->index = (int32_t)i;
        if (fd >= 0) alarm(60); /* a case that hangs counts as a crash */
        rn->run(rn->ctx, i, rec);
        if (fd < 0)
            rn->account(rn->ctx, rec);
        else if (!ref_write_all(fd, rec, sizeof *rec))
            break;
    }
    if (fd >= 0) alarm(0);
}

/* Runs every case; returns the number of crashes, or -1 where the runner itself failed (said). */
static inline int ref_run_all(const ref_runner *rn, bool nofork) {
    ref_record *rec = malloc(sizeof *rec);
    if (!rec) {
        fprintf(stderr, "out of memory\n");
        return -1;
    }
    int crashes = 0;
    if (nofork) {
        sg_status st = rn->init();
        if (st) {
            fprintf(stderr, "init: %s: %s\n", sg_status_name(st), sg_last_error());
            free(rec);
            return -1;
        }
        ref_run_range(rn, 0, -1, rec);
        sg_runtime_shutdown();
        free(rec);
        return 0;
    }
    uint32_t next = 0;
    while (next < rn->ncases) {
        int fds[2];
        fflush(stdout);
        fflush(stderr);
        if (pipe(fds) != 0) {
            perror("pipe");
            free(rec);
            return -1;
        }
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            free(rec);
            return -1;
        }
        if (pid == 0) {
            close(fds[0]);
            sg_status st = rn->init();
            if (st) {
                fprintf(stderr, "init: %s: %s\n", sg_status_name(st), sg_last_error());
                _exit(3);
            }
            ref_run_range(rn, next, fds[1], rec);
            close(fds[1]);
            sg_runtime_shutdown();
            free(rec);
            if (rn->child_done) rn->child_done(rn->ctx);
            exit(0); /* exit, not _exit: the leak checker runs at exit */
        }
        close(fds[1]);
        uint32_t got = next;
        while (ref_read_record(fds[0], rec)) {
            if (rec->index != (int32_t)got) {
                fprintf(stderr, "a child reported case %d, expected %u\n", rec->index, got);
                free(rec);
                return -1;
            }
            rn->account(rn->ctx, rec);
            got++;
        }
        close(fds[0]);
        int wst = 0;
        while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {
        }
        bool clean = WIFEXITED(wst) && WEXITSTATUS(wst) == 0;
        if (clean && got == rn->ncases) break;
        if (WIFEXITED(wst) && WEXITSTATUS(wst) == 3) { /* init failed (said) */
            free(rec);
            return -1;
        }
        if (got == rn->ncases) { /* every case ran, then the child failed (leaks, say) */
            printf("FAIL the child that ran the last cases exited with %s %d\n",
                   WIFSIGNALED(wst) ? "signal" : "status",
                   WIFSIGNALED(wst) ? WTERMSIG(wst) : WEXITSTATUS(wst));
            crashes++;
            break;
        }
        /* the case in flight crashed: record it and go on after it */
        memset(rec, 0, sizeof *rec);
        rec->index = (int32_t)got;
        rec->outcome = rn->fail_outcome;
        rec->crashed = 1;
        rn->describe(rn->ctx, got, rec);
        if (WIFSIGNALED(wst))
            snprintf(rec->why, sizeof rec->why, "CRASHED: signal %d (%s)", WTERMSIG(wst),
                     WTERMSIG(wst) == SIGALRM ? "ran over 60 s" : strsignal(WTERMSIG(wst)));
        else
            snprintf(rec->why, sizeof rec->why, "CRASHED: the child exited with status %d "
                     "(a sanitizer report is above)", WEXITSTATUS(wst));
        rn->account(rn->ctx, rec);
        crashes++;
        next = got + 1;
    }
    free(rec);
    return crashes;
}

#endif
