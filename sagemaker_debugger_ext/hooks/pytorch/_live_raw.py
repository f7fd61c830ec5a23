"""A saved step's raw CPU weights read live: the hook's writer thread copies them, not the training's.

At a saved step the weights saved raw (the usual ``weights`` collection) are copied when the step
starts, before its forward pass. Read live (``_live``, the guard the device reductions use too),
the training thread only reserves each record's copy (``StepOutput.write_raw_slot``) and hands
the parameters over; the writer thread, idle then (the step waited for the previous step's files),
copies them (one ``torch._foreach_copy_``, without the interpreter lock) while the forward and
backward passes run. The guard's barrier before an optimizer's step (or at the step's end) makes
the copy itself when the writer thread has not started it (and copies privately for it when it
is copying then); its version and storage checks catch a weight changed before it was read: that
weight is not written at that step (``StepOutput.check_live``, applied when the writer thread
encodes the step, after its read), the guard logs a warning naming it, and weights are copied
on the training thread from then on. Weights are
read live only when a step's hold at least ``LIVE_MIN_BYTES`` (smaller ones are cheaper to copy
at once), after the guard's learning window (copies checked unchanged at an optimizer's
barrier), only with a writer thread, and for plain contiguous CPU float tensors outside
``torch.distributed``. The copies are the same bytes at the same moment of the step, so the files
are the same as copies made at once. ``$SAGEMAKER_DEBUGGER_EXT_LIVE_READS=false`` turns it off.

Gradients saved raw are still copied by their hook in the backward pass: holding the gradient
autograd hands a hook past the hook's return makes ``AccumulateGrad`` clone it instead of keeping
it as ``.grad`` (a second copy, on the training thread), and their barrier, the next step's start,
comes right after the optimizer's step on a fast step, too soon for the writer thread's copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import torch

from ._live import WEIGHTS, LiveGuard, eligible

if TYPE_CHECKING:
    from .._step import StepOutput
    from .._writer import HookWriter

__all__ = ["LIVE_MIN_BYTES", "LiveRaw"]

#: a saved step's raw weights are read live only when they hold at least this many bytes:
#: measured (one process, alternated, training-thread CPU by position in a 10-step cycle), the
#: 1.07 MB of the fast-step MLP gained nothing (saving step 529-599 against 542-558 us, the
#: overhead 0.01 higher), the 23 MB of a 784-2048-2048-10 MLP took 1.8-2.6 ms off the saving
#: step (5.3-8.3 against 7.1-10.9 ms); below it nothing is handed over, watched or cloned
LIVE_MIN_BYTES = 4 << 20

_OFF, _LEARN, _LIVE = 0, 1, 2


class LiveRaw:
    """The raw weights of a hook's saved steps, read live when the guard allows (module doc)."""

    def __init__(self) -> None:
        self.guard = LiveGuard("raw weights")
        self._mode = _OFF
        self._output: Callable[[], StepOutput] | None = None
        self._names: list[str] = []
        self._tensors: list[torch.Tensor] = []
        self._rooms: list[torch.Tensor] = []  # where each tensor's record is copied to (its array)
        self._indexes: list[int] = []

    @contextmanager
    def weights(self, writer: HookWriter, output: Callable[[], StepOutput], step: int) -> Iterator[None]:
        """The step's weights are written inside (by :meth:`take` or by copy); handed over at the end."""
        guard = self.guard
        if not guard.enabled or WEIGHTS in guard.copy_only or writer.background is None:
            yield
            return
        self._mode = _LIVE if guard.live(WEIGHTS) else _LEARN
        self._output = output
        try:
            yield
        finally:
            mode, self._mode = self._mode, _OFF
            names, tensors, rooms, indexes = self._names, self._tensors, self._rooms, self._indexes
            self._names, self._tensors, self._rooms, self._indexes = [], [], [], []
            if mode == _LIVE and tensors:
                self._hand_over(writer, output(), step, names, tensors, rooms, indexes)
            elif tensors and sum(t.nbytes for t in tensors) >= LIVE_MIN_BYTES:
                guard.watch(WEIGHTS, tensors, names)  # copied at once: the guard learns from them

    def take(self, name: str, value: torch.Tensor) -> bool:
        """Write ``value`` (a plain CPU tensor of a NumPy dtype, saved raw only) as a live read:
        True if done, False if the caller copies it now (then, while learning, it is watched)."""
        mode = self._mode
        if mode == _OFF:
            return False
        if mode == _LEARN:
            self._names.append(name)
            self._tensors.append(value)
            return False
        if not (value.is_contiguous() and eligible((value,))) or self._output is None:
            return False
        view = value.detach().numpy()
        room, index = self._output().write_raw_slot(name, view)
        self._names.append(name)
        self._tensors.append(value)
        self._rooms.append(torch.from_numpy(room))
        self._indexes.append(index)
        return True

    def _hand_over(self, writer: HookWriter, out: StepOutput, step: int, names: list[str],
                   tensors: list[torch.Tensor], rooms: list[torch.Tensor], indexes: list[int]) -> None:  # fmt: skip
        def read(sources: Sequence[torch.Tensor]) -> None:  # one call, without the interpreter lock while it copies
            with torch.no_grad():
                torch._foreach_copy_(rooms, list(sources))

        handover = self.guard.hand_over(WEIGHTS, tensors, names, read, f"step {step}")
        out.check_live(handover, indexes)
        background = writer.background
        if background is not None:  # the writer thread copies them now (its queue is empty)
            background.submit_call(handover.run, counted=False)

    def settle(self) -> None:
        """The step ends: every live read done and checked (before its files are handed over)."""
        self.guard.settle()

    def close(self) -> None:
        """Settle the last reads; leave the optimizer's barrier."""
        self.guard.close()
