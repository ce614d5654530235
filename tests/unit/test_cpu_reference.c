/* test_cpu_reference.c: the CPU kernels against PyTorch's own results.
 *
 * tests/data/cpu_reference.bin holds cases made by PyTorch 2.11 on the CPU: an aten op
 * overload, its full boxed argument list (defaults filled in, in schema order) and torch's
 * results. Each case is called here boxed, through sg_call_by_name, and its results compared:
 * dtypes and shapes exactly, integer and bool elements exactly, floating elements within the
 * case's rtol/atol (|got - want| <= atol + rtol * |want|; NaN equals NaN, an infinity only
 * itself). Results that are views are read through their strides.
 *
 * How the data was made: tests/reference/make_cpu_reference.py (torch 2.11.0, CPU, inputs from
 * torch.manual_seed(0)), run on the device machine, the one with torch installed:
 *
 *     python3 tests/reference/make_cpu_reference.py tests/data/cpu_reference.bin
 *
 * File format (the script's docstring has it in full): "SGCPUREF", u32 version 1, u32 ncases,
 * then per case: str family, str name ("aten::add"), str overload, str label, u8 flags, f64 rtol,
 * f64 atol, u8 nargs + values, u8 nrets + values (str = u16 length + bytes; little-endian). A
 * value is a u8 sg_any tag and its payload: BOOL u8, INT i64, FLOAT f64, STR str, DTYPE /
 * LAYOUT / MEMORY_FORMAT u8, DEVICE u8 type + u8 index, INT_LIST / FLOAT_LIST / BOOL_LIST u32 n
 * + items, TENSOR tensor, TENSOR_LIST u32 n + tensors. A tensor is u8 dtype, u8 ndim, i64
 * sizes[ndim], u8 layout (0 contiguous; 1 stored with its last two dims swapped and passed as
 * that transposed back, non-contiguous; 2 u8 sndim + i64 ssizes: a small tensor passed as its
 * expand to sizes), u64 nbytes and the raw elements.
 *
 * Ops without kernels yet (SG_ENOKERNEL, SG_EUNSUPPORTED) are listed, once per op, as "not
 * implemented yet" and do not fail the test; any other error, any mismatch and any crash does
 * (the cases run in a child process, so a kernel that crashes fails its case and the rest still
 * run). Each failure prints the case: op, argument dtypes and shapes, the first differing
 * element. The path may be given as the first argument; the test skips (77) where the file is
 * missing. SG_REF_VERBOSE=1 prints every case; SG_REF_NOFORK=1 runs them in this process (for
 * a debugger).
 *
 * The same program built with SG_REF_CUDA (test_cuda_reference) runs every case on the GPU
 * instead: it moves each tensor argument there (views are made there from the
 * moved base, so transposed and expanded inputs stay what they are), passes device arguments
 * as CUDA, and copies results back to compare them. It skips (77) where no GPU is usable. */
#define _POSIX_C_SOURCE 200809L /* fork, pipe, waitpid, alarm, strsignal */
#include "aten.h"
#include "check.h"
#include "sg_aten_cpu.h"
#ifdef SG_REF_CUDA
#include "sg_aten_cuda.h"
#include "sg_iter.h"
#endif

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

#ifndef SG_TESTS_DIR
#define SG_TESTS_DIR "tests"
#endif

enum { MAX_FAIL_PRINTS_PER_OP = 4, MAX_ITEMS = 255 };

/* Where the cases run (--device), and the library's init for it. */
static sg_device dev_under_test = {SG_DEV_CPU, 0};

static sg_status init_library(void) {
#ifdef SG_REF_CUDA
    return sg_aten_cuda_init();
#else
    return sg_aten_cpu_init();
#endif
}

/* ---- per-case memory --------------------------------------------------------------------- */

typedef struct arena {
    void  **ptrs;
    size_t  n, cap;
} arena;

