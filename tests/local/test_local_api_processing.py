"""``serve``'s Processing operations and ml.* training jobs, with S3 on moto's server (issue 30)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from polling import wait_until

from sagemaker_debugger_ext.local.api._describe import response_problems

_SCRIPT = """
import os, pathlib, sys
src = pathlib.Path(os.environ["DATA_DIR"]) / "numbers.txt"
total = sum(int(x) for x in src.read_text().split())
out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
(out / "total.txt").write_text(f"{total} {os.environ['GREETING']}")
if os.environ.get("FAIL"):
    raise RuntimeError("the numbers do not add up")
if os.environ.get("HANG"):
    import time
    time.sleep(600)
"""


def _request(bucket: str, name: str, **env: str) -> dict[str, Any]:
    return {
        "ProcessingJobName": name,
        "ProcessingResources": {
            "ClusterConfig": {"InstanceCount": 1, "InstanceType": "ml.t3.medium", "VolumeSizeInGB": 10}
        },
        "AppSpecification": {
            "ImageUri": "123456789012.dkr.ecr.us-west-2.amazonaws.com/any:latest",
            "ContainerEntrypoint": ["python3", "/opt/ml/processing/input/code/job.py"],
            "ContainerArguments": ["/opt/ml/processing/output/result"],
        },
        "ProcessingInputs": [
            {
                "InputName": "code",
                "S3Input": {
                    "S3Uri": f"s3://{bucket}/code",
                    "LocalPath": "/opt/ml/processing/input/code",
                    "S3DataType": "S3Prefix",
                    "S3InputMode": "File",
                },
            },
            {
                "InputName": "data",
                "S3Input": {
                    "S3Uri": f"s3://{bucket}/data/numbers.txt",
                    "LocalPath": "/opt/ml/processing/input/data",
                    "S3DataType": "S3Prefix",
                    "S3InputMode": "File",
                },
            },
        ],
        "ProcessingOutputConfig": {
            "Outputs": [
                {
                    "OutputName": "result",
                    "S3Output": {
                        "S3Uri": f"s3://{bucket}/result/{name}",
                        "LocalPath": "/opt/ml/processing/output/result",
                        "S3UploadMode": "EndOfJob",
                    },
                }
            ]
        },
        "Environment": {"GREETING": "hello", "DATA_DIR": "/opt/ml/processing/input/data", **env},
        "RoleArn": "arn:aws:iam::123456789012:role/processing",
        "StoppingCondition": {"MaxRuntimeInSeconds": 300},
    }


def _upload_inputs(served: Any) -> None:
    served.s3.put_object(Bucket=served.bucket, Key="code/job.py", Body=_SCRIPT.encode())
    served.s3.put_object(Bucket=served.bucket, Key="data/numbers.txt", Body=b"1 2 3 4")


def _wait(served: Any, name: str) -> dict[str, Any]:
    return wait_until(
        lambda: (d := served.sm.describe_processing_job(ProcessingJobName=name))["ProcessingJobStatus"]
        in ("Completed", "Failed", "Stopped") and d,
        timeout_s=120, what=f"processing job {name}",
    )  # fmt: skip


def _valid(operation: str, response: dict[str, Any]) -> None:
    body = {k: v for k, v in response.items() if k != "ResponseMetadata"}
    assert response_problems(operation, body) == [], operation


def test_processing_job_runs_with_inputs_outputs_and_environment(served: Any) -> None:
    """Inputs downloaded, /opt/ml paths mapped, Environment passed, outputs uploaded; shapes valid."""
    _upload_inputs(served)
    created = served.sm.create_processing_job(**_request(served.bucket, "sum-job"))
    assert created["ProcessingJobArn"] == "arn:aws:sagemaker:us-west-2:000000000000:processing-job/sum-job"
    _valid("CreateProcessingJob", created)
    final = _wait(served, "sum-job")
    assert final["ProcessingJobStatus"] == "Completed", final.get("FailureReason")
    assert final["AppSpecification"]["ContainerEntrypoint"][0] == "python3"
    assert final["ProcessingResources"]["ClusterConfig"]["InstanceType"] == "ml.t3.medium"
    assert final["ProcessingEndTime"] >= final["ProcessingStartTime"] >= final["CreationTime"]
    _valid("DescribeProcessingJob", final)
    body = served.s3.get_object(Bucket=served.bucket, Key="result/sum-job/total.txt")["Body"].read()
    assert body == b"10 hello"
    listed = served.sm.list_processing_jobs(NameContains="sum-")
    assert [s["ProcessingJobName"] for s in listed["ProcessingJobSummaries"]] == ["sum-job"]
    assert listed["ProcessingJobSummaries"][0]["ProcessingJobStatus"] == "Completed"
    _valid("ListProcessingJobs", listed)
    assert served.sm.list_processing_jobs(StatusEquals="Failed")["ProcessingJobSummaries"] == []


def test_failing_processing_job_says_why_and_keeps_its_outputs(served: Any) -> None:
    """A non-zero exit is Failed with the error line; what it wrote is uploaded all the same."""
    _upload_inputs(served)
    served.sm.create_processing_job(**_request(served.bucket, "bad-sum", FAIL="1"))
    final = _wait(served, "bad-sum")
    assert final["ProcessingJobStatus"] == "Failed"
    assert final["FailureReason"].startswith("AlgorithmError: RuntimeError: the numbers do not add up")
    assert final["FailureReason"].endswith("exit code: 1")
    body = served.s3.get_object(Bucket=served.bucket, Key="result/bad-sum/total.txt")["Body"].read()
    assert body == b"10 hello"


def test_missing_input_fails_before_the_command(served: Any) -> None:
    """An input that is not in S3 is a ClientError FailureReason naming the download."""
    served.sm.create_processing_job(**_request(served.bucket, "no-inputs"))
    final = _wait(served, "no-inputs")
    assert final["ProcessingJobStatus"] == "Failed"
    assert final["FailureReason"].startswith("ClientError: failed to download the ProcessingInputs")


def test_stop_processing_job(served: Any) -> None:
    """StopProcessingJob: Stopping while it ends, then Stopped; a second stop is a ValidationException."""
    _upload_inputs(served)
    served.sm.create_processing_job(**_request(served.bucket, "hang-job", HANG="1"))
    wait_until(
        lambda: served.s3.list_objects_v2(Bucket=served.bucket, Prefix="result/hang-job").get("KeyCount", 0) == 0
        and (served.client.store.root / "processing-jobs/hang-job/container/opt/ml/processing/output/result/total.txt").exists(),
        timeout_s=60, what="the command to start",
    )  # fmt: skip
    served.sm.stop_processing_job(ProcessingJobName="hang-job")
    final = _wait(served, "hang-job")
    assert final["ProcessingJobStatus"] == "Stopped"
    with pytest.raises(served.sm.exceptions.ClientError) as again:
        served.sm.stop_processing_job(ProcessingJobName="hang-job")
    assert again.value.response["Error"]["Code"] == "ValidationException"
    assert again.value.response["Error"]["Message"] == (
        "The request was rejected because the processing job is in status Stopped."
    )


@pytest.mark.skipif(sys.platform != "linux", reason="local jobs need Linux process groups")
def test_ml_instance_type_training_job_runs_here_and_is_recorded(served: Any, make_request: Any) -> None:
    """CreateTrainingJob with ml.m5.xlarge runs on this machine; describe shows the type; shapes valid."""
    request = make_request("ml-typed", hps={"steps": "3"}, output=f"s3://{served.bucket}/out", hook=False)
    request["ResourceConfig"]["InstanceType"] = "ml.m5.xlarge"
    created = served.sm.create_training_job(**request)
    _valid("CreateTrainingJob", created)
    final = served.client.wait("ml-typed", timeout_s=120)
    assert final["TrainingJobStatus"] == "Completed", final.get("FailureReason")
    described = served.sm.describe_training_job(TrainingJobName="ml-typed")
    assert described["ResourceConfig"]["InstanceType"] == "ml.m5.xlarge"
    _valid("DescribeTrainingJob", described)
    keys = served.s3.list_objects_v2(Bucket=served.bucket, Prefix="out/ml-typed/")["Contents"]
    assert any(k["Key"].endswith("output/model.tar.gz") for k in keys)
