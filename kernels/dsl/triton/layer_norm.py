"""layer_norm.py: layer normalisation of rows (aten::native_layer_norm, forward).

One program per row of BLOCK elements (the row length, a power of two), in float32: the mean,
the biased variance from the centred values, rstd = rsqrt(var + eps), y = (x - mean) * rstd * w
+ b rounded once to y's dtype; mean and rstd kept in float32 per row, as aten's CUDA kernel.
"""
import triton
import triton.language as tl


@triton.jit
def layer_norm_fwd(x, w, b, y, mean, rstd, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    xv = tl.load(x + row * BLOCK + cols).to(tl.float32)
    mu = tl.sum(xv, axis=0) / BLOCK
    d = xv - mu
    r = tl.rsqrt(tl.sum(d * d, axis=0) / BLOCK + eps)
    wv = tl.load(w + cols).to(tl.float32)
    bv = tl.load(b + cols).to(tl.float32)
    tl.store(y + row * BLOCK + cols, (d * r * wv + bv).to(y.dtype.element_ty))
    tl.store(mean + row, mu)
    tl.store(rstd + row, r)
