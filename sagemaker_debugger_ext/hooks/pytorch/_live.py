"""Live reads: may a tensor be read later, by another thread, in place of a copy now?

A hook that saves a step's weights or gradients must record their values at the moment they
are saved (the weights when the step starts, the gradients when the backward pass ends). On
CPU the usual way is a copy on the training thread at that moment. A *live read* instead hands
the tensors over (references only) and a worker reads them later, while the training goes on;
it is right only if nobody changes them in between. This module decides when that holds and
checks afterwards that it did:

- **Barriers.** A hand-over is *settled* (read, then checked) before anything may change its
  tensors: weights (``WEIGHTS``) before an optimizer steps (one process-wide
  ``torch.optim.optimizer.register_optimizer_step_pre_hook``, kept while a guard lives),
  gradients (``GRADIENTS``) at the hook's next step boundary, both at ``close()``
  (:meth:`LiveGuard.settle`). Settling reads what the worker has not started (on the settling
  thread) and waits for a read in progress; it never waits for anything else.
- **Version counters.** A hand-over records each tensor's ``_version``, ``data_ptr()`` and
  storage size; settling compares them. A tensor changed in place (which bumps its version),
  given new storage (``p.data = ...``) or resized between the hand-over and its barrier may have
  been read torn: its values are *not* to be written (:attr:`Handover.changed`); the guard logs
  one warning naming it and the step, and reads that kind by copy for the rest of the run.
- **A learning window.** A kind is read live only after ``LEARN_STEPS`` captures made by copy
  (:meth:`LiveGuard.watch`: stamps and a private clone each) were settled with their tensors
  unchanged, by version *and by value* (``.data`` edits bump no version), and, for weights, at
  least one of them at an optimizer's barrier (an update outside ``torch.optim.Optimizer`` is
  never waited for). Any change seen there keeps the kind copied for good: gradient clipping
  (``clip_grad_norm_`` scales gradients in place every step), ``zero_grad(set_to_none=False)``
  before the next step, weights edited outside the optimizer.
- **Eligibility** (:func:`eligible`): plain strided CPU tensors of a floating dtype, and no
  ``torch.distributed`` process group (FSDP frees and regrows parameter storage around its
  forward; sharded tensors are never plain). CUDA tensors are never read live.
- ``$SAGEMAKER_DEBUGGER_EXT_LIVE_READS=false`` turns live reads off (copies, as before).

What is not caught: a tensor edited through ``.data`` (or raw memory) between a hand-over and its
barrier after the learning window, in a run that did not do so within it.

Use (a reduction worker or a writer): ``guard.live(kind)`` says whether to hand over; if so,
``h = guard.hand_over(kind, tensors, names, read, label)`` where ``read(sources)`` copies
``sources`` (the tensors, or the barrier's private copies of them) where the user reads them
(call ``h.run()`` on the worker before using the copy: it reads, or waits for the barrier's
read, and ``h.error`` says whether the copy is whole); after the barrier, ``h.settled`` is true and ``h.changed`` lists the
indexes of the tensors whose copy must not be used. When copying instead, ``guard.watch(kind,
tensors, names)`` lets the guard learn. ``guard.close()`` when the user is done with it.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from ..._container_env import HOOK_LIVE_READS_ENV
from .._reduction_config import parse_bool
from ._tensors import PLAIN_TENSORS

__all__ = ["GRADIENTS", "LEARN_STEPS", "LIVE_READS_ENV", "WEIGHTS", "Handover", "LiveGuard", "eligible"]

_LOG = logging.getLogger("sagemaker_debugger_ext.hooks")

WEIGHTS = "weights"
GRADIENTS = "gradients"
#: clean captures by copy before a kind is read live
LEARN_STEPS = 3
LIVE_READS_ENV = HOOK_LIVE_READS_ENV
#: kinds settled at an optimizer's step (the others at the hook's next step boundary)
_AT_OPTIMIZER = frozenset({WEIGHTS})
_FLOATS = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})
_UNREAD, _READING, _READ = 0, 1, 2
#: seconds between checks that a thread reading a hand-over still runs (a fork ends it)
_CHECK_S = 1.0
#: ``read(sources)``: copies ``sources`` (the tensors handed over, or copies of them) for the user
Read = Callable[[Sequence[torch.Tensor]], None]
#: the hand-overs' states (one condition for all: reads are few and short)
_COND = threading.Condition(threading.Lock())


def eligible(tensors: Sequence[torch.Tensor]) -> bool:
    """Whether all of ``tensors`` may be read live (see the module doc)."""
    return not _distributed() and all(
        t.__class__ in PLAIN_TENSORS and t.is_cpu and t.layout == torch.strided and t.dtype in _FLOATS for t in tensors
    )


def _distributed() -> bool:
    dist = torch.distributed
    return dist.is_available() and dist.is_initialized()


def _stamp(tensor: torch.Tensor) -> tuple[int, int, int]:
    return tensor._version, tensor.data_ptr(), tensor.untyped_storage().nbytes()


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal values, NaN equal to NaN."""
    return torch.equal(a, b) or bool(((a == b) | (a.isnan() & b.isnan())).all())


