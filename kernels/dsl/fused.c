/* fused.c: the fused library (schemas/fused.yaml): ops that exist only as DSL kernels. Its init
 * defines the ops, registers the aten CUDA kernels it builds on, then the DSL kernels. */
#include "sg_fused.h"

#include "fused.h"
#include "fused_dsl.h"
#include "sg_aten_cuda.h"

/* silu_mul.yaml's when_c: gate and up have the same sizes. Pure, as a predicate must be.
 * Declared by fused_dsl.h too where that declaration is built. */
bool fused_same_sizes(sg_tensor *gate, sg_tensor *up);
bool fused_same_sizes(sg_tensor *gate, sg_tensor *up) {
    if (!gate || !up || gate->ndim != up->ndim) return false;
    for (int32_t d = 0; d < gate->ndim; d++)
        if (gate->sizes[d] != up->sizes[d]) return false;
    return true;
}

sg_status sg_fused_init(void) {
    sg_status st = sg_aten_cuda_init();
    if (!st) st = fused_init();
    if (!st) st = fused_dsl_init();
    return st;
}
