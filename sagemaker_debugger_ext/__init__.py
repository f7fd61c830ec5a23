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

# Lazily imported public names: name -> (module, attribute).
_LAZY = {
    "Estimator": (".estimator", "Estimator"),
    # LocalSession: provided by the local-mode helper in sagemaker_debugger_ext/local/.
    "LocalSession": (".local", "LocalSession"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module_name, attribute = _LAZY[name]
        try:
            module = importlib.import_module(module_name, __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}{module_name}":
                raise
            msg = f"{name} is not available yet: module {__name__}{module_name} is missing"
            raise AttributeError(msg) from exc
        return getattr(module, attribute)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
