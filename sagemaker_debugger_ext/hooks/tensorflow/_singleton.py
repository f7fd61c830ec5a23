"""The process's current TensorFlow hook (smdebug.tensorflow's ``get_hook``/``set_hook``/``del_hook``).

No TensorFlow import here: ``get_hook()`` without a hook costs nothing.
"""

from __future__ import annotations

from typing import Any

from .._current import HookSlot, smdebug_enabled

__all__ = ["del_hook", "forget", "get_hook", "set_hook"]

_SLOT = HookSlot()


def set_hook(hook: Any) -> None:
    """Make ``hook`` the process's current hook."""
    _SLOT.set(hook)


def del_hook() -> None:
    """Forget the current hook (it is not closed)."""
    _SLOT.clear()


def forget(hook: Any) -> None:
    """Forget ``hook`` if it is the current one (a closed hook is not returned by get_hook)."""
    _SLOT.forget(hook)


def get_hook(hook_type: str | None = None, json_config_path: str | None = None,
             create_if_not_exists: bool = False) -> Any:  # fmt: skip
    """The current hook; with ``create_if_not_exists`` and none yet, a ``KerasHook`` from the JSON
    config (``hook_type`` ``"keras"`` or None; ``"session"``/``"estimator"`` raise as those hooks do).
    A missing config or ``USE_SMDEBUG=false`` gives None, as in smdebug."""
    current = _SLOT.get()
    if current is not None or not create_if_not_exists:
        return current
    if hook_type in ("session", "estimator"):
        from ._legacy import EstimatorHook, SessionHook

        (SessionHook if hook_type == "session" else EstimatorHook)()
    if not smdebug_enabled():
        return None
    from ._keras_hook import KerasHook

    try:
        return KerasHook.create_from_json_file(json_config_path)
    except FileNotFoundError:
        return None
