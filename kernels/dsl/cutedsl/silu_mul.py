# silu_mul: out = silu(gate) * up = gate / (1 + exp(-gate)) * up, elementwise over 1-D tensors
# of n elements (float32 or bfloat16; computed in float32, rounded once to out's dtype).
#
# silu_mul: one element per thread, any n. silu_mul_vec8: eight adjacent elements per thread,
# for n a multiple of 8 (the declaration's predicate says so): with the tensors 16-byte aligned,
# each thread's eight are one 16-byte load or store (two in float32), where one element per
# thread is a 2-byte access in bfloat16 that leaves the memory system half idle.
#
# THREADS threads per block. n is the tensor's int32 size and may be up to 2^31 - 1, so the
# index bounds and the block counts are written so that no int32 sum overflows.
import cutlass
import cutlass.cute as cute
import cuda.bindings.driver as cuda

THREADS = 256
VEC = 8


def _silu_times(g, u):
    return g / (cutlass.Float32(1.0) + cute.math.exp(-g, fastmath=True)) * u


def _blocks(n):
    # ceil(n / THREADS) without n + THREADS - 1
    return n // THREADS + (n % THREADS + THREADS - 1) // THREADS


@cute.kernel
def _silu_mul_kernel(gate: cute.Tensor, up: cute.Tensor, out: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    # i < n for i = bidx * THREADS + tidx, without forming i past n
    if bidx * THREADS < n - tidx:
        i = bidx * THREADS + tidx
        y = _silu_times(gate[i].to(cutlass.Float32), up[i].to(cutlass.Float32))
        out[i] = y.to(out.element_type)


@cute.jit
def silu_mul(gate: cute.Tensor, up: cute.Tensor, out: cute.Tensor, stream: cuda.CUstream):
    n = cute.size(gate, mode=[0])
    _silu_mul_kernel(gate, up, out, n).launch(grid=[_blocks(n), 1, 1], block=[THREADS, 1, 1],
                                              stream=stream)


@cute.kernel
def _silu_mul_vec_kernel(gate: cute.Tensor, up: cute.Tensor, out: cute.Tensor,
                         tiles: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    # tile t < tiles for t = bidx * THREADS + tidx, as above
    if bidx * THREADS < tiles - tidx:
        t = bidx * THREADS + tidx
        y = _silu_times(gate[(None, t)].load().to(cutlass.Float32),
                        up[(None, t)].load().to(cutlass.Float32))
        out[(None, t)].store(y.to(out.element_type))


@cute.jit
def silu_mul_vec8(gate: cute.Tensor, up: cute.Tensor, out: cute.Tensor, stream: cuda.CUstream):
    # (VEC, n / VEC): column t is the t-th run of VEC adjacent elements
    g = cute.zipped_divide(gate, (VEC,))
    u = cute.zipped_divide(up, (VEC,))
    o = cute.zipped_divide(out, (VEC,))
    tiles = cute.size(g, mode=[1])
    _silu_mul_vec_kernel(g, u, o, tiles).launch(grid=[_blocks(tiles), 1, 1],
                                                block=[THREADS, 1, 1], stream=stream)
