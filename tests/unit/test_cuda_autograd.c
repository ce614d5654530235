/* test_cuda_autograd.c: test_cpu_autograd's cases with every tensor on the GPU (skips without
 * one). */
#define SG_AG_CUDA 1
#include "test_cpu_autograd.c"
