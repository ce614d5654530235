/* copy.c: copies between tensors of any strides, on any pair of devices.
 *
 * On the host one strided loop does all the work (plan_make and run). A device is reached only
 * through its implementation's contiguous byte copies: a strided tensor on a device is read or
 * written as the whole span of storage it covers, and rearranged on the host in between. That
 * needs no device kernel, at the price of moving the gaps of a sparse view too.
 *
 * Meta tensors hold no bytes: a copy between meta and a real device fails with the meta
 * implementation's error, while meta to meta succeeds doing nothing (PyTorch's rule), so shape-only
 * code can call contiguous and copy_ as real code does.
 */
#include "rt_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- the host's strided loop -------------------------------------------------------------- */

/* A copy's geometry once simplified: dims outermost first, strides in bytes. */
typedef struct plan {
    int32_t n;
    int64_t size[SG_MAX_DIMS];
    int64_t dst[SG_MAX_DIMS];
    int64_t src[SG_MAX_DIMS];
} plan;

/* Simplifies a copy so its innermost run is as long as it can be. Size-1 dims go. The rest sort
 * by dst stride, largest outermost, so writes move forward through memory whatever the views'
 * dim orders. Then a dim merges into the one inside it wherever both tensors step over that one
 * exactly, so contiguous data, transposed or not, becomes one run. */
static void plan_make(plan *p, const int64_t *sizes, const int64_t *ds, const int64_t *ss,
                      int32_t ndim, int64_t es) {
    int32_t n = 0;
    for (int32_t i = 0; i < ndim; i++) {
        if (sizes[i] == 1) continue;
        int32_t k = n++;
        while (k > 0 &&
               (p->dst[k - 1] < ds[i] || (p->dst[k - 1] == ds[i] && p->src[k - 1] < ss[i]))) {
            p->size[k] = p->size[k - 1];
            p->dst[k] = p->dst[k - 1];
            p->src[k] = p->src[k - 1];
            k--;
        }
        p->size[k] = sizes[i];
        p->dst[k] = ds[i];
        p->src[k] = ss[i];
    }
    int32_t w = 0; /* the dim being grown inwards */
    for (int32_t k = 1; k < n; k++) {
        if (p->dst[w] == p->dst[k] * p->size[k] && p->src[w] == p->src[k] * p->size[k]) {
            p->size[w] *= p->size[k];
            p->dst[w] = p->dst[k];
            p->src[w] = p->src[k];
        } else {
            w++;
            p->size[w] = p->size[k];
            p->dst[w] = p->dst[k];
            p->src[w] = p->src[k];
        }
    }
    p->n = n ? w + 1 : 0;
    for (int32_t k = 0; k < p->n; k++) p->dst[k] *= es, p->src[k] *= es;
}

/* One strided run of n elements of es bytes. Rationale: a constant width lets the compiler turn
 * each memcpy into one load and one store. */
static void run_inner(char *d, int64_t ds, const char *s, int64_t ss, int64_t n, int64_t es) {
#define RUN(w) for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, (w))
    switch (es) {
    case 1: RUN(1); break;
    case 2: RUN(2); break;
    case 4: RUN(4); break;
    case 8: RUN(8); break;
    case 16: RUN(16); break;
    default: RUN((size_t)es); break;
    }
#undef RUN
}

/* Copies as p says, from s to d (host memory that does not overlap). The innermost dim is one
 * memcpy where both sides are contiguous in it; an odometer over the outer dims moves on. */
