/* test_rt_tensor.c: tensors: creation, sharing, every view op, copies between strides and
 * devices, and the message of each function's failures. The view cases are PyTorch's rules
 * worked out by hand; a fake PrivateUse1 device whose memory the host cannot touch checks that
 * copies reach a device only through its implementation. */
#include "check.h"
#include "sg_dispatch.h"
#include "sg_tensor.h"

#include <stdint.h>

/* ---- helpers ------------------------------------------------------------------------------ */

/* A rank and its sizes in one argument pair: sg_tensor_view(t, DIMS(3, 2), &v). */
#define DIMS(...) \
    (const int64_t[]){__VA_ARGS__}, (int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define I64(...) ((const int64_t[]){__VA_ARGS__})

/* A call that must fail with status want and a message holding text, leaving `out` NULL. */
static sg_tensor *out;
#define FAILS(want, text, call)                                \
    do {                                                       \
        out = (sg_tensor *)&out;                               \
        sg_error_clear();                                      \
        sg_status st_ = (call);                                \
        CHECK(st_ == (want));                                  \
        CHECK(sg_last_status() == (want));                     \
        CHECK(out == NULL);                                    \
        CHECK_HAS(sg_last_error(), (text));                    \
    } while (0)

/* The same for a call with no out-pointer (copy_). */
#define FAILS_NO_OUT(want, text, call)                         \
    do {                                                       \
        sg_error_clear();                                      \
        CHECK((call) == (want));                               \
        CHECK(sg_last_status() == (want));                     \
        CHECK_HAS(sg_last_error(), (text));                    \
    } while (0)

static void must(sg_status st) {
    if (st != SG_OK) {
        fprintf(stderr, "unexpected failure: %s: %s\n", sg_status_name(st), sg_last_error());
        exit(1);
    }
}
/* The tensor a call that must succeed returns through &out (the comma orders the two). */
#define OK(call) (must(call), out)

/* int32 tensor 0, 1, 2, ... (plus `from`), contiguous on the CPU. */
static sg_tensor *arange_from(int32_t from, const int64_t *sizes, int32_t ndim) {
    sg_tensor *t = OK(sg_tensor_empty(sizes, ndim, SG_INT32, SG_CPU, &out));
    int32_t   *p = sg_tensor_data(t);
    for (int64_t k = 0; k < sg_tensor_numel(t); k++) p[k] = (int32_t)(k + from);
    return t;
}
static sg_tensor *arange(const int64_t *sizes, int32_t ndim) { return arange_from(0, sizes, ndim); }

static bool is_geom(const sg_tensor *t, int32_t ndim, const int64_t *sizes, const int64_t *strides,
                    int64_t offset) {
    bool ok = t->ndim == ndim && t->offset == offset;
    for (int32_t i = 0; ok && i < ndim; i++)
        ok = t->sizes[i] == sizes[i] && t->strides[i] == strides[i];
    if (!ok) {
        fprintf(stderr, "  geometry: sizes [");
        for (int32_t i = 0; i < t->ndim; i++) fprintf(stderr, " %lld", (long long)t->sizes[i]);
        fprintf(stderr, " ] strides [");
        for (int32_t i = 0; i < t->ndim; i++) fprintf(stderr, " %lld", (long long)t->strides[i]);
        fprintf(stderr, " ] offset %lld\n", (long long)t->offset);
    }
    return ok;
}

/* The int32 at a multi-index, read through the strides from base (element [0, 0, ...]). */
static int32_t elem(const char *base, const sg_tensor *t, const int64_t *idx) {
    int64_t off = 0;
    int32_t v;
    for (int32_t i = 0; i < t->ndim; i++) off += idx[i] * t->strides[i];
    memcpy(&v, base + off * 4, 4);
    return v;
}

/* Whether t's int32 elements, row-major and read through its strides from base, are want. */
static bool values_from(const char *base, const sg_tensor *t, const int32_t *want, int64_t n) {
    int64_t idx[SG_MAX_DIMS] = {0};
    if (sg_tensor_numel(t) != n) {
        fprintf(stderr, "  %lld elements, expected %lld\n", (long long)sg_tensor_numel(t),
                (long long)n);
        return false;
    }
    for (int64_t k = 0; k < n; k++) {
        int32_t v = elem(base, t, idx);
        if (v != want[k]) {
            fprintf(stderr, "  element %lld is %d, expected %d\n", (long long)k, v, want[k]);
            return false;
        }
        for (int32_t i = t->ndim - 1; i >= 0 && ++idx[i] == t->sizes[i]; i--) idx[i] = 0;
    }
    return true;
}
#define VALS(...) \
    (const int32_t[]){__VA_ARGS__}, (int64_t)(sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t))
#define VALUES(t, ...) values_from(sg_tensor_data(t), (t), VALS(__VA_ARGS__))

static int32_t storage_refs(const sg_tensor *t) {
    return __atomic_load_n(&t->storage->refs, __ATOMIC_RELAXED);
}

static void noop_release(sg_storage *s) { (void)s; }

/* ---- a fake device: host memory behind addresses the host cannot dereference -------------- */

/* Rationale: each allocation gets a handle in the kernel's half of the address space, so the
 * runtime touching device memory itself (not through the implementation) crashes at once. */
#define FAKE_BASE ((uintptr_t)0xffff900000000000u)
enum { FAKE_SLOTS = 64 };

static struct {
    char     *mem;
    size_t    n;
    sg_device dev;
} fake_mem[FAKE_SLOTS];
static struct {
    int alloc, free, from_host, to_host, device;
} calls;
static int fake_fail; /* the next copy fails */
static int fake_bad;  /* addresses the fake did not hand out */

static int fake_count(const char **why) {
    (void)why;
    return 2;
}

/* The host memory behind [p, p + n) of dev, or NULL. */
static char *fake_host(sg_device dev, const void *p, size_t n) {
    uintptr_t a = (uintptr_t)p, slot = (a - FAKE_BASE) >> 32;
    if (a < FAKE_BASE || slot >= FAKE_SLOTS || !fake_mem[slot].mem ||
        !sg_device_eq(fake_mem[slot].dev, dev)) {
        fake_bad++;
        return NULL;
    }
    size_t off = (size_t)(a - (FAKE_BASE + (slot << 32)));
    if (off + n > fake_mem[slot].n) {
        fake_bad++;
        return NULL;
    }
    return fake_mem[slot].mem + off;
}

static sg_status fake_alloc(sg_device dev, size_t nbytes, void **data, void **ctx) {
    calls.alloc++;
    *ctx = NULL;
    for (uintptr_t s = 0; s < FAKE_SLOTS; s++)
        if (!fake_mem[s].mem) {
            if (!(fake_mem[s].mem = malloc(nbytes ? nbytes : 1))) break;
            fake_mem[s].n = nbytes;
            fake_mem[s].dev = dev;
            *data = (void *)(FAKE_BASE + (s << 32));
            return SG_OK;
        }
    return sg_error(SG_ENOMEM, "fake: out of memory");
}

static void fake_free(sg_device dev, void *data, void *ctx) {
    (void)ctx;
    calls.free++;
    if (!fake_host(dev, data, 0)) return;
    uintptr_t slot = ((uintptr_t)data - FAKE_BASE) >> 32;
    free(fake_mem[slot].mem);
    fake_mem[slot].mem = NULL;
}

static sg_status failed(void) {
    fake_fail = 0;
    return sg_error(SG_EDEVICE, "fake: injected failure");
}

static sg_status fake_from_host(sg_device dev, void *dst, const void *src, size_t n) {
    calls.from_host++;
    if (fake_fail) return failed();
    char *d = fake_host(dev, dst, n);
    if (!d) return sg_error(SG_EDEVICE, "fake: bad address");
    memcpy(d, src, n);
    return SG_OK;
}

static sg_status fake_to_host(void *dst, sg_device dev, const void *src, size_t n) {
    calls.to_host++;
    if (fake_fail) return failed();
    char *s = fake_host(dev, src, n);
    if (!s) return sg_error(SG_EDEVICE, "fake: bad address");
    memcpy(dst, s, n);
    return SG_OK;
}

static sg_status fake_device(sg_device dd, void *dst, sg_device sd, const void *src, size_t n) {
    calls.device++;
    if (fake_fail) return failed();
    char *d = fake_host(dd, dst, n), *s = fake_host(sd, src, n);
    if (!d || !s) return sg_error(SG_EDEVICE, "fake: bad address");
    memmove(d, s, n);
    return SG_OK;
}

