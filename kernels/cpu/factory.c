/* factory.c: tensor factories (empty, zeros, ones, full, arange and their _like forms), random
 * tensors (rand, randn, normal, uniform_, bernoulli) with the CPU generator, and the copies
 * (copy_, _to_copy, to, clone, contiguous).
 *
 * Factories without tensor arguments reach their kernel through BackendSelect on their device
 * argument (None: the CPU). Those that only allocate and fill are registered at
 * CompositeExplicitAutograd: they allocate on the device asked for, fill on the CPU and move
 * the bytes, and skip the fill on Meta. The random ones are the CPU's (and Meta's, which only
 * allocates): values come from the generator of sg_generator.h, whose header says which of them
 * match PyTorch's bit for bit. The copies are device-generic too: a copy within one dtype is
 * the runtime's (any pair of devices), a conversion is computed on the CPU.
 *
 * Type rules are aten's: the default dtype is float32; full infers bool, int64, float32 or
 * complex64 from its value; arange gives int64 for integer bounds and float32 where any bound
 * is a float, with aten's size computation and errors. */
#include "cpu.h"
#include "sg_factory_shape.h"
#include "sg_generator.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* c10::pi<double> */
static const double PI = 3.14159265358979323846;

/* ---- helpers ------------------------------------------------------------------------------ */

static bool same_shape(const sg_tensor *t, const int64_t *sizes, int32_t n) {
    if (t->ndim != n) return false;
    for (int32_t i = 0; i < n; i++)
        if (t->sizes[i] != sizes[i]) return false;
    return true;
}

/* Strides of a memory format (not preserve) for sizes; false with an error set where the rank
 * does not fit the format. */
static sg_status format_strides(const char *op, const int64_t *sizes, int32_t n,
                                sg_memory_format mf, int64_t *strides) {
    int64_t acc = 1;
    switch (mf) {
    case SG_CHANNELS_LAST:
        if (n != 4)
            return sg_error(SG_EINVAL, "%s: required rank 4 tensor to use channels_last format",
                            op);
        strides[1] = 1;
        strides[3] = sizes[1];
        strides[2] = strides[3] * sizes[3];
        strides[0] = strides[2] * sizes[2];
        return SG_OK;
    case SG_CHANNELS_LAST_3D:
        if (n != 5)
            return sg_error(SG_EINVAL,
                            "%s: required rank 5 tensor to use channels_last_3d format", op);
        strides[1] = 1;
        strides[4] = sizes[1];
        strides[3] = strides[4] * sizes[4];
        strides[2] = strides[3] * sizes[3];
        strides[0] = strides[2] * sizes[2];
        return SG_OK;
    case SG_CONTIGUOUS_FORMAT:
        for (int32_t i = n - 1; i >= 0; i--) {
            strides[i] = acc;
            acc *= sizes[i] > 1 ? sizes[i] : 1;
        }
        return SG_OK;
    default:
        return sg_error(SG_EINVAL, "%s: Preserve memory format is unsupported by the contiguous "
                                   "operator.",
                        op);
    }
}

/* Whether t's strides are those of format mf (size-1 dims may have any stride). */
static bool is_format(const sg_tensor *t, sg_memory_format mf) {
    int64_t want[SG_MAX_DIMS];
    if (mf == SG_CONTIGUOUS_FORMAT) return sg_tensor_is_contiguous(t);
    if (sg_tensor_numel(t) == 0) return true;
    if (format_strides("", t->sizes, t->ndim, mf, want)) {
        sg_error_clear();
        return false;
    }
    for (int32_t i = 0; i < t->ndim; i++)
        if (t->sizes[i] != 1 && t->strides[i] != want[i]) return false;
    return true;
}

/* c10's suggest_memory_format, for the formats we know. */
static sg_memory_format suggest_format(const sg_tensor *t) {
    if (t->ndim == 4 && !sg_tensor_is_contiguous(t) && is_format(t, SG_CHANNELS_LAST))
        return SG_CHANNELS_LAST;
    if (t->ndim == 5 && !sg_tensor_is_contiguous(t) && is_format(t, SG_CHANNELS_LAST_3D))
        return SG_CHANNELS_LAST_3D;
    return SG_CONTIGUOUS_FORMAT;
}

/* An uninitialised tensor shaped like t with format mf (NULL or preserve: t's own strides
 * where they are dense, else dense ones in the order of t's), of dtype and device (aten's
 * empty_like). */
static sg_status empty_like_fmt(const char *op, const sg_tensor *t, const sg_memory_format *mf,
                                sg_dtype dtype, sg_device dev, sg_tensor **out) {
    int64_t strides[SG_MAX_DIMS];
    *out = NULL;
    if (!mf || *mf == SG_PRESERVE_FORMAT) {
        if (sg_tensor_is_dense(t))
            return sg_tensor_empty_strided(t->sizes, t->strides, t->ndim, dtype, dev, out);
        sg_follow_strides(t->sizes, t->ndim, &t, 1, strides);
        return sg_tensor_empty_strided(t->sizes, strides, t->ndim, dtype, dev, out);
    }
    sg_status st = format_strides(op, t->sizes, t->ndim, *mf, strides);
    return st ? st : sg_tensor_empty_strided(t->sizes, strides, t->ndim, dtype, dev, out);
}

/* ---- filling ------------------------------------------------------------------------------ */

/* Every element of t (any device, any strides) becomes v converted to t's dtype. */
static sg_status fill(const char *op, sg_tensor *t, sg_scalar v) {
    if (sg_scalar_overflows(v, (sg_dtype)t->dtype))
        return sg_error(SG_EINVAL, "%s: value cannot be converted to type %s without overflow",
                        op, sg_cpp_type_name((sg_dtype)t->dtype));
    if (t->device.type == SG_DEV_META || sg_tensor_numel(t) == 0) return SG_OK;
    sg_tensor *s = NULL, *one = NULL, *host = NULL;
    sg_status  st = sg_scalar_tensor(v, &s);
    if (!st) st = sg_cast(s, (sg_dtype)t->dtype, &one); /* one element of t's dtype */
    if (!st && t->device.type == SG_DEV_CPU) {
        st = sg_cast_copy_(t, one);
    } else if (!st) {
        st = sg_tensor_empty(t->sizes, t->ndim, (sg_dtype)t->dtype, SG_CPU, &host);
        if (!st) st = sg_cast_copy_(host, one);
        if (!st) st = sg_tensor_copy_(t, host);
    }
    sg_tensor_release(host);
    sg_tensor_release(one);
    sg_tensor_release(s);
    return st;
}

/* A new tensor of size, opts, format (NULL: contiguous), filled with v where v is given. */
static sg_status make(const char *op, sg_int_list size, sg_factory_opts o,
                      const sg_memory_format *mf, const sg_scalar *v, sg_tensor **ret) {
    int64_t   strides[SG_MAX_DIMS];
    sg_status st = sg_factory_check_sizes(op, size);
    *ret = NULL;
    if (st || (st = format_strides(op, size.items, size.len, mf ? *mf : SG_CONTIGUOUS_FORMAT,
                                   strides)))
        return st;
    if ((st = sg_tensor_empty_strided(size.items, strides, size.len, o.dtype, o.dev, ret)))
        return st;
    if (v && (st = fill(op, *ret, *v))) {
        sg_tensor_release(*ret);
        *ret = NULL;
    }
    return st;
}

/* ---- empty, zeros, ones, full ------------------------------------------------------------- */

static sg_status empty_k(sg_keyset ks, sg_int_list size, const sg_dtype *dtype,
                         const sg_layout *layout, const sg_device *device, const bool *pin,
                         const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)pin;
    sg_factory_opts o;
    sg_status       st = sg_factory_options("empty", dtype, SG_FLOAT32, layout, device, SG_CPU, &o);
    *ret = NULL;
    return st ? st : make("empty", size, o, mf, NULL, ret);
}

static sg_status empty_names_k(sg_keyset ks, sg_int_list size, const sg_str_list *names,
                               const sg_dtype *dtype, const sg_layout *layout,
                               const sg_device *device, const bool *pin,
                               const sg_memory_format *mf, sg_tensor **ret) {
    sg_status st = sg_factory_no_names("empty", names);
    *ret = NULL;
    return st ? st : empty_k(ks, size, dtype, layout, device, pin, mf, ret);
}

