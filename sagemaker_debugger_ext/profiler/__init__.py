"""Profiler: system monitor, framework metrics, profiler trial, profiler rules and report.

The report (matplotlib) is imported only when used.
"""

from __future__ import annotations

from typing import Any

from ._config import ProfilerSettings, read_profiler_config, update_profiler_config_file
from ._events import FrameworkEvent, SystemEvent
from ._framework_writer import FrameworkMetricsWriter
from ._system_writer import SystemMetricsWriter
from ._trial import ProfilerTrial, create_profiler_trial

__all__ = [
    "FrameworkEvent",
    "FrameworkMetricsWriter",
    "ProfilerSettings",
    "ProfilerTrial",
    "SystemEvent",
    "SystemMetricsWriter",
    "create_profiler_trial",
    "read_profiler_config",
    "render_profiler_report",
    "update_profiler_config_file",
]


def __getattr__(name: str) -> Any:
    if name == "render_profiler_report":
        from ._report import render_profiler_report

        return render_profiler_report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