static void *arena_alloc(arena *a, size_t n) {
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

static void arena_reset(arena *a) {
    for (size_t i = 0; i < a->n; i++) free(a->ptrs[i]);
    a->n = 0;
}

/* ---- reading the file -------------------------------------------------------------------- */

typedef struct reader {
    const uint8_t *p, *end;
    bool           ok;
} reader;

static bool take(reader *r, void *dst, size_t n) {
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
static uint8_t  rd_u8(reader *r) { uint8_t v; take(r, &v, 1); return v; }
static uint16_t rd_u16(reader *r) { uint16_t v; take(r, &v, 2); return v; }
static uint32_t rd_u32(reader *r) { uint32_t v; take(r, &v, 4); return v; }
static uint64_t rd_u64(reader *r) { uint64_t v; take(r, &v, 8); return v; }
static int64_t  rd_i64(reader *r) { int64_t v; take(r, &v, 8); return v; }
static double   rd_f64(reader *r) { double v; take(r, &v, 8); return v; }

static char *rd_str(reader *r, arena *a, int32_t *len) {
    uint16_t n = rd_u16(r);
    char    *s = arena_alloc(a, (size_t)n + 1);
    take(r, s, n);
    s[n] = '\0';
    if (len) *len = n;
    return s;
}

/* A tensor as stored. */
typedef struct tdesc {
    uint8_t        dtype, layout;
    int32_t        ndim, sndim;
    int64_t       *sizes, *ssizes;
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
    uint8_t  dev[2];
} value;

static int64_t numel_of(const int64_t *sizes, int32_t n) {
    int64_t k = 1;
    for (int32_t i = 0; i < n; i++) k *= sizes[i];
    return k;
}

static void rd_tensor(reader *r, arena *a, tdesc *t) {
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
    } else if (t->layout > 2) {
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

static void rd_value(reader *r, arena *a, value *v) {
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
    case SG_ANY_TENSOR_LIST: {
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
            for (uint32_t k = 0; k < n && r->ok; k++) rd_tensor(r, a, &v->ts[k]);
        }
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

static void sb_printf(sbuf *s, const char *fmt, ...) SG_PRINTF(2, 3);
static void sb_printf(sbuf *s, const char *fmt, ...) {
    if (s->n >= sizeof s->b - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(s->b + s->n, sizeof s->b - s->n, fmt, ap);
    va_end(ap);
    if (w > 0) s->n += (size_t)w < sizeof s->b - s->n ? (size_t)w : sizeof s->b - s->n - 1;
}

static void sb_sizes(sbuf *s, const int64_t *sizes, int32_t n) {
    sb_printf(s, "[");
    for (int32_t i = 0; i < n; i++) sb_printf(s, "%s%" PRId64, i ? ", " : "", sizes[i]);
    sb_printf(s, "]");
}

static void sb_tensor(sbuf *s, const tdesc *t) {
    sb_printf(s, "%s", sg_dtype_name((sg_dtype)t->dtype));
    sb_sizes(s, t->sizes, t->ndim);
    if (t->layout == 1) sb_printf(s, " transposed");
    if (t->layout == 2) {
        sb_printf(s, " expanded from ");
        sb_sizes(s, t->ssizes, t->sndim);
    }
}

static void sb_value(sbuf *s, const value *v) {
    switch (v->tag) {
    case SG_ANY_NONE: sb_printf(s, "None"); break;
    case SG_ANY_BOOL: sb_printf(s, "%s", v->b ? "True" : "False"); break;
    case SG_ANY_INT: sb_printf(s, "%" PRId64, v->i); break;
    case SG_ANY_FLOAT: sb_printf(s, "%.17g", v->f); break;
    case SG_ANY_STR: sb_printf(s, "'%s'", v->s); break;
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

static void own(owned *o, sg_tensor *t) {
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

static void release_owned(owned *o) {
    for (size_t i = 0; i < o->n; i++) sg_tensor_release(o->t[i]);
    o->n = 0;
}

/* The tensor a stored tensor stands for: contiguous, a transposed view, or an expanded one. */
static sg_status build_tensor(const tdesc *d, sg_tensor **out) {
    *out = NULL;
    int64_t   sizes[SG_MAX_DIMS];
    sg_tensor *base = NULL;
    sg_status st;
    if (d->layout == 1) {
        memcpy(sizes, d->sizes, (size_t)d->ndim * sizeof *sizes);
        sizes[d->ndim - 1] = d->sizes[d->ndim - 2];
        sizes[d->ndim - 2] = d->sizes[d->ndim - 1];
        st = sg_tensor_empty(sizes, d->ndim, (sg_dtype)d->dtype, SG_CPU, &base);
    } else {
        st = sg_tensor_empty(d->ssizes, d->sndim, (sg_dtype)d->dtype, SG_CPU, &base);
    }
    if (st) return st;
    if (d->nbytes) memcpy(sg_tensor_data(base), d->data, d->nbytes);
    if (dev_under_test.type != SG_DEV_CPU) {
        sg_tensor *moved;
        st = sg_tensor_to(base, dev_under_test, &moved);
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
    else
        st = sg_tensor_expand(base, d->sizes, d->ndim, out);
    sg_tensor_release(base);
    return st;
}

static sg_status build_arg(const value *v, arena *a, owned *o, sg_any *out) {
    sg_any r = sg_any_none();
    switch (v->tag) {
    case SG_ANY_NONE: break;
    case SG_ANY_BOOL: r = sg_any_bool(v->b); break;
    case SG_ANY_INT: r = sg_any_int(v->i); break;
    case SG_ANY_FLOAT: r = sg_any_float(v->f); break;
    case SG_ANY_STR: r = sg_any_str(v->s, v->len); break;
    case SG_ANY_DTYPE: r = sg_any_dtype((sg_dtype)v->i); break;
    case SG_ANY_LAYOUT:
    case SG_ANY_MEMORY_FORMAT:
        r.tag = v->tag;
        r.u.i = v->i;
        break;
    case SG_ANY_DEVICE: {
        sg_device d = {(int8_t)v->dev[0], (int8_t)v->dev[1]};
        if (d.type == SG_DEV_CPU) d = dev_under_test;
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
    case SG_ANY_TENSOR_LIST: {
        sg_tensor **ts = arena_alloc(a, (size_t)v->len * sizeof *ts);
        for (int32_t k = 0; k < v->len; k++) {
            sg_status st = build_tensor(&v->ts[k], &ts[k]);
            if (st) return st;
            own(o, ts[k]);
        }
        r = sg_any_tensor_list(ts, v->len);
        break;
    }
    default: return sg_error(SG_EINVAL, "the harness cannot pass a value of tag %d", v->tag);
    }
    *out = r;
    return SG_OK;
}

/* ---- comparing --------------------------------------------------------------------------- */

static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff, bits;
    if (e == 0) {
        float f = ldexpf((float)m, -24);
        return sign ? -f : f;
    }
    if (e == 0x1f)
        bits = sign | 0x7f800000u | m << 13;
    else
        bits = sign | (e + 112) << 23 | m << 13;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static float bf16_to_float(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float    f;
    memcpy(&f, &bits, 4);
    return f;
}

static bool is_float_dtype(uint8_t dt) {
    return dt == SG_FLOAT16 || dt == SG_FLOAT32 || dt == SG_FLOAT64 || dt == SG_BFLOAT16;
}

static double read_float(const void *p, uint8_t dt) {
    switch (dt) {
    case SG_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return half_to_float(h); }
    case SG_BFLOAT16: { uint16_t h; memcpy(&h, p, 2); return bf16_to_float(h); }
    case SG_FLOAT32: { float f; memcpy(&f, p, 4); return f; }
    default: { double d; memcpy(&d, p, 8); return d; }
    }
}

static int64_t read_int(const void *p, uint8_t dt) {
    switch (dt) {
    case SG_UINT8: return *(const uint8_t *)p;
    case SG_BOOL: return *(const uint8_t *)p;
    case SG_INT8: return *(const int8_t *)p;
    case SG_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case SG_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    default: { int64_t v; memcpy(&v, p, 8); return v; }
    }
}

static bool float_close(double g, double w, double rtol, double atol) {
    if (isnan(w)) return isnan(g);
    if (isinf(w)) return g == w;
    if (isnan(g) || isinf(g)) return false;
    return fabs(g - w) <= atol + rtol * fabs(w);
}

static bool compare_host_tensor(const sg_tensor *g, const tdesc *w, double rtol, double atol,
                                sbuf *why);

/* Compares a result tensor with the expected one; on a mismatch writes why into why. A result
 * must be on the device under test; it is read through a copy on the host. */
static bool compare_tensor(const sg_tensor *g, const tdesc *w, double rtol, double atol,
                           sbuf *why) {
    if (!g) {
        sb_printf(why, "got no tensor (NULL)");
        return false;
    }
    if (!sg_device_eq(g->device, dev_under_test)) {
        sb_printf(why, "got a tensor on %s", sg_device_type_name((sg_device_type)g->device.type));
        return false;
    }
    if (g->device.type == SG_DEV_CPU) return compare_host_tensor(g, w, rtol, atol, why);
    sg_tensor *host;
    sg_status  st = sg_tensor_to((sg_tensor *)g, (sg_device){SG_DEV_CPU, 0}, &host);
    if (st) {
        sb_printf(why, "copying the result to the host: %s: %s", sg_status_name(st),
                  sg_last_error());
        return false;
    }
    bool same = compare_host_tensor(host, w, rtol, atol, why);
    sg_tensor_release(host);
    return same;
}

static bool compare_host_tensor(const sg_tensor *g, const tdesc *w, double rtol, double atol,
                                sbuf *why) {
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

static bool compare_value(const sg_any *g, const value *w, double rtol, double atol, sbuf *why) {
    int32_t want_tag = w->tag;
    if (g->tag != want_tag) {
        sb_printf(why, "got a %s, want a %s", sg_any_tag_name(g->tag), sg_any_tag_name(want_tag));
        return false;
    }
    switch (w->tag) {
    case SG_ANY_TENSOR: return compare_tensor(g->u.t, w->ts, rtol, atol, why);
    case SG_ANY_TENSOR_LIST:
        if (g->len != w->len) {
            sb_printf(why, "%d tensors, want %d", g->len, w->len);
            return false;
        }
        for (int32_t k = 0; k < w->len; k++) {
            if (!compare_tensor(g->u.tensors[k], &w->ts[k], rtol, atol, why)) {
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
    default: sb_printf(why, "the harness cannot compare a %s", sg_any_tag_name(w->tag)); return false;
    }
}

/* ---- one case ---------------------------------------------------------------------------- */

typedef struct parsed {
    char   *family, *name, *overload, *label;
    uint8_t flags;
    double  rtol, atol;
    int     nargs, nrets;
    value   args[MAX_ITEMS], rets[MAX_ITEMS];
} parsed;

/* Reads the case at r into c (strings and lists in a). */
static bool parse_case(reader *r, arena *a, parsed *c) {
    c->family = rd_str(r, a, NULL);
    c->name = rd_str(r, a, NULL);
    c->overload = rd_str(r, a, NULL);
    c->label = rd_str(r, a, NULL);
    c->flags = rd_u8(r);
    c->rtol = rd_f64(r);
    c->atol = rd_f64(r);
    c->nargs = rd_u8(r);
    for (int i = 0; i < c->nargs && r->ok; i++) rd_value(r, a, &c->args[i]);
    c->nrets = rd_u8(r);
    for (int i = 0; i < c->nrets && r->ok; i++) rd_value(r, a, &c->rets[i]);
    return r->ok;
}

static void describe_case(const parsed *c, sbuf *s) {
    sb_printf(s, "[%s] %s%s%s(", c->family, c->name, *c->overload ? "." : "", c->overload);
    for (int i = 0; i < c->nargs; i++) {
        if (i) sb_printf(s, ", ");
        sb_value(s, &c->args[i]);
    }
    sb_printf(s, ")%s%s", *c->label ? " " : "", c->label);
}

enum { OUT_PASS, OUT_FAIL, OUT_NOIMPL };

/* What running a case gave: sent from the child that ran it to the parent. */
typedef struct record {
    int32_t index, outcome, status;
    char    desc[1024];
    char    why[1024]; /* the mismatch or error; for OUT_NOIMPL the kernel's message */
} record;

/* Calls the case and compares its results. */
#ifdef SG_REF_CUDA
/* Where aten's CUDA kernel differs from its CPU one in a result's dtype: native_layer_norm keeps
 * mean and rstd in the accumulation dtype (float32 for a 16-bit input) on CUDA, in the input's
 * on the CPU. Such a result must have CUDA's dtype; it is then cast to the CPU's to compare. */
static bool cuda_statistics(const parsed *c, sg_any *out, sbuf *why) {
    if (strcmp(c->name, "aten::native_layer_norm") != 0 || c->nrets != 3) return true;
    for (int i = 1; i < 3; i++) {
        const value *w = &c->rets[i];
        sg_tensor   *g = out[i].tag == SG_ANY_TENSOR ? out[i].u.t : NULL;
        if (!g || w->tag != SG_ANY_TENSOR || (w->ts->dtype != SG_FLOAT16 && w->ts->dtype != SG_BFLOAT16))
            continue;
        if (g->dtype != SG_FLOAT32) {
            sb_printf(why, "result %d: dtype %s, want float32 (aten's CUDA kernel)", i,
                      sg_dtype_name((sg_dtype)g->dtype));
            return false;
        }
        sg_tensor *cast = NULL;
        if (sg_cast(g, (sg_dtype)w->ts->dtype, &cast)) {
            sb_printf(why, "result %d: casting to compare: %s", i, sg_last_error());
            return false;
        }
        sg_tensor_release(g);
        out[i].u.t = cast;
    }
    return true;
}
#endif

static void run_case(const parsed *c, arena *a, record *rec) {
    sbuf desc = {{0}, 0}, why = {{0}, 0};
    describe_case(c, &desc);
    owned  o = {NULL, 0, 0};
    sg_any in[MAX_ITEMS], out[MAX_ITEMS];
    memset(out, 0, sizeof out);
    sg_status st = SG_OK;
    for (int i = 0; i < c->nargs && !st; i++) st = build_arg(&c->args[i], a, &o, &in[i]);
    /* a factory's `Device? device=None` means the CPU to torch: here the device under test */
    const sg_op_desc *d = dev_under_test.type != SG_DEV_CPU ? aten_find(c->name, c->overload)
                                                             : NULL;
    for (int i = 0; d && !st && i < c->nargs && i < d->nargs; i++)
        if (in[i].tag == SG_ANY_NONE && !strcmp(d->args[i].type, "Device?"))
            in[i] = sg_any_device(dev_under_test);
    bool harness = st != SG_OK;
    if (!st) {
        sg_error_clear();
        st = sg_call_by_name(c->name, c->overload, in, c->nargs, out, c->nrets);
    }
    rec->status = st;
    if (st == SG_ENOKERNEL || st == SG_EUNSUPPORTED) {
        rec->outcome = OUT_NOIMPL;
        sb_printf(&why, "%s", sg_last_error());
    } else if (st) {
        rec->outcome = OUT_FAIL;
        sb_printf(&why, "%s%s: %s", harness ? "the harness could not build an argument: " : "",
                  sg_status_name(st), sg_last_error());
    } else {
        rec->outcome = OUT_PASS;
#ifdef SG_REF_CUDA
        if (!cuda_statistics(c, out, &why)) rec->outcome = OUT_FAIL;
#endif
        for (int i = 0; rec->outcome == OUT_PASS && i < c->nrets; i++) {
            if (!compare_value(&out[i], &c->rets[i], c->rtol, c->atol, &why)) {
                rec->outcome = OUT_FAIL;
                if (c->nrets > 1) sb_printf(&why, " (result %d)", i);
                break;
            }
        }
    }
    for (int i = 0; i < c->nrets; i++) sg_any_release(&out[i]);
    release_owned(&o);
    free(o.t);
    memcpy(rec->desc, desc.b, sizeof rec->desc);
    memcpy(rec->why, why.b, sizeof rec->why);
}

/* ---- bookkeeping per op ------------------------------------------------------------------ */

typedef struct opstat {
    char key[96]; /* "aten::add.Tensor" */
    char family[16];
    int  total, passed, failed, noimpl, printed;
    char noimpl_msg[240];
} opstat;

static opstat *ops;
static size_t  nops, capops;

static size_t opstat_of(const char *name, const char *overload, const char *family) {
    char key[96];
    snprintf(key, sizeof key, "%s%s%s", name, *overload ? "." : "", overload);
    for (size_t i = 0; i < nops; i++)
        if (!strcmp(ops[i].key, key)) return i;
    if (nops == capops) {
        capops = capops ? 2 * capops : 64;
        opstat *p = realloc(ops, capops * sizeof *p);
        if (!p) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        ops = p;
    }
    opstat *o = &ops[nops++];
    memset(o, 0, sizeof *o);
    snprintf(o->key, sizeof o->key, "%s", key);
    snprintf(o->family, sizeof o->family, "%s", family);
    return nops - 1;
}

/* What the parent knows of each case before running any. */
typedef struct caseinfo {
    size_t offset; /* into the file */
    size_t op;     /* index into ops (which grows: no pointers into it) */
} caseinfo;

typedef struct totals {
    int cases, passed, failed, noimpl;
} totals;

static bool verbose;

static void account(const record *rec, opstat *os, totals *tot) {
    os->total++;
    tot->cases++;
    if (rec->outcome == OUT_NOIMPL) {
        if (!os->noimpl++) {
            int w = snprintf(os->noimpl_msg, sizeof os->noimpl_msg, "%s: ",
                             sg_status_name((sg_status)rec->status));
            if (w > 0 && (size_t)w < sizeof os->noimpl_msg)
                snprintf(os->noimpl_msg + w, sizeof os->noimpl_msg - (size_t)w, "%.200s", rec->why);
        }
        tot->noimpl++;
        if (verbose) printf("n/i  %s\n", rec->desc);
    } else if (rec->outcome == OUT_PASS) {
        os->passed++;
        tot->passed++;
        if (verbose) printf("ok   %s\n", rec->desc);
    } else {
        os->failed++;
        tot->failed++;
        if (os->printed++ < MAX_FAIL_PRINTS_PER_OP || verbose)
            printf("FAIL %s\n     %s\n", rec->desc, rec->why);
    }
    fflush(stdout);
}

/* ---- running the cases, in a child that a crash may take down ----------------------------
 * Rationale: the kernels are young, and one that crashes would otherwise hide every case after
 * it. A child runs the cases in order and sends a record for each through a pipe; where it
 * dies, the case it was running is a failure and a new child goes on after it. SG_REF_NOFORK=1
 * runs them in this process instead (for a debugger). */

static bool write_all(int fd, const void *p, size_t n) {
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
static bool read_record(int fd, record *rec) {
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

/* Runs cases [from, n) and reports each to fd (-1: account here). */
static void run_range(const uint8_t *buf, size_t size, const caseinfo *cases, uint32_t from,
                      uint32_t n, int fd, totals *tot, parsed *c, record *rec) {
    arena a = {NULL, 0, 0};
    for (uint32_t i = from; i < n; i++) {
        reader r = {buf + cases[i].offset, buf + size, true};
        memset(rec, 0, sizeof *rec);
        rec->index = (int32_t)i;
        parse_case(&r, &a, c); /* checked by the parent's first pass */
        if (fd >= 0) alarm(60); /* a case that hangs counts as a crash */
        run_case(c, &a, rec);
        arena_reset(&a);
        if (fd < 0)
            account(rec, &ops[cases[i].op], tot);
        else if (!write_all(fd, rec, sizeof *rec))
            break;
    }
    if (fd >= 0) alarm(0);
    free(a.ptrs);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : SG_TESTS_DIR "/data/cpu_reference.bin";
#ifdef SG_REF_CUDA
    /* Rationale: asked in a child, since a process that has started CUDA cannot use it in the
     * children it forks, and the cases run in children. */
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
    if (WEXITSTATUS(pst) != 0) return 77;
    dev_under_test = (sg_device){SG_DEV_CUDA, 0};
#endif
    const char *env = getenv("SG_REF_VERBOSE");
    verbose = env && *env && strcmp(env, "0") != 0;
    env = getenv("SG_REF_NOFORK");
    bool     nofork = env && *env && strcmp(env, "0") != 0;
    uint16_t one = 1;
    if (*(const uint8_t *)&one != 1) SKIP("the reference file is little-endian; this host is not");

    FILE *f = fopen(path, "rb");
    if (!f) SKIP("%s is missing (make it with tests/reference/make_cpu_reference.py)", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
    if (!buf || size < 16 || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: cannot read\n", path);
        fclose(f);
        free(buf);
        return 1;
    }
    fclose(f);
    reader r = {buf, buf + size, true};
    char   magic[8];
    take(&r, magic, 8);
    uint32_t version = rd_u32(&r), ncases = rd_u32(&r);
    if (memcmp(magic, "SGCPUREF", 8) != 0 || version != 1 || ncases > (1u << 20)) {
        fprintf(stderr, "%s: not a version 1 reference file\n", path);
        free(buf);
        return 1;
    }

    /* first pass: where each case starts, and that all of them read */
    parsed   *c = malloc(sizeof *c);
    record   *rec = malloc(sizeof *rec);
    caseinfo *cases = malloc((ncases ? ncases : 1) * sizeof *cases);
    if (!c || !rec || !cases) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    arena a = {NULL, 0, 0};
    bool  readable = true;
    for (uint32_t i = 0; i < ncases && readable; i++) {
        cases[i].offset = (size_t)(r.p - buf);
        readable = parse_case(&r, &a, c);
        if (readable) cases[i].op = opstat_of(c->name, c->overload, c->family);
        arena_reset(&a);
    }
    if (!readable || r.p != r.end) {
        fprintf(stderr, "%s: malformed or truncated (at byte %td of %ld)\n", path, r.p - buf, size);
        return 1;
    }

    totals tot = {0, 0, 0, 0};
    int    crashes = 0;
    if (nofork) {
        sg_status st = init_library();
        if (st) {
            fprintf(stderr, "init: %s: %s\n", sg_status_name(st), sg_last_error());
            return 1;
        }
        run_range(buf, (size_t)size, cases, 0, ncases, -1, &tot, c, rec);
        sg_runtime_shutdown();
    } else {
        uint32_t next = 0;
        while (next < ncases) {
            int fds[2];
            fflush(stdout);
            fflush(stderr);
            if (pipe(fds) != 0) {
                perror("pipe");
                return 1;
            }
            pid_t pid = fork();
            if (pid < 0) {
                perror("fork");
                return 1;
            }
            if (pid == 0) {
                close(fds[0]);
                sg_status st = init_library();
                if (st) {
                    fprintf(stderr, "init: %s: %s\n", sg_status_name(st),
                            sg_last_error());
                    _exit(3);
                }
                run_range(buf, (size_t)size, cases, next, ncases, fds[1], &tot, c, rec);
                close(fds[1]);
                sg_runtime_shutdown();
                free(c), free(rec), free(cases), free(buf), free(ops), free(a.ptrs);
                exit(0); /* exit, not _exit: the leak checker runs at exit */
            }
            close(fds[1]);
            uint32_t got = next;
            while (read_record(fds[0], rec)) {
                if (rec->index != (int32_t)got) {
                    fprintf(stderr, "a child reported case %d, expected %u\n", rec->index, got);
                    return 1;
                }
                account(rec, &ops[cases[got].op], &tot);
                got++;
            }
            close(fds[0]);
            int wst = 0;
            while (waitpid(pid, &wst, 0) < 0 && errno == EINTR) {
            }
            bool clean = WIFEXITED(wst) && WEXITSTATUS(wst) == 0;
            if (clean && got == ncases) break;
            if (WIFEXITED(wst) && WEXITSTATUS(wst) == 3) return 1; /* init failed */
            if (got == ncases) { /* every case ran, then the child failed (leaks, say) */
                printf("FAIL the child that ran the last cases exited with %s %d\n",
                       WIFSIGNALED(wst) ? "signal" : "status",
                       WIFSIGNALED(wst) ? WTERMSIG(wst) : WEXITSTATUS(wst));
                crashes++;
                break;
            }
            /* the case in flight crashed: record it and go on after it */
            reader cr = {buf + cases[got].offset, buf + size, true};
            parse_case(&cr, &a, c);
            memset(rec, 0, sizeof *rec);
            rec->index = (int32_t)got;
            rec->outcome = OUT_FAIL;
            sbuf desc = {{0}, 0};
            describe_case(c, &desc);
            memcpy(rec->desc, desc.b, sizeof rec->desc);
            if (WIFSIGNALED(wst))
                snprintf(rec->why, sizeof rec->why, "CRASHED: signal %d (%s)", WTERMSIG(wst),
                         WTERMSIG(wst) == SIGALRM ? "ran over 60 s" : strsignal(WTERMSIG(wst)));
            else
                snprintf(rec->why, sizeof rec->why, "CRASHED: the child exited with status %d "
                         "(a sanitizer report is above)", WEXITSTATUS(wst));
            arena_reset(&a);
            ops[cases[got].op].printed = 0; /* a crash is always printed */
            account(rec, &ops[cases[got].op], &tot);
            crashes++;
            next = got + 1;
        }
    }
    free(a.ptrs);

    /* ops with more failures than printed, then ops not implemented yet, then families */
    for (size_t i = 0; i < nops; i++)
        if (ops[i].failed > MAX_FAIL_PRINTS_PER_OP && !verbose)
            printf("FAIL %s: %d of %d cases failed (%d printed)\n", ops[i].key, ops[i].failed,
                   ops[i].total, MAX_FAIL_PRINTS_PER_OP);
    int nnoimpl = 0;
    for (size_t i = 0; i < nops; i++) {
        if (!ops[i].noimpl) continue;
        nnoimpl++;
        if (ops[i].noimpl == ops[i].total)
            printf("not implemented yet: %s (%d cases)\n", ops[i].key, ops[i].total);
        else
            printf("not implemented yet: %s (%d of %d cases; %s)\n", ops[i].key, ops[i].noimpl,
                   ops[i].total, ops[i].noimpl_msg);
    }
    const char *fams[32];
    int         nf = 0;
    for (size_t i = 0; i < nops; i++) {
        int k = 0;
        while (k < nf && strcmp(fams[k], ops[i].family)) k++;
        if (k == nf && nf < 32) fams[nf++] = ops[i].family;
    }
    for (int k = 0; k < nf; k++) {
        int cs = 0, p = 0, fl = 0, ni = 0;
        for (size_t i = 0; i < nops; i++) {
            if (strcmp(ops[i].family, fams[k])) continue;
            cs += ops[i].total, p += ops[i].passed, fl += ops[i].failed, ni += ops[i].noimpl;
        }
        printf("  %-10s %4d cases: %4d passed, %3d failed, %4d not implemented yet\n", fams[k], cs,
               p, fl, ni);
    }
    printf("test_cpu_reference: %d cases, %d passed, %d failed (%d crashed), %d ops not "
           "implemented yet (%d cases)\n",
           tot.cases, tot.passed, tot.failed, crashes, nnoimpl, tot.noimpl);

    bool ok = tot.failed == 0 && crashes == 0 && tot.cases == (int)ncases;
    free(ops);
    free(cases);
    free(c);
    free(rec);
    free(buf);
    return ok ? 0 : 1;
}
