"""The passes over a workspace's rows (:func:`reduce_part`): each quantity of each row, then
per tensor (``segment_reduce``), for the batches of ``_batched_reductions``.

On the CPU the rows are taken in chunks of ``CHUNK_ROWS`` (2 MiB of float64, a core's L2 cache
here, so mostly kept there from one pass to the next): a staged part's chunk is converted from the
staging buffer into the workspace's first rows, and every pass (sum, absolute values, sum,
squares, sum) works on it before the next chunk is converted, instead of each pass reading
and writing the whole workspace (the float64 copy of 0.47 M values is 3.8 MB, more than the
L2 cache: each pass went to the shared L3 cache and memory, beside the training thread).
The stage's padded tails are set to 0 once (after its min and max), so the chunks' sums need
no call of their own for them. A part copied straight into the workspace (mixed dtypes,
float64) is passed over in place, chunk by chunk. A row's quantities do not depend on the chunk it is in: the values are the same bits as
over the whole workspace. The variance's mean needs every row's sum first: with
``variance`` (or ``std``) the whole part is one chunk, as on CUDA (where each call is a
kernel launch: one chunk, the calls of the module doc of ``_batched_reductions``).

The usual CPU part (a float32 stage; min, max, sums, sums of absolute values and of squares:
what the default reductions and norms need) is reduced by :func:`_sweep` in one call compiled
with TorchScript: the same torch operations in the same order (the same bits), run without
the interpreter lock. Called from Python, each of its 20 to 40 calls took the lock back from
the training thread when it returned (a hand-over each, several microseconds of the training's
time): on the GPT-2 of ``bench_lm`` (0.47 M parameters, a 30 ms step) that cost about 5 % of the
step, more than the passes' arithmetic. Where TorchScript is not available, :func:`_sweep`
runs as plain Python (same values).
"""

from __future__ import annotations

import bisect
import functools
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from ._batched_reductions import _Layout

__all__ = ["CHUNK_ROWS", "WIDTH", "chunks", "reduce_part"]

_F64 = torch.float64
#: values per workspace row; a tensor's last row is padded (at most ``WIDTH - 1`` values)
WIDTH = 512
#: rows of float64 each pass works on at a time on the CPU (see the module doc): 128 rows made
#: the worker's passes cheaper still, but their 4x more torch calls (each takes the interpreter
#: lock back from the training thread) cost the training more than they saved on a quiet machine
CHUNK_ROWS = 512

Chunk = tuple[int, int, torch.Tensor, slice]


def chunks(pad: list[int], rows: int, device: torch.device, whole: torch.Tensor) -> list[Chunk]:
    """``(first row, end row, the padded tails' positions in the chunk, their slice of
    ``pad``)`` of each chunk of a layout's ``rows`` (``pad``: its tails' positions, ascending;
    ``whole``: the same as a tensor, the one chunk's when the device is not the CPU)."""
    if device.type != "cpu" or rows <= CHUNK_ROWS:
        return [(0, rows, whole, slice(None))]
    out: list[Chunk] = []
    low = 0
    for start in range(0, rows, CHUNK_ROWS):
        end = min(rows, start + CHUNK_ROWS)
        high = bisect.bisect_left(pad, end * WIDTH, low)
        local = torch.tensor([p - start * WIDTH for p in pad[low:high]], dtype=torch.long, device=device)
        out.append((start, end, local, slice(low, high)))
        low = high
    return out


def reduce_part(layout: _Layout, names: Sequence[str]) -> dict[str, torch.Tensor]:
    """The quantities ``names`` of each tensor copied into ``layout`` (:func:`copy_part`;
    ``variance``: the sum of squared deviations, ``l2``: the sum of squares; divided and
    rooted by :meth:`Batch.result`). Overwrites the workspace (absolute values, squares)."""
    with torch.no_grad():
        return _reduce_part(layout, names)


