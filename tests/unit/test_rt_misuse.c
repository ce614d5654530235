/* test_rt_misuse.c: tensors, storage, DLPack and boxed values used as a careless user or an
 * attacker would: geometry whose arithmetic overflows, NULL handles, sizes and out-pointers,
 * invalid dtypes and devices, double releases, DLPack managed tensors deleted or imported twice.
 * Each must be refused with an error (or, for a double release under ASan, reported by ASan),
 * never crash or corrupt memory. Double releases under ASan run in a child process, whose
 * report the parent reads. */
#define _POSIX_C_SOURCE 200809L /* fork, pipe, waitpid */
#include "check.h"
#include "rt_internal.h" /* sg__storage_new/_release: a storage released twice */
#include "sg_api.h"
#include "sg_dlpack.h"

#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#define I64(...) ((const int64_t[]){__VA_ARGS__})

/* A call that must fail with status want and a message holding text. */
#define FAILS(want, text, call)                                \
    do {                                                       \
        sg_error_clear();                                      \
        sg_status st_ = (call);                                \
        CHECK(st_ == (want));                                  \
        CHECK(sg_last_status() == (want));                     \
        CHECK_HAS(sg_last_error(), (text));                    \
    } while (0)

static sg_tensor *out;
/* The same for a call that returns a tensor through &out, which must be left NULL. */
#define FAILS_OUT(want, text, call)                            \
    do {                                                       \
        out = (sg_tensor *)&out;                               \
        FAILS(want, text, call);                               \
        CHECK(out == NULL);                                    \
    } while (0)

static void must(sg_status st) {
    if (st != SG_OK) {
        fprintf(stderr, "unexpected failure: %s: %s\n", sg_status_name(st), sg_last_error());
        exit(1);
    }
}
/* The tensor a call that must succeed returns through &out (the comma orders the two). */
#define OK(call) (must(call), out)

