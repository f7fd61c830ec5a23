"""``smdebug.core.singleton_utils``: the process's current hook (``get_hook`` / ``set_hook`` / ``del_hook``).

smdebug keeps one hook per process: each framework's ``Hook`` registers itself when
created, ``set_hook`` replaces it, ``del_hook`` forgets it.
"""

from __future__ import annotations

from typing import Any

from .._exceptions import ConfigTypeError, field_error_message
from ..hooks._current import HookSlot
from ..hooks._hook import BaseHook

__all__ = ["del_hook", "get_hook", "set_hook"]

_SLOT = HookSlot()


def set_hook(custom_hook: Any) -> None:
    """Make ``custom_hook`` the current hook.

    Raises:
        ConfigTypeError: not a hook of this package.
    """
    if not isinstance(custom_hook, BaseHook):
        msg = field_error_message("custom_hook", "a Hook of sagemaker_debugger_ext", custom_hook)
        raise ConfigTypeError(msg, field="custom_hook", value=custom_hook)
    _SLOT.set(custom_hook)


def del_hook() -> None:
    """Forget the current hook (a later ``get_hook`` returns None or creates one)."""
    _SLOT.clear()


def get_hook(*, json_config_path: str | None = None, hook_class: type | None = None,
             create_if_not_exists: bool = False) -> Any:  # fmt: skip
    """The current hook (of ``hook_class`` when given); with ``create_if_not_exists`` and none,
    one is created from the JSON config (None if there is no config file), as in smdebug."""
    hook = _SLOT.get()
    if hook is not None and hook_class is not None and not isinstance(hook, hook_class):
        hook = None
        _SLOT.clear()
    if hook is None and create_if_not_exists and hook_class is not None:
        try:
            hook = getattr(hook_class, "create_from_json_file")(json_config_path)  # noqa: B009 - any hook class
        except FileNotFoundError:
            return None
        set_hook(hook)
    return hook
