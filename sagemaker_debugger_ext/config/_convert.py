"""Accept ``sagemaker.debugger`` objects wherever ours are accepted: convert at the boundary.

Each config class converts the SDK's object itself (``CollectionConfig.convert``,
``DebuggerHookConfig.convert``, ...: a new object of ours; the SDK object is never
modified). This module names those conversions for the estimator, and converts rules,
where the SDK object's class decides which of ours (``Rule`` or ``ProfilerRule``) it becomes.
``sagemaker`` is not imported: objects are recognised by class name and module.
"""

from __future__ import annotations

from typing import Any

from .._exceptions import ConfigStateError, field_error_message
from ._checks import is_sdk_object
from ._collection import CollectionConfig
from ._framework_profile import FixedProfilingParameters, FrameworkProfile
from ._hook import DebuggerHookConfig, TensorBoardOutputConfig
from ._metrics import MetricsConfigBase
from ._profiler import Profiler, ProfilerConfig
from ._rules import ProfilerRule, Rule

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

to_collection_config = CollectionConfig.convert
to_hook_config = DebuggerHookConfig.convert
to_tensorboard_config = TensorBoardOutputConfig.convert
to_profiler = Profiler.convert
to_profiler_config = ProfilerConfig.convert


def to_framework_profile(value: Any, *, field: str) -> FrameworkProfile | FixedProfilingParameters:
    """Our ``FrameworkProfile`` (or fixed parameters copied from an SDK object)."""
    return FrameworkProfile.convert(value, field=field)


def to_metrics_config(value: Any, cls: type[MetricsConfigBase], *, field: str) -> Any:
    """Our metrics config of class ``cls`` for ours or the SDK's equivalent."""
    return cls.convert(value, field=field)


def to_rule(value: Any, *, field: str = "rules[]") -> Any:
    """Return our ``Rule``/``ProfilerRule`` for ours or the SDK's; ``ConfigStateError`` otherwise."""
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
