"""VanishingGradient, WeightUpdateRatio, PoorWeightInitialization."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sagemaker_debugger_ext.rules.builtin import (
    PoorWeightInitialization,
    VanishingGradient,
    WeightUpdateRatio,
)

RNG = np.random.default_rng(1)
GRADS = {"gradients": ["^gradient/"], "weights": ["^Net_.*weight"], "losses": ["loss"]}


def _g(scale: float) -> np.ndarray:
    return (RNG.standard_normal((8, 4)) * scale).astype(np.float32)


def test_vanishing_gradient(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """A gradient whose mean |g| drops under 1e-7 fires at that step."""
    steps = {s: {"gradient/Net_fc.weight": _g(1e-2 if s < 3 else 1e-9)} for s in range(5)}
    assert fires(VanishingGradient(make_trial(steps, collections=GRADS))) == 3
    healthy = {s: {"gradient/Net_fc.weight": _g(1e-2)} for s in range(5)}
    assert fires(VanishingGradient(make_trial(healthy, collections=GRADS))) is None
    assert fires(VanishingGradient(make_trial(healthy, collections=GRADS), threshold="1")) == 0


def test_vanishing_gradient_ignores_nan(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """A NaN gradient (an exploded one) is not reported as vanishing."""
    steps = {
        s: {"gradient/Net_fc.weight": _g(1e-2) if s < 3 else np.full((8, 4), np.nan, np.float32)} for s in range(5)
    }
    assert fires(VanishingGradient(make_trial(steps, collections=GRADS))) is None


def test_weight_update_ratio_small_and_large(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Frozen weights (ratio 0) and a huge update (ratio > 10) fire; normal updates do not."""
    w = _g(1.0)
    normal = {s: {"Net_fc.weight": w + 0.01 * s} for s in range(5)}
    assert fires(WeightUpdateRatio(make_trial(normal, collections=GRADS))) is None
    frozen = {s: {"Net_fc.weight": w + 0.01 * min(s, 2)} for s in range(5)}
    assert fires(WeightUpdateRatio(make_trial(frozen, collections=GRADS))) == 3
    jump = {s: {"Net_fc.weight": w * (1000.0 if s >= 4 else 1.0) + 0.01 * s} for s in range(6)}
    assert fires(WeightUpdateRatio(make_trial(jump, collections=GRADS))) == 4


def test_weight_update_ratio_num_steps_limits_the_gap(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """With num_steps=2, saved steps 5 apart are not compared."""
    w = _g(1.0)
    sparse = {0: {"Net_fc.weight": w}, 5: {"Net_fc.weight": w}, 10: {"Net_fc.weight": w}}
    assert fires(WeightUpdateRatio(make_trial(sparse, collections=GRADS))) == 5
    assert fires(WeightUpdateRatio(make_trial(sparse, collections=GRADS), num_steps="2")) is None


def test_poor_weight_initialization(make_trial: Callable[..., Any], fires: Callable[..., Any]) -> None:
    """Activation-input variances 1 vs 1e-6 across layers fire at step 0; similar ones do not."""
    good = {
        s: {
            "l1_relu_input_0": _g(1.0),
            "l2_relu_input_0": _g(0.8),
            "gradient/Net_fc.weight": _g(0.1),
            "loss": np.float32(1 - 0.1 * s),
        }
        for s in range(6)
    }
    assert fires(PoorWeightInitialization(make_trial(good, collections=GRADS))) is None
    bad = {s: {**v, "l2_relu_input_0": _g(1e-3)} for s, v in good.items()}
    assert fires(PoorWeightInitialization(make_trial(bad, collections=GRADS))) == 0


def test_poor_weight_initialization_flat_gradients_and_loss(
    make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """Tiny gradient spread fires; a loss flat for `patience` steps fires; only in the first `steps`."""
    tiny = {s: {"gradient/Net_fc.weight": _g(1e-6)} for s in range(3)}
    assert fires(PoorWeightInitialization(make_trial(tiny, collections=GRADS))) == 0
    flat = {s: {"loss": np.float32(1.0)} for s in range(12)}
    assert fires(PoorWeightInitialization(make_trial(flat, collections=GRADS))) == 5
    assert fires(PoorWeightInitialization(make_trial(flat, collections=GRADS), steps="5")) is None
