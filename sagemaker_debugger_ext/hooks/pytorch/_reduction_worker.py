"""CPU tensors' device reductions off the training thread: copied there, reduced on a worker.

On CPU every torch call of a batch's reductions (``_batched_reductions``) runs on the thread
that makes it (the training runs torch with its own intra-op threads; the passes over a
batch's float64 workspace cost about as much as the copy into it several times over). So
:meth:`ReductionWorker.submit` copies a batch into a workspace on the caller's thread, at the
time its values are defined (the weights when they are saved, the gradients when the
backward pass ends, before clipping changes them in place), and the passes, the combination
of the parts and the conversion to the stored dtypes run on the worker's thread (torch calls
release the interpreter lock). The records' values are filled there; :meth:`wait` returns
once the batches given are done (the hook's writer thread waits so, before it encodes the
step's files: the training thread does not wait at the step's end) and raises what their
reduction raised.

Live reads (``_live``): a batch submitted with ``hand_over`` is not copied by the caller; each
part is handed over with the same copy (into the same staging buffer), which the worker makes
when it takes the part, unless the hand-over's barrier (an optimizer's step, the hook's next
step end) made it first on its own thread. The training thread then copies nothing while the
worker keeps up.

Memory stays bounded: at most ``SLOTS`` workspaces of at most ``MAX_VALUES`` float64 values
each (32 MiB), so 96 MiB, plus for ``std`` and ``variance`` one temporary of a workspace's
size per reduction running (at most one per workspace: 192 MiB in all), against 32 (64) MiB
when the training thread reduced itself. A workspace is in use from its copy until its
reduction is done; a caller that needs one while all are in use (the worker is behind)
waits, and meanwhile reduces queued parts itself, as anyone who waits here does: the thread
runs at the hook writer's niceness, and a waiter on a busy machine does the work instead of
sleeping until the scheduler gets round to it. A failure inside a reduction is kept with its
batch (its records are not filled) and the worker's first failure is raised once, by
:meth:`raise_failure` (the hook's next step end or ``close()``). A worker whose thread is gone (a fork, see below) never
hangs a waiter: the waiter runs what is queued itself, and a reduction the thread had started
and can no longer finish fails its batch.

Fork: the worker's lock is held across ``os.fork()`` (its state is never copied half-changed).
In the child no thread runs: reductions queued are done by the child's next waiter or a new
thread; those the parent's threads were running fail their batches (the workspace was
overwritten half-way).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from ...format._background import lower_thread_priority
from .._device_plan import Ops
from .._json_config import writer_nice
from .._step_reductions import Reductions
from ._batched_reductions import Batch, Workspace, _Layout, copy_part, reduce_part
from ._live import Handover, Read

#: ``hand_over(part's tensors, their indexes in the batch, read)``: a part handed over to be
#: read live (see ``_live``)
HandOver = Callable[[Sequence[torch.Tensor], Sequence[int], Read], Handover]

__all__ = ["SLOTS", "ReductionWorker", "fill_records"]

#: workspaces a worker keeps (each at most ``MAX_VALUES`` float64 values): a step's weights
#: and its gradients are reduced while the next step's weights are copied
SLOTS = 3
#: seconds between checks that the thread a waiter waits for still runs (a fork ends it)
_CHECK_S = 1.0


class Pending:
    """One batch copied into workspaces: its records' values once its parts are reduced."""

    __slots__ = ("batch", "done", "error", "found", "handovers", "left", "records")

    def __init__(self, batch: Batch, records: list[tuple[Reductions, np.dtype[Any]]]) -> None:
        self.batch = batch
        self.records = records  # (record, stored dtype), in the batch's order
        self.found: list[dict[str, torch.Tensor] | None] = [None] * len(batch.parts)
        self.left = len(batch.parts)
        self.done = False
        self.error: BaseException | None = None
        # parts read live: each part's hand-over and its tensors' indexes in ``records``
        self.handovers: list[tuple[Handover, Sequence[int]]] = []

    def dropped(self) -> list[int]:
        """The records whose tensors changed before their live read's barrier (all of a
        hand-over that was not settled: nothing says its read was whole)."""
        return [
            owners[i]
            for handover, owners in self.handovers
            for i in (handover.changed if handover.settled else range(len(owners)))
        ]


