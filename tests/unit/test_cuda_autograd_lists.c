/* test_cuda_autograd_lists.c: test_cpu_autograd_lists's cases with every tensor on the GPU (skips
 * without one). */
#define SG_AG_CUDA 1
#include "test_cpu_autograd_lists.c"