static void test_geometry_overflow(void) {
    /* (5 - 1) * 2^62 wraps to 0: the span used to come out as 1 element, and the tensor was
     * made over 8 bytes while its elements reach 2^64 bytes further. */
    FAILS_OUT(SG_EINVAL, "empty_strided: the tensor is too large: sizes [5], strides "
                         "[4611686018427387904]",
              sg_tensor_empty_strided(I64(5), I64(INT64_C(1) << 62), 1, SG_INT64, SG_CPU, &out));
    FAILS_OUT(SG_EINVAL, "empty_strided: the tensor is too large",
              sg_tensor_empty_strided(I64(3, 3), I64(INT64_MAX / 2, INT64_MAX / 2), 2, SG_INT8,
                                      SG_CPU, &out));
    /* A span that fits but whose bytes do not. */
    FAILS_OUT(SG_EINVAL, "empty_strided: the tensor is too large",
              sg_tensor_empty_strided(I64(2), I64(INT64_MAX / 4), 1, SG_INT64, SG_META, &out));
    FAILS_OUT(SG_EINVAL, "from_blob: the tensor is too large",
              sg_tensor_from_blob((void *)I64(0), I64(5), I64(INT64_C(1) << 62), 1, SG_INT64,
                                  SG_CPU, 0, NULL, NULL, &out));
    FAILS_OUT(SG_EINVAL, "empty: the tensor is too large: sizes [4294967296, 4294967296]",
              sg_tensor_empty(I64(INT64_C(1) << 32, INT64_C(1) << 32), 2, SG_INT8, SG_META,
                              &out));
    /* numel fits, bytes do not */
    FAILS_OUT(SG_EINVAL, "empty: the tensor is too large",
              sg_tensor_empty(I64(INT64_C(1) << 61), 1, SG_FLOAT64, SG_META, &out));
    FAILS_OUT(SG_EINVAL, "zeros: the tensor is too large",
              sg_tensor_zeros(I64(INT64_C(1) << 40, INT64_C(1) << 40), 2, SG_INT8, SG_CPU,
                              &out));

    /* Views of a valid tensor: expand makes stride-0 dims of any size, so its numel is where
     * an overflow hides; it used to succeed and sg_tensor_numel then wrapped. */
    sg_tensor *one = OK(sg_tensor_empty(I64(1), 1, SG_FLOAT32, SG_META, &out));
    FAILS_OUT(SG_EINVAL, "expand: the tensor is too large",
              sg_tensor_expand(one, I64(INT64_C(1) << 40, INT64_C(1) << 40), 2, &out));
    sg_tensor *wide = OK(sg_tensor_expand(one, I64(INT64_C(1) << 40), 1, &out));
    CHECK(sg_tensor_numel(wide) == INT64_C(1) << 40);
    CHECK(sg_tensor_nbytes(wide) == (size_t)1 << 42);
    sg_tensor_release(wide);
    sg_tensor_release(one);

    /* as_strided: inside the storage, offset + span, all of it checked. */
    sg_tensor *base = OK(sg_tensor_empty(I64(10), 1, SG_INT32, SG_CPU, &out));
    FAILS_OUT(SG_EINVAL, "as_strided: the tensor is too large",
              sg_tensor_as_strided(base, I64(2), I64(1), 1, INT64_MAX, &out));
    FAILS_OUT(SG_EINVAL, "as_strided: the tensor is too large",
              sg_tensor_as_strided(base, I64(5), I64(INT64_C(1) << 62), 1, 0, &out));
    FAILS_OUT(SG_EINVAL, "need a storage of 44 bytes, but it has 40",
              sg_tensor_as_strided(base, I64(2), I64(1), 1, 9, &out));
    /* An empty view may start anywhere, but not past what a byte offset can say; views of it
     * that move its offset are checked the same way. */
    FAILS_OUT(SG_EINVAL, "as_strided: the tensor is too large",
              sg_tensor_as_strided(base, I64(0, 8), I64(1, 1), 2, INT64_MAX / 2, &out));
    sg_tensor *far = OK(sg_tensor_as_strided(base, I64(0, 8), I64(8, 1), 2, INT64_MAX / 4 - 1,
                                             &out));
    FAILS_OUT(SG_EINVAL, "slice: start 3 with stride 1 overflows the offset",
              sg_tensor_slice(far, 1, 3, 8, 1, &out));
    FAILS_OUT(SG_EINVAL, "select: index 5 with stride 1 overflows the offset",
              sg_tensor_select(far, 1, 5, &out));
    sg_tensor_release(far);
    /* resize_ to more elements than 64-bit byte offsets reach */
    FAILS(SG_EINVAL, "resize_: the tensor is too large",
          sg_tensor_resize_(base, I64(INT64_C(1) << 62), 1));
    CHECK(base->ndim == 1 && base->sizes[0] == 10); /* untouched */
    /* Ranks and signs. */
    FAILS_OUT(SG_EINVAL, "empty: ndim -1 is negative",
              sg_tensor_empty(I64(1), -1, SG_INT32, SG_CPU, &out));
    FAILS_OUT(SG_EINVAL, "empty: 65 dimensions (at most 64)",
              sg_tensor_empty(I64(1), 65, SG_INT32, SG_CPU, &out));
    FAILS_OUT(SG_EINVAL, "empty: negative size -3 at dimension 1",
              sg_tensor_empty(I64(2, -3), 2, SG_INT32, SG_CPU, &out));
    FAILS_OUT(SG_EINVAL, "empty_strided: negative stride -1 at dimension 0",
              sg_tensor_empty_strided(I64(2), I64(-1), 1, SG_INT32, SG_CPU, &out));
    FAILS_OUT(SG_EINVAL, "view: invalid shape dimension -2",
              sg_tensor_view(base, I64(-2, 5), 2, &out));
    sg_tensor_release(base);
}

