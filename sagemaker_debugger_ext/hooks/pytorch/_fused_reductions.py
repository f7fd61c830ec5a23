"""Reductions of CUDA tensors in one pass: a Triton kernel reads each value once.

The batched path (``_batched_reductions``) copies every tensor into a float64 workspace and
reads it again for each quantity: about 76 bytes of memory traffic and 15 kernel launches per
4 M values. For a model of 100 M parameters that is 41 workspace parts and 600 launches per
batch, 11 ms of GPU time on an H100 (``bench_lm_gpu``), longer than the training step. Here
the tensors of a batch (dense in memory in some order of their dimensions; float32, float64,
float16 or bfloat16; at least ``MIN_VALUES`` values) are read once, by one kernel launch per
dtype: each program of ``BLOCK`` values of one tensor converts them to float64 and writes the
block's min, max, sum, sum of squares, NaN count, and the same of the absolute values, plus
the block's sum of squared deviations from its own mean (the two-pass variance within the
block, from values already in registers). A few torch calls then combine the blocks per
tensor: min and max exactly (NaN when a block counted one, as NumPy), sums in float64, and the
variance by the exact parallel formula ``M2 = sum(M2_b) + sum(n_b (mean_b - mean)^2)``. The
values are those of the NumPy path to the last place of the stored dtype (sums in another
order), as the batched path's on CUDA (``tests/pytorch/test_pytorch_cuda.py``).

The launches, not the memory traffic, are what a step pays for on a GPU (each torch call or
launch costs tens of microseconds of the training thread's time, which a model of a few
hundred kernels a step is bound by), so the number of calls per batch does not depend on its
number of tensors: the kernel finds each program's tensor in tables kept on the device per
batch layout (:class:`_Plan`; the tensors' addresses are a small table kept per set of
addresses, which changes only when the tensors are made again). On an H100 this took the
reductions-only hook's overhead on a 100 M-parameter GPT-2 from 0.60 to 0.30-0.33 of the step
(``benchmarks/results_gpu.json``).

Other dtypes (float8), strided views with gaps, products (``prod``), CPU tensors and machines
without Triton keep the batched path; :func:`reduce_mixed` runs both and returns one table in
the tensors' order. Triton comes with PyTorch's CUDA wheels on Linux; it is imported on the
first CUDA batch only, and its kernel is compiled then (once per dtype). Without a GPU the
kernel runs under Triton's interpreter (``TRITON_INTERPRET=1``), which the tests use where
Triton is installed.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
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
#: the fewest values a tensor has to take the fused kernel (every tensor: one launch per dtype
#: costs less than the batched path's calls; measured on an H100, ``benchmarks/results_gpu.json``)
MIN_VALUES = 1
#: the device type the kernel runs on (Triton's interpreter runs it on CPU tensors: the tests)
DEVICE = "cuda"
_DTYPE_ORDER = {torch.float32: 0, torch.bfloat16: 1, torch.float16: 2, torch.float64: 3}
_DTYPES = frozenset(_DTYPE_ORDER)
#: the kernel's columns, in order (``_fused_kernel``)
_COLUMNS = ("min", "abs_min", "max", "abs_max", "sum", "l2", "abs_sum", "nan", "variance", "abs_variance")


@functools.cache
def _kernel() -> Any:
    """The kernel's launcher (``_fused_kernel.launch``), or None where Triton is not installed."""
    try:
        from ._fused_kernel import launch
    except ImportError:
        return None
    return launch


_failed: list[Exception] = []  # the fused path's first failure: the batched path from then on