static void run(char *d, const char *s, const plan *p, int64_t es) {
    int64_t idx[SG_MAX_DIMS] = {0};
    if (p->n == 0) {
        memcpy(d, s, (size_t)es);
        return;
    }
    int32_t in = p->n - 1;
    int64_t len = p->size[in], dstep = p->dst[in], sstep = p->src[in];
    bool    block = dstep == es && sstep == es;
    int64_t od = 0, os = 0; /* byte offsets, so no pointer strays past its object */
    for (;;) {
        if (block)
            memcpy(d + od, s + os, (size_t)(len * es));
        else
            run_inner(d + od, dstep, s + os, sstep, len, es);
        int32_t k = in - 1;
        for (; k >= 0; k--) {
            od += p->dst[k];
            os += p->src[k];
            if (++idx[k] < p->size[k]) break;
            od -= p->dst[k] * p->size[k];
            os -= p->src[k] * p->size[k];
            idx[k] = 0;
        }
        if (k < 0) return;
    }
}

/* d (dst's sizes and strides) = s (src's strides), both in host memory. */
static void copy_host(char *d, const int64_t *ds, const char *s, const int64_t *ss,
                      const int64_t *sizes, int32_t ndim, int64_t es) {
    plan p;
    plan_make(&p, sizes, ds, ss, ndim, es);
    run(d, s, &p, es);
}

/* ---- helpers ------------------------------------------------------------------------------ */

static int64_t elem_size(const sg_tensor *t) { return (int64_t)sg_dtype_size((sg_dtype)t->dtype); }

/* Bytes of storage the view covers from its offset on. */
static size_t span_bytes(const sg_tensor *t) {
    return (size_t)sg__span_elems(t->sizes, t->strides, t->ndim) * (size_t)elem_size(t);
}

static sg_status impl_of(sg_device d, const sg_device_impl **out) {
    *out = sg__device_impl((sg_device_type)d.type);
    if (*out) return SG_OK;
    return sg_error(SG_EDEVICE, "no implementation is installed for %s tensors",
                    sg_device_type_name((sg_device_type)d.type));
}

/* Meta holds no bytes, and its implementation's copies say so. They are asked before any memory
 * is spent on a copy that cannot happen (meta tensors are often huge). */
static sg_status meta_refuses(sg_device src, sg_device dst) {
    const sg_device_impl *m = sg__device_impl(SG_DEV_META);
    sg_status st = dst.type == SG_DEV_META ? m->copy_from_host(dst, NULL, NULL, 0)
                                           : m->copy_to_host(NULL, src, NULL, 0);
    return st ? st : sg_error(SG_EUNSUPPORTED, "meta tensors hold no data to copy");
}

/* Reads the storage span t covers into a new host buffer. */
static sg_status read_span(const sg_tensor *t, const sg_device_impl *impl, char **buf) {
    size_t n = span_bytes(t);
    *buf = malloc(n ? n : 1);
    if (!*buf) return sg_error(SG_ENOMEM, "cannot allocate %zu bytes of host staging", n);
    sg_status st = n ? impl->copy_to_host(*buf, t->device, sg_tensor_data(t), n) : SG_OK;
    if (st) {
        free(*buf);
        *buf = NULL;
    }
    return st;
}

/* n contiguous bytes from one device's memory to another's (neither of them Meta). */
static sg_status move_bytes(sg_device dd, void *d, sg_device sd, const void *s, size_t n) {
    const sg_device_impl *di, *si;
    sg_status             st;
    if (!n) return SG_OK;
    if ((st = impl_of(dd, &di)) || (st = impl_of(sd, &si))) return st;
    if (sd.type == SG_DEV_CPU) return di->copy_from_host(dd, d, s, n);
    if (dd.type == SG_DEV_CPU) return si->copy_to_host(d, sd, s, n);
    if (dd.type == sd.type && si->copy_device) return si->copy_device(dd, d, sd, s, n);
    void *buf = malloc(n);
    if (!buf) return sg_error(SG_ENOMEM, "cannot allocate %zu bytes of host staging", n);
    if (!(st = si->copy_to_host(buf, sd, s, n))) st = di->copy_from_host(dd, d, buf, n);
    free(buf);
    return st;
}

/* ---- copy_ -------------------------------------------------------------------------------- */

