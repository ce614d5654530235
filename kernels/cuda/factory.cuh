/* factory.cuh: what the CUDA factories (factory.cu) and random ops (random.cu) share: the
 * option and size checks of kernels/cpu/factory.c, and the fill of a CUDA tensor. */
#ifndef SG_CU_FACTORY_CUH
#define SG_CU_FACTORY_CUH

#include "index.cuh"

/* A factory's options: dtype and device. */
struct sg_cu_opts {
    sg_dtype  dtype;
    sg_device dev;
};

/* aten's check_size_nonnegative */
sg_status sg_cu_check_sizes(const char *op, sg_int_list size);
/* dtype (default def), strided layout only, device (default defdev) */
sg_status sg_cu_options(const char *op, const sg_dtype *dtype, sg_dtype def,
                        const sg_layout *layout, const sg_device *device, sg_device defdev,
                        sg_cu_opts *o);
/* Gives an out= tensor the shape asked for, where it has another. */
sg_status sg_cu_resize_out(sg_tensor *out, const int64_t *sizes, int32_t n);
/* c10's non-overlapping-and-dense: the elements fill a span exactly, in some order. */
bool      sg_cu_dense(const sg_tensor *t);
/* Every element of t (CUDA, any strides) becomes the element at value (t's dtype). */
sg_status sg_cu_fill_bytes(sg_tensor *t, const void *value);

/* random.cu */
sg_status sg_cu_register_random(void);

#endif
