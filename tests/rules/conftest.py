"""Fixtures of the rules tests: synthetic trials written with our own StepWriter."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from synthetic_trial import TrialSteps, write_trial


@pytest.fixture
def make_trial(tmp_path: Path) -> Callable[..., Any]:
    """Write a synthetic trial and return it opened with ``create_trial``."""
    from sagemaker_debugger_ext.trials import create_trial

    counter = iter(range(1000))

    def make(steps: TrialSteps, **kw: Any) -> Any:
        root = write_trial(tmp_path / f"trial{next(counter)}", steps, **kw)
        return create_trial(str(root))

    return make


@pytest.fixture
def trial_dir(tmp_path: Path) -> Callable[..., Path]:
    """Write a synthetic trial and return its folder."""
    counter = iter(range(1000))

    def make(steps: TrialSteps, **kw: Any) -> Path:
        return write_trial(tmp_path / f"dir{next(counter)}", steps, **kw)

    return make


def first_fire(rule: Any, end_step: int | None = None) -> int | None:
    """Global step at which ``rule`` first fires through ``invoke_rule``; None if never."""
    from sagemaker_debugger_ext.exceptions import NoMoreData, RuleEvaluationConditionMet
    from sagemaker_debugger_ext.rules import invoke_rule

    try:
        invoke_rule(rule, end_step=end_step, raise_eval_cond=True)
    except RuleEvaluationConditionMet as exc:
        return int(exc.step)
    except NoMoreData:
        return None
    return None


@pytest.fixture
def fires() -> Callable[..., int | None]:
    """``fires(rule)`` -> first firing step or None."""
    return first_fire
