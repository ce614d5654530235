/* npu_backend.c: a device backend in one file, as docs/backend.md builds it step by step.
 *
 * "npu" is PrivateUse1 renamed. Its memory is host memory from an allocator of its own that
 * counts what it hands out; it has two kernels of its own (add.Tensor and mul.Tensor, for
 * float32 tensors of one shape) and runs every other op through the CPU fallback.
 * npu_backend_init registers it all (npu_backend.h); main.c runs a few ops on it.
 */
#include "npu_backend.h"

#include "aten.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static npu_counts counts;

npu_counts npu_backend_counts(void) { return counts; }

/* ---- step 1: the device: memory and copies ---------------------------------------------- */

static int npu_count(const char **why) {
    (void)why;
    return 1;
}

static sg_status npu_alloc(sg_device dev, size_t nbytes, void **data, void **ctx) {
    (void)dev;
    *ctx = NULL;
    *data = malloc(nbytes ? nbytes : 1);
    if (!*data) return sg_error(SG_ENOMEM, "npu: cannot allocate %zu bytes", nbytes);
    counts.allocs++;
    return SG_OK;
}

static void npu_free(sg_device dev, void *data, void *ctx) {
    (void)dev, (void)ctx;
    free(data);
    counts.frees++;
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
static sg_status npu_synchronize(sg_device dev) {
    (void)dev;
    counts.syncs++;
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

/* ---- step 4: the CPU fallback, counted -------------------------------------------------- */

static sg_status npu_fallback(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                              int32_t nrets, void *ctx) {
    counts.fallback++;
    return sg_cpu_fallback(op, ks, args, rets, nrets, ctx);
}

/* ---- step 3: kernels of its own ---------------------------------------------------------- */

/* Where a native kernel has no fast path it hands the call to the CPU fallback. */
static sg_status via_fallback(sg_op *op, sg_keyset ks, sg_tensor *a, sg_tensor *b,
                              const sg_scalar *alpha, sg_tensor **ret) {
    sg_any args[3] = {sg_any_tensor(a), sg_any_tensor(b), sg_box_scalar(alpha)};
    sg_any r = sg_any_none();
    counts.handed++;
    sg_status st = npu_fallback(op, ks, args, &r, 1, NULL);
    *ret = st ? NULL : r.u.t;
    return st;
}

/* The fast path: float32 tensors of one shape, contiguous, both on the npu (a CPU 0-dim tensor
 * may sit beside an npu one: its memory is not the device's to read). */
static bool fast(const sg_tensor *a, const sg_tensor *b) {
    if (a->dtype != SG_FLOAT32 || b->dtype != SG_FLOAT32 || a->ndim != b->ndim ||
        !sg_device_eq(a->device, b->device) || !sg_tensor_is_contiguous(a) ||
        !sg_tensor_is_contiguous(b))
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
    counts.native++;
    return SG_OK;
}

/* and an alpha that float32 holds: aten refuses a bool one, or a float past float32's range,
 * and the fallback says so as aten does */
static bool fast_alpha(sg_scalar a) {
    if (a.kind == SG_SCALAR_INT) return true;
    return a.kind == SG_SCALAR_FLOAT && !(a.u.f > FLT_MAX && a.u.f < INFINITY) &&
           !(a.u.f < -FLT_MAX && a.u.f > -INFINITY);
}

static sg_status npu_add(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_scalar alpha,
                         sg_tensor **ret) {
    if (!fast(self, other) || !fast_alpha(alpha))
        return via_fallback(aten_add_Tensor_op, ks, self, other, &alpha, ret);
    return binary(self, other, (float)sg_scalar_to_double(alpha), false, ret);
}

static sg_status npu_mul(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor **ret) {
    if (!fast(self, other)) return via_fallback(aten_mul_Tensor_op, ks, self, other, NULL, ret);
    return binary(self, other, 1, true, ret);
}

/* ---- steps 1 to 4 in order -------------------------------------------------------------- */

sg_status npu_backend_init(void) {
    sg_status st = sg_device_rename(SG_DEV_PRIVATEUSE1, "npu");       /* 2: its name */
    if (!st) st = sg_device_impl_register(SG_DEV_PRIVATEUSE1, &npu_impl); /* 1: the device */
    if (!st) st = aten_add_Tensor_register(SG_KEY_PRIVATEUSE1, npu_add, NULL); /* 3: kernels */
    if (!st) st = aten_mul_Tensor_register(SG_KEY_PRIVATEUSE1, npu_mul, NULL);
    if (!st) st = sg_fallback_impl(SG_KEY_PRIVATEUSE1, npu_fallback, NULL, NULL); /* 4 */
    return st;
}