static sg_status empty_out_k(sg_keyset ks, sg_int_list size, const sg_memory_format *mf,
                             sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_status st = sg_factory_check_sizes("empty", size);
    *ret = NULL;
    if (st) return st;
    if (mf && *mf != SG_CONTIGUOUS_FORMAT && *mf != SG_PRESERVE_FORMAT)
        return sg_error(SG_EUNSUPPORTED, "empty: out= takes the contiguous format only");
    if ((st = sg_tensor_resize_out_(out, size.items, size.len))) return st;
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

static sg_status empty_strided_k(sg_keyset ks, sg_int_list size, sg_int_list stride,
                                 const sg_dtype *dtype, const sg_layout *layout,
                                 const sg_device *device, const bool *pin, sg_tensor **ret) {
    (void)ks, (void)pin;
    sg_factory_opts o;
    sg_status       st = sg_factory_options("empty_strided", dtype, SG_FLOAT32, layout, device,
                                            SG_CPU, &o);
    *ret = NULL;
    if (st || (st = sg_factory_check_sizes("empty_strided", size))) return st;
    if (size.len != stride.len)
        return sg_error(SG_EINVAL, "empty_strided: mismatch in length of strides and shape");
    return sg_tensor_empty_strided(size.items, stride.items, size.len, o.dtype, o.dev, ret);
}

static sg_status empty_like_k(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype,
                              const sg_layout *layout, const sg_device *device, const bool *pin,
                              const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)pin;
    sg_factory_opts o;
    sg_status       st = sg_factory_options("empty_like", dtype, (sg_dtype)self->dtype, layout,
                                            device, self->device, &o);
    *ret = NULL;
    return st ? st : empty_like_fmt("empty_like", self, mf, o.dtype, o.dev, ret);
}

static sg_status zeros_k(sg_keyset ks, sg_int_list size, const sg_dtype *dtype,
                         const sg_layout *layout, const sg_device *device, const bool *pin,
                         sg_tensor **ret) {
    (void)ks, (void)pin;
    sg_factory_opts o;
    sg_status       st = sg_factory_options("zeros", dtype, SG_FLOAT32, layout, device, SG_CPU, &o);
    *ret = NULL;
    if (st || (st = sg_factory_check_sizes("zeros", size))) return st;
    return sg_tensor_zeros(size.items, size.len, o.dtype, o.dev, ret);
}

static sg_status zeros_names_k(sg_keyset ks, sg_int_list size, const sg_str_list *names,
                               const sg_dtype *dtype, const sg_layout *layout,
                               const sg_device *device, const bool *pin, sg_tensor **ret) {
    sg_status st = sg_factory_no_names("zeros", names);
    *ret = NULL;
    return st ? st : zeros_k(ks, size, dtype, layout, device, pin, ret);
}

/* The fill of an out= form: out takes size, then every element becomes v. */
static sg_status fill_out(const char *op, sg_int_list size, sg_scalar v, sg_tensor *out,
                          sg_tensor **ret) {
    sg_status st = sg_factory_check_sizes(op, size);
    *ret = NULL;
    if (st || (st = sg_tensor_resize_out_(out, size.items, size.len)) || (st = fill(op, out, v)))
        return st;
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

static sg_status zeros_out_k(sg_keyset ks, sg_int_list size, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return fill_out("zeros", size, sg_scalar_int(0), out, ret);
}

/* A _like tensor filled with v (NULL: left uninitialised). */
static sg_status like(const char *op, sg_tensor *self, const sg_dtype *dtype,
                      const sg_layout *layout, const sg_device *device,
                      const sg_memory_format *mf, const sg_scalar *v, sg_tensor **ret) {
    sg_factory_opts o;
    sg_status       st = sg_factory_options(op, dtype, (sg_dtype)self->dtype, layout, device,
                                            self->device, &o);
    *ret = NULL;
    if (st || (st = empty_like_fmt(op, self, mf, o.dtype, o.dev, ret))) return st;
    if (v && (st = fill(op, *ret, *v))) {
        sg_tensor_release(*ret);
        *ret = NULL;
    }
    return st;
}

static sg_status zeros_like_k(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype,
                              const sg_layout *layout, const sg_device *device, const bool *pin,
                              const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)pin;
    sg_scalar zero = sg_scalar_int(0);
    return like("zeros_like", self, dtype, layout, device, mf, &zero, ret);
}

static sg_status ones_k(sg_keyset ks, sg_int_list size, const sg_dtype *dtype,
                        const sg_layout *layout, const sg_device *device, const bool *pin,
                        sg_tensor **ret) {
    (void)ks, (void)pin;
    sg_factory_opts o;
    sg_scalar       one = sg_scalar_int(1);
    sg_status       st = sg_factory_options("ones", dtype, SG_FLOAT32, layout, device, SG_CPU, &o);
    *ret = NULL;
    return st ? st : make("ones", size, o, NULL, &one, ret);
}

static sg_status ones_names_k(sg_keyset ks, sg_int_list size, const sg_str_list *names,
                              const sg_dtype *dtype, const sg_layout *layout,
                              const sg_device *device, const bool *pin, sg_tensor **ret) {
    sg_status st = sg_factory_no_names("ones", names);
    *ret = NULL;
    return st ? st : ones_k(ks, size, dtype, layout, device, pin, ret);
}

static sg_status ones_out_k(sg_keyset ks, sg_int_list size, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return fill_out("ones", size, sg_scalar_int(1), out, ret);
}

static sg_status ones_like_k(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype,
                             const sg_layout *layout, const sg_device *device, const bool *pin,
                             const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)pin;
    sg_scalar one = sg_scalar_int(1);
    return like("ones_like", self, dtype, layout, device, mf, &one, ret);
}

static sg_status full_k(sg_keyset ks, sg_int_list size, sg_scalar v, const sg_dtype *dtype,
                        const sg_layout *layout, const sg_device *device, const bool *pin,
                        sg_tensor **ret) {
    (void)ks, (void)pin;
    sg_factory_opts o;
    sg_status       st = sg_factory_options("full", dtype, sg_factory_scalar_dtype(v), layout,
                                            device, SG_CPU, &o);
    *ret = NULL;
    return st ? st : make("full", size, o, NULL, &v, ret);
}

static sg_status full_names_k(sg_keyset ks, sg_int_list size, sg_scalar v,
                              const sg_str_list *names, const sg_dtype *dtype,
                              const sg_layout *layout, const sg_device *device, const bool *pin,
                              sg_tensor **ret) {
    sg_status st = sg_factory_no_names("full", names);
    *ret = NULL;
    return st ? st : full_k(ks, size, v, dtype, layout, device, pin, ret);
}

static sg_status full_out_k(sg_keyset ks, sg_int_list size, sg_scalar v, sg_tensor *out,
                            sg_tensor **ret) {
    (void)ks;
    return fill_out("full", size, v, out, ret);
}

static sg_status full_like_k(sg_keyset ks, sg_tensor *self, sg_scalar v, const sg_dtype *dtype,
                             const sg_layout *layout, const sg_device *device, const bool *pin,
                             const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)pin;
    return like("full_like", self, dtype, layout, device, mf, &v, ret);
}

/* ---- arange ------------------------------------------------------------------------------- */

/* Writes start + step * i into n elements of a contiguous CPU buffer of dtype t: in int64 for
 * integral dtypes, float for the 16-bit floats and double otherwise (aten's acc_type on CPU).
 * One loop per dtype, from the dtype table. */
#define ARANGE_INT(E, C)                                                                       \
    case E:                                                                                    \
        for (int64_t i = 0; i < n; i++)                                                        \
            ((C *)data)[i] = (C)(int64_t)((uint64_t)a + (uint64_t)s * (uint64_t)i);            \
        break;
