/* test_rt_dlpack.c: DLPack export and import: layouts, round trips for every dtype, zero copy,
 * strides, byte_offset, ownership (deleters run once, after the last view), read-only, and every
 * rejection with its message. */
#include "check.h"
#include "rt_internal.h" /* sg__tensor_new: a second view over a storage, with an offset */
#include "sg_dlpack.h"

#include <stddef.h>

/* ---- helpers ----------------------------------------------------------------------------- */

/* A producer of managed tensors over memory the test owns; its deleters count their calls. */
typedef struct producer {
    sg_dl_managed_tensor_versioned v;
    sg_dl_managed_tensor           l;
    int64_t                        shape[4], strides[4];
    int                            deleted;
} producer;

static void prod_delete_v(sg_dl_managed_tensor_versioned *self) {
    ((producer *)self->manager_ctx)->deleted++;
}
static void prod_delete_l(sg_dl_managed_tensor *self) {
    ((producer *)self->manager_ctx)->deleted++;
}

/* shape (ndim entries); strides NULL for compact row-major. */
static void prod_init(producer *p, void *data, sg_dl_data_type dt, int32_t ndim,
                      const int64_t *shape, const int64_t *strides) {
    memset(p, 0, sizeof *p);
    for (int32_t i = 0; i < ndim; i++) {
        p->shape[i] = shape[i];
        if (strides) p->strides[i] = strides[i];
    }
    sg_dl_tensor dl = {data, {SG_DL_CPU, 0}, ndim, dt, p->shape, strides ? p->strides : NULL, 0};
    p->v = (sg_dl_managed_tensor_versioned){{1, 0}, p, prod_delete_v, 0, dl};
    p->l = (sg_dl_managed_tensor){dl, p, prod_delete_l};
}

static int blob_released;
static void blob_release(sg_storage *s) {
    (void)s;
    blob_released++;
}

static bool same_dims(const sg_tensor *t, const int64_t *sizes, const int64_t *strides,
                      int32_t ndim) {
    if (t->ndim != ndim) return false;
    for (int32_t i = 0; i < ndim; i++)
        if (t->sizes[i] != sizes[i] || t->strides[i] != strides[i]) return false;
    return true;
}

#define DL_TYPE(c, b) ((sg_dl_data_type){(c), (b), 1})
static const sg_dl_data_type f32 = {SG_DL_FLOAT, 32, 1};
static const sg_dl_data_type i32 = {SG_DL_INT, 32, 1};

/* ---- layouts ----------------------------------------------------------------------------- */

static void test_layout(void) {
    /* The header asserts these at compile time; here they are read once more at run time. */
    CHECK(sizeof(sg_dl_tensor) == 48);
    CHECK(sizeof(sg_dl_managed_tensor) == 64);
    CHECK(sizeof(sg_dl_managed_tensor_versioned) == 80);
    CHECK(offsetof(sg_dl_managed_tensor_versioned, flags) == 24);
    CHECK(offsetof(sg_dl_tensor, byte_offset) == 40);
    CHECK(SG_DLPACK_FLAG_READ_ONLY == 1 && SG_DLPACK_FLAG_IS_COPIED == 2 &&
          SG_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED == 4);
    CHECK(SG_DL_CPU == 1 && SG_DL_CUDA == 2 && SG_DL_CUDA_HOST == 3 && SG_DL_EXT_DEV == 12);
    CHECK(SG_DL_INT == 0 && SG_DL_BFLOAT == 4 && SG_DL_COMPLEX == 5 && SG_DL_BOOL == 6);
}

/* ---- round trips ------------------------------------------------------------------------- */

