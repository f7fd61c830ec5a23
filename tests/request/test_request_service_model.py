"""Validation of a whole CreateTrainingJob request against botocore's service model."""

from __future__ import annotations

from typing import Any

import pytest

from sagemaker_debugger_ext import request
from sagemaker_debugger_ext._exceptions import RequestValidationError

VALID: dict[str, Any] = {
    "TrainingJobName": "job-1",
    "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
    "AlgorithmSpecification": {"TrainingImage": "img:latest", "TrainingInputMode": "File"},
    "OutputDataConfig": {"S3OutputPath": "s3://b/"},
    "ResourceConfig": {"InstanceType": "ml.m5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 30},
    "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
    "Tags": [{"Key": "team é", "Value": "ml:1"}],
}


def test_valid_request_passes() -> None:
    """A valid request (unicode tag, \\p{L} pattern) raises nothing."""
    request.validate_create_training_job(VALID)


def test_every_violation_is_listed_with_its_path() -> None:
    """Missing, wrong-typed, too-long, pattern, enum and list-limit problems are all reported."""
    bad = dict(VALID)
    del bad["RoleArn"]
    bad["TrainingJobName"] = "bad_name"
    bad["ResourceConfig"] = {"InstanceType": "ml.m5.xlarge", "InstanceCount": "1", "VolumeSizeInGB": 30}
    bad["DebugHookConfig"] = {"S3OutputPath": "s3://b/", "HookParameters": {"k": "v" * 300}}
    bad["DebugRuleConfigurations"] = [{"RuleConfigurationName": f"R{i}", "RuleEvaluatorImage": "i"} for i in range(21)]
    bad["ProfilerRuleConfigurations"] = [
        {"RuleConfigurationName": "P", "RuleEvaluatorImage": "i", "InstanceType": "ml.bogus"}
    ]
    bad["Unknown"] = 1
    with pytest.raises(RequestValidationError) as info:
        request.validate_create_training_job(bad)
    paths = {path for path, _ in info.value.problems}
    assert paths == {
        "RoleArn",
        "TrainingJobName",
        "ResourceConfig.InstanceCount",
        "DebugHookConfig.HookParameters['k']",
        "DebugRuleConfigurations",
        "ProfilerRuleConfigurations[0].InstanceType",
        "Unknown",
    }
    assert "at most 20 items" in str(info.value)


def test_local_uris_allowed_only_in_local_mode() -> None:
    """file:// output paths fail the S3 pattern unless allow_local_uris is set."""
    local = dict(VALID, OutputDataConfig={"S3OutputPath": "file:///tmp/out/"})
    with pytest.raises(RequestValidationError, match="OutputDataConfig.S3OutputPath"):
        request.validate_create_training_job(local)
    request.validate_create_training_job(local, allow_local_uris=True)
