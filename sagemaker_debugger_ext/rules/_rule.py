"""The smdebug-compatible ``Rule`` base class.

A custom rule written for smdebug runs unchanged except for its import::

    from sagemaker_debugger_ext.rules import Rule

    class CustomGradientRule(Rule):
        def __init__(self, base_trial, threshold=10.0):
            super().__init__(base_trial)              # AWS docs' form
            self.threshold = float(threshold)

        def invoke_at_step(self, step):
            ...
            return True  # condition met

smdebug 1.0.34's ``super().__init__(base_trial, action_str, other_trials)`` form works too.
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Sequence
from typing import Any

from ..exceptions import RuleEvaluationConditionMet
from ..rule_contract._result import RuleResult
from ..trials._refresh import no_refresh
from ._actions import Actions
from ._req_tensors import RequiredTensors

__all__ = ["Rule", "no_refresh"]


class Rule(abc.ABC):
    """Base of every rule: subclasses implement :meth:`invoke_at_step`.

    Args:
        base_trial: The trial the rule watches (``create_trial(...)``).
        action_str: Optional ``action_json`` (StopTraining / Email / SMS), as the SDK sends it.
        other_trials: Further trials (e.g. for comparisons across runs).

    Attributes:
        base_trial, other_trials, trials: The trials (``trials`` = base first).
        req_tensors: :class:`RequiredTensors` filled by :meth:`set_required_tensors`.
        rule_name: The class name.
        report: smdebug's report dict (``RuleTriggered``, ``Violations``, ...).
    """

    def __init__(
        self, base_trial: Any, action_str: str | None = None, other_trials: Sequence[Any] | None = None
    ) -> None:
        self.base_trial = base_trial
        self.other_trials = list(other_trials) if other_trials is not None else None
        self.trials = [base_trial, *(self.other_trials or [])]
        self.req_tensors = RequiredTensors(base_trial, self.other_trials)
        self.logger = logging.getLogger(f"sagemaker_debugger_ext.rules.{type(self).__name__}")
        self.rule_name = type(self).__name__
        self._actions = Actions(action_str, rule_name=self.rule_name)
        self.report: dict[str, Any] = {
            "RuleTriggered": 0,
            "Violations": 0,
            "Details": {},
            "Datapoints": 0,
            "RuleParameters": "",
        }

    def set_required_tensors(self, step: int) -> None:
        """Called before :meth:`invoke_at_step`: declare tensors via ``self.req_tensors.add``."""

    @abc.abstractmethod
    def invoke_at_step(self, step: int) -> bool:
        """Evaluate the rule at global ``step``; return True when the condition is met."""

    def _end_of_rule(self) -> bool:
        """Whether the last firing ends the rule (built-ins override)."""
        return False

    def _condition_met(self, step: int) -> RuleEvaluationConditionMet:
        end = self._end_of_rule()
        try:
            return RuleEvaluationConditionMet(self.rule_name, step, end_of_rule=end)
        except TypeError:  # an exception class without end_of_rule
            return RuleEvaluationConditionMet(self.rule_name, step)

    def _evaluate_step(self, step: int) -> RuleResult:
        """The rule's verdict at ``step`` as a value (built-ins return their own RuleResult)."""
        return RuleResult.met(end_of_rule=self._end_of_rule()) if self.invoke_at_step(step) else RuleResult.not_met()

    def result_at(self, step: int) -> RuleResult:
        """Wait for ``step``, fetch the required tensors, evaluate, and run the actions when met.

        The rule processes consume this value directly; :meth:`invoke` turns it into smdebug's
        exception.

        Raises:
            StepUnavailable, TensorUnavailableForStep, TensorUnavailable: nothing to evaluate.
            NoMoreData: ``step`` is past the end of a finished job.
        """
        self.base_trial.wait_for_steps([step])
        with no_refresh(self.trials):
            self.req_tensors.clear()
            self.set_required_tensors(step)
            self.req_tensors.fetch()
            result = self._evaluate_step(step)
        if result.fired:
            self._actions.invoke(f"Condition met at step {step}.")
        return result

    def invoke(self, step: int) -> None:
        """smdebug's entry point: :meth:`result_at`, raising when the condition is met.

        Raises:
            RuleEvaluationConditionMet: the condition is met at ``step`` (after actions ran).
            StepUnavailable, TensorUnavailableForStep, TensorUnavailable: nothing to evaluate.
            NoMoreData: ``step`` is past the end of a finished job.
        """
        if self.result_at(step).fired:
            raise self._condition_met(step)
