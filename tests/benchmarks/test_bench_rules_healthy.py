"""The healthy-runs benchmark's definition of a healthy run: converged, learned, no dead layer; and
DeadRelu's verdict not scored on a run whose dead layer is within the margin of the threshold."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from synthetic_trial import write_trial

from benchmarks.bench_rules_healthy import (
    DEAD_LAYER,
    DEAD_MARGIN,
    _evaluate,
    dead_ambiguous,
    draw_spec,
    markdown,
    rejected,
    rule_parameters,
    rules_for,
    summarise,
)
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
    assert rejected(_health(flat, {"relu2": DEAD_LAYER + DEAD_MARGIN})) is None  # at the band's top: not beyond it
    assert rejected(_health(flat, {"relu2": DEAD_LAYER + DEAD_MARGIN + 0.005})) == "dead_layer"
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


# draw 5's one alarm (base seed 1328588991): a CNN whose relu2 the rule found 70.0-70.7 % dead
# while the generator measured 69.8 % never active on the held-out set
ALARM_SEED = 1328589072
OTHER_CNN = 1328589079  # the next CNN that draw drew


def _cnn_run(root: Path, seed: int, dead: float) -> dict[str, Any]:
    """A run as ``run_one`` returns it: the spec drawn from ``seed``, the generator's health report
    with relu2 ``dead`` on the held-out set, and every CNN rule evaluated by the benchmark's own
    ``_evaluate`` on a real trial where DeadRelu (72 % of relu2 never active) and ExplodingTensor
    (a NaN weight at step 11) fire at both settings."""
    rng = np.random.default_rng(seed)
    steps = {}
    for step in range(12):  # 12 x 64 samples: past the 688 the noise-aware DeadRelu needs
        relu = np.maximum(rng.standard_normal((64, 100)), 0).astype(np.float32)
        relu[:, :72] = 0.0
        weight = rng.standard_normal((4, 4)).astype(np.float32)
        weight[0, 0] = np.nan if step == 11 else weight[0, 0]
        steps[step] = {"relu2_output_0": relu, "conv2.weight": weight}
    colls = {"relu_output": ["relu2_output_0"], "weights": [".*weight"]}
    from sagemaker_debugger_ext.trials import create_trial

    trial = create_trial(str(write_trial(root / f"run-{seed}", steps, collections=colls)))
    spec = draw_spec(seed)
    results = {
        setting: {rule: _evaluate(trial, rule, rule_parameters(rule, setting)) for rule in rules_for(spec["family"])}
        for setting in ("defaults", "recommended")
    }
    labels = rng.integers(0, spec["classes"], 256)  # the generator's own report, as run_one reads it
    generated_case.report(spec | {"report": str(root / f"{seed}.json")}, [1.0, 0.5, 0.41, 0.4, 0.4], labels, True,
                          {"relu1": 0.0, "relu2": dead})  # fmt: skip
    health = json.loads((root / f"{seed}.json").read_text())
    return {"spec": spec, "health": health, "results": results}


def test_deadrelu_is_not_scored_within_the_margin_of_its_threshold(tmp_path: Path) -> None:
    assert DEAD_LAYER - DEAD_MARGIN < 0.68 <= DEAD_LAYER + DEAD_MARGIN  # the band the test means
    band, below = _cnn_run(tmp_path, ALARM_SEED, 0.68), _cnn_run(tmp_path, OTHER_CNN, 0.6)
    for run in (band, below):  # the trial fires both rules at both settings
        assert run["spec"]["family"] == "cnn"
        for setting in ("defaults", "recommended"):
            assert run["results"][setting]["DeadRelu"]["status"] == "IssuesFound"
            assert run["results"][setting]["ExplodingTensor"]["status"] == "IssuesFound"
    assert dead_ambiguous(band["health"]) and not dead_ambiguous(below["health"])
    assert rejected(band["health"]) is None and rejected(below["health"]) is None  # both healthy runs

    out, tallies = summarise([band, below], base=ALARM_SEED, seconds=1.0)
    assert out["rules_healthy_runs"] == 2 and out["rules_healthy_deadrelu_ambiguous_runs"] == 1
    for setting in ("defaults", "recommended"):
        t = tallies[setting]
        fired = sorted((spec["seed"], rule) for spec, rule, _ in t["alarms"])
        # 0.68: DeadRelu not scored, ExplodingTensor a false alarm; 0.60: both false alarms
        assert fired == [(ALARM_SEED, "ExplodingTensor"), (OTHER_CNN, "DeadRelu"), (OTHER_CNN, "ExplodingTensor")]
        assert t["per_rule"]["DeadRelu"] == {"alarms": 1, "evaluated": 1, "errors": 0}
        assert t["per_rule"]["ExplodingTensor"]["alarms"] == 2
        assert out[f"rules_healthy_runs_with_alarm_{setting}"] == 2  # the ambiguous run is healthy for the others
        assert out[f"rules_healthy_deadrelu_ambiguous_fired_{setting}"] == 1
    text = markdown(out, tallies, [band, below])
    assert "ambiguous for DeadRelu, not scored (defaults IssuesFound" in text
    assert f"seed {ALARM_SEED} " in text and "relu2 68.0%" in text


def test_a_dead_layer_beyond_the_margin_is_rejected_and_the_band_edges_are_exact() -> None:
    flat = [1.0, 0.5, 0.41, 0.40, 0.40]
    assert rejected(_health(flat, {"relu1": 0.05, "relu2": 0.80})) == "dead_layer"
    assert not dead_ambiguous(_health(flat, {"relu2": 0.80}))
    assert dead_ambiguous(_health(flat, {"relu1": 0.64, "relu2": 0.698}))  # draw 5's alarm: now not scored
    assert not dead_ambiguous(_health(flat, {"relu2": DEAD_LAYER - DEAD_MARGIN}))  # the lower edge is scored
    assert dead_ambiguous(_health(flat, {"relu2": DEAD_LAYER + DEAD_MARGIN}))
    assert not dead_ambiguous(_health(flat))  # no ReLU layer (GRU, XGBoost): DeadRelu scored as any rule
