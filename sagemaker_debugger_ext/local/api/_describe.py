"""DescribeTrainingJob / ListTrainingJobs responses of a local job, from its request and state."""

from __future__ import annotations

import datetime as _dt
import hashlib
from collections.abc import Mapping
from typing import Any

from ...request._paths import artifacts_path
from ...request._service_model import validate_request
from ...rule_contract._status import EvaluationStatus
from ..store._job_spec import profiler_enabled

__all__ = ["describe_response", "response_problems", "rule_job_arn", "summary_response", "training_job_arn"]

_REQUEST_KEYS = (
    "AlgorithmSpecification",
    "RoleArn",
    "InputDataConfig",
    "OutputDataConfig",
    "ResourceConfig",
    "VpcConfig",
    "EnableNetworkIsolation",
    "EnableInterContainerTrafficEncryption",
    "EnableManagedSpotTraining",
    "CheckpointConfig",
    "DebugHookConfig",
    "ExperimentConfig",
    "DebugRuleConfigurations",
    "TensorBoardOutputConfig",
    "ProfilerConfig",
    "ProfilerRuleConfigurations",
    "Environment",
    "RetryStrategy",
    "RemoteDebugConfig",
    "InfraCheckConfig",
)


def _ts(value: float | None) -> _dt.datetime | None:
    if value is None:
        return None
    return _dt.datetime.fromtimestamp(float(value), tz=_dt.UTC)


def rule_job_arn(region: str, job_name: str, rule_name: str) -> str:
    """Local ARN of a rule's evaluation ("processing") job, within the API's patterns."""
    digest = hashlib.sha1(f"{job_name}/{rule_name}".encode()).hexdigest()[:8]
    stem = f"{job_name[:30]}-{rule_name[:23]}".rstrip("-")
    return f"arn:aws:sagemaker:{region}:000000000000:processing-job/{stem}-{digest}".lower()


def training_job_arn(region: str, name: str) -> str:
    """Local ARN of a training job (account 000000000000)."""
    return f"arn:aws:sagemaker:{region}:000000000000:training-job/{name.lower()}"


def _rule_statuses(
    configs: list[Mapping[str, Any]], state: Mapping[str, Any], *, region: str, job: str
) -> list[dict[str, Any]]:
    out = []
    reported = state.get("Rules") or {}
    for cfg in configs:
        name = str(cfg["RuleConfigurationName"])
        entry = dict(
            reported.get(name)
            or {
                "RuleConfigurationName": name,
                "RuleEvaluationJobArn": rule_job_arn(region, job, name),
                "RuleEvaluationStatus": EvaluationStatus.IN_PROGRESS.value,
                "LastModifiedTime": state.get("CreationTime"),
            }
        )
        entry["LastModifiedTime"] = _ts(entry.get("LastModifiedTime"))
        out.append({k: v for k, v in entry.items() if v is not None})
    return out


