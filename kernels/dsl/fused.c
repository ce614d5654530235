/* fused.c: the fused library (schemas/fused.yaml): ops that exist only as DSL kernels. Its init
 * defines the ops, registers the aten CUDA kernels it builds on, then the DSL kernels. */
#include "sg_fused.h"

#include "fused.h"
#include "fused_dsl.h"
#include "sg_aten_cuda.h"

sg_status sg_fused_init(void) {
    sg_status st = sg_aten_cuda_init();
    if (!st) st = fused_init();
    if (!st) st = fused_dsl_init();
    return st;
}