static void test_null_handles(void) {
    sg_tensor *t = OK(sg_tensor_empty(I64(2, 3), 2, SG_FLOAT32, SG_CPU, &out));

    FAILS(SG_EINVAL, "empty: out is NULL", sg_tensor_empty(I64(2), 1, SG_INT32, SG_CPU, NULL));
    FAILS_OUT(SG_EINVAL, "empty: sizes is NULL with ndim 2",
              sg_tensor_empty(NULL, 2, SG_INT32, SG_CPU, &out));
    FAILS(SG_EINVAL, "zeros: out is NULL", sg_tensor_zeros(I64(2), 1, SG_INT32, SG_CPU, NULL));
    FAILS(SG_EINVAL, "empty_strided: out is NULL",
          sg_tensor_empty_strided(I64(2), I64(1), 1, SG_INT32, SG_CPU, NULL));
    FAILS_OUT(SG_EINVAL, "empty_strided: strides is NULL with ndim 1",
              sg_tensor_empty_strided(I64(2), NULL, 1, SG_INT32, SG_CPU, &out));
    FAILS_OUT(SG_EINVAL, "empty_strided: sizes is NULL with ndim 1",
              sg_tensor_empty_strided(NULL, I64(1), 1, SG_INT32, SG_CPU, &out));
    FAILS(SG_EINVAL, "from_blob: out is NULL",
          sg_tensor_from_blob((void *)I64(0), I64(1), NULL, 1, SG_INT64, SG_CPU, 0, NULL, NULL,
                              NULL));
    FAILS_OUT(SG_EINVAL, "from_blob: sizes is NULL with ndim 1",
              sg_tensor_from_blob((void *)I64(0), NULL, NULL, 1, SG_INT64, SG_CPU, 0, NULL, NULL,
                                  &out));

    /* Views: the tensor, the out-pointer and the sizes. */
    FAILS(SG_EINVAL, "as_strided: out is NULL",
          sg_tensor_as_strided(t, I64(1), I64(1), 1, 0, NULL));
    FAILS_OUT(SG_EINVAL, "as_strided: sizes is NULL with ndim 1",
              sg_tensor_as_strided(t, NULL, I64(1), 1, 0, &out));
    FAILS_OUT(SG_EINVAL, "as_strided: strides is NULL with ndim 1",
              sg_tensor_as_strided(t, I64(1), NULL, 1, 0, &out));
    FAILS(SG_EINVAL, "view: out is NULL", sg_tensor_view(t, I64(6), 1, NULL));
    FAILS_OUT(SG_EINVAL, "view: sizes is NULL with ndim 1", sg_tensor_view(t, NULL, 1, &out));
    FAILS_OUT(SG_EINVAL, "view: the tensor is NULL", sg_tensor_view(NULL, I64(6), 1, &out));
    FAILS(SG_EINVAL, "transpose: out is NULL", sg_tensor_transpose(t, 0, 1, NULL));
    FAILS_OUT(SG_EINVAL, "transpose: the tensor is NULL", sg_tensor_transpose(NULL, 0, 1, &out));
    FAILS(SG_EINVAL, "permute: out is NULL", sg_tensor_permute(t, I64(1, 0), 2, NULL));
    FAILS_OUT(SG_EINVAL, "permute: dims is NULL with ndim 2", sg_tensor_permute(t, NULL, 2, &out));
    FAILS(SG_EINVAL, "slice: out is NULL", sg_tensor_slice(t, 0, 0, 1, 1, NULL));
    FAILS_OUT(SG_EINVAL, "slice: the tensor is NULL", sg_tensor_slice(NULL, 0, 0, 1, 1, &out));
    FAILS(SG_EINVAL, "select: out is NULL", sg_tensor_select(t, 0, 0, NULL));
    FAILS_OUT(SG_EINVAL, "select: the tensor is NULL", sg_tensor_select(NULL, 0, 0, &out));
    FAILS(SG_EINVAL, "expand: out is NULL", sg_tensor_expand(t, I64(2, 3), 2, NULL));
    FAILS_OUT(SG_EINVAL, "expand: sizes is NULL with ndim 2", sg_tensor_expand(t, NULL, 2, &out));
    FAILS(SG_EINVAL, "unsqueeze: out is NULL", sg_tensor_unsqueeze(t, 0, NULL));
    FAILS_OUT(SG_EINVAL, "unsqueeze: the tensor is NULL", sg_tensor_unsqueeze(NULL, 0, &out));
    FAILS(SG_EINVAL, "squeeze: out is NULL", sg_tensor_squeeze(t, 0, NULL));
    FAILS_OUT(SG_EINVAL, "squeeze: the tensor is NULL", sg_tensor_squeeze(NULL, 0, &out));

    /* Copies and resizing. */
    FAILS(SG_EINVAL, "copy_: dst is NULL", sg_tensor_copy_(NULL, t));
    FAILS(SG_EINVAL, "copy_: src is NULL", sg_tensor_copy_(t, NULL));
    FAILS(SG_EINVAL, "contiguous: out is NULL", sg_tensor_contiguous(t, NULL));
    FAILS_OUT(SG_EINVAL, "contiguous: the tensor is NULL", sg_tensor_contiguous(NULL, &out));
    FAILS(SG_EINVAL, "to: out is NULL", sg_tensor_to(t, SG_CPU, NULL));
    FAILS_OUT(SG_EINVAL, "to: the tensor is NULL", sg_tensor_to(NULL, SG_CPU, &out));
    FAILS(SG_EINVAL, "resize_: the tensor is NULL", sg_tensor_resize_(NULL, I64(2), 1));
    FAILS(SG_EINVAL, "resize_: sizes is NULL with ndim 2", sg_tensor_resize_(t, NULL, 2));
    FAILS(SG_EINVAL, "resize_: ndim -1 is negative", sg_tensor_resize_(t, I64(2), -1));
    CHECK(t->ndim == 2 && t->sizes[0] == 2 && t->sizes[1] == 3);

    /* What returns a value answers for NULL. */
    char buf[32] = "x";
    CHECK(sg_tensor_numel(NULL) == 0);
    CHECK(sg_tensor_span(NULL) == 0);
    CHECK(sg_tensor_nbytes(NULL) == 0);
    CHECK(!sg_tensor_is_contiguous(NULL));
    sg_tensor_describe(NULL, buf, sizeof buf);
    CHECK_STR(buf, "(null tensor)");
    sg_tensor_describe(t, NULL, 16); /* no buffer: nothing written */
    sg_tensor_describe(t, buf, 0);
    CHECK_STR(buf, "(null tensor)");
    sg_tensor_release(NULL);
    const char *volatile no_format = NULL;
    CHECK(sg_error(SG_ENOMEM, no_format, 0) == SG_ENOMEM && sg_last_error()[0] == '\0');

    /* Invalid dtypes, devices and flags. */
    FAILS_OUT(SG_EINVAL, "empty: no dtype 99", sg_tensor_empty(I64(2), 1, (sg_dtype)99, SG_CPU, &out));
    FAILS_OUT(SG_EINVAL, "empty: no dtype -1", sg_tensor_empty(I64(2), 1, (sg_dtype)-1, SG_CPU, &out));
    FAILS_OUT(SG_EINVAL, "empty: device type 42 does not exist",
              sg_tensor_empty(I64(2), 1, SG_INT32, ((sg_device){42, 0}), &out));
    FAILS_OUT(SG_EDEVICE, "empty: device cpu:3 does not exist",
              sg_tensor_empty(I64(2), 1, SG_INT32, ((sg_device){SG_DEV_CPU, 3}), &out));
    FAILS_OUT(SG_EINVAL, "from_blob: device type -2 does not exist",
              sg_tensor_from_blob((void *)I64(0), I64(1), NULL, 1, SG_INT64,
                                  ((sg_device){-2, 0}), 0, NULL, NULL, &out));
    /* A flag of the runtime's own (bit 8 marks storage allocated with its header) would make
     * the release free the wrong thing. */
    FAILS_OUT(SG_EINVAL, "from_blob: unknown storage flags 0x100",
              sg_tensor_from_blob((void *)I64(0), I64(1), NULL, 1, SG_INT64, SG_CPU, 1u << 8,
                                  NULL, NULL, &out));
    sg_tensor_release(t);
}

