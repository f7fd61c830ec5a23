"""The error table of ``serve`` in docs/local-mode.md, checked row by row against the server (issue 30)."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

DOC = Path(__file__).resolve().parents[2] / "docs" / "local-mode.md"
_ROW = re.compile(r"^\| (\w+) \| ([^|]+) \| (\w+) \| ([^|]+) \| ([^|]+) \|$")  # the last column: the source


def _table() -> list[tuple[str, str, str, str]]:
    text = DOC.read_text()
    start = text.index("| Operation | Case | Code | Message | Source |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        match = _ROW.match(line.strip())
        if not match:
            break
        rows.append(tuple(part.strip() for part in match.groups()[:4]))
    return rows  # type: ignore[return-value]


def _raw(url: str, target: str, body: bytes) -> tuple[str, str]:
    request = urllib.request.Request(
        url, data=body, method="POST",
        headers={"X-Amz-Target": target, "Content-Type": "application/x-amz-json-1.1"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=30):
            return "", ""
    except urllib.error.HTTPError as exc:
        answer = json.loads(exc.read())
        return answer["__type"], answer["message"]


def _processing(name: str, local_path: str = "/opt/ml/processing/input/x") -> dict[str, Any]:
    return {
        "ProcessingJobName": name,
        "ProcessingResources": {"ClusterConfig": {"InstanceCount": 1, "InstanceType": "ml.t3.medium", "VolumeSizeInGB": 1}},
        "AppSpecification": {"ImageUri": "image", "ContainerEntrypoint": ["python3", "-c", "pass"]},
        "ProcessingInputs": [{"InputName": "x", "S3Input": {"S3Uri": "s3://nowhere/x", "LocalPath": local_path,
                                                          "S3DataType": "S3Prefix", "S3InputMode": "File"}}],
        "RoleArn": "arn:aws:iam::123456789012:role/processing",
    }  # fmt: skip


def _ended_processing_job(served: Any) -> None:
    request = _processing("ended-proc")
    del request["ProcessingInputs"]
    served.sm.create_processing_job(**request)
    served.client_processing_wait("ended-proc")


def _call(served: Any, make_request: Any, operation: str, case: str) -> tuple[str, str]:
    sm = served.sm
    triggers: dict[tuple[str, str], Callable[[], Any]] = {
        ("DescribeTrainingJob", "unknown job"): lambda: sm.describe_training_job(TrainingJobName="nope"),
        ("StopTrainingJob", "unknown job"): lambda: sm.stop_training_job(TrainingJobName="nope"),
        ("UpdateTrainingJob", "unknown job"): lambda: sm.update_training_job(
            TrainingJobName="nope", ProfilerConfig={"ProfilingIntervalInMilliseconds": 500}
        ),
        ("StopTrainingJob", "the job has ended"): lambda: sm.stop_training_job(TrainingJobName="done-job"),
        ("CreateTrainingJob", "the name is taken"): lambda: sm.create_training_job(
            **make_request("done-job", hook=False)
        ),
        ("CreateTrainingJob", "a member missing or of the wrong type"): lambda: _raw(
            served.url, "SageMaker.CreateTrainingJob", json.dumps({**make_request("typed"), "RoleArn": 5}).encode()
        ),
        ("CreateTrainingJob", "a request this machine cannot run (no entry point)"): lambda: sm.create_training_job(
            **{**make_request("no-entry"), "HyperParameters": {}}
        ),
        ("DescribeProcessingJob", "unknown job"): lambda: sm.describe_processing_job(ProcessingJobName="NAME"),
        ("StopProcessingJob", "unknown job"): lambda: sm.stop_processing_job(ProcessingJobName="NAME"),
        ("StopProcessingJob", "the job has ended"): lambda: sm.stop_processing_job(ProcessingJobName="ended-proc"),
        ("CreateProcessingJob", "the name is taken"): lambda: sm.create_processing_job(**_processing("ended-proc")),
        ("CreateProcessingJob", "a LocalPath outside /opt/ml/processing/"): lambda: sm.create_processing_job(
            **_processing("bad-path", "/tmp/x")
        ),
        ("any", "an operation not served"): lambda: _raw(served.url, "SageMaker.CreateEndpoint", b"{}"),
        ("any", "a body that is not JSON"): lambda: _raw(served.url, "SageMaker.ListTrainingJobs", b"not json"),
    }
    try:
        raw = triggers[(operation, case)]()
    except ClientError as exc:
        assert exc.response["ResponseMetadata"]["HTTPStatusCode"] == 400
        return exc.response["Error"]["Code"], exc.response["Error"]["Message"]
    assert isinstance(raw, tuple), f"{operation} / {case} did not fail"
    return raw


def _matches(message: str, documented: str) -> bool:
    pattern = re.escape(documented).replace(r"\(arn\)", r"\(arn:aws:sagemaker:[^)]+\)").replace(r"\.\.\.", ".*")
    return re.fullmatch(pattern, message, flags=re.DOTALL) is not None


def test_error_table_is_complete() -> None:
    """Every served operation appears in the table, with its unknown-job row where it takes a name."""
    from sagemaker_debugger_ext.local.api._server import OPERATIONS

    rows = _table()
    operations = {row[0] for row in rows}
    assert {"DescribeTrainingJob", "StopTrainingJob", "DescribeProcessingJob", "StopProcessingJob"} <= operations
    assert operations - {"any"} <= set(OPERATIONS)
    assert len(rows) == 14  # every row parsed: each names its source in a fifth column


def test_error_table_row_by_row(served: Any, make_request: Any) -> None:
    """Each documented case gets exactly the documented code and message from the server."""
    from sagemaker_debugger_ext.local.api._processing_client import LocalProcessingClient

    processing = LocalProcessingClient(served.client.store, region="us-west-2")
    served.client_processing_wait = lambda name: processing.wait(name, timeout_s=120)
    served.sm.create_training_job(**make_request("done-job", hps={"steps": "2"}, hook=False))
    served.client.wait("done-job", timeout_s=120)
    _ended_processing_job(served)
    failures = []
    for operation, case, code, message in _table():
        got_code, got_message = _call(served, make_request, operation, case)
        if got_code != code or not _matches(got_message, message):
            failures.append(f"{operation} / {case}: got {got_code} {got_message!r}, documented {code} {message!r}")
    assert failures == []


@pytest.mark.parametrize("status", ["Completed"])
def test_stop_training_job_on_an_ended_job_names_its_status(served: Any, make_request: Any, status: str) -> None:
    """StopTrainingJob on a finished job is a ValidationException naming the status (as the service)."""
    served.sm.create_training_job(**make_request("finished", hps={"steps": "2"}, hook=False))
    served.client.wait("finished", timeout_s=120)
    with pytest.raises(served.sm.exceptions.ClientError) as err:
        served.sm.stop_training_job(TrainingJobName="finished")
    assert err.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": f"The request was rejected because the training job is in status {status}.",
    }