/* dst = src between host tensors. Where their bytes overlap, src goes through a temporary
 * first, as an elementwise copy would read elements it has already overwritten. */
static sg_status copy_cpu(sg_tensor *dst, const sg_tensor *src) {
    int64_t    es = elem_size(dst);
    char      *d = sg_tensor_data(dst);
    const char *s = sg_tensor_data(src);
    uintptr_t  d0 = (uintptr_t)d, s0 = (uintptr_t)s;
    if (d0 < s0 + span_bytes(src) && s0 < d0 + span_bytes(dst)) {
        if (d == s && !memcmp(dst->strides, src->strides, (size_t)dst->ndim * sizeof(int64_t)))
            return SG_OK; /* the same view: every element is itself already */
        int64_t ts[SG_MAX_DIMS];
        size_t  n = sg_tensor_nbytes(src);
        char   *tmp = malloc(n);
        if (!tmp)
            return sg_error(SG_ENOMEM, "cannot allocate %zu bytes for an overlapping copy", n);
        sg__extent e;
        sg_status  st = sg__contiguous_strides("copy_", src->sizes, src->ndim, (size_t)es, ts, &e);
        if (st) {
            free(tmp);
            return st;
        }
        copy_host(tmp, ts, s, src->strides, src->sizes, src->ndim, es);
        copy_host(d, dst->strides, tmp, ts, dst->sizes, dst->ndim, es);
        free(tmp);
        return SG_OK;
    }
    copy_host(d, dst->strides, s, src->strides, dst->sizes, dst->ndim, es);
    return SG_OK;
}

/* dst = src where a device other than the CPU is involved (not Meta). */
static sg_status copy_staged(sg_tensor *dst, const sg_tensor *src) {
    const sg_device_impl *di, *si;
    sg_status             st;
    if ((st = impl_of(dst->device, &di)) || (st = impl_of(src->device, &si))) return st;
    bool        dh = dst->device.type == SG_DEV_CPU, sh = src->device.type == SG_DEV_CPU;
    char       *d = sg_tensor_data(dst);
    const char *s = sg_tensor_data(src);
    if (sg_tensor_is_contiguous(dst) && sg_tensor_is_contiguous(src))
        return move_bytes(dst->device, d, src->device, s, sg_tensor_nbytes(dst));

    /* The host rearranges: src read as a host view, dst written as a host image of its span.
     * That image is read first unless dst fills it, so the gaps of a sparse view survive. */
    char       *sbuf = NULL, *dbuf = NULL, *dv = d;
    const char *sv = s;
    if (!sh && !(st = read_span(src, si, &sbuf))) sv = sbuf;
    if (!st && !dh) {
        if (!sg_tensor_is_dense(dst)) {
            st = read_span(dst, di, &dbuf);
        } else if (!(dbuf = malloc(span_bytes(dst)))) {
            st = sg_error(SG_ENOMEM, "cannot allocate %zu bytes of host staging", span_bytes(dst));
        }
        dv = dbuf;
    }
    if (!st) {
        copy_host(dv, dst->strides, sv, src->strides, dst->sizes, dst->ndim, elem_size(dst));
        if (!dh) st = di->copy_from_host(dst->device, d, dbuf, span_bytes(dst));
    }
    free(sbuf);
    free(dbuf);
    return st;
}

/* dst = src, both checked already: same sizes and dtype, dst writable and without repeats. */
static sg_status copy_data(sg_tensor *dst, const sg_tensor *src) {
    bool dm = dst->device.type == SG_DEV_META, sm = src->device.type == SG_DEV_META;
    if (dm || sm) return dm && sm ? SG_OK : meta_refuses(src->device, dst->device);
    if (sg_tensor_numel(dst) == 0) return SG_OK;
    if (dst->device.type == SG_DEV_CPU && src->device.type == SG_DEV_CPU)
        return copy_cpu(dst, src);
    return copy_staged(dst, src);
}

