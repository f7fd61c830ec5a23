"""Recommended rule settings: valid RuleParameters for their rules, usable through Rule.sagemaker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.rules import RECOMMENDED_RULE_PARAMETERS, recommended_rule, recommended_rule_parameters
from sagemaker_debugger_ext.rules.builtin import BUILTIN_RULES, Confusion


@pytest.mark.parametrize("name", sorted(RECOMMENDED_RULE_PARAMETERS))
def test_every_preset_parses_for_its_rule(name: str, make_trial: Callable[..., Any]) -> None:
    """Each preset is a valid parameter set of its built-in rule (strings, as SageMaker sends them)."""
    params = recommended_rule_parameters(name)
    assert params and all(isinstance(v, str) for v in params.values())
    rule = BUILTIN_RULES[name](make_trial({0: {"x": np.zeros(2, np.float32)}}), **params)
    for key in params:
        assert key in rule.params


def test_recommended_rule_is_a_sagemaker_rule_with_the_preset() -> None:
    rule = recommended_rule("Overtraining", rule_parameters={"patience_train": "30"})
    assert rule.name == "Overtraining"
    assert rule.rule_parameters["rule_to_invoke"] == "Overtraining"
    assert rule.rule_parameters["delta"] == RECOMMENDED_RULE_PARAMETERS["Overtraining"]["delta"]
    assert rule.rule_parameters["patience_train"] == "30"
    assert recommended_rule("VanishingGradient").rule_parameters == {"rule_to_invoke": "VanishingGradient"}
    with pytest.raises(ValueError, match="'rule_name' must be a built-in rule \\(got 'Nope'\\)"):
        recommended_rule_parameters("Nope")


def test_confusion_judges_an_evaluation_pass_as_one_matrix(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """Two EVAL batches, each skewed, together balanced: quiet at min_diag 0.5; TRAIN steps skipped with mode=EVAL."""
    y = np.array([0, 1] * 10)
    half_wrong = np.where(np.arange(20) < 10, y, 1 - y)  # batch alone: diagonal 0.5
    steps = {
        0: {"labels": y, "predictions": 1 - y},
        1: {"labels": y, "predictions": y},
        2: {"labels": y, "predictions": half_wrong},
        3: {"labels": y, "predictions": y},
    }
    modes = {0: (ModeKeys.TRAIN, 0), 1: (ModeKeys.EVAL, 0), 2: (ModeKeys.EVAL, 1), 3: (ModeKeys.TRAIN, 1)}
    trial = make_trial(steps, modes=modes)
    assert fires(Confusion(trial, mode="EVAL", min_diag="0.6", max_off_diag="0.4")) is None
    assert fires(Confusion(trial, min_diag="0.6", max_off_diag="0.4")) == 0  # every step: the untrained TRAIN step 0


def test_every_builtin_rule_has_its_rule_configs_function() -> None:
    """One name mapping (CLI, presets, benchmarks): each built-in rule names a real
    ``smdebug_rulesconfig`` function whose rule is that rule; acronyms stay one word."""
    import smdebug_rulesconfig

    from sagemaker_debugger_ext.rules.builtin._registry import BUILTIN_RULES, rule_configs_name

    assert rule_configs_name("NLPSequenceRatio") == "nlp_sequence_ratio"
    assert rule_configs_name("StalledTrainingRule") == "stalled_training_rule"
    for name in BUILTIN_RULES:
        factory = getattr(smdebug_rulesconfig, rule_configs_name(name))
        assert factory()["DebugRuleConfiguration"]["RuleParameters"]["rule_to_invoke"] == name
