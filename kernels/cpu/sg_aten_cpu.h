/* sg_aten_cpu.h: the aten library with its CPU kernels. */
#ifndef SG_ATEN_CPU_H
#define SG_ATEN_CPU_H

#include "sg_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defines the aten ops (aten_init) and registers every CPU kernel. Call once before any op. */
sg_status sg_aten_cpu_init(void);

#ifdef __cplusplus
}
#endif
#endif
