"""SDK-compatible Debugger and profiler config objects (no I/O, no ``sagemaker`` import).

Same names, constructor signatures, defaults and request dicts as ``sagemaker.debugger``
(SDK v2). Objects are mutable attrs classes whose fields are validated on assignment, so SDK v2
estimators can write to them as they do to their own; ``attrs.evolve`` derives changed copies.
"""

from __future__ import annotations

from . import rule_configs
from ._collection import CollectionConfig
from ._framework_profile import FrameworkProfile
from ._hook import DebuggerHookConfig, TensorBoardOutputConfig
from ._images import get_rule_container_image_uri
from ._metrics import (
    DataloaderProfilingConfig,
    DetailedProfilingConfig,
    HorovodProfilingConfig,
    PythonProfiler,
    PythonProfilingConfig,
    SMDataParallelProfilingConfig,
    cProfileTimer,
)
from ._profiler import Profiler, ProfilerConfig
from ._rules import ProfilerRule, Rule, RuleBase

__all__ = [
    "CollectionConfig",
    "DataloaderProfilingConfig",
    "DebuggerHookConfig",
    "DetailedProfilingConfig",
    "FrameworkProfile",
    "HorovodProfilingConfig",
    "Profiler",
    "ProfilerConfig",
    "ProfilerRule",
    "PythonProfiler",
    "PythonProfilingConfig",
    "Rule",
    "RuleBase",
    "SMDataParallelProfilingConfig",
    "TensorBoardOutputConfig",
    "cProfileTimer",
    "get_rule_container_image_uri",
    "rule_configs",
]
