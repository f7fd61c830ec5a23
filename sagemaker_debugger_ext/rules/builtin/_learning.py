"""Is the model as a whole still learning? The gate of the noise-aware class-level rules.

A class the model has not learned *yet* is mispredicted as badly as a class it cannot learn:
on a converging CNN, class 0 was 81 % mispredicted at epoch 3 of 18 while the loss fell
steadily, and learned later. ClassImbalance's and Confusion's per-class deferral (a class whose
misprediction falls beyond sampling error is still being learned) cannot see a class whose
turn has not come: its misprediction is flat until the model starts on it. So with
``learning_window`` the rules judge a class only once the model as a whole has stopped
learning: the overall loss no longer falls beyond noise.

The loss is the trial's ``losses`` collection (every framework hook puts the loss it saves
there; XGBoost's hook puts its ``<channel>-<metric>`` values there), read per saved step:
the TRAIN losses of a training loop; for XGBoost the ``validation-<m>`` rounds when saved, else
``train-<m>``. Boosting drives ``train-logloss`` towards 0 round after round, by construction,
while ``validation-logloss`` has long been flat (a healthy generated run: 0.367 +- 0.0004 over
its last 20 rounds, ``train-logloss`` still falling 0.7 % a round): judged on the training
metric, an XGBoost model would never have stopped learning. A training loop's evaluation
passes give one loss per pass, too few to tell within a run of 5 to 20 epochs (a window of 4
passes spans most of such a run), so its training loss is read; a network that memorises its
training batches defers the class verdicts (the quiet side).
The test is LossNotDecreasing's noise-aware "decrease beyond noise" (:func:`._noise.window_drop`,
``WindowDrop.beyond``): the mean of the last ``learning_window`` saved values is below the mean
of the ``learning_window`` before by more than ``LEARNING_PERCENT`` (0.1 %, LossNotDecreasing's
default ``diff_percent``) of it beyond their standard errors, at ``LEARNING_CONFIDENCE`` (0.95,
the confidence of the per-class deferral: deferring costs a window, a false alarm the user's
trust). Until a loss has more than ``learning_window`` values the model has not shown that it
stopped learning, so the rule waits. Any loss still falling defers the verdict.

With no loss saved the rule cannot tell; it judges as without ``learning_window`` (the per-class
deferral still applies) rather than never, and :meth:`LearningGate.note` says so.
"""

from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING

from ...modes import ModeKeys
from ...rule_contract._params import Kind, Param, positive
from ._noise import LEARNING_Z, window_drop
from ._series import metric_kind

if TYPE_CHECKING:
    from ._base import BuiltinRule

__all__ = ["LEARNING_PERCENT", "LEARNING_WINDOW_PARAM", "LearningGate"]

# a fall by less than this percentage of the loss is no fall: LossNotDecreasing's default diff_percent
LEARNING_PERCENT = 0.1

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
        self._done = -1  # last global step read
        self._train: dict[str, list[float]] = {}  # per loss: TRAIN values; XGBoost's train-<m> rounds
        self._held_out: dict[str, list[float]] = {}  # per loss: XGBoost's validation-<m> rounds
        self.without_loss = False  # the last question found no saved loss
        self.deferred: int | None = None  # the global step of the last answer, when it was "still learning"

    def _read(self, step: int) -> None:
        """Read the saved losses of the steps up to ``step`` not read yet, in step order."""
        rule = self._rule
        names = rule.select_tensors(["losses"])
        steps = rule.base_trial.steps()
        for g in steps[bisect.bisect_right(steps, self._done) :]:
            if g > step:
                break
            self._done = g
            if rule.mode_of(g)[0] not in (ModeKeys.TRAIN, ModeKeys.GLOBAL):
                continue
            for name in names:
                raw = rule.value_at(name, g)
                if raw is None or raw.size != 1 or not math.isfinite(v := float(raw.reshape(()))):
                    continue
                kind = metric_kind(name)
                series = self._held_out if kind is not None and kind[0] == "validation" else self._train
                series.setdefault(name, []).append(v)

    def still_learning(self, step: int) -> bool:
        """True while a loss saved up to global ``step`` still falls beyond noise or has too few values
        to tell (XGBoost's validation metrics when saved, else the training losses); False without
        ``learning_window`` or without a saved loss (``without_loss``)."""
        k = self._window
        if not k:
            return False
        self._read(step)
        series = list(self._held_out.values()) or list(self._train.values())
        self.without_loss = not series
        self.deferred = step if any(self._falling(values, k) for values in series) else None
        return self.deferred is not None

    @staticmethod
    def _falling(values: list[float], k: int) -> bool:
        if len(values) <= k:
            return True  # not shown to have stopped yet
        base, current = values[-2 * k : -k], values[-k:]
        required = abs(sum(base) / len(base)) * LEARNING_PERCENT / 100.0
        return window_drop(base, current, base + current).beyond(LEARNING_Z, required)

    def note(self) -> str | None:
        """Why classes were not judged at the end, if so (a StatusDetails note), else None."""
        if self._window and self.without_loss:
            return "learning_window: no loss saved (collection 'losses'), classes were judged without it"
        if self.deferred is not None:
            return f"learning_window: the loss still fell beyond noise at step {self.deferred}, classes were not judged there (the model was still learning)"
        return None
