/* npu.c: a device backend in one file, as docs/backend.md builds it step by step.
 *
 * "npu" is PrivateUse1 renamed. Its memory is host memory from an allocator of its own that
 * counts what it hands out; it has two kernels of its own (add.Tensor and mul.Tensor, for
 * float32 tensors of one shape) and runs every other op through the CPU fallback. main() runs
 * a few ops on it, compares each result with the same op on the CPU, and exits 0 where all
 * agree (ctest runs it).
 */
#include "aten.h"
#include "sg_aten_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPU0 ((sg_device){SG_DEV_PRIVATEUSE1, 0})

/* ---- step 1: the device: memory and copies ---------------------------------------------- */

static long npu_allocs, npu_frees;

static int npu_count(const char **why) {
    (void)why;
    return 1;
}

static sg_status npu_alloc(sg_device dev, size_t nbytes, void **data, void **ctx) {
    (void)dev;
    *ctx = NULL;
    *data = malloc(nbytes ? nbytes : 1);
    if (!*data) return sg_error(SG_ENOMEM, "npu: cannot allocate %zu bytes", nbytes);
    npu_allocs++;
    return SG_OK;
}

static void npu_free(sg_device dev, void *data, void *ctx) {
    (void)dev, (void)ctx;
    free(data);
    npu_frees++;
}

static sg_status npu_copy_in(sg_device dev, void *dst, const void *src, size_t n) {
    (void)dev;
    memcpy(dst, src, n);
    return SG_OK;
}

static sg_status npu_copy_out(void *dst, sg_device dev, const void *src, size_t n) {
    (void)dev;
    memcpy(dst, src, n);
    return SG_OK;
}

/* A synchronous device: synchronize has nothing to wait for, but counts, to show the hook. */
static long npu_syncs;
static sg_status npu_synchronize(sg_device dev) {
    (void)dev;
    npu_syncs++;
    return SG_OK;
}

static const sg_device_impl npu_impl = {
    .size = sizeof(sg_device_impl),
    .name = "npu",
    .count = npu_count,
    .alloc = npu_alloc,
    .free = npu_free,
    .copy_from_host = npu_copy_in,
    .copy_to_host = npu_copy_out,
    .synchronize = npu_synchronize,
};

/* ---- step 3: kernels of its own ---------------------------------------------------------- */

static long native_calls, fallback_calls;

/* Where a native kernel has no fast path it hands the call to the CPU fallback. */
static sg_status via_fallback(sg_op *op, sg_keyset ks, sg_tensor *a, sg_tensor *b,
                              const sg_scalar *alpha, sg_tensor **ret) {
    sg_any args[3] = {sg_any_tensor(a), sg_any_tensor(b), sg_box_scalar(alpha)};
    sg_any r = sg_any_none();
    fallback_calls++;
    sg_status st = sg_cpu_fallback(op, ks, args, &r, 1, NULL);
    *ret = st ? NULL : r.u.t;
    return st;
}

static bool fast(const sg_tensor *a, const sg_tensor *b) {
    if (a->dtype != SG_FLOAT32 || b->dtype != SG_FLOAT32 || a->ndim != b->ndim ||
        !sg_tensor_is_contiguous(a) || !sg_tensor_is_contiguous(b))
        return false;
    for (int32_t d = 0; d < a->ndim; d++)
        if (a->sizes[d] != b->sizes[d]) return false;
    return true;
}

/* out = a op b elementwise, a new npu tensor. */
static sg_status binary(sg_tensor *a, sg_tensor *b, float alpha, bool mul, sg_tensor **ret) {
    sg_status st = sg_tensor_empty(a->sizes, a->ndim, SG_FLOAT32, a->device, ret);
    if (st) return st;
    const float *x = sg_tensor_data(a), *y = sg_tensor_data(b);
    float       *o = sg_tensor_data(*ret);
    for (int64_t i = 0, n = sg_tensor_numel(a); i < n; i++)
        o[i] = mul ? x[i] * y[i] : x[i] + alpha * y[i];
    native_calls++;
    return SG_OK;
}

static sg_status npu_add(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_scalar alpha,
                         sg_tensor **ret) {
    if (!fast(self, other)) return via_fallback(aten_add_Tensor_op, ks, self, other, &alpha, ret);
    return binary(self, other, (float)sg_scalar_to_double(alpha), false, ret);
}

static sg_status npu_mul(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor **ret) {
    if (!fast(self, other)) return via_fallback(aten_mul_Tensor_op, ks, self, other, NULL, ret);
    return binary(self, other, 1, true, ret);
}

/* ---- steps 1 to 4 in order -------------------------------------------------------------- */

static sg_status npu_init(void) {
    sg_status st = sg_device_rename(SG_DEV_PRIVATEUSE1, "npu");       /* 2: its name */
    if (!st) st = sg_device_impl_register(SG_DEV_PRIVATEUSE1, &npu_impl); /* 1: the device */
    if (!st) st = aten_add_Tensor_register(SG_KEY_PRIVATEUSE1, npu_add, NULL); /* 3: kernels */
    if (!st) st = aten_mul_Tensor_register(SG_KEY_PRIVATEUSE1, npu_mul, NULL);
    if (!st) st = sg_fallback_impl(SG_KEY_PRIVATEUSE1, sg_cpu_fallback, NULL, NULL); /* 4 */
    return st;
}

/* ---- the program: the same ops on the CPU and on npu ------------------------------------ */

static int failures;

static void expect(bool ok, const char *what) {
    printf("%-52s %s\n", what, ok ? "ok" : "FAILED");
    failures += !ok;
}

