"""Whole local jobs through LocalTrainingClient: statuses, rules, stop paths, artifacts."""

from __future__ import annotations

import json
import math
import socket
import tarfile
from pathlib import Path
from typing import Any

import pytest

from sagemaker_debugger_ext._exceptions import JobAlreadyExistsError
from sagemaker_debugger_ext.local.api._describe import response_problems
from sagemaker_debugger_ext.local.store._job_store import pid_alive
from sagemaker_debugger_ext.trials import create_trial

# docs/local-mode.md, "Statuses": a StopTraining action stops the local job within 3 seconds of the firing.
STOP_LATENCY_S = 3.0

pytestmark = pytest.mark.slow


def _steps_saved(debug_dir: Path, worker: str = "worker_0") -> list[int]:
    return sorted(int(p.name.split("_")[0]) for p in debug_dir.glob(f"events/*/*_{worker}.tfevents"))


def _assert_no_process_left(state: dict[str, Any]) -> None:
    alive = {name: pid for name, pid in state["Pids"].items() if pid_alive(pid)}
    assert alive == {}


def test_completed_job_with_rules(local_client, make_request, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A job completes; a crashing rule is Error, the other NoIssuesFound; describe fits the API shape."""
    req = make_request("ok-job", hps={"steps": "3"}, rules=("Watcher", "CrashRule"))
    assert local_client.create_training_job(**req)["TrainingJobArn"].endswith(":training-job/ok-job")
    with pytest.raises(JobAlreadyExistsError, match="ok-job"):
        local_client.create_training_job(**req)
    desc = local_client.wait("ok-job", timeout_s=60)
    assert desc["TrainingJobStatus"] == "Completed", desc.get("FailureReason")
    assert [t["Status"] for t in desc["SecondaryStatusTransitions"]] == [
        "Starting", "Downloading", "Training", "Uploading", "Completed",
    ]  # fmt: skip
    rules = {r["RuleConfigurationName"]: r for r in desc["DebugRuleEvaluationStatuses"]}
    assert rules["Watcher"]["RuleEvaluationStatus"] == "NoIssuesFound"
    assert rules["CrashRule"]["RuleEvaluationStatus"] == "Error"
    assert "SyntaxError: bad rule source" in rules["CrashRule"]["StatusDetails"]
    assert rules["CrashRule"]["RuleEvaluationJobArn"].startswith(
        "arn:aws:sagemaker:us-west-2:000000000000:processing-job/"
    )
    assert response_problems("DescribeTrainingJob", desc) == []
    out = tmp_path / "out" / "ok-job"
    assert _steps_saved(out / "debug-output") == [0, 1, 2]
    assert (out / "debug-output" / "training_job_end.ts").exists()
    assert (out / "debug-output" / "collections" / "000000000" / "worker_0_collections.json").exists()
    assert json.loads((out / "rule-output" / "Watcher" / "report.json").read_text())["files"] == 3
    with tarfile.open(out / "output" / "model.tar.gz") as tar:
        assert tar.getnames() == ["model.txt"]
    assert desc["ModelArtifacts"]["S3ModelArtifacts"] == f"{(tmp_path / 'out').as_uri()}/ok-job/output/model.tar.gz"
    listed = local_client.list_training_jobs(NameContains="ok-")
    assert [s["TrainingJobName"] for s in listed["TrainingJobSummaries"]] == ["ok-job"]
    assert response_problems("ListTrainingJobs", listed) == []
    local_client.update_training_job("ok-job", ProfilerConfig={"DisableProfiler": True})
    assert local_client.describe_training_job("ok-job")["ProfilingStatus"] == "Disabled"
    log = local_client.store.paths("ok-job").host_log("algo-1").read_text()
    assert "step 2 loss" in log and "done" in log
    _assert_no_process_left(local_client.store.read_state("ok-job"))


def test_nan_with_stop_training(local_client, make_request, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A NaN at step 4 fires the rule, which stops training within the documented latency (docs/local-mode.md)."""
    nan_step, step_seconds = 4, 0.15
    req = make_request(
        "nan-job",
        hps={"steps": "100", "nan-step": str(nan_step), "step-seconds": str(step_seconds)},
        rules=("NaNStop", "Watcher"),
    )
    local_client.create_training_job(**req)
    desc = local_client.wait("nan-job", timeout_s=60)
    assert desc["TrainingJobStatus"] == "Stopped"
    assert "NaNStop" in desc["SecondaryStatusTransitions"][-1]["StatusMessage"]
    rules = {r["RuleConfigurationName"]: r["RuleEvaluationStatus"] for r in desc["DebugRuleEvaluationStatuses"]}
    assert rules == {"NaNStop": "IssuesFound", "Watcher": "Stopped"}
    watcher = next(r for r in desc["DebugRuleEvaluationStatuses"] if r["RuleConfigurationName"] == "Watcher")
    # the stopped rule says it was cut short, and by what
    assert watcher["StatusDetails"].startswith("Stopped before the evaluation finished: the training job stopped (")
    assert "Training stopped by rule NaNStop" in watcher["StatusDetails"]
    steps = _steps_saved(tmp_path / "out" / "nan-job" / "debug-output")
    # The promise: stopped at most STOP_LATENCY_S after the firing, i.e. that many steps of known length after
    # the NaN step (plus the step under way), and long before the script's own end.
    assert nan_step in steps and max(steps) <= nan_step + 1 + math.ceil(STOP_LATENCY_S / step_seconds) < 99
    assert response_problems("DescribeTrainingJob", desc) == []
    _assert_no_process_left(local_client.store.read_state("nan-job"))


def test_script_raises(local_client, make_request, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The script raises: Failed, the exception in FailureReason, tensors already written uploaded."""
    local_client.create_training_job(**make_request("fail-job", hps={"steps": "5", "fail-at": "2"}))
    desc = local_client.wait("fail-job", timeout_s=60)
    assert desc["TrainingJobStatus"] == "Failed" and desc["SecondaryStatus"] == "Failed"
    assert "ValueError: boom at step 2" in desc["FailureReason"]
    assert _steps_saved(tmp_path / "out" / "fail-job" / "debug-output") == [0, 1, 2]
    assert (tmp_path / "out" / "fail-job" / "debug-output" / "training_job_end.ts").exists()


def test_stop_training_job_leaves_no_process(local_client, make_request, tmp_path: Path, poll) -> None:  # type: ignore[no-untyped-def]
    """StopTrainingJob stops a running job: Stopped, every recorded pid gone."""
    marker = tmp_path / "started"
    req = make_request(
        "stop-job", hps={"steps": "500", "step-seconds": "0.05", "marker": str(marker)}, rules=("Watcher",)
    )
    local_client.create_training_job(**req)
    poll(marker.exists, what="training started")
    local_client.stop_training_job("stop-job")
    desc = local_client.wait("stop-job", timeout_s=60)
    assert desc["TrainingJobStatus"] == "Stopped" and desc["SecondaryStatus"] == "Stopped"
    assert "StopTrainingJob" in desc["SecondaryStatusTransitions"][-1]["StatusMessage"]
    state = local_client.store.read_state("stop-job")
    assert {"supervisor", "algo-1", "rule:Watcher"} <= set(state["Pids"])
    assert not pid_alive(int(marker.read_text()))
    _assert_no_process_left(state)


def test_max_runtime_exceeded(local_client, make_request) -> None:  # type: ignore[no-untyped-def]
    """MaxRuntimeInSeconds stops the job: Stopped with SecondaryStatus MaxRuntimeExceeded."""
    req = make_request(
        "slow-job", hps={"steps": "500", "step-seconds": "0.05"}, StoppingCondition={"MaxRuntimeInSeconds": 1}
    )
    local_client.create_training_job(**req)
    desc = local_client.wait("slow-job", timeout_s=60)
    assert desc["TrainingJobStatus"] == "Stopped" and desc["SecondaryStatus"] == "MaxRuntimeExceeded"


def test_two_process_job(local_client, make_request, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """instance_count=2 runs two ranks whose worker_0 / worker_1 data the reader returns."""
    local_client.create_training_job(**make_request("two-job", hps={"steps": "2"}, count=2))
    desc = local_client.wait("two-job", timeout_s=60)
    assert desc["TrainingJobStatus"] == "Completed", desc.get("FailureReason")
    debug = tmp_path / "out" / "two-job" / "debug-output"
    assert _steps_saved(debug, "worker_0") == [0, 1] and _steps_saved(debug, "worker_1") == [0, 1]
    trial = create_trial(str(debug))
    assert sorted(trial.workers()) == ["worker_0", "worker_1"]
    assert float(trial.tensor("loss").value(1, worker="worker_1")[0]) == pytest.approx(1.5)


def test_s3_unreachable_during_sync(local_client, make_request, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """S3 unreachable: retries, then Failed with a clear reason; the local copy is kept."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    local_client.create_training_job(**make_request("s3-down", hps={"steps": "2"}, output="s3://no-such-endpoint/out"))
    desc = local_client.wait("s3-down", timeout_s=90)
    assert desc["TrainingJobStatus"] == "Failed"
    assert "uploading artifacts to s3://no-such-endpoint/out failed" in desc["FailureReason"]
    assert "attempts" in desc["FailureReason"] and "local copy is kept" in desc["FailureReason"]
    kept = local_client.store.paths("s3-down").debug_dir
    assert _steps_saved(kept) == [0, 1]