/* What every sg_dtype exports as, written out independently of dlpack.c's table. */
static const struct {
    sg_dtype dtype;
    uint8_t  code, bits;
} expected_types[] = {
    {SG_UINT8, SG_DL_UINT, 8},        {SG_INT8, SG_DL_INT, 8},
    {SG_INT16, SG_DL_INT, 16},        {SG_INT32, SG_DL_INT, 32},
    {SG_INT64, SG_DL_INT, 64},        {SG_FLOAT16, SG_DL_FLOAT, 16},
    {SG_FLOAT32, SG_DL_FLOAT, 32},    {SG_FLOAT64, SG_DL_FLOAT, 64},
    {SG_COMPLEX64, SG_DL_COMPLEX, 64}, {SG_COMPLEX128, SG_DL_COMPLEX, 128},
    {SG_BOOL, SG_DL_BOOL, 8},         {SG_BFLOAT16, SG_DL_BFLOAT, 16},
};
enum { N_TYPES = sizeof expected_types / sizeof *expected_types };

static void check_exported(const sg_dl_tensor *dl, const sg_tensor *t, uint8_t code,
                           uint8_t bits) {
    CHECK(dl->data == sg_tensor_data(t));
    CHECK(dl->byte_offset == 0);
    CHECK(dl->device.device_type == SG_DL_CPU && dl->device.device_id == 0);
    CHECK(dl->ndim == t->ndim);
    CHECK(dl->dtype.code == code && dl->dtype.bits == bits && dl->dtype.lanes == 1);
    CHECK(dl->shape && dl->strides);
    /* The managed tensor owns its own copy of the dims. */
    CHECK(dl->shape != t->sizes && dl->strides != t->strides);
    for (int32_t i = 0; i < t->ndim; i++)
        CHECK(dl->shape[i] == t->sizes[i] && dl->strides[i] == t->strides[i]);
}

static void test_roundtrip_every_dtype(void) {
    int64_t sizes[] = {2, 3}, strides[] = {3, 1};
    int     valid = 0;
    for (int d = 0; d < SG_DTYPE__END; d++) valid += sg_dtype_valid(d);
    CHECK(valid == N_TYPES); /* a new dtype needs a row above */

    for (int k = 0; k < N_TYPES; k++) {
        sg_dtype   dt = expected_types[k].dtype;
        sg_tensor *t, *back;
        CHECK(sg_tensor_empty(sizes, 2, dt, SG_CPU, &t) == SG_OK);

        /* versioned */
        sg_dl_managed_tensor_versioned *mv = NULL;
        CHECK(sg_tensor_to_dlpack_versioned(t, &mv) == SG_OK && mv);
        CHECK(mv->version.major == SG_DLPACK_MAJOR && mv->version.minor == SG_DLPACK_MINOR);
        CHECK(mv->flags == 0);
        CHECK(mv->deleter != NULL);
        check_exported(&mv->dl_tensor, t, expected_types[k].code, expected_types[k].bits);
        CHECK(sg_tensor_from_dlpack_versioned(mv, &back) == SG_OK && back);
        CHECK(sg_tensor_data(back) == sg_tensor_data(t)); /* zero copy */
        CHECK(back->dtype == dt && sg_device_eq(back->device, SG_CPU));
        CHECK(same_dims(back, sizes, strides, 2));
        CHECK(sg_tensor_writable(back));
        /* Released in the order that leaves the export's reference as the last of t. */
        sg_tensor_release(t);
        sg_tensor_release(back);

        /* legacy */
        sg_dl_managed_tensor *ml = NULL;
        CHECK(sg_tensor_empty(sizes, 2, dt, SG_CPU, &t) == SG_OK);
        CHECK(sg_tensor_to_dlpack(t, &ml) == SG_OK && ml);
        check_exported(&ml->dl_tensor, t, expected_types[k].code, expected_types[k].bits);
        CHECK(sg_tensor_from_dlpack(ml, &back) == SG_OK && back);
        CHECK(sg_tensor_data(back) == sg_tensor_data(t));
        CHECK(back->dtype == dt && same_dims(back, sizes, strides, 2));
        sg_tensor_release(back);
        sg_tensor_release(t);
    }
}

