"""Overtraining's noise-aware training loss when the loss is Keras' running mean over the epoch.

The value saved at the j-th batch of an epoch is the mean of the epoch's first j batch losses:
its noise is sigma / sqrt(j), so an epoch's first saves are far noisier than its last, and a lucky
first batch lingers. The earlier estimate (successive differences, the spread of window means
around their median) treated all values alike: a flat plateau fired on 10 of 120 seeds saved every
2 steps, 70 of 120 saved every step. The rule now tells the running mean from the saved losses
(steps per epoch by likelihood) and gives each window mean its own noise from its positions in
the epoch; plain batch losses keep the earlier estimate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from running_mean_losses import running_mean_epochs

from sagemaker_debugger_ext.rules import recommended_rule_parameters
from sagemaker_debugger_ext.rules.builtin import Overtraining, _running_mean
from sagemaker_debugger_ext.rules.builtin._running_mean import EpochNoise, epoch_length, window_variance

LOSSES = {"losses": ["loss"]}
EXACT = {"patience_train": "10", "patience_validation": "20", "delta": "0"}  # the recommended settings, no noise


def _overtraining(values: dict[int, float], make_trial: Callable[..., Any], **params: str) -> Overtraining:
    trial = make_trial({s: {"loss": np.float32(v)} for s, v in values.items()}, collections=LOSSES)
    return Overtraining(trial, **(params or recommended_rule_parameters("Overtraining")))


def test_epoch_length_of_a_running_mean_and_of_plain_losses() -> None:
    """24 steps per epoch, saved every 2 steps: found from 32 saved losses (2.7 epochs) on; plain batch losses
    (noisy or noiseless, declining then flat) are no running mean."""
    values = running_mean_epochs(0)
    steps = [s for s in values if s % 2 == 0]
    assert epoch_length(steps[:32], [values[s] for s in steps[:32]]) == 24
    assert epoch_length(steps, [values[s] for s in steps]) == 24
    assert epoch_length(list(values), list(values.values())) == 24  # saved every step
    rng = np.random.default_rng(0)
    plain = {s: 0.7 + 0.6 * np.exp(-s / 40) + 0.04 * rng.standard_normal() for s in range(0, 400, 10)}
    assert epoch_length(list(plain), list(plain.values())) is None
    frozen = [1.0 - 0.01 * min(s, 40) for s in range(128)]
    assert epoch_length(list(range(128)), frozen) is None
    # full-batch training, a smooth convex decline, then frozen weights (the detection benchmark's mlp-freeze)
    smooth = [0.3 + 0.4 * np.exp(-s / 15) if s < 40 else 0.3 + 0.4 * np.exp(-40 / 15) for s in range(140)]
    assert epoch_length(list(range(140)), smooth) is None


def test_epoch_length_weighs_every_length_in_blocks_at_a_large_save_interval() -> None:
    """Saved every 100 steps, 1000 steps per epoch: found at 16 saves (1.5 epochs) and from the last 256 of
    1024 saves (lengths 2 to 25,500, weighed 1,024 at a time). The blocks lose nothing: each length's
    likelihood within a block is the one it has alone, and the search's answer is the best of all lengths
    weighed at once (2,200 steps per epoch saved every 20 steps: 5,099 lengths, the best in the third block)."""
    values = running_mean_epochs(1, epochs=103, batches=1000)
    steps = list(range(0, 102_400, 100))
    saved = [float(np.float32(values[s])) for s in steps]
    assert epoch_length(steps[:16], saved[:16]) == 1000
    assert epoch_length(steps[-256:], saved[-256:]) == 1000
    values = running_mean_epochs(2, epochs=3, batches=2200)
    s = np.arange(0, 5120, 20)
    r = np.array([float(np.float32(values[int(x)])) for x in s])
    lengths = np.arange(2, 5101)
    together = _running_mean._log_likelihoods(s, r, lengths[:, None])
    some = (2, 7, 1025, 1026, 2199, 2200, 5100)
    alone = [float(_running_mean._log_likelihoods(s, r, np.array([[p]]))[0]) for p in some]
    assert [float(together[p - 2]) for p in some] == pytest.approx(alone, rel=1e-12)
    plain = float(_running_mean._log_likelihoods(s, r, None)[0])
    assert together.max() > plain + _running_mean.MIN_GAIN
    assert epoch_length(s, r) == lengths[np.argmax(together)] == 2200


def test_window_variance_by_position_in_the_epoch() -> None:
    """cov = sigma^2 / max(j_a, j_b) + tau^2 within an epoch, 0 across (10 steps per epoch)."""
    noise = EpochNoise(steps_per_epoch=10, sigma=1.0, tau=0.0)
    assert window_variance([0, 1], noise) == pytest.approx((1 + 2 * 0.5 + 0.5) / 4)
    assert window_variance([9, 10], noise) == pytest.approx((0.1 + 1) / 4)  # the next epoch's first batch
    assert window_variance([8, 9], noise) < window_variance([0, 1], noise) / 5  # late in the epoch: quieter
    luck = EpochNoise(steps_per_epoch=10, sigma=1.0, tau=0.1)
    assert window_variance([0, 1], luck) == pytest.approx(0.625 + 0.01)
    assert window_variance([9, 10], luck) == pytest.approx(0.275 + 0.02 / 4)


@pytest.mark.parametrize(("seed", "every"), [(12, 2), (31, 2), (48, 2), (68, 2), (0, 1), (7, 1)])
def test_overtraining_running_mean_plateau_is_quiet(
    seed: int, every: int, make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """Seeds on which the earlier estimate fired (at steps 240, 286, 262, 214; saved every step: 254, 173): the
    best was a window of an epoch's first, noisiest values. The exact comparison fires on all."""
    values = {s: v for s, v in running_mean_epochs(seed).items() if s % every == 0}
    assert fires(_overtraining(values, make_trial, **EXACT)) is not None
    assert fires(_overtraining(values, make_trial)) is None


@pytest.mark.parametrize("seed", range(4))
def test_overtraining_running_mean_climb_still_fires(
    seed: int, make_trial: Callable[..., Any], fires: Callable[..., Any]
) -> None:
    """The batch losses climb 0.004 a step from step 120 (saved every 2 steps): fires within 100 steps. With
    lucky epochs (fresh samples easier or harder by N(0, 0.05), 32 steps per epoch, saved every 5 steps,
    climbing from step 60) the earlier estimate missed every one of 120 seeds, the climb hidden in the spread of
    window means: fires now, the epochs' offsets measured apart from the climb."""
    values = {s: v for s, v in running_mean_epochs(seed, rise_from=120).items() if s % 2 == 0}
    first = fires(_overtraining(values, make_trial))
    assert first is not None and 120 < first <= 220
    lucky = running_mean_epochs(seed, epochs=8, batches=32, level=0.19, luck=0.05, rise_from=60)
    first = fires(_overtraining({s: v for s, v in lucky.items() if s % 5 == 0}, make_trial))
    assert first is not None and 60 < first <= 255
