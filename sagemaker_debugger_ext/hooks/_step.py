"""What one saved step writes: raw tensors, reductions, shapes, TensorBoard points.

``StepOutput`` collects one (global step, worker)'s records as private array copies (one
``memcpy`` each on the training thread) plus the step's TensorBoard points; ``close()``
hands the step to the background writer's thread, which encodes it and writes the two files
(or does both in place). Measured alternatives, both slower on the training loop: encoding
on the training thread (its Python runs there with cold caches), and writing the files on
the training thread straight from the tensors (page-cache writes cost more than a copy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .._reductions import compute_reductions, reductions_apply
from ..format import BackgroundWriter, StepWriter
from ..modes import ModeKeys
from ._arrays import float_view
from ._collections import NON_HISTOGRAM_COLLECTIONS, SCALAR_COLLECTIONS, Collection
from ._outputs import TensorBoardExport
from ._reduction_config import reduction_tensor_name

__all__ = ["StepOutput"]


class StepOutput:
    """The output of one step of one worker."""

    def __init__(
        self,
        out_dir: str,
        *,
        worker: str,
        step: int,
        mode: ModeKeys,
        mode_step: int,
        tensorboard: TensorBoardExport | None,
    ) -> None:
        self.step = step
        self.mode = mode
        self.mode_step = mode_step
        self._out_dir = out_dir
        self._worker = worker
        self._tb = tensorboard
        # raw records, and reductions still to compute (on the writer's thread), in write order
        self._records: list[tuple[str, np.ndarray, str | None, float | None] | _Reductions] = []
        self._shapes: list[tuple[str, tuple[int, ...]]] = []

    @property
    def wrote(self) -> bool:
        """Whether this step has anything to write."""
        return bool(self._records or self._shapes)

    def write_raw(self, name: str, array: np.ndarray, dtype: str | None = None, wall_time: float | None = None) -> None:
        """Write one tensor as is (copied now: the caller's tensor may change afterwards);
        ``wall_time`` overrides the step's event time for this record."""
        self._records.append(
            (name, array.copy() if isinstance(array, np.ndarray) else np.array(array), dtype, wall_time)
        )

    def _write_files(self) -> None:
        writer = StepWriter(  # the records are this step's private copies: the writer may borrow them
            self._out_dir, global_step=self.step, worker=self._worker, mode=self.mode, mode_step=self.mode_step,
            borrow_arrays=True,
        )  # fmt: skip
        for record in self._records:
            if isinstance(record, _Reductions):
                values = compute_reductions(record.ops, record.array, name=record.name)
                for (op, is_abs), value in zip(record.ops, values, strict=True):
                    writer.write_tensor(reduction_tensor_name(record.name, op, is_abs), value)
                continue
            name, array, dtype, wall_time = record
            writer.write_tensor(name, array, dtype=dtype, wall_time=wall_time)
        for name, shape in self._shapes:
            writer.write_shape(name, shape)
        writer.close()

    def write_scalar(self, name: str, array: np.ndarray, timestamp: float | None = None) -> None:
        """A ``save_scalar`` value: raw record (event time ``timestamp`` when given) plus a
        TensorBoard scalar."""
        self.write_raw(name, array, wall_time=timestamp)
        if self._tb is not None:
            self._tb.add_scalar(self.mode, name, float(np.asarray(array).reshape(-1)[0]), self.step)

    def write_tensor(self, name: str, array: np.ndarray, dtype: str | None, colls: Sequence[Collection]) -> None:
        """Write what the collections ``colls`` ask for ``name``: reductions, raw, shape, TB output."""
        values = array if dtype is None else float_view(array, dtype)
        done: set[tuple[str, bool]] = set()
        raw = shape = False
        for coll in colls:
            cfg = coll.reduction_config
            if cfg is None:
                raw = True
                continue
            raw = raw or cfg.save_raw_tensor
            shape = shape or cfg.save_shape
            if coll.name in SCALAR_COLLECTIONS or not reductions_apply(values.dtype):
                continue  # strings: no reduction applies (see _reductions)
            todo = [key for key in cfg.all_reductions if key not in done]
            if todo:  # computed with the step's files, off the training thread (see _Reductions)
                done.update(todo)
                self._records.append(_Reductions(name, np.array(values, copy=True), tuple(todo)))
        if raw:
            self.write_raw(name, array, dtype)
        if shape:
            self._shapes.append((name, tuple(array.shape)))
        if self._tb is not None:
            self._tensorboard(name, values, colls)

    def _tensorboard(self, name: str, values: np.ndarray, colls: Sequence[Collection]) -> None:
        assert self._tb is not None
        for coll in colls:
            if coll.name not in NON_HISTOGRAM_COLLECTIONS and coll.save_histogram:
                self._tb.add_histogram(self.mode, f"{coll.name}/{name}", values, self.step)
                break
        if values.size == 1 and any(c.name in SCALAR_COLLECTIONS for c in colls):
            self._tb.add_scalar(self.mode, name, float(values.reshape(-1)[0]), self.step)

    def close(self, background: BackgroundWriter | None = None) -> bool:
        """Encode the step and write its files (both on ``background``'s thread when given);
        returns whether anything was written."""
        wrote = self.wrote
        if wrote:
            if background is not None:
                background.submit_call(self._write_files)
            else:
                self._write_files()
        if self._tb is not None:
            self._tb.flush()
        return wrote


class _Reductions(NamedTuple):
    """Reductions of one tensor to compute when the step's files are written: on the
    background writer's thread, where NumPy's passes over a big model's tensors run beside
    training (they release the GIL) instead of inside the step. The copy is private."""

    name: str
    array: np.ndarray
    ops: tuple[tuple[str, bool], ...]
