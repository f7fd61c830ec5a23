"""smdebug-compatible Rule / invoke_rule / RequiredTensors semantics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext.exceptions import NoMoreData, RuleEvaluationConditionMet
from sagemaker_debugger_ext.rules import Rule, invoke_rule


class _Seen(Rule):
    """Records every step it is invoked at; fires at steps listed in ``fire_at``."""

    def __init__(self, base_trial: Any, fire_at: tuple[int, ...] = ()) -> None:
        super().__init__(base_trial)
        self.fire_at = fire_at
        self.seen: list[int] = []

    def set_required_tensors(self, step: int) -> None:
        self.req_tensors.add("w", steps=[step])

    def invoke_at_step(self, step: int) -> bool:
        self.seen.append(step)
        (tensor,) = self.req_tensors.get()
        assert tensor.value(step).shape == (2,)
        return step in self.fire_at


class _Smdebug1034Form(Rule):
    """smdebug 1.0.34's constructor form."""

    def __init__(self, base_trial: Any, action_str: str | None = None, other_trials: Any = None) -> None:
        super().__init__(base_trial, action_str, other_trials)

    def invoke_at_step(self, step: int) -> bool:
        return False


def test_invoke_rule_ends_with_no_more_data(make_trial: Callable[..., Any]) -> None:
    """Past the last step of a finished job invoke_rule propagates NoMoreData; skipped steps are skipped."""
    rule = _Seen(make_trial({s: {"w": np.ones(2)} for s in (0, 1, 3)}))
    with pytest.raises(NoMoreData):
        invoke_rule(rule)
    assert rule.seen == [0, 1, 3]


def test_invoke_rule_end_step_and_conditions(make_trial: Callable[..., Any]) -> None:
    """end_step is exclusive; conditions are swallowed unless raise_eval_cond."""
    trial = make_trial({s: {"w": np.ones(2)} for s in range(5)})
    rule = _Seen(trial, fire_at=(1, 2))
    invoke_rule(rule, start_step=1, end_step=4)
    assert rule.seen == [1, 2, 3]
    with pytest.raises(RuleEvaluationConditionMet) as err:
        invoke_rule(_Seen(trial, fire_at=(2,)), raise_eval_cond=True)
    assert (err.value.rule_name, err.value.step) == ("_Seen", 2)


def test_both_constructor_forms(make_trial: Callable[..., Any]) -> None:
    """Rules built with super().__init__(base_trial) and with (base_trial, action_str, other_trials) work."""
    trial = make_trial({0: {"w": np.ones(2)}})
    other = make_trial({0: {"w": np.ones(2)}})
    rule = _Smdebug1034Form(trial, None, [other])
    assert rule.trials == [trial, other] and rule.rule_name == "_Smdebug1034Form"
    assert _Seen(trial).other_trials is None
    assert set(rule.report) == {"RuleTriggered", "Violations", "Details", "Datapoints", "RuleParameters"}
