"""Accept ``sagemaker.debugger`` objects wherever ours are accepted: convert at the boundary.

Conversion reads the SDK object's attributes and builds a new object of ours; the SDK
object is never modified. ``sagemaker`` is not imported here: objects are recognised by
their class name and module, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import Any

from ._checks import type_error

__all__ = [
    "is_sdk_object",
    "to_collection_config",
    "to_framework_profile",
    "to_hook_config",
    "to_metrics_config",
    "to_profiler",
    "to_profiler_config",
    "to_rule",
    "to_tensorboard_config",
]


def is_sdk_object(value: Any, class_name: str) -> bool:
    """True if ``value`` is an instance of ``sagemaker[.core].debugger``'s ``class_name`` (or a subclass)."""
    for klass in type(value).__mro__:
        module = getattr(klass, "__module__", "") or ""
        if klass.__name__ == class_name and module.startswith(("sagemaker.debugger", "sagemaker.core.debugger")):
            return True
    return False


def to_collection_config(value: Any, *, field: str) -> Any:
    """Return our ``CollectionConfig`` for ours or the SDK's."""
    from ._collection import CollectionConfig

    if isinstance(value, CollectionConfig):
        return value
    if is_sdk_object(value, "CollectionConfig"):
        return CollectionConfig(value.name, None if value.parameters is None else dict(value.parameters))
    raise type_error(field, "a CollectionConfig", value)


def to_hook_config(value: Any, *, field: str = "debugger_hook_config") -> Any:
    """Return our ``DebuggerHookConfig`` for ours or the SDK's."""
    from ._hook import DebuggerHookConfig

    if isinstance(value, DebuggerHookConfig):
        return value
    if is_sdk_object(value, "DebuggerHookConfig"):
        collections = value.collection_configs
        return DebuggerHookConfig(
            s3_output_path=value.s3_output_path,
            container_local_output_path=value.container_local_output_path,
            hook_parameters=None if value.hook_parameters is None else dict(value.hook_parameters),
            collection_configs=None if collections is None else list(collections),
        )
    raise type_error(field, "a DebuggerHookConfig, True, False or None", value)


def to_tensorboard_config(value: Any, *, field: str = "tensorboard_output_config") -> Any:
    """Return our ``TensorBoardOutputConfig`` for ours or the SDK's."""
    from ._hook import TensorBoardOutputConfig

    if isinstance(value, TensorBoardOutputConfig):
        return value
    if is_sdk_object(value, "TensorBoardOutputConfig"):
        return TensorBoardOutputConfig(value.s3_output_path, value.container_local_output_path)
    raise type_error(field, "a TensorBoardOutputConfig or None", value)


def to_metrics_config(value: Any, cls: type, *, field: str) -> Any:
    """Return our metrics config of class ``cls`` for ours or the SDK's equivalent."""
    if isinstance(value, cls):
        return value
    if is_sdk_object(value, cls.__name__):
        rng = value.range.to_json()
        kwargs: dict[str, Any] = {
            "start_step": rng.get("StartStep"),
            "num_steps": rng.get("NumSteps"),
            "start_unix_time": rng.get("StartTimeInSecSinceEpoch"),
            "duration": rng.get("Duration"),
        }
        if hasattr(value, "metrics_regex"):
            kwargs["metrics_regex"] = value.metrics_regex
        if hasattr(value, "python_profiler"):
            kwargs["python_profiler"] = value.python_profiler.value
            timer = getattr(value, "cprofile_timer", None)
            if timer is not None:
                kwargs["cprofile_timer"] = timer.value
        return cls(**kwargs)
    raise type_error(field, f"a {cls.__name__}", value)


def to_framework_profile(value: Any, *, field: str) -> Any:
    """Return our ``FrameworkProfile`` (or fixed parameters copied from an SDK object)."""
    from ._framework_profile import FixedProfilingParameters, FrameworkProfile

    if isinstance(value, (FrameworkProfile, FixedProfilingParameters)):
        return value
    if is_sdk_object(value, "FrameworkProfile"):
        return FixedProfilingParameters(dict(value.profiling_parameters))
    raise type_error(field, "a FrameworkProfile", value)


def to_profiler(value: Any, *, field: str) -> Any:
    """Return our ``Profiler`` for ours or the SDK's."""
    from ._profiler import Profiler

    if isinstance(value, Profiler):
        return value
    if is_sdk_object(value, "Profiler"):
        params = value.profiling_parameters
        return Profiler(params["CPUProfilingDuration"], params["SMPFileRotationSecs"])
    raise type_error(field, "a Profiler", value)


def to_profiler_config(value: Any, *, field: str = "profiler_config") -> Any:
    """Return our ``ProfilerConfig`` for ours or the SDK's."""
    from ._profiler import ProfilerConfig

    if isinstance(value, ProfilerConfig):
        return value
    if is_sdk_object(value, "ProfilerConfig"):
        return ProfilerConfig(
            s3_output_path=value.s3_output_path,
            system_monitor_interval_millis=value.system_monitor_interval_millis,
            framework_profile_params=value.framework_profile_params,
            profile_params=value.profile_params,
            disable_profiler=value.disable_profiler,
        )
    raise type_error(field, "a ProfilerConfig or None", value)


def to_rule(value: Any, *, field: str = "rules[]") -> Any:
    """Return our ``Rule``/``ProfilerRule`` for ours or the SDK's; ``ConfigStateError`` otherwise."""
    from .._exceptions import ConfigStateError, field_error_message
    from ._rules import ProfilerRule, Rule

    if isinstance(value, (Rule, ProfilerRule)):
        return value
    common = {
        "name": getattr(value, "name", None),
        "image_uri": getattr(value, "image_uri", None),
        "instance_type": getattr(value, "instance_type", None),
        "container_local_output_path": getattr(value, "container_local_output_path", None),
        "s3_output_path": getattr(value, "s3_output_path", None),
        "volume_size_in_gb": getattr(value, "volume_size_in_gb", None),
    }
    if is_sdk_object(value, "Rule"):
        params = value.rule_parameters
        return Rule(
            **common,
            rule_parameters=None if params is None else dict(params),
            collections_to_save=list(value.collection_configs or []),
            actions=value.actions,
        )
    if is_sdk_object(value, "ProfilerRule"):
        params = value.rule_parameters
        return ProfilerRule(**common, rule_parameters=None if params is None else dict(params))
    msg = field_error_message(field, "a Rule or ProfilerRule (ours or sagemaker.debugger's)", value)
    raise ConfigStateError(msg)