#define ARANGE_AT_FLOAT   (a + s * (double)i)
#define ARANGE_AT_REDUCED ((float)a + (float)s * (float)i)
#define ARANGE_REAL(NAME, NUM, KIND, SIZE, CTYPE, SUF, ...)                                    \
    case SG_##NAME:                                                                            \
        for (int64_t i = 0; i < n; i++)                                                        \
            ((CTYPE *)data)[i] = SG_REAL_STORE(KIND, SUF, CTYPE, ARANGE_AT_##KIND);            \
        break;
static void arange_fill(void *data, sg_dtype t, int64_t n, sg_scalar start, sg_scalar step) {
    if (sg_dtype_is_integral(t, false)) {
        int64_t a = start.kind == SG_SCALAR_INT ? start.u.i : (int64_t)sg_scalar_to_double(start);
        int64_t s = step.kind == SG_SCALAR_INT ? step.u.i : (int64_t)sg_scalar_to_double(step);
        switch (t) {
            SG_DTYPES_CTYPES_WHERE(ARANGE_INT, 0, 1, 1, 0, 0, 0)
        default: break;
        }
        return;
    }
    double a = sg_scalar_to_double(start), s = sg_scalar_to_double(step);
    switch (t) {
        SG_DTYPES_FLOATING(ARANGE_REAL)
    default: break;
    }
}
#undef ARANGE_INT
#undef ARANGE_AT_FLOAT
#undef ARANGE_AT_REDUCED
#undef ARANGE_REAL

/* arange into out (resized to [size] where its element count differs, as aten does), or into
 * a new tensor of dtype t on dev. */
static sg_status arange_run(sg_scalar start, sg_scalar end, sg_scalar step, sg_dtype t,
                            sg_device dev, sg_tensor *out, sg_tensor **ret) {
    int64_t   n = 0;
    sg_status st = sg_factory_arange_size("arange_cpu", start, end, step, t, &n);
    *ret = NULL;
    if (st) return st;
    sg_tensor *dst = out, *host = NULL;
    if (!out) {
        if ((st = sg_tensor_empty(&n, 1, t, dev, &dst))) return st;
    } else if (sg_tensor_numel(out) != n && (st = sg_tensor_resize_(out, &n, 1))) {
        return st;
    }
    if (dst->device.type == SG_DEV_CPU && sg_tensor_is_contiguous(dst)) {
        arange_fill(sg_tensor_data(dst), t, n, start, step);
    } else if (dst->device.type != SG_DEV_META && n > 0) {
        st = sg_tensor_empty(dst->sizes, dst->ndim, t, SG_CPU, &host);
        if (!st) {
            arange_fill(sg_tensor_data(host), t, n, start, step);
            st = sg_tensor_copy_(dst, host);
        }
        sg_tensor_release(host);
    }
    if (st) {
        if (!out) sg_tensor_release(dst);
        return st;
    }
    *ret = out ? sg_tensor_retain(out) : dst;
    return SG_OK;
}

static sg_status arange_start_step_k(sg_keyset ks, sg_scalar start, sg_scalar end,
                                     sg_scalar step, const sg_dtype *dtype,
                                     const sg_layout *layout, const sg_device *device,
                                     const bool *pin, sg_tensor **ret) {
    (void)ks, (void)pin;
    sg_factory_opts o;
    sg_dtype        def = sg_factory_arange_dtype(start, end, step);
    sg_status       st = sg_factory_options("arange", dtype, def, layout, device, SG_CPU, &o);
    *ret = NULL;
    return st ? st : arange_run(start, end, step, o.dtype, o.dev, NULL, ret);
}

static sg_status arange_start_k(sg_keyset ks, sg_scalar start, sg_scalar end,
                                const sg_dtype *dtype, const sg_layout *layout,
                                const sg_device *device, const bool *pin, sg_tensor **ret) {
    return arange_start_step_k(ks, start, end, sg_scalar_int(1), dtype, layout, device, pin, ret);
}

static sg_status arange_k(sg_keyset ks, sg_scalar end, const sg_dtype *dtype,
                          const sg_layout *layout, const sg_device *device, const bool *pin,
                          sg_tensor **ret) {
    return arange_start_step_k(ks, sg_scalar_int(0), end, sg_scalar_int(1), dtype, layout,
                               device, pin, ret);
}

static sg_status arange_out_k(sg_keyset ks, sg_scalar end, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return arange_run(sg_scalar_int(0), end, sg_scalar_int(1), (sg_dtype)out->dtype, out->device,
                      out, ret);
}

static sg_status arange_start_out_k(sg_keyset ks, sg_scalar start, sg_scalar end,
                                    sg_scalar step, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return arange_run(start, end, step, (sg_dtype)out->dtype, out->device, out, ret);
}

/* ---- the generator ------------------------------------------------------------------------ */

enum { MT_N = 624, MT_M = 397 };

struct sg_generator {
    pthread_mutex_t lock;
    uint64_t        seed;
    uint32_t        state[MT_N];
    int32_t         left, next;
    bool            has_normal; /* CPUGeneratorImpl's next_double_normal_sample */
    double          normal;
    uint64_t        philox;     /* Philox stream numbers handed to device generators */
};

/* at::mt19937's init_with_uint32 */
static void mt_seed(sg_generator *g, uint64_t seed) {
    g->seed = seed;
    g->state[0] = (uint32_t)(seed & 0xffffffffu);
    for (uint32_t j = 1; j < MT_N; j++)
        g->state[j] = 1812433253u * (g->state[j - 1] ^ (g->state[j - 1] >> 30)) + j;
    g->left = 1;
    g->next = 0;
    g->has_normal = false;
    g->philox = 0;
}

static uint32_t twist(uint32_t u, uint32_t v) {
    uint32_t mix = (u & 0x80000000u) | (v & 0x7fffffffu);
    return (mix >> 1) ^ ((v & 1u) ? 0x9908b0dfu : 0u);
}

static void mt_next_state(sg_generator *g) {
    uint32_t *p = g->state;
    g->left = MT_N;
    g->next = 0;
    for (int j = MT_N - MT_M + 1; --j; p++) *p = p[MT_M] ^ twist(p[0], p[1]);
    for (int j = MT_M; --j; p++) *p = p[MT_M - MT_N] ^ twist(p[0], p[1]);
    *p = p[MT_M - MT_N] ^ twist(p[0], g->state[0]);
}

static uint32_t mt_draw(sg_generator *g) {
    if (--g->left == 0) mt_next_state(g);
    uint32_t y = g->state[g->next++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

static uint64_t mt_draw64(sg_generator *g) {
    uint64_t hi = mt_draw(g);
    return hi << 32 | mt_draw(g);
}

static sg_generator    default_gen = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t  default_once = PTHREAD_ONCE_INIT;
static void            default_init(void) { mt_seed(&default_gen, SG_GENERATOR_DEFAULT_SEED); }

sg_generator *sg_generator_default(void) {
    pthread_once(&default_once, default_init);
    return &default_gen;
}

static sg_generator *gen_of(sg_generator *g) { return g ? g : sg_generator_default(); }

sg_status sg_generator_new(uint64_t seed, sg_generator **out) {
    sg_generator *g = calloc(1, sizeof *g);
    *out = NULL;
    if (!g) return sg_error(SG_ENOMEM, "out of memory");
    if (pthread_mutex_init(&g->lock, NULL)) {
        free(g);
        return sg_error(SG_ENOMEM, "sg_generator_new: cannot make a mutex");
    }
    mt_seed(g, seed);
    *out = g;
    return SG_OK;
}

void sg_generator_free(sg_generator *g) {
    if (!g || g == &default_gen) return;
    pthread_mutex_destroy(&g->lock);
    free(g);
}

void sg_generator_manual_seed(sg_generator *g, uint64_t seed) {
    g = gen_of(g);
    pthread_mutex_lock(&g->lock);
    mt_seed(g, seed);
    pthread_mutex_unlock(&g->lock);
}

uint64_t sg_generator_initial_seed(sg_generator *g) {
    g = gen_of(g);
    pthread_mutex_lock(&g->lock);
    uint64_t s = g->seed;
    pthread_mutex_unlock(&g->lock);
    return s;
}

void sg_generator_philox_reserve(sg_generator *g, uint64_t n, uint64_t *seed,
                                 uint64_t *offset) {
    g = gen_of(g);
    pthread_mutex_lock(&g->lock);
    *seed = g->seed;
    *offset = g->philox;
    g->philox += n;
    pthread_mutex_unlock(&g->lock);
}

uint32_t sg_generator_random(sg_generator *g) {
    g = gen_of(g);
    pthread_mutex_lock(&g->lock);
    uint32_t r = mt_draw(g);
    pthread_mutex_unlock(&g->lock);
    return r;
}

uint64_t sg_generator_random64(sg_generator *g) {
    g = gen_of(g);
    pthread_mutex_lock(&g->lock);
    uint64_t r = mt_draw64(g);
    pthread_mutex_unlock(&g->lock);
    return r;
}

/* at::uniform_real_distribution<T>(0, 1) before its affine map: the low digits(T) bits
 * (sg_dtype_digits) of a 32-bit draw (64-bit for double) scaled by 2^-digits */
static double u_double(sg_generator *g) {
    return (double)(mt_draw64(g) & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
}
/* ... and for a dtype of fewer than 32 digits (all but float64): its mask and 2^-digits. */
typedef struct u_bits {
    uint32_t mask;
    float    unit;
} u_bits;
static u_bits u_bits_of(sg_dtype t) {
    uint32_t one = UINT32_C(1) << sg_dtype_digits(t);
    return (u_bits){one - 1, 1.0f / (float)one};
}
static float u_draw(sg_generator *g, u_bits u) { return (float)(mt_draw(g) & u.mask) * u.unit; }
static float u_float(sg_generator *g) { return u_draw(g, u_bits_of(SG_FLOAT32)); }

/* Which of aten's CPU kernels the random ops reproduce. PyTorch compiles its distribution
 * kernels once per CPU capability: the x86 AVX2 and AVX512 builds (what an x86 machine runs)
 * have their multiply-adds fused by the compiler, and fill float32 normals with a vectorised
 * Cephes log and sincos; the portable build (ATEN_CPU_CAPABILITY=default, and non-x86 CPUs)
 * rounds every product and calls logf/cosf/sinf. We follow the x86 vector kernels on x86-64
 * unless ATEN_CPU_CAPABILITY=default is set, as PyTorch does; it is read at registration. */
static bool vec_kernels = true;

static void pick_kernels(void) {
    const char *cap = getenv("ATEN_CPU_CAPABILITY");
#if defined(__x86_64__) || defined(_M_X64)
    vec_kernels = !(cap && strcmp(cap, "default") == 0);
#else
    (void)cap;
    vec_kernels = false;
#endif
}

/* a * b + c as the chosen kernels round it */
static double madd(double a, double b, double c) { return vec_kernels ? fma(a, b, c) : a * b + c; }
static float  maddf(float a, float b, float c) { return vec_kernels ? fmaf(a, b, c) : a * b + c; }

/* at::normal_distribution<double>: Box-Muller on two uniforms, the sine kept for the next
 * call. */
static double normal_double(sg_generator *g, double mean, double std) {
    if (g->has_normal) {
        g->has_normal = false;
        return madd(g->normal, std, mean);
    }
    double u1 = u_double(g), u2 = u_double(g);
    double r = sqrt(-2.0 * log1p(-u2)), theta = 2.0 * PI * u1;
    g->normal = r * sin(theta);
    g->has_normal = true;
    return madd(r * cos(theta), std, mean);
}

/* ---- random kernels ----------------------------------------------------------------------- */

/* Calls fn on every element of it in order (aten's cpu_serial_kernel): p[k] is operand k's. */
typedef void (*elem_fn)(void *ctx, char *const *p);

static void walk(const sg_iter *it, elem_fn fn, void *ctx) {
    int64_t idx[SG_MAX_DIMS] = {0};
    char   *p[SG_ITER_MAX];
    for (int k = 0; k < it->nops; k++) p[k] = it->data[k];
    for (int64_t i = 0; i < it->numel; i++) {
        fn(ctx, p);
        for (int32_t d = 0; d < it->ndim; d++) {
            for (int k = 0; k < it->nops; k++) p[k] += it->stride[k][d];
            if (++idx[d] < it->shape[d]) break;
            for (int k = 0; k < it->nops; k++) p[k] -= it->stride[k][d] * it->shape[d];
            idx[d] = 0;
        }
    }
}

/* Runs fn serially over self (written in place) and, where given, p broadcast to it, in the
 * TensorIterator's order (by self's strides), under g's lock. */
static sg_status run_serial(const char *op, sg_tensor *self, const sg_tensor *p, sg_generator *g,
                            elem_fn fn, void *ctx) {
    sg_iter      it;
    sg_tensor   *res;
    sg_dtype     t = (sg_dtype)self->dtype;
    sg_iter_spec spec = {.op = op, .out = self, .in = {p}, .nin = p ? 1 : 0,
                         .compute = p ? (sg_dtype)p->dtype : t, .result = t, .out_dtype = t,
                         .to_out = true};
    sg_status    st = sg_iter_build(&it, &spec, &res);
    if (st) return st;
    pthread_mutex_lock(&g->lock);
    walk(&it, fn, ctx);
    pthread_mutex_unlock(&g->lock);
    st = sg_iter_finish(&it, &res);
    sg_tensor_release(res);
    return st;
}

typedef struct rng {
    sg_generator *g;
    sg_dtype      t;
    double        a, b;   /* uniform: from, to; normal: mean, std; bernoulli: p */
    float         fa, fd; /* uniform in float: from, to - from (rounded as aten's types do) */
    u_bits        u;      /* uniform below float64: its draw */
} rng;

static void uniform_elem(void *ctx, char *const *p) {
    rng *r = ctx;
    if (r->t == SG_FLOAT64)
        *(double *)p[0] = madd(u_double(r->g), r->b - r->a, r->a);
    else /* computed in float; the store rounds float16 and bfloat16 */
        sg_store_double(r->t, p[0], maddf(u_draw(r->g, r->u), r->fd, r->fa));
}

static bool is_float_dtype(sg_dtype t) { return sg_dtype_is_floating(t); }

/* uniform_: aten's checks, then one draw per element in iteration order. */
static sg_status uniform_run(sg_tensor *self, double from, double to, sg_generator *gen) {
    sg_dtype  t = (sg_dtype)self->dtype;
    rng       r = {gen_of(gen), t, from, to, 0, 0, {0, 0}};
    sg_status st = sg_factory_uniform_check(t, from, to, &r.fa, &r.fd);
    if (st) return st;
    if (t != SG_FLOAT64) r.u = u_bits_of(t); /* a floating dtype, checked */
    if (self->device.type == SG_DEV_META || sg_tensor_numel(self) == 0) return SG_OK;
    if (self->device.type != SG_DEV_CPU)
        return sg_error(SG_EUNSUPPORTED, "uniform_: random numbers are made on the CPU only");
    return run_serial("uniform_", self, NULL, r.g, uniform_elem, &r);
}

static void normal_elem(void *ctx, char *const *p) {
    rng *r = ctx;
    sg_store_double(r->t, p[0], normal_double(r->g, r->a, r->b));
}

/* aten's normal_fill_16 in float: blocks of 16 uniforms become 16 normals */
static void fill16_float(float *d, float mean, float std) {
    for (int j = 0; j < 8; j++) {
        const float u1 = 1 - d[j], u2 = d[j + 8];
        const float radius = sqrtf(-2 * logf(u1));
        const float theta = (float)(2.0 * PI * (double)u2);
        d[j] = radius * cosf(theta) * std + mean;
        d[j + 8] = radius * sinf(theta) * std + mean;
    }
}

/* aten's normal_fill_16_AVX2, one lane at a time: avx_mathfun's Cephes log and sincos with
 * the multiply-adds fused as the compiler fuses them, then an explicit fused std, mean */
static float bits_f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t f_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float vec_log(float x) { /* x in (0, 1] */
    if (x < FLT_MIN) x = FLT_MIN;
    uint32_t b = f_bits(x);
    float    e = (float)((int32_t)(b >> 23) - 0x7f) + 1.0f;
    x = bits_f((b & ~0x7f800000u) | 0x3f000000u); /* the mantissa, in [0.5, 1) */
    bool  below = x < (float)0.707106781186547524;
    float tmp = below ? x : 0.0f;
    x = x - 1.0f;
    e = e - (below ? 1.0f : 0.0f);
    x = x + tmp;
    float z = x * x, y = (float)7.0376836292E-2;
    y = fmaf(y, x, (float)-1.1514610310E-1);
    y = fmaf(y, x, (float)1.1676998740E-1);
    y = fmaf(y, x, (float)-1.2420140846E-1);
    y = fmaf(y, x, (float)1.4249322787E-1);
    y = fmaf(y, x, (float)-1.6668057665E-1);
    y = fmaf(y, x, (float)2.0000714765E-1);
    y = fmaf(y, x, (float)-2.4999993993E-1);
    y = fmaf(y, x, (float)3.3333331174E-1);
    y = y * x;
    y = fmaf(y, z, e * (float)-2.12194440e-4);
    y = fmaf(-z, 0.5f, y);
    return fmaf(e, 0.693359375f, x + y);
}

static void vec_sincos(float t, float *s, float *c) {
    uint32_t sign_sin = f_bits(t) & 0x80000000u;
    float    x = fabsf(t), y = x * (float)1.27323954473516; /* 4 / pi */
    int32_t  j = ((int32_t)y + 1) & ~1;
    y = (float)j;
    uint32_t sign_cos = (uint32_t)(~(j - 2) & 4) << 29;
    bool     poly = (j & 2) == 0;
    sign_sin ^= (uint32_t)(j & 4) << 29;
    x = fmaf(y, -0.78515625f, x); /* extended-precision reduction */
    x = fmaf(y, (float)-2.4187564849853515625e-4, x);
    x = fmaf(y, (float)-3.77489497744594108e-8, x);
    float z = x * x, yc = (float)2.443315711809948E-005, ys = (float)-1.9515295891E-4;
    yc = fmaf(yc, z, (float)-1.388731625493765E-003);
    yc = fmaf(yc, z, (float)4.166664568298827E-002);
    yc = fmaf(yc * z, z, -(z * 0.5f)) + 1.0f;
    ys = fmaf(ys, z, (float)8.3321608736E-3);
    ys = fmaf(ys, z, (float)-1.6666654611E-1);
    ys = fmaf(ys * z, x, x);
    float s2 = poly ? ys : 0.0f, s1 = poly ? 0.0f : yc; /* the lane selection, as written */
    float sv = s1 + s2, cv = (yc - s1) + (ys - s2);
    *s = bits_f(f_bits(sv) ^ sign_sin);
    *c = bits_f(f_bits(cv) ^ sign_cos);
}

static void fill16_vec(float *d, float mean, float std) {
    const float two_pi = (float)(2.0f * PI);
    float       u1[8], u2[8];
    for (int j = 0; j < 8; j++) u1[j] = 1.0f - d[j], u2[j] = d[j + 8];
    for (int j = 0; j < 8; j++) {
        float radius = sqrtf(-2.0f * vec_log(u1[j])), s, c;
        vec_sincos(two_pi * u2[j], &s, &c);
        d[j] = fmaf(radius * c, std, mean);
        d[j + 8] = fmaf(radius * s, std, mean);
    }
}

static void fill16_double(double *d, double mean, double std) {
    for (int j = 0; j < 8; j++) {
        const double u1 = 1 - d[j], u2 = d[j + 8];
        const double radius = sqrt(-2 * log(u1));
        const double theta = 2.0 * PI * u2;
        d[j] = madd(radius * cos(theta), std, mean);
        d[j + 8] = madd(radius * sin(theta), std, mean);
    }
}

/* aten's normal_fill over n >= 16 contiguous elements: every uniform first, Box-Muller per
 * block of 16, and a partial last block redrawn as the last 16 elements. The 16-bit floats are
 * worked in float and rounded at the end. */
static void normal_fill(sg_generator *g, sg_dtype t, void *data, int64_t n, double mean,
                        double std) {
    if (t == SG_FLOAT64) {
        double *d = data;
        for (int64_t i = 0; i < n; i++) d[i] = u_double(g);
        for (int64_t i = 0; i + 16 <= n; i += 16) fill16_double(d + i, mean, std);
        if (n % 16) {
            for (int64_t i = n - 16; i < n; i++) d[i] = u_double(g);
            fill16_double(d + n - 16, mean, std);
        }
        return;
    }
    float *d = t == SG_FLOAT32 ? data : malloc((size_t)n * sizeof *d);
    u_bits u = u_bits_of(t);
    if (!d) { /* no memory for the 16-bit staging: the scalar path (statistically the same) */
        for (int64_t i = 0; i < n; i++)
            sg_store_double(t, (char *)data + i * 2, normal_double(g, mean, std));
        return;
    }
    void (*fill16)(float *, float, float) =
        t == SG_FLOAT32 && vec_kernels ? fill16_vec : fill16_float;
    for (int64_t i = 0; i < n; i++) d[i] = u_draw(g, u);
    for (int64_t i = 0; i + 16 <= n; i += 16) fill16(d + i, (float)mean, (float)std);
    if (n % 16) {
        for (int64_t i = n - 16; i < n; i++) d[i] = u_draw(g, u);
        fill16(d + n - 16, (float)mean, (float)std);
    }
    if (t != SG_FLOAT32) {
        for (int64_t i = 0; i < n; i++) sg_store_double(t, (char *)data + i * 2, d[i]);
        free(d);
    }
}

/* normal_: the vector fill for 16 or more contiguous elements, else the scalar Box-Muller in
 * iteration order (aten's normal_kernel). */
static sg_status normal_run(sg_tensor *self, double mean, double std, sg_generator *gen) {
    sg_dtype  t = (sg_dtype)self->dtype;
    sg_status st = sg_factory_normal_check("normal_kernel_cpu", self, std);
    if (st) return st;
    if (self->device.type == SG_DEV_META || sg_tensor_numel(self) == 0) return SG_OK;
    if (self->device.type != SG_DEV_CPU)
        return sg_error(SG_EUNSUPPORTED, "normal_: random numbers are made on the CPU only");
    if (!sg_tensor_writable(self))
        return sg_error(SG_EREADONLY, "normal_: the tensor is read-only");
    sg_generator *g = gen_of(gen);
    int64_t       n = sg_tensor_numel(self);
    if (n >= 16 && sg_tensor_is_contiguous(self)) {
        pthread_mutex_lock(&g->lock);
        normal_fill(g, t, sg_tensor_data(self), n, mean, std);
        pthread_mutex_unlock(&g->lock);
        return SG_OK;
    }
    rng r = {g, t, mean, std, 0, 0, {0, 0}};
    return run_serial("normal_", self, NULL, g, normal_elem, &r);
}

static void bernoulli_elem(void *ctx, char *const *p) {
    rng *r = ctx;
    sg_store_double(r->t, p[0], u_double(r->g) < r->a);
}

/* p broadcast beside self: a float64 p compares 53-bit uniforms, other dtypes 24-bit ones */
static void bernoulli_tensor_double(void *ctx, char *const *p) {
    rng *r = ctx;
    sg_store_double(r->t, p[0], u_double(r->g) < *(const double *)p[1]);
}
static void bernoulli_tensor_float(void *ctx, char *const *p) {
    rng *r = ctx;
    sg_store_double(r->t, p[0], u_float(r->g) < *(const float *)p[1]);
}

static sg_status bernoulli_check_self(const char *op, const sg_tensor *self) {
    sg_dtype t = (sg_dtype)self->dtype;
    if (sg_dtype_is_complex(t)) return sg_not_implemented("bernoulli_scalar_cpu_", t);
    if (self->device.type != SG_DEV_CPU && self->device.type != SG_DEV_META)
        return sg_error(SG_EUNSUPPORTED, "%s: random numbers are made on the CPU only", op);
    return SG_OK;
}

static sg_status bernoulli_float_run(sg_tensor *self, double p, sg_generator *gen) {
    sg_status st = bernoulli_check_self("bernoulli_", self);
    if (st || (st = sg_factory_bernoulli_p_check(p))) return st;
    if (self->device.type == SG_DEV_META || sg_tensor_numel(self) == 0) return SG_OK;
    rng r = {gen_of(gen), (sg_dtype)self->dtype, p, 0, 0, 0, {0, 0}};
    return run_serial("bernoulli_", self, NULL, r.g, bernoulli_elem, &r);
}

static sg_status bernoulli_tensor_run(sg_tensor *self, sg_tensor *p, sg_generator *gen) {
    sg_status st = bernoulli_check_self("bernoulli_", self);
    if (st) return st;
    sg_dtype pt = (sg_dtype)p->dtype;
    if (!is_float_dtype(pt) && sg_tensor_numel(self) != 0) /* aten draws nothing first */
        return sg_not_implemented("bernoulli_tensor_cpu_p_", pt);
    if (self->device.type == SG_DEV_META || sg_tensor_numel(self) == 0) return SG_OK;
    /* p on the CPU in float64 or float32, every element checked before any is drawn */
    sg_tensor *host = NULL, *pc = NULL;
    if (!(st = sg_tensor_to(p, SG_CPU, &host)))
        st = sg_cast(host, pt == SG_FLOAT64 ? SG_FLOAT64 : SG_FLOAT32, &pc);
    sg_tensor_release(host);
    if (st) return st;
    int64_t n = sg_tensor_numel(pc);
    for (int64_t i = 0; i < n && !st; i++) {
        double v = pt == SG_FLOAT64 ? ((const double *)sg_tensor_data(pc))[i]
                                    : ((const float *)sg_tensor_data(pc))[i];
        if (!(v >= 0 && v <= 1))
            st = sg_error(SG_EINVAL, "bernoulli_: expected all elements of p to be in [0, 1], "
                                     "but found %g",
                          v);
    }
    rng r = {gen_of(gen), (sg_dtype)self->dtype, 0, 0, 0, 0, {0, 0}};
    if (!st)
        st = run_serial("bernoulli_", self, pc, r.g,
                        pt == SG_FLOAT64 ? bernoulli_tensor_double : bernoulli_tensor_float, &r);
    sg_tensor_release(pc);
    return st;
}

/* ---- random kernels as ops ---------------------------------------------------------------- */

static sg_status uniform__k(sg_keyset ks, sg_tensor *self, double from, double to,
                            sg_generator *gen, sg_tensor **ret) {
    (void)ks;
    sg_status st = uniform_run(self, from, to, gen);
    *ret = st ? NULL : sg_tensor_retain(self);
    return st;
}

static sg_status normal__k(sg_keyset ks, sg_tensor *self, double mean, double std,
                           sg_generator *gen, sg_tensor **ret) {
    (void)ks;
    sg_status st = normal_run(self, mean, std, gen);
    *ret = st ? NULL : sg_tensor_retain(self);
    return st;
}

static sg_status bernoulli__float_k(sg_keyset ks, sg_tensor *self, double p, sg_generator *gen,
                                    sg_tensor **ret) {
    (void)ks;
    sg_status st = bernoulli_float_run(self, p, gen);
    *ret = st ? NULL : sg_tensor_retain(self);
    return st;
}

static sg_status bernoulli__tensor_k(sg_keyset ks, sg_tensor *self, sg_tensor *p,
                                     sg_generator *gen, sg_tensor **ret) {
    (void)ks;
    sg_status st = bernoulli_tensor_run(self, p, gen);
    *ret = st ? NULL : sg_tensor_retain(self);
    return st;
}

/* Hands over a new tensor made by a factory once kernel k succeeded on it. */
static sg_status keep_if(sg_status st, sg_tensor **t) {
    if (st) {
        sg_tensor_release(*t);
        *t = NULL;
    }
    return st;
}

/* bernoulli(self): self holds the probabilities of a new contiguous tensor like it */
static sg_status bernoulli_k(sg_keyset ks, sg_tensor *self, sg_generator *gen, sg_tensor **ret) {
    (void)ks;
    sg_memory_format mf = SG_CONTIGUOUS_FORMAT;
    sg_status st = empty_like_fmt("bernoulli", self, &mf, (sg_dtype)self->dtype, self->device, ret);
    return st ? st : keep_if(bernoulli_tensor_run(*ret, self, gen), ret);
}

static sg_status bernoulli_out_k(sg_keyset ks, sg_tensor *self, sg_generator *gen,
                                 sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_status st = sg_tensor_resize_out_(out, self->sizes, self->ndim);
    if (!st) st = bernoulli_tensor_run(out, self, gen);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

static sg_status bernoulli_p_k(sg_keyset ks, sg_tensor *self, double p, sg_generator *gen,
                               sg_tensor **ret) {
    (void)ks;
    sg_memory_format mf = SG_CONTIGUOUS_FORMAT;
    sg_status st = empty_like_fmt("bernoulli", self, &mf, (sg_dtype)self->dtype, self->device, ret);
    return st ? st : keep_if(bernoulli_float_run(*ret, p, gen), ret);
}

/* rand and randn: a new tensor, then uniform_(0, 1) or normal_(0, 1) */
static sg_status rand_make(const char *op, bool normal, sg_int_list size, sg_generator *gen,
                           const sg_dtype *dtype, const sg_layout *layout,
                           const sg_device *device, sg_tensor **ret) {
    sg_factory_opts o;
    sg_status       st = sg_factory_options(op, dtype, SG_FLOAT32, layout, device, SG_CPU, &o);
    *ret = NULL;
    if (st || (st = make(op, size, o, NULL, NULL, ret))) return st;
    return keep_if(normal ? normal_run(*ret, 0, 1, gen) : uniform_run(*ret, 0, 1, gen), ret);
}

static sg_status rand_k(sg_keyset ks, sg_int_list size, const sg_dtype *dtype,
                        const sg_layout *layout, const sg_device *device, const bool *pin,
                        sg_tensor **ret) {
    (void)ks, (void)pin;
    return rand_make("rand", false, size, NULL, dtype, layout, device, ret);
}
static sg_status rand_gen_k(sg_keyset ks, sg_int_list size, sg_generator *gen,
                            const sg_dtype *dtype, const sg_layout *layout,
                            const sg_device *device, const bool *pin, sg_tensor **ret) {
    (void)ks, (void)pin;
    return rand_make("rand", false, size, gen, dtype, layout, device, ret);
}
static sg_status rand_names_k(sg_keyset ks, sg_int_list size, const sg_str_list *names,
                              const sg_dtype *dtype, const sg_layout *layout,
                              const sg_device *device, const bool *pin, sg_tensor **ret) {
    sg_status st = sg_factory_no_names("rand", names);
    *ret = NULL;
    return st ? st : rand_k(ks, size, dtype, layout, device, pin, ret);
}
static sg_status rand_gen_names_k(sg_keyset ks, sg_int_list size, sg_generator *gen,
                                  const sg_str_list *names, const sg_dtype *dtype,
                                  const sg_layout *layout, const sg_device *device,
                                  const bool *pin, sg_tensor **ret) {
    sg_status st = sg_factory_no_names("rand", names);
    *ret = NULL;
    return st ? st : rand_gen_k(ks, size, gen, dtype, layout, device, pin, ret);
}
static sg_status randn_k(sg_keyset ks, sg_int_list size, const sg_dtype *dtype,
                         const sg_layout *layout, const sg_device *device, const bool *pin,
                         sg_tensor **ret) {
    (void)ks, (void)pin;
    return rand_make("randn", true, size, NULL, dtype, layout, device, ret);
}
static sg_status randn_gen_k(sg_keyset ks, sg_int_list size, sg_generator *gen,
                             const sg_dtype *dtype, const sg_layout *layout,
                             const sg_device *device, const bool *pin, sg_tensor **ret) {
    (void)ks, (void)pin;
    return rand_make("randn", true, size, gen, dtype, layout, device, ret);
}
static sg_status randn_names_k(sg_keyset ks, sg_int_list size, const sg_str_list *names,
                               const sg_dtype *dtype, const sg_layout *layout,
                               const sg_device *device, const bool *pin, sg_tensor **ret) {
    sg_status st = sg_factory_no_names("randn", names);
    *ret = NULL;
    return st ? st : randn_k(ks, size, dtype, layout, device, pin, ret);
}
static sg_status randn_gen_names_k(sg_keyset ks, sg_int_list size, sg_generator *gen,
                                   const sg_str_list *names, const sg_dtype *dtype,
                                   const sg_layout *layout, const sg_device *device,
                                   const bool *pin, sg_tensor **ret) {
    sg_status st = sg_factory_no_names("randn", names);
    *ret = NULL;
    return st ? st : randn_gen_k(ks, size, gen, dtype, layout, device, pin, ret);
}

/* the out= forms: out takes the size, then is drawn */
static sg_status rand_out_run(const char *op, bool normal, sg_int_list size, sg_generator *gen,
                              sg_tensor *out, sg_tensor **ret) {
    sg_status st = sg_factory_check_sizes(op, size);
    if (!st) st = sg_tensor_resize_out_(out, size.items, size.len);
    if (!st) st = normal ? normal_run(out, 0, 1, gen) : uniform_run(out, 0, 1, gen);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}
static sg_status rand_out_k(sg_keyset ks, sg_int_list size, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return rand_out_run("rand", false, size, NULL, out, ret);
}
static sg_status rand_gen_out_k(sg_keyset ks, sg_int_list size, sg_generator *gen,
                                sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return rand_out_run("rand", false, size, gen, out, ret);
}
static sg_status randn_out_k(sg_keyset ks, sg_int_list size, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return rand_out_run("randn", true, size, NULL, out, ret);
}
static sg_status randn_gen_out_k(sg_keyset ks, sg_int_list size, sg_generator *gen,
                                 sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return rand_out_run("randn", true, size, gen, out, ret);
}

/* rand_like and randn_like: empty_like, then the draw */
static sg_status rand_like_run(const char *op, bool normal, sg_tensor *self, sg_generator *gen,
                               const sg_dtype *dtype, const sg_layout *layout,
                               const sg_device *device, const sg_memory_format *mf,
                               sg_tensor **ret) {
    sg_status st = like(op, self, dtype, layout, device, mf, NULL, ret);
    if (st) return st;
    return keep_if(normal ? normal_run(*ret, 0, 1, gen) : uniform_run(*ret, 0, 1, gen), ret);
}
static sg_status rand_like_k(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype,
                             const sg_layout *layout, const sg_device *device, const bool *pin,
                             const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)pin;
    return rand_like_run("rand_like", false, self, NULL, dtype, layout, device, mf, ret);
}
static sg_status rand_like_gen_k(sg_keyset ks, sg_tensor *self, sg_generator *gen,
                                 const sg_dtype *dtype, const sg_layout *layout,
                                 const sg_device *device, const bool *pin,
                                 const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)pin;
    return rand_like_run("rand_like", false, self, gen, dtype, layout, device, mf, ret);
}
static sg_status randn_like_k(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype,
                              const sg_layout *layout, const sg_device *device, const bool *pin,
                              const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)pin;
    return rand_like_run("randn_like", true, self, NULL, dtype, layout, device, mf, ret);
}
static sg_status randn_like_gen_k(sg_keyset ks, sg_tensor *self, sg_generator *gen,
                                  const sg_dtype *dtype, const sg_layout *layout,
                                  const sg_device *device, const bool *pin,
                                  const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)pin;
    return rand_like_run("randn_like", true, self, gen, dtype, layout, device, mf, ret);
}

/* normal_functional: a clone, drawn */
static sg_status normal_functional_k(sg_keyset ks, sg_tensor *self, double mean, double std,
                                     sg_generator *gen, sg_tensor **ret) {
    (void)ks;
    sg_status st = like("normal", self, NULL, NULL, NULL, NULL, NULL, ret);
    return st ? st : keep_if(normal_run(*ret, mean, std, gen), ret);
}

/* Whether every element of std (any device) is >= 0, by the dispatched ops. */
static sg_status std_ok(sg_tensor *std, bool *ok) {
    sg_tensor *zero = NULL, *ge = NULL, *all = NULL, *host = NULL;
    sg_status  st = SG_OK;
    *ok = true;
    if (sg_tensor_numel(std) == 0 || std->device.type == SG_DEV_META) return SG_OK;
    if ((st = sg_scalar_tensor(sg_scalar_int(0), &zero))) return st;
    st = aten_ge_Tensor(std, zero, &ge);
    if (!st) st = sg_cast(ge, SG_BOOL, &all);
    if (!st) st = sg_tensor_to(all, SG_CPU, &host);
    if (!st) {
        const bool *v = sg_tensor_data(host);
        for (int64_t i = 0, k = sg_tensor_numel(host); i < k; i++) *ok = *ok && v[i];
    }
    sg_tensor_release(host);
    sg_tensor_release(all);
    sg_tensor_release(ge);
    sg_tensor_release(zero);
    return st;
}

static sg_status normal_tensors(sg_tensor *mean_t, double mean, sg_tensor *std_t, double std,
                                sg_generator *gen, sg_tensor *out, sg_tensor **ret) {
    return sg_factory_normal_tensors(mean_t, mean, std_t, std, gen, out, std_ok, normal_run, ret);
}

static sg_status normal_tf_k(sg_keyset ks, sg_tensor *mean, double std, sg_generator *gen,
                             sg_tensor **ret) {
    (void)ks;
    return normal_tensors(mean, 0, NULL, std, gen, NULL, ret);
}
static sg_status normal_tf_out_k(sg_keyset ks, sg_tensor *mean, double std, sg_generator *gen,
                                 sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return normal_tensors(mean, 0, NULL, std, gen, out, ret);
}
static sg_status normal_ft_k(sg_keyset ks, double mean, sg_tensor *std, sg_generator *gen,
                             sg_tensor **ret) {
    (void)ks;
    return normal_tensors(NULL, mean, std, 1, gen, NULL, ret);
}
static sg_status normal_ft_out_k(sg_keyset ks, double mean, sg_tensor *std, sg_generator *gen,
                                 sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return normal_tensors(NULL, mean, std, 1, gen, out, ret);
}
static sg_status normal_tt_k(sg_keyset ks, sg_tensor *mean, sg_tensor *std, sg_generator *gen,
                             sg_tensor **ret) {
    (void)ks;
    return normal_tensors(mean, 0, std, 1, gen, NULL, ret);
}
static sg_status normal_tt_out_k(sg_keyset ks, sg_tensor *mean, sg_tensor *std,
                                 sg_generator *gen, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    return normal_tensors(mean, 0, std, 1, gen, out, ret);
}

static sg_status normal_ff_k(sg_keyset ks, double mean, double std, sg_int_list size,
                             sg_generator *gen, const sg_dtype *dtype, const sg_layout *layout,
                             const sg_device *device, const bool *pin, sg_tensor **ret) {
    (void)ks, (void)pin;
    sg_factory_opts o;
    sg_status       st = sg_factory_options("normal", dtype, SG_FLOAT32, layout, device, SG_CPU,
                                            &o);
    *ret = NULL;
    if (st || (st = make("normal", size, o, NULL, NULL, ret))) return st;
    return keep_if(normal_run(*ret, mean, std, gen), ret);
}

static sg_status normal_ff_out_k(sg_keyset ks, double mean, double std, sg_int_list size,
                                 sg_generator *gen, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_status st = sg_factory_check_sizes("normal", size);
    if (!st) st = sg_tensor_resize_out_(out, size.items, size.len);
    if (!st) st = normal_run(out, mean, std, gen);
    *ret = st ? NULL : sg_tensor_retain(out);
    return st;
}

/* ---- copies ------------------------------------------------------------------------------- */

/* self = src: broadcast and converted, between any devices (conversions on the CPU). */
static sg_status copy_run(sg_tensor *self, sg_tensor *src) {
    char    a[160], b[160];
    int64_t shape[SG_MAX_DIMS];
    int32_t n;
    if (!sg_broadcast_shape(self->sizes, self->ndim, src->sizes, src->ndim, shape, &n) ||
        !same_shape(self, shape, n))
        return sg_error(SG_EINVAL, "copy_: the size of src %s cannot be broadcast to the size of "
                                   "self %s",
                        sg_shape_str(src->sizes, src->ndim, a, sizeof a),
                        sg_shape_str(self->sizes, self->ndim, b, sizeof b));
    if (!sg_tensor_writable(self))
        return sg_error(SG_EREADONLY, "copy_: the tensor written is read-only");
    if (self == src) return SG_OK; /* aten: self.is_same(src) */
    bool same = self->dtype == src->dtype && same_shape(src, self->sizes, self->ndim);
    if (self->device.type == SG_DEV_META) return SG_OK;
    if (src->device.type == SG_DEV_META)
        return sg_error(SG_EINVAL, "copy_: Cannot copy out of meta tensor; no data!");
    if (sg_tensor_numel(self) == 0) return SG_OK;
    /* on one device with a conversion kernel (the CPU's, CUDA's): overlapping views are staged */
    if (sg_device_eq(self->device, src->device) && sg_has_cast_copy(self->device.type))
        return sg_cast_copy_(self, src);
    if (same) return sg_tensor_copy_(self, src); /* any devices, no conversion */
    sg_tensor *host = NULL, *tmp = NULL;
    sg_status  st;
    if (self->device.type != SG_DEV_CPU && sg_has_cast_copy(self->device.type)) {
        /* the bytes move as they are; the destination's device converts them */
        if (!(st = sg_tensor_to(src, self->device, &tmp))) st = sg_cast_copy_(self, tmp);
        sg_tensor_release(tmp);
        return st;
    }
    st = sg_tensor_to(src, SG_CPU, &host);
    if (!st && self->device.type == SG_DEV_CPU) {
        st = sg_cast_copy_(self, host);
    } else if (!st) {
        st = sg_tensor_empty(self->sizes, self->ndim, (sg_dtype)self->dtype, SG_CPU, &tmp);
        if (!st) st = sg_cast_copy_(tmp, host);
        if (!st) st = sg_tensor_copy_(self, tmp);
    }
    sg_tensor_release(tmp);
    sg_tensor_release(host);
    return st;
}

static sg_status copy__k(sg_keyset ks, sg_tensor *self, sg_tensor *src, bool non_blocking,
                         sg_tensor **ret) {
    (void)ks, (void)non_blocking;
    sg_status st = copy_run(self, src);
    *ret = st ? NULL : sg_tensor_retain(self);
    return st;
}

/* copy(self, src): src in a new tensor of self's geometry, its storage offset included
 * (aten's clone_preserve_strides; one whose elements overlap is cloned as empty_like does) */
static sg_status copy_k(sg_keyset ks, sg_tensor *self, sg_tensor *src, bool non_blocking,
                        sg_tensor **ret) {
    (void)ks, (void)non_blocking;
    sg_status st;
    *ret = NULL;
    if (sg_tensor_overlaps(self)) {
        st = like("copy", self, NULL, NULL, NULL, NULL, NULL, ret);
    } else {
        /* storage for the view's elements only: the ones around it are never read */
        int64_t    n = self->offset + sg_tensor_span(self);
        sg_tensor *base = NULL;
        st = sg_tensor_empty(&n, 1, (sg_dtype)self->dtype, self->device, &base);
        if (!st)
            st = sg_tensor_as_strided(base, self->sizes, self->strides, self->ndim, self->offset,
                                      ret);
        sg_tensor_release(base);
    }
    return st ? st : keep_if(copy_run(*ret, src), ret);
}

/* _to_copy: a new tensor of the dtype, device and format asked for (default: self's), then
 * copy_ */
static sg_status to_copy_run(sg_tensor *self, const sg_dtype *dtype, const sg_layout *layout,
                             const sg_device *device, const sg_memory_format *mf,
                             sg_tensor **ret) {
    sg_status st = like("_to_copy", self, dtype, layout, device, mf, NULL, ret);
    return st ? st : keep_if(copy_run(*ret, self), ret);
}

static sg_status to_copy_k(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype,
                           const sg_layout *layout, const sg_device *device, const bool *pin,
                           bool non_blocking, const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)pin, (void)non_blocking;
    return to_copy_run(self, dtype, layout, device, mf, ret);
}