static void test_export_deleter_alone(void) {
    /* A consumer that only calls the deleter: the export's reference keeps t's memory alive
     * after the caller's reference has gone, and the deleter frees it all. */
    int64_t    sizes[] = {4};
    sg_tensor *t;
    CHECK(sg_tensor_zeros(sizes, 1, SG_FLOAT64, SG_CPU, &t) == SG_OK);
    sg_dl_managed_tensor_versioned *mv;
    sg_dl_managed_tensor           *ml;
    CHECK(sg_tensor_to_dlpack_versioned(t, &mv) == SG_OK);
    CHECK(sg_tensor_to_dlpack(t, &ml) == SG_OK);
    CHECK(__atomic_load_n(&t->refs, __ATOMIC_RELAXED) == 3);
    sg_tensor_release(t);
    ((double *)mv->dl_tensor.data)[3] = 1.5; /* still valid memory (ASan would say) */
    CHECK(((double *)ml->dl_tensor.data)[3] == 1.5);
    mv->deleter(mv);
    ml->deleter(ml);
}

static void test_scalar_and_empty(void) {
    /* ndim 0 */
    sg_tensor *t, *back;
    CHECK(sg_tensor_empty(NULL, 0, SG_INT64, SG_CPU, &t) == SG_OK);
    *(int64_t *)sg_tensor_data(t) = 42;
    sg_dl_managed_tensor_versioned *mv;
    CHECK(sg_tensor_to_dlpack_versioned(t, &mv) == SG_OK);
    CHECK(mv->dl_tensor.ndim == 0);
    CHECK(sg_tensor_from_dlpack_versioned(mv, &back) == SG_OK);
    CHECK(back->ndim == 0 && *(int64_t *)sg_tensor_data(back) == 42);
    sg_tensor_release(back);
    sg_tensor_release(t);

    /* A size-0 import may have NULL data (PyTorch exports empty tensors so). */
    producer p;
    int64_t  shape[] = {0, 5};
    prod_init(&p, NULL, f32, 2, shape, NULL);
    CHECK(sg_tensor_from_dlpack_versioned(&p.v, &back) == SG_OK);
    CHECK(back && back->sizes[0] == 0 && back->sizes[1] == 5 && back->strides[0] == 5);
    CHECK(sg_tensor_numel(back) == 0);
    sg_tensor_release(back);
    CHECK(p.deleted == 1);
}

/* ---- strides and offsets ----------------------------------------------------------------- */

static void test_noncontiguous(void) {
    /* The transpose of a row-major 2x3 buffer: sizes {3, 2}, strides {1, 3}. */
    float      buf[6] = {0, 1, 2, 3, 4, 5};
    int64_t    sizes[] = {3, 2}, strides[] = {1, 3};
    sg_tensor *t, *back;
    blob_released = 0;
    CHECK(sg_tensor_from_blob(buf, sizes, strides, 2, SG_FLOAT32, SG_CPU, 0, blob_release, NULL,
                              &t) == SG_OK);
    CHECK(!sg_tensor_is_contiguous(t));

    sg_dl_managed_tensor_versioned *mv;
    CHECK(sg_tensor_to_dlpack_versioned(t, &mv) == SG_OK);
    CHECK(mv->dl_tensor.data == buf);
    CHECK(mv->dl_tensor.strides[0] == 1 && mv->dl_tensor.strides[1] == 3);
    CHECK(mv->dl_tensor.shape[0] == 3 && mv->dl_tensor.shape[1] == 2);
    CHECK(sg_tensor_from_dlpack_versioned(mv, &back) == SG_OK);
    CHECK(sg_tensor_data(back) == buf && same_dims(back, sizes, strides, 2));
    /* element [2, 1] of the transpose is buf[1 * 3 + 2] */
    CHECK(((float *)sg_tensor_data(back))[2 * back->strides[0] + 1 * back->strides[1]] == 5);

    sg_dl_managed_tensor *ml;
    CHECK(sg_tensor_to_dlpack(back, &ml) == SG_OK);
    CHECK(ml->dl_tensor.strides[0] == 1 && ml->dl_tensor.strides[1] == 3);
    sg_tensor_release(back);
    sg_tensor_release(t);
    CHECK(blob_released == 0); /* ml still holds the chain */
    ml->deleter(ml);
    CHECK(blob_released == 1);
}

