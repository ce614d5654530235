/* test_cuda_autograd_helpers.c: test_cpu_autograd_helpers's cases on the GPU, against the CPU's
 * float64 gradients (skips without one). */
#define SG_AG_CUDA 1
#include "test_cpu_autograd_helpers.c"
