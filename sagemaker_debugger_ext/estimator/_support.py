"""Helpers of :mod:`sagemaker_debugger_ext.estimator`: argument conversion, request capture, attach."""

from __future__ import annotations

import inspect
import os
import uuid
from typing import Any

from sagemaker import s3

from .._exceptions import ConfigTypeError, ConfigValueError, LocalModeError, field_error_message
from ..config._arguments import convert_debugger_arguments
from ..config._collection import CollectionConfig
from ..config._framework_profile import FixedProfilingParameters
from ..config._hook import DebuggerHookConfig, TensorBoardOutputConfig
from ..config._profiler import ProfilerConfig
from ..config._rules import RuleBase
from ..local.caller._sdk_patches import is_our_local_session

__all__ = [
    "bind_arguments",
    "capture_create_request",
    "check_instances",
    "configs_from_description",
    "convert_debugger_arguments",
    "is_local_instance",
    "make_local_session",
    "rule_source_resolver",
]


def bind_arguments(sdk_init: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Bind ``args``/``kwargs`` to the SDK ``Estimator.__init__`` signature; return keyword arguments."""
    try:
        bound = inspect.signature(sdk_init).bind(None, *args, **kwargs)
    except TypeError as exc:
        msg = f"Estimator arguments do not match sagemaker.estimator.Estimator: {exc}"
        raise ConfigTypeError(msg) from exc
    arguments = dict(bound.arguments)
    arguments.pop("self", None)
    extra = arguments.pop("kwargs", {})
    arguments.update(extra)
    return arguments


def check_instances(arguments: dict[str, Any]) -> None:
    """``instance_count`` >= 1; ``instance_type`` local/local_gpu with our LocalSession."""
    count = arguments.get("instance_count")
    if isinstance(count, (int, float, str)) and (isinstance(count, (bool, float, str)) or count < 1):
        raise ConfigValueError(
            field_error_message("instance_count", "an integer >= 1", count), field="instance_count", value=count
        )
    kind = arguments.get("instance_type")
    if (
        is_our_local_session(arguments.get("sagemaker_session"))
        and isinstance(kind, str)
        and not is_local_instance(kind)
    ):
        expected = "'local' or 'local_gpu' with LocalSession (local mode runs on this machine; use a SageMaker session for ml.* instances)"
        raise ConfigValueError(field_error_message("instance_type", expected, kind), field="instance_type", value=kind)


def is_local_instance(instance_type: Any) -> bool:
    """True for ``local`` / ``local_gpu``."""
    return instance_type in ("local", "local_gpu")


def make_local_session() -> Any:
    """Build ``sagemaker_debugger_ext.local.LocalSession()`` (imported lazily)."""
    try:
        # local.caller._session: sagemaker.local, rules and trials; only when a local instance type is used.
        from ..local import LocalSession
    except ImportError as exc:
        msg = (
            "instance_type 'local'/'local_gpu' needs sagemaker_debugger_ext.local.LocalSession, which could not be "
            f"imported ({exc}); pass sagemaker_session=... explicitly"
        )
        raise LocalModeError(msg) from exc
    return LocalSession()


def rule_source_resolver(estimator: Any, *, upload: bool) -> Any:
    """Return ``(rule, local_source) -> uri`` for custom rules whose source is a local path.

    Local mode with our LocalSession: ``file://<absolute path>``, nothing uploaded.
    Otherwise the SDK's destination ``s3://<bucket>[/<prefix>]/<rule>/<uuid4>/<basename>``,
    uploaded only when ``upload`` is true.
    """
    session = estimator.sagemaker_session

    def resolve(rule: RuleBase, source: str) -> str:
        if is_our_local_session(session):
            return "file://" + os.path.abspath(source.removeprefix("file://"))
        desired = s3.s3_path_join(
            "s3://", session.default_bucket(), session.default_bucket_prefix, rule.name, str(uuid.uuid4())
        )
        if upload:
            return str(s3.S3Uploader.upload(local_path=source, desired_s3_uri=desired, sagemaker_session=session))
        return desired if os.path.isdir(source) else f"{desired}/{os.path.basename(source)}"

    return resolve


def capture_create_request(session: Any, train_args: dict[str, Any]) -> dict[str, Any]:
    """Run ``session.train(**train_args)`` up to the request, without calling CreateTrainingJob."""
    captured: dict[str, Any] = {}

    def intercept(request: dict[str, Any], create: Any, func_name: str | None = None) -> None:
        captured.update(request)

    session._intercept_create_request = intercept
    try:
        session.train(**train_args)
    finally:
        del session._intercept_create_request
    return captured


def configs_from_description(job: dict[str, Any]) -> dict[str, Any]:
    """Estimator init parameters that restore the Debugger configs of a DescribeTrainingJob answer."""
    params: dict[str, Any] = {}
    hook = job.get("DebugHookConfig")
    if hook:
        collections = hook.get("CollectionConfigurations")
        params["debugger_hook_config"] = DebuggerHookConfig(
            s3_output_path=hook.get("S3OutputPath"),
            container_local_output_path=hook.get("LocalPath"),
            hook_parameters=hook.get("HookParameters"),
            collection_configs=None
            if collections is None
            else [CollectionConfig(c["CollectionName"], c.get("CollectionParameters")) for c in collections],
        )
    else:
        params["debugger_hook_config"] = False
    tb = job.get("TensorBoardOutputConfig")
    if tb:
        params["tensorboard_output_config"] = TensorBoardOutputConfig(tb["S3OutputPath"], tb.get("LocalPath"))
    profiler = job.get("ProfilerConfig")
    if profiler:
        parameters = profiler.get("ProfilingParameters")
        disabled = bool(profiler.get("DisableProfiler", False))
        params["profiler_config"] = ProfilerConfig(
            s3_output_path=profiler.get("S3OutputPath"),
            system_monitor_interval_millis=profiler.get("ProfilingIntervalInMilliseconds"),
            framework_profile_params=None if parameters is None else FixedProfilingParameters(parameters),
            disable_profiler=disabled,
        )
        params["disable_profiler"] = disabled
    return params
