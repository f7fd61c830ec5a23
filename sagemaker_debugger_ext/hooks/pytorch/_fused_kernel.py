"""The Triton kernel of ``_fused_reductions`` (imported only where Triton is installed).

Each program reads ``BLOCK`` values of one tensor once, converts them to float64 and writes
ten float64 columns at ``out_ptr + 10 * program``: min, max, sum, sum of squares, sum of
squared deviations from the block's own mean, the same five of the absolute values (min, max,
sum, deviations; squares are shared), and the number of NaN values.
"""

from __future__ import annotations

import triton
import triton.language as tl

__all__ = ["partials"]


@triton.jit
def partials(x_ptr, out_ptr, n, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    valid = offs < n
    if x_ptr.dtype.element_ty == tl.float64:
        x = tl.load(x_ptr + offs, mask=valid, other=0.0)
    else:  # float32, float16, bfloat16: exact in float32, then in float64
        x = tl.load(x_ptr + offs, mask=valid, other=0.0).to(tl.float32).to(tl.float64)
    a = tl.abs(x)
    count = tl.minimum(n - pid * BLOCK, BLOCK).to(tl.float64)
    s = tl.sum(x, axis=0)
    sa = tl.sum(a, axis=0)
    d = tl.where(valid, x - s / count, 0.0)
    da = tl.where(valid, a - sa / count, 0.0)
    out = out_ptr + pid * 10
    tl.store(out + 0, tl.min(tl.where(valid, x, float("inf")), axis=0))
    tl.store(out + 1, tl.max(tl.where(valid, x, -float("inf")), axis=0))
    tl.store(out + 2, s)
    tl.store(out + 3, tl.sum(x * x, axis=0))
    tl.store(out + 4, tl.sum(d * d, axis=0))
    tl.store(out + 5, tl.min(tl.where(valid, a, float("inf")), axis=0))
    tl.store(out + 6, tl.max(tl.where(valid, a, -float("inf")), axis=0))
    tl.store(out + 7, sa)
    tl.store(out + 8, tl.sum(da * da, axis=0))
    tl.store(out + 9, tl.sum(tl.where(valid & (x != x), 1.0, 0.0), axis=0))