static void test_from_blob_data(void) {
    FAILS_OUT(SG_EINVAL, "from_blob: data is NULL for a tensor of 6 elements",
              sg_tensor_from_blob(NULL, I64(2, 3), NULL, 2, SG_FLOAT32, SG_CPU, 0, NULL, NULL,
                                  &out));
    /* No element, or no memory at all (Meta): NULL is fine. */
    sg_tensor *t = OK(sg_tensor_from_blob(NULL, I64(2, 0), NULL, 2, SG_FLOAT32, SG_CPU, 0, NULL,
                                          NULL, &out));
    CHECK(sg_tensor_numel(t) == 0);
    sg_tensor_release(t);
    t = OK(sg_tensor_from_blob(NULL, I64(4), NULL, 1, SG_FLOAT32, SG_META, 0, NULL, NULL, &out));
    CHECK(sg_tensor_numel(t) == 4);
    sg_tensor_release(t);
}

/* ---- double releases ----------------------------------------------------------------------- */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifdef UNDER_ASAN
/* Runs f in a child and returns what it wrote to stderr; *failed says whether it exited with
 * anything but 0. */
static char *in_child(void (*f)(void), bool *failed) {
    static char text[1 << 16];
    int         fd[2];
    size_t      n = 0;
    fflush(NULL);
    if (pipe(fd)) return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        f();
        _exit(0);
    }
    close(fd[1]);
    ssize_t r;
    while ((r = read(fd[0], text + n, sizeof text - 1 - n)) > 0) n += (size_t)r;
    close(fd[0]);
    text[n] = '\0';
    int status = 0;
    waitpid(pid, &status, 0);
    *failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    return text;
}
#endif

