"""Issue 33, fourth round: no verdict on a class while the model as a whole is still learning.

Draw 3 of the generated healthy benchmark (seed 1034238701): a converging CNN (eval loss 1.47 -> 0.55
over 18 epochs, falling steadily) had not started on class 0 at epoch 3; its misprediction was flat
(0.81 of 425 samples), so the per-class deferral (a class whose misprediction falls) could not see it,
and the recommended ClassImbalance fired at step 62, Confusion at step 52. With ``learning_window``
(recommended 4) the class-level rules judge a class only once the loss ('losses' collection) no longer
falls beyond noise, LossNotDecreasing's test (``_noise.window_drop``); a class still mispredicted once
the loss has converged still fires.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from synthetic_trial import evaluation_passes

from sagemaker_debugger_ext.exceptions import RuleParameterError
from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.rules import recommended_rule_parameters
from sagemaker_debugger_ext.rules.builtin import ClassImbalance, Confusion
from sagemaker_debugger_ext.rules.builtin._learning import LEARNING_PERCENT
from sagemaker_debugger_ext.rules.builtin._noise import LEARNING_Z, window_drop

LOSSES = {"losses": ["^loss$"]}


def _without_gate(rule: str) -> dict[str, str]:
    """The recommended settings before ``learning_window`` (today's definition without the gate)."""
    params = recommended_rule_parameters(rule)
    assert params.pop("learning_window") == "4"
    return params


def _loss(step: int, falling: bool, rng: np.random.Generator) -> float:
    """A loss saved at ``step``: falling 0.01 a step from 1.6 (the model learning) or flat at 0.9, noise 0.02."""
    return (1.6 - 0.01 * step if falling else 0.9) + float(rng.normal(0, 0.02))


def _late_class(steps: int, falling: bool, every: int, seed: int = 0) -> dict[int, Any]:
    """Three classes of 60 labels a step; class 1 mispredicted (as class 2) 85 % of the time, flat; the
    loss saved every ``every`` steps."""
    rng = np.random.default_rng(seed)
    out: dict[int, Any] = {}
    for s in range(steps):
        y = np.repeat([0, 1, 2], 60)
        p = y.copy()
        p[rng.permutation(np.flatnonzero(y == 1))[:51]] = 2
        out[s] = {"labels": y, "predictions": p}
        if s % every == 0:
            out[s]["loss"] = np.float32(_loss(s, falling, rng))
    return out


def test_class_imbalance_waits_while_the_loss_falls(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Draw 3's pattern: a class not started yet (flat 0.85 mispredicted) while the loss falls clearly
    (saved every 5 steps, as sparse as draw 3's): fired at its first judgement (step 23) without the gate,
    quiet with it; the rule still evaluated every step and says why it judged no class at the end."""
    trial = make_trial(_late_class(60, falling=True, every=5), collections=LOSSES)
    assert fires(ClassImbalance(trial, **_without_gate("ClassImbalance"))) == 23
    rule = ClassImbalance(trial, **recommended_rule_parameters("ClassImbalance"))
    assert fires(rule) is None
    assert rule.steps_evaluated == 60 - 11  # evaluated from step 11 (2000 labels seen), no verdict on a class
    assert "the loss still fell beyond noise at step 59" in (rule.status_note() or "")


def test_class_imbalance_still_fires_once_the_loss_has_converged(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """A truly mispredicted class: the loss is flat within its noise (saved every step), class 1 stays
    85 % mispredicted: fires at step 23 with the gate as without it (no delay)."""
    trial = make_trial(_late_class(60, falling=False, every=1), collections=LOSSES)
    assert fires(ClassImbalance(trial, **_without_gate("ClassImbalance"))) == 23
    rule = ClassImbalance(trial, **recommended_rule_parameters("ClassImbalance"))
    assert fires(rule) == 23
    assert "class 1: 0.85" in rule.findings[0].message


def test_class_imbalance_judges_after_the_loss_stops_falling(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """Loss falling until step 30, then flat; class 1 still mispredicted after it: deferred while the
    loss falls, fires once its last 4 saved values are no longer below the 4 before beyond noise."""
    rng = np.random.default_rng(1)
    steps = _late_class(70, falling=False, every=1)
    for s in range(70):
        steps[s]["loss"] = np.float32((1.6 - 0.02 * min(s, 30)) + rng.normal(0, 0.02))
    rule = ClassImbalance(make_trial(steps, collections=LOSSES), **recommended_rule_parameters("ClassImbalance"))
    first = fires(rule)
    assert first is not None and 31 <= first <= 40


def test_xgboost_is_judged_on_its_validation_metric(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Boosting drives train-logloss down every round (by construction), validation-logloss flattens: the
    gate reads the validation metric, so a class still mispredicted fires (step 23, no delay); with the
    training metric alone the booster would never stop learning and the rule never judge."""
    rng = np.random.default_rng(4)
    steps = _late_class(60, falling=False, every=1)
    for s, value in steps.items():
        del value["loss"]
        value["train-logloss"] = np.float32(0.7 * 0.99**s)
        value["validation-logloss"] = np.float32(0.37 + rng.normal(0, 0.0004))
    modes = {s: (ModeKeys.GLOBAL, s) for s in steps}
    xgb = {"losses": ["^train-logloss$", "^validation-logloss$"]}
    params = recommended_rule_parameters("ClassImbalance")
    assert fires(ClassImbalance(make_trial(steps, modes=modes, collections=xgb), **params)) == 23
    train_only = {"losses": ["^train-logloss$"]}
    rule = ClassImbalance(make_trial(steps, modes=modes, collections=train_only), **params)
    assert fires(rule) is None
    assert "the loss still fell beyond noise" in (rule.status_note() or "")


def _passes(shares: list[float], falling: bool) -> tuple[dict[int, Any], dict[int, Any]]:
    """``evaluation_passes`` with the loss saved at each epoch's TRAIN step."""
    rng = np.random.default_rng(2)
    steps, modes = evaluation_passes(shares, n=150)
    for e in range(len(shares)):
        steps[2 * e]["loss"] = np.float32(_loss(10 * e, falling, rng))
    return steps, modes


def test_confusion_waits_while_the_loss_falls(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Predicted class 0 right 20 % in every pass (flat: the per-class deferral cannot see it) while the
    loss falls 0.1 an epoch: fired at the second pass (step 3) without the gate, quiet with it."""
    steps, modes = _passes([0.2] * 8, falling=True)
    trial = make_trial(steps, modes=modes, collections=LOSSES)
    assert fires(Confusion(trial, **_without_gate("Confusion"))) == 3
    assert fires(Confusion(trial, **recommended_rule_parameters("Confusion"))) is None


def test_confusion_still_fires_once_the_loss_has_converged(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """The same class with a converged loss fires. The loss is saved once an epoch, so the gate opens at
    the fifth epoch (more than 4 saved values) and patience 2 fires at the sixth pass (step 11): the cost
    of the gate is its warm-up of learning_window + 1 saved losses."""
    steps, modes = _passes([0.2] * 8, falling=False)
    trial = make_trial(steps, modes=modes, collections=LOSSES)
    assert fires(Confusion(trial, **_without_gate("Confusion"))) == 3
    rule = Confusion(trial, **recommended_rule_parameters("Confusion"))
    assert fires(rule) == 11
    assert "predicted class 0: diagonal share 0.200" in rule.findings[0].message


def test_without_a_saved_loss_classes_are_judged_and_the_note_says_so(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """No 'losses' collection: the rule cannot tell whether the model still learns, so it judges as
    before (never silenced); a run that found nothing says the gate was not applied."""
    steps = _late_class(60, falling=True, every=5)
    for value in steps.values():
        value.pop("loss", None)
    trial = make_trial(steps)
    assert fires(ClassImbalance(trial, **recommended_rule_parameters("ClassImbalance"))) == 23
    clean, modes = evaluation_passes([0.9] * 4, n=150)
    rule = Confusion(make_trial(clean, modes=modes), **recommended_rule_parameters("Confusion"))
    assert fires(rule) is None
    assert "no loss saved" in (rule.status_note() or "")


@pytest.mark.parametrize("rule", [ClassImbalance, Confusion])
def test_learning_window_needs_noise_aware(make_trial: Callable[..., Any], rule: type) -> None:
    trial = make_trial({0: {"labels": np.zeros(4), "predictions": np.zeros(4)}})
    with pytest.raises(RuleParameterError, match="'learning_window' applies only with noise_aware=True"):
        rule(trial, learning_window="4")
    with pytest.raises(RuleParameterError, match="learning_window"):
        rule(trial, noise_aware="True", learning_window="0")


def test_one_noise_test_for_the_loss() -> None:
    """``window_drop`` (LossNotDecreasing's noise-aware test, the gate's too): a drop of 0.1 with noise 0.02 in
    windows of 4 is beyond noise at 0.95; a drop of 0.01 is not; a flat series has 0 noise."""
    falling = window_drop([1.0, 1.02, 0.98, 1.0], [0.9, 0.92, 0.88, 0.9], [1.0, 1.02, 0.98, 1.0, 0.9, 0.92, 0.88, 0.9])
    assert falling.drop == pytest.approx(0.1) and falling.beyond(LEARNING_Z)
    assert not falling.beyond(LEARNING_Z, required=0.1)
    assert LEARNING_PERCENT == 0.1  # a fall must also exceed 0.1 % of the loss (LossNotDecreasing's diff_percent)
    assert not window_drop([1.0, 1.02, 0.98, 1.0], [0.99, 1.01, 0.97, 0.99], [1.0, 1.02, 0.98, 1.0]).beyond(LEARNING_Z)
    frozen = window_drop([0.5, 0.5], [0.5, 0.5], [0.5] * 4)
    assert (frozen.drop, frozen.se, frozen.beyond(LEARNING_Z)) == (0.0, 0.0, False)
