"""StalledTrainingRule with an injected clock (no real waiting)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sagemaker_debugger_ext.rules.builtin import StalledTrainingRule


def _fake_time(rule: StalledTrainingRule) -> None:
    now = [0.0]
    rule.clock = lambda: now[0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    rule.sleep = sleep


def test_stalled_training_fires_when_no_step_arrives(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """A running job with no step after 1 fires at step 2 once `threshold` seconds passed."""
    rule = StalledTrainingRule(make_trial({0: {"x": np.ones(1)}, 1: {"x": np.ones(1)}}, end=False), threshold="60")
    _fake_time(rule)
    assert fires(rule) == 2
    (finding,) = rule.findings
    assert finding.value > 60 and finding.threshold == 60.0
    assert rule.last_result is not None and rule.last_result.end_of_rule


def test_stalled_training_silent_when_job_finished(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """A finished job ends the rule without firing, however long it waits."""
    rule = StalledTrainingRule(make_trial({0: {"x": np.ones(1)}, 1: {"x": np.ones(1)}}), threshold="60")
    _fake_time(rule)
    assert fires(rule) is None


def test_stop_training_on_fire_adds_the_action(make_trial: Callable[..., Any]) -> None:
    """stop_training_on_fire=True registers a StopTraining action with the prefix."""
    rule = StalledTrainingRule(
        make_trial({0: {"x": np.ones(1)}}), stop_training_on_fire="True", training_job_name_prefix="my-job"
    )
    assert [(s.name, s.training_job_prefix) for s in rule._actions.specs] == [("stoptraining", "my-job")]


def test_stalled_training_result_at_is_the_rule_process_path(make_trial: Callable[..., Any]) -> None:
    """The rule processes call result_at (not invoke): a stall there is met and ends the rule."""
    rule = StalledTrainingRule(make_trial({0: {"x": np.ones(1)}, 1: {"x": np.ones(1)}}, end=False), threshold="60")
    _fake_time(rule)
    assert not rule.result_at(0).fired and not rule.result_at(1).fired
    result = rule.result_at(2)
    assert result.fired and result.end_of_rule
    assert rule.findings[0].step == 2 and rule.findings[0].value > 60
