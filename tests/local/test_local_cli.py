"""The ``run`` and ``jobs`` subcommands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagemaker_debugger_ext.cli import main


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_cli_run_then_jobs(scripts_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`run` trains with a rule and hyperparameters; `jobs list/describe/logs` show the job."""
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    out = (tmp_path / "out").as_uri()
    code = main([
        "run", str(scripts_dir / "train_steps.py"), "--rule", "LossNotDecreasing:diff_percent=5",
        "-p", "steps=3", "--output", out, "--job-name", "cli-job", "--logs", "None", "--save-interval", "1",
    ])  # fmt: skip
    text = capsys.readouterr().out
    assert code == 0, text
    assert "cli-job" in text and "LossNotDecreasing" in text and "Completed" in text
    assert f"{out}/cli-job/debug-output" in text.replace("\n", "")
    assert main(["jobs", "list"]) == 0
    assert "cli-job" in capsys.readouterr().out
    assert main(["jobs", "describe", "cli-job"]) == 0
    desc = json.loads(capsys.readouterr().out)
    assert desc["TrainingJobStatus"] == "Completed"
    assert desc["HyperParameters"]["steps"] == '"3"' or desc["HyperParameters"]["steps"] == "3"
    params = desc["DebugRuleConfigurations"][0]["RuleParameters"]
    assert params["diff_percent"] == "5" and params["rule_to_invoke"] == "LossNotDecreasing"
    assert main(["jobs", "logs", "cli-job"]) == 0
    assert "step 2 loss" in capsys.readouterr().out


@pytest.mark.slow
def test_cli_jobs_stop(local_client, make_request, tmp_path: Path, capsys: pytest.CaptureFixture[str], poll) -> None:  # type: ignore[no-untyped-def]
    """`jobs stop NAME` stops a running job and reports Stopped."""
    marker = tmp_path / "started"
    local_client.create_training_job(
        **make_request("cli-stop", hps={"steps": "500", "step-seconds": "0.05", "marker": str(marker)})
    )
    poll(marker.exists, what="training started")
    assert main(["jobs", "stop", "cli-stop"]) == 0
    assert "cli-stop: Stopped" in capsys.readouterr().out


def test_cli_errors(scripts_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown rule names, bad hyperparameters and unknown jobs are one-line errors (exit 2)."""
    assert main(["run", str(scripts_dir / "train_steps.py"), "--rule", "NoSuchRule"]) == 2
    assert "'--rule' must be a built-in rule name" in capsys.readouterr().err
    assert main(["run", str(scripts_dir / "train_steps.py"), "-p", "novalue"]) == 2
    assert "'--hyperparameter' must be K=V" in capsys.readouterr().err
    assert main(["run", "missing-script.py"]) == 2
    assert "'SCRIPT' must be an existing file" in capsys.readouterr().err
    assert main(["jobs", "describe", "no-such-job"]) == 2
    assert "no local training job named 'no-such-job'" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_cli_demo_rule_stops_bad_lr(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`demo`: the bad learning rate makes ExplodingTensor fire and stop the PyTorch job."""
    pytest.importorskip("torch")
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--no-live", "--steps", "60"]) == 0
    text = capsys.readouterr().out
    assert "Stopped" in text and "ExplodingTensor" in text and "IssuesFound" in text
    assert (tmp_path / "sagemaker-local-output").is_dir()
