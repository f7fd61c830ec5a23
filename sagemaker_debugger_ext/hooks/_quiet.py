"""The quiet path of a step's opening, for hooks called at every step of a framework loop.

Python between a framework's calls runs with cold caches: inside Keras' ``fit`` the hook's
per-step callback cost 53 us when every step opened the long way (``_start_step``) and 10 us
with this path, measured. A hook calls :meth:`QuietSteps._quiet_step` first and opens the
step the long way when it returns False.
"""

from __future__ import annotations

import math
from typing import Any

from ..modes import ModeKeys
from ._due import NOTHING_DUE, DueCollections

__all__ = ["QuietSteps"]


class QuietSteps:
    """Mixin of :class:`~._hook.BaseHook`: ``_start_step`` sets ``_quiet_mode`` (the mode a
    quiet step may have, None: none may) and ``_quiet_below`` = -1 (the next due step, worked
    out here when first asked); ``set_mode`` clears ``_quiet_mode``."""

    step: int
    mode_steps: dict[ModeKeys, int]
    _quiet_mode: ModeKeys | None
    _quiet_below: float
    _schedule: DueCollections
    _writes: bool
    _step_open: bool
    _step_mode_step: int
    _disabled: bool
    _closed: bool
    _dirty: bool
    _output: Any
    _pending: dict[str, Any]
    _scalars: list[Any]
    _due: Any

    def _quiet_step(self, mode: ModeKeys) -> bool:
        """Open the next step of ``mode`` if that is all ``_start_step`` would do (the
        running step, of this mode, wrote and holds nothing, the next one is due for
        nothing, no step timing); returns whether it did."""
        step = self.mode_steps[mode] + 1
        if mode is not self._quiet_mode or not self._step_open or self._disabled:
            return False
        if self._quiet_below < 0:
            self._quiet_below = self._schedule.next_due(mode, step - 1) if self._writes else math.inf
        if step >= self._quiet_below:
            return False
        if self._output is not None or self._pending or self._scalars or self._dirty or self._closed:
            return False
        self.step += 1
        self.mode_steps[mode] = self._step_mode_step = step
        if mode is not ModeKeys.GLOBAL:
            self.mode_steps[ModeKeys.GLOBAL] = self.step
        self._due = NOTHING_DUE
        return True
