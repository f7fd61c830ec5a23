"""sagemaker-debugger-ext: a maintained, drop-in SageMaker Debugger.

SDK-compatible config objects and CreateTrainingJob payloads, an ``Estimator`` subclass of
``sagemaker.estimator.Estimator`` (v2), and a Docker-free local mode (``LocalSession``).

``Estimator`` and ``LocalSession`` are imported on first use, so ``import
sagemaker_debugger_ext`` does not import the (slow) ``sagemaker`` package.
"""

from __future__ import annotations

from typing import Any

from .config import (
    CollectionConfig,
    DataloaderProfilingConfig,
    DebuggerHookConfig,
    DetailedProfilingConfig,
    FrameworkProfile,
    HorovodProfilingConfig,
    Profiler,
    ProfilerConfig,
    ProfilerRule,
    PythonProfiler,
    PythonProfilingConfig,
    Rule,
    SMDataParallelProfilingConfig,
    TensorBoardOutputConfig,
    cProfileTimer,
    get_rule_container_image_uri,
    rule_configs,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "CollectionConfig",
    "DataloaderProfilingConfig",
    "DebuggerHookConfig",
    "DetailedProfilingConfig",
    "Estimator",
    "FrameworkProfile",
    "HorovodProfilingConfig",
    "LocalSession",
    "Profiler",
    "ProfilerConfig",
    "ProfilerRule",
    "PythonProfiler",
    "PythonProfilingConfig",
    "Rule",
    "SMDataParallelProfilingConfig",
    "TensorBoardOutputConfig",
    "cProfileTimer",
    "get_rule_container_image_uri",
    "rule_configs",
]

# Lazily imported public names (they import the slow ``sagemaker`` package): name -> (module, attribute).
_LAZY = {
    "Estimator": (".estimator", "Estimator"),
    "LocalSession": (".local", "LocalSession"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module_name, attribute = _LAZY[name]
        return getattr(importlib.import_module(module_name, __name__), attribute)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