class Handover:
    """Tensors handed over to be read later by ``read(sources)``, which copies ``sources`` (the
    tensors, or private copies of them) where the user reads them. The first thread to
    :meth:`run` reads; the others wait for it. The barrier (:meth:`_take_over`) never waits
    for another thread's read (a worker at a low priority on a busy machine could keep the
    training thread waiting): it copies the tensors privately and the reading thread, when
    done, reads those copies again (its own read may have seen the tensors change after the
    barrier). After the barrier: ``settled`` is true and ``changed`` holds the indexes of the
    tensors whose read values must not be used."""

    __slots__ = ("_private", "_reader", "_taking", "changed", "error", "kind", "label", "names", "read", "settled",
                 "stamps", "state", "tensors")  # fmt: skip

    def __init__(self, kind: str, tensors: Sequence[torch.Tensor], names: Sequence[str], read: Read,
                 label: str) -> None:  # fmt: skip
        self.kind, self.names, self.read, self.label = kind, names, read, label
        self.tensors: Sequence[torch.Tensor] | None = tensors
        self.stamps = [_stamp(t) for t in tensors]
        self._reader: threading.Thread | None = None
        self._taking = False  # the barrier is copying the tensors privately
        self._private: list[torch.Tensor] | None = None  # those copies, to read again
        self.state = _UNREAD
        self.error: BaseException | None = None  # what read() raised
        self.settled = False
        self.changed: tuple[int, ...] = ()

    def run(self) -> None:
        """Read the tensors here unless a thread did or does (then wait for it). A failed
        read is kept in ``error``; a reading thread that ended (a fork) sets it too."""
        with _COND:
            while self.state == _READING:
                reader = self._reader
                if not _COND.wait(_CHECK_S) and reader is not None and not reader.is_alive():
                    self.error, self.state = RuntimeError("the thread reading these tensors ended"), _READ
            if self.state == _READ:
                return
            self.state, self._reader, sources = _READING, threading.current_thread(), self.tensors or ()
        self._read(sources)

    def _read(self, sources: Sequence[torch.Tensor]) -> None:
        error: BaseException | None = None
        try:
            self.read(sources)
        except BaseException as exc:  # noqa: BLE001 - kept for whoever uses the read
            error = exc
        with _COND:
            while self._taking:  # the barrier is copying them: a short wait (it runs on its own thread)
                _COND.wait()
            private = self._private
        if private is not None:  # the barrier's copies: what the tensors held at the barrier
            error = None
            try:
                self.read(private)
            except BaseException as exc:  # noqa: BLE001 - as above
                error = exc
        with _COND:
            self.error, self.state, self._private = error, _READ, None
            _COND.notify_all()

    def _take_over(self) -> None:
        """The barrier's read: here when nobody started it; while another thread reads,
        private copies for it to read again, without waiting for it."""
        with _COND:
            if self.state == _READ:
                return
            mine = self.state == _UNREAD
            if mine:
                self.state, self._reader, sources = _READING, threading.current_thread(), self.tensors or ()
            else:
                self._taking = True
        if mine:
            self._read(sources)
            return
        private: list[torch.Tensor] | None = None
        try:
            with torch.no_grad():
                private = [t.detach().clone() for t in self.tensors or ()]
        finally:
            with _COND:
                self._taking = False
                if private is None:  # copying failed: nothing says the reading thread's read is whole
                    self.error = RuntimeError("the barrier could not copy the tensors being read")
                else:
                    self._private = private
                _COND.notify_all()

    def _check(self) -> tuple[int, ...]:
        """Read (:meth:`_take_over`), then the indexes of the tensors changed since the hand-over."""
        self._take_over()
        tensors = self.tensors or ()
        if self.error is not None:
            return tuple(range(len(tensors)))
        return tuple(i for i, t in enumerate(tensors) if _stamp(t) != self.stamps[i])