static void release_tensor_twice(void) {
    sg_tensor *t = OK(sg_tensor_empty(I64(1), 1, SG_FLOAT32, SG_CPU, &out));
    sg_tensor_release(t);
    sg_tensor_release(t);
}

static void release_storage_twice(void) {
    sg_storage *s;
    if (sg__storage_new(SG_CPU, 16, &s)) exit(1);
    sg__storage_release(s);
    sg__storage_release(s);
}

/* A storage whose data is apart from its header (which is kept as small storages are). */
static void release_large_storage_twice(void) {
    sg_storage *s;
    if (sg__storage_new(SG_CPU, 1 << 16, &s)) exit(1);
    sg__storage_release(s);
    sg__storage_release(s);
}

static void test_double_release(void) {
#ifdef UNDER_ASAN
    /* The caches are off under ASan, so the second release reads freed memory. */
    bool  failed = false;
    char *text = in_child(release_tensor_twice, &failed);
    CHECK(text && failed);
    if (text) CHECK_HAS(text, "heap-use-after-free");
    text = in_child(release_storage_twice, &failed);
    CHECK(text && failed);
    if (text) CHECK_HAS(text, "heap-use-after-free");
    text = in_child(release_large_storage_twice, &failed);
    CHECK(text && failed);
    if (text) CHECK_HAS(text, "heap-use-after-free");
#else
    /* Elsewhere the released header is kept for reuse with its count at 0: the second release
     * finds it below zero, says so and frees nothing again. */
    sg_error_clear();
    release_tensor_twice();
    CHECK(sg_last_status() == SG_ESTATE);
    CHECK_HAS(sg_last_error(), "sg_tensor_release: the tensor was released already");
    sg_error_clear();
    release_storage_twice();
    CHECK(sg_last_status() == SG_ESTATE);
    CHECK_HAS(sg_last_error(), "the storage was released already");
    sg_error_clear();
    release_large_storage_twice(); /* its data is freed once: the allocator would abort */
    CHECK(sg_last_status() == SG_ESTATE);
    CHECK_HAS(sg_last_error(), "the storage was released already");
    /* The kept headers are whole: the next tensors work. */
    static const int64_t counts[] = {1, 1 << 14}; /* an inline storage, a kept header */
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        int64_t    n = counts[i];
        sg_tensor *a = OK(sg_tensor_zeros(I64(n), 1, SG_FLOAT32, SG_CPU, &out));
        sg_tensor *b = OK(sg_tensor_zeros(I64(n), 1, SG_FLOAT32, SG_CPU, &out));
        CHECK(a != b && a->refs == 1 && b->refs == 1 && a->storage != b->storage);
        CHECK(((float *)sg_tensor_data(a))[n - 1] == 0 && ((float *)sg_tensor_data(b))[0] == 0);
        sg_tensor_release(a);
        sg_tensor_release(b);
    }
