"""The reductions a step saves, computed on the background writer's thread while the step trains.

A hook with reductions-only collections (a big model's ``weights`` and ``gradients``) copies
each tensor on the training thread and reduces the copies elsewhere. The copies are handed
to the writer thread in batches of about ``HAND_OVER_VALUES`` values as the step saves them,
and the rest when the backward pass has delivered the step's last gradient (the PyTorch
hook counts them), so by the time the step ends its reductions are done and its files are
written quickly: the next step waits for them before it saves anything (see
``BaseHook._output_for_step``), which is what lets a killed process lose only the step in
flight. Each hand-over costs the training thread a few interpreter-lock exchanges with the
writer (measured: the batch size trades those against the wait at the step's end).

Each batch is reduced with :func:`compute_reductions_many`: a few NumPy passes per batch
instead of several calls per tensor, each of which would take the interpreter lock back from
the training thread. Records that do not batch (integers, empty tensors, ``std``, ...) are
reduced one by one with :func:`compute_reductions`; both give the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from .._reductions import BATCHED_REDUCTIONS, compute_reductions, compute_reductions_many
from ..format import BackgroundWriter, StepWriter

__all__ = ["HAND_OVER_VALUES", "RawRecord", "Reductions", "ReductionsBatcher", "reduce_records", "write_records"]

#: values (all tensors together) collected before a batch is handed to the writer thread
HAND_OVER_VALUES = 1 << 19

Ops = tuple[tuple[str, bool], ...]
#: a tensor saved as is: (name, private copy, dtype override, wall time override)
RawRecord = tuple[str, np.ndarray, str | None, float | None]


class Reductions:
    """The reductions ``ops`` of one tensor: a private copy until they are computed (no copy:
    computed elsewhere, e.g. on the tensor's device, and filled in before the step's files)."""

    __slots__ = ("array", "name", "names", "ops", "values")

    def __init__(self, name: str, array: np.ndarray | None, ops: Ops, names: tuple[str, ...]) -> None:
        self.name = name
        self.array: np.ndarray | None = array
        self.ops = ops
        self.names = names  # the reductions' tensor names, in the order of ops
        # once computed: one row of the float dtype (batched), or one 0-d array per op
        self.values: np.ndarray | list[np.ndarray] | None = None


def reduce_records(records: Sequence[Reductions]) -> None:
    """Compute the values of ``records`` not computed yet, and drop their copies."""
    groups: dict[tuple[Ops, np.dtype[np.generic]], list[Reductions]] = {}
    for record in records:
        array = record.array
        if array is None:
            continue
        if array.dtype.kind == "f" and array.size and all(op in BATCHED_REDUCTIONS for op, _ in record.ops):
            groups.setdefault((record.ops, array.dtype), []).append(record)
        else:
            record.values = compute_reductions(record.ops, array, name=record.name)
            record.array = None
    for (ops, _), group in groups.items():
        table = compute_reductions_many(ops, [r.array for r in group])  # type: ignore[misc]
        for record, row in zip(group, table, strict=True):
            record.values, record.array = row, None


class ReductionsBatcher:
    """Hands a step's reductions to the writer thread in batches as they are saved."""

    def __init__(self, background: BackgroundWriter | None) -> None:
        self._background = background
        self._batch: list[Reductions] = []
        self._values = 0

    def add(self, record: Reductions) -> None:
        """Queue ``record``; a full batch goes to the writer thread (without one: at the end)."""
        if self._background is None:
            return
        self._batch.append(record)
        self._values += record.array.size  # type: ignore[union-attr]
        if self._values >= HAND_OVER_VALUES:
            self.hand_over()

    def hand_over(self) -> None:
        """Hand the queued records to the writer thread now (e.g. when the backward pass has
        delivered the step's last gradient: the writer reduces them while the optimizer runs)."""
        if self._batch and self._background is not None:
            self._background.submit_call(partial(reduce_records, self._batch), counted=False)
            self._batch, self._values = [], 0


def write_records(writer: StepWriter, records: Sequence[RawRecord | Reductions]) -> None:
    """Write a step's records in order: raw ``(name, array, dtype, wall_time)`` tuples and
    :class:`Reductions` (computed here when a batch did not compute them), consecutive
    batched reductions of one dtype with one ``write_scalars``."""
    reduce_records([r for r in records if isinstance(r, Reductions)])
    names: list[str] = []
    rows: list[np.ndarray] = []

    def flush() -> None:
        if rows:
            writer.write_scalars(names, np.concatenate(rows))
            names.clear()
            rows.clear()

    for record in records:
        if isinstance(record, Reductions):
            values = record.values
            if isinstance(values, np.ndarray):
                if rows and rows[-1].dtype != values.dtype:
                    flush()
                names.extend(record.names)
                rows.append(values)
                continue
            flush()
            for name, value in zip(record.names, values or (), strict=True):
                writer.write_tensor(name, value)
            continue
        flush()
        name, array, dtype, wall_time = record
        writer.write_tensor(name, array, dtype=dtype, wall_time=wall_time)
    flush()
