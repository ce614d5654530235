/* sg_fused.h: the fused library: ops defined only by schema (schemas/fused.yaml beside this
 * folder) whose CUDA implementation is a DSL kernel (add_rms_norm.yaml). */
#ifndef SG_FUSED_H
#define SG_FUSED_H

#include "sg_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defines the fused ops and registers their DSL kernels (and the aten CUDA kernels, once per
 * runtime epoch). A call that no DSL kernel takes fails with SG_ENOKERNEL. */
sg_status sg_fused_init(void);

#ifdef __cplusplus
}
#endif
#endif
