"""Reductions of many tensors in a few torch calls: the tensors copied into one float64
workspace, reduced row by row, the rows' results combined per tensor.

A step's parameters are many tensors, most of them small (biases, norms' scales), and each
torch call costs a few microseconds however small its tensor (on CUDA, a kernel launch), so
five reductions of each tensor, one call each, cost more than the arithmetic. Here one call
(``torch._foreach_copy_``) copies the tensors of a batch into a float64 workspace where each
tensor starts a row of ``WIDTH`` values; each quantity is one call over all the rows
(``amin``, ``sum``, ...) and one ``segment_reduce`` from rows to tensors. The calls per batch
do not depend on the number of tensors (on CUDA the copy is one fused kernel when the batch's
tensors share a dtype and their layout; otherwise torch copies them one kernel each).

Values are those of the NumPy path: the workspace holds each value exactly in float64, sums
(of values, absolute values and squares) accumulate in float64, min and max are exact and NaN
when the tensor holds one, variances are two-pass (population) in float64. Sums are taken in
another order than NumPy's. A row's unused tail (after a tensor's last value) is set, before
each quantity, to a value that does not change it (0 for sums, 1 for products, the tensor's
first value for min and max, its mean for the variance).

Memory: the workspace holds at most ``MAX_VALUES`` values (float64, 32 MiB), whatever the
inputs: a batch with more values is reduced in several parts, and a tensor with more is
reduced in pieces of at most ``MAX_VALUES`` values (a 200 M-value embedding costs no 1.6 GB
temporary). A piece is a slice of the tensor's flat view, without a copy, when its values lie
densely in memory in some order of its dimensions (contiguous, transposed, channels-last:
every reduction here ignores the values' order); otherwise (a strided view with gaps) a range
of its first dimension, split again along the next one while still too large. Pieces are
reduced as tensors of their own (more rows and segments of the same calls); their results are
combined per tensor (min, max, sum, product, sum of squares directly; the variance by the
exact parallel formula in float64, ``M2 = sum(M2_i) + sum(n_i (mean_i - mean)^2)``). The
workspace is kept for the next batch with the layouts of the batches seen (which piece goes
where).

A part is copied (:func:`copy_part`) and reduced (:func:`reduce_part`) in two calls, so that
the copy can be made on one thread, when the values are defined, and the passes on another
(``_reduction_worker``, CPU). A staged layout (``Workspace.layout(..., staged=True)``, parts
of one dtype other than float64) copies into a buffer of that dtype at the same positions
(half the bytes of float64 or less, on the copying thread: at most ``MAX_VALUES`` values,
16 MiB for float32), which :func:`reduce_part` converts into the float64 workspace first
(a float32 stage's min and max are taken from the stage itself: exact, half the bytes; on
the CPU, a chunk of rows at a time, each passed over while it is in cache: ``_row_passes``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import torch

from .._device_plan import Ops, derivation
from ._row_passes import _F64, WIDTH, chunks, reduce_part

__all__ = [
    "MAX_VALUES",
    "WIDTH",
    "Batch",
    "Workspace",
    "copy_part",
    "dense_flat",
    "derive",
    "quantities",
    "reduce_part",
    "reduce_tensors",
]

#: the most values a workspace kept between batches holds (32 MiB of float64)
MAX_VALUES = 1 << 22
_MAX_LAYOUTS = 32


class _Layout:
    """Where each of a batch's tensors (by shape) lies in a ``(rows, WIDTH)`` workspace; with
    a ``stage`` (a buffer of the tensors' own dtype, same positions), where they are copied
    first (see :func:`copy_part`)."""

    def __init__(self, shapes: Sequence[torch.Size], storage: torch.Tensor, stage: torch.Tensor | None) -> None:
        device = storage.device
        sizes = [s.numel() for s in shapes]
        rows = [-(-n // WIDTH) for n in sizes]
        self.buffer = storage[: sum(rows) * WIDTH].view(-1, WIDTH)
        self.stage = None if stage is None else stage[: sum(rows) * WIDTH]
        flat = self.buffer.view(-1) if self.stage is None else self.stage
        pad: list[int] = []  # the padded tail's positions, their tensor, its first position
        owner: list[int] = []
        first: list[int] = []
        self.views = []  # where copy_part copies each tensor
        start = 0
        for i, (shape, n, r) in enumerate(zip(shapes, sizes, rows, strict=True)):
            self.views.append(flat[start : start + n].view(shape))
            tail = range(start + n, start + r * WIDTH)
            pad.extend(tail)
            owner.extend([i] * len(tail))
            first.extend([start] * len(tail))
            start += r * WIDTH

        def index(values: list[int]) -> torch.Tensor:
            return torch.tensor(values, dtype=torch.long, device=device)

        self.pad, self.pad_owner, self.pad_first = index(pad), index(owner), index(first)
        self.rows = index(rows)
        owners = torch.arange(len(sizes), device=device)
        self.row_owner = torch.repeat_interleave(owners, self.rows, output_size=sum(rows))
        self.count = torch.tensor(sizes, dtype=_F64, device=device)
        self.chunks = chunks(pad, sum(rows), device, self.pad)  # the rows' chunks (``_row_passes``)


_LayoutKey = tuple[torch.device, tuple[torch.Size, ...], torch.dtype | None]


class Workspace:
    """The float64 workspaces (one per device), the staging buffers (per device and dtype,
    see :meth:`layout`) and the layouts of the batches they have reduced."""

    def __init__(self) -> None:
        self._storage: dict[torch.device, torch.Tensor] = {}  # float64
        self._stages: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}
        self._layouts: dict[_LayoutKey, _Layout] = {}

    def layout(self, tensors: Sequence[torch.Tensor], staged: bool = False) -> _Layout:
        """Where ``tensors`` go; ``staged``: copied first into a buffer of their own dtype when
        they share one (not float64), which :func:`reduce_part` converts (the copy then moves
        half the bytes or less on the caller's thread; the worker converts)."""
        device = tensors[0].device
        shapes = tuple([t.shape for t in tensors])
        stage = None
        if staged:
            stage = tensors[0].dtype
            if stage == _F64 or len({t.dtype for t in tensors}) > 1:
                stage = None
        key = (device, shapes, stage)
        layout = self._layouts.get(key)
        if layout is None:
            # normal tensors even when made under torch.inference_mode() (an evaluation loop):
            # an inference tensor could not be written in place by a later training step
            with torch.inference_mode(False):
                layout = self._new_layout(key)
        return layout

    def _new_layout(self, key: _LayoutKey) -> _Layout:
        device, shapes, stage = key
        needed = sum(-(-s.numel() // WIDTH) for s in shapes) * WIDTH  # at most MAX_VALUES (reduce_tensors)
        buffers = [self._buffer(device, _F64, needed)]
        if stage is not None:
            buffers.append(self._buffer(device, stage, needed))
        if len(self._layouts) >= _MAX_LAYOUTS:
            self._layouts.clear()
        layout = self._layouts[key] = _Layout(shapes, buffers[0], buffers[-1] if stage is not None else None)
        return layout

    def _buffer(self, device: torch.device, dtype: torch.dtype, needed: int) -> torch.Tensor:
        buffers: dict[Any, torch.Tensor] = self._storage if dtype == _F64 else self._stages
        key = device if dtype == _F64 else (device, dtype)
        storage = buffers.get(key)
        if storage is None or storage.numel() < needed:
            storage = buffers[key] = torch.empty(needed, dtype=dtype, device=device)
            # forget the layouts whose views are of the old buffer
            self._layouts = {
                k: v for k, v in self._layouts.items() if k[0] != device or (dtype != _F64 and k[2] != dtype)
            }
        return storage


class Batch:
    """A batch's reductions, planned: its tensors (pieces of tensors larger than a workspace)
    grouped into ``parts`` of at most ``MAX_VALUES`` values, each copied into a workspace and
    reduced on its own (:func:`copy_part`, :func:`reduce_part`), the parts' quantities then
    combined into the result (:meth:`result`)."""

    __slots__ = ("names", "ops", "parts", "split")

    def __init__(self, tensors: Sequence[torch.Tensor], ops: Ops) -> None:
        limit = max(1, MAX_VALUES // WIDTH) * WIDTH  # a piece's padded rows fit the workspace
        sizes = tuple([t.numel() for t in tensors])
        self.split: list[int] | None = None  # pieces per tensor, once a tensor is split
        self.ops = ops
        self.names = quantities(ops)
        if max(sizes) <= limit:  # the usual batch: every tensor whole (the parts kept per sizes)
            self.parts = [list(tensors[start:end]) for start, end in _part_bounds(sizes, MAX_VALUES)]
            return
        pieces: list[torch.Tensor] = []
        split = self.split = []
        for tensor, size in zip(tensors, sizes, strict=True):
            before = len(pieces)
            pieces.extend(_pieces(tensor, limit) if size > limit else (tensor,))
            split.append(len(pieces) - before)
        bounds = _part_bounds(tuple([piece.numel() for piece in pieces]), MAX_VALUES)
        self.parts = [pieces[start:end] for start, end in bounds]

    def result(self, found: Sequence[dict[str, torch.Tensor]]) -> torch.Tensor:
        """The ``(tensors, ops)`` float64 result from the parts' quantities ``found`` (in order)."""
        names = self.names
        with torch.no_grad():
            q = found[0] if len(found) == 1 else {n: torch.cat([f[n] for f in found]) for n in names}
            if self.split is not None:
                q = _combine(q, torch.tensor(self.split, device=q["count"].device))
            return derive(dict(q), self.ops)


def reduce_tensors(
    tensors: Sequence[torch.Tensor], ops: Ops, workspace: Workspace | None = None, staged: bool = False
) -> torch.Tensor:
    """The reductions ``ops`` (``(op, abs)``, see ``derivation``) of each of ``tensors``
    (non-empty, real floating point, one device; dtypes may differ) as a
    ``(len(tensors), len(ops))`` float64 tensor on that device; no host transfer.
    ``workspace``: kept between calls (a fresh one when None); ``staged``: copied through a
    buffer of their dtype, as the reduction worker does (:meth:`Workspace.layout`)."""
    workspace = workspace or Workspace()
    batch = Batch(tensors, ops)
    found = []
    for part in batch.parts:
        layout = workspace.layout(part, staged=staged)
        copy_part(layout, part)
        found.append(reduce_part(layout, batch.names))
    return batch.result(found)


def derive(q: dict[str, torch.Tensor], ops: Ops) -> torch.Tensor:
    """The ``(tensors, len(ops))`` table of ``ops`` from the base quantities ``q`` of each
    tensor (``count``; ``l2``: the sum of squares; ``variance``: the sum of squared deviations;
    see ``derivation``); ``q`` is changed."""
    count = q["count"]
    if "l2" in q:
        q["l2"] = q["l2"].sqrt()
    for name in list(q):
        if name.endswith("variance"):
            q[name] = q[name] / count
    columns = []
    for how, name in (derivation(op, is_abs) for op, is_abs in ops):
        value = q[name]
        columns.append(value / count if how == "mean" else value.sqrt() if how == "sqrt" else value)
    return torch.stack(columns, dim=1)


def dense_flat(tensor: torch.Tensor) -> torch.Tensor | None:
    """``tensor``'s values as a flat view in some order of its dimensions (no copy), or None
    when they do not lie densely in memory (a strided view with gaps)."""
    order = sorted(range(tensor.dim()), key=tensor.stride, reverse=True)
    dense = tensor.permute(order)
    return dense.view(-1) if dense.is_contiguous() else None


def _pieces(tensor: torch.Tensor, limit: int) -> list[torch.Tensor]:
    """``tensor``'s values as views of at most ``limit`` values each (see the module doc)."""
    if tensor.numel() <= limit:
        return [tensor]
    flat = dense_flat(tensor)
    if flat is not None:  # no gaps: slices of the flat view
        return [flat[i : i + limit] for i in range(0, flat.numel(), limit)]
    rows = max(1, limit // (tensor.numel() // tensor.shape[0]))
    if rows == 1:  # one index of the first dimension is already too large: split it too
        return [p for i in range(tensor.shape[0]) for p in _pieces(tensor[i], limit)]
    return [tensor[i : i + rows] for i in range(0, tensor.shape[0], rows)]


@functools.lru_cache(maxsize=256)
def _part_bounds(sizes: tuple[int, ...], most: int) -> tuple[tuple[int, int], ...]:
    """``(start, end)`` of each part of pieces of ``sizes`` values: consecutive pieces whose
    padded rows fit ``most`` values together (each piece fits alone)."""
    bounds = []
    start = values = 0
    for i, size in enumerate(sizes):
        n = -(-size // WIDTH) * WIDTH
        if i > start and values + n > most:
            bounds.append((start, i))
            start, values = i, 0
        values += n
    bounds.append((start, len(sizes)))
    return tuple(bounds)


def quantities(ops: Ops) -> tuple[str, ...]:
    """The base quantities ``ops`` derive from (see ``derivation``), with what they need."""
    return _quantities(tuple(ops))


@functools.lru_cache(maxsize=64)
def _quantities(ops: Ops) -> tuple[str, ...]:
    names = {derivation(op, is_abs)[1] for op, is_abs in ops}
    names |= {n.removesuffix("variance") + "sum" for n in names if n.endswith("variance")}
    return (*sorted(names), "count")


def _combine(q: dict[str, torch.Tensor], split: torch.Tensor) -> dict[str, torch.Tensor]:
    """The pieces' quantities ``q`` combined per tensor (``split``: pieces per tensor)."""

    def per_tensor(values: torch.Tensor, how: str) -> torch.Tensor:
        return torch.segment_reduce(values, how, lengths=split, unsafe=True)

    count = q["count"]
    out = {"count": per_tensor(count, "sum")}
    owner = torch.repeat_interleave(torch.arange(len(split), device=split.device), split, output_size=len(count))
    for name, values in q.items():
        base = name.removeprefix("abs_")
        if base == "variance":  # M2 = sum(M2_i) + sum(n_i (mean_i - mean)^2), mean_i = sum_i / n_i
            sums = q[name.removesuffix("variance") + "sum"]
            mean = per_tensor(sums, "sum") / out["count"]
            values = values + count * (sums / count - mean[owner]).square()
        if base != "count":
            out[name] = per_tensor(values, base if base in ("min", "max", "prod") else "sum")
    return out


def copy_part(layout: _Layout, tensors: Sequence[torch.Tensor]) -> None:
    """Copy ``tensors`` (a part of a :class:`Batch`) into ``layout``'s workspace (float64),
    or its staging buffer (converted by :func:`reduce_part`)."""
    with torch.no_grad():
        torch._foreach_copy_(layout.views, list(tensors))
