"""The process's current TensorFlow hook (smdebug.tensorflow's ``get_hook``/``set_hook``/``del_hook``).

No TensorFlow import here: ``get_hook()`` without a hook costs nothing.
"""

from __future__ import annotations

import os
from typing import Any

from .._container_env import USE_SMDEBUG_ENV
from ..hooks._reduction_config import parse_bool

__all__ = ["del_hook", "forget", "get_hook", "set_hook"]

_HOOK: list[Any] = []


def set_hook(hook: Any) -> None:
    """Make ``hook`` the process's current hook."""
    _HOOK[:] = [hook]


def del_hook() -> None:
    """Forget the current hook (it is not closed)."""
    _HOOK.clear()


def forget(hook: Any) -> None:
    """Forget ``hook`` if it is the current one (a closed hook is not returned by get_hook)."""
    if _HOOK and _HOOK[0] is hook:
        _HOOK.clear()


def get_hook(hook_type: str | None = None, json_config_path: str | None = None,
             create_if_not_exists: bool = False) -> Any:  # fmt: skip
    """The current hook; with ``create_if_not_exists`` and none yet, a ``KerasHook`` from the JSON
    config (``hook_type`` ``"keras"`` or None; ``"session"``/``"estimator"`` raise as those hooks do).
    A missing config or ``USE_SMDEBUG=false`` gives None, as in smdebug."""
    if _HOOK or not create_if_not_exists:
        return _HOOK[0] if _HOOK else None
    if hook_type in ("session", "estimator"):
        from ._legacy import EstimatorHook, SessionHook

        (SessionHook if hook_type == "session" else EstimatorHook)()
    if not parse_bool(USE_SMDEBUG_ENV, os.environ.get(USE_SMDEBUG_ENV, "true")):
        return None
    from ._keras_hook import KerasHook

    try:
        return KerasHook.create_from_json_file(json_config_path)
    except FileNotFoundError:
        return None
