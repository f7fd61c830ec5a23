"""Make our ``Rule``/``ProfilerRule`` pass SDK v2's ``isinstance`` checks without importing ``sagemaker``.

SDK estimators accept a rule only if ``isinstance(rule, sagemaker.debugger.Rule)`` (or
``ProfilerRule``). Those classes are ABCs, so ours are registered as virtual subclasses.
Importing ``sagemaker`` takes seconds, and this package is also imported by training
scripts and rule processes that never touch the SDK, so registration happens when the SDK's
debugger module is (or already was) imported: an :class:`~.._after_import.AfterImport` finder
registers right after that one module executes. Nothing else about the import changes.
"""

from __future__ import annotations

import sys
from types import ModuleType

from .._after_import import AfterImport

__all__ = ["register_rule_classes"]

_SDK_MODULES = ("sagemaker.debugger.debugger", "sagemaker.core.debugger.debugger")
_classes: dict[str, type] = {}


def _register(module: ModuleType) -> None:
    for name, ours in _classes.items():
        sdk_class = getattr(module, name, None)
        if sdk_class is not None and hasattr(sdk_class, "register"):
            sdk_class.register(ours)


_FINDER = AfterImport(dict.fromkeys(_SDK_MODULES, _register))


def register_rule_classes(rule: type, profiler_rule: type) -> None:
    """Register ``rule``/``profiler_rule`` with the SDK's ``Rule``/``ProfilerRule``, now or on import."""
    _classes.update({"Rule": rule, "ProfilerRule": profiler_rule})
    for name in _SDK_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            _register(module)
    if not any(finder is _FINDER for finder in sys.meta_path):
        sys.meta_path.insert(0, _FINDER)
