/* cuda.c: the CUDA backend. */
#include "rt_internal.h"
#include "sg_cuda.h"

const sg_device_impl *sg__cuda_impl(void) { return NULL; }

bool sg_cuda_available(const char **why) {
    if (why) *why = "this build has no CUDA support";
    return false;
}