static void test_export_offset_view(void) {
    /* A view starting at element 5 exports data at that element, byte_offset 0. */
    int64_t    sizes[] = {10}, vsizes[] = {2, 2}, vstrides[] = {2, 1};
    sg_tensor *t, *v, *back;
    CHECK(sg_tensor_empty(sizes, 1, SG_INT16, SG_CPU, &t) == SG_OK);
    CHECK(sg__tensor_new(t->storage, SG_INT16, vsizes, vstrides, 2, 5, &v) == SG_OK);
    sg_dl_managed_tensor_versioned *mv;
    CHECK(sg_tensor_to_dlpack_versioned(v, &mv) == SG_OK);
    CHECK(mv->dl_tensor.data == (int16_t *)t->storage->data + 5);
    CHECK(mv->dl_tensor.byte_offset == 0);
    CHECK(sg_tensor_from_dlpack_versioned(mv, &back) == SG_OK);
    CHECK(sg_tensor_data(back) == sg_tensor_data(v));
    sg_tensor_release(t);
    sg_tensor_release(v);
    sg_tensor_release(back);
}

static void test_byte_offset_and_null_strides(void) {
    int32_t    buf[12] = {0};
    sg_tensor *t;
    producer   p;

    /* byte_offset 8 on int32: the first element is buf[2]; NULL strides are filled row-major. */
    int64_t shape2[] = {2, 5};
    prod_init(&p, buf, i32, 2, shape2, NULL);
    p.v.dl_tensor.byte_offset = 8;
    CHECK(sg_tensor_from_dlpack_versioned(&p.v, &t) == SG_OK);
    CHECK(sg_tensor_data(t) == &buf[2]);
    CHECK(t->strides[0] == 5 && t->strides[1] == 1);
    CHECK(t->dtype == SG_INT32);
    /* Re-exported: data at the first element, byte_offset 0. */
    sg_dl_managed_tensor_versioned *mv;
    CHECK(sg_tensor_to_dlpack_versioned(t, &mv) == SG_OK);
    CHECK(mv->dl_tensor.data == &buf[2] && mv->dl_tensor.byte_offset == 0);
    CHECK(mv->dl_tensor.strides[0] == 5 && mv->dl_tensor.strides[1] == 1);
    mv->deleter(mv);
    sg_tensor_release(t);
    CHECK(p.deleted == 1);

    /* legacy, with byte_offset and NULL strides in three dimensions */
    int64_t shape3[] = {2, 1, 3};
    prod_init(&p, buf, i32, 3, shape3, NULL);
    p.l.dl_tensor.byte_offset = 4 * sizeof(int32_t);
    CHECK(sg_tensor_from_dlpack(&p.l, &t) == SG_OK);
    CHECK(sg_tensor_data(t) == &buf[4]);
    CHECK(t->strides[0] == 3 && t->strides[1] == 3 && t->strides[2] == 1);
    sg_tensor_release(t);
    CHECK(p.deleted == 1);

    /* Zero strides (a broadcast) are fine. */
    int64_t shape1[] = {7}, zero[] = {0};
    prod_init(&p, buf, i32, 1, shape1, zero);
    CHECK(sg_tensor_from_dlpack_versioned(&p.v, &t) == SG_OK);
    CHECK(t && t->strides[0] == 0);
    sg_tensor_release(t);
    CHECK(p.deleted == 1);
}

/* ---- ownership --------------------------------------------------------------------------- */

