"""softmax.py: softmax over the last dimension of rows (aten::_softmax, forward).

One program per row of BLOCK elements (the row length, a power of two); the maximum, the
exponentials and their sum in float32, the result rounded once to y's dtype.
"""
import triton
import triton.language as tl


@triton.jit
def softmax_fwd(x, y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * BLOCK + cols).to(tl.float32)
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + row * BLOCK + cols, (e / tl.sum(e, axis=0)).to(y.dtype.element_ty))
