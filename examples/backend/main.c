/* main.c: the backend example's demo (docs/backend.md). npu_backend.c is the backend: PrivateUse1
 * renamed "npu", with its own allocator, two kernels of its own (add.Tensor and mul.Tensor, for
 * float32 tensors of one shape) and the CPU fallback for every other op. This runs a few ops on
 * it, compares each result with the same op on the CPU, and exits 0 where all agree (ctest runs
 * it).
 */
#include "aten.h"
#include "npu_backend.h"
#include "sg_aten_cpu.h"

#include <stdio.h>
#include <string.h>

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
    if (!must(sg_aten_cpu_init(), "sg_aten_cpu_init") ||
        !must(npu_backend_init(), "npu_backend_init"))
        return 1;

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
    long allocs = npu_backend_counts().allocs;

    char d[64];
    sg_tensor_describe(dx, d, sizeof d);
    expect(!strcmp(d, "float32[3, 4] on npu:0"), "the tensor prints as npu:0");

    /* a native kernel */
    sg_tensor *c = NULL, *r = NULL;
    must(aten_add_Tensor(x, y, sg_scalar_int(2), &c), "add on cpu");
    must(aten_add_Tensor(dx, dy, sg_scalar_int(2), &r), "add on npu");
    expect(same(c, r) && npu_backend_counts().native == 1 && !npu_backend_counts().fallback,
           "add.Tensor: npu's own kernel");
    sg_tensor_release(c);
    sg_tensor_release(r);

    /* what aten refuses, the fast path leaves to the fallback, which refuses it as aten does */
    expect(aten_add_Tensor(dx, dy, sg_scalar_bool(true), &r) == SG_EINVAL && !r &&
               strstr(sg_last_error(), "boolean alpha only supported for Boolean results") &&
               npu_backend_counts().handed == 1,
           "add.Tensor, a bool alpha: aten's error");

    /* a native kernel handing an odd case (broadcasting) to the fallback */
    sg_tensor *row = NULL, *drow = NULL;
    must(sg_tensor_select(y, 0, 1, &row), "select");
    must(sg_tensor_to(row, dev, &drow), "to npu");
    must(aten_mul_Tensor(x, row, &c), "mul on cpu");
    must(aten_mul_Tensor(dx, drow, &r), "mul on npu");
    expect(same(c, r) && npu_backend_counts().handed == 2,
           "mul.Tensor broadcast: native, then fallback");
    sg_tensor_release(c);
    sg_tensor_release(r);

    /* ops npu has no kernel for: the CPU fallback */
    long fallback = npu_backend_counts().fallback;
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
    expect(same(c, r) && npu_backend_counts().fallback == fallback + 2,
           "mm: through sg_cpu_fallback");
    sg_tensor_release(c);
    sg_tensor_release(r);

    /* in place: the npu tensor itself is updated and returned */
    must(aten_add__Tensor(x, y, sg_scalar_int(1), &c), "add_ on cpu");
    must(aten_add__Tensor(dx, dy, sg_scalar_int(1), &r), "add_ on npu");
    expect(r == dx && same(x, dx), "add_: the npu tensor updated in place");
    sg_tensor_release(c);
    sg_tensor_release(r);

    expect(npu_backend_counts().allocs > allocs, "npu's allocator served the results");

    /* the same-device rule, through a boxed call */
    sg_any args[3] = {sg_any_tensor(dx), sg_any_tensor(y), sg_any_int(1)}, ret;
    sg_status st = sg_op_call_boxed(aten_add_Tensor_op, args, 3, &ret, 1);
    expect(st == SG_EINVAL && strstr(sg_last_error(), "Expected all tensors to be on the same "
                                                      "device, but found at least two devices, "
                                                      "npu:0 and cpu!"),
           "npu beside cpu: aten's same-device error");
    expect(!sg_device_synchronize(dev) && npu_backend_counts().syncs == 1,
           "sg_device_synchronize reaches npu");

    sg_tensor_release(yt);
    sg_tensor_release(dyt);
    sg_tensor_release(row);
    sg_tensor_release(drow);
    sg_tensor_release(dx);
    sg_tensor_release(dy);
    sg_tensor_release(x);
    sg_tensor_release(y);
    sg_runtime_shutdown();
    npu_counts k = npu_backend_counts();
    expect(k.frees == k.allocs, "every npu allocation was freed");
    printf("npu: %ld allocations, %ld native kernel calls, %ld fallback calls, %d failure%s\n",
           k.allocs, k.native, k.fallback, failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
