"""Is the model as a whole still learning? The gate of the noise-aware class-level rules.

A class the model has not learned *yet* is mispredicted as badly as a class it cannot learn:
on a converging CNN, class 0 was 81 % mispredicted at epoch 3 of 18 while the loss fell
steadily, and learned later. ClassImbalance's and Confusion's per-class deferral (a class whose
misprediction falls beyond sampling error is still being learned) cannot see a class whose
turn has not come: its misprediction is flat until the model starts on it. So with
``learning_window`` the rules judge a class only once the model as a whole has stopped
learning: the overall loss no longer falls beyond noise.

The loss is the trial's ``losses`` collection (every framework hook puts the loss it saves
there; XGBoost's hook puts its ``<channel>-<metric>`` values there), each tensor read in the
mode of its first saved step, as LossNotDecreasing reads it (TRAIN for a training loop, GLOBAL
for XGBoost). The test is LossNotDecreasing's noise-aware test (:func:`._noise.window_drop`):
the mean of the last ``learning_window`` saved values is below the mean of the
``learning_window`` before beyond their standard errors, at ``LEARNING_CONFIDENCE`` (0.95, the
confidence of the per-class deferral: deferring costs a window, a false alarm the user's
trust). Until a loss has more than ``learning_window`` saved values the model has not shown
that it stopped learning, so the rule waits. Any loss still falling defers the verdict.

With no loss saved the rule cannot tell; it judges as without ``learning_window`` (the per-class
deferral still applies) rather than never, and :meth:`LearningGate.note` says so.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ...modes import ModeKeys
from ...rule_contract._params import Kind, Param, positive
from ._noise import LEARNING_Z, window_drop

if TYPE_CHECKING:
    from ._base import BuiltinRule

__all__ = ["LEARNING_WINDOW_PARAM", "LearningGate"]

LEARNING_WINDOW_PARAM = Param(
    name="learning_window",
    kind=Kind.INT,
    doc="noise_aware: judge classes only once the loss ('losses' collection) stopped falling: its last"
    " learning_window saved values not below the learning_window before beyond noise (extension; default: off, AWS)",
    check=positive,
)


class LearningGate:
    """Per rule: whether the model as a whole is still learning at a step (see the module doc)."""

    def __init__(self, rule: BuiltinRule, window: int | None) -> None:
        self._rule = rule
        self._window = window
        self._mode: dict[str, ModeKeys] = {}
        self._values: dict[str, list[float]] = {}  # finite saved values in the tensor's mode, in step order
        self._read: dict[str, int] = {}  # last global step read per tensor
        self.without_loss = False  # the last question found no saved loss
        self.deferred: int | None = None  # the global step of the last answer, when it was "still learning"

    def _series(self, name: str, step: int) -> list[float]:
        rule = self._rule
        values = self._values.setdefault(name, [])
        last = self._read.get(name, -1)
        for g in rule.steps_of(name):
            if g <= last or g > step:
                continue
            self._read[name] = g
            mode = self._mode.setdefault(name, rule.mode_of(g)[0])
            raw = rule.value_at(name, g)
            if rule.mode_of(g)[0] is mode and raw is not None and raw.size == 1:
                v = float(raw.reshape(()))
                if math.isfinite(v):
                    values.append(v)
        return values

    def still_learning(self, step: int) -> bool:
        """True while a loss saved up to global ``step`` still falls beyond noise or has too few values
        to tell; False without ``learning_window`` or without a saved loss (``without_loss``)."""
        k = self._window
        if not k:
            return False
        names = [n for n in self._rule.select_tensors(["losses"]) if self._series(n, step)]
        self.without_loss = not names
        self.deferred = step if any(self._falling(self._values[n], k) for n in names) else None
        return self.deferred is not None

    @staticmethod
    def _falling(values: list[float], k: int) -> bool:
        if len(values) <= k:
            return True  # not shown to have stopped yet
        base, current = values[-2 * k : -k], values[-k:]
        return window_drop(base, current, base + current).beyond(LEARNING_Z)

    def note(self) -> str | None:
        """Why classes were not judged at the end, if so (a StatusDetails note), else None."""
        if self._window and self.without_loss:
            return "learning_window: no loss saved (collection 'losses'), classes were judged without it"
        if self.deferred is not None:
            return f"learning_window: the loss still fell beyond noise at step {self.deferred}, classes were not judged there (the model was still learning)"
        return None
