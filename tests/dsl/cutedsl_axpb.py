# A CuTeDSL kernel with a scalar of each type and a constexpr, for tests/dsl_export.sh:
# y = x * a + b + k + m over the first m elements, in blocks of BLOCK threads.
import cutlass
import cutlass.cute as cute
import cuda.bindings.driver as cuda


@cute.kernel
def _axpb_kernel(x: cute.Tensor, y: cute.Tensor, a: cutlass.Float32, b: cutlass.Float64,
                 k: cutlass.Int64, m: cutlass.Int32, BLOCK: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * BLOCK + tidx
    if i < m:
        v = x[i] * a + cutlass.Float32(b) + cutlass.Float32(k) + cutlass.Float32(m)
        y[i] = v.to(y.element_type)


@cute.jit
def axpb(x: cute.Tensor, y: cute.Tensor, a: cutlass.Float32, b: cutlass.Float64,
         k: cutlass.Int64, m: cutlass.Int32, BLOCK: cutlass.Constexpr, stream: cuda.CUstream):
    _axpb_kernel(x, y, a, b, k, m, BLOCK).launch(grid=[(m + BLOCK - 1) // BLOCK, 1, 1],
                                                 block=[BLOCK, 1, 1], stream=stream)
