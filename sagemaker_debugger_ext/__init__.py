"""sagemaker-debugger-ext: a maintained, drop-in SageMaker Debugger.

SDK-compatible config objects and CreateTrainingJob payloads, an ``Estimator`` subclass of
``sagemaker.estimator.Estimator`` (SDK v2), ``sagemaker_debugger_ext.train.ModelTrainer`` for
SDK v3, and a Docker-free local mode (``LocalSession``; ``train.local_session()`` for v3).
The core needs no SDK; docs/sdk-versions.md says which part needs which SDK major.

smdebug's top-level names are here too (``import sagemaker_debugger_ext as smd;
smd.SaveConfig(...)``, ``smd.modes.TRAIN``): ``SaveConfig``, ``SaveConfigMode``,
``ReductionConfig`` and ``modes``.

``Estimator``, ``LocalSession`` and the smdebug names are imported on first use, so ``import
sagemaker_debugger_ext`` imports neither the (slow) ``sagemaker`` package nor numpy.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._sdk_notices import quiet_sdk_notices as _quiet_sdk_notices
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

_quiet_sdk_notices()  # logging filters only: the SDK's v2 notice once, no lines about absent config files

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
    "ReductionConfig",
    "Rule",
    "SMDataParallelProfilingConfig",
    "SaveConfig",
    "SaveConfigMode",
    "TensorBoardOutputConfig",
    "cProfileTimer",
    "get_rule_container_image_uri",
    "modes",
    "rule_configs",
]

# Lazily imported public names (``sagemaker``, numpy): name -> (module, attribute; None: the module).
_LAZY: dict[str, tuple[str, str | None]] = {
    "Estimator": (".estimator", "Estimator"),
    "LocalSession": (".local", "LocalSession"),
    "ReductionConfig": (".hooks._reduction_config", "ReductionConfig"),
    "SaveConfig": (".hooks._save_config", "SaveConfig"),
    "SaveConfigMode": (".hooks._save_config", "SaveConfigMode"),
    "modes": (".modes", None),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module_name, attribute = _LAZY[name]
        module = importlib.import_module(module_name, __name__)
        return module if attribute is None else getattr(module, attribute)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
