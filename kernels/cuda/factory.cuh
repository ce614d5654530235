/* factory.cuh: what the CUDA factories (factory.cu) and random ops (random.cu) share: the
 * option and size checks they share with kernels/cpu/factory.c (sg_factory_shape.h), and the
 * fill of a CUDA tensor. */
#ifndef SG_CU_FACTORY_CUH
#define SG_CU_FACTORY_CUH

#include "index.cuh"
#include "sg_factory_shape.h"

/* Every element of t (CUDA, any strides) becomes the element at value (t's dtype). */
sg_status sg_cu_fill_bytes(sg_tensor *t, const void *value);

/* random.cu */
sg_status sg_cu_register_random(void);

#endif
