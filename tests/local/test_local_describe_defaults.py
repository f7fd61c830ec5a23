"""DescribeTrainingJob of a local job fills what the service fills; request addresses resolve
against the caller's folder; malformed ones are refused before anything starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sagemaker_debugger_ext._exceptions import LocalJobInputError
from sagemaker_debugger_ext.local.api._describe import describe_response, response_problems
from sagemaker_debugger_ext.local.store._job_spec import resolve_request_addresses

OUT = "file:///tmp/out"


def _request(**extra: Any) -> dict[str, Any]:
    req: dict[str, Any] = {
        "TrainingJobName": "desc-job",
        "AlgorithmSpecification": {"TrainingImage": "local-image", "TrainingInputMode": "File"},
        "RoleArn": "arn:aws:iam::000000000000:role/R",
        "OutputDataConfig": {"S3OutputPath": OUT},
        "ResourceConfig": {"InstanceType": "local", "InstanceCount": 1, "VolumeSizeInGB": 30},
        "StoppingCondition": {"MaxRuntimeInSeconds": 120},
        "DebugHookConfig": {"S3OutputPath": OUT, "CollectionConfigurations": []},
        "DebugRuleConfigurations": [
            {
                "RuleConfigurationName": "LossNotDecreasing",
                "RuleEvaluatorImage": "img",
                "RuleParameters": {"rule_to_invoke": "LossNotDecreasing"},
            },
            {
                "RuleConfigurationName": "Mine",
                "RuleEvaluatorImage": "img",
                "InstanceType": "ml.m5.xlarge",
                "VolumeSizeInGB": 30,
            },
        ],
        "ProfilerRuleConfigurations": [{"RuleConfigurationName": "ProfilerReport", "RuleEvaluatorImage": "img"}],
        "ProfilerConfig": {"S3OutputPath": OUT, "DisableProfiler": False},
    }
    req.update(extra)
    return req


def test_describe_fills_service_defaults() -> None:
    """Built-in rules: VolumeSizeInGB 0 and an InstanceType; user values kept; profiler interval 500;
    ProfilingStatus; KmsKeyId; the three booleans; the hook echoed unchanged; valid against botocore."""
    request = _request()
    desc = describe_response(
        request, {"CreationTime": 1.0, "LastModifiedTime": 1.0}, region="us-west-2", output_path=OUT
    )
    builtin, custom = desc["DebugRuleConfigurations"]
    assert builtin["VolumeSizeInGB"] == 0
    assert builtin["InstanceType"] == "ml.t3.medium"
    assert (custom["VolumeSizeInGB"], custom["InstanceType"]) == (30, "ml.m5.xlarge")
    assert desc["ProfilerRuleConfigurations"][0]["VolumeSizeInGB"] == 0
    assert desc["ProfilingStatus"] == "Enabled"
    assert desc["ProfilerConfig"]["ProfilingIntervalInMilliseconds"] == 500
    assert desc["OutputDataConfig"]["KmsKeyId"] == ""
    assert desc["EnableNetworkIsolation"] is False and desc["EnableManagedSpotTraining"] is False
    assert desc["DebugHookConfig"] == request["DebugHookConfig"]
    assert response_problems("DescribeTrainingJob", desc) == []


def test_describe_profiling_status_without_profiler_config_is_disabled() -> None:
    """No ProfilerConfig in the request: ProfilingStatus is still reported (Disabled)."""
    request = _request()
    del request["ProfilerConfig"]
    desc = describe_response(request, {"CreationTime": 1.0}, region="us-west-2", output_path=OUT)
    assert desc["ProfilingStatus"] == "Disabled"
    assert "ProfilerConfig" not in desc


def test_request_addresses_resolve_against_caller_folder(tmp_path: Path) -> None:
    """Relative and absolute plain folders become absolute file:// URIs under the caller's folder."""
    request = _request(
        DebugHookConfig={"S3OutputPath": "mybucket/path"},
        TensorBoardOutputConfig={"S3OutputPath": str(tmp_path / "tb")},
    )
    request["DebugRuleConfigurations"][0]["S3OutputPath"] = "rules"
    out = resolve_request_addresses(request, tmp_path)
    assert out["DebugHookConfig"]["S3OutputPath"] == (tmp_path / "mybucket" / "path").as_uri()
    assert out["TensorBoardOutputConfig"]["S3OutputPath"] == (tmp_path / "tb").as_uri()
    assert out["DebugRuleConfigurations"][0]["S3OutputPath"] == (tmp_path / "rules").as_uri()
    assert out["OutputDataConfig"]["S3OutputPath"] == OUT
    assert request["DebugHookConfig"]["S3OutputPath"] == "mybucket/path"


@pytest.mark.parametrize(
    ("key", "value"),
    [("DebugHookConfig", "s3:/broken"), ("ProfilerConfig", "gs://bucket/x"), ("OutputDataConfig", "s3://")],
)
def test_malformed_request_address_refused_before_start(
    key: str, value: str, local_client: Any, tmp_path: Path
) -> None:
    """A malformed address in a request (e.g. from an SDK estimator) is refused; no job is created."""
    request = _request(**{key: {"S3OutputPath": value}})
    with pytest.raises(LocalJobInputError, match=f"{key}.S3OutputPath") as info:
        local_client.create_training_job(**request)
    assert repr(value) in str(info.value) and "s3://bucket/" in str(info.value)
    assert not local_client.store.exists("desc-job")
