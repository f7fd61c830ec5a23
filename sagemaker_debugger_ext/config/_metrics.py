"""Framework-profiling metrics configs (deprecated by AWS, kept for payload compatibility).

Each config renders as the SDK's "Python-ish dict string with a trailing comma", e.g.
``'{"StartStep": 5, "NumSteps": 1, }'``, which is what the service stores.
"""

from __future__ import annotations

import enum
import re
from datetime import datetime
from typing import Any, ClassVar

import attrs

from .._exceptions import ConfigValueError
from ._checks import check_bool, check_int, check_number, is_sdk_object, type_error, value_error

__all__ = [
    "DataloaderProfilingConfig",
    "DetailedProfilingConfig",
    "HorovodProfilingConfig",
    "MetricsConfigBase",
    "PythonProfiler",
    "PythonProfilingConfig",
    "SMDataParallelProfilingConfig",
    "cProfileTimer",
    "config_string",
]


class PythonProfiler(enum.Enum):
    """Python profiler used by :class:`PythonProfilingConfig`."""

    CPROFILE = "cprofile"
    PYINSTRUMENT = "pyinstrument"


class cProfileTimer(enum.Enum):
    """Timer used by cProfile in :class:`PythonProfilingConfig`."""

    TOTAL_TIME = "total_time"
    CPU_TIME = "cpu_time"
    OFF_CPU_TIME = "off_cpu_time"
    DEFAULT = "default"


def config_string(config: dict[str, Any]) -> str:
    """Render ``config`` exactly like the SDK's ``convert_json_config_to_string``."""
    parts = []
    for key, value in config.items():
        rendered = f'"{value}"' if isinstance(value, str) else f"{value}"
        parts.append(f'"{key}": {rendered}, ')
    return "{" + "".join(parts) + "}"


def _valid_unix_time(value: int) -> bool:
    try:
        datetime.fromtimestamp(value)
    except (OverflowError, ValueError, OSError):
        return False
    return True


def _enum_member(enum_cls: type[enum.Enum], field: str, value: Any) -> Any:
    if isinstance(value, enum_cls):
        return value
    raw = value.value if isinstance(value, enum.Enum) else value
    for member in enum_cls:
        if member.value == raw:
            return member
    allowed = ", ".join(f"{enum_cls.__name__}.{m.name}" for m in enum_cls)
    raise value_error(field, f"one of {allowed}", value)


@attrs.frozen
class MetricsConfigBase:
    """Step range (``start_step``/``num_steps``) or time range (``start_unix_time``/``duration``)."""

    name: ClassVar[str] = ""
    default_start_step: ClassVar[int] = 0
    default_num_steps: ClassVar[int] = 1

    start_step: int | None = None
    num_steps: int | None = None
    start_unix_time: int | None = None
    duration: float | None = None
    profile_default_steps: bool = False

    @classmethod
    def convert(cls, value: Any, *, field: str) -> Any:
        """Ours, or a new one from the SDK's class of the same name (never modified).

        Raises:
            ConfigTypeError: anything else, naming ``field``.
        """
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

    def __attrs_post_init__(self) -> None:
        cls = type(self).__name__
        check_bool(f"{cls}.profile_default_steps", self.profile_default_steps)
        start, num, t0, dur = self._effective()
        check_int(f"{cls}.start_step", start, minimum=0)
        check_int(f"{cls}.num_steps", num, minimum=1)
        if t0 is not None:
            if isinstance(t0, bool) or not isinstance(t0, int):
                raise type_error(f"{cls}.start_unix_time", "an integer Unix time", t0)
            if not _valid_unix_time(t0):
                raise value_error(f"{cls}.start_unix_time", "a valid integer Unix time", t0)
        check_number(f"{cls}.duration", dur, exclusive_minimum=0)
        has_steps = start is not None or num is not None
        has_time = t0 is not None or dur is not None
        if has_steps and has_time:
            msg = (
                f"{cls}: both a step range (start_step/num_steps = {start!r}/{num!r}) and a time range "
                f"(start_unix_time/duration = {t0!r}/{dur!r}) were given; use only one of the two"
            )
            raise ConfigValueError(msg, field=f"{cls}.start_step")

    def _effective(self) -> tuple[Any, Any, Any, Any]:
        start, num, t0, dur = self.start_step, self.num_steps, self.start_unix_time, self.duration
        if self.profile_default_steps or (start is None and num is None and t0 is None and dur is None):
            start, num = self.default_start_step, self.default_num_steps
        return start, num, t0, dur

    def _to_json(self) -> dict[str, Any]:
        """Return the range as the SDK's dict (step range defaults applied)."""
        start, num, t0, dur = self._effective()
        if start is not None or num is not None:
            if start is None:
                start = 0
            elif num is None:
                num = 1
            return {"StartStep": start, "NumSteps": num}
        out: dict[str, Any] = {}
        if t0 is not None:
            out["StartTimeInSecSinceEpoch"] = t0
        if dur is not None:
            out["Duration"] = dur
        return out

    def to_json_string(self) -> str:
        """Return the config as the SDK's dict-like string."""
        return config_string(self._to_json())