static bool must(sg_status st, const char *what) {
    if (st) fprintf(stderr, "%s: %s\n", what, sg_last_error());
    failures += st != SG_OK;
    return st == SG_OK;
}

/* Whether npu tensor d holds exactly what CPU tensor c holds. */
static bool same(sg_tensor *c, sg_tensor *d) {
    sg_tensor *h = NULL, *hc = NULL, *cc = NULL;
    bool       ok = c && d && sg_device_eq(d->device, NPU0) && c->ndim == d->ndim &&
              c->dtype == d->dtype && !sg_tensor_to(d, SG_CPU, &h) &&
              !sg_tensor_contiguous(h, &hc) && !sg_tensor_contiguous(c, &cc);
    for (int32_t i = 0; ok && i < c->ndim; i++) ok = c->sizes[i] == d->sizes[i];
    ok = ok && !memcmp(sg_tensor_data(cc), sg_tensor_data(hc), sg_tensor_nbytes(cc));
    sg_tensor_release(h);
    sg_tensor_release(hc);
    sg_tensor_release(cc);
    return ok;
}

int main(void) {
    if (!must(sg_aten_cpu_init(), "sg_aten_cpu_init") || !must(npu_init(), "npu_init")) return 1;

    int64_t    sizes[2] = {3, 4};
    sg_tensor *x = NULL, *y = NULL, *dx = NULL, *dy = NULL;
    must(sg_tensor_empty(sizes, 2, SG_FLOAT32, SG_CPU, &x), "empty");
    must(sg_tensor_empty(sizes, 2, SG_FLOAT32, SG_CPU, &y), "empty");
    for (int i = 0; i < 12; i++) {
        ((float *)sg_tensor_data(x))[i] = (float)i * 0.5f - 2.0f;
        ((float *)sg_tensor_data(y))[i] = (float)(i % 5) + 1.0f;
    }
    sg_device dev;
    must(sg_device_parse("npu:0", &dev), "sg_device_parse"); /* device strings know the name */
    must(sg_tensor_to(x, dev, &dx), "to npu");
    must(sg_tensor_to(y, dev, &dy), "to npu");
    long allocs = npu_allocs;

    char d[64];
    sg_tensor_describe(dx, d, sizeof d);
    expect(!strcmp(d, "float32[3, 4] on npu:0"), "the tensor prints as npu:0");

    /* a native kernel */
    sg_tensor *c = NULL, *r = NULL;
    must(aten_add_Tensor(x, y, sg_scalar_int(2), &c), "add on cpu");
    must(aten_add_Tensor(dx, dy, sg_scalar_int(2), &r), "add on npu");
    expect(same(c, r) && native_calls == 1, "add.Tensor: npu's own kernel");
    sg_tensor_release(c);
    sg_tensor_release(r);

    /* a native kernel handing an odd case (broadcasting) to the fallback */
    sg_tensor *row = NULL, *drow = NULL;
    must(sg_tensor_select(y, 0, 1, &row), "select");
    must(sg_tensor_to(row, dev, &drow), "to npu");
    must(aten_mul_Tensor(x, row, &c), "mul on cpu");
    must(aten_mul_Tensor(dx, drow, &r), "mul on npu");
    expect(same(c, r) && fallback_calls == 1, "mul.Tensor broadcast: native, then fallback");
    sg_tensor_release(c);
    sg_tensor_release(r);

    /* ops npu has no kernel for: the CPU fallback */
    must(aten_relu(x, &c), "relu on cpu");
    must(aten_relu(dx, &r), "relu on npu");
    expect(same(c, r), "relu: through sg_cpu_fallback");
    sg_tensor_release(c);
    sg_tensor_release(r);
    sg_tensor *yt = NULL, *dyt = NULL;
    must(sg_tensor_transpose(y, 0, 1, &yt), "transpose");
    must(sg_tensor_transpose(dy, 0, 1, &dyt), "transpose");
    must(aten_mm(x, yt, &c), "mm on cpu");
    must(aten_mm(dx, dyt, &r), "mm on npu");
    expect(same(c, r), "mm: through sg_cpu_fallback");
    sg_tensor_release(c);
    sg_tensor_release(r);

    /* in place: the npu tensor itself is updated and returned */
    must(aten_add__Tensor(x, y, sg_scalar_int(1), &c), "add_ on cpu");
    must(aten_add__Tensor(dx, dy, sg_scalar_int(1), &r), "add_ on npu");
    expect(r == dx && same(x, dx), "add_: the npu tensor updated in place");
    sg_tensor_release(c);
    sg_tensor_release(r);

    expect(npu_allocs > allocs, "npu's allocator served the results");

    /* the same-device rule, through a boxed call */
    sg_any args[3] = {sg_any_tensor(dx), sg_any_tensor(y), sg_any_int(1)}, ret;
    sg_status st = sg_op_call_boxed(aten_add_Tensor_op, args, 3, &ret, 1);
    expect(st == SG_EINVAL && strstr(sg_last_error(), "Expected all tensors to be on the same "
                                                      "device, but found at least two devices, "
                                                      "npu:0 and cpu!"),
           "npu beside cpu: aten's same-device error");
    expect(!sg_device_synchronize(dev) && npu_syncs == 1, "sg_device_synchronize reaches npu");

    sg_tensor_release(yt);
    sg_tensor_release(dyt);
    sg_tensor_release(row);
    sg_tensor_release(drow);
    sg_tensor_release(dx);
    sg_tensor_release(dy);
    sg_tensor_release(x);
    sg_tensor_release(y);
    sg_runtime_shutdown();
    expect(npu_frees == npu_allocs, "every npu allocation was freed");
    printf("npu: %ld allocations, %ld native kernel calls, %d failure%s\n", npu_allocs,
           native_calls, failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
