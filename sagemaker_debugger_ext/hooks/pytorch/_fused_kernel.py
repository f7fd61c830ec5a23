"""The Triton kernel of ``_fused_reductions`` (imported only where Triton is installed).

One launch reads every tensor of a batch that shares a dtype. Program ``p`` reads ``BLOCK``
values of tensor ``owner[p]`` once (the tensor's address is read from ``addresses``, its
length from ``lengths``, and ``p - first[tensor]`` is the block's place in it), converts them
to float64 and writes ten float64 columns at ``out_ptr + 10 * p``: min and min of the
absolute values; max and max of the absolute values; sum, sum of squares, sum of the absolute
values and the number of NaN values; the sums of squared deviations from the block's own mean
of the values and of their absolute values (grouped so that each group is combined per tensor
by one call: ``_fused_reductions``).

One launch per batch, not per tensor: a launch costs tens of microseconds of host time,
more than the kernel takes to read a tensor of a few million values on a current GPU.
"""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

__all__ = ["launch", "partials"]

_TL = {torch.float32: tl.float32, torch.float64: tl.float64, torch.float16: tl.float16, torch.bfloat16: tl.bfloat16}


def launch(
    dtype: torch.dtype, tables: tuple[torch.Tensor, ...], owner: torch.Tensor, out: torch.Tensor, block: int
) -> None:
    """One launch of :func:`partials` over the ``len(owner)`` blocks of tensors of ``dtype``
    (``tables``: their addresses, first blocks and lengths, indexed by ``owner``'s values)."""
    grid: Any = (owner.numel(),)
    partials[grid](*tables, owner, out, DTYPE=_TL[dtype], BLOCK=block)


@triton.jit
def partials(addresses, first, lengths, owner, out_ptr, DTYPE: tl.constexpr, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
    pid = tl.program_id(0).to(tl.int64)
    tensor = tl.load(owner + pid)
    n = tl.load(lengths + tensor)
    start = (pid - tl.load(first + tensor)) * BLOCK
    x_ptr = tl.load(addresses + tensor).to(tl.pointer_type(DTYPE), bitcast=True)
    offs = start + tl.arange(0, BLOCK)
    valid = offs < n
    if DTYPE == tl.float64:
        x = tl.load(x_ptr + offs, mask=valid, other=0.0)
    else:  # float32, float16, bfloat16: exact in float32, then in float64
        x = tl.load(x_ptr + offs, mask=valid, other=0.0).to(tl.float32).to(tl.float64)
    a = tl.abs(x)
    count = tl.minimum(n - start, BLOCK).to(tl.float64)
    s = tl.sum(x, axis=0)
    sa = tl.sum(a, axis=0)
    d = tl.where(valid, x - s / count, 0.0)
    da = tl.where(valid, a - sa / count, 0.0)
    out = out_ptr + pid * 10
    tl.store(out + 0, tl.min(tl.where(valid, x, float("inf")), axis=0))
    tl.store(out + 1, tl.min(tl.where(valid, a, float("inf")), axis=0))
    tl.store(out + 2, tl.max(tl.where(valid, x, -float("inf")), axis=0))
    tl.store(out + 3, tl.max(tl.where(valid, a, -float("inf")), axis=0))
    tl.store(out + 4, s)
    tl.store(out + 5, tl.sum(x * x, axis=0))
    tl.store(out + 6, sa)
    tl.store(out + 7, tl.sum(tl.where(valid & (x != x), 1.0, 0.0), axis=0))
    tl.store(out + 8, tl.sum(d * d, axis=0))
    tl.store(out + 9, tl.sum(da * da, axis=0))
