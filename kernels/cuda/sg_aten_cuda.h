/* sg_aten_cuda.h: the aten library with its CUDA kernels (and its CPU ones). */
#ifndef SG_ATEN_CUDA_H
#define SG_ATEN_CUDA_H

#include "sg_aten_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defines the aten ops, registers every CPU kernel (sg_aten_cpu_init) and every CUDA kernel.
 * Call once before any op. Works without a GPU: the CUDA kernels are then never reached, as no
 * CUDA tensor can be made. */
sg_status sg_aten_cuda_init(void);

#ifdef __cplusplus
}
#endif
#endif
