"""Reductions of large CUDA tensors in one pass: a Triton kernel reads each value once.

The batched path (``_batched_reductions``) copies every tensor into a float64 workspace and
reads it again for each quantity: about 76 bytes of memory traffic and 15 kernel launches per
4 M values. For a model of 100 M parameters that is 41 workspace parts and 600 launches per
batch, 11 ms of GPU time on an H100 (``bench_lm_gpu``), longer than the training step. Here
each large tensor (at least ``MIN_VALUES`` values, dense in memory in some order of its
dimensions, float32, float64, float16 or bfloat16) is read once by one kernel launch: each
program of ``BLOCK`` values converts them to float64 and writes the block's min, max, sum,
sum of squares, NaN count, and the same of the absolute values, plus the block's sum of
squared deviations from its own mean (the two-pass variance within the block, from values
already in registers). A few torch calls then combine the blocks per tensor: min and max
exactly (NaN when a block counted one, as NumPy), sums in float64, and the variance by the
exact parallel formula ``M2 = sum(M2_b) + sum(n_b (mean_b - mean)^2)``. The values are those
of the NumPy path to the last place of the stored dtype (sums in another order), as the
batched path's on CUDA (``tests/pytorch/test_pytorch_cuda.py``).

Smaller tensors, other dtypes, strided views with gaps, products (``prod``), CPU tensors and
machines without Triton keep the batched path; :func:`reduce_mixed` runs both and returns one
table in the tensors' order. Triton comes with PyTorch's CUDA wheels on Linux; it is imported
on the first large CUDA tensor only, and its kernel is compiled then (once per dtype).
Without a GPU the kernel runs under Triton's interpreter (``TRITON_INTERPRET=1``), which the
tests use where Triton is installed.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Sequence
from typing import Any

import torch

from .._device_plan import Ops
from ._batched_reductions import Workspace, dense_flat, derive, quantities, reduce_tensors

__all__ = ["BLOCK", "DEVICE", "MIN_VALUES", "fused_quantities", "reduce_mixed"]

_LOG = logging.getLogger("sagemaker_debugger_ext.hooks")
_F64 = torch.float64
#: values per kernel program
BLOCK = 2048
#: the fewest values a tensor has to take the fused kernel (below, the batched path's few calls cost less)
MIN_VALUES = 1 << 20
#: the device type the kernel runs on (Triton's interpreter runs it on CPU tensors: the tests)
DEVICE = "cuda"
_DTYPES = frozenset({torch.float32, torch.float64, torch.float16, torch.bfloat16})
#: the kernel's columns, in order
_COLUMNS = ("min", "max", "sum", "l2", "variance", "abs_min", "abs_max", "abs_sum", "abs_variance", "nan")


@functools.cache
def _kernel() -> Any:
    """The Triton kernel (``_fused_kernel.partials``), or None where Triton is not installed."""
    try:
        from ._fused_kernel import partials
    except ImportError:
        return None
    return partials


_failed: list[Exception] = []  # the fused path's first failure: the batched path from then on


def _fusable(tensor: torch.Tensor) -> torch.Tensor | None:
    """``tensor``'s flat dense view when it takes the fused kernel, else None."""
    if tensor.device.type != DEVICE or tensor.dtype not in _DTYPES or tensor.numel() < MIN_VALUES:
        return None
    return dense_flat(tensor)


