"""The self-hosted backend's parts: backend choice, rule job names and requests, bundle, rule-job follower."""

from __future__ import annotations

import argparse
import io
import json
import re
import tarfile
from pathlib import Path

import pytest

from sagemaker_debugger_ext._exceptions import ConfigValueError
from sagemaker_debugger_ext.cloud import BACKEND_ENV, DebuggerBackend, resolve_backend
from sagemaker_debugger_ext.cloud._bundle import BUNDLE_CONFIG, LAUNCH_SCRIPT, add_to_bundle, package_requirement
from sagemaker_debugger_ext.cloud._rule_job import build_rule_job_parser, follow
from sagemaker_debugger_ext.cloud._rule_jobs import plan_rule_job, rule_image_uri, rule_job_name, rule_job_request
from sagemaker_debugger_ext.request._service_model import validate_request


@pytest.mark.parametrize(
    ("value", "environ", "expected"),
    [
        (None, {}, DebuggerBackend.SERVICE),
        (None, {BACKEND_ENV: "self-hosted"}, DebuggerBackend.SELF_HOSTED),
        ("service", {BACKEND_ENV: "self-hosted"}, DebuggerBackend.SERVICE),
        ("Self-Hosted", {}, DebuggerBackend.SELF_HOSTED),
        (None, {BACKEND_ENV: " "}, DebuggerBackend.SERVICE),
    ],
    ids=["default", "env", "argument-wins", "case", "blank-env"],
)
def test_backend_resolution(value: str | None, environ: dict[str, str], expected: DebuggerBackend) -> None:
    """The argument, else the environment variable, else service."""
    assert resolve_backend(value, environ) is expected


def test_bad_backend_names_the_field_the_value_and_what_is_allowed() -> None:
    """A bad argument names debugger_backend; a bad variable names the variable."""
    with pytest.raises(
        ConfigValueError, match=r"^'debugger_backend' must be 'service' or 'self-hosted' \(got 'cloud'\)$"
    ):
        resolve_backend("cloud", {})
    with pytest.raises(
        ConfigValueError, match=rf"^'{BACKEND_ENV}' must be 'service' or 'self-hosted' \(got 'debugger'\)$"
    ):
        resolve_backend(None, {BACKEND_ENV: "debugger"})


def test_estimator_rejects_a_bad_backend_before_anything_starts() -> None:
    """Estimator(debugger_backend=...) validates at construction."""
    from sagemaker_debugger_ext import Estimator

    with pytest.raises(ConfigValueError, match="'debugger_backend' must be"):
        Estimator(image_uri="x", role="arn:aws:iam::123456789012:role/r", instance_count=1,
                  instance_type="ml.m5.xlarge", debugger_backend="elsewhere")  # fmt: skip


def test_rule_job_names_follow_debuggers() -> None:
    """<job[:26]>-<rule lower [:26], invalid characters as '-'>-<8 hex>, a valid processing job name."""
    job = "pytorch-training-2026-11-26-13-00-00-123"
    name = rule_job_name(job, "LossNotDecreasing_v2.with.a.very.long.name")
    assert re.fullmatch(r"pytorch-training-2026-11-2-lossnotdecreasing-v2-with--[0-9a-f]{8}", name), name
    assert len(name) <= 63
    assert rule_job_name("j", "ExplodingTensor", "0123abcd") == "j-explodingtensor-0123abcd"


def test_rule_job_request_validates_against_the_service_model() -> None:
    """The CreateProcessingJob request is valid botocore input; defaults are Debugger's."""
    import botocore.session

    config = {"RuleConfigurationName": "ExplodingTensor", "RuleEvaluatorImage": "x",
              "RuleParameters": {"rule_to_invoke": "ExplodingTensor"}}  # fmt: skip
    rule = plan_rule_job(config, kind="debug", training_job="job", output_path="s3://b/out", trial_base="s3://b/out")
    assert rule.trial_uri == "s3://b/out/job/debug-output"
    assert rule.status_uri == "s3://b/out/job/rule-output/ExplodingTensor/status.json"
    assert (rule.instance_type, rule.volume_gb) == ("ml.t3.medium", 30)
    request = rule_job_request(
        rule, training_job="job", role="arn:aws:iam::123456789012:role/r", image_uri=rule_image_uri("us-west-2"),
        requirement=package_requirement("1.2.3"), wheel_uri=None, max_runtime_s=90000, poll_seconds=10.0,
    )  # fmt: skip
    shape = botocore.session.get_session().get_service_model("sagemaker").operation_model("CreateProcessingJob")
    assert validate_request(shape.input_shape, request) == []
    assert request["AppSpecification"]["ImageUri"].endswith("/pytorch-training:2.8-cpu-py312")
    assert request["Environment"] == {"SAGEMAKER_DEBUGGER_EXT_REQUIREMENT": "sagemaker-debugger-ext==1.2.3"}


