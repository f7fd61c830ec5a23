"""Reductions of a sharded tensor from its shards: one logical value, no gathered tensor.

Each rank reduces its own shard into partial statistics in float64 (count, sum, sum of
squares, sum of absolute values, min, max, product); two or three ``all_reduce`` calls for
all of a step's parameters together (SUM, MAX of ``(-min, max)``, PRODUCT only when ``prod``
is asked) combine them, and every rank derives the reductions of the whole tensor:
``mean = sum / n``, ``variance = sumsq / n - mean**2`` (population variance, as numpy's),
``std``, ``l1``, ``l2 = sqrt(sumsq)``. They equal the reductions of the gathered tensor up
to floating-point rounding; a zero-length tensor gives what ``_reductions`` documents
(NaN for min/max/mean/std/variance). Results are cast to the parameter's float dtype
(bfloat16 and float16 to float32), as the hook stores reductions of whole tensors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

__all__ = ["SUPPORTED", "reduce_shards"]

SUPPORTED = frozenset({"min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2"})
_SUMS = 4  # count, sum, sumsq, abs sum


def _result_dtype(dtype: torch.dtype) -> np.dtype[np.floating]:
    if dtype in (torch.float64,):
        return np.dtype(np.float64)
    return np.dtype(np.float32)  # float32, and bfloat16 / float16 reduced in float32


def _finish(op: str, n: float, total: float, sumsq: float, l1: float, lo: float, hi: float, prod: float) -> float:
    if n == 0 and op in ("min", "max", "mean", "std", "variance"):
        return math.nan
    mean = total / n if n else math.nan
    variance = max(sumsq / n - mean * mean, 0.0) if n else math.nan
    return {
        "min": lo, "max": hi, "mean": mean, "variance": variance, "std": math.sqrt(variance),
        "sum": total, "prod": prod, "l1": l1, "l2": math.sqrt(sumsq),
    }[op]  # fmt: skip


def reduce_shards(
    shards: Sequence[torch.Tensor], wanted: Sequence[Sequence[tuple[str, bool]]], group: object = None
) -> list[dict[tuple[str, bool], np.ndarray]]:
    """The reductions ``wanted[i]`` (``(op, abs)`` pairs) of each logical tensor whose local
    shard is ``shards[i]``. Collective: every rank calls it with the same ``wanted``.

    Raises:
        ValueError: an op outside :data:`SUPPORTED` (callers check first).
    """
    dist = torch.distributed
    ops = [{op for op, _ in pairs} for pairs in wanted]
    bad = set().union(*ops) - SUPPORTED if ops else set()
    if bad:
        msg = f"'reduction' must be one of {sorted(SUPPORTED)} for a sharded tensor (got {sorted(bad)!r})"
        raise ValueError(msg)
    # two rows per tensor: plain values, absolute values; on the shards' device (NCCL needs CUDA tensors)
    where = {"dtype": torch.float64, "device": shards[0].device if shards else None}
    sums = torch.zeros(len(shards), 2, _SUMS, **where)  # type: ignore[arg-type]
    extremes = torch.full((len(shards), 2, 2), -math.inf, **where)  # type: ignore[arg-type]  # (-min, max)
    need_prod = any("prod" in o for o in ops)
    prods = torch.ones(len(shards), 2, **where)  # type: ignore[arg-type]
    for i, shard in enumerate(shards):
        flat = shard.detach().reshape(-1).to(torch.float64)
        for j, part in enumerate((flat, flat.abs())):
            if part.numel():
                sums[i, j, 0] = float(part.numel())
                sums[i, j, 1:] = torch.stack([part.sum(), (part * part).sum(), part.abs().sum()])
                extremes[i, j, 0], extremes[i, j, 1] = -part.min(), part.max()
                if need_prod:
                    prods[i, j] = part.prod()
    dist.all_reduce(sums, op=dist.ReduceOp.SUM, group=group)
    dist.all_reduce(extremes, op=dist.ReduceOp.MAX, group=group)
    if need_prod:
        dist.all_reduce(prods, op=dist.ReduceOp.PRODUCT, group=group)
    sums, extremes, prods = sums.cpu(), extremes.cpu(), prods.cpu()  # one copy each, then plain floats
    out = []
    for i, pairs in enumerate(wanted):
        dtype = _result_dtype(shards[i].dtype)
        result = {}
        for op, is_abs in pairs:
            j = int(is_abs)
            n, total, sumsq, l1 = (float(v) for v in sums[i, j])
            value = _finish(
                op, n, total, sumsq, l1, -float(extremes[i, j, 0]), float(extremes[i, j, 1]), float(prods[i, j])
            )
            result[(op, is_abs)] = np.asarray(value, dtype=dtype)
        out.append(result)
    return out
