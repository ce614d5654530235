import cutlass
import cutlass.cute as cute
import cuda.bindings.driver as cuda

THREADS = 256

@cute.kernel
def _silu_mul_kernel(gate: cute.Tensor, up: cute.Tensor, out: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    if i < n:
        g = gate[i].to(cutlass.Float32)
        u = up[i].to(cutlass.Float32)
        y = g / (cutlass.Float32(1.0) + cute.math.exp(-g, fastmath=True)) * u
        out[i] = y.to(out.element_type)

@cute.jit
def silu_mul(gate: cute.Tensor, up: cute.Tensor, out: cute.Tensor, stream: cuda.CUstream):
    n = cute.size(gate, mode=[0])
    _silu_mul_kernel(gate, up, out, n).launch(grid=[(n + THREADS - 1) // THREADS, 1, 1],
                                              block=[THREADS, 1, 1], stream=stream)
