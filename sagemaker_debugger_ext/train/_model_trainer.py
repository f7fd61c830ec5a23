"""``ModelTrainer``: SDK v3's ``sagemaker.train.ModelTrainer`` with a Debugger (``with_debugger``).

The Debugger keys of the CreateTrainingJob request come from the package's one request
builder (:func:`sagemaker_debugger_ext.request.build_debugger_request`, the same SDK v2
defaulting rules the v2 ``Estimator`` uses), so for the same config objects they equal
what SDK v2's ``Estimator`` sends, byte for byte on the wire (see ``_wire``). With
``backend="self-hosted"`` none of them is sent: the source is staged with the launcher and
configs (``_self_hosted``) and ``train()`` starts one Processing job per rule (``cloud``).
"""

from __future__ import annotations

import os
import uuid
import warnings
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from pydantic import PrivateAttr
from sagemaker.core.common_utils import name_from_base
from sagemaker.core.utils.exceptions import FailedStatusError
from sagemaker.core.workflow.pipeline_context import PipelineSession
from sagemaker.train import ModelTrainer as _SdkModelTrainer
from sagemaker.train.model_trainer import Mode

from .. import __version__
from .. import request as _request
from .._container_env import DEBUGGER_BACKEND_ENV
from .._exceptions import ConfigStateError, RuleCoverageWarning
from ..cloud._backend import DebuggerBackend, resolve_backend
from ..cloud._bundle import WHEEL_CHANNEL, package_requirement
from ..cloud._self_hosted import (
    SelfHostedPlan,
    check_output_path,
    plan_self_hosted,
    self_hosted_fit_summary,
    start_rule_jobs,
)
from ..config._arguments import convert_debugger_arguments
from ..config._hook import DebuggerHookConfig
from ..config._images import DETAILED_PROFILER_PREFIX, region_supports_debugger
from ..config._rules import RuleBase
from ..local.store._rule_coverage import rule_coverage_warnings
from . import _wire
from ._local import is_local_session, wait_locally
from ._self_hosted import SelfHostedOptions, rule_job_summary, self_hosted_options, stage_source_code

__all__ = ["BACKENDS", "ModelTrainer"]

BACKENDS = tuple(b.value for b in DebuggerBackend)
#: the environment variable that picks the Debugger backend when ``backend`` is not given
BACKEND_ENV = DEBUGGER_BACKEND_ENV


