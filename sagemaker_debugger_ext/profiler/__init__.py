"""Profiler: system monitor, framework metrics, profiler trial, profiler rules and report.

The report imports matplotlib only when it draws one.
"""

from __future__ import annotations

from ._config import ProfilerSettings, read_profiler_config, update_profiler_config_file
from ._events import FrameworkEvent, SystemEvent
from ._framework_writer import FrameworkMetricsWriter
from ._system_writer import SystemMetricsWriter
from ._trial import ProfilerTrial, create_profiler_trial
from .rules._report import render_profiler_report

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
