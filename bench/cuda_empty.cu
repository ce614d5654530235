// cuda_empty.cu: the floor for a stream of small ops: the launch of a kernel that does nothing.
// Called from bench/cuda.c (C), hence the C linkage and the stream as void *.
#include <cuda_runtime.h>

namespace {
__global__ void sg_bench_empty_kernel() {}
}  // namespace

// One launch on `stream`. The caller checks cudaGetLastError once after its loop: a check per
// launch would add its own cost to the floor being measured.
extern "C" void sg_bench_empty_launch(void *stream) {
    sg_bench_empty_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>();
}
