"""The SageMaker training-job API served on 127.0.0.1 (``sagemaker-debugger-ext serve``, issue 18)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sagemaker_debugger_ext.local.api._describe import response_problems
from sagemaker_debugger_ext.local.api._server import ApiServer


@pytest.fixture
def api(local_client: Any) -> Iterator[tuple[str, Any]]:
    """An API server for the test's job store; yields ``(url, boto3 sagemaker client)``."""
    server = ApiServer(local_client).start()
    client = boto3.client("sagemaker", endpoint_url=server.url, region_name="us-west-2")
    try:
        yield server.url, client
    finally:
        server.stop()


def _raw(url: str, target: str, body: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url, data=body, method="POST",
        headers={"X-Amz-Target": target, "Content-Type": "application/x-amz-json-1.1"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.slow
def test_every_operation_answers_in_the_service_shape(
    api: tuple[str, Any], local_client: Any, make_request: Any
) -> None:
    """boto3 drives a job through the server; every response validates against botocore's output shapes."""
    _, sm = api
    created = sm.create_training_job(**make_request("served-job", hps={"steps": "400", "step-seconds": "0.05"}))
    assert created["TrainingJobArn"].endswith(":training-job/served-job")
    described = sm.describe_training_job(TrainingJobName="served-job")
    assert described["TrainingJobName"] == "served-job" and described["TrainingJobStatus"] == "InProgress"
    listed = sm.list_training_jobs(NameContains="served")
    assert [s["TrainingJobName"] for s in listed["TrainingJobSummaries"]] == ["served-job"]
    updated = sm.update_training_job(
        TrainingJobName="served-job", ProfilerConfig={"ProfilingIntervalInMilliseconds": 500}
    )
    assert updated["TrainingJobArn"] == created["TrainingJobArn"]
    sm.stop_training_job(TrainingJobName="served-job")
    final = local_client.wait("served-job", timeout_s=120)
    assert final["TrainingJobStatus"] == "Stopped"
    described = sm.describe_training_job(TrainingJobName="served-job")
    assert described["TrainingJobStatus"] == "Stopped"
    assert described["ProfilerConfig"]["ProfilingIntervalInMilliseconds"] == 500
    for operation, response in [
        ("CreateTrainingJob", created),
        ("DescribeTrainingJob", described),
        ("ListTrainingJobs", listed),
        ("UpdateTrainingJob", updated),
    ]:
        response = {k: v for k, v in response.items() if k != "ResponseMetadata"}
        assert response_problems(operation, response) == [], operation


def test_errors_have_the_service_codes(api: tuple[str, Any]) -> None:
    """Unknown jobs, invalid requests and unknown operations get the service's error shape and codes."""
    url, sm = api
    with pytest.raises(ClientError) as missing:
        sm.describe_training_job(TrainingJobName="no-such-job")
    assert missing.value.response["Error"]["Code"] == "ValidationException"  # as the service: boto3 issue 2808
    assert missing.value.response["Error"]["Message"] == "Requested resource not found."
    assert missing.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    with pytest.raises(ClientError) as stop_missing:
        sm.stop_training_job(TrainingJobName="no-such-job")
    assert stop_missing.value.response["Error"]["Code"] == "ValidationException"
    status, body = _raw(url, "SageMaker.DescribeTrainingJob", b"{}")
    assert status == 400 and body["__type"] == "ValidationException"
    assert "TrainingJobName" in body["message"]
    status, body = _raw(url, "SageMaker.DescribeTrainingJob", b'{"TrainingJobName": 5}')
    assert status == 400 and body["__type"] == "ValidationException" and "TrainingJobName" in body["message"]
    status, body = _raw(url, "SageMaker.CreateEndpoint", b"{}")
    assert status == 400 and body["__type"] == "UnknownOperationException"
    status, body = _raw(url, "SageMaker.ListTrainingJobs", b"not json")
    assert status == 400 and body["__type"] == "SerializationException"
    with pytest.raises(ClientError) as bad:
        sm.create_training_job(
            TrainingJobName="bad-job",
            AlgorithmSpecification={"TrainingImage": "local", "TrainingInputMode": "File"},
            RoleArn="arn:aws:iam::123456789012:role/local",
            OutputDataConfig={"S3OutputPath": "s3://bucket/out"},
            ResourceConfig={"InstanceType": "local", "InstanceCount": 1, "VolumeSizeInGB": 1},
            StoppingCondition={"MaxRuntimeInSeconds": 60},
        )
    assert bad.value.response["Error"]["Code"] == "ValidationException"
    assert "sagemaker_program" in bad.value.response["Error"]["Message"]


@pytest.mark.slow
def test_serve_command_and_the_aws_cli(local_client: Any, make_request: Any, tmp_path: Path) -> None:
    """``serve --port 0`` on loopback; ``aws sagemaker list-training-jobs --endpoint-url`` lists local jobs."""
    local_client.create_training_job(**make_request("cli-listed", hps={"steps": "2"}))
    local_client.wait("cli-listed", timeout_s=120)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sagemaker_debugger_ext.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=dict(os.environ),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("serving the SageMaker training-job API on http://127.0.0.1:"), first
        url = first.rsplit(" ", 1)[-1].strip()
        sm = boto3.client("sagemaker", endpoint_url=url, region_name="us-east-1")
        names = [s["TrainingJobName"] for s in sm.list_training_jobs()["TrainingJobSummaries"]]
        assert "cli-listed" in names
        aws = shutil.which("aws")
        if aws is None:
            pytest.skip("the AWS CLI is not installed here; boto3 was checked above")
        env = {**os.environ, "AWS_PAGER": ""}
        out = subprocess.run(
            [aws, "sagemaker", "list-training-jobs", "--endpoint-url", url, "--region", "us-east-1", "--output", "json"],
            capture_output=True, text=True, timeout=120, env=env, check=True,
        )  # fmt: skip
        summaries = json.loads(out.stdout)["TrainingJobSummaries"]
        assert "cli-listed" in [s["TrainingJobName"] for s in summaries]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_rejects_a_bad_port() -> None:
    """A port outside 0-65535 is an error naming the option, before anything binds."""
    out = subprocess.run(
        [sys.executable, "-m", "sagemaker_debugger_ext.cli", "serve", "--port", "70000"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode != 0
    assert "'--port' must be an integer from 0 to 65535 (got 70000)" in out.stderr