def _fusable(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` takes the fused kernel: its values lie densely in memory in some
    order of its dimensions, from ``data_ptr()`` on (the kernel needs no view of it)."""
    if tensor.dtype not in _DTYPES or tensor.numel() < MIN_VALUES or tensor.device.type != DEVICE:
        return False
    return tensor.is_contiguous() or dense_flat(tensor) is not None


class _Plan:
    """Where each fused tensor of a batch (by dtypes, sizes and the batch's order; ``big`` in
    launch order: grouped by dtype) lies among the kernel's blocks, as device tensors made
    once: building them again each step would copy from the host and wait for the device.
    The tensors' addresses change when they are made again (gradients, after ``zero_grad``):
    a table of them is kept per set of addresses seen (a few)."""

    def __init__(
        self, device: torch.device, dtypes: Sequence[torch.dtype], sizes: Sequence[int], big: Sequence[int],
        rest: Sequence[int],
    ) -> None:  # fmt: skip
        self.device = device
        self.blocks = [-(-n // BLOCK) for n in sizes]
        self.lengths = torch.tensor(self.blocks, device=device)
        self.count = torch.tensor(sizes, dtype=_F64, device=device)
        total = sum(self.blocks)
        self.owner = torch.repeat_interleave(torch.arange(len(sizes), device=device), self.lengths, output_size=total)
        self.block_count = torch.full((total,), float(BLOCK), dtype=_F64, device=device)
        ends = torch.cumsum(self.lengths, 0) - 1  # each tensor's last block holds the rest
        self.block_count[ends] = self.count - (self.lengths - 1).to(_F64) * BLOCK
        # one launch per run of a dtype: (dtype, its first block, its blocks); a tensor's first
        # block is counted from its launch's first
        self.launches: list[tuple[torch.dtype, int, int]] = []
        first, start = [], 0
        for dtype, run in itertools.groupby(zip(dtypes, self.blocks, strict=True), key=lambda pair: pair[0]):
            launch_start = start
            for _, blocks in run:
                first.append(start - launch_start)
                start += blocks
            self.launches.append((dtype, launch_start, start - launch_start))
        self.owners = [self.owner[a : a + n] for _, a, n in self.launches]
        self.tables = (
            torch.tensor(first, dtype=torch.int64, device=device),
            torch.tensor(sizes, dtype=torch.int64, device=device),
        )
        order = [*big, *rest]
        self.order = None if order == sorted(order) else torch.tensor(order, device=device).argsort()
        self._addresses: dict[tuple[int, ...], torch.Tensor] = {}

    def addresses(self, tensors: Sequence[torch.Tensor]) -> torch.Tensor:
        """The device table of ``tensors``' addresses (kept for the next batch with the same)."""
        key = tuple([t.data_ptr() for t in tensors])
        table = self._addresses.get(key)
        if table is None:
            if len(self._addresses) >= _MAX_PLANS:
                self._addresses.clear()
            host = torch.tensor(key, dtype=torch.int64)
            if self.device.type == "cuda":
                host = host.pin_memory()
            with torch.inference_mode(False):
                table = self._addresses[key] = host.to(self.device, non_blocking=True)
        return table


_PLANS: dict[tuple[Any, ...], _Plan] = {}
_MAX_PLANS = 32


def _plan(
    device: torch.device, dtypes: Sequence[torch.dtype], sizes: Sequence[int], big: Sequence[int], rest: Sequence[int]
) -> _Plan:
    key = (device, tuple(dtypes), tuple(sizes), tuple(big), tuple(rest))
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        with torch.inference_mode(False):  # normal tensors, also when first made under inference_mode
            plan = _PLANS[key] = _Plan(device, dtypes, sizes, big, rest)
    return plan


def fused_quantities(tensors: Sequence[torch.Tensor], names: Sequence[str], plan: _Plan) -> dict[str, torch.Tensor]:
    """The base quantities ``names`` (see ``quantities``) of each tensor of ``tensors`` (one
    device, dense, supported dtypes, no ``prod``, grouped by dtype; ``plan``: their blocks), as
    ``reduce_tensors`` computes them before ``derive``: one kernel launch per dtype, then a few
    torch calls."""
    launch = _kernel()
    device = tensors[0].device
    out = torch.empty(len(plan.owner), len(_COLUMNS), dtype=_F64, device=device)
    tables = (plan.addresses(tensors), *plan.tables)
    # Triton launches on the current device: the tensors' own (a model spread over GPUs)
    with torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext():
        for (dtype, start, blocks), owner in zip(plan.launches, plan.owners, strict=True):
            launch(dtype, tables, owner, out[start : start + blocks], BLOCK)

    def per_tensor(values: torch.Tensor, how: str) -> torch.Tensor:
        return torch.segment_reduce(values, how, lengths=plan.lengths, axis=0, unsafe=True)

    with torch.no_grad():  # each group of columns combined per tensor in one call
        sums = per_tensor(out[:, 4:8], "sum")
        extremes = torch.cat([per_tensor(out[:, 0:2], "min"), per_tensor(out[:, 2:4], "max")], dim=1)
        extremes.masked_fill_(sums[:, 3:4] > 0, float("nan"))  # NaN where a tensor holds one, as NumPy
        columns = zip(_COLUMNS, (*extremes.unbind(1), *sums.unbind(1)), strict=False)
        q = {name: values for name, values in columns if name in names}  # derive() uses each it is given
        q["count"] = count = plan.count
        for name in ("variance", "abs_variance"):
            if name in names:  # M2 = sum(M2_b) + sum(n_b (mean_b - mean)^2), mean_b = sum_b / n_b
                block_sums = out[:, _COLUMNS.index(name.removesuffix("variance") + "sum")]
                mean = q[name.removesuffix("variance") + "sum"] / count
                deviations = plan.block_count * (block_sums / plan.block_count - mean[plan.owner]).square()
                q[name] = per_tensor(out[:, _COLUMNS.index(name)] + deviations, "sum")
    return q


def reduce_mixed(tensors: Sequence[torch.Tensor], ops: Ops, workspace: Workspace | None = None) -> torch.Tensor:
    """``reduce_tensors(tensors, ops, workspace)``'s table, the large dense CUDA tensors reduced
    by the fused kernel (see the module doc) and the others by the batched path."""
    names = quantities(ops)
    if "prod" in names or "abs_prod" in names or not tensors or tensors[0].device.type != DEVICE:
        return reduce_tensors(tensors, ops, workspace)
    big = [i for i, t in enumerate(tensors) if _fusable(t)]
    if not big or _failed or _kernel() is None:
        return reduce_tensors(tensors, ops, workspace)
    dtypes = [tensors[i].dtype for i in big]
    if len(set(dtypes)) > 1:  # one launch per dtype
        big.sort(key=lambda i: _DTYPE_ORDER[tensors[i].dtype])
        dtypes.sort(key=_DTYPE_ORDER.__getitem__)
    taken = set(big) if len(big) < len(tensors) else None
    rest = [i for i in range(len(tensors)) if i not in taken] if taken is not None else []
    plan = _plan(tensors[0].device, dtypes, [tensors[i].numel() for i in big], big, rest)
    try:
        table = derive(fused_quantities([tensors[i] for i in big], names, plan), ops)
    except torch.OutOfMemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - Triton could not compile or launch here: never the training's error
        _failed.append(exc)
        _LOG.warning("fused CUDA reductions unavailable (%s: %s): batched reductions from now on",
                     type(exc).__name__, exc)  # fmt: skip
        return reduce_tensors(tensors, ops, workspace)
    if rest:
        table = torch.cat([table, reduce_tensors([tensors[i] for i in rest], ops, workspace)])
    return table if plan.order is None else table.index_select(0, plan.order)
