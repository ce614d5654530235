/* cast.c: elementwise conversion between dtypes on the CPU (the iterator's casts, out= writes
 * of another dtype, `to(dtype)`). Values pass through int64 (integral and bool sources), double
 * or a double complex (the rest), so every pair of dtypes is covered by one loop; a copy within
 * one dtype is a memcpy per line. */
#include "cpu.h"

typedef struct value {
    int     kind; /* 0 integral, 1 real, 2 complex */
    int64_t i;
    double  re, im;
} value;

/* How an element of each KIND of the dtype table loads into a value (T its C type, SUF the
 * suffix of its conversions); complex dtypes are read as two parts, below. */
#define LOAD_BOOL(T, SUF)    v.i = *(const T *)p
#define LOAD_UINT(T, SUF)    v.i = *(const T *)p
#define LOAD_SINT(T, SUF)    v.i = *(const T *)p
#define LOAD_FLOAT(T, SUF)   v.kind = 1, v.re = *(const T *)p
#define LOAD_REDUCED(T, SUF) v.kind = 1, v.re = sg_##SUF##_to_float(*(const T *)p)
#define LOAD_CASE(NAME, NUM, KIND, SIZE, T, SUF, ...) \
    case SG_##NAME: LOAD_##KIND(T, SUF); break;

static value load(sg_dtype t, const char *p) {
    value v = {0, 0, 0, 0};
    switch (t) {
        SG_DTYPES_WHERE(LOAD_CASE, 1, 1, 1, 1, 1, 0)
    case SG_COMPLEX64: {
        const float *c = (const float *)p;
        v.kind = 2, v.re = c[0], v.im = c[1];
        break;
    }
    case SG_COMPLEX128: {
        const double *c = (const double *)p;
        v.kind = 2, v.re = c[0], v.im = c[1];
        break;
    }
    default: break;
    }
    return v;
}

/* How a value stores into an element of each KIND of the dtype table, as load's. */
#define STORE_BOOL(T, SUF)    *(T *)p = v.kind ? (v.re != 0 || v.im != 0) : v.i != 0
#define STORE_UINT(T, SUF)    *(T *)p = (T)i
#define STORE_SINT(T, SUF)    *(T *)p = (T)i
#define STORE_FLOAT(T, SUF)   *(T *)p = (T)re
#define STORE_REDUCED(T, SUF) *(T *)p = sg_float_to_##SUF((float)re)
#define STORE_CASE(NAME, NUM, KIND, SIZE, T, SUF, ...) \
    case SG_##NAME: STORE_##KIND(T, SUF); break;

static void store(sg_dtype t, char *p, value v) {
    double  re = v.kind ? v.re : (double)v.i;
    int64_t i = v.kind ? sg_double_to_int64(v.re) : v.i;
    switch (t) {
        SG_DTYPES_WHERE(STORE_CASE, 1, 1, 1, 1, 1, 0)
    case SG_COMPLEX64: ((float *)p)[0] = (float)re, ((float *)p)[1] = (float)v.im; break;
    case SG_COMPLEX128: ((double *)p)[0] = re, ((double *)p)[1] = v.im; break;
    default: break;
    }
}

typedef struct cast_ctx {
    sg_dtype from, to;
    size_t   size;
} cast_ctx;

static void cast_loop(void *ctx, char *const *data, const int64_t *s, int64_t n) {
    const cast_ctx *c = ctx;
    char *d = data[0], *p = data[1];
    for (int64_t i = 0; i < n; i++, d += s[0], p += s[1]) store(c->to, d, load(c->from, p));
}

static void copy_loop(void *ctx, char *const *data, const int64_t *s, int64_t n) {
    const cast_ctx *c = ctx;
    if (s[0] == (int64_t)c->size && s[1] == (int64_t)c->size) {
        memcpy(data[0], data[1], (size_t)n * c->size);
        return;
    }
    char *d = data[0], *p = data[1];
    for (int64_t i = 0; i < n; i++, d += s[0], p += s[1]) memcpy(d, p, c->size);
}

static sg_cast_copy_fn cast_hooks[SG_DEV__COUNT];

void sg_set_cast_copy(sg_device_type type, sg_cast_copy_fn fn) {
    if ((unsigned)type < SG_DEV__COUNT && type != SG_DEV_CPU)
        __atomic_store_n(&cast_hooks[type], fn, __ATOMIC_RELEASE);
}

bool sg_has_cast_copy(sg_device_type type) {
    return type == SG_DEV_CPU ||
           ((unsigned)type < SG_DEV__COUNT && __atomic_load_n(&cast_hooks[type], __ATOMIC_ACQUIRE));
}

sg_status sg_cast_copy_(sg_tensor *dst, const sg_tensor *src) {
    if (dst->device.type != SG_DEV_CPU) {
        sg_cast_copy_fn fn = (unsigned)dst->device.type < SG_DEV__COUNT
                                 ? __atomic_load_n(&cast_hooks[dst->device.type], __ATOMIC_ACQUIRE)
                                 : NULL;
        if (!fn)
            return sg_error(SG_EUNSUPPORTED, "copy_: no conversion kernel for %s tensors",
                            sg_device_type_name((sg_device_type)dst->device.type));
        return fn(dst, src);
    }
    sg_iter      it;
    sg_tensor   *res;
    sg_iter_spec spec = {.op = "copy_", .out = dst, .in = {src}, .nin = 1,
                         .compute = (sg_dtype)src->dtype, .result = (sg_dtype)dst->dtype,
                         .out_dtype = (sg_dtype)dst->dtype, .to_out = true};
    sg_status st = sg_iter_build(&it, &spec, &res);
    if (st) return st;
    cast_ctx c = {(sg_dtype)src->dtype, (sg_dtype)dst->dtype, sg_dtype_size((sg_dtype)dst->dtype)};
    sg_iter_run(&it, c.from == c.to ? copy_loop : cast_loop, &c);
    st = sg_iter_finish(&it, &res);
    sg_tensor_release(res);
    return st;
}

sg_status sg_cast(const sg_tensor *t, sg_dtype dtype, sg_tensor **out) {
    if ((sg_dtype)t->dtype == dtype && sg_tensor_is_contiguous(t)) {
        *out = sg_tensor_retain((sg_tensor *)t);
        return SG_OK;
    }
    sg_status st = sg_tensor_empty(t->sizes, t->ndim, dtype, t->device, out);
    if (!st && (st = sg_cast_copy_(*out, t))) {
        sg_tensor_release(*out);
        *out = NULL;
    }
    return st;
}