#endif
}

/* ---- DLPack -------------------------------------------------------------------------------- */

static int producer_deleted;
static void producer_delete(sg_dl_managed_tensor_versioned *self) {
    (void)self;
    producer_deleted++;
}

static void test_dlpack_twice(void) {
    /* An export's deleter called twice: the second call is refused, nothing freed twice. */
    sg_tensor *t = OK(sg_tensor_zeros(I64(4), 1, SG_INT32, SG_CPU, &out));
    sg_dl_managed_tensor_versioned *m = NULL;
    CHECK(sg_tensor_to_dlpack_versioned(t, &m) == SG_OK && t->refs == 2);
    void (*del)(sg_dl_managed_tensor_versioned *) = m->deleter;
    sg_error_clear();
    del(m);
    CHECK(t->refs == 1 && sg_last_status() == SG_OK);
    del(m);
    CHECK(t->refs == 1 && sg_last_status() == SG_ESTATE);
    CHECK_HAS(sg_last_error(), "to_dlpack_versioned's deleter: the managed tensor was deleted "
                               "already");
    sg_dl_managed_tensor *l = NULL;
    CHECK(sg_tensor_to_dlpack(t, &l) == SG_OK && t->refs == 2);
    void (*del_l)(sg_dl_managed_tensor *) = l->deleter;
    del_l(l);
    sg_error_clear();
    del_l(l);
    CHECK(t->refs == 1 && sg_last_status() == SG_ESTATE);

    /* One managed tensor imported twice: the first tensor owns its deleter. */
    int32_t                        data[4] = {1, 2, 3, 4};
    int64_t                        shape[1] = {4};
    sg_dl_managed_tensor_versioned p = {
        {1, 0}, NULL, producer_delete, 0,
        {data, {SG_DL_CPU, 0}, 1, {SG_DL_INT, 32, 1}, shape, NULL, 0}};
    producer_deleted = 0;
    sg_tensor *a = NULL, *b = (sg_tensor *)&b;
    CHECK(sg_tensor_from_dlpack_versioned(&p, &a) == SG_OK);
    FAILS(SG_ESTATE, "from_dlpack_versioned: the managed tensor was imported already",
          sg_tensor_from_dlpack_versioned(&p, &b));
    CHECK(b == NULL);
    sg_tensor_release(a);
    CHECK(producer_deleted == 1);
    /* Once the first tensor has given it back, the producer may hand it out again. */
    CHECK(sg_tensor_from_dlpack_versioned(&p, &a) == SG_OK);
    sg_tensor_release(a);
    CHECK(producer_deleted == 2);

    /* An export of ours imported back: imported once, refused twice, fine after. */
    CHECK(sg_tensor_to_dlpack_versioned(t, &m) == SG_OK);
    CHECK(sg_tensor_from_dlpack_versioned(m, &a) == SG_OK);
    FAILS(SG_ESTATE, "imported already", sg_tensor_from_dlpack_versioned(m, &b));
    sg_tensor_release(a); /* runs m's deleter */
    CHECK(t->refs == 1);

    /* A legacy export given as a versioned one (and back): its fields would be read at the
     * wrong offsets. */
    CHECK(sg_tensor_to_dlpack(t, &l) == SG_OK);
    FAILS(SG_EINVAL, "from_dlpack_versioned: this is a legacy managed tensor",
          sg_tensor_from_dlpack_versioned((sg_dl_managed_tensor_versioned *)(void *)l, &b));
    l->deleter(l);
    CHECK(sg_tensor_to_dlpack_versioned(t, &m) == SG_OK);
    FAILS(SG_EINVAL, "from_dlpack: this is a versioned managed tensor",
          sg_tensor_from_dlpack((sg_dl_managed_tensor *)(void *)m, &b));
    m->deleter(m);
    CHECK(t->refs == 1);
    sg_tensor_release(t);
}