static void test_deleter_once_after_last_view(void) {
    float      buf[6] = {0};
    int64_t    shape[] = {2, 3}, vs[] = {3}, vst[] = {1};
    producer   p;
    sg_tensor *t, *view;

    prod_init(&p, buf, f32, 2, shape, NULL);
    CHECK(sg_tensor_from_dlpack_versioned(&p.v, &t) == SG_OK);
    CHECK(sg__tensor_new(t->storage, SG_FLOAT32, vs, vst, 1, 3, &view) == SG_OK); /* row 1 */
    sg_tensor_retain(t);
    sg_tensor_release(t);
    CHECK(p.deleted == 0);
    sg_tensor_release(t);
    CHECK(p.deleted == 0); /* the view still holds the storage */
    CHECK(sg_tensor_data(view) == &buf[3]);
    sg_tensor_release(view);
    CHECK(p.deleted == 1);

    /* A chain: import, export, import the export (legacy too), release in a mixed order. */
    prod_init(&p, buf, f32, 2, shape, NULL);
    sg_tensor                      *a, *b, *c;
    sg_dl_managed_tensor_versioned *m1;
    sg_dl_managed_tensor           *m2;
    CHECK(sg_tensor_from_dlpack_versioned(&p.v, &a) == SG_OK);
    CHECK(sg_tensor_to_dlpack_versioned(a, &m1) == SG_OK);
    sg_tensor_release(a);
    CHECK(p.deleted == 0);
    CHECK(sg_tensor_from_dlpack_versioned(m1, &b) == SG_OK);
    CHECK(sg_tensor_to_dlpack(b, &m2) == SG_OK);
    CHECK(sg_tensor_from_dlpack(m2, &c) == SG_OK);
    CHECK(sg_tensor_data(c) == buf && same_dims(c, shape, (int64_t[]){3, 1}, 2));
    sg_tensor_release(b);
    CHECK(p.deleted == 0);
    sg_tensor_release(c); /* c -> m2 -> b -> m1 -> a -> the producer */
    CHECK(p.deleted == 1);

    /* The legacy producer's deleter, likewise once. */
    prod_init(&p, buf, f32, 2, shape, NULL);
    CHECK(sg_tensor_from_dlpack(&p.l, &a) == SG_OK);
    CHECK(sg_tensor_to_dlpack_versioned(a, &m1) == SG_OK);
    sg_tensor_release(a);
    CHECK(p.deleted == 0);
    m1->deleter(m1);
    CHECK(p.deleted == 1);

    /* A versioned producer without a deleter. */
    prod_init(&p, buf, f32, 2, shape, NULL);
    p.v.deleter = NULL;
    CHECK(sg_tensor_from_dlpack_versioned(&p.v, &a) == SG_OK);
    sg_tensor_release(a);
    CHECK(p.deleted == 0);
}

/* ---- read-only --------------------------------------------------------------------------- */

static void test_read_only(void) {
    float      buf[4] = {0};
    int64_t    shape[] = {4};
    producer   p;
    sg_tensor *t, *back;

    /* Import: the flag reaches the storage and the tensor. */
    prod_init(&p, buf, f32, 1, shape, NULL);
    p.v.flags = SG_DLPACK_FLAG_READ_ONLY | SG_DLPACK_FLAG_IS_COPIED;
    CHECK(sg_tensor_from_dlpack_versioned(&p.v, &t) == SG_OK);
    CHECK(t->storage->flags & SG_STORAGE_READ_ONLY);
    CHECK(!sg_tensor_writable(t));

    /* Export versioned: the flag comes back; legacy: refused. */
    sg_dl_managed_tensor_versioned *mv;
    sg_dl_managed_tensor           *ml = (sg_dl_managed_tensor *)1;
    CHECK(sg_tensor_to_dlpack_versioned(t, &mv) == SG_OK);
    CHECK(mv->flags == SG_DLPACK_FLAG_READ_ONLY);
    CHECK(sg_tensor_from_dlpack_versioned(mv, &back) == SG_OK);
    CHECK(!sg_tensor_writable(back));
    sg_tensor_release(back);
    sg_error_clear();
    CHECK(sg_tensor_to_dlpack(t, &ml) == SG_EINVAL);
    CHECK(ml == NULL);
    CHECK(strstr(sg_last_error(), "read-only") != NULL);
    CHECK(__atomic_load_n(&t->refs, __ATOMIC_RELAXED) == 1); /* no reference leaked */
    sg_tensor_release(t);
    CHECK(p.deleted == 1);

    /* IS_COPIED alone: writable. A read-only blob exports with the flag. */
    prod_init(&p, buf, f32, 1, shape, NULL);
    p.v.flags = SG_DLPACK_FLAG_IS_COPIED;
    CHECK(sg_tensor_from_dlpack_versioned(&p.v, &t) == SG_OK);
    CHECK(sg_tensor_writable(t));
    sg_tensor_release(t);
    CHECK(sg_tensor_from_blob(buf, shape, NULL, 1, SG_FLOAT32, SG_CPU, SG_STORAGE_READ_ONLY,
                              blob_release, NULL, &t) == SG_OK);
    CHECK(sg_tensor_to_dlpack_versioned(t, &mv) == SG_OK);
    CHECK(mv->flags & SG_DLPACK_FLAG_READ_ONLY);
    mv->deleter(mv);
    CHECK(sg_tensor_to_dlpack(t, &ml) == SG_EINVAL);
    sg_tensor_release(t);

    /* A legacy import is writable. */
    prod_init(&p, buf, f32, 1, shape, NULL);
    CHECK(sg_tensor_from_dlpack(&p.l, &t) == SG_OK);
    CHECK(sg_tensor_writable(t));
    sg_tensor_release(t);
}

