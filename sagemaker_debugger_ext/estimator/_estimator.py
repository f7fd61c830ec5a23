"""The ``Estimator`` class (re-exported by :mod:`sagemaker_debugger_ext.estimator`)."""

from __future__ import annotations

import copy
from typing import Any

import attrs

from .._sdk_major import installed_sdk_major, require_sdk

if installed_sdk_major() != 2:  # checked before the SDK is imported: SDK v3 warns, then refuses v2 modules
    require_sdk(2, "sagemaker_debugger_ext.Estimator")
import sagemaker.estimator as _sdk_estimator
from sagemaker.estimator import _TrainingJob
from sagemaker.fw_utils import UploadedCode
from sagemaker.s3_utils import parse_s3_url
from sagemaker.utils import check_and_get_run_experiment_config, name_from_base
from sagemaker.workflow.pipeline_context import runnable_by_pipeline

from .. import request as _request
from .._exceptions import ConfigValueError, UnsupportedRegionError, field_error_message
from .._sdk_notices import no_v2_class_notice
from ..cloud._backend import DebuggerBackend, resolve_backend
from ..config._addresses import check_output_address
from ..config._convert import to_framework_profile, to_rule
from ..config._framework_profile import FixedProfilingParameters
from ..config._hook import DebuggerHookConfig
from ..config._images import DETAILED_PROFILER_PREFIX, region_supports_debugger
from ..config._profiler import ProfilerConfig
from ..config._rules import ProfilerRule, Rule
from ..local.caller._sdk_patches import apply_local_output_default
from ._support import (
    bind_arguments,
    capture_create_request,
    check_instances,
    configs_from_description,
    convert_debugger_arguments,
    is_local_instance,
    make_local_session,
    rule_source_resolver,
)
from ._training_job import DebuggerTrainingJob

__all__ = ["Estimator"]


