"""The healthy-runs benchmark's definition of a healthy run: converged, learned, no dead layer."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from benchmarks.bench_rules_healthy import DEAD_LAYER, rejected
from benchmarks.rule_cases import generated_case
from benchmarks.rule_cases.generated_case import converged, dead_fraction

# seed 1088092589 of the 80-run draw: an MLP still learning fast when its 6 epochs ended
STILL_LEARNING = [1.547, 1.46, 1.366, 1.266, 1.155, 1.046]


def test_a_run_still_learning_has_not_converged() -> None:
    assert not converged(STILL_LEARNING)
    assert converged([0.9, 0.5, 0.41, 0.40, 0.395])  # 1.2 % over the last two


def test_noise_above_the_best_is_no_improvement_and_a_lucky_low_is_one() -> None:
    assert converged([0.6, 0.45, 0.44, 0.47, 0.46])  # a plateau with noise up
    assert not converged([0.6, 0.45, 0.44, 0.47, 0.40])  # 9 % below the best: still improving
    assert not converged([0.5, 0.4])  # too short to tell


def test_dead_fraction_counts_units_never_active_on_any_sample() -> None:
    out = np.zeros((50, 4, 2, 2))  # 16 units (channel x position)
    out[:, 0] = 1.0  # channel 0 active everywhere: 4 live units
    out[7, 1, 0, 0] = 0.3  # one unit active on one sample: alive
    assert dead_fraction(out) == pytest.approx(11 / 16)


def _health(losses: list[float], dead: dict[str, float] | None = None) -> dict[str, object]:
    return {"eval_losses": losses, "baseline": 1.6, "converged": converged(losses), "dead": dead or {}}


def test_rejected_names_why_a_run_is_not_healthy() -> None:
    flat = [1.0, 0.5, 0.41, 0.40, 0.40]
    assert rejected(_health([1.6, 1.55, 1.5, 1.5, 1.5])) == "unlearned"
    assert rejected(_health(STILL_LEARNING)) == "unconverged"
    assert rejected(_health(flat, {"relu2": 0.81, "relu1": 0.1})) == "dead_layer"
    assert rejected(_health(flat, {"relu2": DEAD_LAYER})) is None  # at the bound: not beyond it
    assert rejected(_health(flat)) is None


def test_torch_dead_layers_are_measured_on_the_held_out_set() -> None:
    torch = pytest.importorskip("torch")
    from torch import nn

    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    with torch.no_grad():
        model[0].weight.zero_()
        model[0].bias.copy_(torch.tensor([1.0, -1.0, -1.0, -1.0]))  # one live unit, three dead
    x = np.random.default_rng(0).standard_normal((20, 3)).astype(np.float32)
    assert generated_case._torch_dead(model, x) == {"1": 0.75}
    assert "torch" in sys.modules