@attrs.frozen
class DetailedProfilingConfig(MetricsConfigBase):
    """Detailed (framework operator) profiling; default step 5 for 1 step."""

    name: ClassVar[str] = "DetailedProfilingConfig"
    default_start_step: ClassVar[int] = 5


def _regex(value: Any) -> str:
    if not isinstance(value, str):
        raise type_error("DataloaderProfilingConfig.metrics_regex", "a regular expression string", value)
    try:
        re.compile(value)
    except re.error as exc:
        raise value_error(
            "DataloaderProfilingConfig.metrics_regex", f"a valid regular expression ({exc})", value
        ) from exc
    return value


@attrs.frozen
class DataloaderProfilingConfig(MetricsConfigBase):
    """Data-loader profiling; default step 7 for 1 step; ``metrics_regex`` filters metrics."""

    name: ClassVar[str] = "DataloaderProfilingConfig"
    default_start_step: ClassVar[int] = 7
    metrics_regex: str = attrs.field(default=".*", converter=_regex)

    def _to_json(self) -> dict[str, Any]:
        out = super()._to_json()
        out["MetricsRegex"] = self.metrics_regex
        return out


def _python_profiler(value: Any) -> PythonProfiler:
    member: PythonProfiler = _enum_member(PythonProfiler, "PythonProfilingConfig.python_profiler", value)
    return member


def _cprofile_timer(value: Any) -> cProfileTimer:
    member: cProfileTimer = _enum_member(cProfileTimer, "PythonProfilingConfig.cprofile_timer", value)
    return member


@attrs.frozen
class PythonProfilingConfig(MetricsConfigBase):
    """cProfile / pyinstrument profiling; default steps 9-11 (3 steps)."""

    name: ClassVar[str] = "PythonProfilingConfig"
    default_start_step: ClassVar[int] = 9
    default_num_steps: ClassVar[int] = 3
    python_profiler: PythonProfiler = attrs.field(default=PythonProfiler.CPROFILE, converter=_python_profiler)
    cprofile_timer: cProfileTimer = attrs.field(default=cProfileTimer.TOTAL_TIME, converter=_cprofile_timer)

    def _to_json(self) -> dict[str, Any]:
        out = super()._to_json()
        out["ProfilerName"] = self.python_profiler.value
        if self.python_profiler is not PythonProfiler.PYINSTRUMENT:
            timer = cProfileTimer.DEFAULT if self.profile_default_steps else self.cprofile_timer
            out["cProfileTimer"] = timer.value
        return out


@attrs.frozen
class HorovodProfilingConfig(MetricsConfigBase):
    """Horovod profiling; default step 13 for 1 step."""

    name: ClassVar[str] = "HorovodProfilingConfig"
    default_start_step: ClassVar[int] = 13


@attrs.frozen
class SMDataParallelProfilingConfig(MetricsConfigBase):
    """SageMaker data-parallel profiling; default step 15 for 1 step."""

    name: ClassVar[str] = "SMDataParallelProfilingConfig"
    default_start_step: ClassVar[int] = 15