/* PrivateUse1 copies between its devices itself; PrivateUse2 has no copy_device. */
static const sg_device_impl fake1 = {
    .name = "fake1",
    .count = fake_count,
    .alloc = fake_alloc,
    .free = fake_free,
    .copy_from_host = fake_from_host,
    .copy_to_host = fake_to_host,
    .copy_device = fake_device,
};
static const sg_device_impl fake2 = {
    .name = "fake2",
    .count = fake_count,
    .alloc = fake_alloc,
    .free = fake_free,
    .copy_from_host = fake_from_host,
    .copy_to_host = fake_to_host,
};

#define PU1(i) ((sg_device){SG_DEV_PRIVATEUSE1, (int8_t)(i)})
#define PU2(i) ((sg_device){SG_DEV_PRIVATEUSE2, (int8_t)(i)})

static int64_t span_elems(const sg_tensor *t) {
    int64_t span = 1;
    for (int32_t i = 0; i < t->ndim; i++) {
        if (!t->sizes[i]) return 0;
        span += (t->sizes[i] - 1) * t->strides[i];
    }
    return span;
}

/* VALUES for a tensor on the fake device. */
#define DEV_VALUES(t, ...) \
    values_from(fake_host((t)->device, sg_tensor_data(t), (size_t)span_elems(t) * 4), (t), \
                VALS(__VA_ARGS__))

/* ---- creation and sharing ----------------------------------------------------------------- */

