"""One SageMaker Processing job per rule of a self-hosted job: names, requests, the manifest.

Names follow what Debugger's rule jobs were observed to use: the first 26 characters of the
training job, the rule configuration name in lower case (at most 26 characters; characters a
job name cannot hold become ``-``) and 8 random hex digits.

The image is SageMaker's own PyTorch CPU training image (``image_uris.retrieve("pytorch", ...,
version=RULE_IMAGE_VERSION)``): it is maintained by AWS in every region Debugger served, any
account can pull it without building one, and it ships Python >= 3.11 (which this package
needs) with pip and NumPy; SageMaker's scikit-learn processing image is smaller but on Python
3.10. The package is installed at start from PyPI, or from the wheel given as an input.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import Any

import attrs

from .._container_env import RULE_JOB_REQUIREMENT_ENV
from ..request._paths import artifacts_path, debugger_artifacts_path, profiler_artifacts_path, rule_output_path

__all__ = [
    "DEFAULT_RULE_INSTANCE_TYPE",
    "DEFAULT_RULE_VOLUME_GB",
    "RULE_IMAGE_VERSION",
    "RuleJob",
    "rule_image_uri",
    "rule_job_name",
    "rule_job_request",
]

RULE_IMAGE_VERSION = "2.8"
RULE_IMAGE_PY = "py312"
DEFAULT_RULE_INSTANCE_TYPE = "ml.t3.medium"  # Debugger's default for built-in rules
DEFAULT_RULE_VOLUME_GB = 30
_RULE_INPUT = "/opt/ml/processing/input/rule"
_WHEEL_INPUT = "/opt/ml/processing/input/wheel"
_RULE_OUTPUT = "/opt/ml/processing/output/rule"
_INVALID = re.compile(r"[^a-zA-Z0-9-]")
# Installs the package unless the image has it, then runs the rule job ("$@": ContainerArguments).
_BOOT = (
    'python3 -c "import sagemaker_debugger_ext" 2>/dev/null || python3 -m pip install -q '
    '"$SAGEMAKER_DEBUGGER_EXT_REQUIREMENT" && exec python3 -m sagemaker_debugger_ext.cloud rule-job "$@"'
)


def rule_job_name(job_name: str, rule_name: str, token: str | None = None) -> str:
    """``<job[:26]>-<rule lower [:26]>-<8 hex>``, as Debugger named its rule jobs."""
    rule = _INVALID.sub("-", rule_name.lower()[:26])
    return f"{job_name[:26]}-{rule}-{token or uuid.uuid4().hex[:8]}"


def rule_image_uri(region: str) -> str:
    """SageMaker's PyTorch CPU training image of :data:`RULE_IMAGE_VERSION` in ``region``."""
    from .._sdk_major import installed_sdk_major

    if installed_sdk_major() == 3:  # the SDK's offline image table: sagemaker.core's in v3
        from sagemaker.core import image_uris
    else:
        from sagemaker import image_uris
    return str(
        image_uris.retrieve(
            "pytorch",
            region,
            version=RULE_IMAGE_VERSION,
            py_version=RULE_IMAGE_PY,
            instance_type=DEFAULT_RULE_INSTANCE_TYPE,
            image_scope="training",
        )
    )


@attrs.frozen(kw_only=True)
class RuleJob:
    """One rule's Processing job: its name, kind and where its parameters and status live."""

    rule_name: str
    kind: str  # "debug" | "profiler"
    job_name: str
    parameters: dict[str, str]
    parameters_uri: str
    output_uri: str
    status_uri: str
    trial_uri: str
    instance_type: str
    volume_gb: int

    def to_manifest(self) -> dict[str, Any]:
        """The manifest entry (how ``describe()`` finds the job and its status)."""
        return {
            "RuleConfigurationName": self.rule_name,
            "Kind": self.kind,
            "ProcessingJobName": self.job_name,
            "StatusUri": self.status_uri,
            "OutputUri": self.output_uri,
        }


def plan_rule_job(
    config: Mapping[str, Any], *, kind: str, training_job: str, output_path: str, trial_base: str
) -> RuleJob:
    """A :class:`RuleJob` from one ``DebugRuleConfiguration`` / ``ProfilerRuleConfiguration``."""
    name = str(config["RuleConfigurationName"])
    output = rule_output_path(str(config.get("S3OutputPath") or output_path), training_job, name)
    trial = (debugger_artifacts_path if kind == "debug" else profiler_artifacts_path)(trial_base, training_job)
    return RuleJob(
        rule_name=name,
        kind=kind,
        job_name=rule_job_name(training_job, name),
        parameters={str(k): str(v) for k, v in (config.get("RuleParameters") or {}).items()},
        parameters_uri=artifacts_path(output_path, training_job, "debugger-self-hosted", "rules", name) + "/",
        output_uri=output,
        status_uri=f"{output}/status.json",
        trial_uri=trial,
        instance_type=str(config.get("InstanceType") or DEFAULT_RULE_INSTANCE_TYPE),
        volume_gb=int(config.get("VolumeSizeInGB") or DEFAULT_RULE_VOLUME_GB),
    )


def rule_job_request(
    rule: RuleJob,
    *,
    training_job: str,
    role: str,
    image_uri: str,
    requirement: str,
    wheel_uri: str | None,
    max_runtime_s: int,
    poll_seconds: float,
) -> dict[str, Any]:
    """The CreateProcessingJob request of ``rule``."""
    inputs = [
        {
            "InputName": "rule",
            "S3Input": {"S3Uri": rule.parameters_uri, "LocalPath": _RULE_INPUT,
                        "S3DataType": "S3Prefix", "S3InputMode": "File"},
        }
    ]  # fmt: skip
    if wheel_uri:
        inputs.append(
            {
                "InputName": "wheel",
                "S3Input": {"S3Uri": wheel_uri, "LocalPath": _WHEEL_INPUT,
                            "S3DataType": "S3Prefix", "S3InputMode": "File"},
            }
        )  # fmt: skip
    arguments = [
        "--training-job-name", training_job,
        "--trial-path", rule.trial_uri,
        "--rule-name", rule.rule_name,
        "--rule-parameters-file", f"{_RULE_INPUT}/parameters.json",
        "--output-dir", _RULE_OUTPUT,
        "--status-uri", rule.status_uri,
        "--poll-seconds", f"{poll_seconds:g}",
    ]  # fmt: skip
    return {
        "ProcessingJobName": rule.job_name,
        "RoleArn": role,
        "ProcessingResources": {
            "ClusterConfig": {"InstanceCount": 1, "InstanceType": rule.instance_type, "VolumeSizeInGB": rule.volume_gb}
        },
        "AppSpecification": {
            "ImageUri": image_uri,
            "ContainerEntrypoint": ["/bin/sh", "-c", _BOOT, "sagemaker-debugger-ext"],
            "ContainerArguments": arguments,
        },
        "ProcessingInputs": inputs,
        "ProcessingOutputConfig": {
            "Outputs": [
                {
                    "OutputName": "rule-output",
                    "S3Output": {"S3Uri": rule.output_uri, "LocalPath": _RULE_OUTPUT, "S3UploadMode": "EndOfJob"},
                }
            ]
        },
        "Environment": {RULE_JOB_REQUIREMENT_ENV: requirement},
        "StoppingCondition": {"MaxRuntimeInSeconds": max_runtime_s},
    }
