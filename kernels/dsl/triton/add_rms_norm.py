"""add_rms_norm.py: a residual add and RMS normalisation in one pass (sg::add_rms_norm).

One program per row of BLOCK elements (the row length, a power of two). s = x + residual is
rounded to the input dtype and written, and the normalisation reads that rounded sum, so the
result equals an add followed by rms_norm; y = s * rsqrt(mean(s^2) + eps) * w, accumulated in
float32 and rounded once to y's dtype.
"""
import triton
import triton.language as tl


@triton.jit
def add_rms_norm_fwd(x, residual, w, y, s, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    xv = tl.load(x + row * BLOCK + cols).to(tl.float32)
    rv = tl.load(residual + row * BLOCK + cols).to(tl.float32)
    sv = (xv + rv).to(s.dtype.element_ty)
    tl.store(s + row * BLOCK + cols, sv)
    sf = sv.to(tl.float32)
    r = tl.rsqrt(tl.sum(sf * sf, axis=0) / BLOCK + eps)
    wv = tl.load(w + cols).to(tl.float32)
    tl.store(y + row * BLOCK + cols, (sf * r * wv).to(y.dtype.element_ty))