/* ---- devices ----------------------------------------------------------------------------- */

static void test_devices(void) {
    /* CUDA memory is never touched here, so a made-up address serves without a GPU. */
    void      *fake = (void *)(uintptr_t)0x10000;
    int64_t    shape[] = {8};
    sg_tensor *t;
    blob_released = 0;
    CHECK(sg_tensor_from_blob(fake, shape, NULL, 1, SG_FLOAT32, SG_CUDA(1), 0, blob_release,
                              NULL, &t) == SG_OK);
    sg_dl_managed_tensor_versioned *mv;
    CHECK(sg_tensor_to_dlpack_versioned(t, &mv) == SG_OK);
    CHECK(mv->dl_tensor.device.device_type == SG_DL_CUDA && mv->dl_tensor.device.device_id == 1);
    CHECK(mv->dl_tensor.data == fake);
    sg_tensor *back;
    CHECK(sg_tensor_from_dlpack_versioned(mv, &back) == SG_OK);
    CHECK(sg_device_eq(back->device, SG_CUDA(1)) && sg_tensor_data(back) == fake);
    sg_tensor_release(t);
    sg_tensor_release(back);
    CHECK(blob_released == 1);

    producer p;
    prod_init(&p, fake, f32, 1, shape, NULL);
    p.v.dl_tensor.device = (sg_dl_device){SG_DL_CUDA, 3};
    CHECK(sg_tensor_from_dlpack_versioned(&p.v, &t) == SG_OK);
    CHECK(sg_device_eq(t->device, SG_CUDA(3)));
    sg_tensor_release(t);
    CHECK(p.deleted == 1);

    /* Meta and PrivateUse cannot be exported. */
    sg_tensor *m;
    sg_dl_managed_tensor_versioned *out = (sg_dl_managed_tensor_versioned *)1;
    CHECK(sg_tensor_empty(shape, 1, SG_FLOAT32, SG_META, &m) == SG_OK);
    CHECK(sg_tensor_to_dlpack_versioned(m, &out) == SG_EUNSUPPORTED && out == NULL);
    CHECK(strstr(sg_last_error(), "meta") != NULL);
    sg_dl_managed_tensor *outl = (sg_dl_managed_tensor *)1;
    CHECK(sg_tensor_to_dlpack(m, &outl) == SG_EUNSUPPORTED && outl == NULL);
    sg_tensor_release(m);
    CHECK(sg_tensor_from_blob(fake, shape, NULL, 1, SG_FLOAT32,
                              (sg_device){SG_DEV_PRIVATEUSE1, 0}, 0, blob_release, NULL,
                              &t) == SG_OK);
    CHECK(sg_tensor_to_dlpack_versioned(t, &out) == SG_EUNSUPPORTED && out == NULL);
    CHECK(strstr(sg_last_error(), "privateuseone") != NULL);
    CHECK(strstr(sg_last_error(), "cannot be exported") != NULL);
    CHECK(__atomic_load_n(&t->refs, __ATOMIC_RELAXED) == 1);
    sg_tensor_release(t);

    /* NULL arguments */
    CHECK(sg_tensor_to_dlpack_versioned(NULL, &out) == SG_EINVAL && out == NULL);
    CHECK(sg_tensor_to_dlpack(NULL, &outl) == SG_EINVAL);
    CHECK(sg_tensor_from_dlpack_versioned(NULL, &t) == SG_EINVAL && t == NULL);
    CHECK(sg_tensor_from_dlpack(NULL, &t) == SG_EINVAL);
    CHECK(sg_tensor_from_dlpack_versioned(&p.v, NULL) == SG_EINVAL);
}

