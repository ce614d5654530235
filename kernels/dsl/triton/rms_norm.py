"""rms_norm.py: RMS normalisation of rows (aten::_fused_rms_norm, forward).

One program per row of BLOCK elements (BLOCK is the row length, a power of two); the sum of
squares is accumulated in float32. As aten's CUDA kernel: rstd = rsqrt(mean(x^2) + eps) per row,
y = x * rstd * w rounded once to y's dtype, rstd kept in float32.
"""
import triton
import triton.language as tl


@triton.jit
def rms_norm_fwd(x, w, y, rstd, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    xv = tl.load(x + row * BLOCK + cols).to(tl.float32)
    r = tl.rsqrt(tl.sum(xv * xv, axis=0) / BLOCK + eps)
    wv = tl.load(w + cols).to(tl.float32)
    tl.store(y + row * BLOCK + cols, (xv * r * wv).to(y.dtype.element_ty))
    tl.store(rstd + row, r)
