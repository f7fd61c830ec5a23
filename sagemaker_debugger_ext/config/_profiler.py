"""``ProfilerConfig`` and ``Profiler`` (SageMaker Profiler v2 parameters)."""

from __future__ import annotations

from typing import Any

import attrs

from .._exceptions import ConfigValueError
from ._addresses import check_output_address
from ._checks import check_bool, check_int, is_sdk_object, type_error
from ._framework_profile import FixedProfilingParameters, FrameworkProfile

__all__ = ["Profiler", "ProfilerConfig"]

DETAILED_PROFILER_INSTANCE_TYPE = "ml.m5.4xlarge"
DETAILED_PROFILER_VOLUME_SIZE_GB = 128


@attrs.frozen
class Profiler:
    """SageMaker Profiler settings (``ProfilingParameters`` CPUProfilingDuration/SMPFileRotationSecs).

    Using it in a :class:`ProfilerConfig` adds the DetailedProfilerProcessingJobConfig
    processing rule (``ml.m5.4xlarge``, 128 GB) when no ProfilerRule is given, as the SDK does.

    .. versionadded:: 0.1.0
    """

    cpu_profiling_duration: str = attrs.field(default="3600", converter=str)
    file_rotation_interval: str = attrs.field(default="600", converter=str)

    @classmethod
    def convert(cls, value: Any, *, field: str) -> Profiler:
        """Ours, or a new one from ``sagemaker.debugger.Profiler`` (never modified).

        Raises:
            ConfigTypeError: anything else, naming ``field``.
        """
        if isinstance(value, cls):
            return value
        if is_sdk_object(value, "Profiler"):
            params = value.profiling_parameters
            return cls(params["CPUProfilingDuration"], params["SMPFileRotationSecs"])
        raise type_error(field, "a Profiler", value)

    @property
    def profiling_parameters(self) -> dict[str, str]:
        """The ``ProfilingParameters`` map (a new dict)."""
        return {"CPUProfilingDuration": self.cpu_profiling_duration, "SMPFileRotationSecs": self.file_rotation_interval}

    @property
    def instanceType(self) -> str:
        """Instance type of the detailed-profiler processing rule."""
        return DETAILED_PROFILER_INSTANCE_TYPE

    @property
    def volumeSizeInGB(self) -> int:
        """Volume size of the detailed-profiler processing rule."""
        return DETAILED_PROFILER_VOLUME_SIZE_GB


def _framework(value: Any) -> FrameworkProfile | FixedProfilingParameters | None:
    return None if value is None else FrameworkProfile.convert(value, field="ProfilerConfig.framework_profile_params")


def _profile(value: Any) -> Profiler | None:
    return None if value is None else Profiler.convert(value, field="ProfilerConfig.profile_params")


def _s3_output_path(value: Any) -> str | None:
    return check_output_address("ProfilerConfig.s3_output_path", value)


@attrs.define
class ProfilerConfig:
    """System monitoring and profiling settings (the request's ``ProfilerConfig``).

    Args:
        s3_output_path: Base URI of profiler output; ``None`` means the estimator's output path.
        system_monitor_interval_millis: System metrics interval in milliseconds.
        framework_profile_params: A :class:`FrameworkProfile` (deprecated framework metrics).
        profile_params: A :class:`Profiler` (SageMaker Profiler).
        disable_profiler: Turn monitoring and profiling off.

    .. versionadded:: 0.1.0
    """

    s3_output_path: str | None = attrs.field(default=None, converter=_s3_output_path)
    system_monitor_interval_millis: int | None = attrs.field(default=None)
    framework_profile_params: FrameworkProfile | FixedProfilingParameters | None = attrs.field(
        default=None, converter=_framework
    )
    profile_params: Profiler | None = attrs.field(default=None, converter=_profile)
    disable_profiler: bool = False

    @classmethod
    def convert(cls, value: Any, *, field: str = "profiler_config") -> ProfilerConfig:
        """Ours, or a new one from ``sagemaker.debugger.ProfilerConfig`` (never modified).

        Raises:
            ConfigTypeError: anything else, naming ``field``.
        """
        if isinstance(value, cls):
            return value
        if is_sdk_object(value, "ProfilerConfig"):
            return cls(
                s3_output_path=value.s3_output_path,
                system_monitor_interval_millis=value.system_monitor_interval_millis,
                framework_profile_params=value.framework_profile_params,
                profile_params=value.profile_params,
                disable_profiler=value.disable_profiler,
            )
        raise type_error(field, "a ProfilerConfig or None", value)

    def __attrs_post_init__(self) -> None:
        check_int("ProfilerConfig.system_monitor_interval_millis", self.system_monitor_interval_millis, minimum=1)
        check_bool("ProfilerConfig.disable_profiler", self.disable_profiler)
        if self.profile_params is not None and self.framework_profile_params is not None:
            msg = (
                "'ProfilerConfig.profile_params' and 'ProfilerConfig.framework_profile_params' cannot both be set: "
                "Profiler will not work when Framework Profiler is ON"
            )
            raise ConfigValueError(msg, field="ProfilerConfig.profile_params")

    def _to_request_dict(self) -> dict[str, Any]:
        """Return the ``ProfilerConfig`` request fragment as the SDK builds it (a new dict)."""
        request: dict[str, Any] = {}
        if self.s3_output_path is not None and self.disable_profiler is False:
            request["S3OutputPath"] = self.s3_output_path
        request["DisableProfiler"] = self.disable_profiler
        if self.system_monitor_interval_millis is not None:
            request["ProfilingIntervalInMilliseconds"] = self.system_monitor_interval_millis
        if self.framework_profile_params is not None:
            request["ProfilingParameters"] = dict(self.framework_profile_params.profiling_parameters)
        if self.profile_params is not None:
            request["ProfilingParameters"] = dict(self.profile_params.profiling_parameters)
        return request

    @classmethod
    def _to_profiler_disabled_request_dict(cls) -> dict[str, Any]:
        """Return ``{"DisableProfiler": True}`` (the UpdateTrainingJob payload to turn it off)."""
        return {"DisableProfiler": True}