class _Watch:
    """A capture made by copy during the learning window: its tensors' stamps and values."""

    __slots__ = ("clones", "kind", "names", "stamps", "tensors")

    def __init__(self, kind: str, tensors: Sequence[torch.Tensor], names: Sequence[str]) -> None:
        self.kind, self.tensors, self.names = kind, list(tensors), names
        self.stamps = [_stamp(t) for t in tensors]
        with torch.no_grad():
            self.clones = [t.detach().clone() for t in tensors]

    def clean(self) -> bool:
        return all(
            _stamp(t) == s and _same(t.detach(), c)
            for t, s, c in zip(self.tensors, self.stamps, self.clones, strict=True)
        )


class LiveGuard:
    """Which kinds of tensors a user (a hook's reductions, its writer) reads live, and their
    barriers (see the module doc). ``what``: the user's name in warnings (e.g. ``reductions``)."""

    def __init__(self, what: str, enabled: bool | None = None) -> None:
        self.what = what
        self.enabled = _enabled() if enabled is None else enabled
        self._lock = threading.RLock()
        self._handovers: list[Handover] = []
        self._watches: list[_Watch] = []
        self._clean: dict[str, int] = {}  # clean learning captures per kind
        self._barrier_seen: set[str] = set()  # kinds with a learning capture settled at an optimizer
        self.copy_only: set[str] = set()  # kinds read by copy for good
        self.handed_over = 0  # tensors handed over so far
        _GUARDS.add(self)

    def live(self, kind: str) -> bool:
        """Whether ``kind`` is read live now (learned, never seen changed, enabled)."""
        return (
            self.enabled
            and kind not in self.copy_only
            and self._clean.get(kind, 0) >= LEARN_STEPS
            and (kind not in _AT_OPTIMIZER or kind in self._barrier_seen)
        )

    def learning(self, kind: str) -> bool:
        """Whether a capture of ``kind`` made by copy now should be :meth:`watch`-ed."""
        return self.enabled and kind not in self.copy_only and not self.live(kind)

    def hand_over(self, kind: str, tensors: Sequence[torch.Tensor], names: Sequence[str], read: Read,
                  label: str) -> Handover:  # fmt: skip
        """Hand ``tensors`` (:func:`eligible`) over; ``read(sources)`` copies them (see :class:`Handover`);
        ``names`` and ``label`` (e.g. ``step 12``) name them in a warning."""
        handover = Handover(kind, tensors, names, read, label)
        with self._lock:
            self._handovers.append(handover)
            self.handed_over += len(tensors)
        _OPTIMIZER_BARRIER.need()
        return handover

    def watch(self, kind: str, tensors: Sequence[torch.Tensor], names: Sequence[str]) -> None:
        """Learn from a capture of ``kind`` made by copy now (see :meth:`learning`)."""
        if not eligible(tensors):
            return
        item = _Watch(kind, tensors, names)
        with self._lock:
            self._watches.append(item)
        _OPTIMIZER_BARRIER.need()

    def settle(self, at_optimizer: bool = False) -> None:
        """The barrier: read every hand-over not read yet, check it and the learning captures
        (at an optimizer's step: weights only; else every kind)."""
        if not (self._handovers or self._watches):
            return
        with self._lock:
            due = [h for h in self._handovers if not at_optimizer or h.kind in _AT_OPTIMIZER]
            self._handovers = [h for h in self._handovers if h not in due] if at_optimizer else []
            watches = [w for w in self._watches if not at_optimizer or w.kind in _AT_OPTIMIZER]
            self._watches = [w for w in self._watches if w not in watches] if at_optimizer else []
            for handover in due:
                handover.changed = changed = handover._check()
                handover.settled, handover.tensors = True, None
                if changed:
                    self._changed(handover, changed)
            for item in watches:
                if not item.clean():
                    if item.kind not in self.copy_only:
                        _LOG.debug("%s: %s change before their barrier: read by copy", self.what, item.kind)
                    self.copy_only.add(item.kind)
                elif item.kind not in self.copy_only:
                    self._clean[item.kind] = self._clean.get(item.kind, 0) + 1
                    if at_optimizer:
                        self._barrier_seen.add(item.kind)

    def _changed(self, handover: Handover, changed: Sequence[int]) -> None:
        names = [handover.names[i] for i in changed]
        why = f"its read failed ({handover.error})" if handover.error is not None else "changed in place or re-stored"
        _LOG.warning(
            "%s of %s %s at %s not written: %s before they were read (they were read live, without a copy); "
            "%s are copied from now on",
            self.what, handover.kind, ", ".join(names), handover.label, why, handover.kind,
        )  # fmt: skip
        self.copy_only.add(handover.kind)

    def close(self) -> None:
        """Settle everything and stop taking part in the optimizer's barrier."""
        self.settle()
        _GUARDS.discard(self)
        _OPTIMIZER_BARRIER.release()


