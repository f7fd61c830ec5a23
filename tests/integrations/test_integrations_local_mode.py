"""Zero code change in local mode: an unmodified transformers.Trainer script gets the
Debugger callback; ExplodingTensor + StopTraining stops a diverging run."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")

from sagemaker_debugger_ext import modes
from sagemaker_debugger_ext.integrations import _autopatch

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SCRIPTS = Path(__file__).resolve().parent / "scripts"
ROLE = "arn:aws:iam::123456789012:role/local"


@pytest.fixture(autouse=True)
def _quiet_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")


def test_launcher_opt_out() -> None:
    """The launcher runs only for jobs with a Debugger config, and not when opted out."""
    cfg = {"SMDEBUG_CONFIG_FILE_PATH": "/x/debughookconfig.json"}
    assert _autopatch.launcher_args(cfg) == ["-m", _autopatch.LAUNCHER_MODULE]
    assert _autopatch.launcher_args({}) == []
    for off in ("0", "false", "OFF"):
        assert _autopatch.launcher_args({**cfg, _autopatch.AUTO_CALLBACK_ENV: off}) == []


def _fit(tmp_path: Path, job: str, lr: float, steps: int) -> object:
    from sagemaker_debugger_ext import Estimator, Rule, rule_configs
    from sagemaker_debugger_ext.local import LocalSession

    est = Estimator(
        image_uri="local-image", role=ROLE, instance_count=1, instance_type="local",
        entry_point=str(SCRIPTS / "train_hf_lm.py"), hyperparameters={"lr": lr, "steps": steps},
        sagemaker_session=LocalSession(settings={"StartMonitor": False}), output_path=(tmp_path / "out").as_uri(),
        rules=[Rule.sagemaker(rule_configs.exploding_tensor(), actions=rule_configs.StopTraining())],
    )  # fmt: skip
    est.fit(job_name=job, logs="None", wait=True)
    return est


def test_unmodified_trainer_script_diverges_and_is_stopped(tmp_path: Path) -> None:
    """lr=1e6 with SGD and no clipping: the loss becomes non-finite; ExplodingTensor fires and stops the job."""
    from sagemaker_debugger_ext.trials import create_trial

    est = _fit(tmp_path, "hf-diverge", lr=1e6, steps=40)
    desc = est.latest_training_job.describe()
    assert desc["TrainingJobStatus"] == "Stopped", desc.get("FailureReason")
    statuses = {
        s["RuleConfigurationName"]: s["RuleEvaluationStatus"] for s in est.latest_training_job.rule_job_summary()
    }
    assert list(statuses.values()) == ["IssuesFound"]
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    steps = trial.tensor("loss_output_0").steps(mode=modes.TRAIN)
    assert steps and max(steps) < 39  # stopped before max_steps
    (details,) = [s["StatusDetails"] for s in est.latest_training_job.rule_job_summary()]
    assert "non-finite" in details or "NaN" in details, details


def test_unmodified_trainer_script_healthy(tmp_path: Path) -> None:
    """A sane learning rate: NoIssuesFound with steps evaluated; one TRAIN step per optimizer step."""
    from sagemaker_debugger_ext.trials import create_trial

    est = _fit(tmp_path, "hf-healthy", lr=1e-2, steps=4)
    desc = est.latest_training_job.describe()
    assert desc["TrainingJobStatus"] == "Completed", desc.get("FailureReason")
    summary = est.latest_training_job.rule_job_summary()
    assert [s["RuleEvaluationStatus"] for s in summary] == ["NoIssuesFound"]
    assert "evaluated" in summary[0]["StatusDetails"]
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    assert trial.steps(mode=modes.TRAIN) == [0, 1, 2, 3]  # gradient_accumulation_steps=2: not 0..7


def test_launcher_adds_lightning_callback(tmp_path: Path) -> None:
    """The launcher with a hook config: an unmodified Lightning script saves TRAIN steps per optimizer step."""
    import json
    import os
    import subprocess
    import sys

    from sagemaker_debugger_ext.trials import create_trial

    pytest.importorskip("lightning")
    out = tmp_path / "tensors"
    config = tmp_path / "debughookconfig.json"
    config.write_text(json.dumps({"LocalPath": str(out), "HookParameters": {"save_interval": "1"}}))
    env = {**os.environ, "SMDEBUG_CONFIG_FILE_PATH": str(config)}
    env.pop("TRAINING_JOB_NAME", None)
    subprocess.run([sys.executable, *_autopatch.launcher_args(env), str(SCRIPTS / "train_lightning_lm.py")],
                   env=env, cwd=tmp_path, check=True, capture_output=True)  # fmt: skip
    trial = create_trial(str(out))
    assert trial.steps(mode=modes.TRAIN) == [0, 1]  # 4 batches, accumulate 2
    assert trial.tensor("loss_output_0").steps(mode=modes.TRAIN) == [0, 1]