def _bundle(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_bundle_keeps_the_users_files_and_adds_ours() -> None:
    """Launcher, config and the requirement added; the user's requirements kept; the input unchanged."""
    original = _bundle({"train.py": b"print(1)", "requirements.txt": b"numpy\n"})
    config = {"EntryPoint": "train.py", "DebugHookConfig": {"S3OutputPath": "s3://b/o"}}
    new = add_to_bundle(original, config=config, requirement=package_requirement("0.2.0", "pkg.whl"))
    with tarfile.open(fileobj=io.BytesIO(new)) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    assert files["train.py"] == b"print(1)"
    assert files["requirements.txt"] == b"numpy\n/opt/ml/input/data/sagemaker-debugger-ext/pkg.whl\n"
    assert json.loads(files[BUNDLE_CONFIG]) == config
    assert b"sagemaker_debugger_ext.cloud._launcher" in files[LAUNCH_SCRIPT]
    pinned = add_to_bundle(_bundle({"requirements.txt": b"sagemaker-debugger-ext==0.1\n"}), config={}, requirement="x")
    with tarfile.open(fileobj=io.BytesIO(pinned)) as tar:
        assert tar.extractfile("requirements.txt").read() == b"sagemaker-debugger-ext==0.1\n"  # type: ignore[union-attr]


def test_rule_job_stops_once_training_has_ended(tmp_path: Path) -> None:
    """A rule whose trial never ends is stopped after the grace period once training Failed; it says why."""
    params = tmp_path / "parameters.json"
    params.write_text(json.dumps({"rule_to_invoke": "LossNotDecreasing"}))
    (tmp_path / "trial").mkdir()
    args = build_rule_job_parser(argparse.ArgumentParser()).parse_args(
        ["--training-job-name", "job", "--trial-path", str(tmp_path / "trial"), "--rule-name", "LossNotDecreasing",
         "--rule-parameters-file", str(params), "--output-dir", str(tmp_path / "out"),
         "--status-uri", (tmp_path / "published" / "status.json").as_uri(),
         "--poll-seconds", "0.1", "--final-grace-seconds", "1"]
    )  # fmt: skip
    (tmp_path / "published").mkdir()
    calls = []

    def training_status() -> str:
        calls.append(1)
        return "Failed"

    assert follow(args, training_status=training_status) == 0
    published = json.loads((tmp_path / "published" / "status.json").read_text())
    assert published["RuleEvaluationStatus"] == "Stopped"
    assert published["StatusDetails"].startswith(
        "Stopped before the evaluation finished: the training job ended (Failed)."
    )
    assert len(calls) == 1


def test_rule_job_that_ends_at_the_marker_waits_to_say_how_training_ended(tmp_path: Path) -> None:
    """The rule's final evaluation ends before DescribeTrainingJob shows the end (model upload): the follower
    asks again and the rule's details start with the training job's end and reason."""
    import numpy as np

    from sagemaker_debugger_ext.format import StepWriter, write_collections_file, write_training_end
    from sagemaker_debugger_ext.modes import ModeKeys

    trial = tmp_path / "trial"
    write_collections_file(trial, "worker_0", {}, 1)
    for step in range(3):
        with StepWriter(trial, global_step=step, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=step) as writer:
            writer.write_tensor("loss", np.float32(1.0))
    write_training_end(trial)
    params = tmp_path / "parameters.json"
    params.write_text(json.dumps({"rule_to_invoke": "ExplodingTensor"}))
    (tmp_path / "published").mkdir()
    args = build_rule_job_parser(argparse.ArgumentParser()).parse_args(
        ["--training-job-name", "job", "--trial-path", str(trial), "--rule-name", "ExplodingTensor",
         "--rule-parameters-file", str(params), "--output-dir", str(tmp_path / "out"),
         "--status-uri", (tmp_path / "published" / "status.json").as_uri(),
         "--poll-seconds", "1000", "--final-grace-seconds", "60"]
    )  # fmt: skip
    seen: list[str] = []

    def training_status() -> str:  # asked once while the rule runs, then after it ended: twice more
        seen.append("InProgress" if len(seen) < 2 else "Failed: AlgorithmError: boom")
        return seen[-1]

    assert follow(args, training_status=training_status) == 0
    published = json.loads((tmp_path / "published" / "status.json").read_text())
    assert published["RuleEvaluationStatus"] == "NoIssuesFound", published
    assert published["StatusDetails"].startswith(
        "The training job ended Failed (AlgorithmError: boom): evaluated the steps saved before it ended."
    ), published
    assert seen == ["InProgress", "InProgress", "Failed: AlgorithmError: boom"]