class _Plan:
    """Where each tensor of a batch (by sizes and the batch's order) lies among the kernel's
    blocks, as device tensors made once: building them again each step would copy from the
    host and wait for the device."""

    def __init__(self, device: torch.device, sizes: Sequence[int], big: Sequence[int], rest: Sequence[int]) -> None:
        self.blocks = [-(-n // BLOCK) for n in sizes]
        self.lengths = torch.tensor(self.blocks, device=device)
        self.count = torch.tensor(sizes, dtype=_F64, device=device)
        total = sum(self.blocks)
        self.owner = torch.repeat_interleave(torch.arange(len(sizes), device=device), self.lengths, output_size=total)
        self.block_count = torch.full((total,), float(BLOCK), dtype=_F64, device=device)
        ends = torch.cumsum(self.lengths, 0) - 1  # each tensor's last block holds the rest
        self.block_count[ends] = self.count - (self.lengths - 1).to(_F64) * BLOCK
        self.order = torch.tensor([*big, *rest], device=device).argsort() if rest else None


_PLANS: dict[tuple[Any, ...], _Plan] = {}
_MAX_PLANS = 32


def _plan(device: torch.device, sizes: Sequence[int], big: Sequence[int], rest: Sequence[int]) -> _Plan:
    key = (device, tuple(sizes), tuple(big), tuple(rest))
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        with torch.inference_mode(False):  # normal tensors, also when first made under inference_mode
            plan = _PLANS[key] = _Plan(device, sizes, big, rest)
    return plan


def fused_quantities(flats: Sequence[torch.Tensor], names: Sequence[str], plan: _Plan) -> dict[str, torch.Tensor]:
    """The base quantities ``names`` (see ``quantities``) of each flat tensor in ``flats`` (one
    device, supported dtypes, no ``prod``; ``plan``: their blocks), as ``reduce_tensors``
    computes them before ``derive``: one kernel launch per tensor, then a few torch calls."""
    kernel = _kernel()
    device = flats[0].device
    out = torch.empty(len(plan.owner), len(_COLUMNS), dtype=_F64, device=device)
    start = 0
    # Triton launches on the current device: the tensors' own (a model spread over GPUs)
    with torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext():
        for flat, b in zip(flats, plan.blocks, strict=True):
            kernel[(b,)](flat, out[start : start + b], flat.numel(), BLOCK=BLOCK)
            start += b
    col = dict(zip(_COLUMNS, out.unbind(1), strict=True))

    def per_tensor(values: torch.Tensor, how: str) -> torch.Tensor:
        return torch.segment_reduce(values, how, lengths=plan.lengths, unsafe=True)

    count, owner, block_count = plan.count, plan.owner, plan.block_count
    with torch.no_grad():
        q: dict[str, torch.Tensor] = {"count": count}
        has_nan = per_tensor(col["nan"], "sum") > 0
        for name in names:
            if name == "count":
                continue
            values = col[name]
            base = name.removeprefix("abs_")
            if base in ("min", "max"):
                q[name] = per_tensor(values, base).masked_fill(has_nan, float("nan"))
            elif base == "variance":
                sums = col[name.removesuffix("variance") + "sum"]
                mean = per_tensor(sums, "sum") / count
                q[name] = per_tensor(values + block_count * (sums / block_count - mean[owner]).square(), "sum")
            else:
                q[name] = per_tensor(values, "sum")
    return q


def reduce_mixed(tensors: Sequence[torch.Tensor], ops: Ops, workspace: Workspace | None = None) -> torch.Tensor:
    """``reduce_tensors(tensors, ops, workspace)``'s table, the large dense CUDA tensors reduced
    by the fused kernel (see the module doc) and the others by the batched path."""
    names = quantities(ops)
    if "prod" in names or "abs_prod" in names or not tensors or tensors[0].device.type != DEVICE:
        return reduce_tensors(tensors, ops, workspace)
    flats = [_fusable(t) for t in tensors]
    big = [i for i, f in enumerate(flats) if f is not None]
    if not big or _failed or _kernel() is None:
        return reduce_tensors(tensors, ops, workspace)
    rest = [i for i, f in enumerate(flats) if f is None]
    plan = _plan(tensors[0].device, [tensors[i].numel() for i in big], big, rest)
    try:
        table = derive(fused_quantities([f for f in flats if f is not None], names, plan), ops)
    except torch.OutOfMemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - Triton could not compile or launch here: never the training's error
        _failed.append(exc)
        _LOG.warning("fused CUDA reductions unavailable (%s: %s): batched reductions from now on",
                     type(exc).__name__, exc)  # fmt: skip
        return reduce_tensors(tensors, ops, workspace)
    if plan.order is None:
        return table
    small = reduce_tensors([tensors[i] for i in rest], ops, workspace)
    return torch.cat([table, small]).index_select(0, plan.order)
