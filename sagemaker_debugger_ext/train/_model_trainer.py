"""``ModelTrainer``: SDK v3's ``sagemaker.train.ModelTrainer`` with a Debugger (``with_debugger``).

The Debugger keys of the CreateTrainingJob request come from the package's one request
builder (:func:`sagemaker_debugger_ext.request.build_debugger_request`, the same SDK v2
defaulting rules the v2 ``Estimator`` uses), so for the same config objects they equal
what SDK v2's ``Estimator`` sends, byte for byte on the wire (see ``_wire``).
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from pydantic import PrivateAttr
from sagemaker.core.common_utils import name_from_base
from sagemaker.core.workflow.pipeline_context import PipelineSession
from sagemaker.train import ModelTrainer as _SdkModelTrainer
from sagemaker.train.model_trainer import Mode

from .. import request as _request
from .._container_env import DEBUGGER_BACKEND_ENV
from .._exceptions import ConfigStateError, ConfigValueError, field_error_message
from ..config._arguments import convert_debugger_arguments
from ..config._hook import DebuggerHookConfig
from ..config._images import DETAILED_PROFILER_PREFIX, region_supports_debugger
from ..config._rules import RuleBase
from . import _wire
from ._local import is_local_session, wait_locally

__all__ = ["BACKENDS", "ModelTrainer"]

BACKENDS = ("service",)
#: the environment variable that picks the Debugger backend when ``backend`` is not given
BACKEND_ENV = DEBUGGER_BACKEND_ENV
_ALL_BACKENDS = ("service", "self-hosted")


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

    def with_debugger(
        self,
        rules: list[Any] | None = None,
        debugger_hook_config: Any = None,
        profiler_config: Any = None,
        tensorboard_output_config: Any = None,
        disable_profiler: bool = False,
        backend: str | None = None,
    ) -> ModelTrainer:
        """Configure SageMaker Debugger for this trainer's jobs; returns the trainer.

        The arguments mean what they mean on SDK v2's ``Estimator``: ``rules`` (``Rule`` /
        ``ProfilerRule``), ``debugger_hook_config`` (``None``: the default hook, ``False``: no
        hook), ``profiler_config``, ``tensorboard_output_config``, ``disable_profiler``.
        ``backend``: ``"service"`` (SageMaker's Debugger; default, or ``$SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND``);
        ``"self-hosted"`` is refused for ModelTrainer in this release.

        Raises:
            ConfigTypeError, ConfigValueError: a bad argument (named, with its value).
            ConfigStateError: a TensorBoard config given here and through
                ``with_tensorboard_output_config``.
        """
        field = "backend"
        if backend is None:  # the v2 Estimator's variable, as its debugger_backend does
            field, backend = BACKEND_ENV, (os.environ.get(BACKEND_ENV) or "service").strip().lower()
        if backend not in _ALL_BACKENDS:
            expected = f"one of {', '.join(map(repr, _ALL_BACKENDS))}"
            raise ConfigValueError(field_error_message(field, expected, backend), field=field, value=backend)
        if backend not in BACKENDS:
            msg = field_error_message(
                field,
                "'service' for ModelTrainer in this release (the self-hosted Debugger is available for the "
                "v2 Estimator only: Estimator(debugger_backend='self-hosted'); ModelTrainer support will follow)",
                backend,
            )
            raise ConfigValueError(msg, field=field, value=backend)
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
        """The Debugger keys of job ``job_name``'s CreateTrainingJob (PascalCase, as sent).

        Raises:
            ConfigStateError: no ``with_debugger`` yet, no output path (``Mode.LOCAL_CONTAINER``),
                or TensorBoard configured twice.
        """
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
        region = self.sagemaker_session.boto_region_name
        hook = inputs["debugger_hook_config"]
        plan = _request.build_debugger_request(
            rules=inputs["rules"],
            debugger_hook_config=hook,
            tensorboard_output_config=inputs["tensorboard_output_config"],
            profiler_config=inputs["profiler_config"],
            disable_profiler=self._disable_profiler(inputs, region),
            output_path=str(output),
            region=region,
            job_name=job_name,
            detailed_profiler_rule_name=name_from_base(DETAILED_PROFILER_PREFIX),
            source_uri=self._source_resolver(),
        )
        self._latest_debugger = plan
        return plan.to_request()

    def _create_training_job_args(self, input_data_config: Any = None, boto3: bool = False) -> dict[str, Any]:
        """ModelTrainer's request, plus the Debugger keys when :meth:`with_debugger` was called."""
        args: dict[str, Any] = super()._create_training_job_args(input_data_config=input_data_config, boto3=boto3)
        if self._debugger_inputs is None:
            return args
        job_name = args.get("training_job_name") or args.get("TrainingJobName") or str(self.base_job_name)
        keys = self.debugger_request(job_name)
        if boto3 or isinstance(self.sagemaker_session, PipelineSession):  # serialised by the SDK: the keys as built
            args.update(keys)
            return args
        args.update(_wire.shape_kwargs(keys))
        _wire.expect_request(job_name, keys)
        _wire.install(self.sagemaker_session.boto_session)
        return args

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
        """
        if not (is_local_session(self.sagemaker_session) and wait and logs) or dry_run:
            return super().train(input_data_config=input_data_config, wait=wait, logs=logs, dry_run=dry_run)
        super().train(input_data_config=input_data_config, wait=False, logs=False)
        wait_locally(self._latest_training_job, self.sagemaker_session)
        return None

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
        """Debug then profiler rule evaluation statuses of the latest job (DescribeTrainingJob)."""
        name = self._job_name()
        client = self.sagemaker_session.sagemaker_client
        description = client.describe_training_job(TrainingJobName=name)
        return list(description.get("DebugRuleEvaluationStatuses") or []) + list(
            description.get("ProfilerRuleEvaluationStatuses") or []
        )