class _Part:
    __slots__ = ("handover", "index", "layout", "pending", "workspace")

    def __init__(
        self, pending: Pending, index: int, layout: _Layout, workspace: Workspace, handover: Handover | None
    ) -> None:
        self.pending, self.index, self.layout, self.workspace = pending, index, layout, workspace
        self.handover = handover  # read live: copied by the first thread that runs it


class _State:
    """What the worker's thread shares with the callers (the thread holds this, not the
    worker: a worker nobody holds any more stops its thread)."""

    def __init__(self, slots: int) -> None:
        self.cond = threading.Condition(threading.Lock())
        self.queue: deque[_Part] = deque()
        self.free: list[Workspace] = []
        self.made = 0
        self.slots = slots
        self.thread: threading.Thread | None = None
        self.running: dict[_Part, threading.Thread] = {}  # parts being reduced, and by which thread
        self.error: BaseException | None = None  # the first failure, until raised
        self.failed = False  # a failure was kept (only the first is raised)
        self.stopping = False

    # --- with the lock held ----------------------------------------------------------------
    def help_or_wait(self) -> None:
        """Reduce the oldest queued part here, else wait for a change (checking that the
        threads reducing parts still run)."""
        if self.queue:
            self.run(self.queue.popleft())
        elif not self.cond.wait(_CHECK_S):
            for part, thread in list(self.running.items()):
                if not thread.is_alive():  # it cannot finish the part
                    self.fail(part, RuntimeError("a thread ended while it reduced a batch"))

    def run(self, part: _Part) -> None:
        """Reduce ``part`` (lock held on entry and on return, released meanwhile)."""
        pending = part.pending
        self.running[part] = threading.current_thread()
        self.cond.release()
        error: BaseException | None = None
        try:
            found = None
            if pending.error is None:
                if part.handover is not None:  # read live: the copy first (unless the barrier made it)
                    part.handover.run()
                    if part.handover.error is not None:
                        raise part.handover.error
                found = reduce_part(part.layout, pending.batch.names)
        except BaseException as exc:  # noqa: BLE001 - kept with the batch (see the module doc)
            error, found = exc, None
        finally:
            self.cond.acquire()
        if part not in self.running:  # failed meanwhile (its thread counted as gone)
            return
        if error is None and pending.error is None:
            pending.found[part.index] = found
            pending.left -= 1
            if not pending.left:  # the batch's last part: its values (the part counts as running)
                self.cond.release()
                try:
                    _fill(pending)
                except BaseException as exc:  # noqa: BLE001 - as above
                    error = exc
                finally:
                    self.cond.acquire()
                if part not in self.running:
                    return
                pending.done = error is None
        del self.running[part]
        self.free.append(part.workspace)
        if error is not None:
            self.fail(part, error)
        self.cond.notify_all()

    def fail(self, part: _Part, error: BaseException) -> None:
        """``part``'s batch failed with ``error`` (its workspace is free)."""
        if self.running.pop(part, None) is not None:
            self.free.append(part.workspace)
        pending = part.pending
        if pending.error is None:
            pending.error = error
            pending.done = True
            if not self.failed:
                self.failed, self.error = True, error
        self.cond.notify_all()

    def start(self) -> None:
        if self.thread is None or not self.thread.is_alive():
            self.thread = threading.Thread(target=self.serve, name="sdx-torch-reductions", daemon=True)
            self.thread.start()

    # --- the thread ----------------------------------------------------------------------------
    def serve(self) -> None:
        with contextlib.suppress(Exception):  # checked when the hook was made (HookWriter)
            lower_thread_priority(writer_nice(os.environ))
        with self.cond:
            while True:
                while not self.queue:
                    if self.stopping:
                        return
                    self.cond.wait()
                self.run(self.queue.popleft())

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()


def _fill(pending: Pending) -> None:
    """The batch's values into its records (from the parts' quantities)."""
    fill_records(pending.records, pending.batch.result(pending.found).numpy())  # type: ignore[arg-type]


