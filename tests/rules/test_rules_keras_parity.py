"""Built-in rules on Keras data give the verdicts they give on the equivalent PyTorch run.

The runs are the rule benchmark's seeded cases (``benchmarks/rule_cases/torch_case.py`` and
its Keras twin ``keras_case.py``: same data, sizes, optimizers and faults), trained in this
process through each framework's hook from a JSON config, shorter than in the benchmark.
Each rule runs on both trials and must fire on the fault (at the same step, or one step
apart where the hooks save weights at different points of a step) and stay quiet on the
clean run.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bench_rules_keras import COLLECTIONS as KERAS_COLLECTIONS
from benchmarks.bench_rules_keras import JOBS, ONSET, SELECTION, SHORT_WINDOWS
from sagemaker_debugger_ext.rules.builtin import BUILTIN_RULES
from sagemaker_debugger_ext.trials import create_trial

pytest.importorskip("torch")
pytest.importorskip("tensorflow", reason="the tensorflow extra is not installed")
keras = pytest.importorskip("keras")

CASES = Path(__file__).resolve().parents[2] / "benchmarks" / "rule_cases"

# collections each framework's hook saves for the rules (every step); PyTorch's activation
# collections get nn.ReLU/nn.Tanh tensors by module class, Keras' get ReLU/Activation layers' by class
COLLECTIONS = {
    "torch": {
        "weights": None, "gradients": None, "losses": None, "biases": None, "relu_output": ".*relu_output",
        "relu_input": ".*relu_input", "tanh_input": ".*tanh_input", "labels": "^labels$", "predictions": "^predictions$",
        "input_image": ".*Net_input_0", "input_sequence": ".*embedding0_input_0",
    },
    "keras": KERAS_COLLECTIONS,
}  # fmt: skip
# the tensor selection each framework's names need (the rest at the rules' defaults)
PARAMS: dict[str, dict[str, dict[str, str]]] = {
    "torch": {
        "AllZero": {"collection_names": "relu_output"},
        "CheckInputImages": {"regex": ".*Net_input_0"},
    },
    "keras": SELECTION,
}
SHARED = {**SHORT_WINDOWS, "Overfit": {"patience": "2", "ratio_threshold": "0.5"}}  # Overfit: the recommended preset
# PyTorch saves weights in the forward pass (before the update), Keras at the batch's end
# (after it): the update of step s shows at step s+1 in PyTorch, at step s in Keras
# Overfit judges each evaluation pass: the two frameworks' different random initialisations
# can put the gap over the threshold one pass (two global steps) apart
STEP_TOLERANCE = {"WeightUpdateRatio": 1, "Overfit": 2}


def _train(framework: str, scenario: str, fault: str, hps: dict[str, str], out: Path) -> Path:
    """Train one case in this process with the hook configured from a JSON file; return the trial path."""
    debug = out / "debug-output"
    colls = [{"CollectionName": n, "CollectionParameters": {"save_interval": "1", **({"include_regex": r} if r else {})}}
             for n, r in COLLECTIONS[framework].items()]  # fmt: skip
    config = out / "debughookconfig.json"
    config.write_text(
        json.dumps(
            {"LocalPath": str(debug), "HookParameters": {"save_interval": "1"}, "CollectionConfigurations": colls}
        )
    )
    argv = ["case", "--scenario", scenario, "--fault", fault, "--onset", str(ONSET), "--seed", "0"]
    for k, v in hps.items():
        argv += [f"--{k}", v]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SMDEBUG_CONFIG_FILE_PATH", str(config))
        mp.delenv("TRAINING_JOB_NAME", raising=False)
        mp.setattr(sys, "argv", argv)
        runpy.run_path(str(CASES / f"{framework}_case.py"), run_name="__main__")
    return debug


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, str], Path]:
    """Every job trained once per framework (a few seconds each)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    out: dict[tuple[str, str, str], Path] = {}
    for scenario, fault, hps, _, _ in JOBS:
        for framework in ("torch", "keras"):
            work = tmp_path_factory.mktemp(f"{framework}-{scenario}-{fault}")
            out[(framework, scenario, fault)] = _train(framework, scenario, fault, hps, work)
    return out


def _first_fire(framework: str, trial_path: Path, rule: str, first_fire: Any) -> tuple[int | None, Any]:
    params = {**SHARED.get(rule, {}), **PARAMS[framework].get(rule, {})}
    instance = BUILTIN_RULES[rule](create_trial(str(trial_path)), **params)
    return first_fire(instance), instance


@pytest.mark.parametrize(("scenario", "fault", "onset", "rule"), [(s, f, o, r) for s, f, _, o, rules in JOBS for r in rules],
                         ids=[f"{s}-{f}-{r}" for s, f, _, _, rules in JOBS for r in rules])  # fmt: skip
def test_keras_verdict_equals_pytorch(runs: dict[tuple[str, str, str], Path], fires: Any, scenario: str, fault: str,
                                      onset: int | None, rule: str) -> None:  # fmt: skip
    """The rule fires on the fault (at or after its onset) or stays quiet, identically on Keras and PyTorch data."""
    torch_step, torch_rule = _first_fire("torch", runs[("torch", scenario, fault)], rule, fires)
    keras_step, keras_rule = _first_fire("keras", runs[("keras", scenario, fault)], rule, fires)
    assert keras_rule.steps_evaluated > 0, f"{rule} evaluated nothing on Keras data"
    assert torch_rule.steps_evaluated > 0, f"{rule} evaluated nothing on PyTorch data"
    if onset is None:
        assert (torch_step, keras_step) == (None, None), [
            f.message for f in (torch_rule.findings + keras_rule.findings)[:2]
        ]
        return
    assert torch_step is not None and torch_step >= onset, torch_step
    assert keras_step is not None and keras_step >= onset, keras_step
    assert abs(keras_step - torch_step) <= STEP_TOLERANCE.get(rule, 0), (torch_step, keras_step)