static void test_dlpack_bounds(void) {
    sg_tensor *t = OK(sg_tensor_zeros(I64(4), 1, SG_INT32, SG_CPU, &out));
    sg_dl_managed_tensor_versioned *m = NULL;
    sg_tensor                      *back = NULL;
    CHECK(sg_tensor_to_dlpack_versioned(t, &m) == SG_OK);

    /* byte_offset past the storage of the tensor exported */
    m->dl_tensor.byte_offset = 64;
    FAILS(SG_EINVAL, "reach outside the 16 bytes of the exported tensor's storage",
          sg_tensor_from_dlpack_versioned(m, &back));
    m->dl_tensor.byte_offset = 4; /* one element on: the last one is past the end */
    FAILS(SG_EINVAL, "byte_offset 4 and 16 bytes of elements reach outside",
          sg_tensor_from_dlpack_versioned(m, &back));
    m->dl_tensor.byte_offset = 0;
    m->dl_tensor.shape[0] = 5; /* a shape larger than what was exported */
    FAILS(SG_EINVAL, "reach outside", sg_tensor_from_dlpack_versioned(m, &back));
    m->dl_tensor.shape[0] = 4;
    /* an address that wraps */
    m->dl_tensor.byte_offset = UINTPTR_MAX - (uintptr_t)m->dl_tensor.data - 3;
    FAILS(SG_EINVAL, "overflows the address space", sg_tensor_from_dlpack_versioned(m, &back));
    m->dl_tensor.byte_offset = 0;

    /* a CPU device id other than 0 */
    m->dl_tensor.device.device_id = 1;
    FAILS(SG_EINVAL, "device id 1 for kDLCPU (the CPU is device 0)",
          sg_tensor_from_dlpack_versioned(m, &back));
    m->dl_tensor.device.device_id = 0;

    /* unknown dtypes and lanes */
    m->dl_tensor.dtype.lanes = 0;
    FAILS(SG_EUNSUPPORTED, "lanes 0", sg_tensor_from_dlpack_versioned(m, &back));
    m->dl_tensor.dtype = (sg_dl_data_type){42, 32, 1};
    FAILS(SG_EUNSUPPORTED, "an unknown type code (code 42)",
          sg_tensor_from_dlpack_versioned(m, &back));
    m->dl_tensor.dtype = (sg_dl_data_type){SG_DL_INT, 32, 1};

    /* NULL data with elements */
    void *data = m->dl_tensor.data;
    m->dl_tensor.data = NULL;
    FAILS(SG_EINVAL, "data is NULL in a non-empty tensor",
          sg_tensor_from_dlpack_versioned(m, &back));
    m->dl_tensor.data = data;

    /* Repaired, it imports; every refusal left it with us. */
    CHECK(sg_tensor_from_dlpack_versioned(m, &back) == SG_OK);
    CHECK(back && sg_tensor_numel(back) == 4);
    sg_tensor_release(back);
    CHECK(t->refs == 1);
    sg_tensor_release(t);
}

/* ---- boxed values -------------------------------------------------------------------------- */

