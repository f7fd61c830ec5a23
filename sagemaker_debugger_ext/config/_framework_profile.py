"""``FrameworkProfile``: which framework metrics to profile, as ``ProfilingParameters``."""

from __future__ import annotations

from typing import Any

import attrs

from ._checks import check_int, check_number, check_str, is_sdk_object, type_error
from ._metrics import (
    DataloaderProfilingConfig,
    DetailedProfilingConfig,
    HorovodProfilingConfig,
    MetricsConfigBase,
    PythonProfilingConfig,
    SMDataParallelProfilingConfig,
)

__all__ = ["ALL_METRIC_CONFIGS", "FixedProfilingParameters", "FrameworkProfile"]

ALL_METRIC_CONFIGS: tuple[type[MetricsConfigBase], ...] = (
    DetailedProfilingConfig,
    DataloaderProfilingConfig,
    PythonProfilingConfig,
    HorovodProfilingConfig,
    SMDataParallelProfilingConfig,
)


def _metric(value: Any, cls: type[MetricsConfigBase], field: str) -> Any:
    return None if value is None else cls.convert(value, field=f"FrameworkProfile.{field}")


def _detailed(value: Any) -> DetailedProfilingConfig | None:
    result: DetailedProfilingConfig | None = _metric(value, DetailedProfilingConfig, "detailed_profiling_config")
    return result


def _dataloader(value: Any) -> DataloaderProfilingConfig | None:
    result: DataloaderProfilingConfig | None = _metric(value, DataloaderProfilingConfig, "dataloader_profiling_config")
    return result


def _python(value: Any) -> PythonProfilingConfig | None:
    result: PythonProfilingConfig | None = _metric(value, PythonProfilingConfig, "python_profiling_config")
    return result


def _horovod(value: Any) -> HorovodProfilingConfig | None:
    result: HorovodProfilingConfig | None = _metric(value, HorovodProfilingConfig, "horovod_profiling_config")
    return result


def _smdataparallel(value: Any) -> SMDataParallelProfilingConfig | None:
    result: SMDataParallelProfilingConfig | None = _metric(
        value, SMDataParallelProfilingConfig, "smdataparallel_profiling_config"
    )
    return result


@attrs.frozen
class FrameworkProfile:
    """Framework-metrics profiling settings (SDK-compatible; deprecated by AWS for PT>=2.0).

    Precedence, as in the SDK: explicit ``*_profiling_config`` objects (only those are
    sent); else a step or time range applied to all five configs; else every config with
    its default steps.

    .. versionadded:: 0.1.0
    """

    local_path: str = "/opt/ml/output/profiler"
    file_max_size: int = 10485760
    file_close_interval: float = 60
    file_open_fail_threshold: int = 50
    detailed_profiling_config: DetailedProfilingConfig | None = attrs.field(default=None, converter=_detailed)
    dataloader_profiling_config: DataloaderProfilingConfig | None = attrs.field(default=None, converter=_dataloader)
    python_profiling_config: PythonProfilingConfig | None = attrs.field(default=None, converter=_python)
    horovod_profiling_config: HorovodProfilingConfig | None = attrs.field(default=None, converter=_horovod)
    smdataparallel_profiling_config: SMDataParallelProfilingConfig | None = attrs.field(
        default=None, converter=_smdataparallel
    )
    start_step: int | None = None
    num_steps: int | None = None
    start_unix_time: int | None = None
    duration: float | None = None

    @classmethod
    def convert(cls, value: Any, *, field: str) -> FrameworkProfile | FixedProfilingParameters:
        """Ours, or the parameters of a ``sagemaker.debugger.FrameworkProfile`` copied as they are.

        Raises:
            ConfigTypeError: anything else, naming ``field``.
        """
        if isinstance(value, (cls, FixedProfilingParameters)):
            return value
        if is_sdk_object(value, "FrameworkProfile"):
            return FixedProfilingParameters(dict(value.profiling_parameters))
        raise type_error(field, "a FrameworkProfile", value)

    def __attrs_post_init__(self) -> None:
        check_str("FrameworkProfile.local_path", self.local_path)
        check_int("FrameworkProfile.file_max_size", self.file_max_size, minimum=1, optional=False)
        check_number(
            "FrameworkProfile.file_close_interval", self.file_close_interval, exclusive_minimum=0, optional=False
        )
        check_int("FrameworkProfile.file_open_fail_threshold", self.file_open_fail_threshold, minimum=1, optional=False)
        if not self._custom_configs() and self._has_range():
            # validate the shared range by building the configs once
            self._range_configs()

    def _custom_configs(self) -> list[MetricsConfigBase]:
        configs = [
            self.detailed_profiling_config,
            self.dataloader_profiling_config,
            self.python_profiling_config,
            self.horovod_profiling_config,
            self.smdataparallel_profiling_config,
        ]
        return [c for c in configs if c is not None]

    def _has_range(self) -> bool:
        return not (
            self.start_step is None
            and self.num_steps is None
            and self.start_unix_time is None
            and self.duration is None
        )

    def _range_configs(self) -> list[MetricsConfigBase]:
        return [
            cls(
                start_step=self.start_step,
                num_steps=self.num_steps,
                start_unix_time=self.start_unix_time,
                duration=self.duration,
            )
            for cls in ALL_METRIC_CONFIGS
        ]

    @property
    def profiling_parameters(self) -> dict[str, str]:
        """The ``ProfilingParameters`` map this profile sends (a new dict each time)."""
        params = {
            "LocalPath": self.local_path,
            "RotateMaxFileSizeInBytes": str(self.file_max_size),
            "RotateFileCloseIntervalInSeconds": str(self.file_close_interval),
            "FileOpenFailThreshold": str(self.file_open_fail_threshold),
        }
        configs = self._custom_configs()
        if not configs:
            if self._has_range():
                configs = self._range_configs()
            else:
                configs = [cls(profile_default_steps=True) for cls in ALL_METRIC_CONFIGS]
        for config in configs:
            params[config.name] = config.to_json_string()
        return params


@attrs.frozen
class FixedProfilingParameters:
    """A ready-made ``ProfilingParameters`` map (from an SDK object, or ``{}`` to turn metrics off)."""

    profiling_parameters: dict[str, str] = attrs.field(factory=dict, converter=dict)
