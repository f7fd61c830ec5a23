"""The quiet path of a step's opening, for hooks called at every step of a framework loop.

Python between a framework's calls runs with cold caches, so the long way of opening a step
(``BaseHook._start_step``) costs several times this path inside Keras' ``fit`` (figures in
``docs/hook.md``, "Measurements behind the hook's design"). A hook asks
:meth:`QuietSteps.open` first (through its ``_quiet_step``) and opens the step the long way
when it returns False. Both ways advance the hook's :class:`~._clock.StepClock` alike.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..modes import ModeKeys
from ._due import NOTHING_DUE

if TYPE_CHECKING:
    from ._hook import BaseHook

__all__ = ["QuietSteps"]


class QuietSteps:
    """Which steps may open quietly: those of ``mode`` (None: none) below the next due step.

    The hook's ``_start_step`` calls :meth:`allow` (with the step's mode, or None when every
    step is recorded for the profiler); its ``set_mode`` calls :meth:`allow` with None.
    """

    __slots__ = ("_hook", "below", "mode")

    def __init__(self, hook: BaseHook) -> None:
        self._hook = hook
        self.mode: ModeKeys | None = None
        self.below: float = -1  # the next due step of ``mode``; -1: not worked out yet

    def allow(self, mode: ModeKeys | None) -> None:
        """Let the steps of ``mode`` open quietly until the next due one (worked out when first asked)."""
        self.mode = mode
        self.below = -1

    def open(self, mode: ModeKeys) -> bool:
        """Open the next step of ``mode`` if that is all ``_start_step`` would do (the
        running step, of this mode, wrote and holds nothing, the next one is due for
        nothing, no step timing); returns whether it did."""
        hook = self._hook
        clock = hook._clock
        if mode is not self.mode or not clock.open or hook._disabled:
            return False
        step = clock.mode_steps[mode] + 1
        if self.below < 0:
            self.below = hook._schedule.next_due(mode, step - 1) if hook._writes else math.inf
        if step >= self.below:
            return False
        saves = hook._saves
        if hook._output is not None or saves.pending or saves.scalars or hook._dirty or hook._closed:
            return False
        clock.advance(mode=mode)
        hook._due = NOTHING_DUE
        return True
