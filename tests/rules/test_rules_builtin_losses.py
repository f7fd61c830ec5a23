"""LossNotDecreasing, Overfit, Overtraining on synthetic trials (incl. smdebug's vectors)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from synthetic_trial import loss_epochs

from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.rules.builtin import (
    LossNotDecreasing,
    Overfit,
    Overtraining,
)

LOSSES = {"losses": ["loss"]}


def _losses(values: dict[int, float]) -> dict[int, dict[str, Any]]:
    return {s: {"loss": np.float32(v)} for s, v in values.items()}


def test_loss_not_decreasing_historical_vector(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """smdebug's vector 0.30, 0.33, 0.31, 0.30, 0.28 at steps 0,4,8,12,16 fires at step 12."""
    trial = make_trial(_losses({0: 0.30, 4: 0.33, 8: 0.31, 12: 0.30, 16: 0.28}), collections=LOSSES)
    assert fires(LossNotDecreasing(trial)) == 12


def test_loss_not_decreasing_diff_percent(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """With diff_percent=20, 0.42 at step 30 is not 20 % below 0.5 at step 20: fires at 30."""
    losses = {0: 1.0, 10: 0.7, 20: 0.5, 30: 0.42, 40: 0.2}
    trial = make_trial(_losses(losses), collections=LOSSES)
    assert fires(LossNotDecreasing(trial, diff_percent="20")) == 30
    assert (
        fires(
            LossNotDecreasing(
                make_trial(_losses({s: 1.0 - 0.1 * i for i, s in enumerate(range(0, 32, 4))}), collections=LOSSES)
            )
        )
        is None
    )


def test_loss_not_decreasing_judges_mode_of_first_saved_loss(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """Without ``mode``, the mode of the loss's first saved step (TRAIN here) is judged; mode=EVAL
    judges the evaluation passes (the flat EVAL loss fires, the falling TRAIN loss does not)."""
    steps, modes = {}, {}
    for g in range(40):
        if g % 4 == 3:
            steps[g], modes[g] = {"loss": np.float32(0.5)}, (ModeKeys.EVAL, g // 4)
        else:
            steps[g], modes[g] = {"loss": np.float32(1.0 / (g + 1))}, (ModeKeys.TRAIN, g - g // 4)
    trial = make_trial(steps, collections=LOSSES, modes=modes)
    assert fires(LossNotDecreasing(trial, num_steps="2", mode="EVAL")) == 11
    assert fires(LossNotDecreasing(trial, num_steps="2")) is None
    assert fires(LossNotDecreasing(trial, num_steps="2", mode="TRAIN")) is None


def _train_eval(train: list[float], val: list[float], block: int = 3) -> tuple[dict[int, Any], dict[int, Any]]:
    """Per value of ``val``: ``block`` TRAIN steps of ``train``, then one EVAL step."""
    return loss_epochs([train[i * block : (i + 1) * block] for i in range(len(val))], [[v] for v in val])


def test_overfit_fires_when_validation_pulls_away(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Validation 50 % above training fires at that evaluation; close losses stay silent."""
    train = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]
    steps, modes = _train_eval(train, [0.95, 0.65, 0.45])
    assert fires(Overfit(make_trial(steps, modes=modes, collections=LOSSES))) == 11
    steps, modes = _train_eval(train, [0.92, 0.62, 0.32])
    assert fires(Overfit(make_trial(steps, modes=modes, collections=LOSSES))) is None


def test_overfit_patience(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """patience=2 needs two evaluations in a row over the threshold."""
    steps, modes = _train_eval([1.0] * 9, [1.5, 1.0, 1.5], block=3)
    assert fires(Overfit(make_trial(steps, modes=modes, collections=LOSSES), patience="2")) is None
    steps, modes = _train_eval([1.0] * 9, [1.0, 1.5, 1.5], block=3)
    assert fires(Overfit(make_trial(steps, modes=modes, collections=LOSSES), patience="2")) == 11


def test_overtraining_train_plateau(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """A training loss flat from step 5: the mean of the last 5 saved losses reaches 0.5 at
    step 9 (its last optimum) and fires patience_train (5) steps later."""
    losses = {s: (1.0 - 0.1 * s if s < 5 else 0.5) for s in range(15)}
    assert fires(Overtraining(make_trial(_losses(losses), collections=LOSSES))) == 14
    decreasing = {s: 1.0 - 0.05 * s for s in range(15)}
    assert fires(Overtraining(make_trial(_losses(decreasing), collections=LOSSES))) is None


def test_overfit_and_overtraining_on_xgboost_metrics(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Without a losses collection, train-*/validation-* metrics are the two losses."""
    steps = {
        s: {
            "train-logloss": np.float64(0.6 - 0.05 * s),
            "validation-logloss": np.float64(0.62 - 0.03 * s if s < 6 else 0.47),
        }
        for s in range(12)
    }
    trial = make_trial(steps, collections={"metrics": [".*-logloss"]})
    assert fires(Overfit(trial)) == 2  # (0.56 - 0.5) / 0.5 > 0.1
    assert fires(Overtraining(trial, patience_validation="3")) == 8
