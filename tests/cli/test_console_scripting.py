"""The console script in pipes and scripts: whole names, --json everywhere, --out, --wait (issue 15)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "local" / "scripts"
LONG_NAME = "local-python-2026-11-23-19-52-05-123-a-long-job-name-to-copy"  # 61 characters


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], Path]:
    """One finished local job with a long name; returns the CLI environment and its debug output."""
    from sagemaker_debugger_ext.local import LocalTrainingClient
    from sagemaker_debugger_ext.local.store._job_store import JobStore

    home = tmp_path_factory.mktemp("scripting-home")
    out = tmp_path_factory.mktemp("scripting-out")
    client = LocalTrainingClient(JobStore(home), settings={"StartMonitor": False})
    client.create_training_job(
        TrainingJobName=LONG_NAME,
        AlgorithmSpecification={"TrainingImage": "local-image", "TrainingInputMode": "File"},
        RoleArn="arn:aws:iam::123456789012:role/local",
        OutputDataConfig={"S3OutputPath": out.as_uri()},
        ResourceConfig={"InstanceType": "local", "InstanceCount": 1, "VolumeSizeInGB": 30},
        StoppingCondition={"MaxRuntimeInSeconds": 120},
        HyperParameters={
            "sagemaker_program": '"train_steps.py"',
            "sagemaker_submit_directory": f'"{SCRIPTS.as_uri()}"',
            "steps": "6",
        },
        DebugHookConfig={"S3OutputPath": out.as_uri(), "CollectionConfigurations": []},
    )
    assert client.wait(LONG_NAME, timeout_s=120)["TrainingJobStatus"] == "Completed"
    env = {**os.environ, "SAGEMAKER_DEBUGGER_EXT_HOME": str(home)}
    return env, out / LONG_NAME / "debug-output"


def _json(cli: Any, *args: str, env: dict[str, str]) -> Any:
    proc = cli(*args, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_jobs_list_piped_shows_whole_names(cli: Any, job: tuple[dict[str, str], Path]) -> None:
    """``jobs list | cat`` prints the full job name (nothing cut to a terminal width)."""
    env, _ = job
    env = {**env, "COLUMNS": "40"}
    lister = subprocess.Popen([str(cli.__globals__["CONSOLE_SCRIPT"]), "jobs", "list"], stdout=subprocess.PIPE, env=env)
    cat = subprocess.run(["cat"], stdin=lister.stdout, capture_output=True, text=True, timeout=120, check=True)
    assert lister.stdout is not None
    lister.stdout.close()
    assert lister.wait(timeout=120) == 0
    piped = cat
    rows = [line.split("\t") for line in piped.stdout.splitlines()]
    assert [r[0] for r in rows] == [LONG_NAME]
    assert rows[0][1:3] == ["Completed", "Completed"]


@pytest.mark.slow
def test_every_json_option_parses(cli: Any, job: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    """``--json`` of jobs list/describe, rules list/run and trial prints JSON a script can parse."""
    env, debug_output = job
    listed = _json(cli, "jobs", "list", "--json", env=env)
    assert [s["TrainingJobName"] for s in listed] == [LONG_NAME]
    assert listed[0]["TrainingJobStatus"] == "Completed"
    described = _json(cli, "jobs", "describe", LONG_NAME, "--json", env=env)
    assert described["TrainingJobName"] == LONG_NAME
    rules = _json(cli, "rules", "list", "--json", env=env)
    assert "LossNotDecreasing" in {r["name"] for r in rules}
    trial = _json(cli, "trial", str(debug_output), "--json", env=env)
    assert "loss" in json.dumps(trial)
    out = tmp_path / "reports"
    report = _json(
        cli,
        "rules",
        "run",
        str(debug_output),
        "AllZero",
        "--param",
        "tensor_regex=loss",
        "--out",
        str(out),
        "--json",
        env=env,
    )
    assert report["RuleConfigurationName"] == "AllZero"
    assert (out / "rule-report.json").is_file(), "--out is where the reports go"


@pytest.mark.slow
def test_rules_run_names_the_report_folder(cli: Any, job: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    """Without --json, ``rules run --out DIR`` lists the reports it wrote there."""
    env, debug_output = job
    proc = cli(
        "rules", "run", str(debug_output), "AllZero", "--param", "tensor_regex=loss", "--out", str(tmp_path), env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert f"reports in {tmp_path}: " in proc.stdout and "rule-report.json" in proc.stdout


def test_rules_run_on_an_empty_folder_answers_at_once(cli: Any, expect_error: Any, tmp_path: Path) -> None:
    """An empty folder is reported as nothing to evaluate (it used to wait forever); --wait bounds the wait."""
    proc = cli("rules", "run", str(tmp_path), "LossNotDecreasing", timeout=60)
    expect_error(proc, "nothing to evaluate", str(tmp_path), "--wait")
    proc = cli("rules", "run", str(tmp_path), "LossNotDecreasing", "--wait", "0.5", timeout=60)
    expect_error(proc, "nothing to evaluate", "after waiting 0.5 s")
    proc = cli("rules", "run", str(tmp_path), "LossNotDecreasing", "--wait", "-1", timeout=60)
    expect_error(proc, "'--wait' must be a number of seconds >= 0", "-1")