sg_status sg_tensor_copy_(sg_tensor *dst, const sg_tensor *src) {
    char a[256], b[256];
    if (!dst || !src) return sg_error(SG_EINVAL, "copy_: %s is NULL", dst ? "src" : "dst");
    if (dst->dtype != src->dtype || dst->ndim != src->ndim ||
        memcmp(dst->sizes, src->sizes, (size_t)dst->ndim * sizeof(int64_t))) {
        sg_tensor_describe(dst, a, sizeof a);
        sg_tensor_describe(src, b, sizeof b);
        return sg_error(SG_EINVAL,
                        "copy_: src %s does not match dst %s (copy_ needs the same sizes and "
                        "dtype)",
                        b, a);
    }
    if (!sg_tensor_writable(dst)) {
        sg_tensor_describe(dst, a, sizeof a);
        return sg_error(SG_EREADONLY, "copy_: dst %s is read-only", a);
    }
    /* As PyTorch's assert_no_internal_overlap: a broadcast dst would be written twice. */
    if (sg_tensor_overlaps(dst)) {
        sg_tensor_describe(dst, a, sizeof a);
        return sg_error(SG_EINVAL,
                        "copy_: unsupported operation: more than one element of the "
                        "written-to tensor (dst %s) refers to a single memory location. "
                        "Please clone() the tensor before performing the operation.",
                        a);
    }
    sg_status st = copy_data(dst, src);
    return st ? sg_error(st, "copy_: %s", sg_last_error()) : SG_OK;
}

sg_status sg_tensor_copy_out_(sg_tensor *dst, const sg_tensor *src) {
    if (!src) return sg_error(SG_EINVAL, "copy_: src is NULL");
    sg_status st = sg_tensor_resize_out_(dst, src->sizes, src->ndim);
    return st ? st : sg_tensor_copy_(dst, src);
}

/* ---- contiguous and to -------------------------------------------------------------------- */

sg_status sg_tensor_contiguous(sg_tensor *t, sg_tensor **out) {
    if (!out) return sg_error(SG_EINVAL, "contiguous: out is NULL");
    *out = NULL;
    if (!t) return sg_error(SG_EINVAL, "contiguous: the tensor is NULL");
    if (sg_tensor_is_contiguous(t)) {
        *out = sg_tensor_retain(t);
        return SG_OK;
    }
    sg_tensor *c;
    sg_status  st = sg_tensor_empty(t->sizes, t->ndim, (sg_dtype)t->dtype, t->device, &c);
    if (!st && (st = copy_data(c, t))) sg_tensor_release(c);
    if (st) return sg_error(st, "contiguous: %s", sg_last_error());
    *out = c;
    return SG_OK;
}

/* Rationale: the bytes of the span move as they are, so sizes and strides stay as they were
 * and no kernel is needed on either device. */
sg_status sg_tensor_to(sg_tensor *t, sg_device dev, sg_tensor **out) {
    sg_storage *s = NULL;
    sg_status   st;
    if (!out) return sg_error(SG_EINVAL, "to: out is NULL");
    *out = NULL;
    if (!t) return sg_error(SG_EINVAL, "to: the tensor is NULL");
    if ((st = sg_device_check(dev))) return sg_error(st, "to: %s", sg_last_error());
    if (sg_device_eq(t->device, dev)) {
        *out = sg_tensor_retain(t);
        return SG_OK;
    }
    if (t->device.type == SG_DEV_META || dev.type == SG_DEV_META)
        st = meta_refuses(t->device, dev);
    else if (!(st = sg__storage_new(dev, span_bytes(t), &s)))
        st = move_bytes(dev, s->data, t->device, sg_tensor_data(t), s->nbytes);
    if (!st) st = sg__tensor_new(s, (sg_dtype)t->dtype, t->sizes, t->strides, t->ndim, 0, out);
    sg__storage_release(s);
    return st ? sg_error(st, "to: %s", sg_last_error()) : SG_OK;
}
