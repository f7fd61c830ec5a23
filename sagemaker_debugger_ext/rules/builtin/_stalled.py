"""StalledTrainingRule: no new step for ``threshold`` seconds."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ...rule_contract._params import Kind, Param, positive
from .._actions import Actions, ActionSpec
from .._result import RuleResult
from ._base import BuiltinRule

__all__ = ["StalledTrainingRule"]


class StalledTrainingRule(BuiltinRule):
    """Fires (and ends) when no new step appeared in the trial for ``threshold`` seconds,
    counted from the rule's start or the last new step. With ``stop_training_on_fire`` it
    also stops the training job (prefix ``training_job_name_prefix``)."""

    DESCRIPTION = "no new step was written for threshold seconds"
    PARAMETERS = (
        Param(name="threshold", kind=Kind.FLOAT, default=1800.0, doc="seconds without a new step", check=positive),
        Param(name="stop_training_on_fire", kind=Kind.BOOL, default=False, doc="stop the training job when it fires"),
        Param(name="training_job_name_prefix", kind=Kind.STR, doc="job to stop (prefix, must match exactly one job)"),
    )

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Any = None, **parameters: Any
    ) -> None:
        super().__init__(base_trial, action_str, other_trials, **parameters)
        self.clock: Callable[[], float] = time.monotonic
        self.sleep: Callable[[float], None] = time.sleep
        self.poll_interval = 1.0
        self._last_progress: float | None = None
        self._stalled_at: tuple[int, float] | None = None
        if self.p["stop_training_on_fire"]:
            spec = ActionSpec(name="stoptraining", training_job_prefix=self.p["training_job_name_prefix"] or "")
            self._actions = Actions((*self._actions.specs, spec), rule_name=self.rule_name)

    def result_at(self, step: int) -> RuleResult:
        """Poll for ``step``: met (and the rule's end) when nothing new arrives within ``threshold``
        seconds; the rule processes and smdebug's :meth:`invoke` both come through here."""
        if self._last_progress is None:
            self._last_progress = self.clock()
        while True:
            state = getattr(self.base_trial.has_passed_step(step), "name", "")
            if state == "AVAILABLE":
                self._last_progress = self.clock()
                return RuleResult.not_met()
            if state == "UNAVAILABLE":
                self.base_trial.wait_for_steps([step])  # raises StepUnavailable / NoMoreData
                return RuleResult.not_met()
            waited = self.clock() - self._last_progress
            if waited > self.p["threshold"]:
                self._stalled_at = (step, waited)
                result = self._evaluate_step(step)
                self._actions.invoke(f"No new step for {waited:.0f} s.")
                return result
            self.sleep(min(self.poll_interval, max(self.p["threshold"] - waited, 0.01)))

    def status_note(self) -> str | None:
        return None  # it watches the arrival of steps, not tensors: nothing to add

    def evaluate(self, step: int) -> RuleResult:
        if self._stalled_at is None:
            return RuleResult.not_met()
        at, waited = self._stalled_at
        return RuleResult.met(
            self.finding(
                at,
                f"no new step after step {at - 1} for {waited:.1f} s > threshold {self.p['threshold']:g} s",
                value=round(waited, 3),
                threshold=self.p["threshold"],
                mode="GLOBAL",
            ),
            end_of_rule=True,
        )
