"""The built-in profiler rules (every rule smdebug_rulesconfig names) and ProfilerReport."""

from __future__ import annotations

from ._base import Param, ProfilerRule, Window
from ._cli import build_rule, run_rule
from ._follow import follow_trial
from ._framework_rules import Dataloader, MaxInitializationTime, StepOutlier
from ._registry import PROFILER_RULES, ProfilerReport, get_profiler_rule_class
from ._system_rules import (
    BatchSize,
    CPUBottleneck,
    GPUMemoryIncrease,
    IOBottleneck,
    LoadBalancing,
    LowGPUUtilization,
    OverallSystemUsage,
)

__all__ = [
    "PROFILER_RULES",
    "BatchSize",
    "CPUBottleneck",
    "Dataloader",
    "GPUMemoryIncrease",
    "IOBottleneck",
    "LoadBalancing",
    "LowGPUUtilization",
    "MaxInitializationTime",
    "OverallSystemUsage",
    "Param",
    "ProfilerReport",
    "ProfilerRule",
    "StepOutlier",
    "Window",
    "build_rule",
    "follow_trial",
    "get_profiler_rule_class",
    "run_rule",
]
