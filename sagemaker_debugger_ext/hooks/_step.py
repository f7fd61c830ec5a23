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
from typing import Protocol

import numpy as np

from .._reductions import reductions_apply
from ..format import BackgroundWriter, StepWriter
from ..modes import ModeKeys
from ._arena import ArenaPool, CopyArena
from ._arrays import float_view
from ._collections import NON_HISTOGRAM_COLLECTIONS, SCALAR_COLLECTIONS, Collection
from ._outputs import TensorBoardExport
from ._reduction_config import reduction_tensor_names
from ._step_reductions import RawRecord, Reductions, ReductionsBatcher, write_records


class LiveCheck(Protocol):
    """What :meth:`StepOutput.check_live` needs of a live read's check (``_live.Handover``)."""

    settled: bool  # checked (after the barrier)
    changed: tuple[int, ...]  # positions whose values changed before they were read
    error: BaseException | None  # why the read failed (then none of its values is written)


__all__ = ["LiveCheck", "StepOutput", "raw_only"]


def raw_only(colls: Sequence[Collection]) -> bool:
    """Whether :meth:`StepOutput.write_tensor` with the collections ``colls`` writes the raw
    tensor and nothing else (no reductions, no shape; TensorBoard aside): framework hooks then
    call :meth:`StepOutput.write_raw` directly, the per-tensor fast path of a saved step."""
    raw = False
    for coll in colls:
        cfg = coll.reduction_config
        if cfg is None:
            raw = True
            continue
        if cfg.save_shape or (
            coll.name not in SCALAR_COLLECTIONS and (cfg.reductions or cfg.abs_reductions or cfg.norms or cfg.abs_norms)
        ):
            return False
        raw = raw or cfg.save_raw_tensor
    return raw


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
        background: BackgroundWriter | None = None,
        arenas: ArenaPool | None = None,
        uncached: bool = False,
        keep_colon_index: bool = False,
    ) -> None:
        self.step = step
        self._keep_colon_index = keep_colon_index  # reduction names keep ``:0`` (TensorFlow, as smdebug)
        self.mode = mode
        self.mode_step = mode_step
        self._out_dir = out_dir
        self._worker = worker
        self._tb = tensorboard
        self._background = background
        self._uncached = uncached  # the event file skips the page cache (see format._files)
        # raw records, and reductions computed on the writer's thread, in write order
        self._records: list[RawRecord | Reductions] = []
        self._batcher = ReductionsBatcher(background)
        self._shapes: list[tuple[str, tuple[int, ...]]] = []
        self._arenas = arenas or ArenaPool(reuse=False)
        # the step's copies, taken at its first host record (see _copies); given back once written
        self._arena: CopyArena | None = None
        # records filled by live reads (write_raw_slot): (its check, the records' indexes)
        self._live: list[tuple[LiveCheck, list[int]]] = []

    @property
    def wrote(self) -> bool:
        """Whether this step has anything to write."""
        return bool(self._records or self._shapes)

    def write_raw(
        self, name: str, array: np.ndarray, dtype: str | None = None, wall_time: float | None = None,
        private: bool = False,
    ) -> None:  # fmt: skip
        """Write one tensor as is (copied now: the caller's tensor may change afterwards,
        unless it is ``private``: nothing changes it any more); ``wall_time`` overrides the
        step's event time for this record."""
        arena = self._copies()
        if private and isinstance(array, np.ndarray):
            copy = array
        else:
            copy = arena.copy(array) if isinstance(array, np.ndarray) else np.array(array)
        self._records.append((name, copy, dtype, wall_time))

    def write_raw_slot(self, name: str, array: np.ndarray) -> tuple[np.ndarray, int]:
        """Write one tensor as is, from the array returned (room in the step's copies, shaped
        as ``array``, a plain number dtype), which the caller fills before the step closes (a
        live read, ``hooks/pytorch/_live_raw``); returns it and the record's index."""
        room = self._copies().slot(array)
        self._records.append((name, room, None, None))
        return room, len(self._records) - 1

    def check_live(self, check: LiveCheck, indexes: list[int]) -> None:
        """The records at ``indexes`` (from :meth:`write_raw_slot`) are written only if
        ``check`` was settled and its read whole when the files are encoded (on the writer
        thread, after the read), and those of its ``changed`` positions not at all."""
        self._live.append((check, indexes))

    def _drop_changed(self) -> None:
        """Leave out the records whose live read may be torn (see :meth:`check_live`)."""
        drop: set[int] = set()
        for check, indexes in self._live:
            whole = check.settled and check.error is None
            drop.update(indexes if not whole else (indexes[i] for i in check.changed))
        self._live.clear()
        if drop:
            self._records[:] = [r for i, r in enumerate(self._records) if i not in drop]

    def _copies(self) -> CopyArena:
        """The step's arena, taken at its first record held in host memory, once the previous
        step's files are written (so a killed process loses at most one step with host copies,
        and the copies of two steps never coexist); records computed elsewhere (reductions on
        the tensor's device) do not wait: the previous step's files are written meanwhile."""
        if self._arena is None:
            if self._background is not None:
                self._background.wait_idle()
            self._arena = self._arenas.take()
        return self._arena

    def hand_over(self) -> None:
        """Start reducing the tensors saved so far on the writer thread (see _step_reductions)."""
        self._batcher.hand_over()

    def _write_files(self) -> None:
        if self._live:  # after the live reads (submitted to this thread before this job)
            self._drop_changed()
        writer = StepWriter(  # the records are this step's private copies: the writer may borrow them
            self._out_dir, global_step=self.step, worker=self._worker, mode=self.mode, mode_step=self.mode_step,
            borrow_arrays=True, uncached=self._uncached,
        )  # fmt: skip
        try:
            write_records(writer, self._records)
            for name, shape in self._shapes:
                writer.write_shape(name, shape)
            writer.close()
        finally:
            self._records.clear()  # the copies live in the arena, reused by a later step
            if self._arena is not None:
                self._arenas.give_back(self._arena)

    def write_scalar(self, name: str, array: np.ndarray, timestamp: float | None = None) -> None:
        """A ``save_scalar`` value: raw record (event time ``timestamp`` when given) plus a
        TensorBoard scalar."""
        self.write_raw(name, array, wall_time=timestamp)
        if self._tb is not None:
            self._tb.add_scalar(self.mode, name, float(np.asarray(array).reshape(-1)[0]), self.step)

    def write_tensor(
        self, name: str, array: np.ndarray, dtype: str | None, colls: Sequence[Collection], private: bool = False
    ) -> None:
        """Write what the collections ``colls`` ask for ``name``: reductions, raw, shape, TB
        output (``private``: see :meth:`write_raw`)."""
        arena = self._copies()
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
            if todo:  # computed off the training thread (see _step_reductions)
                done.update(todo)
                ops = tuple(todo)
                kept = values if private else arena.copy(values)
                record = Reductions(name, kept, ops, reduction_tensor_names(name, ops, self._keep_colon_index))
                self._records.append(record)
                self._batcher.add(record)
        if raw:
            self.write_raw(name, array, dtype, private=private)
        if shape:
            self._shapes.append((name, tuple(array.shape)))
        if self._tb is not None:
            self._tensorboard(name, values, colls)

    def write_reductions(
        self, name: str, ops: tuple[tuple[str, bool], ...], shape: tuple[int, ...] | None
    ) -> Reductions:
        """A reductions record for ``name`` computed by the caller, who fills its ``values``
        before :meth:`close` (the PyTorch hook's device reductions); ``shape``: saved too."""
        record = Reductions(name, None, ops, reduction_tensor_names(name, ops, self._keep_colon_index))
        self._records.append(record)
        if shape is not None:
            self._shapes.append((name, shape))
        return record

    def _tensorboard(self, name: str, values: np.ndarray, colls: Sequence[Collection]) -> None:
        tb = self._tb
        if tb is None:
            return
        for coll in colls:
            if coll.name not in NON_HISTOGRAM_COLLECTIONS and coll.save_histogram:
                tb.add_histogram(self.mode, f"{coll.name}/{name}", values, self.step)
                break
        if values.size == 1 and any(c.name in SCALAR_COLLECTIONS for c in colls):
            tb.add_scalar(self.mode, name, float(values.reshape(-1)[0]), self.step)

    def close(self) -> bool:
        """Encode the step and write its files (both on the background writer's thread when
        there is one); returns whether anything was written."""
        wrote = self.wrote
        if wrote:
            if self._background is not None:
                self._background.submit_call(self._write_files)
            else:
                self._write_files()
        elif self._arena is not None:
            self._arenas.give_back(self._arena)
        if self._tb is not None:
            self._tb.flush()
        return wrote