def _enabled() -> bool:
    raw = os.environ.get(LIVE_READS_ENV)
    return True if raw is None or not raw.strip() else parse_bool(LIVE_READS_ENV, raw)


_GUARDS: weakref.WeakSet[LiveGuard] = weakref.WeakSet()


class _OptimizerBarrier:
    """One ``register_optimizer_step_pre_hook`` for the process, while some guard lives."""

    def __init__(self) -> None:
        self._handle: Any = None
        self._lock = threading.Lock()

    def need(self) -> None:
        if self._handle is None:
            with self._lock:
                if self._handle is None:
                    self._handle = register_optimizer_step_pre_hook(_before_optimizer_step)

    def release(self) -> None:
        with self._lock:
            if not _GUARDS and self._handle is not None:
                self._handle.remove()
                self._handle = None


def _before_optimizer_step(optimizer: Any, args: Any, kwargs: Any) -> None:
    for guard in list(_GUARDS):
        try:
            guard.settle(at_optimizer=True)
        except Exception:  # noqa: BLE001 - never into the training's optimizer (unsettled: not written)
            _LOG.exception("%s: checking the tensors read live failed; they are copied from now on", guard.what)
            guard.enabled = False


_OPTIMIZER_BARRIER = _OptimizerBarrier()


def _before_fork() -> None:
    """A fork waits for a settling in progress; no lock is copied held into the child (a read
    in progress there is the parent's: its thread is not in the child, see :meth:`Handover.run`)."""
    _FORK_HELD[:] = list(_GUARDS)
    for guard in _FORK_HELD:
        guard._lock.acquire()
    _COND.acquire()


def _after_fork() -> None:
    _COND.release()
    for guard in _FORK_HELD:
        guard._lock.release()
    _FORK_HELD.clear()


_FORK_HELD: list[LiveGuard] = []


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork, after_in_child=_after_fork)
