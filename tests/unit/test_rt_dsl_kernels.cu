// test_rt_dsl_kernels.cu: kernels for test_rt_dsl_cuda.c, built with nvcc -cubin for the GPU's
// architecture and for another one (an image the GPU cannot load), and loaded as DSL artifacts.

// One count per block: the number of blocks a launch ran.
extern "C" __global__ void dsl_test_count(unsigned *counter) {
    if (threadIdx.x == 0) atomicAdd(counter, 1u);
}

// Writes every byte of its dynamic shared memory (nbytes of it), then checks them all: out[0]
// gets nbytes where all were there, 0 where not.
extern "C" __global__ void dsl_test_shared(unsigned *out, unsigned nbytes) {
    extern __shared__ unsigned char smem[];
    for (unsigned i = threadIdx.x; i < nbytes; i += blockDim.x) smem[i] = (unsigned char)(i * 7u);
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned ok = 1;
        for (unsigned i = 0; i < nbytes; i++) ok &= smem[i] == (unsigned char)(i * 7u);
        out[blockIdx.x] = ok ? nbytes : 0u;
    }
}