class ModelTrainer(_SdkModelTrainer):
    """``sagemaker.train.ModelTrainer`` whose jobs can carry a SageMaker Debugger.

    Same constructor as the SDK's; :meth:`with_debugger` adds rules, the hook, the profiler
    and TensorBoard output (our config objects or ``sagemaker.core.debugger``'s). With a
    session from :func:`sagemaker_debugger_ext.train.local_session`, the job runs on this
    machine through ``sagemaker-debugger-ext serve``.

    .. versionadded:: 0.1.0
    """

    _debugger_inputs: dict[str, Any] | None = PrivateAttr(default=None)
    _latest_debugger: Any = PrivateAttr(default=None)
    _self_hosted: SelfHostedOptions | None = PrivateAttr(default=None)
    _self_hosted_plan: SelfHostedPlan | None = PrivateAttr(default=None)

    def with_debugger(
        self,
        rules: list[Any] | None = None,
        debugger_hook_config: Any = None,
        profiler_config: Any = None,
        tensorboard_output_config: Any = None,
        disable_profiler: bool = False,
        backend: str | None = None,
        *,
        wheel: str | os.PathLike[str] | None = None,
        rule_image_uri: str | None = None,
        rule_poll_seconds: float = 10.0,
    ) -> ModelTrainer:
        """Configure SageMaker Debugger for this trainer's jobs; returns the trainer.

        The arguments mean what they mean on SDK v2's ``Estimator``: ``rules`` (``Rule`` /
        ``ProfilerRule``), ``debugger_hook_config`` (``None``: the default hook, ``False``: no
        hook), ``profiler_config``, ``tensorboard_output_config``, ``disable_profiler``.
        ``backend``: ``"service"`` (SageMaker's Debugger; default, or ``$SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND``)
        or ``"self-hosted"`` (no Debugger field sent; the hook's config travels in the ``code``
        channel and every rule runs as a Processing job, see docs/cloud.md). The self-hosted
        backend's options, as ``DebuggerSession``'s: ``wheel`` (a wheel of this package shipped
        in a channel, for jobs without internet access), ``rule_image_uri`` (the rule jobs'
        image), ``rule_poll_seconds`` (how often a rule job asks whether training ended).

        Raises:
            ConfigTypeError, ConfigValueError: a bad argument (named, with its value).
            ConfigStateError: a TensorBoard config given here and through
                ``with_tensorboard_output_config``.
        """
        chosen = resolve_backend(backend, field="backend")  # else the v2 Estimator's variable
        self._self_hosted = None
        if chosen is DebuggerBackend.SELF_HOSTED:
            self._self_hosted = self_hosted_options(wheel, rule_image_uri, rule_poll_seconds)
        self._debugger_inputs = convert_debugger_arguments(
            {
                "rules": rules,
                "debugger_hook_config": debugger_hook_config,
                "tensorboard_output_config": tensorboard_output_config,
                "profiler_config": profiler_config,
                "disable_profiler": disable_profiler,
            }
        )
        return self

    # --- building the request ----------------------------------------------------------
    def _disable_profiler(self, inputs: dict[str, Any], region: str) -> bool:
        """SDK v2's resolution: the flag, an unsupported region, or a Trainium instance."""
        instance_type = str(getattr(self.compute, "instance_type", None) or "")
        trainium = instance_type.startswith(("ml.trn", "ml_trn"))
        return bool(inputs["disable_profiler"]) or not region_supports_debugger(region) or trainium

    def _source_resolver(self) -> Any:
        session = self.sagemaker_session

        def resolve(rule: RuleBase, source: str) -> str:
            if is_local_session(session):
                return "file://" + os.path.abspath(source.removeprefix("file://"))
            from sagemaker.core.s3 import S3Uploader, s3_path_join

            desired = s3_path_join(
                "s3://", session.default_bucket(), session.default_bucket_prefix, rule.name, str(uuid.uuid4())
            )
            return str(S3Uploader.upload(local_path=source, desired_s3_uri=desired, sagemaker_session=session))

        return resolve

    def debugger_request(self, job_name: str) -> dict[str, Any]:
        """The Debugger keys of job ``job_name``'s CreateTrainingJob (PascalCase, as the service backend sends them).

        Raises:
            ConfigStateError: no ``with_debugger`` yet, no output path (``Mode.LOCAL_CONTAINER``),
                or TensorBoard configured twice.
        """
        plan = self._build(job_name, source_uri=self._source_resolver())
        self._latest_debugger = plan
        return plan.to_request()

    def _checked_inputs(self) -> tuple[dict[str, Any], str]:
        """``with_debugger``'s inputs and the output path, once the trainer can carry a Debugger."""
        inputs = self._debugger_inputs
        if inputs is None:
            msg = "no Debugger configured: call with_debugger(...) first"
            raise ConfigStateError(msg)
        output = getattr(self.output_data_config, "s3_output_path", None)
        if self.training_mode != Mode.SAGEMAKER_TRAINING_JOB or not output:
            msg = (
                "with_debugger needs training_mode=Mode.SAGEMAKER_TRAINING_JOB and an output path "
                f"(got training_mode={self.training_mode}); ModelTrainer's LOCAL_CONTAINER mode runs Docker and "
                "drops Debugger: for a local job use sagemaker_session=sagemaker_debugger_ext.train.local_session()"
            )
            raise ConfigStateError(msg)
        if inputs["tensorboard_output_config"] is not None and self._tensorboard_output_config is not None:
            msg = (
                "TensorBoard output is configured twice: pass tensorboard_output_config to with_debugger or use "
                "with_tensorboard_output_config, not both"
            )
            raise ConfigStateError(msg)
        return inputs, str(output)

    def _build(self, job_name: str, *, source_uri: Any) -> _request.DebuggerRequest:
        inputs, output = self._checked_inputs()
        region = self.sagemaker_session.boto_region_name
        hook = inputs["debugger_hook_config"]
        return _request.build_debugger_request(
            rules=inputs["rules"],
            debugger_hook_config=hook,
            tensorboard_output_config=inputs["tensorboard_output_config"],
            profiler_config=inputs["profiler_config"],
            disable_profiler=self._disable_profiler(inputs, region),
            output_path=output,
            region=region,
            job_name=job_name,
            detailed_profiler_rule_name=name_from_base(DETAILED_PROFILER_PREFIX),
            source_uri=source_uri,
        )

    def _create_training_job_args(self, input_data_config: Any = None, boto3: bool = False) -> dict[str, Any]:
        """ModelTrainer's request, plus the Debugger keys when :meth:`with_debugger` was called."""
        if self._debugger_inputs is not None and self._self_hosted is not None:
            return self._self_hosted_args(self._self_hosted, input_data_config, boto3)
        args: dict[str, Any] = super()._create_training_job_args(input_data_config=input_data_config, boto3=boto3)
        if self._debugger_inputs is None:
            return args
        job_name = args.get("training_job_name") or args.get("TrainingJobName") or str(self.base_job_name)
        keys = self.debugger_request(job_name)
        self._warn_rule_coverage(args, keys)
        if boto3 or isinstance(self.sagemaker_session, PipelineSession):  # serialised by the SDK: the keys as built
            args.update(keys)
            return args
        return self._with_wire_keys(args, job_name, keys)

    def _warn_rule_coverage(self, args: dict[str, Any], keys: dict[str, Any]) -> None:
        """Local mode's before-training warnings (a rule that will see too little), from the request and
        the entry script, as the v2 ``Estimator``'s local jobs give them."""
        source: Any = self.source_code
        script = None
        if source is not None and source.source_dir and source.entry_script and Path(source.source_dir).is_dir():
            script = Path(source.source_dir) / str(source.entry_script)
        hyperparameters = args.get("hyper_parameters") or args.get("HyperParameters") or {}
        for text in rule_coverage_warnings({**keys, "HyperParameters": hyperparameters}, script):
            warnings.warn(text, RuleCoverageWarning, stacklevel=3)

    def _with_wire_keys(self, args: dict[str, Any], job_name: str, keys: dict[str, Any]) -> dict[str, Any]:
        if keys:
            args.update(_wire.shape_kwargs(keys))
            _wire.expect_request(job_name, keys)
            _wire.install(self.sagemaker_session.boto_session)
        return args

    def _self_hosted_args(self, options: SelfHostedOptions, input_data_config: Any, boto3: bool) -> dict[str, Any]:
        """ModelTrainer's request without Debugger fields, its source staged with the launcher and configs.

        Plans the rule jobs (``train()`` starts them right after CreateTrainingJob).
        """
        if boto3 or isinstance(self.sagemaker_session, PipelineSession):
            msg = (
                "backend='self-hosted' starts its rule jobs from ModelTrainer.train(), which a pipeline step does "
                "not call: use backend='service' in pipelines"
            )
            raise ConfigStateError(msg)
        output = check_output_path(self._checked_inputs()[1], "output_data_config.s3_output_path")
        configs = self._build("pending", source_uri=None).to_request()  # hook and profiler: the same for any name
        wheel = Path(options.wheel) if options.wheel is not None else None
        requirement = package_requirement(__version__, wheel.name if wheel is not None else None)
        original: Any = self.source_code  # type: ignore[has-type]  # assigned below: pydantic field of the SDK base
        with TemporaryDirectory(prefix="sagemaker-debugger-ext-") as staging:
            self.source_code = stage_source_code(
                original,
                distributed=self.distributed,
                into=Path(staging) / "code",
                keys=configs,
                requirement=requirement,
            )
            try:  # ModelTrainer uploads the code channel and writes sm_train.sh/sourcecode.json from it
                args: dict[str, Any] = super()._create_training_job_args(input_data_config=input_data_config)
            finally:
                self.source_code = original
        job_name = str(args["training_job_name"])
        keys = self.debugger_request(job_name)
        self._warn_rule_coverage(args, keys)
        stopping = getattr(self.stopping_condition, "max_runtime_in_seconds", None)
        plan, channel = plan_self_hosted(
            job=job_name,
            output=output,
            role=str(self.role),
            keys=keys,
            max_runtime_s=int(stopping or 86400),
            s3_client=self.sagemaker_session.s3_client,
            version=__version__,
            wheel=wheel,
            poll_seconds=options.rule_poll_seconds,
        )
        if channel is not None:
            uri = channel["DataSource"]["S3DataSource"]["S3Uri"]
            wheel_channel = self.create_input_data_channel(channel_name=WHEEL_CHANNEL, data_source=uri)
            args["input_data_config"] = [*(args.get("input_data_config") or []), wheel_channel]
        self._self_hosted_plan = plan
        tensorboard = {k: v for k, v in keys.items() if k == "TensorBoardOutputConfig"}  # SageMaker still handles it
        return self._with_wire_keys(args, job_name, tensorboard)

    def train(
        self,
        input_data_config: Any = None,
        wait: bool | None = True,
        logs: bool | None = True,
        dry_run: bool = False,
    ) -> Any:
        """Train as ``sagemaker.train.ModelTrainer.train``.

        With a :func:`~sagemaker_debugger_ext.train.local_session` session, ``logs=True``
        prints the local job's logs from the job store instead of calling CloudWatch Logs.
        With ``backend="self-hosted"``, one Processing job per rule starts right after the
        training job is created; ``wait=True`` with ``logs`` then ends with the rules' summary
        (each rule's final status and details, the output paths), printed before the SDK's
        error for a failed job.
        """
        session = self.sagemaker_session
        local = is_local_session(session) and bool(logs)
        self_hosted = self._debugger_inputs is not None and self._self_hosted is not None
        if dry_run or not (self_hosted or (local and wait)):
            return super().train(input_data_config=input_data_config, wait=wait, logs=logs, dry_run=dry_run)
        super().train(input_data_config=input_data_config, wait=False, logs=False)
        job = self._latest_training_job
        if self._self_hosted is not None and self._self_hosted_plan is not None:  # planned by the request above
            start_rule_jobs(
                session.sagemaker_client,
                self._self_hosted_plan,
                region=session.boto_region_name,
                image_uri=self._self_hosted.rule_image_uri,
            )
        if not wait:
            return None
        summary = self_hosted and bool(logs)
        try:
            if local:
                wait_locally(job, session)
            else:
                job.wait(logs=logs)
        except FailedStatusError:  # the rules say why, before the SDK's error (an interrupt does not wait)
            if summary:
                self._print_rules_summary(str(job.training_job_name))
            raise
        if summary:
            self._print_rules_summary(str(job.training_job_name))
        return None

    def _print_rules_summary(self, job_name: str) -> None:
        session = self.sagemaker_session
        text = self_hosted_fit_summary(job_name, sagemaker_client=session.sagemaker_client, s3_client=session.s3_client)
        if text:
            print(text, flush=True)

    # --- artifact paths ----------------------------------------------------------------
    def _job_name(self) -> str:
        job = self._latest_training_job
        if job is None:
            msg = "no training job yet: call train() first"
            raise ConfigStateError(msg)
        return str(job.training_job_name)

    def latest_job_debugger_artifacts_path(self) -> str | None:
        """``<hook s3_output_path>/<job>/debug-output``, or ``None`` when the job has no hook."""
        name = self._job_name()
        hook = getattr(self._latest_debugger, "hook_config", None)
        if not isinstance(hook, DebuggerHookConfig):
            return None
        return _request.debugger_artifacts_path(hook.s3_output_path, name)

    def latest_job_tensorboard_artifacts_path(self) -> str | None:
        """``<tensorboard s3_output_path>/<job>/tensorboard-output``, or ``None`` without TensorBoard config."""
        name = self._job_name()
        tb = getattr(self._latest_debugger, "tensorboard_config", None)
        return None if tb is None else _request.tensorboard_artifacts_path(tb.s3_output_path, name)

    def latest_job_profiler_artifacts_path(self) -> str | None:
        """``<profiler s3_output_path>/<job>/profiler-output``, or ``None`` when profiling is off."""
        name = self._job_name()
        profiler = getattr(self._latest_debugger, "profiler_config_object", None)
        if profiler is None or profiler.disable_profiler:
            return None
        return _request.profiler_artifacts_path(profiler.s3_output_path, name)

    def rule_job_summary(self) -> list[dict[str, Any]]:
        """Debug then profiler rule evaluation statuses of the latest job, in the service's shape.

        DescribeTrainingJob's; for a self-hosted job, its rule jobs' (``RuleEvaluationJobArn`` the
        processing job's ARN), which ``TrainingJob.get()`` cannot show (see
        :func:`sagemaker_debugger_ext.train.rule_job_summary` for any job by name).
        """
        return rule_job_summary(self._job_name(), self.sagemaker_session)
