"""Zero code change: add the Debugger callback to a script's ``Trainer`` without touching it.

Local mode starts a Python entry point through :mod:`._launch` when the job has a Debugger
hook config. The launcher installs an :class:`~.._after_import.AfterImport` finder on
``sys.meta_path`` before the script runs; when the script imports ``transformers.trainer`` or
``lightning.pytorch.trainer.trainer`` (``from transformers import Trainer``, ``import
lightning``), the module is patched right after it loads:

- ``transformers.Trainer.__init__`` ends with ``add_debugger(self)`` unless the trainer
  already has a ``DebuggerCallback``;
- ``lightning.pytorch.Trainer.__init__`` appends a ``DebuggerCallback`` to ``callbacks``
  unless one is there.

Every patched trainer of the process shares one hook (one ``debug-output`` per job). The
framework itself is never imported here. Opt out with ``SAGEMAKER_DEBUGGER_EXT_AUTO_CALLBACK=0`` in the
job's environment.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from .._after_import import AfterImport
from .._container_env import AUTO_CALLBACK_ENV, SMDEBUG_CONFIG_FILE_PATH_ENV

__all__ = ["AUTO_CALLBACK_ENV", "LAUNCHER_MODULE", "enabled", "install", "launcher_args"]

LAUNCHER_MODULE = "sagemaker_debugger_ext.integrations._launch"
_OFF = {"0", "false", "no", "off"}
_SHARED: list[Any] = []  # the process's one TrainerHook (None when there is no config)


def enabled(environ: Mapping[str, str]) -> bool:
    """Whether a training process with this environment gets the callback added."""
    return (
        bool(environ.get(SMDEBUG_CONFIG_FILE_PATH_ENV))
        and environ.get(AUTO_CALLBACK_ENV, "1").strip().lower() not in _OFF
    )


def launcher_args(environ: Mapping[str, str]) -> list[str]:
    """The interpreter arguments that run a script through the launcher (none when not enabled)."""
    return ["-m", LAUNCHER_MODULE] if enabled(environ) else []


def _shared_hook() -> Any:
    if not _SHARED:
        from ._hook import resolve_hook  # torch: only once a trainer is made

        _SHARED.append(resolve_hook(None, {}))
    return _SHARED[0]


def _patch_transformers(module: ModuleType) -> None:
    cls = module.Trainer
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        from .transformers import DebuggerCallback, add_debugger  # transformers is loaded by now

        if not any(isinstance(cb, DebuggerCallback) for cb in self.callback_handler.callbacks):
            hook = _shared_hook()
            if hook is not None:
                add_debugger(self, hook=hook)

    cls.__init__ = __init__


def _patch_lightning(module: ModuleType) -> None:
    cls = module.Trainer
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        from .lightning import DebuggerCallback  # lightning is loaded by now

        given = kwargs.get("callbacks")
        callbacks = [] if given is None else list(given) if isinstance(given, list | tuple) else [given]
        hook = _shared_hook()
        if hook is not None and not any(isinstance(cb, DebuggerCallback) for cb in callbacks):
            callbacks.append(DebuggerCallback(hook=hook))
            kwargs["callbacks"] = callbacks
        original(self, *args, **kwargs)

    cls.__init__ = __init__


_PATCHES: dict[str, Callable[[ModuleType], None]] = {
    "transformers.trainer": _patch_transformers,
    "lightning.pytorch.trainer.trainer": _patch_lightning,
}


_FINDER = AfterImport(_PATCHES)


def install() -> None:
    """Put the patch finder first on ``sys.meta_path`` (once); patch modules already imported."""
    if any(f is _FINDER for f in sys.meta_path):
        return
    for name, patch in _PATCHES.items():
        if name in sys.modules:
            patch(sys.modules[name])
    sys.meta_path.insert(0, _FINDER)
