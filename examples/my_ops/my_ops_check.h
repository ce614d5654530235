/* my_ops_check.h: what the CPU and the CUDA kernels both require of their tensors, and the
 * result tensor both make. */
#ifndef MY_OPS_CHECK_H
#define MY_OPS_CHECK_H

#include "my_ops.h"

/* The kernels handle float32 in contiguous memory; anything else is the caller's error, said
 * through the runtime's message (sg_last_error) rather than printed. */
static inline sg_status my_ops_check(const char *op, const char *arg, const sg_tensor *t) {
    if (t->dtype != SG_FLOAT32)
        return sg_error(SG_EINVAL, "%s: %s must be float32, not %s", op, arg,
                        sg_dtype_name((sg_dtype)t->dtype));
    if (!sg_tensor_is_contiguous(t))
        return sg_error(SG_EINVAL, "%s: %s must be contiguous", op, arg);
    return SG_OK;
}

/* The result of a functional kernel: a new float32 tensor like x (its sizes and device), x
 * checked first. */
static inline sg_status my_ops_new_like(const char *op, sg_tensor *x, sg_tensor **y) {
    sg_status st = my_ops_check(op, "x", x);
    return st ? st : sg_tensor_empty(x->sizes, x->ndim, SG_FLOAT32, x->device, y);
}

#endif
