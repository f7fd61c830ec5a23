"""#17 acceptance: a tiny random causal LM fine-tuned by an unmodified ``transformers.Trainer``
script and by an unmodified Lightning script, each as a local-mode job with ExplodingTensor
(+ StopTraining), LossNotDecreasing and VanishingGradient: a healthy run (every rule
NoIssuesFound after evaluating steps) and a diverging run (IssuesFound, Stopped, the first
non-finite tensor named)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")

from sagemaker_debugger_ext import modes

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SCRIPTS = Path(__file__).resolve().parent / "scripts"
ROLE = "arn:aws:iam::123456789012:role/local"
# (script, healthy hyperparameters, diverging hyperparameters, optimizer steps the diverging run asks for)
RUNS = {
    "trainer": ("train_hf_lm.py", {"lr": 1e-2, "steps": 8, "optim": "adamw_torch"}, {"lr": 1e6, "steps": 40}, 40),
    "lightning": ("train_lightning_lm.py", {"lr": 1e-2, "epochs": 4, "optim": "adamw"}, {"lr": 1e6, "epochs": 20}, 40),
}


@pytest.fixture(autouse=True)
def _quiet_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")


def _fit(tmp_path: Path, framework: str, job: str, hyperparameters: dict[str, Any]) -> Any:
    from sagemaker_debugger_ext import CollectionConfig, Estimator, Rule, rule_configs
    from sagemaker_debugger_ext.local import LocalSession

    if framework == "lightning":
        pytest.importorskip("lightning")
    every_step = {"save_interval": "1"}
    rules = [
        Rule.sagemaker(rule_configs.exploding_tensor(), actions=rule_configs.StopTraining()),
        Rule.sagemaker(rule_configs.loss_not_decreasing(), rule_parameters={"num_steps": "2"},
                       collections_to_save=[CollectionConfig("losses", parameters=every_step)]),
        Rule.sagemaker(rule_configs.vanishing_gradient(),
                       collections_to_save=[CollectionConfig("gradients", parameters=every_step)]),
    ]  # fmt: skip
    est = Estimator(
        image_uri="local-image", role=ROLE, instance_count=1, instance_type="local",
        entry_point=str(SCRIPTS / RUNS[framework][0]), hyperparameters=hyperparameters,
        sagemaker_session=LocalSession(settings={"StartMonitor": False}), output_path=(tmp_path / "out").as_uri(),
        rules=rules,
    )  # fmt: skip
    est.fit(job_name=job, logs="None", wait=True)
    return est


def _summary(est: Any) -> dict[str, dict[str, Any]]:
    return {s["RuleConfigurationName"]: s for s in est.latest_training_job.rule_job_summary()}


@pytest.mark.parametrize("framework", sorted(RUNS))
def test_healthy_lm_run_every_rule_evaluated_and_quiet(tmp_path: Path, framework: str) -> None:
    from sagemaker_debugger_ext.trials import create_trial

    est = _fit(tmp_path, framework, f"{framework}-healthy", RUNS[framework][1])
    desc = est.latest_training_job.describe()
    assert desc["TrainingJobStatus"] == "Completed", desc.get("FailureReason")
    summary = _summary(est)
    assert sorted(summary) == ["ExplodingTensor", "LossNotDecreasing", "VanishingGradient"]
    for name, status in summary.items():
        assert status["RuleEvaluationStatus"] == "NoIssuesFound", (name, status.get("StatusDetails"))
        evaluated = re.search(r"evaluated (\d+) step", status["StatusDetails"])
        assert evaluated and int(evaluated.group(1)) > 0, (name, status["StatusDetails"])
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    assert trial.steps(mode=modes.TRAIN) == list(range(8))  # optimizer steps, not micro-batches
    assert trial.tensor_names(collection="gradients")


@pytest.mark.parametrize("framework", sorted(RUNS))
def test_diverging_lm_run_is_stopped_and_names_the_first_bad_tensor(tmp_path: Path, framework: str) -> None:
    from sagemaker_debugger_ext.trials import create_trial

    _, _, hyperparameters, asked = RUNS[framework]
    est = _fit(tmp_path, framework, f"{framework}-diverge", hyperparameters)
    desc = est.latest_training_job.describe()
    assert desc["TrainingJobStatus"] == "Stopped", desc.get("FailureReason")
    exploding = _summary(est)["ExplodingTensor"]
    assert exploding["RuleEvaluationStatus"] == "IssuesFound", exploding
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    assert max(trial.steps(mode=modes.TRAIN)) < asked - 1  # stopped before the end
    # The finding names a saved tensor that is non-finite at the step it names.
    details = exploding["StatusDetails"]
    named = [n for n in trial.tensor_names() if n in details]
    assert named, details
    step = int(re.search(r"step (\d+)", details).group(1))  # type: ignore[union-attr]
    import numpy as np

    first = max(named, key=len)
    assert not np.isfinite(trial.tensor(first).value(step)).all(), (first, step, details)