class Estimator(_sdk_estimator.Estimator):
    """A SageMaker v2 ``Estimator`` that accepts this package's and ``sagemaker.debugger``'s configs.

    Takes the arguments of ``sagemaker.estimator.Estimator``, plus ``debugger_backend``:
    ``"service"`` (SageMaker Debugger evaluates the rules) or ``"self-hosted"`` (no Debugger
    field is sent; every rule runs as a Processing job of ours, see docs/cloud.md); default
    ``$SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND``, else ``"service"``; local mode ignores it. ``rules``,
    ``debugger_hook_config``, ``tensorboard_output_config`` and ``profiler_config`` may be
    our objects or the SDK's (converted, never modified). With ``instance_type="local"`` and
    no session, :class:`sagemaker_debugger_ext.LocalSession` is used.

    .. versionadded:: 0.1.0
    """

    def __init__(self, *args: Any, debugger_backend: str | DebuggerBackend | None = None, **kwargs: Any) -> None:
        backend = resolve_backend(debugger_backend)
        arguments = convert_debugger_arguments(bind_arguments(_sdk_estimator.Estimator.__init__, args, kwargs))
        if arguments.get("output_path") is not None:
            arguments["output_path"] = check_output_address("output_path", arguments["output_path"])
        if is_local_instance(arguments.get("instance_type")) and arguments.get("sagemaker_session") is None:
            arguments["sagemaker_session"] = make_local_session()
        check_instances(arguments)
        with no_v2_class_notice():  # this class is built on v2 on purpose: no "use ModelTrainer"
            super().__init__(**arguments)
        self._pending_debugger: _request.DebuggerRequest | None = None
        self._latest_debugger: _request.DebuggerRequest | None = None
        self._dry_run = False
        self.debugger_backend = backend

    def _self_hosted(self) -> bool:
        """Whether this job runs Debugger self-hosted (never in local mode)."""
        return self.debugger_backend is DebuggerBackend.SELF_HOSTED and not self.sagemaker_session.local_mode

    # --- building the request ----------------------------------------------------------
    def _prepare_for_training(self, job_name: str | None = None) -> None:
        apply_local_output_default(self)
        super()._prepare_for_training(job_name=job_name)

    def _debugger_inputs(self) -> dict[str, Any]:
        """The Debugger attributes, converted again (they may have been reassigned after construction)."""
        return convert_debugger_arguments(
            {
                "rules": self.rules,
                "debugger_hook_config": self.debugger_hook_config,
                "tensorboard_output_config": self.tensorboard_output_config,
                "profiler_config": self.profiler_config,
            }
        )

    def _prepare_rules(self) -> None:
        rules = self._debugger_inputs()["rules"] or []
        self.debugger_rules = [r for r in rules if isinstance(r, Rule)]
        self.profiler_rules = [r for r in rules if isinstance(r, ProfilerRule)]

    def _prepare_debugger_for_training(self) -> None:
        """Replaced by :meth:`_prepare_profiler_for_training`, which builds every Debugger key at once."""

    def _prepare_profiler_for_training(self) -> None:
        session = self.sagemaker_session
        inputs = self._debugger_inputs()
        plan = _request.build_debugger_request(
            rules=inputs["rules"],
            debugger_hook_config=inputs["debugger_hook_config"],
            tensorboard_output_config=inputs["tensorboard_output_config"],
            profiler_config=inputs["profiler_config"],
            disable_profiler=bool(self.disable_profiler),
            output_path=self.output_path,
            region=session.boto_region_name,
            job_name=self._current_job_name,
            detailed_profiler_rule_name=name_from_base(DETAILED_PROFILER_PREFIX),
            source_uri=rule_source_resolver(self, upload=not self._dry_run),
            hook_disabled_by_checkpointing=_request.checkpointing_disables_hook(
                framework_name=getattr(self, "_framework_name", None),
                checkpoint_s3_uri=self.checkpoint_s3_uri,
                checkpoint_local_path=self.checkpoint_local_path,
                instance_count=self.instance_count,
                distribution=getattr(self, "distribution", None),
            ),
        )
        self._pending_debugger = plan

    def _stage_user_code_in_s3(self) -> Any:
        if not self._dry_run:
            return super()._stage_user_code_in_s3()
        if self.code_location:
            bucket, prefix = parse_s3_url(self.code_location)
        elif self.output_path and self.output_path.startswith("s3://"):
            bucket, prefix = parse_s3_url(self.output_path)
            prefix = prefix if self._is_output_path_set_from_default_bucket_and_prefix else ""
        else:
            bucket, prefix = self.sagemaker_session.default_bucket(), self.sagemaker_session.default_bucket_prefix
        key = self._assign_s3_prefix(prefix)
        script = self.entry_point.split("/")[-1] if self.entry_point else None
        return UploadedCode(s3_prefix=f"s3://{bucket}/{key}/sourcedir.tar.gz", script_name=script)

    def training_job_request(self, job_name: str | None = None, inputs: Any = None) -> dict[str, Any]:
        """Return the CreateTrainingJob request ``fit()`` would send, without sending it.

        Nothing is uploaded and this estimator is left unchanged (the request is built on a
        copy). The default bucket may be looked up (STS/S3) when no ``output_path`` is set.
        With ``debugger_backend="self-hosted"``, that backend's request: no Debugger or profiler
        field, the launcher as entry point, the bundle with the configs (see docs/cloud.md).

        Raises:
            RequestValidationError: the request violates the SageMaker service model.
        """
        clone = copy.copy(self)
        clone._hyperparameters = copy.deepcopy(self._hyperparameters)
        clone._dry_run = True
        clone._prepare_for_training(job_name=job_name)
        train_args = DebuggerTrainingJob._get_train_args(clone, inputs, None)
        if clone._self_hosted():
            from ..cloud._session import self_hosted_train_args  # what that backend sends instead

            train_args = self_hosted_train_args(clone.sagemaker_session, train_args)
        request = capture_create_request(clone.sagemaker_session, train_args)
        _request.validate_create_training_job(request, allow_local_uris=bool(clone.sagemaker_session.local_mode))
        return request

    @runnable_by_pipeline
    def fit(
        self,
        inputs: Any = None,
        wait: bool = True,
        logs: str = "All",
        job_name: str | None = None,
        experiment_config: dict[str, str] | None = None,
    ) -> None:
        """Start a training job, as ``sagemaker.estimator.Estimator.fit`` (validated request)."""
        self._prepare_for_training(job_name=job_name)
        experiment_config = check_and_get_run_experiment_config(experiment_config)
        self.latest_training_job = DebuggerTrainingJob.start_new(self, inputs, experiment_config)
        self._latest_debugger = self._pending_debugger
        self.jobs.append(self.latest_training_job)
        if wait:
            self.latest_training_job.wait(logs=logs)

    # --- artifact paths ----------------------------------------------------------------
    def _effective(self) -> tuple[Any, Any, Any]:
        plan = self._latest_debugger
        if plan is not None:
            return plan.hook_config, plan.tensorboard_config, plan.profiler_config_object
        return self.debugger_hook_config, self.tensorboard_output_config, self.profiler_config

    def latest_job_debugger_artifacts_path(self) -> str | None:
        """``<hook s3_output_path>/<job>/debug-output``, or ``None`` when the job has no hook."""
        self._ensure_latest_training_job(error_message="Cannot get the Debugger artifacts path: no training job yet")
        hook, _, _ = self._effective()
        if not isinstance(hook, DebuggerHookConfig):
            return None
        return _request.debugger_artifacts_path(hook.s3_output_path, self.latest_training_job.name)

    def latest_job_tensorboard_artifacts_path(self) -> str | None:
        """``<tensorboard s3_output_path>/<job>/tensorboard-output``, or ``None`` without TensorBoard config."""
        self._ensure_latest_training_job(error_message="Cannot get the TensorBoard artifacts path: no training job yet")
        _, tb, _ = self._effective()
        if tb is None:
            return None
        return _request.tensorboard_artifacts_path(tb.s3_output_path, self.latest_training_job.name)

    def latest_job_profiler_artifacts_path(self) -> str | None:
        """``<profiler s3_output_path>/<job>/profiler-output``, or ``None`` when profiling is off."""
        self._ensure_latest_training_job(error_message="Cannot get the profiler artifacts path: no training job yet")
        _, _, profiler = self._effective()
        if profiler is None or profiler.disable_profiler:
            return None
        return _request.profiler_artifacts_path(profiler.s3_output_path, self.latest_training_job.name)

    # --- attach ------------------------------------------------------------------------
    @classmethod
    def _prepare_init_params_from_job_description(
        cls, job_details: dict[str, Any], model_channel_name: Any = None
    ) -> dict[str, Any]:
        details = dict(job_details)
        # Tolerate descriptions without OutputDataConfig.KmsKeyId (moto, some local clients).
        details["OutputDataConfig"] = {"KmsKeyId": None, **job_details.get("OutputDataConfig", {})}
        params = super()._prepare_init_params_from_job_description(details, model_channel_name)
        params.update(configs_from_description(job_details))
        return params

    # --- rule status and profiler updates ------------------------------------------------
    def rule_job_summary(self) -> list[dict[str, Any]]:
        """Debug then profiler rule evaluation statuses of the latest job (DescribeTrainingJob)."""
        self._ensure_latest_training_job()
        return list(self.latest_training_job.rule_job_summary())

    def _check_profiler_region(self) -> None:
        region = self.sagemaker_session.boto_region_name
        if not region_supports_debugger(region):
            msg = f"Current region does not support profiler / debugger! (region {region!r})"
            raise UnsupportedRegionError(msg, field="region", value=region)

    def _set_profiler_config(self, config: ProfilerConfig) -> None:
        self.profiler_config = config
        if self._latest_debugger is not None:
            self._latest_debugger = attrs.evolve(self._latest_debugger, profiler_config_object=config)

    def enable_default_profiling(self) -> None:
        """Turn on default system monitoring of the running job (UpdateTrainingJob), as the SDK does."""
        self._ensure_latest_training_job()
        self._check_profiler_region()
        details = self.latest_training_job.describe()
        if details.get("ProfilingStatus") == "Enabled":
            msg = (
                "Debugger monitoring is already enabled. To update the profiler_config parameter "
                "and the Debugger profiling rules, please use the update_profiler function."
            )
            raise ConfigValueError(msg)
        s3 = (details.get("ProfilerConfig") or {}).get("S3OutputPath") or self.output_path
        config = ProfilerConfig(s3_output_path=s3)
        self._set_profiler_config(config)
        _TrainingJob.update(self, [], config._to_request_dict())

    def disable_profiling(self) -> None:
        """Turn off monitoring and profiling of the running job (UpdateTrainingJob)."""
        self._ensure_latest_training_job()
        self._check_profiler_region()
        if self.latest_training_job.describe().get("ProfilingStatus") == "Disabled":
            msg = "Profiler is already disabled."
            raise ConfigValueError(msg)
        _TrainingJob.update(self, profiler_config=ProfilerConfig._to_profiler_disabled_request_dict())

    def update_profiler(
        self,
        rules: list[Any] | None = None,
        system_monitor_interval_millis: int | None = None,
        s3_output_path: str | None = None,
        framework_profile_params: Any = None,
        disable_framework_metrics: bool = False,
    ) -> None:
        """Update the running job's profiler config and/or add profiler rules (UpdateTrainingJob)."""
        self._ensure_latest_training_job()
        self._check_profiler_region()
        if not (
            rules
            or system_monitor_interval_millis
            or s3_output_path
            or framework_profile_params
            or disable_framework_metrics
        ):
            msg = "Please provide profiler config or profiler rule to be updated."
            raise ConfigValueError(msg)
        if disable_framework_metrics and framework_profile_params:
            msg = "framework_profile_params cannot be set when disable_framework_metrics is True"
            raise ConfigValueError(msg)
        rule_configs = None
        if rules:
            converted = []
            for index, rule in enumerate(rules):
                try:
                    converted_rule = to_rule(rule, field=f"rules[{index}]")
                except RuntimeError:
                    converted_rule = None
                if not isinstance(converted_rule, ProfilerRule):
                    msg = "Please provide ProfilerRule to be updated: " + field_error_message(
                        f"rules[{index}]", "a ProfilerRule", rule
                    )
                    raise ConfigValueError(msg)
                converted.append(converted_rule)
            self.profiler_rules = converted
            plan = _request.build_debugger_request(
                rules=converted,
                debugger_hook_config=False,
                tensorboard_output_config=None,
                profiler_config=ProfilerConfig(s3_output_path=s3_output_path or self.output_path),
                disable_profiler=False,
                output_path=self.output_path or "",
                region=self.sagemaker_session.boto_region_name,
                job_name=self.latest_training_job.name,
                detailed_profiler_rule_name=name_from_base(DETAILED_PROFILER_PREFIX),
                source_uri=rule_source_resolver(self, upload=True),
            )
            rule_configs = plan.profiler_rule_configurations
        if disable_framework_metrics:
            framework: Any = FixedProfilingParameters({})
        else:
            framework = (
                None
                if framework_profile_params is None
                else to_framework_profile(framework_profile_params, field="framework_profile_params")
            )
        config = ProfilerConfig(
            s3_output_path=s3_output_path,
            system_monitor_interval_millis=system_monitor_interval_millis,
            framework_profile_params=framework,
        )
        self._set_profiler_config(config)
        _TrainingJob.update(self, rule_configs, config._to_request_dict())
