"""Rules on trials that hold reductions only (what big models save): ExplodingTensor and
VanishingGradient judge the reductions; rules that need whole tensors end with Error and say
what was saved and what to change, never a silent NoIssuesFound."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import sagemaker_debugger_ext.pytorch as smd

CONSOLE_SCRIPT = Path(sys.executable).parent / "sagemaker-debugger-ext"


def _train(out: Path, lr: float, abs_mean: bool = True) -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    reductions = smd.ReductionConfig(
        reductions=["max", "min"], norms=["l2"], abs_reductions=["mean"] if abs_mean else []
    )
    hook = smd.Hook(out_dir=str(out), save_config=smd.SaveConfig(save_interval=1), reduction_config=reductions,
                    include_collections=["weights", "gradients"])  # fmt: skip
    hook.register_module(model)
    for _ in range(12):
        opt.zero_grad()
        x = torch.randn(8, 16)
        ((model(x) - x.sum(1, keepdim=True)) ** 2).mean().backward()
        opt.step()
    hook.close()


def _run(trial: Path, rule: str) -> dict[str, str]:
    proc = subprocess.run([str(CONSOLE_SCRIPT), "rules", "run", str(trial), rule, "--json"], capture_output=True,
                          text=True, timeout=120, check=False, env={"PYTHONWARNINGS": "ignore", "PATH": ""})  # fmt: skip
    doc = json.loads(proc.stdout)
    result: dict[str, str] = doc[0] if isinstance(doc, list) else doc
    return result


@pytest.fixture(scope="module")
def trials(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("reductions")
    runs = {"healthy": (0.01, True), "diverging": (1000.0, True), "no_abs_mean": (0.01, False)}
    for name, (lr, abs_mean) in runs.items():
        _train(base / name, lr, abs_mean)
    return {name: base / name for name in runs}


def test_only_reductions_are_saved(trials: dict[str, Path]) -> None:
    from sagemaker_debugger_ext.exceptions import TensorUnavailableForStep
    from sagemaker_debugger_ext.trials import create_trial

    tensor = create_trial(str(trials["healthy"])).tensor("gradient/Sequential_0.weight")
    with pytest.raises(TensorUnavailableForStep):
        tensor.value(0)
    assert set(tensor.reduction_values(0)) == {("max", False), ("min", False), ("l2", False), ("mean", True)}


def test_exploding_tensor_judges_reductions(trials: dict[str, Path]) -> None:
    healthy, diverging = _run(trials["healthy"], "ExplodingTensor"), _run(trials["diverging"], "ExplodingTensor")
    assert healthy["RuleEvaluationStatus"] == "NoIssuesFound", healthy
    assert "evaluated 12 steps" in healthy["StatusDetails"]
    assert diverging["RuleEvaluationStatus"] == "IssuesFound", diverging
    assert "saved as reductions only" in diverging["StatusDetails"]


def test_vanishing_gradient_uses_the_abs_mean_reduction(trials: dict[str, Path]) -> None:
    healthy = _run(trials["healthy"], "VanishingGradient")
    assert healthy["RuleEvaluationStatus"] == "NoIssuesFound", healthy
    assert "evaluated 12 steps" in healthy["StatusDetails"]


@pytest.mark.parametrize(("trial", "rule", "needs"), [
    ("no_abs_mean", "VanishingGradient", "abs_reductions=['mean']"),
    ("healthy", "WeightUpdateRatio", "needs whole tensors"),
])  # fmt: skip
def test_rules_without_usable_data_say_so_with_error(
    trials: dict[str, Path], trial: str, rule: str, needs: str
) -> None:
    result = _run(trials[trial], rule)
    assert result["RuleEvaluationStatus"] == "Error", result
    details = result["StatusDetails"]
    assert "saved only reductions" in details and needs in details, details
    assert '"save_raw_tensor": "true"' in details, details