/* to: self itself where nothing changes (aten's to_will_alias), else _to_copy */
static sg_status to_run(sg_tensor *self, const sg_dtype *dtype, const sg_layout *layout,
                        const sg_device *device, bool copy, const sg_memory_format *mf,
                        sg_tensor **ret) {
    bool alias = (!dtype || *dtype == (sg_dtype)self->dtype) &&
                 (!layout || *layout == SG_STRIDED) &&
                 (!device || sg_device_eq(*device, self->device)) && !copy &&
                 (!mf || *mf == SG_PRESERVE_FORMAT || suggest_format(self) == *mf);
    if (alias) {
        *ret = sg_tensor_retain(self);
        return SG_OK;
    }
    /* through the dispatcher, so that autograd records the copy (_to_copy has a formula) */
    return aten__to_copy(self, dtype, layout, device, NULL, false, mf, ret);
}

static sg_status to_dtype_layout_k(sg_keyset ks, sg_tensor *self, const sg_dtype *dtype,
                                   const sg_layout *layout, const sg_device *device,
                                   const bool *pin, bool non_blocking, bool copy,
                                   const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)pin, (void)non_blocking;
    return to_run(self, dtype, layout, device, copy, mf, ret);
}

static sg_status to_device_k(sg_keyset ks, sg_tensor *self, sg_device device, sg_dtype dtype,
                             bool non_blocking, bool copy, const sg_memory_format *mf,
                             sg_tensor **ret) {
    (void)ks, (void)non_blocking;
    return to_run(self, &dtype, NULL, &device, copy, mf, ret);
}

