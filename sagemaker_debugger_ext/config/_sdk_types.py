"""Make our ``Rule``/``ProfilerRule`` pass SDK v2's ``isinstance`` checks without importing ``sagemaker``.

SDK estimators accept a rule only if ``isinstance(rule, sagemaker.debugger.Rule)`` (or
``ProfilerRule``). Those classes are ABCs, so ours are registered as virtual subclasses.
Importing ``sagemaker`` takes seconds, and this package is also imported by training
scripts and rule processes that never touch the SDK, so registration happens when the SDK's
debugger module is (or already was) imported: a meta-path finder wraps that one module's
loader and registers right after it executes. Nothing else about the import changes.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

__all__ = ["register_rule_classes"]

_SDK_MODULES = ("sagemaker.debugger.debugger", "sagemaker.core.debugger.debugger")
_classes: dict[str, type] = {}


def _register(module: ModuleType) -> None:
    for name, ours in _classes.items():
        sdk_class = getattr(module, name, None)
        if sdk_class is not None and hasattr(sdk_class, "register"):
            sdk_class.register(ours)


class _RegisteringLoader(importlib.abc.Loader):
    """Delegates to the real loader; registers our classes once the module has executed."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _register(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _SdkDebuggerFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader other finders return for the SDK's debugger module."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _SDK_MODULES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _RegisteringLoader(spec.loader)
                return spec
        return None


def register_rule_classes(rule: type, profiler_rule: type) -> None:
    """Register ``rule``/``profiler_rule`` with the SDK's ``Rule``/``ProfilerRule``, now or on import."""
    _classes.update({"Rule": rule, "ProfilerRule": profiler_rule})
    for name in _SDK_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            _register(module)
    if not any(isinstance(finder, _SdkDebuggerFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SdkDebuggerFinder())