def _reduce_part(layout: _Layout, names: Sequence[str]) -> dict[str, torch.Tensor]:
    buffer, stage, pads = layout.buffer, layout.stage, layout.pad
    if stage is not None and stage.dtype == torch.float32 and stage.device.type == "cpu" and _SWEPT.issuperset(names):
        flags = [n in names for n in _SWEEP_ORDER]
        swept = _compiled_sweep()(stage, pads, layout.pad_first, buffer, CHUNK_ROWS, layout.rows, *flags)
        return {"count": layout.count} | dict(zip([n for n in _SWEEP_ORDER if n in names], swept, strict=True))
    found: dict[str, torch.Tensor] = {"count": layout.count}
    held = ""  # what each chunk's padded tails hold once it is in the workspace

    def per_tensor(rows: torch.Tensor, how: str) -> torch.Tensor:
        # unsafe: the lengths are ours; checking them would wait for the device (CUDA)
        return torch.segment_reduce(rows, how, lengths=layout.rows, unsafe=True)

    if stage is not None:
        extremes = sorted({"min", "max"} & set(names))
        if extremes and stage.dtype == torch.float32:  # exact in float32, from half the bytes of float64
            if pads.numel():
                stage.index_copy_(0, pads, stage[layout.pad_first])
            rows = stage.view(-1, WIDTH)
            for base in extremes:
                found[base] = per_tensor((rows.amin(1) if base == "min" else rows.amax(1)).to(_F64), base)
        if pads.numel():  # the sums' tails, copied with each chunk
            stage.index_fill_(0, pads, 0.0)
        held = "0"
    source = buffer if stage is None else stage.view(-1, WIDTH)
    firsts = layout.count[:0]  # each tail's tensor's first value, before any pass changes it (min, max)
    if pads.numel() and any(n.removeprefix("abs_") in ("min", "max") for n in names if n not in found):
        firsts = source.view(-1)[layout.pad_first].to(_F64)
    spans = layout.chunks
    if any(n.endswith("variance") for n in names):  # the mean needs every row's sum first: one chunk
        spans = [(0, buffer.shape[0], pads, slice(None))]
    rows_of: dict[str, list[torch.Tensor]] = {}  # each quantity's rows, chunk by chunk
    plan = [
        (prefix, {n.removeprefix(prefix) for n in names if n.startswith("abs_") == bool(prefix) and n not in found})
        for prefix in ("", "abs_")
    ]
    for start, end, pad, part in spans:
        work = buffer[: end - start] if stage is not None else buffer[start:end]
        if stage is not None:
            work.copy_(source[start:end])
        tails = _Tails(work.view(-1), pad, held, firsts[part])
        for prefix, wanted in plan:
            if prefix and wanted:
                work.abs_()  # tails of 0, 1 or a tensor's first value stay valid (a mean is set after a sum)
                tails.absolute = True
            for base in sorted(wanted & {"min", "max"}):
                tails.set("first")
                rows_of.setdefault(prefix + base, []).append(work.amin(1) if base == "min" else work.amax(1))
            if wanted & {"sum", "variance"}:
                tails.set("0")
                rows_of.setdefault(prefix + "sum", []).append(work.sum(1))
            if "prod" in wanted:
                tails.set("1")
                rows_of.setdefault(prefix + "prod", []).append(work.prod(1))
            if "variance" in wanted:  # NumPy's two passes: the mean, then the squared deviations
                found[prefix + "sum"] = per_tensor(rows_of[prefix + "sum"][0], "sum")  # one chunk (above)
                mean = found[prefix + "sum"] / layout.count
                tails.set("mean", mean[layout.pad_owner])
                deviations = work - mean[layout.row_owner, None]
                rows_of[prefix + "variance"] = [deviations.square_().sum(1)]
        if "l2" in names:  # last: squares the workspace in place
            tails.set("0")
            rows_of.setdefault("l2", []).append(work.square_().sum(1))
    for name, chunked in rows_of.items():
        if name not in found:
            how = name.removeprefix("abs_")
            values = chunked[0] if len(chunked) == 1 else torch.cat(chunked)
            found[name] = per_tensor(values, how if how in _HOWS else "sum")
    return found


