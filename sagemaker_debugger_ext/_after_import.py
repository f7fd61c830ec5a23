"""Run a function on a module right after it is imported, without importing it ourselves.

An :class:`AfterImport` finder on ``sys.meta_path`` finds nothing itself: for the modules it
names it asks the other finders for the spec and wraps that spec's loader, so that the
module executes as it would, then goes to its function. Nothing else about the import changes.
Used by the SDK's rule-class registration (``config._sdk_types``) and the trainer auto-patch
(``integrations._autopatch``).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["AfterImport"]


class _ThenLoader(importlib.abc.Loader):
    """Delegates to the real loader; calls ``then(module)`` once the module has executed."""

    def __init__(self, loader: Any, then: Callable[[ModuleType], None]) -> None:
        self._loader = loader
        self._then = then

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._then(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class AfterImport(importlib.abc.MetaPathFinder):
    """Calls ``then[name](module)`` right after the module ``name`` executes (see the module doc)."""

    def __init__(self, then: Mapping[str, Callable[[ModuleType], None]]) -> None:
        self._then = then

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        then = self._then.get(fullname)
        if then is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _ThenLoader(spec.loader, then)
                return spec
        return None
