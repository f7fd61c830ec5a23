"""Issue 19, definition-level noise: single batches no longer decide Overfit, Overtraining,
LossNotDecreasing on EVAL, ClassImbalance's misprediction branch; VanishingGradient ignores
biases that are zero by construction. Each rule still fires on the fault it names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from synthetic_trial import loss_epochs

from sagemaker_debugger_ext.rules.builtin import (
    ClassImbalance,
    LossNotDecreasing,
    Overfit,
    Overtraining,
    VanishingGradient,
)

LOSSES = {"losses": ["loss"]}


def test_overfit_judges_the_pass_mean_not_one_noisy_batch(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """Pass [0.756, 0.5, 0.49]: mean 0.582 < train 0.607 (was: fired on 0.756 at the pass's first step)."""
    steps, modes = loss_epochs([[0.62, 0.61, 0.59]], [[0.756, 0.5, 0.49]])
    assert fires(Overfit(make_trial(steps, modes=modes, collections=LOSSES))) is None
    steps, modes = loss_epochs([[0.62, 0.61, 0.59]], [[0.756, 0.7, 0.69]])  # the whole pass above: fires at its end
    assert fires(Overfit(make_trial(steps, modes=modes, collections=LOSSES))) == 5


def test_loss_not_decreasing_on_eval_compares_passes(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Batches of one pass differ (same weights); pass means fall: quiet. Flat pass means fire."""
    falling = [[0.9, 0.95], [0.8, 0.85], [0.7, 0.75], [0.6, 0.65]]
    steps, modes = loss_epochs([[1.0, 1.0]] * 4, falling)
    assert (
        fires(LossNotDecreasing(make_trial(steps, modes=modes, collections=LOSSES), mode="EVAL", num_steps="1")) is None
    )
    flat = [[0.9, 0.95], [0.95, 0.9], [0.9, 0.95], [0.95, 0.9]]
    steps, modes = loss_epochs([[1.0, 1.0]] * 4, flat)
    assert fires(LossNotDecreasing(make_trial(steps, modes=modes, collections=LOSSES), mode="EVAL", num_steps="1")) == 7


def test_overtraining_one_lucky_batch_does_not_set_the_optimum(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """A falling loss with one batch 0.2 below the trend (was: fired 5 steps after it)."""
    losses = {s: 1.0 - 0.02 * s - (0.2 if s == 3 else 0.0) for s in range(20)}
    trial = make_trial({s: {"loss": np.float32(v)} for s, v in losses.items()}, collections=LOSSES)
    assert fires(Overtraining(trial)) is None
    frozen = {s: (1.0 - 0.02 * s if s < 10 else 0.8) for s in range(25)}
    assert (
        fires(Overtraining(make_trial({s: {"loss": np.float32(v)} for s, v in frozen.items()}, collections=LOSSES)))
        == 19
    )


def test_class_imbalance_mispredictions_skip_the_warm_up(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """Three balanced classes: an untrained model (always class 0) for the first 500 labels,
    then a trained one: quiet (was: fired on the warm-up). A model that stays bad fires."""
    y = np.array([0, 1, 2] * 100)
    untrained, trained = np.zeros_like(y), y.copy()
    steps = {s: {"labels": y, "predictions": untrained if s < 2 else trained} for s in range(6)}
    assert fires(ClassImbalance(make_trial(steps))) is None
    bad = {s: {"labels": y, "predictions": untrained} for s in range(6)}
    assert fires(ClassImbalance(make_trial(bad))) == 3


def test_vanishing_gradient_ignores_bias_before_batchnorm(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """A bias gradient ~1e-10 beside a normal weight gradient is zero by construction: ignored and
    named in the status details. When the weight gradient vanishes too, the rule fires."""
    rng = np.random.default_rng(0)
    grads = {
        "gradient/Net_fc1.weight": rng.standard_normal((4, 3)).astype(np.float32) * 0.1,
        "gradient/Net_fc1.bias": np.full(4, 1e-10, np.float32),
    }
    rule = VanishingGradient(make_trial(dict.fromkeys(range(3), grads), collections={"gradients": ["^gradient"]}))
    assert fires(rule) is None
    assert "gradient/Net_fc1.bias" in (rule.status_note() or "")
    dead = {k: np.full_like(v, 1e-10) for k, v in grads.items()}
    assert (
        fires(VanishingGradient(make_trial(dict.fromkeys(range(3), dead), collections={"gradients": ["^gradient"]})))
        == 0
    )