static sg_status to_dtype_k(sg_keyset ks, sg_tensor *self, sg_dtype dtype, bool non_blocking,
                            bool copy, const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)non_blocking;
    return to_run(self, &dtype, NULL, NULL, copy, mf, ret);
}

static sg_status to_other_k(sg_keyset ks, sg_tensor *self, sg_tensor *other, bool non_blocking,
                            bool copy, const sg_memory_format *mf, sg_tensor **ret) {
    (void)ks, (void)non_blocking;
    sg_dtype dtype = (sg_dtype)other->dtype;
    return to_run(self, &dtype, NULL, &other->device, copy, mf, ret);
}

/* clone: a copy with self's strides where they are dense (preserve), or the format asked for */
static sg_status clone_k(sg_keyset ks, sg_tensor *self, const sg_memory_format *mf,
                         sg_tensor **ret) {
    (void)ks;
    sg_status st = like("clone", self, NULL, NULL, NULL, mf, NULL, ret);
    return st ? st : keep_if(copy_run(*ret, self), ret);
}

/* contiguous: self where it is in the format already, else a clone in it */
static sg_status contiguous_k(sg_keyset ks, sg_tensor *self, sg_memory_format mf,
                              sg_tensor **ret) {
    *ret = NULL;
    if (mf == SG_PRESERVE_FORMAT)
        return sg_error(SG_EINVAL, "contiguous: preserve memory format is unsupported by the "
                                   "contiguous operator");
    if (is_format(self, mf)) {
        *ret = sg_tensor_retain(self);
        return SG_OK;
    }
    (void)ks;
    return aten_clone(self, &mf, ret); /* dispatched: autograd records it */
}

