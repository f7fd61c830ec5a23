"""The hook's step and mode clock: the one owner of the step counters.

smdebug's hooks count a global step and one step per mode (``hook.step``,
``hook.mode_steps``); a step is opened in the mode that was current then and keeps that
mode until it ends, even when ``set_mode`` switches before the next step opens. Every way
of opening a step (the hook's ``_start_step``, the quiet path of ``_quiet.py``, XGBoost's
step for scalars saved after training) goes through :meth:`StepClock.advance`.
"""

from __future__ import annotations

from ..modes import ModeKeys

__all__ = ["StepClock"]

_GLOBAL = ModeKeys.GLOBAL


class StepClock:
    """Global step, current mode, each mode's step, and the running step's mode and mode step.

    Attributes:
        step: the global step of the running (or last) step; -1 before the first.
        mode: the current mode (``set_mode``); the next step opens in it.
        mode_steps: each mode's step count (-1: none yet); GLOBAL follows ``step``.
        step_mode: the mode the running step was opened in.
        step_mode_step: the running step's number within ``step_mode``.
        open: whether a step is running (opened and not yet ended).
    """

    __slots__ = ("mode", "mode_steps", "open", "step", "step_mode", "step_mode_step")

    def __init__(self) -> None:
        self.step = -1
        self.mode = _GLOBAL
        self.mode_steps: dict[ModeKeys, int] = dict.fromkeys(ModeKeys, -1)
        self.step_mode = _GLOBAL
        self.step_mode_step = -1
        self.open = False

    def advance(self, at: int | None = None, mode: ModeKeys | None = None) -> None:
        """Open the next step: the global and the mode's step go up by one, or both become
        ``at`` (XGBoost's iteration number). ``mode``: the step's mode, default the current
        one (XGBoost's step for scalars saved after training keeps the last step's)."""
        if mode is None:
            mode = self.mode
        if at is None:
            self.step += 1
            self.mode_steps[mode] = mode_step = self.mode_steps[mode] + 1
        else:
            self.step = self.mode_steps[mode] = mode_step = at
        if mode is not _GLOBAL:
            self.mode_steps[_GLOBAL] = self.step
        self.step_mode = mode
        self.step_mode_step = mode_step
        self.open = True

    def __repr__(self) -> str:
        return f"StepClock(step={self.step}, mode={self.mode.name}, running={self.open})"