static void test_any(void) {
    sg_any_release(NULL);
    /* A list result without items, or with a negative length, is given back as far as it goes. */
    sg_any v = {SG_ANY_LIST, 3, {0}};
    sg_any_release(&v);
    CHECK(v.tag == SG_ANY_NONE);
    v = (sg_any){SG_ANY_TENSOR_LIST, 5, {0}};
    sg_any_release(&v);
    CHECK(v.tag == SG_ANY_NONE);
    sg_tensor  *x = OK(sg_tensor_empty(I64(1), 1, SG_INT32, SG_CPU, &out));
    sg_tensor **owned = malloc(2 * sizeof *owned);
    owned[0] = x;
    owned[1] = NULL;
    v = (sg_any){SG_ANY_OPT_TENSOR_LIST, -7, {0}}; /* a negative length releases no item */
    v.u.tensors = owned;
    sg_any_release(&v); /* frees the array only */
    CHECK(v.tag == SG_ANY_NONE && x->refs == 1);
    v = (sg_any){SG_ANY__COUNT + 3, 0, {0}};
    sg_any_release(&v); /* an unknown tag: nothing to free */
    CHECK(v.tag == SG_ANY_NONE);
    sg_tensor *items[2] = {x, x};

    /* The typed API's helpers. */
    sg_tensor_list_release(NULL);
    sg_tensor_list tl = {NULL, 3};
    sg_tensor_list_release(&tl);
    CHECK(tl.len == 0);
    sg_tensor_list cl;
    FAILS(SG_EINVAL, "sg_tensor_list_clone: the list has 3 items at NULL",
          sg_tensor_list_clone((sg_tensor_list){NULL, 3}, &cl));
    FAILS(SG_EINVAL, "sg_tensor_list_retain: the list has length -1",
          sg_tensor_list_retain((sg_tensor_list){NULL, -1}, &cl));
    FAILS(SG_EINVAL, "sg_tensor_list_clone: out is NULL",
          sg_tensor_list_clone((sg_tensor_list){NULL, 0}, NULL));
    FAILS(SG_EINVAL, "sg_tensor_list_copy_: src has 2 items at NULL",
          sg_tensor_list_copy_((sg_tensor_list){items, 2}, (sg_tensor_list){NULL, 2}));
    FAILS_OUT(SG_EINVAL, "clone: the tensor is NULL", sg_tensor_clone(NULL, &out));
    FAILS(SG_EINVAL, "clone: out is NULL", sg_tensor_clone(x, NULL));
    FAILS_OUT(SG_EINVAL, "sg_meta_empty: the meta is NULL", sg_meta_empty(NULL, &out));
    FAILS(SG_EINVAL, "add: the tensor is NULL", sg_meta_check(&(sg_meta){0}, NULL, "add"));
    FAILS(SG_EINVAL, "sg_result_tensor: the result is NULL", sg_result_tensor(NULL, &out));
    sg_any r = sg_any_int(3);
    FAILS(SG_EINVAL, "sg_result_int: out is NULL", sg_result_int(&r, NULL));
    FAILS(SG_EINVAL, "sg_result_scalar: the result is NULL",
          sg_result_scalar(NULL, &(sg_scalar){0}));
    FAILS(SG_EINVAL, "sg_unbox_tensor_list_result: out is NULL",
          sg_unbox_tensor_list_result(&r, NULL));
    CHECK(sg_op_desc_find(NULL, 3, "add", "Tensor") == NULL);
    FAILS(SG_EINVAL, "sg_op_desc_define_all: the table is NULL", sg_op_desc_define_all(NULL, 2));
    /* A boxed complex without its value unboxes as 0, and lists without room box as None. */
    sg_any c = {SG_ANY_COMPLEX, 0, {0}};
    CHECK(sg_unbox_scalar(&c).kind == SG_SCALAR_INT && sg_unbox_scalar(NULL).u.i == 0);
    sg_scalar sc[2] = {sg_scalar_int(1), sg_scalar_int(2)};
    CHECK(sg_box_scalar_list((sg_scalar_list){sc, 2}, NULL).tag == SG_ANY_NONE);
    CHECK(sg_box_scalar_list((sg_scalar_list){NULL, 2}, (sg_any[2]){{0}}).tag == SG_ANY_NONE);
    sg_any il = {SG_ANY_INT_LIST, -4, {0}};
    int64_t room[2];
    CHECK(sg_unbox_int_list(&il, room, 2).len == 0);
    CHECK(sg_unbox_int_list(NULL, room, 2).len == 0);
    sg_tensor_release(x);
}

/* With arguments, only the sections named run (one at a time, where an old runtime crashes). */
int main(int argc, char **argv) {
    static const struct {
        const char *name;
        void      (*run)(void);
    } sections[] = {
        {"geometry", test_geometry_overflow}, {"null", test_null_handles},
        {"from_blob", test_from_blob_data},   {"double_release", test_double_release},
        {"dlpack_twice", test_dlpack_twice},  {"dlpack_bounds", test_dlpack_bounds},
        {"any", test_any},
    };
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++) {
        bool run = argc < 2;
        for (int a = 1; a < argc; a++) run |= strcmp(argv[a], sections[i].name) == 0;
        if (run) sections[i].run();
    }
    return check_result("test_rt_misuse");
}
