"""A local job's launch options: the supervisor's tuning, read once from the job's ``launch.json``.

:class:`~sagemaker_debugger_ext.local.api._client.LocalTrainingClient` writes ``launch.json`` from
its ``settings`` (``PollSeconds``, ``StopGraceSeconds``, ...); the supervisor reads it into a
frozen :class:`LaunchOptions` and never looks at the raw keys again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..._exceptions import ConfigValueError, field_error_message
from ..._string_values import to_bool
from ._rule_containers import DEBUG_RULE_MODULE, PROFILER_RULE_MODULE

__all__ = ["SERVICE_STOP_GRACE_S", "LaunchOptions", "training_grace_s"]

#: SageMaker's time between SIGTERM and SIGKILL when a training job is stopped (StopTrainingJob,
#: a rule's StopTraining, MaxRuntimeInSeconds): "the algorithm has 120 seconds to save the model".
SERVICE_STOP_GRACE_S = 120.0


def training_grace_s(request: Mapping[str, Any], grace_s: float) -> float:
    """The stop grace of a job's training processes: the service's 120 s for an ``ml.*`` instance
    type (``serve`` emulating SageMaker: a self-hosted launcher's final sync must get it), else ``grace_s``."""
    instance_type = str((request.get("ResourceConfig") or {}).get("InstanceType") or "")
    return max(grace_s, SERVICE_STOP_GRACE_S) if instance_type.startswith("ml.") else grace_s


def _seconds(key: str, default: float) -> Any:
    def convert(value: Any) -> float:
        if value is None:
            return default
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            seconds = -1.0
        if isinstance(value, bool) or not seconds >= 0:
            raise ConfigValueError(field_error_message(key, "a number of seconds >= 0", value), field=key, value=value)
        return seconds

    return attrs.field(default=default, converter=convert)


def _text(default: str) -> Any:
    def convert(value: Any) -> str:
        return default if value in (None, "") else str(value)

    return attrs.field(default=default, converter=convert)


def _optional_text(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def _bool_default_true(value: Any) -> bool:
    return True if value is None else to_bool(value)


def _handler_items(value: Any) -> tuple[Mapping[str, Any], ...]:
    return tuple(value or ())


#: LaunchOptions field -> launch.json key (the client's ``settings`` names)
_KEYS = {
    "region": "Region",
    "output_path": "OutputPath",
    "caller_cwd": "CallerCwd",
    "poll_s": "PollSeconds",
    "stop_grace_s": "StopGraceSeconds",
    "rule_wait_s": "RuleWaitSeconds",
    "rule_poll_s": "RulePollSeconds",
    "sync_interval_s": "SyncIntervalSeconds",
    "start_monitor": "StartMonitor",
    "debug_rule_module": "DebugRuleModule",
    "profiler_rule_module": "ProfilerRuleModule",
    "event_handlers": "EventHandlers",
    "event_bus_name": "EventBusName",
}


@attrs.frozen(kw_only=True)
class LaunchOptions:
    """The supervisor's options for one job (``launch.json``), with their defaults.

    .. versionadded:: 0.1.0
    """

    region: str = _text("us-east-1")
    output_path: str = _text("")
    caller_cwd: str | None = attrs.field(default=None, converter=_optional_text)
    poll_s: float = _seconds("PollSeconds", 0.05)
    stop_grace_s: float = _seconds("StopGraceSeconds", 10.0)
    rule_wait_s: float = _seconds("RuleWaitSeconds", 120.0)
    rule_poll_s: float = _seconds("RulePollSeconds", 0.1)
    sync_interval_s: float = _seconds("SyncIntervalSeconds", 1.0)
    start_monitor: bool = attrs.field(default=True, converter=_bool_default_true)
    debug_rule_module: str = _text(DEBUG_RULE_MODULE)
    profiler_rule_module: str = _text(PROFILER_RULE_MODULE)
    event_handlers: tuple[Mapping[str, Any], ...] = attrs.field(default=(), converter=_handler_items)
    event_bus_name: str | None = attrs.field(default=None, converter=_optional_text)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LaunchOptions:
        """Options from the ``launch.json`` object (missing keys take their defaults).

        Raises:
            ConfigValueError: a value of the wrong kind, naming the key.
        """
        values: dict[str, Any] = {field: data.get(key) for field, key in _KEYS.items()}
        return cls(**values)

    def event_settings(self) -> dict[str, Any]:
        """The keys the event dispatcher reads (``Region``, ``EventHandlers``, ``EventBusName``)."""
        return {"Region": self.region, "EventHandlers": list(self.event_handlers), "EventBusName": self.event_bus_name}
