# silu_mul: out = silu(gate) * up = gate / (1 + exp(-gate)) * up, elementwise over 1-D tensors
# of n elements (float32 or bfloat16; computed in float32, rounded once to out's dtype). One
# thread per element, THREADS threads per block. n is the tensor's int32 size and may be up to
# 2^31 - 1, so the index bound and the block count are written so that no int32 sum overflows.
import cutlass
import cutlass.cute as cute
import cuda.bindings.driver as cuda

THREADS = 256


@cute.kernel
def _silu_mul_kernel(gate: cute.Tensor, up: cute.Tensor, out: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    # i < n for i = bidx * THREADS + tidx, without forming i past n
    if bidx * THREADS < n - tidx:
        i = bidx * THREADS + tidx
        g = gate[i].to(cutlass.Float32)
        u = up[i].to(cutlass.Float32)
        y = g / (cutlass.Float32(1.0) + cute.math.exp(-g, fastmath=True)) * u
        out[i] = y.to(out.element_type)


@cute.jit
def silu_mul(gate: cute.Tensor, up: cute.Tensor, out: cute.Tensor, stream: cuda.CUstream):
    n = cute.size(gate, mode=[0])
    # ceil(n / THREADS) without n + THREADS - 1
    blocks = n // THREADS + (n % THREADS + THREADS - 1) // THREADS
    _silu_mul_kernel(gate, up, out, n).launch(grid=[blocks, 1, 1], block=[THREADS, 1, 1],
                                              stream=stream)