def describe_response(
    request: Mapping[str, Any],
    state: Mapping[str, Any],
    *,
    region: str,
    output_path: str,
    updates: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A DescribeTrainingJob response (shape of botocore's DescribeTrainingJobResponse)."""
    name = str(request["TrainingJobName"])
    merged = {**request, **(updates or {})}
    out: dict[str, Any] = {
        "TrainingJobName": name,
        "TrainingJobArn": training_job_arn(region, name),
        "ModelArtifacts": {"S3ModelArtifacts": artifacts_path(output_path, name, "output", "model.tar.gz")},
        "TrainingJobStatus": state.get("TrainingJobStatus", "InProgress"),
        "SecondaryStatus": state.get("SecondaryStatus", "Starting"),
        "HyperParameters": dict(request.get("HyperParameters") or {}),
        "StoppingCondition": dict(request.get("StoppingCondition") or {"MaxRuntimeInSeconds": 86400}),
        "CreationTime": _ts(state.get("CreationTime")),
        "LastModifiedTime": _ts(state.get("LastModifiedTime")),
    }
    for key in _REQUEST_KEYS:
        if merged.get(key) is not None:
            out[key] = merged[key]
    if "OutputDataConfig" in out and not out["OutputDataConfig"].get("S3OutputPath"):
        out["OutputDataConfig"] = {**out["OutputDataConfig"], "S3OutputPath": output_path}
    if state.get("FailureReason"):
        out["FailureReason"] = str(state["FailureReason"])[:1024]
    start, end = state.get("TrainingStartTime"), state.get("TrainingEndTime")
    if start is not None:
        out["TrainingStartTime"] = _ts(start)
    if end is not None:
        out["TrainingEndTime"] = _ts(end)
        seconds = max(1, round(float(end) - float(start if start is not None else end)))
        out["TrainingTimeInSeconds"] = seconds
        out["BillableTimeInSeconds"] = seconds
    out["SecondaryStatusTransitions"] = [
        {k: (_ts(v) if k.endswith("Time") else v) for k, v in t.items()}
        for t in state.get("SecondaryStatusTransitions") or []
    ]
    if merged.get("DebugRuleConfigurations"):
        out["DebugRuleEvaluationStatuses"] = _rule_statuses(
            merged["DebugRuleConfigurations"], state, region=region, job=name
        )
    if merged.get("ProfilerRuleConfigurations"):
        out["ProfilerRuleEvaluationStatuses"] = _rule_statuses(
            merged["ProfilerRuleConfigurations"], state, region=region, job=name
        )
    out["ProfilingStatus"] = (
        "Enabled" if merged.get("ProfilerConfig") is not None and profiler_enabled(merged) else "Disabled"
    )
    return _service_defaults(out)


RULE_INSTANCE_TYPE = "ml.t3.medium"
PROFILING_INTERVAL_MS = 500


def _service_defaults(out: dict[str, Any]) -> dict[str, Any]:
    """Fill what the service fills in a DescribeTrainingJob answer when the request left it out.

    Rules get ``InstanceType`` and ``VolumeSizeInGB: 0`` (the SDK's integration test asserts
    ``VolumeSizeInGB == 0`` for built-in rules), an enabled ProfilerConfig its 500 ms
    interval, OutputDataConfig an empty ``KmsKeyId`` (the SDK's ``attach`` reads it) and the
    three booleans their ``False``. ``DebugHookConfig`` is echoed unchanged: the SDK's
    integration test asserts it equals the request (no ``LocalPath`` added).
    """
    for key in ("DebugRuleConfigurations", "ProfilerRuleConfigurations"):
        if out.get(key):
            out[key] = [{"InstanceType": RULE_INSTANCE_TYPE, "VolumeSizeInGB": 0, **cfg} for cfg in out[key]]
    profiler = out.get("ProfilerConfig")
    if profiler is not None and not profiler.get("DisableProfiler"):
        out["ProfilerConfig"] = {"ProfilingIntervalInMilliseconds": PROFILING_INTERVAL_MS, **profiler}
    if "OutputDataConfig" in out:
        out["OutputDataConfig"] = {"KmsKeyId": "", **out["OutputDataConfig"]}
    for flag in ("EnableNetworkIsolation", "EnableInterContainerTrafficEncryption", "EnableManagedSpotTraining"):
        out.setdefault(flag, False)
    return out


def summary_response(description: Mapping[str, Any]) -> dict[str, Any]:
    """One ``TrainingJobSummaries`` entry of ListTrainingJobs."""
    keys = (
        "TrainingJobName",
        "TrainingJobArn",
        "CreationTime",
        "TrainingEndTime",
        "LastModifiedTime",
        "TrainingJobStatus",
        "SecondaryStatus",
    )
    return {k: description[k] for k in keys if k in description}


def response_problems(operation: str, response: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Where ``response`` violates botocore's output shape of ``operation``.

    Local-mode values the service never returns but the SDK sends in local mode are
    accepted: ``file://`` / empty output URIs and the ``local`` / ``local_gpu`` instance
    types.
    """
    import botocore.session  # botocore's models: loaded on first use

    shape = botocore.session.get_session().get_service_model("sagemaker").operation_model(operation).output_shape
    problems = validate_request(shape, dict(response), allow_local_uris=True)
    local_types = ("'local'", "'local_gpu'")
    return [
        (path, why)
        for path, why in problems
        if not (path.endswith("InstanceType") and why.endswith(tuple(f"(got {t})" for t in local_types)))
    ]
