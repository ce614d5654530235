/* my_ops_cuda.cu: the CUDA kernels my_ops.yaml names under `CUDA:`. Written `extern "C"` with
 * the C types my_ops.h declares: a definition of another type is then a compile error here too
 * (without extern "C", C++ would take it for an overload and only the link would fail). */
#include "my_ops_check.h"

#include <cuda_runtime.h>

__global__ void affine_f32(const float *x, float *y, int64_t n, float scale, float shift) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * scale + shift;
}

/* y = x * scale + shift on x's device and the calling thread's current stream there; y is
 * allocated on the same device by the runtime. */
static sg_status launch(const sg_tensor *x, sg_tensor *y, float scale, float shift) {
    int64_t n = sg_tensor_numel(x);
    if (n == 0) return SG_OK;
    int prev = 0;
    cudaGetDevice(&prev);
    cudaSetDevice(x->device.index);
    const int threads = 256;
    affine_f32<<<(unsigned)((n + threads - 1) / threads), threads, 0,
                 (cudaStream_t)sg_cuda_current_stream()>>>(
        (const float *)sg_tensor_data(x), (float *)sg_tensor_data(y), n, scale, shift);
    cudaError_t e = cudaGetLastError();
    cudaSetDevice(prev);
    if (e != cudaSuccess)
        return sg_error(SG_EDEVICE, "my_ops: CUDA kernel launch failed: %s", cudaGetErrorString(e));
    return SG_OK;
}

static sg_status affine_new(const char *op, sg_tensor *x, double scale, double shift,
                            sg_tensor **ret) {
    sg_tensor *y = NULL;
    sg_status  st = my_ops_new_like(op, x, &y);
    if (st) return st;
    if ((st = launch(x, y, (float)scale, (float)shift))) {
        sg_tensor_release(y);
        return st;
    }
    *ret = y;
    return SG_OK;
}

extern "C" sg_status my_ops_short_cuda(sg_keyset ks, sg_tensor *x, sg_tensor **ret) {
    (void)ks;
    return affine_new("my_ops::short_kernel", x, 1.23, 0.0, ret);
}

extern "C" sg_status my_ops_short_out_cuda(sg_keyset ks, sg_tensor *x, sg_tensor *out,
                                           sg_tensor **ret) {
    (void)ks;
    sg_status st = my_ops_check("my_ops::short_kernel.out", "x", x);
    if (!st) st = sg_tensor_resize_out_(out, x->sizes, x->ndim);
    if (!st) st = my_ops_check("my_ops::short_kernel.out", "out", out);
    if (!st) st = launch(x, out, 1.23f, 0.0f);
    if (st) return st;
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

extern "C" sg_status my_ops_affine_cuda(sg_keyset ks, sg_tensor *x, double scale, double shift,
                                        sg_tensor **ret) {
    (void)ks;
    return affine_new("my_ops::affine", x, scale, shift, ret);
}
