"""``run``, ``jobs``, ``report`` and ``demo`` as the installed console script, on one real local job."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

NOTEBOOK_SCRIPTS = Path(__file__).resolve().parents[2] / "notebooks" / "scripts"
JOB = "console-job-1"
FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-west-2",
    "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
}  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment with a private job store for this module's jobs."""
    return {**FAKE_AWS, "SAGEMAKER_DEBUGGER_EXT_HOME": str(tmp_path_factory.mktemp("console-home"))}


@pytest.fixture(scope="module")
def finished_job(cli, store, tmp_path_factory):
    """One local job started by ``run``: lr=0, so LossNotDecreasing finds an issue."""
    work = tmp_path_factory.mktemp("console-work")
    shutil.copytree(NOTEBOOK_SCRIPTS, work / "scripts")
    proc = cli(
        "run", "scripts/train_pytorch.py", "--job-name", JOB,
        "--rule", "LossNotDecreasing:num_steps=3,mode=TRAIN", "--rule", "VanishingGradient",
        "-p", "epochs=1", "-p", "lr=0.0", "-p", "steps_per_epoch=8", "--save-interval", "1",
        "--output", (work / "out").as_uri() + "/", "--logs", "None",
        cwd=work, env=store, timeout=300,
    )  # fmt: skip
    return proc, work


@pytest.mark.slow
def test_run_prints_rule_statuses(finished_job):
    """``run`` waits for the job and prints each rule with its final status."""
    proc, work = finished_job
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"LossNotDecreasing\s.*IssuesFound", proc.stdout), proc.stdout
    assert re.search(r"VanishingGradient\s.*NoIssuesFound", proc.stdout), proc.stdout
    assert (work / "out" / JOB / "debug-output" / "training_job_end.ts").exists()


@pytest.mark.slow
def test_jobs_list_describe_logs_stop(cli, store, finished_job):
    """``jobs`` lists, describes (JSON), shows logs of and stops (no-op when finished) the job."""
    listed = cli("jobs", "list", env=store)
    assert listed.returncode == 0 and JOB in listed.stdout and "Completed" in listed.stdout
    described = cli("jobs", "describe", JOB, env=store)
    assert described.returncode == 0, described.stderr
    desc = json.loads(described.stdout)
    assert desc["TrainingJobStatus"] == "Completed"
    assert {s["RuleConfigurationName"]: s["RuleEvaluationStatus"] for s in desc["DebugRuleEvaluationStatuses"]} == {
        "LossNotDecreasing": "IssuesFound",
        "VanishingGradient": "NoIssuesFound",
    }
    table = cli("jobs", "describe", JOB, "--rules", env=store)
    assert table.returncode == 0, table.stderr
    assert re.search(r"LossNotDecreasing\s.*IssuesFound", table.stdout), table.stdout
    logs = cli("jobs", "logs", JOB, env=store)
    assert logs.returncode == 0 and "epoch 0" in logs.stdout
    stopped = cli("jobs", "stop", JOB, env=store)
    assert stopped.returncode == 0 and "Completed" in stopped.stdout


@pytest.mark.slow
def test_report_of_job_and_trial_of_its_output(cli, store, finished_job, tmp_path):
    """``report JOB`` writes the job report with the flagged loss; ``trial`` reads the job's output."""
    _proc, work = finished_job
    proc = cli("report", JOB, "--out", str(tmp_path / "r"), env=store)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "r" / "job-report.html").read_text()
    assert str(tmp_path / "r" / "job-report.html") in proc.stdout
    assert "LossNotDecreasing" in page and "CrossEntropyLoss_output_0" in page
    assert page.count("data:image/png;base64,") >= 2
    described = json.loads(cli("jobs", "describe", JOB, env=store).stdout)
    profiled = str((described.get("ProfilerConfig") or {}).get("DisableProfiler", "false")).lower() != "true"
    assert (tmp_path / "r" / "profiler-report.html").exists() == profiled
    summary = cli("trial", str(work / "out" / JOB / "debug-output"), "--json")
    assert summary.returncode == 0, summary.stderr
    modes = {m["mode"]: m["steps"] for m in json.loads(summary.stdout)["modes"]}
    assert modes["TRAIN"] == list(range(8)) and modes["EVAL"] == [0, 1]


def test_jobs_and_report_unknown_job_is_one_line(cli, expect_error, expect_traceback, store):
    """A job name that does not exist is a one-line error for jobs and report; --debug shows the traceback."""
    expect_error(cli("jobs", "describe", "no-such-job", env=store), "no-such-job")
    expect_error(cli("report", "no-such-job", env=store), "no-such-job")
    expect_traceback(cli("--debug", "jobs", "describe", "no-such-job", env=store))


def test_run_bad_input_is_one_line(cli, expect_error, store, tmp_path):
    """An unknown built-in rule is one line naming it, before any job starts."""
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    expect_error(cli("run", str(script), "--rule", "NoSuchRule", env=store), "NoSuchRule")
    assert not list((Path(store["SAGEMAKER_DEBUGGER_EXT_HOME"]) / "jobs").glob("train*"))


def test_demo_bad_input_is_usage_error(cli, store):
    """A non-numeric learning rate is rejected by the parser with exit code 2."""
    proc = cli("demo", "--lr", "fast", env=store)
    assert proc.returncode == 2
    assert "--lr" in proc.stderr and "Traceback" not in proc.stderr