/* ---- registration ------------------------------------------------------------------------- */

sg_status sg_cpu_register_factory(void) {
    sg_generator_default();
    pick_kernels();
    SG_REG_EXPLICIT(aten_empty_memory_format, empty_k);
    SG_REG_EXPLICIT(aten_empty_names, empty_names_k);
    SG_REG_EXPLICIT(aten_empty_out, empty_out_k);
    SG_REG_EXPLICIT(aten_empty_strided, empty_strided_k);
    SG_REG_EXPLICIT(aten_empty_like, empty_like_k);
    SG_REG_EXPLICIT(aten_zeros, zeros_k);
    SG_REG_EXPLICIT(aten_zeros_names, zeros_names_k);
    SG_REG_EXPLICIT(aten_zeros_out, zeros_out_k);
    SG_REG_EXPLICIT(aten_zeros_like, zeros_like_k);
    SG_REG_EXPLICIT(aten_ones, ones_k);
    SG_REG_EXPLICIT(aten_ones_names, ones_names_k);
    SG_REG_EXPLICIT(aten_ones_out, ones_out_k);
    SG_REG_EXPLICIT(aten_ones_like, ones_like_k);
    SG_REG_EXPLICIT(aten_full, full_k);
    SG_REG_EXPLICIT(aten_full_names, full_names_k);
    SG_REG_EXPLICIT(aten_full_out, full_out_k);
    SG_REG_EXPLICIT(aten_full_like, full_like_k);
    SG_REG_EXPLICIT(aten_arange, arange_k);
    SG_REG_EXPLICIT(aten_arange_start, arange_start_k);
    SG_REG_EXPLICIT(aten_arange_start_step, arange_start_step_k);
    SG_REG_EXPLICIT(aten_arange_out, arange_out_k);
    SG_REG_EXPLICIT(aten_arange_start_out, arange_start_out_k);
    SG_REG_CPU_META(aten_rand, rand_k);
    SG_REG_CPU_META(aten_rand_generator, rand_gen_k);
    SG_REG_CPU_META(aten_rand_names, rand_names_k);
    SG_REG_CPU_META(aten_rand_generator_with_names, rand_gen_names_k);
    SG_REG_CPU_META(aten_rand_out, rand_out_k);
    SG_REG_CPU_META(aten_rand_generator_out, rand_gen_out_k);
    SG_REG_CPU_META(aten_rand_like, rand_like_k);
    SG_REG_CPU_META(aten_rand_like_generator, rand_like_gen_k);
    SG_REG_CPU_META(aten_randn, randn_k);
    SG_REG_CPU_META(aten_randn_generator, randn_gen_k);
    SG_REG_CPU_META(aten_randn_names, randn_names_k);
    SG_REG_CPU_META(aten_randn_generator_with_names, randn_gen_names_k);
    SG_REG_CPU_META(aten_randn_out, randn_out_k);
    SG_REG_CPU_META(aten_randn_generator_out, randn_gen_out_k);
    SG_REG_CPU_META(aten_randn_like, randn_like_k);
    SG_REG_CPU_META(aten_randn_like_generator, randn_like_gen_k);
    SG_REG_CPU_META(aten_uniform_, uniform__k);
    SG_REG_CPU_META(aten_normal_, normal__k);
    SG_REG_CPU_META(aten_normal_functional, normal_functional_k);
    SG_REG_CPU_META(aten_normal_Tensor_float, normal_tf_k);
    SG_REG_CPU_META(aten_normal_Tensor_float_out, normal_tf_out_k);
    SG_REG_CPU_META(aten_normal_float_Tensor, normal_ft_k);
    SG_REG_CPU_META(aten_normal_float_Tensor_out, normal_ft_out_k);
    SG_REG_CPU_META(aten_normal_Tensor_Tensor, normal_tt_k);
    SG_REG_CPU_META(aten_normal_Tensor_Tensor_out, normal_tt_out_k);
    SG_REG_CPU_META(aten_normal_float_float, normal_ff_k);
    SG_REG_CPU_META(aten_normal_float_float_out, normal_ff_out_k);
    SG_REG_CPU_META(aten_bernoulli, bernoulli_k);
    SG_REG_CPU_META(aten_bernoulli_out, bernoulli_out_k);
    SG_REG_CPU_META(aten_bernoulli_p, bernoulli_p_k);
    SG_REG_CPU_META(aten_bernoulli__float, bernoulli__float_k);
    SG_REG_CPU_META(aten_bernoulli__Tensor, bernoulli__tensor_k);
    SG_REG_EXPLICIT(aten_copy_, copy__k);
    SG_REG_EXPLICIT(aten_copy, copy_k);
    SG_REG_EXPLICIT(aten__to_copy, to_copy_k);
    SG_REG_EXPLICIT(aten_to_dtype_layout, to_dtype_layout_k);
    SG_REG_EXPLICIT(aten_to_device, to_device_k);
    SG_REG_EXPLICIT(aten_to_dtype, to_dtype_k);
    SG_REG_EXPLICIT(aten_to_other, to_other_k);
    SG_REG_EXPLICIT(aten_clone, clone_k);
    SG_REG_EXPLICIT(aten_contiguous, contiguous_k);
    /* aten's CompositeImplicitAutograd ops among them: their kernels above are made of aten
     * calls, so they are their differentiable decompositions too (docs/autograd.md) */
    SG_REG_DECOMP(aten_to_dtype_layout, to_dtype_layout_k);
    SG_REG_DECOMP(aten_to_device, to_device_k);
    SG_REG_DECOMP(aten_to_dtype, to_dtype_k);
    SG_REG_DECOMP(aten_to_other, to_other_k);
    SG_REG_DECOMP(aten_contiguous, contiguous_k);
    return SG_OK;
}
