"""The process's current PyTorch hook (smdebug.pytorch's ``get_hook``/``set_hook``/``del_hook``).

The newest hook created is the current one, held weakly, unless :func:`set_hook` pinned one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._current import HookSlot, smdebug_enabled

if TYPE_CHECKING:
    from ._hook import Hook

__all__ = ["current_hook", "del_hook", "get_hook", "set_hook", "track"]

_SLOT = HookSlot()  # smdebug's get_hook() singleton (compat): set_hook() pins, the newest hook is weak


def current_hook() -> Hook | None:
    """The hook given to :func:`set_hook` last, else the most recently created PyTorch hook
    that is still alive."""
    hook: Hook | None = _SLOT.get()
    return hook


def get_hook(json_config_path: str | None = None, create_if_not_exists: bool = False) -> Hook | None:
    """The hook created last in this process (smdebug.pytorch's ``get_hook``).

    With ``create_if_not_exists`` and no hook yet, one is created from the JSON config; a
    missing config file or ``USE_SMDEBUG=false`` gives None, as in smdebug.
    """
    hook = current_hook()
    if hook is not None or not create_if_not_exists:
        return hook
    if not smdebug_enabled():
        return None
    from ._hook import Hook

    try:
        return Hook.create_from_json_file(json_config_path)
    except FileNotFoundError:
        return None


def set_hook(hook: Hook | None) -> None:
    """Make ``hook`` the one ``get_hook()`` returns (smdebug's ``set_hook``)."""
    _SLOT.set(hook)


def del_hook() -> None:
    """Forget the process-wide hook: ``get_hook()`` returns None (or creates a new one)."""
    _SLOT.clear()


def track(hook: Hook) -> None:
    """Make ``hook`` (just created) the process's hook, held weakly unless :func:`set_hook` pins one."""
    _SLOT.track(hook)
