/* my_ops_cpu.c: the CPU kernels my_ops.yaml names under `CPU:`. Each has exactly the C type
 * that my_ops.h declares for it (the op's my_ops_<op>_fn): the first argument is the key set
 * the call was dispatched with, results come back through the trailing pointers. A definition
 * of another type does not compile ("conflicting types"). */
#include "my_ops_check.h"

static void affine(const float *x, float *y, int64_t n, float scale, float shift) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * scale + shift;
}

/* A new tensor like x (its sizes, dtype and device), filled with x * scale + shift. */
static sg_status affine_new(const char *op, sg_tensor *x, double scale, double shift,
                            sg_tensor **ret) {
    sg_tensor *y = NULL;
    sg_status  st = my_ops_new_like(op, x, &y);
    if (st) return st;
    affine(sg_tensor_data(x), sg_tensor_data(y), sg_tensor_numel(x), (float)scale, (float)shift);
    *ret = y;
    return SG_OK;
}

sg_status my_ops_short_cpu(sg_keyset ks, sg_tensor *x, sg_tensor **ret) {
    (void)ks;
    return affine_new("my_ops::short_kernel", x, 1.23, 0.0, ret);
}

/* The out= convention: resize `out` to the result's shape (a no-op where it has it already),
 * write into it, and return it as the result (a new reference). */
sg_status my_ops_short_out_cpu(sg_keyset ks, sg_tensor *x, sg_tensor *out, sg_tensor **ret) {
    (void)ks;
    sg_status st = my_ops_check("my_ops::short_kernel.out", "x", x);
    if (!st) st = sg_tensor_resize_out_(out, x->sizes, x->ndim);
    if (!st) st = my_ops_check("my_ops::short_kernel.out", "out", out);
    if (st) return st;
    affine(sg_tensor_data(x), sg_tensor_data(out), sg_tensor_numel(x), 1.23f, 0.0f);
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

sg_status my_ops_affine_cpu(sg_keyset ks, sg_tensor *x, double scale, double shift,
                            sg_tensor **ret) {
    (void)ks;
    return affine_new("my_ops::affine", x, scale, shift, ret);
}