def fill_records(records: Sequence[tuple[Reductions, np.dtype[Any]]], table: np.ndarray) -> None:
    """Each row of ``table`` (float64, a batch's results on the host) into its record, in the
    record's stored dtype (beyond its range: inf, as the NumPy path)."""
    with np.errstate(over="ignore"):
        for (record, dtype), row in zip(records, table, strict=True):
            record.values = row.astype(dtype)


class ReductionWorker:
    """CPU reductions of batches on a thread of their own (see the module doc)."""

    def __init__(self, slots: int = SLOTS) -> None:
        self._state = state = _State(slots)
        _STATES.add(state)
        self._finalizer = weakref.finalize(self, _State.stop, state)

    def submit(
        self,
        tensors: Sequence[torch.Tensor],
        ops: Ops,
        records: list[tuple[Reductions, np.dtype[Any]]],
        hand_over: HandOver | None = None,
    ) -> Pending:
        """Copy ``tensors`` (one batch, on the CPU) into workspaces now, waiting for a free
        one when all are in use, and reduce them on the worker's thread into ``records``
        (``(record, stored dtype)`` per tensor). Raises what the copy raises (e.g.
        ``torch.OutOfMemoryError`` making a workspace: nothing of the batch is filled then).

        ``hand_over``: read live instead (``_live``): each part is handed over with the copy
        that reads it (the same copy, into the same staging buffer, made by the worker or by
        the hand-over's barrier, whichever comes first); :meth:`Pending.dropped` names the
        records not to write once the barriers have settled."""
        state = self._state
        pending = Pending(batch := Batch(tensors, ops), records)
        first = 0  # the part's first piece, and each piece's tensor (pieces of larger tensors)
        owner = None if batch.split is None else [i for i, n in enumerate(batch.split) for _ in range(n)]
        for index, part in enumerate(batch.parts):
            workspace = self._take()
            handover = None
            try:
                layout = workspace.layout(part, staged=True)
                if hand_over is None:
                    copy_part(layout, part)
                else:
                    span = range(first, first + len(part))
                    owners = span if owner is None else [owner[i] for i in span]
                    handover = hand_over(part, owners, functools.partial(copy_part, layout))
                    pending.handovers.append((handover, owners))
                    first += len(part)
            except BaseException:
                with state.cond:
                    pending.error = RuntimeError("not copied")  # its queued parts are skipped
                    state.free.append(workspace)
                    state.cond.notify_all()
                raise
            with state.cond:
                state.queue.append(_Part(pending, index, layout, workspace, handover))
                state.start()
                state.cond.notify_all()
        return pending

    def _take(self) -> Workspace:
        state = self._state
        with state.cond:
            while not state.free:
                if state.made < state.slots:
                    state.made += 1
                    return Workspace()
                state.help_or_wait()
            return state.free.pop()

    def wait(self, pendings: Sequence[Pending]) -> None:
        """Return once every batch of ``pendings`` is reduced (its records filled) or has
        failed (its ``error``: see :meth:`raise_failure`), reducing queued parts here meanwhile."""
        state = self._state
        with state.cond:
            for pending in pendings:
                while not pending.done:
                    state.help_or_wait()

    def raise_failure(self) -> None:
        """Raise the first failure of a reduction, once (later ones fail their batches only)."""
        state = self._state
        if state.error is not None:
            with state.cond:
                error, state.error = state.error, None
            if error is not None:
                raise error

    def close(self) -> None:
        """Reduce what is queued, stop the thread, then raise a failure not raised yet."""
        state = self._state
        with state.cond:
            while state.queue or state.running:
                state.help_or_wait()
            thread = state.thread
        self._finalizer()  # stop
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self.raise_failure()


_STATES: weakref.WeakSet[_State] = weakref.WeakSet()


def _before_fork() -> None:
    for state in list(_STATES):
        state.cond.acquire()


def _after_fork_in_parent() -> None:
    for state in list(_STATES):
        state.cond.release()


def _after_fork_in_child() -> None:
    error = RuntimeError("the process forked while this batch was reduced: its values are lost in the child")
    for state in list(_STATES):
        state.thread = None  # not copied into the child
        for part in list(state.running):  # their threads are not in the child
            state.fail(part, error)
        state.cond.release()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)