/* ---- rejections -------------------------------------------------------------------------- */

/* Imports p.v (and p.l where legacy), expecting status and a message holding msg; the tensor
 * is not made and the deleter not called: the producer keeps its managed tensor. */
#define REJECT_V(p, status, msg)                                       \
    do {                                                               \
        sg_tensor *r_ = (sg_tensor *)1;                                \
        sg_error_clear();                                              \
        CHECK(sg_tensor_from_dlpack_versioned(&(p).v, &r_) == status); \
        CHECK(r_ == NULL);                                             \
        CHECK(strstr(sg_last_error(), msg) != NULL);                   \
        if (!strstr(sg_last_error(), msg))                             \
            fprintf(stderr, "  message: %s\n", sg_last_error());       \
        CHECK((p).deleted == 0);                                       \
    } while (0)
#define REJECT_L(p, status, msg)                             \
    do {                                                     \
        sg_tensor *r_ = (sg_tensor *)1;                      \
        sg_error_clear();                                    \
        CHECK(sg_tensor_from_dlpack(&(p).l, &r_) == status); \
        CHECK(r_ == NULL);                                   \
        CHECK(strstr(sg_last_error(), msg) != NULL);         \
        CHECK((p).deleted == 0);                             \
    } while (0)

static void test_rejections(void) {
    float    buf[16] = {0};
    int64_t  shape[] = {2, 3}, neg_stride[] = {-3, 1}, neg_size[] = {2, -1};
    producer p;

    prod_init(&p, buf, f32, 2, shape, NULL);
    p.v.version = (sg_dl_version){2, 0};
    REJECT_V(p, SG_EUNSUPPORTED, "DLPack 2.x is newer than the 1.x this runtime reads");
    p.v.version = (sg_dl_version){0, 8};
    REJECT_V(p, SG_EINVAL, "begin with DLPack 1.0");

    prod_init(&p, buf, DL_TYPE(SG_DL_FLOAT, 32), 2, shape, NULL);
    p.v.dl_tensor.dtype.lanes = 4;
    p.l.dl_tensor.dtype.lanes = 4;
    REJECT_V(p, SG_EUNSUPPORTED, "lanes 4");
    REJECT_L(p, SG_EUNSUPPORTED, "lanes 4");
    prod_init(&p, buf, DL_TYPE(SG_DL_FLOAT, 24), 2, shape, NULL);
    REJECT_V(p, SG_EUNSUPPORTED, "no dtype for kDLFloat (code 2) of 24 bits");
    prod_init(&p, buf, DL_TYPE(SG_DL_OPAQUE_HANDLE, 64), 2, shape, NULL);
    REJECT_V(p, SG_EUNSUPPORTED, "kDLOpaqueHandle");
    prod_init(&p, buf, DL_TYPE(SG_DL_BOOL, 1), 2, shape, NULL);
    REJECT_V(p, SG_EUNSUPPORTED, "kDLBool (code 6) of 1 bits");
    prod_init(&p, buf, DL_TYPE(7, 8), 2, shape, NULL); /* a float8 code of DLPack 1.1 */
    p.v.version.minor = 1;
    REJECT_V(p, SG_EUNSUPPORTED, "unknown type code (code 7)");
    prod_init(&p, buf, DL_TYPE(SG_DL_UINT, 16), 2, shape, NULL);
    REJECT_L(p, SG_EUNSUPPORTED, "kDLUInt (code 1) of 16 bits");

    prod_init(&p, buf, f32, 2, shape, NULL);
    p.v.dl_tensor.device.device_type = SG_DL_CUDA_HOST;
    REJECT_V(p, SG_EUNSUPPORTED, "device type kDLCUDAHost (3) is not supported");
    p.v.dl_tensor.device.device_type = SG_DL_ROCM;
    REJECT_V(p, SG_EUNSUPPORTED, "kDLROCM (10)");
    p.v.dl_tensor.device.device_type = SG_DL_EXT_DEV;
    REJECT_V(p, SG_EUNSUPPORTED, "kDLExtDev");
    p.l.dl_tensor.device.device_type = 99;
    REJECT_L(p, SG_EUNSUPPORTED, "an unknown device type (99)");
    p.v.dl_tensor.device = (sg_dl_device){SG_DL_CUDA, 200};
    REJECT_V(p, SG_EINVAL, "device id 200 is out of range");
    p.v.dl_tensor.device = (sg_dl_device){SG_DL_CUDA, -1};
    REJECT_V(p, SG_EINVAL, "device id -1");

    prod_init(&p, buf, f32, 2, shape, NULL);
    p.v.dl_tensor.ndim = -1;
    REJECT_V(p, SG_EINVAL, "ndim -1 is out of range");
    p.v.dl_tensor.ndim = SG_MAX_DIMS + 1;
    REJECT_V(p, SG_EUNSUPPORTED, "ndim 65 is out of range (0 to 64)");
    p.v.dl_tensor.ndim = 2;
    p.v.dl_tensor.shape = NULL;
    REJECT_V(p, SG_EINVAL, "shape is NULL");

    prod_init(&p, buf, f32, 2, neg_size, NULL);
    REJECT_V(p, SG_EINVAL, "negative size -1 at dimension 1");
    prod_init(&p, buf, f32, 2, shape, neg_stride);
    p.v.dl_tensor.data = &buf[3]; /* a valid flipped view, which we still cannot express */
    REJECT_V(p, SG_EUNSUPPORTED, "negative stride -3 at dimension 0");
    REJECT_V(p, SG_EUNSUPPORTED, "negative strides are not supported");

    prod_init(&p, NULL, f32, 2, shape, NULL);
    REJECT_V(p, SG_EINVAL, "data is NULL");
    prod_init(&p, buf, f32, 2, shape, NULL);
    p.v.dl_tensor.byte_offset = 2;
    REJECT_V(p, SG_EINVAL, "not aligned to 4 bytes for float32");
    p.v.dl_tensor.byte_offset = UINT64_MAX - 1;
    REJECT_V(p, SG_EINVAL, "overflows");

    int64_t huge[] = {INT64_MAX / 2, 4};
    prod_init(&p, buf, f32, 2, huge, NULL);
    REJECT_V(p, SG_EINVAL, "too large");
    int64_t huge_strides[] = {INT64_MAX / 2, 1};
    prod_init(&p, buf, f32, 2, shape, huge_strides);
    REJECT_V(p, SG_EINVAL, "too large");

    /* After a rejection the caller still owns m: it may fix it, import it, or delete it. */
    prod_init(&p, buf, f32, 2, shape, NULL);
    p.v.version.major = 3;
    REJECT_V(p, SG_EUNSUPPORTED, "DLPack 3.x");
    p.v.version.major = 1;
    p.v.version.minor = 7; /* a newer minor reads as 1.0 */
    sg_tensor *t;
    CHECK(sg_tensor_from_dlpack_versioned(&p.v, &t) == SG_OK);
    sg_tensor_release(t);
    CHECK(p.deleted == 1);
}

int main(void) {
    test_layout();
    test_roundtrip_every_dtype();
    test_export_deleter_alone();
    test_scalar_and_empty();
    test_noncontiguous();
    test_export_offset_view();
    test_byte_offset_and_null_strides();
    test_deleter_once_after_last_view();
    test_read_only();
    test_devices();
    test_rejections();
    return check_result("test_rt_dlpack");
}
