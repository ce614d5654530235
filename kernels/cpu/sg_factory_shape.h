/* sg_factory_shape.h: the factories' and random ops' option and size checks, arange's element
 * count and the random ops' parameter checks, shared by the CPU kernels (factory.c) and the
 * CUDA ones (kernels/cuda/factory.cu, random.cu), so both give aten's messages from one place.
 * Where aten names the kernel in a message ("arange_cpu", "normal_kernel_cuda"), the caller
 * passes that name. (sg_checks.h holds the checks other kernels share too.) */
#ifndef SG_FACTORY_SHAPE_H
#define SG_FACTORY_SHAPE_H

#include "sg_checks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A factory's options: dtype and device. */
typedef struct sg_factory_opts {
    sg_dtype  dtype;
    sg_device dev;
} sg_factory_opts;

/* aten's check_size_nonnegative (and at most SG_MAX_DIMS dims) */
sg_status sg_factory_check_sizes(const char *op, sg_int_list size);
/* dtype (default def), strided layout only, device (default defdev: the CPU, or a _like op's
 * input's device) */
sg_status sg_factory_options(const char *op, const sg_dtype *dtype, sg_dtype def,
                             const sg_layout *layout, const sg_device *device, sg_device defdev,
                             sg_factory_opts *o);
/* full's dtype where none is given: from the value's kind (the default dtype for floats) */
sg_dtype  sg_factory_scalar_dtype(sg_scalar v);
/* arange's dtype where none is given: float32 where any bound is a float, else int64 */
sg_dtype  sg_factory_arange_dtype(sg_scalar start, sg_scalar end, sg_scalar step);
/* The refusal of a names= argument. */
sg_status sg_factory_no_names(const char *op, const sg_str_list *names);
/* aten's arange_out: checks, then the element count; kernel names the backend's kernel in the
 * dtype message. */
sg_status sg_factory_arange_size(const char *kernel, sg_scalar start, sg_scalar end,
                                 sg_scalar step, sg_dtype t, int64_t *size);

/* uniform_'s checks of dtype t and [from, to), then *fa and *fd: from and to - from as t's
 * float arithmetic has them (float32: rounded to float; the 16-bit floats: rounded to t as
 * c10::Half and BFloat16 values are; float64: unused). */
sg_status sg_factory_uniform_check(sg_dtype t, double from, double to, float *fa, float *fd);
/* normal_'s checks of std and self's dtype; kernel names the backend's kernel. */
sg_status sg_factory_normal_check(const char *kernel, const sg_tensor *self, double std);
/* bernoulli_'s check of a float p. */
sg_status sg_factory_bernoulli_p_check(double p);

/* A backend's part of normal with tensor arguments: whether every element of std is >= 0
 * (*ok), and normal_(t, mean, std) on t in place. */
typedef sg_status (*sg_factory_std_ok_fn)(sg_tensor *std, bool *ok);
typedef sg_status (*sg_factory_normal_fn)(sg_tensor *t, double mean, double std,
                                          sg_generator *gen);

/* normal with tensor mean and/or std (aten's normal_out_impl; a NULL tensor takes the double
 * beside it): the checks, out (or a new tensor of the first tensor's dtype and device) takes
 * the broadcast shape and standard normals (scaled by a float std), then out * std + mean by
 * the dispatched pointwise ops. */
sg_status sg_factory_normal_tensors(sg_tensor *mean_t, double mean, sg_tensor *std_t,
                                    double std, sg_generator *gen, sg_tensor *out,
                                    sg_factory_std_ok_fn std_ok, sg_factory_normal_fn draw,
                                    sg_tensor **ret);

#ifdef __cplusplus
}
#endif
#endif
