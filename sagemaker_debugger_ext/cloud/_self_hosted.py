"""The self-hosted backend around one CreateTrainingJob: request in, rule jobs out, statuses back.

:func:`prepare_train_args` turns the SDK's ``Session.train`` arguments into a request without
any Debugger or profiler field: the hook's and the profiler's configs go into the source bundle
(``_bundle``), this package into its ``requirements.txt`` (or a wheel channel), and each rule
into a :class:`~._rule_jobs.RuleJob`, listed in a manifest at
``<output>/<job>/debugger-self-hosted/manifest.json``. :func:`start_rule_jobs` creates their
Processing jobs right after CreateTrainingJob. :func:`with_rule_statuses` adds the rules'
statuses to a DescribeTrainingJob response in the service's shape, from the manifest, each rule
job's status file and DescribeProcessingJob, so ``describe()`` and ``rule_job_summary()`` work
from any process that can read the output path.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from .._exceptions import ConfigValueError, StorageError, field_error_message
from ..request._paths import artifacts_path
from ..rules._fit_summary import fit_summary
from ..storage import open_storage
from ._bundle import LAUNCH_SCRIPT, SELF_HOSTED_FOLDER, WHEEL_CHANNEL, add_to_bundle, package_requirement
from ._rule_jobs import RuleJob, plan_rule_job, rule_image_uri, rule_job_request

__all__ = [
    "DROPPED_ARGUMENTS",
    "SelfHostedPlan",
    "bundle_config",
    "check_output_path",
    "hook_and_profiler",
    "plan_self_hosted",
    "prepare_train_args",
    "self_hosted_fit_summary",
    "service_shaped_description",
    "start_rule_jobs",
    "with_rule_statuses",
]

# the SDK v2 ``Session.train`` arguments that carry the Debugger keys (the request's names)
_TRAIN_ARGUMENTS = {"debugger_hook_config": "DebugHookConfig", "debugger_rule_configs": "DebugRuleConfigurations",
                    "profiler_config": "ProfilerConfig", "profiler_rule_configs": "ProfilerRuleConfigurations"}  # fmt: skip
DROPPED_ARGUMENTS = tuple(_TRAIN_ARGUMENTS)
_PROGRAM, _SUBMIT = "sagemaker_program", "sagemaker_submit_directory"
# distributions whose runner is mpirun (the launcher is per host, or per torchrun rank: _host_group)
_MPI_HYPERPARAMETERS = (
    "sagemaker_mpi_enabled",
    "sagemaker_distributed_dataparallel_enabled",
    "sagemaker_pytorch_ddp_enabled",
)
_RULE_JOB_SLACK_S = 3600
_MAX_PROCESSING_S = 432000
_RULE_WAIT_S = 900.0  # how long fit() waits for the rules' final evaluations after training


@attrs.frozen(kw_only=True)
class SelfHostedPlan:
    """What to start after CreateTrainingJob."""

    training_job: str
    role: str
    rules: tuple[RuleJob, ...]
    requirement: str
    wheel_uri: str | None
    max_runtime_s: int
    poll_seconds: float = 10.0


def _decode(value: Any) -> str:
    try:
        decoded = json.loads(value)
    except (TypeError, ValueError):
        return str(value)
    return decoded if isinstance(decoded, str) else str(value)


def _encoded_like(original: Any, value: str) -> str:
    return json.dumps(value) if isinstance(original, str) and original.startswith('"') else value


def _split(uri: str) -> tuple[str, str]:
    parent, _, name = uri.rstrip("/").rpartition("/")
    return parent, name


def check_output_path(output: str, field: str = "output_path") -> str:
    """``output`` if it is on S3 (the trial, the manifest and the rule output live there).

    Raises:
        ConfigValueError: naming ``field``, the value and what is allowed.
    """
    if not output.startswith("s3://"):
        msg = field_error_message(field, "an s3:// URI with the self-hosted Debugger backend", output)
        raise ConfigValueError(msg, field=field, value=output)
    return output


def bundle_config(entry_point: str, job: str | None, hook: Any, profiler: Any) -> dict[str, Any]:
    """The ``.sagemaker-debugger-ext/config.json`` the launcher reads (``job`` ``None``: from the container)."""
    return {"EntryPoint": entry_point, "TrainingJobName": job, "DebugHookConfig": hook, "ProfilerConfig": profiler}


def hook_and_profiler(keys: Mapping[str, Any]) -> tuple[Any, Any]:
    """The ``DebugHookConfig`` and the enabled ``ProfilerConfig`` (else ``None``) of Debugger keys."""
    profiler = keys.get("ProfilerConfig") or None
    if profiler is not None and profiler.get("DisableProfiler"):
        profiler = None
    return keys.get("DebugHookConfig") or None, profiler


def plan_self_hosted(
    *,
    job: str,
    output: str,
    role: str,
    keys: Mapping[str, Any],
    max_runtime_s: int,
    s3_client: Any,
    version: str,
    wheel: str | Path | None = None,
    poll_seconds: float = 10.0,
    upload: bool = True,
) -> tuple[SelfHostedPlan, dict[str, Any] | None]:
    """The rule jobs of job ``job`` and the wheel channel to add to its request (``None`` without a wheel).

    ``keys`` are the Debugger keys the service backend would send (PascalCase). Uploads the
    wheel (if any), each rule's parameters and the manifest (nothing with ``upload=False``).
    """
    hook, profiler = hook_and_profiler(keys)
    base = artifacts_path(output, job, SELF_HOSTED_FOLDER)
    wheel_uri = wheel_name = channel = None
    if wheel is not None:
        wheel_path = Path(wheel)
        wheel_name = wheel_path.name
        if upload:
            open_storage(base, client=s3_client).upload_file(wheel_path, f"wheel/{wheel_name}")
        wheel_uri = f"{base}/wheel/"
        channel = {"ChannelName": WHEEL_CHANNEL, "DataSource": {"S3DataSource": {
            "S3DataType": "S3Prefix", "S3Uri": wheel_uri, "S3DataDistributionType": "FullyReplicated"}}}  # fmt: skip
    rules = []
    for key, kind, trial in (
        ("DebugRuleConfigurations", "debug", (hook or {}).get("S3OutputPath") or output),
        ("ProfilerRuleConfigurations", "profiler", (profiler or {}).get("S3OutputPath") or output),
    ):
        for cfg in keys.get(key) or []:
            rule = plan_rule_job(cfg, kind=kind, training_job=job, output_path=output, trial_base=str(trial))
            if upload:
                open_storage(rule.parameters_uri, client=s3_client).write_bytes(
                    "parameters.json", json.dumps(rule.parameters, sort_keys=True).encode()
                )
            rules.append(rule)
    manifest = {"Rules": [r.to_manifest() for r in rules], "DebugHookConfig": hook, "ProfilerConfig": profiler}
    if upload:
        open_storage(base, client=s3_client).write_bytes("manifest.json", json.dumps(manifest, indent=1).encode())
    plan = SelfHostedPlan(
        training_job=job,
        role=role,
        rules=tuple(rules),
        requirement=(f"/opt/ml/processing/input/wheel/{wheel_name}" if wheel_name else package_requirement(version)),
        wheel_uri=wheel_uri,
        max_runtime_s=min(max_runtime_s + _RULE_JOB_SLACK_S, _MAX_PROCESSING_S),
        poll_seconds=poll_seconds,
    )
    return plan, channel


def prepare_train_args(
    train_args: Mapping[str, Any],
    *,
    s3_client: Any,
    version: str,
    wheel: str | Path | None = None,
    poll_seconds: float = 10.0,
    upload: bool = True,
) -> tuple[dict[str, Any], SelfHostedPlan]:
    """``Session.train`` arguments without Debugger fields, and the rule jobs to start.

    Uploads the new source bundle, the rules' parameters, the manifest and the wheel (if any);
    with ``upload=False`` nothing is read or written and the arguments are the same (what
    ``Estimator.training_job_request()`` shows).

    Raises:
        ConfigValueError: no entry point (the hook's config travels in the source bundle), an
            MPI distribution, or an output path that is not on S3.
    """
    args = copy.deepcopy(dict(train_args))
    job = str(args["job_name"])
    output = check_output_path(str((args.get("output_config") or {}).get("S3OutputPath") or ""))
    hps = dict(args.get("hyperparameters") or {})
    if _PROGRAM not in hps or _SUBMIT not in hps:
        msg = field_error_message(
            "entry_point",
            "set with debugger_backend='self-hosted' (the hook's config travels in the source bundle)",
            None,
        )
        raise ConfigValueError(msg, field="entry_point", value=None)
    for hp in _MPI_HYPERPARAMETERS:
        if _decode(hps.get(hp, "false")).lower() == "true":
            msg = field_error_message(
                "distribution",
                "none, torch_distributed, parameter_server or multi_worker_mirrored_strategy with "
                f"debugger_backend='self-hosted' ({hp} is true: mpirun starts the entry point under mpi4py "
                "in each rank's own process, where the launcher cannot run it in a process of its own)",
                hp,
            )
            raise ConfigValueError(msg, field="distribution", value=hp)
    keys = {name: args.get(argument) for argument, name in _TRAIN_ARGUMENTS.items()}
    plan, channel = plan_self_hosted(
        job=job,
        output=output,
        role=str(args.get("role") or ""),
        keys=keys,
        max_runtime_s=int((args.get("stop_condition") or {}).get("MaxRuntimeInSeconds") or 86400),
        s3_client=s3_client,
        version=version,
        wheel=wheel,
        poll_seconds=poll_seconds,
        upload=upload,
    )
    if channel is not None:
        args["input_config"] = [*(args.get("input_config") or []), channel]
    submit = _decode(hps[_SUBMIT])
    parent, name = _split(submit)
    hook, profiler = hook_and_profiler(keys)
    base = artifacts_path(output, job, SELF_HOSTED_FOLDER)
    if upload:
        original = open_storage(parent, client=s3_client).read(name) if submit.startswith("s3://") else None
        open_storage(base, client=s3_client).write_bytes(
            "sourcedir.tar.gz",
            add_to_bundle(
                original,
                config=bundle_config(_decode(hps[_PROGRAM]), job, hook, profiler),
                requirement=package_requirement(version, Path(wheel).name if wheel is not None else None),
            ),
        )
    hps[_SUBMIT] = _encoded_like(hps[_SUBMIT], f"{base}/sourcedir.tar.gz")
    hps[_PROGRAM] = _encoded_like(hps[_PROGRAM], LAUNCH_SCRIPT)
    args["hyperparameters"] = hps
    for key in DROPPED_ARGUMENTS:
        args.pop(key, None)
    return args, plan


def start_rule_jobs(
    sagemaker_client: Any, plan: SelfHostedPlan, *, region: str, image_uri: str | None = None
) -> list[str]:
    """CreateProcessingJob for every rule of ``plan``; returns their ARNs."""
    image = image_uri or rule_image_uri(region)
    arns = []
    for rule in plan.rules:
        request = rule_job_request(
            rule,
            training_job=plan.training_job,
            role=plan.role,
            image_uri=image,
            requirement=plan.requirement,
            wheel_uri=plan.wheel_uri,
            max_runtime_s=plan.max_runtime_s,
            poll_seconds=plan.poll_seconds,
        )
        arns.append(str(sagemaker_client.create_processing_job(**request)["ProcessingJobArn"]))
    return arns


def _read_json(uri: str, s3_client: Any) -> Any:
    parent, name = _split(uri)
    try:
        return json.loads(open_storage(parent, client=s3_client).read(name))
    except (StorageError, ValueError):
        return None


def _status(entry: Mapping[str, Any], sagemaker_client: Any, s3_client: Any) -> dict[str, Any]:
    from botocore.exceptions import ClientError

    name = str(entry["ProcessingJobName"])
    try:
        job = sagemaker_client.describe_processing_job(ProcessingJobName=name)
    except ClientError:
        job = {}
    record = _read_json(str(entry["StatusUri"]), s3_client) or {}
    status = str(record.get("RuleEvaluationStatus") or "InProgress")
    details = str(record.get("StatusDetails") or "")
    processing = job.get("ProcessingJobStatus")
    if status in ("InProgress", "Stopping") and processing in ("Failed", "Stopped"):
        status = "Error" if processing == "Failed" else "Stopped"
        details = str(job.get("FailureReason") or job.get("ExitMessage") or f"the rule job ended {processing}")
    out: dict[str, Any] = {
        "RuleConfigurationName": str(entry["RuleConfigurationName"]),
        "RuleEvaluationJobArn": str(job.get("ProcessingJobArn") or ""),
        "RuleEvaluationStatus": status,
    }
    if details:
        out["StatusDetails"] = details[:1024]
    if record.get("LastModifiedTime") or job.get("LastModifiedTime"):
        out["LastModifiedTime"] = job.get("LastModifiedTime") or record.get("LastModifiedTime")
    if not out["RuleEvaluationJobArn"]:
        del out["RuleEvaluationJobArn"]
    return out


def _manifest(description: Mapping[str, Any], s3_client: Any) -> dict[str, Any] | None:
    """The self-hosted manifest of the described job, ``None`` for a job without one."""
    output = str((description.get("OutputDataConfig") or {}).get("S3OutputPath") or "")
    job = str(description.get("TrainingJobName") or "")
    if not output.startswith("s3://") or not job:
        return None
    manifest = _read_json(artifacts_path(output, job, SELF_HOSTED_FOLDER, "manifest.json"), s3_client)
    return manifest if isinstance(manifest, dict) else None


def with_rule_statuses(description: Mapping[str, Any], *, sagemaker_client: Any, s3_client: Any) -> dict[str, Any]:
    """``description`` with the self-hosted rules' statuses (unchanged for a job without them)."""
    out = dict(description)
    manifest = _manifest(description, s3_client)
    if manifest is None:
        return out
    for entry in manifest.get("Rules") or []:
        key = "DebugRuleEvaluationStatuses" if entry.get("Kind") == "debug" else "ProfilerRuleEvaluationStatuses"
        present = {s.get("RuleConfigurationName") for s in out.get(key) or []}
        if entry.get("RuleConfigurationName") not in present:  # merged once, however many layers ask
            out[key] = [*(out.get(key) or []), _status(entry, sagemaker_client, s3_client)]
    return out


def self_hosted_fit_summary(
    job_name: str, *, sagemaker_client: Any, s3_client: Any, poll_s: float = 5.0, timeout_s: float = _RULE_WAIT_S
) -> str | None:
    """The ``fit()`` summary of a self-hosted job (local mode's), ``None`` for a job without rule jobs.

    Waits, up to ``timeout_s``, for the rules' final evaluations (every status past ``InProgress``)
    once the training job has ended; the summary then shows each rule's status and details, and
    the debug, TensorBoard, profiler and rule output paths, as the service's fields would give them.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        raw = sagemaker_client.describe_training_job(TrainingJobName=job_name)
        manifest = _manifest(raw, s3_client)
        if manifest is None:
            return None
        description = with_rule_statuses(raw, sagemaker_client=sagemaker_client, s3_client=s3_client)
        statuses = [*(description.get("DebugRuleEvaluationStatuses") or []),
                    *(description.get("ProfilerRuleEvaluationStatuses") or [])]  # fmt: skip
        pending = [s for s in statuses if s.get("RuleEvaluationStatus") in ("InProgress", "Stopping")]
        if not pending or time.monotonic() >= deadline:
            break
        time.sleep(poll_s)
    return fit_summary(_as_service(description, manifest))


def _as_service(description: Mapping[str, Any], manifest: Mapping[str, Any]) -> dict[str, Any]:
    """``description`` with the hook's and the profiler's configs the service would have recorded."""
    profiler = manifest.get("ProfilerConfig")
    as_service = {"DebugHookConfig": manifest.get("DebugHookConfig"), "ProfilerConfig": profiler,
                  "ProfilingStatus": "Enabled" if profiler else "Disabled"}  # fmt: skip
    return {**description, **{k: v for k, v in as_service.items() if v}}


def service_shaped_description(
    description: Mapping[str, Any], *, sagemaker_client: Any, s3_client: Any
) -> dict[str, Any]:
    """A DescribeTrainingJob response as the service would give it for a self-hosted job.

    The rules' statuses (:func:`with_rule_statuses`) plus the ``DebugHookConfig`` and
    ``ProfilerConfig`` that the self-hosted backend delivered in the source bundle, so the
    readers of the service's fields (reports, summaries) find the debug and profiler output.
    Unchanged for a job without self-hosted rules.
    """
    manifest = _manifest(description, s3_client)
    out = with_rule_statuses(description, sagemaker_client=sagemaker_client, s3_client=s3_client)
    return out if manifest is None else _as_service(out, manifest)