static void test_create(void) {
    sg_tensor *t = OK(sg_tensor_empty(DIMS(2, 3), SG_FLOAT32, SG_CPU, &out));
    CHECK(is_geom(t, 2, I64(2, 3), I64(3, 1), 0));
    CHECK(t->dtype == SG_FLOAT32 && sg_device_eq(t->device, SG_CPU) && t->refs == 1);
    CHECK(t->keys == sg_keyset_of_device(SG_CPU));
    CHECK(t->keys & SG_KEYSET(SG_KEY_CPU));
    CHECK(t->keys & SG_KEYSET(SG_KEY_AUTOGRAD_CPU));
    CHECK(((uintptr_t)sg_tensor_data(t) & 63) == 0);
    CHECK(sg_tensor_numel(t) == 6 && sg_tensor_nbytes(t) == 24 && t->storage->nbytes == 24);
    CHECK(sg_tensor_is_contiguous(t) && sg_tensor_writable(t));
    char buf[64];
    sg_tensor_describe(t, buf, sizeof buf);
    CHECK_STR(buf, "float32[2, 3] on cpu");
    sg_tensor_release(t);

    t = OK(sg_tensor_zeros(DIMS(3, 5), SG_INT32, SG_CPU, &out));
    CHECK(((uintptr_t)sg_tensor_data(t) & 63) == 0);
    CHECK(VALUES(t, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    sg_tensor_release(t);

    t = OK(sg_tensor_empty_strided(I64(2, 3), I64(1, 2), 2, SG_INT16, SG_CPU, &out));
    CHECK(!sg_tensor_is_contiguous(t) && t->storage->nbytes == 12);
    sg_tensor_release(t);

    t = OK(sg_tensor_empty(NULL, 0, SG_FLOAT64, SG_CPU, &out)); /* a 0-dim tensor */
    CHECK(t->ndim == 0 && sg_tensor_numel(t) == 1 && sg_tensor_nbytes(t) == 8);
    sg_tensor_release(t);

    t = OK(sg_tensor_empty(DIMS(1000, 1000), SG_FLOAT32, SG_META, &out));
    CHECK(sg_tensor_data(t) == NULL && t->keys == sg_keyset_of_device(SG_META));
    sg_tensor_describe(t, buf, sizeof buf);
    CHECK_STR(buf, "float32[1000, 1000] on meta");
    sg_tensor_release(t);
}

static void test_sharing(void) {
    sg_tensor *base = arange(DIMS(2, 3));
    sg_tensor *v = OK(sg_tensor_transpose(base, 0, 1, &out));
    CHECK(v->storage == base->storage && storage_refs(base) == 2 && base->refs == 1);
    sg_tensor *w = OK(sg_tensor_select(v, 0, 1, &out));
    CHECK(storage_refs(base) == 3);
    sg_tensor_release(base); /* the views keep the storage alive */
    CHECK(storage_refs(v) == 2);
    CHECK(VALUES(v, 0, 3, 1, 4, 2, 5));
    CHECK(VALUES(w, 1, 4));
    /* A write through one view shows through the other. */
    ((int32_t *)sg_tensor_data(w))[0] = 42;
    CHECK(VALUES(v, 0, 3, 42, 4, 2, 5));
    CHECK(sg_tensor_retain(v) == v && v->refs == 2);
    sg_tensor_release(v);
    sg_tensor_release(v);
    CHECK(storage_refs(w) == 1);
    sg_tensor_release(w);
    sg_tensor_release(NULL);
}

/* ---- views -------------------------------------------------------------------------------- */

static void test_as_strided(void) {
    sg_tensor *base = arange(DIMS(10));
    /* Sliding windows of 3, starting at element 2. */
    sg_tensor *v = OK(sg_tensor_as_strided(base, I64(3, 3), I64(1, 1), 2, 2, &out));
    CHECK(v->storage == base->storage && is_geom(v, 2, I64(3, 3), I64(1, 1), 2));
    CHECK(VALUES(v, 2, 3, 4, 3, 4, 5, 4, 5, 6));
    sg_tensor *s = OK(sg_tensor_slice(base, 0, 5, 10, 1, &out));
    sg_tensor *w = OK(sg_tensor_as_strided(s, I64(2), I64(3), 1, 1, &out));
    CHECK(VALUES(w, 1, 4)); /* the offset is the storage's, not the slice's */
    sg_tensor_release(w);
    /* The last element may be the storage's last; an empty view may start anywhere. */
    w = OK(sg_tensor_as_strided(base, I64(2, 2), I64(4, 4), 2, 1, &out));
    CHECK(VALUES(w, 1, 5, 5, 9));
    sg_tensor_release(w);
    w = OK(sg_tensor_as_strided(base, I64(0, 4), I64(100, 1), 2, 1000, &out));
    CHECK(sg_tensor_numel(w) == 0);
    sg_tensor_release(w);

    FAILS(SG_EINVAL, "as_strided: negative stride -1 at dimension 1",
          sg_tensor_as_strided(base, I64(2, 2), I64(1, -1), 2, 4, &out));
    FAILS(SG_EINVAL, "as_strided: negative size -2 at dimension 0",
          sg_tensor_as_strided(base, I64(-2), I64(1), 1, 0, &out));
    FAILS(SG_EINVAL, "as_strided: negative storage offset -1",
          sg_tensor_as_strided(base, I64(2), I64(1), 1, -1, &out));
    FAILS(SG_EINVAL,
          "as_strided: sizes [4, 3], strides [3, 1], storage offset 0 and itemsize 4 need a "
          "storage of 48 bytes, but it has 40",
          sg_tensor_as_strided(base, I64(4, 3), I64(3, 1), 2, 0, &out));
    FAILS(SG_EINVAL, "as_strided: the tensor is too large: sizes [3], strides "
                     "[4611686018427387903] and storage offset 0 reach past",
          sg_tensor_as_strided(base, I64(3), I64(INT64_MAX / 2), 1, 0, &out));
    FAILS(SG_EINVAL, "as_strided: 65 dimensions (at most 64)",
          sg_tensor_as_strided(base, I64(1), I64(1), 65, 0, &out));
    FAILS(SG_EINVAL, "as_strided: the tensor is NULL",
          sg_tensor_as_strided(NULL, I64(1), I64(1), 1, 0, &out));
    sg_tensor_release(s);
    sg_tensor_release(v);
    sg_tensor_release(base);
}

/* View after transposes and slices: succeeds exactly where PyTorch's does. */
static void test_view(void) {
    sg_tensor *a = arange(DIMS(2, 3, 4)), *v, *w;
    v = OK(sg_tensor_view(a, DIMS(4, -1), &out));
    CHECK(v->storage == a->storage && is_geom(v, 2, I64(4, 6), I64(6, 1), 0));
    CHECK(VALUES(v, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                 22, 23));
    sg_tensor_release(v);
    v = OK(sg_tensor_view(a, DIMS(1, 24, 1), &out));
    CHECK(is_geom(v, 3, I64(1, 24, 1), I64(24, 1, 1), 0));
    sg_tensor_release(v);

    /* permute(2, 0, 1): [4, 2, 3] strides [1, 12, 4]. Its last two dims still form one run. */
    sg_tensor *p = OK(sg_tensor_permute(a, I64(2, 0, 1), 3, &out));
    v = OK(sg_tensor_view(p, DIMS(4, 6), &out));
    CHECK(is_geom(v, 2, I64(4, 6), I64(1, 4), 0));
    CHECK(VALUES(v, 0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11,
                 15, 19, 23));
    sg_tensor_release(v);
    FAILS(SG_EINVAL, "view size is not compatible", sg_tensor_view(p, DIMS(8, 3), &out));
    FAILS(SG_EINVAL, "view size is not compatible", sg_tensor_view(p, DIMS(24), &out));
    sg_tensor_release(p);
    sg_tensor_release(a);

    /* The transpose of a 2x3: [3, 2] strides [1, 3]. Not flat; size-1 dims fit anywhere. */
    a = arange(DIMS(2, 3));
    sg_tensor *t = OK(sg_tensor_transpose(a, 0, 1, &out));
    FAILS(SG_EINVAL,
          "view: view size is not compatible with input tensor's size and stride (at least one "
          "dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
          sg_tensor_view(t, DIMS(6), &out));
    FAILS(SG_EINVAL, "Use .reshape(...) instead", sg_tensor_view(t, DIMS(-1), &out));
    FAILS(SG_EINVAL, "Use .reshape(...) instead", sg_tensor_view(t, DIMS(2, 3), &out));
    v = OK(sg_tensor_view(t, DIMS(3, 1, 2), &out));
    CHECK(is_geom(v, 3, I64(3, 1, 2), I64(1, 6, 3), 0));
    CHECK(VALUES(v, 0, 3, 1, 4, 2, 5));
    sg_tensor_release(v);
    v = OK(sg_tensor_view(t, DIMS(1, 3, 2, 1), &out));
    CHECK(is_geom(v, 4, I64(1, 3, 2, 1), I64(3, 1, 3, 3), 0));
    sg_tensor_release(v);
    sg_tensor_release(t);
    sg_tensor_release(a);

    /* The transpose of a 3x4: [4, 3] strides [1, 4]. Its outer dim splits, its inner does not. */
    a = arange(DIMS(3, 4));
    t = OK(sg_tensor_transpose(a, 0, 1, &out));
    v = OK(sg_tensor_view(t, DIMS(2, 2, 3), &out));
    CHECK(is_geom(v, 3, I64(2, 2, 3), I64(2, 1, 4), 0));
    CHECK(VALUES(v, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11));
    sg_tensor_release(v);
    FAILS(SG_EINVAL, "Use .reshape(...) instead", sg_tensor_view(t, DIMS(2, 6), &out));
    FAILS(SG_EINVAL, "Use .reshape(...) instead", sg_tensor_view(t, DIMS(12), &out));
    sg_tensor_release(t);
    sg_tensor_release(a);

    /* A [4, 3] sliced to [:, :2]: [4, 2] strides [3, 1]. Rows keep their 2, or split outside. */
    a = arange(DIMS(4, 3));
    sg_tensor *s = OK(sg_tensor_slice(a, 1, 0, 2, 1, &out));
    CHECK(is_geom(s, 2, I64(4, 2), I64(3, 1), 0));
    FAILS(SG_EINVAL, "Use .reshape(...) instead", sg_tensor_view(s, DIMS(8), &out));
    FAILS(SG_EINVAL, "Use .reshape(...) instead", sg_tensor_view(s, DIMS(2, 4), &out));
    FAILS(SG_EINVAL, "Use .reshape(...) instead", sg_tensor_view(s, DIMS(8, 1), &out));
    v = OK(sg_tensor_view(s, DIMS(2, 2, 2), &out));
    CHECK(is_geom(v, 3, I64(2, 2, 2), I64(6, 3, 1), 0));
    CHECK(VALUES(v, 0, 1, 3, 4, 6, 7, 9, 10));
    sg_tensor_release(v);
    v = OK(sg_tensor_view(s, DIMS(4, 2, 1), &out));
    CHECK(is_geom(v, 3, I64(4, 2, 1), I64(3, 1, 1), 0));
    sg_tensor_release(v);
    sg_tensor_release(s);
    /* [1:3, :] keeps whole rows: contiguous, with an offset. */
    s = OK(sg_tensor_slice(a, 0, 1, 3, 1, &out));
    v = OK(sg_tensor_view(s, DIMS(6), &out));
    CHECK(is_geom(v, 1, I64(6), I64(1), 3) && VALUES(v, 3, 4, 5, 6, 7, 8));
    sg_tensor_release(v);
    sg_tensor_release(s);
    /* [::2, 1]: one dim of stride 6; it may gain size-1 dims only. */
    s = OK(sg_tensor_slice(a, 0, 0, 4, 2, &out));
    w = OK(sg_tensor_select(s, 1, 1, &out));
    v = OK(sg_tensor_view(w, DIMS(1, 2, 1), &out));
    CHECK(is_geom(v, 3, I64(1, 2, 1), I64(12, 6, 6), 1) && VALUES(v, 1, 7));
    sg_tensor_release(v);
    sg_tensor_release(w);
    sg_tensor_release(s);
    sg_tensor_release(a);

    /* Size-1 dims take part whatever their strides. */
    a = arange(DIMS(6));
    s = OK(sg_tensor_as_strided(a, I64(2, 1, 3), I64(3, 100, 1), 3, 0, &out));
    v = OK(sg_tensor_view(s, DIMS(6), &out));
    CHECK(is_geom(v, 1, I64(6), I64(1), 0));
    sg_tensor_release(v);
    sg_tensor_release(s);
    /* An expanded tensor views as itself, but not flat. */
    s = OK(sg_tensor_as_strided(a, I64(2, 3), I64(0, 1), 2, 0, &out));
    FAILS(SG_EINVAL, "Use .reshape(...) instead", sg_tensor_view(s, DIMS(6), &out));
    v = OK(sg_tensor_view(s, DIMS(2, 3, 1), &out));
    CHECK(VALUES(v, 0, 1, 2, 0, 1, 2));
    sg_tensor_release(v);
    sg_tensor_release(s);

    /* 0-dim and one element. */
    s = OK(sg_tensor_slice(a, 0, 4, 5, 1, &out));
    v = OK(sg_tensor_view(s, NULL, 0, &out));
    CHECK(v->ndim == 0 && v->offset == 4 && ((int32_t *)sg_tensor_data(v))[0] == 4);
    w = OK(sg_tensor_view(v, DIMS(1, -1), &out));
    CHECK(is_geom(w, 2, I64(1, 1), I64(1, 1), 4));
    sg_tensor_release(w);
    sg_tensor_release(v);
    sg_tensor_release(s);

    /* Errors of the shape itself (PyTorch's infer_size). */
    FAILS(SG_EINVAL, "view: shape '[4, 4]' is invalid for input of size 6",
          sg_tensor_view(a, DIMS(4, 4), &out));
    FAILS(SG_EINVAL, "view: shape '[4, -1]' is invalid for input of size 6",
          sg_tensor_view(a, DIMS(4, -1), &out));
    FAILS(SG_EINVAL, "view: only one dimension can be inferred",
          sg_tensor_view(a, DIMS(-1, -1), &out));
    FAILS(SG_EINVAL, "view: invalid shape dimension -2", sg_tensor_view(a, DIMS(-2, -3), &out));
    FAILS(SG_EINVAL, "view: 70 dimensions (at most 64)", sg_tensor_view(a, I64(6), 70, &out));
    sg_tensor_release(a);

    /* No elements: -1 is 0 unless the other sizes make it ambiguous. */
    a = OK(sg_tensor_empty(DIMS(0, 3), SG_INT32, SG_CPU, &out));
    v = OK(sg_tensor_view(a, DIMS(-1), &out));
    CHECK(is_geom(v, 1, I64(0), I64(1), 0));
    sg_tensor_release(v);
    v = OK(sg_tensor_view(a, DIMS(3, 0, 2), &out));
    CHECK(is_geom(v, 3, I64(3, 0, 2), I64(2, 2, 1), 0));
    sg_tensor_release(v);
    FAILS(SG_EINVAL,
          "view: cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified "
          "dimension size -1 can be any value and is ambiguous",
          sg_tensor_view(a, DIMS(0, -1), &out));
    sg_tensor_release(a);
}

/* Any view that succeeds reads the same elements in the same order; contiguous ones always do. */
static void test_view_random(void) {
    sg_tensor *buf = arange(DIMS(4096));
    uint64_t   rng = 12345;
#define RAND(n) ((int64_t)((rng = rng * 6364136223846793005u + 1442695040888963407u) >> 33) % (n))
    int fine = 0, noncontig_fine = 0;
    for (int trial = 0; trial < 3000; trial++) {
        int64_t sizes[4], strides[4], idx[4] = {0}, numel = 1;
        int32_t nd = (int32_t)(1 + RAND(4));
        bool    contig = RAND(3) == 0;
        for (int32_t i = nd - 1; i >= 0; i--) {
            sizes[i] = 1 + RAND(4);
            if (contig)
                strides[i] = numel;
            else if (RAND(3) == 0) /* continues the dim inside it */
                strides[i] = i + 1 < nd ? strides[i + 1] * sizes[i + 1] : 1;
            else
                strides[i] = RAND(13);
            numel *= sizes[i];
        }
        sg_tensor *t = OK(sg_tensor_as_strided(buf, sizes, strides, nd, RAND(7), &out));
        /* a random factorisation of numel, one factor perhaps -1 */
        int64_t shape[6], rest = numel;
        int32_t nn = 0;
        while (nn < 5 && (rest > 1 || RAND(4) == 0)) {
            int64_t f = 1 + RAND(rest);
            while (rest % f) f--;
            shape[nn++] = f;
            rest /= f;
        }
        shape[nn++] = rest;
        if (RAND(2)) shape[RAND(nn)] = -1;
        sg_tensor *v = NULL;
        sg_status  st = sg_tensor_view(t, shape, nn, &v);
        CHECK(st == SG_OK || (st == SG_EINVAL && !sg_tensor_is_contiguous(t)));
        if (st == SG_OK) {
            int64_t vidx[6] = {0};
            fine++;
            noncontig_fine += !sg_tensor_is_contiguous(t);
            for (int64_t k = 0; k < numel; k++) {
                const char *b = sg_tensor_data(t);
                if (elem(b, t, idx) != elem(b, v, vidx)) {
                    CHECK(!"a view reads other elements");
                    break;
                }
                for (int32_t i = nd - 1; i >= 0 && ++idx[i] == sizes[i]; i--) idx[i] = 0;
                for (int32_t i = nn - 1; i >= 0 && ++vidx[i] == v->sizes[i]; i--) vidx[i] = 0;
            }
        }
        sg_tensor_release(v);
        sg_tensor_release(t);
    }
    CHECK(fine > 1000 && noncontig_fine > 100);
    sg_tensor_release(buf);
}

static void test_transpose_permute(void) {
    sg_tensor *a = arange(DIMS(2, 3)), *v;
    v = OK(sg_tensor_transpose(a, -1, -2, &out));
    CHECK(v->storage == a->storage && is_geom(v, 2, I64(3, 2), I64(1, 3), 0));
    CHECK(VALUES(v, 0, 3, 1, 4, 2, 5) && !sg_tensor_is_contiguous(v));
    sg_tensor_release(v);
    v = OK(sg_tensor_transpose(a, 1, 1, &out));
    CHECK(is_geom(v, 2, I64(2, 3), I64(3, 1), 0));
    sg_tensor_release(v);
    CHECK_STR((sg_tensor_transpose(a, 0, 5, &out), sg_last_error()),
              "transpose: dimension out of range (expected to be in range of [-2, 1], but got 5)");
    FAILS(SG_EINVAL, "transpose: dimension out of range (expected to be in range of [-2, 1], but "
                     "got -3)",
          sg_tensor_transpose(a, -3, 0, &out));

    sg_tensor *b = arange(DIMS(2, 3, 4));
    v = OK(sg_tensor_permute(b, I64(2, 0, -2), 3, &out));
    CHECK(is_geom(v, 3, I64(4, 2, 3), I64(1, 12, 4), 0));
    CHECK(elem(sg_tensor_data(v), v, I64(3, 1, 2)) == 1 * 12 + 2 * 4 + 3);
    sg_tensor_release(v);
    FAILS(SG_EINVAL, "permute: number of dims don't match in permute (the tensor has 3 dimensions, "
                     "2 were given)",
          sg_tensor_permute(b, I64(1, 0), 2, &out));
    FAILS(SG_EINVAL, "permute: duplicate dims are not allowed (dimension 0 appears twice)",
          sg_tensor_permute(b, I64(0, 1, -3), 3, &out));
    FAILS(SG_EINVAL, "permute: dimension out of range (expected to be in range of [-3, 2], but "
                     "got 3)",
          sg_tensor_permute(b, I64(0, 1, 3), 3, &out));

    /* A 0-dim tensor answers to dims 0 and -1 only. */
    sg_tensor *z = OK(sg_tensor_empty(NULL, 0, SG_INT32, SG_CPU, &out));
    v = OK(sg_tensor_transpose(z, 0, -1, &out));
    CHECK(v->ndim == 0);
    sg_tensor_release(v);
    v = OK(sg_tensor_permute(z, NULL, 0, &out));
    CHECK(v->ndim == 0);
    sg_tensor_release(v);
    FAILS(SG_EINVAL, "transpose: dimension out of range (expected to be in range of [-1, 0], but "
                     "got 1)",
          sg_tensor_transpose(z, 0, 1, &out));
    FAILS(SG_EINVAL, "transpose: the tensor is NULL", sg_tensor_transpose(NULL, 0, 1, &out));
    sg_tensor_release(z);
    sg_tensor_release(b);
    sg_tensor_release(a);
}

static void test_slice_select(void) {
    sg_tensor *a = arange(DIMS(10)), *v;
    v = OK(sg_tensor_slice(a, 0, 2, 8, 3, &out));
    CHECK(v->storage == a->storage && is_geom(v, 1, I64(2), I64(3), 2) && VALUES(v, 2, 5));
    sg_tensor_release(v);
    v = OK(sg_tensor_slice(a, -1, -3, INT64_MAX, 1, &out));
    CHECK(is_geom(v, 1, I64(3), I64(1), 7) && VALUES(v, 7, 8, 9));
    sg_tensor_release(v);
    v = OK(sg_tensor_slice(a, 0, -100, 100, 4, &out)); /* clamped to [0, 10) */
    CHECK(VALUES(v, 0, 4, 8));
    sg_tensor_release(v);
    v = OK(sg_tensor_slice(a, 0, 8, -1, 1, &out)); /* end -1 is 9 */
    CHECK(VALUES(v, 8));
    sg_tensor_release(v);
    v = OK(sg_tensor_slice(a, 0, 6, 2, 1, &out)); /* end before start: empty */
    CHECK(v->sizes[0] == 0 && v->offset == 6);
    sg_tensor_release(v);
    v = OK(sg_tensor_slice(a, 0, 12, 20, 1, &out)); /* both past the end */
    CHECK(v->sizes[0] == 0 && v->offset == 10);
    sg_tensor_release(v);
    v = OK(sg_tensor_slice(a, 0, 3, INT64_MAX, INT64_MAX, &out)); /* a huge step: one element */
    CHECK(VALUES(v, 3));
    sg_tensor_release(v);
    FAILS(SG_EINVAL, "slice: slice step must be positive, got 0",
          sg_tensor_slice(a, 0, 0, 5, 0, &out));
    FAILS(SG_EINVAL, "slice: slice step must be positive, got -1",
          sg_tensor_slice(a, 0, 0, 5, -1, &out));
    FAILS(SG_EINVAL,
          "slice: dimension out of range (expected to be in range of [-1, 0], but got 1)",
          sg_tensor_slice(a, 1, 0, 5, 1, &out));
    sg_tensor_release(a);

    a = arange(DIMS(4, 3));
    v = OK(sg_tensor_slice(a, 1, 1, INT64_MAX, 1, &out)); /* [:, 1:] */
    CHECK(is_geom(v, 2, I64(4, 2), I64(3, 1), 1) && VALUES(v, 1, 2, 4, 5, 7, 8, 10, 11));
    sg_tensor *w = OK(sg_tensor_slice(v, 0, 1, 4, 2, &out)); /* of a view: offsets add */
    CHECK(is_geom(w, 2, I64(2, 2), I64(6, 1), 4) && VALUES(w, 4, 5, 10, 11));
    sg_tensor_release(w);
    sg_tensor_release(v);

    v = OK(sg_tensor_select(a, 0, 1, &out));
    CHECK(v->storage == a->storage && is_geom(v, 1, I64(3), I64(1), 3) && VALUES(v, 3, 4, 5));
    w = OK(sg_tensor_select(v, 0, -1, &out)); /* down to 0-dim */
    CHECK(w->ndim == 0 && w->offset == 5 && ((int32_t *)sg_tensor_data(w))[0] == 5);
    FAILS(SG_EINVAL, "slice: cannot be applied to a 0-dim tensor",
          sg_tensor_slice(w, 0, 0, 1, 1, &out));
    FAILS(SG_EINVAL, "select: cannot be applied to a 0-dim tensor",
          sg_tensor_select(w, 0, 0, &out));
    sg_tensor_release(w);
    sg_tensor_release(v);
    v = OK(sg_tensor_select(a, -1, -3, &out));
    CHECK(is_geom(v, 1, I64(4), I64(3), 0) && VALUES(v, 0, 3, 6, 9));
    sg_tensor_release(v);
    FAILS(SG_EINVAL, "select: index 4 out of range for dimension 0 of size 4",
          sg_tensor_select(a, 0, 4, &out));
    FAILS(SG_EINVAL, "select: index -4 out of range for dimension 1 of size 3",
          sg_tensor_select(a, -1, -4, &out));
    FAILS(SG_EINVAL,
          "select: dimension out of range (expected to be in range of [-2, 1], but got 2)",
          sg_tensor_select(a, 2, 0, &out));
    sg_tensor_release(a);
}

static void test_expand(void) {
    sg_tensor *a = arange(DIMS(3, 1)), *v, *c;
    v = OK(sg_tensor_expand(a, DIMS(2, 3, 4), &out));
    CHECK(v->storage == a->storage && is_geom(v, 3, I64(2, 3, 4), I64(0, 1, 0), 0));
    CHECK(!sg_tensor_is_contiguous(v));
    c = OK(sg_tensor_contiguous(v, &out));
    CHECK(c->storage != a->storage && is_geom(c, 3, I64(2, 3, 4), I64(12, 4, 1), 0));
    CHECK(VALUES(c, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2));
    sg_tensor_release(c);
    sg_tensor_release(v);
    v = OK(sg_tensor_expand(a, DIMS(-1, 4), &out));
    CHECK(is_geom(v, 2, I64(3, 4), I64(1, 0), 0));
    sg_tensor_release(v);
    v = OK(sg_tensor_expand(a, DIMS(1, 3, 0), &out)); /* a size-1 dim may grow to 0 too */
    CHECK(is_geom(v, 3, I64(1, 3, 0), I64(3, 1, 0), 0) && sg_tensor_numel(v) == 0);
    sg_tensor_release(v);
    FAILS(SG_EINVAL,
          "expand: the expanded size of the tensor (2) must match the existing size (3) at "
          "non-singleton dimension 0.  Target sizes: [2, 4].  Tensor sizes: [3, 1]",
          sg_tensor_expand(a, DIMS(2, 4), &out));
    FAILS(SG_EINVAL,
          "expand: the number of sizes provided (1) must be greater or equal to the number of "
          "dimensions in the tensor (2)",
          sg_tensor_expand(a, DIMS(3), &out));
    FAILS(SG_EINVAL,
          "expand: the expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
          "dimension 0",
          sg_tensor_expand(a, DIMS(-1, 3, 1), &out));
    FAILS(SG_EINVAL, "expand: invalid size -2 at dimension 1",
          sg_tensor_expand(a, DIMS(3, -2), &out));
    sg_tensor_release(a);

    /* A 0-dim tensor grows in every dim; a new size-1 leading dim steps over the rest. */
    a = arange(NULL, 0);
    v = OK(sg_tensor_expand(a, DIMS(2, 2), &out));
    CHECK(is_geom(v, 2, I64(2, 2), I64(0, 0), 0) && VALUES(v, 0, 0, 0, 0));
    sg_tensor_release(v);
    sg_tensor_release(a);
    a = arange(DIMS(3));
    v = OK(sg_tensor_expand(a, DIMS(1, 3), &out));
    CHECK(is_geom(v, 2, I64(1, 3), I64(3, 1), 0) && sg_tensor_is_contiguous(v));
    sg_tensor_release(v);
    sg_tensor_release(a);
}

/* resize_ and as_strided_ past the dims a header was made with room for: its sizes and strides
 * move to an allocation of their own (freed with it; ASan and valgrind see that) */
static void test_dims_past_room(void) {
    sg_tensor *a = arange(DIMS(6));
    must(sg_tensor_resize_(a, I64(1, 2, 1, 3, 1, 1), 6));
    CHECK(is_geom(a, 6, I64(1, 2, 1, 3, 1, 1), I64(6, 3, 3, 1, 1, 1), 0) &&
          VALUES(a, 0, 1, 2, 3, 4, 5));
    must(sg_tensor_resize_(a, I64(2, 1, 1, 1, 1, 1, 1, 3), 8)); /* again: moves again */
    CHECK(is_geom(a, 8, I64(2, 1, 1, 1, 1, 1, 1, 3), I64(3, 3, 3, 3, 3, 3, 3, 1), 0));
    must(sg_tensor_resize_(a, I64(3, 2), 2)); /* fewer: stays where it is */
    CHECK(is_geom(a, 2, I64(3, 2), I64(2, 1), 0) && VALUES(a, 0, 1, 2, 3, 4, 5));
    sg_tensor *b = arange(DIMS(2, 3));
    must(sg_tensor_as_strided_(b, I64(3, 1, 1, 1, 2), I64(1, 1, 1, 1, 3), 5, 0));
    CHECK(is_geom(b, 5, I64(3, 1, 1, 1, 2), I64(1, 1, 1, 1, 3), 0) &&
          VALUES(b, 0, 3, 1, 4, 2, 5));
    /* checked as as_strided is: past the storage is refused, the geometry unchanged */
    CHECK(sg_tensor_as_strided_(b, I64(7), I64(1), 1, 0) == SG_EINVAL);
    CHECK(is_geom(b, 5, I64(3, 1, 1, 1, 2), I64(1, 1, 1, 1, 3), 0));
    sg_tensor_release(b);
    sg_tensor_release(a);
}

static void test_unsqueeze_squeeze(void) {
    sg_tensor *a = arange(DIMS(2, 3)), *v, *w;
    v = OK(sg_tensor_unsqueeze(a, 0, &out));
    CHECK(v->storage == a->storage && is_geom(v, 3, I64(1, 2, 3), I64(6, 3, 1), 0));
    sg_tensor_release(v);
    v = OK(sg_tensor_unsqueeze(a, 1, &out));
    CHECK(is_geom(v, 3, I64(2, 1, 3), I64(3, 3, 1), 0));
    w = OK(sg_tensor_squeeze(v, -2, &out));
    CHECK(is_geom(w, 2, I64(2, 3), I64(3, 1), 0));
    sg_tensor_release(w);
    w = OK(sg_tensor_squeeze(v, 0, &out)); /* size 2: unchanged */
    CHECK(w != v && w->storage == a->storage && is_geom(w, 3, I64(2, 1, 3), I64(3, 3, 1), 0));
    sg_tensor_release(w);
    FAILS(SG_EINVAL, "squeeze: dimension out of range (expected to be in range of [-3, 2], but "
                     "got 3)",
          sg_tensor_squeeze(v, 3, &out));
    sg_tensor_release(v);
    v = OK(sg_tensor_unsqueeze(a, -1, &out));
    CHECK(is_geom(v, 3, I64(2, 3, 1), I64(3, 1, 1), 0));
    sg_tensor_release(v);
    FAILS(SG_EINVAL, "unsqueeze: dimension out of range (expected to be in range of [-3, 2], but "
                     "got 5)",
          sg_tensor_unsqueeze(a, 5, &out));
    FAILS(SG_EINVAL, "unsqueeze: dimension out of range (expected to be in range of [-3, 2], but "
                     "got -4)",
          sg_tensor_unsqueeze(a, -4, &out));

    /* Of a transpose: values follow the strides. */
    sg_tensor *t = OK(sg_tensor_transpose(a, 0, 1, &out));
    v = OK(sg_tensor_unsqueeze(t, 1, &out));
    CHECK(is_geom(v, 3, I64(3, 1, 2), I64(1, 6, 3), 0) && VALUES(v, 0, 3, 1, 4, 2, 5));
    sg_tensor_release(v);
    sg_tensor_release(t);
    sg_tensor_release(a);

    /* 0-dim: unsqueeze gives [1]; squeeze of dim 0 is itself. */
    a = arange(NULL, 0);
    v = OK(sg_tensor_unsqueeze(a, -1, &out));
    CHECK(is_geom(v, 1, I64(1), I64(1), 0));
    w = OK(sg_tensor_squeeze(v, 0, &out));
    CHECK(w->ndim == 0);
    sg_tensor_release(w);
    w = OK(sg_tensor_squeeze(a, -1, &out));
    CHECK(w->ndim == 0);
    sg_tensor_release(w);
    sg_tensor_release(v);
    sg_tensor_release(a);

    /* 64 dims is the most. */
    int64_t ones[SG_MAX_DIMS];
    for (int i = 0; i < SG_MAX_DIMS; i++) ones[i] = 1;
    a = OK(sg_tensor_empty(ones, SG_MAX_DIMS, SG_INT8, SG_CPU, &out));
    FAILS(SG_EINVAL, "unsqueeze: the tensor has 64 dimensions already (at most 64)",
          sg_tensor_unsqueeze(a, 0, &out));
    sg_tensor_release(a);
}

/* ---- copies on the CPU -------------------------------------------------------------------- */

/* The address of an element of any dtype. */
static char *at_bytes(const sg_tensor *t, const int64_t *idx) {
    int64_t off = 0;
    for (int32_t i = 0; i < t->ndim; i++) off += idx[i] * t->strides[i];
    return (char *)sg_tensor_data(t) + off * (int64_t)sg_dtype_size((sg_dtype)t->dtype);
}

static void test_copy_cpu(void) {
    /* [4, 3][:, ::2] into the transpose of a fresh [2, 4]. */
    sg_tensor *a = arange(DIMS(4, 3));
    sg_tensor *src = OK(sg_tensor_slice(a, 1, 0, 3, 2, &out));
    sg_tensor *base = OK(sg_tensor_zeros(DIMS(2, 4), SG_INT32, SG_CPU, &out));
    sg_tensor *dst = OK(sg_tensor_transpose(base, 0, 1, &out));
    CHECK(sg_tensor_copy_(dst, src) == SG_OK);
    CHECK(VALUES(dst, 0, 2, 3, 5, 6, 8, 9, 11));
    CHECK(VALUES(base, 0, 3, 6, 9, 2, 5, 8, 11));
    CHECK(VALUES(a, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)); /* src untouched */

    /* Errors: the shapes or dtypes differ, dst is broadcast or read-only. */
    FAILS_NO_OUT(SG_EINVAL,
          "copy_: src int32[4, 3] on cpu does not match dst int32[2, 4] on cpu (copy_ needs the "
          "same sizes and dtype)",
          sg_tensor_copy_(base, a));
    sg_tensor *f = OK(sg_tensor_empty(DIMS(4, 3), SG_FLOAT32, SG_CPU, &out));
    FAILS_NO_OUT(SG_EINVAL, "copy_: src int32[4, 3] on cpu does not match dst float32[4, 3] on cpu",
          sg_tensor_copy_(f, a));
    sg_tensor_release(f);
    sg_tensor *one = arange(DIMS(1, 3));
    sg_tensor *e = OK(sg_tensor_expand(one, DIMS(4, 3), &out));
    FAILS_NO_OUT(SG_EINVAL,
          "copy_: unsupported operation: more than one element of the written-to tensor (dst "
          "int32[4, 3] on cpu) refers to a single memory location",
          sg_tensor_copy_(e, a));
    CHECK(sg_tensor_copy_(a, e) == SG_OK); /* reading a broadcast is fine */
    CHECK(VALUES(a, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2));
    sg_tensor_release(e);
    sg_tensor_release(one);
    int32_t    blob[3] = {7, 8, 9};
    sg_tensor *ro = OK(sg_tensor_from_blob(blob, I64(3), NULL, 1, SG_INT32, SG_CPU,
                                           SG_STORAGE_READ_ONLY, noop_release, NULL, &out));
    sg_tensor *row = OK(sg_tensor_select(a, 0, 0, &out));
    FAILS_NO_OUT(SG_EREADONLY, "copy_: dst int32[3] on cpu is read-only", sg_tensor_copy_(ro, row));
    CHECK(sg_tensor_copy_(row, ro) == SG_OK && VALUES(row, 7, 8, 9));
    FAILS_NO_OUT(SG_EINVAL, "copy_: src is NULL", sg_tensor_copy_(row, NULL));
    sg_tensor_release(row);
    sg_tensor_release(ro);
    /* Nothing to copy. */
    sg_tensor *n0 = OK(sg_tensor_empty(DIMS(0, 3), SG_INT32, SG_CPU, &out));
    sg_tensor *n1 = OK(sg_tensor_empty(DIMS(0, 3), SG_INT32, SG_CPU, &out));
    CHECK(sg_tensor_copy_(n0, n1) == SG_OK);
    sg_tensor_release(n0);
    sg_tensor_release(n1);
    sg_tensor_release(dst);
    sg_tensor_release(base);
    sg_tensor_release(src);
    sg_tensor_release(a);

    /* Every element width: a transposed copy, byte for byte. */
    const sg_dtype dtypes[] = {SG_UINT8, SG_INT16, SG_FLOAT32, SG_FLOAT64, SG_COMPLEX128};
    for (size_t k = 0; k < sizeof dtypes / sizeof *dtypes; k++) {
        sg_tensor *s = OK(sg_tensor_empty(DIMS(5, 7), dtypes[k], SG_CPU, &out));
        unsigned char *p = sg_tensor_data(s);
        for (size_t i = 0; i < sg_tensor_nbytes(s); i++) p[i] = (unsigned char)(i * 7 + 1);
        sg_tensor *d = OK(sg_tensor_empty(DIMS(7, 5), dtypes[k], SG_CPU, &out));
        sg_tensor *dt = OK(sg_tensor_transpose(d, 0, 1, &out));
        CHECK(sg_tensor_copy_(dt, s) == SG_OK);
        bool same = true;
        for (int64_t i = 0; i < 5; i++)
            for (int64_t j = 0; j < 7; j++)
                same &= !memcmp(at_bytes(dt, I64(i, j)), at_bytes(s, I64(i, j)),
                                sg_dtype_size(dtypes[k]));
        CHECK(same);
        sg_tensor_release(dt);
        sg_tensor_release(d);
        sg_tensor_release(s);
    }
}

/* copy_ against an element-by-element reference, over random strides on both sides: src may
 * repeat elements, dst is a permuted, stepped window of a larger tensor whose gaps must stay. */
static void test_copy_random(void) {
    uint64_t   rng = 777;
    sg_tensor *buf = arange_from(1, DIMS(2048));
    for (int trial = 0; trial < 400; trial++) {
        int64_t sizes[5], strides[5], q[5], perm[5], inv[5], idx[5] = {0};
        int32_t nd = (int32_t)(1 + RAND(5));
        for (int32_t i = 0; i < nd; i++) {
            sizes[i] = 1 + RAND(4);
            strides[i] = RAND(4) ? RAND(20) : 0;
            perm[i] = i;
        }
        sg_tensor *src = OK(sg_tensor_as_strided(buf, sizes, strides, nd, RAND(9), &out));
        for (int32_t i = nd - 1; i > 0; i--) { /* shuffle */
            int32_t j = (int32_t)RAND(i + 1);
            int64_t x = perm[i];
            perm[i] = perm[j], perm[j] = x;
        }
        for (int32_t i = 0; i < nd; i++) inv[perm[i]] = i;
        int64_t step[5];
        for (int32_t i = 0; i < nd; i++) {
            step[i] = 1 + RAND(2);
            q[i] = sizes[perm[i]] * step[i] + 1 + RAND(2); /* room for a start of 1 */
        }
        sg_tensor *big = OK(sg_tensor_zeros(q, nd, SG_INT32, SG_CPU, &out));
        sg_tensor *d = sg_tensor_retain(big);
        for (int32_t i = 0; i < nd; i++) {
            sg_tensor *s = OK(sg_tensor_slice(d, i, RAND(2), INT64_MAX, step[i], &out));
            sg_tensor *s2 = OK(sg_tensor_slice(s, i, 0, sizes[perm[i]], 1, &out));
            sg_tensor_release(s);
            sg_tensor_release(d);
            d = s2;
        }
        sg_tensor *dst = OK(sg_tensor_permute(d, inv, nd, &out));
        sg_tensor_release(d);
        CHECK(sg_tensor_copy_(dst, src) == SG_OK);
        int64_t n = sg_tensor_numel(src), nonzero = 0;
        bool    same = true;
        for (int64_t k = 0; k < n; k++) {
            same &= elem(sg_tensor_data(dst), dst, idx) == elem(sg_tensor_data(src), src, idx);
            for (int32_t i = nd - 1; i >= 0 && ++idx[i] == sizes[i]; i--) idx[i] = 0;
        }
        const int32_t *b = sg_tensor_data(big);
        for (int64_t k = 0; k < sg_tensor_numel(big); k++) nonzero += b[k] != 0;
        CHECK(same && nonzero == n); /* every element landed; nothing else was written */
        sg_tensor_release(dst);
        sg_tensor_release(big);
        sg_tensor_release(src);
    }
    sg_tensor_release(buf);
}

/* Copies whose src and dst share bytes read src as it was before the copy. */
static void test_copy_overlap(void) {
    sg_tensor *a = arange(DIMS(10));
    sg_tensor *lo = OK(sg_tensor_slice(a, 0, 0, 9, 1, &out));
    sg_tensor *hi = OK(sg_tensor_slice(a, 0, 1, 10, 1, &out));
    CHECK(sg_tensor_copy_(hi, lo) == SG_OK);
    CHECK(VALUES(a, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8));
    CHECK(sg_tensor_copy_(lo, hi) == SG_OK);
    CHECK(VALUES(a, 0, 1, 2, 3, 4, 5, 6, 7, 8, 8));
    CHECK(sg_tensor_copy_(a, a) == SG_OK && VALUES(a, 0, 1, 2, 3, 4, 5, 6, 7, 8, 8));
    sg_tensor_release(hi);
    sg_tensor_release(lo);
    sg_tensor_release(a);

    /* A square matrix into its own transpose. */
    a = arange(DIMS(3, 3));
    sg_tensor *t = OK(sg_tensor_transpose(a, 0, 1, &out));
    CHECK(sg_tensor_copy_(a, t) == SG_OK);
    CHECK(VALUES(a, 0, 3, 6, 1, 4, 7, 2, 5, 8));
    sg_tensor_release(t);
    sg_tensor_release(a);

    /* Two storages over the same memory overlap as well. */
    int32_t    mem[6] = {0, 1, 2, 3, 4, 5};
    sg_tensor *x = OK(sg_tensor_from_blob(mem, I64(5), NULL, 1, SG_INT32, SG_CPU, 0, noop_release,
                                          NULL, &out));
    sg_tensor *y = OK(sg_tensor_from_blob(mem + 1, I64(5), NULL, 1, SG_INT32, SG_CPU, 0,
                                          noop_release, NULL, &out));
    CHECK(x->storage != y->storage && sg_tensor_copy_(y, x) == SG_OK);
    CHECK(mem[0] == 0 && mem[1] == 0 && mem[2] == 1 && mem[5] == 4);
    sg_tensor_release(x);
    sg_tensor_release(y);
}

/* sg_tensor_is_dense: c10's is_non_overlapping_and_dense */
static void test_dense(void) {
    sg_tensor *a = arange(DIMS(4, 6)), *v;
    CHECK(sg_tensor_is_dense(a) && !sg_tensor_is_dense(NULL));
    v = OK(sg_tensor_transpose(a, 0, 1, &out)); /* permuted: dense, not contiguous */
    CHECK(sg_tensor_is_dense(v) && !sg_tensor_is_contiguous(v));
    sg_tensor_release(v);
    v = OK(sg_tensor_slice(a, 1, 0, 6, 2, &out)); /* every other column: gaps */
    CHECK(!sg_tensor_is_dense(v));
    sg_tensor_release(v);
    v = OK(sg_tensor_as_strided(a, I64(3, 4), I64(0, 1), 2, 0, &out)); /* rows repeated */
    CHECK(!sg_tensor_is_dense(v));
    sg_tensor_release(v);
    v = OK(sg_tensor_as_strided(a, I64(2, 1, 3), I64(1, 7, 2), 3, 0, &out)); /* a size-1 dim */
    CHECK(sg_tensor_is_dense(v));
    sg_tensor_release(v);
    v = OK(sg_tensor_as_strided(a, I64(5), I64(2), 1, 0, &out));
    CHECK(!sg_tensor_is_dense(v) && !sg_tensor_overlaps(v));
    sg_tensor_release(v);
    /* sg_tensor_overlaps: a dim of several elements at stride 0, and nothing else */
    v = OK(sg_tensor_as_strided(a, I64(3, 4), I64(0, 1), 2, 0, &out));
    CHECK(sg_tensor_overlaps(v) && !sg_tensor_overlaps(a) && !sg_tensor_overlaps(NULL));
    sg_tensor_release(v);
    v = OK(sg_tensor_as_strided(a, I64(1, 4), I64(0, 1), 2, 0, &out));
    CHECK(!sg_tensor_overlaps(v));
    sg_tensor_release(v);
    sg_tensor_release(a);
}

/* sg_tensor_resize_out_strided_: the strides given where it resizes, the offset kept; nothing
 * where the sizes are already those */
static void test_resize_out_strided(void) {
    sg_tensor *base = arange(DIMS(8)), *t;
    t = OK(sg_tensor_as_strided(base, I64(0), I64(1), 1, 2, &out));
    must(sg_tensor_resize_out_strided_(t, I64(2, 3), I64(1, 2), 2));
    CHECK(is_geom(t, 2, I64(2, 3), I64(1, 2), 2) && t->storage == base->storage);
    must(sg_tensor_resize_out_strided_(t, I64(2, 3), NULL, 2));
    CHECK(is_geom(t, 2, I64(2, 3), I64(1, 2), 2));
    must(sg_tensor_resize_out_strided_(t, I64(3, 2), NULL, 2));
    CHECK(is_geom(t, 2, I64(3, 2), I64(2, 1), 2));
    sg_tensor_release(t);
    sg_tensor_release(base);
}

static void test_contiguous(void) {
    sg_tensor *a = arange(DIMS(2, 3)), *c;
    c = OK(sg_tensor_contiguous(a, &out));
    CHECK(c == a && a->refs == 2);
    sg_tensor_release(c);
    sg_tensor *t = OK(sg_tensor_transpose(a, 0, 1, &out));
    c = OK(sg_tensor_contiguous(t, &out));
    CHECK(c != t && c->storage != a->storage && is_geom(c, 2, I64(3, 2), I64(2, 1), 0));
    CHECK(VALUES(c, 0, 3, 1, 4, 2, 5) && sg_tensor_is_contiguous(c));
    sg_tensor_release(c);
    sg_tensor_release(t);
    FAILS(SG_EINVAL, "contiguous: the tensor is NULL", sg_tensor_contiguous(NULL, &out));
    sg_tensor_release(a);
}

/* ---- devices ------------------------------------------------------------------------------ */

static void test_meta(void) {
    sg_tensor *m = OK(sg_tensor_empty(DIMS(4, 5), SG_FLOAT32, SG_META, &out));
    sg_tensor *c = OK(sg_tensor_empty(DIMS(4, 5), SG_FLOAT32, SG_CPU, &out));
    /* Views work on meta; so do copies and contiguous from meta to meta (nothing to move). */
    sg_tensor *t = OK(sg_tensor_transpose(m, 0, 1, &out));
    CHECK(is_geom(t, 2, I64(5, 4), I64(1, 5), 0) && sg_tensor_data(t) == NULL);
    sg_tensor *mc = OK(sg_tensor_contiguous(t, &out));
    CHECK(sg_device_eq(mc->device, SG_META) && is_geom(mc, 2, I64(5, 4), I64(4, 1), 0));
    CHECK(sg_tensor_copy_(mc, t) == SG_OK);
    sg_tensor *same = OK(sg_tensor_to(m, SG_META, &out));
    CHECK(same == m);
    sg_tensor_release(same);

    FAILS(SG_EUNSUPPORTED, "to: meta tensors hold no data", sg_tensor_to(c, SG_META, &out));
    FAILS(SG_EUNSUPPORTED, "to: meta tensors hold no data", sg_tensor_to(m, SG_CPU, &out));
    FAILS_NO_OUT(SG_EUNSUPPORTED, "copy_: meta tensors hold no data", sg_tensor_copy_(c, m));
    FAILS_NO_OUT(SG_EUNSUPPORTED, "copy_: meta tensors hold no data", sg_tensor_copy_(m, c));
    FAILS(SG_EDEVICE, "to: device meta:1 does not exist (1 meta device found)",
          sg_tensor_to(c, ((sg_device){SG_DEV_META, 1}), &out));
    sg_tensor_release(mc);
    sg_tensor_release(t);
    sg_tensor_release(c);
    sg_tensor_release(m);
}

static void test_cuda_unavailable(void) {
    const char *why = NULL;
    if (sg_device_count(SG_DEV_CUDA, &why) > 0) {
        fprintf(stderr, "note: a CUDA device is present; its unavailability is not tested\n");
        return;
    }
    sg_tensor *a = arange(DIMS(3));
    FAILS(SG_EDEVICE, "to: the cuda backend is unavailable: ", sg_tensor_to(a, SG_CUDA(0), &out));
    if (why) CHECK_HAS(sg_last_error(), why);
    FAILS(SG_EDEVICE, "to: the privateusethree backend is unavailable: no implementation is "
                      "registered for it",
          sg_tensor_to(a, ((sg_device){SG_DEV_PRIVATEUSE3, 0}), &out));
    sg_tensor_release(a);
}

#define CALLS(a, f, t, d) \
    (calls.alloc == (a) && calls.from_host == (f) && calls.to_host == (t) && calls.device == (d))
#define RESET() memset(&calls, 0, sizeof calls)

static void test_fake_device(void) {
    CHECK(sg_device_impl_register(SG_DEV_PRIVATEUSE1, &fake1) == SG_OK);
    CHECK(sg_device_impl_register(SG_DEV_PRIVATEUSE2, &fake2) == SG_OK);
    sg_tensor *a = arange(DIMS(2, 3)), *t, *d, *e, *f;
    t = OK(sg_tensor_transpose(a, 0, 1, &out));

    /* to: the bytes move as they are; sizes and strides stay. */
    RESET();
    d = OK(sg_tensor_to(t, PU1(0), &out));
    CHECK(CALLS(1, 1, 0, 0) && sg_device_eq(d->device, PU1(0)));
    CHECK(d->keys == sg_keyset_of_device(PU1(0)) && (d->keys & SG_KEYSET(SG_KEY_PRIVATEUSE1)));
    CHECK(is_geom(d, 2, I64(3, 2), I64(1, 3), 0) && DEV_VALUES(d, 0, 3, 1, 4, 2, 5));
    RESET();
    e = OK(sg_tensor_to(d, SG_CPU, &out));
    CHECK(CALLS(0, 0, 1, 0) && sg_device_eq(e->device, SG_CPU));
    CHECK(is_geom(e, 2, I64(3, 2), I64(1, 3), 0) && VALUES(e, 0, 3, 1, 4, 2, 5));
    sg_tensor_release(e);
    RESET();
    e = OK(sg_tensor_to(d, PU1(1), &out)); /* another device of the type: its own copy */
    CHECK(CALLS(1, 0, 0, 1) && sg_device_eq(e->device, PU1(1)) && DEV_VALUES(e, 0, 3, 1, 4, 2, 5));
    sg_tensor_release(e);
    RESET();
    e = OK(sg_tensor_to(d, PU2(1), &out)); /* another type: through the host */
    CHECK(CALLS(1, 1, 1, 0) && sg_device_eq(e->device, PU2(1)) && DEV_VALUES(e, 0, 3, 1, 4, 2, 5));
    sg_tensor_release(e);
    e = OK(sg_tensor_to(d, PU1(0), &out));
    CHECK(e == d);
    sg_tensor_release(e);
    /* A view with an offset: only its span moves, and the offset starts again at 0. */
    sg_tensor *s = OK(sg_tensor_slice(a, 1, 1, 3, 1, &out)); /* [2, 2] strides [3, 1] offset 1 */
    RESET();
    e = OK(sg_tensor_to(s, PU1(0), &out));
    CHECK(is_geom(e, 2, I64(2, 2), I64(3, 1), 0) && e->storage->nbytes == 5 * 4);
    CHECK(DEV_VALUES(e, 1, 2, 4, 5));
    sg_tensor_release(e);
    FAILS(SG_EDEVICE, "to: device privateuseone:5 does not exist (2 privateuseone devices found)",
          sg_tensor_to(a, PU1(5), &out));

    /* copy_ from the host into a dense device tensor: staged on the host, one copy. */
    sg_tensor *z = OK(sg_tensor_zeros(DIMS(3, 2), SG_INT32, PU1(0), &out));
    RESET();
    CHECK(sg_tensor_copy_(z, t) == SG_OK && CALLS(0, 1, 0, 0) && DEV_VALUES(z, 0, 3, 1, 4, 2, 5));
    sg_tensor *zt = OK(sg_tensor_transpose(z, 0, 1, &out)); /* dense, not contiguous */
    RESET();
    CHECK(sg_tensor_copy_(zt, a) == SG_OK && CALLS(0, 1, 0, 0) && DEV_VALUES(zt, 0, 1, 2, 3, 4, 5));
    CHECK(DEV_VALUES(z, 0, 3, 1, 4, 2, 5));
    sg_tensor_release(zt);
    /* Into a device view with gaps: its span is read first, so the gaps survive. */
    sg_tensor *g = OK(sg_tensor_zeros(DIMS(4, 3), SG_INT32, PU1(0), &out));
    sg_tensor *gs = OK(sg_tensor_slice(g, 1, 1, 3, 1, &out));
    sg_tensor *src = arange_from(1, DIMS(4, 2));
    RESET();
    CHECK(sg_tensor_copy_(gs, src) == SG_OK && CALLS(0, 1, 1, 0));
    CHECK(DEV_VALUES(g, 0, 1, 2, 0, 3, 4, 0, 5, 6, 0, 7, 8));
    sg_tensor_release(src);
    /* From a strided device view to the host: its span comes back and is rearranged. */
    e = OK(sg_tensor_empty(DIMS(4, 2), SG_INT32, SG_CPU, &out));
    RESET();
    CHECK(sg_tensor_copy_(e, gs) == SG_OK && CALLS(0, 0, 1, 0));
    CHECK(VALUES(e, 1, 2, 3, 4, 5, 6, 7, 8));
    /* Contiguous on both sides: one call, whichever way. */
    RESET();
    CHECK(sg_tensor_copy_(e, e) == SG_OK && CALLS(0, 0, 0, 0));
    f = OK(sg_tensor_empty(DIMS(3, 2), SG_INT32, PU1(1), &out));
    RESET();
    CHECK(sg_tensor_copy_(f, z) == SG_OK && CALLS(0, 0, 0, 1) && DEV_VALUES(f, 0, 3, 1, 4, 2, 5));
    sg_tensor_release(f);
    f = OK(sg_tensor_empty(DIMS(3, 2), SG_INT32, PU2(0), &out));
    RESET();
    CHECK(sg_tensor_copy_(f, d) == SG_OK && CALLS(0, 1, 1, 0) && DEV_VALUES(f, 0, 3, 1, 4, 2, 5));
    sg_tensor_release(f);
    sg_tensor_release(e);

    /* contiguous of a device view: staged through the host, the result on the same device. */
    RESET();
    e = OK(sg_tensor_contiguous(gs, &out));
    CHECK(CALLS(1, 1, 1, 0) && sg_device_eq(e->device, PU1(0)));
    CHECK(is_geom(e, 2, I64(4, 2), I64(2, 1), 0) && DEV_VALUES(e, 1, 2, 3, 4, 5, 6, 7, 8));
    sg_tensor_release(e);

    /* Device failures come back with the function's name in front, and nothing leaks. */
    RESET();
    fake_fail = 1;
    FAILS(SG_EDEVICE, "contiguous: fake: injected failure", sg_tensor_contiguous(gs, &out));
    CHECK(calls.alloc == 1 && calls.free == 1);
    fake_fail = 1;
    FAILS(SG_EDEVICE, "to: fake: injected failure", sg_tensor_to(a, PU2(0), &out));
    fake_fail = 1;
    FAILS_NO_OUT(SG_EDEVICE, "copy_: fake: injected failure", sg_tensor_copy_(z, t));
    CHECK(!fake_fail);

    sg_tensor_release(gs);
    sg_tensor_release(g);
    sg_tensor_release(z);
    sg_tensor_release(s);
    sg_tensor_release(d);
    sg_tensor_release(t);
    sg_tensor_release(a);
    CHECK(fake_bad == 0);
    for (int i = 0; i < FAKE_SLOTS; i++) CHECK(!fake_mem[i].mem); /* every allocation freed */
}

int main(void) {
    test_create();
    test_sharing();
    test_as_strided();
    test_view();
    test_view_random();
    test_transpose_permute();
    test_slice_select();
    test_expand();
    test_unsqueeze_squeeze();
    test_dims_past_room();
    test_copy_cpu();
    test_copy_random();
    test_copy_overlap();
    test_dense();
    test_resize_out_strided();
    test_contiguous();
    test_meta();
    test_cuda_unavailable();
    test_fake_device();
    return check_result("test_rt_tensor");
}