_HOWS = ("min", "max", "prod")
#: the quantities :func:`_sweep` gives, in its order
_SWEEP_ORDER = ("max", "min", "sum", "abs_sum", "l2")
_SWEPT = frozenset((*_SWEEP_ORDER, "count"))


def _sweep(
    stage: torch.Tensor, pads: torch.Tensor, pad_first: torch.Tensor, work: torch.Tensor, chunk: int,
    lengths: torch.Tensor, want_max: bool, want_min: bool, want_sum: bool, want_abs_sum: bool, want_l2: bool,
) -> list[torch.Tensor]:  # fmt: skip
    """The wanted quantities (in ``_SWEEP_ORDER``) of each tensor of a float32 ``stage`` (on
    the CPU; ``pads``: its padded tails, ``pad_first``: each tail's tensor's first position,
    ``lengths``: rows per tensor), with the passes of :func:`_reduce_part`: min and max from
    the stage (tails set to the tensor's first value), then the tails set to 0 and the rows
    converted into ``work`` (float64) ``chunk`` rows at a time, each chunk summed, made
    absolute, summed, squared and summed. TorchScript (:func:`_compiled_sweep`): no globals."""
    out: list[torch.Tensor] = []
    rows = stage.view(-1, 512)  # WIDTH
    if want_max or want_min:
        if pads.numel() > 0:
            stage.index_copy_(0, pads, stage[pad_first])
        if want_max:
            out.append(torch.segment_reduce(rows.amax(1).to(torch.float64), "max", lengths=lengths, unsafe=True))
        if want_min:
            out.append(torch.segment_reduce(rows.amin(1).to(torch.float64), "min", lengths=lengths, unsafe=True))
    if pads.numel() > 0:
        stage.index_fill_(0, pads, 0.0)
    if not (want_sum or want_abs_sum or want_l2):
        return out
    sums: list[torch.Tensor] = []
    abs_sums: list[torch.Tensor] = []
    squares: list[torch.Tensor] = []
    total = rows.shape[0]
    for start in range(0, total, chunk):
        end = min(total, start + chunk)
        part = work[: end - start]
        part.copy_(rows[start:end])
        if want_sum:
            sums.append(part.sum(1))
        if want_abs_sum:
            part.abs_()
            abs_sums.append(part.sum(1))
        if want_l2:
            squares.append(part.square_().sum(1))
    for wanted, chunked in ((want_sum, sums), (want_abs_sum, abs_sums), (want_l2, squares)):
        if wanted:
            out.append(torch.segment_reduce(torch.cat(chunked), "sum", lengths=lengths, unsafe=True))
    return out


_COMPILING = threading.Lock()


@functools.cache
def _compiled_sweep() -> Callable[..., list[torch.Tensor]]:
    """:func:`_sweep` compiled by TorchScript (its whole run then releases the interpreter
    lock: see the module doc), or itself where TorchScript cannot compile it."""
    with _COMPILING, warnings.catch_warnings(action="ignore", category=DeprecationWarning):
        try:
            return torch.jit.script(_sweep)
        except Exception:  # noqa: BLE001 - TorchScript missing or refusing: the same passes in Python
            return _sweep


class _Tails:
    """A chunk's padded tails (positions ``pad`` of ``flat``) and what they hold: ``""``
    (unknown), ``"0"``, ``"1"``, ``"first"`` (each tensor's first value, ``firsts``; their
    absolute values once ``absolute``) or ``"mean"``."""

    __slots__ = ("absolute", "firsts", "flat", "held", "pad")

    def __init__(self, flat: torch.Tensor, pad: torch.Tensor, held: str, firsts: torch.Tensor) -> None:
        self.flat, self.pad, self.held, self.firsts = flat, pad, held, firsts
        self.absolute = False

    def set(self, kind: str, values: torch.Tensor | None = None) -> None:
        if kind == self.held or not self.pad.numel():
            return
        if kind in ("0", "1"):
            self.flat.index_fill_(0, self.pad, float(kind))
        else:  # each tensor's first value (min, max) or the given means (variance)
            if values is None:
                values = self.firsts.abs() if self.absolute else self.firsts
            self.flat.index_copy_(0, self.pad, values)
        self.held = kind
