"""Fixtures for local-mode tests: a stand-in rule module, request builders, job helpers."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from polling import wait_until

SCRIPTS = Path(__file__).resolve().parent / "scripts"


@pytest.fixture
def scripts_dir() -> Path:
    """Folder holding the tiny training script and the stand-in rule module."""
    return SCRIPTS


@pytest.fixture
def standin_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``standin_rules`` importable in the job's processes (PYTHONPATH is inherited)."""
    old = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(SCRIPTS), old) if p))


@pytest.fixture
def local_client(standin_path: None) -> Any:
    """A LocalTrainingClient whose debug rules run the stand-in rule module."""
    from sagemaker_debugger_ext.local import LocalTrainingClient

    return LocalTrainingClient(
        settings={"DebugRuleModule": "standin_rules", "StartMonitor": False, "SyncIntervalSeconds": 0.2},
        region="us-west-2",
    )


@pytest.fixture
def make_request(tmp_path: Path) -> Callable[..., dict[str, Any]]:
    """Build a CreateTrainingJob request for ``train_steps.py``."""

    def build(
        name: str,
        *,
        hps: dict[str, str] | None = None,
        rules: tuple[str, ...] = (),
        output: str | None = None,
        count: int = 1,
        hook: bool = True,
        **extra: Any,
    ) -> dict[str, Any]:
        out = output or (tmp_path / "out").as_uri()
        req: dict[str, Any] = {
            "TrainingJobName": name,
            "AlgorithmSpecification": {"TrainingImage": "local-image", "TrainingInputMode": "File"},
            "RoleArn": "arn:aws:iam::123456789012:role/local",
            "OutputDataConfig": {"S3OutputPath": out},
            "ResourceConfig": {"InstanceType": "local", "InstanceCount": count, "VolumeSizeInGB": 30},
            "StoppingCondition": {"MaxRuntimeInSeconds": 120},
            "HyperParameters": {
                "sagemaker_program": '"train_steps.py"',
                "sagemaker_submit_directory": f'"{SCRIPTS.as_uri()}"',
                **(hps or {}),
            },
        }
        if hook:
            req["DebugHookConfig"] = {"S3OutputPath": out, "CollectionConfigurations": []}
        if rules:
            req["DebugRuleConfigurations"] = [
                {"RuleConfigurationName": r, "RuleEvaluatorImage": "local", "RuleParameters": {"rule_to_invoke": r}}
                for r in rules
            ]
        req.update(extra)
        return req

    return build


def wait_for(condition: Callable[[], Any], *, timeout_s: float = 30.0, what: str = "condition") -> Any:
    """Poll ``condition`` until it returns something truthy (no fixed sleeps)."""
    return wait_until(condition, timeout_s=timeout_s, what=what)


@pytest.fixture
def poll() -> Callable[..., Any]:
    """The ``wait_for`` helper as a fixture."""
    return wait_for


def _belongs_to_job(pid: int, job_root: Path, job_name: str) -> bool:
    """Whether live ``pid`` is still a process of the job (not a reuse of its pid by another process)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return str(job_root).encode() in cmdline or f"TRAINING_JOB_NAME={job_name}\0".encode() in environ + b"\0"


@pytest.fixture
def job_pids_alive() -> Callable[..., dict[str, int]]:
    """``(state, job_root, job_name) -> {name: pid}`` of the job's processes still alive.

    pid_max is often 32768: on a busy machine an ended process's pid is soon reused, so a
    bare ``pid_alive`` check can see an unrelated process; this one checks it is the job's.
    """
    from sagemaker_debugger_ext.local.store._job_store import pid_alive

    def alive(state: dict[str, Any], job_root: Path, job_name: str) -> dict[str, int]:
        return {
            name: pid
            for name, pid in state.get("Pids", {}).items()
            if pid_alive(pid) and _belongs_to_job(pid, job_root, job_name)
        }

    return alive


@pytest.fixture
def served(moto_server: str, monkeypatch: pytest.MonkeyPatch, standin_path: None) -> Any:
    """``serve`` as the cloud emulator (ml.* types accepted) with S3 on moto's server.

    Yields a namespace: ``url``, ``sm`` (boto3 SageMaker client on serve), ``s3`` (boto3 S3 on
    moto), ``client`` (the LocalTrainingClient behind serve), ``bucket`` (a fresh bucket).
    """
    import types
    import uuid

    import boto3

    from sagemaker_debugger_ext.local import LocalTrainingClient
    from sagemaker_debugger_ext.local.api._server import ApiServer

    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto_server)
    client = LocalTrainingClient(
        region="us-west-2",
        settings={
            "CloudInstanceTypes": True,
            "DebugRuleModule": "standin_rules",
            "StartMonitor": False,
            "SyncIntervalSeconds": 0.2,
        },
    )
    server = ApiServer(client).start()
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", server.url)
    s3 = boto3.client("s3", region_name="us-west-2")
    bucket = f"served-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    sm = boto3.client("sagemaker", region_name="us-west-2")
    try:
        yield types.SimpleNamespace(url=server.url, sm=sm, s3=s3, client=client, bucket=bucket)
    finally:
        server.stop()
