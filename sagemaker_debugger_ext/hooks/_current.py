"""The process's current hook of one framework: smdebug's ``get_hook`` / ``set_hook`` / ``del_hook``.

smdebug keeps one hook per process and framework. Each framework owns one :class:`HookSlot`
(this module's for the generic, XGBoost and MXNet hooks; ``hooks.pytorch._singleton``;
``hooks.tensorflow._singleton``); this is the one implementation they share, and
:func:`smdebug_enabled` is the one reading of ``USE_SMDEBUG``. ``core.singleton_utils``,
``xgboost`` and ``mxnet`` re-export the functions below under smdebug's names.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping
from typing import Any, final

from .._container_env import USE_SMDEBUG_ENV
from .._exceptions import ConfigTypeError, field_error_message
from ._reduction_config import parse_bool

__all__ = ["HookSlot", "del_hook", "get_hook", "set_hook", "smdebug_enabled"]


def smdebug_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """``USE_SMDEBUG`` (default true), parsed as a bool: false means ``get_hook`` creates no hook.

    Raises:
        HookConfigError: a value that is not a bool.
    """
    env = os.environ if environ is None else environ
    return parse_bool(USE_SMDEBUG_ENV, env.get(USE_SMDEBUG_ENV, "true"))


@final
class HookSlot:
    """Holds the current hook: strongly when set explicitly, weakly when only tracked.

    A hook given to :meth:`set` stays alive (as in smdebug's ``set_hook``); a hook given to
    :meth:`track` (the newest hook created, for frameworks whose hooks register themselves
    weakly) is returned while something else keeps it alive.

    .. versionadded:: 0.1.0
    """

    def __init__(self) -> None:
        self._pinned: Any = None
        self._tracked: weakref.ReferenceType[Any] | None = None

    def get(self) -> Any:
        """The current hook, or None."""
        if self._pinned is not None:
            return self._pinned
        return self._tracked() if self._tracked is not None else None

    def set(self, hook: Any) -> None:
        """Make ``hook`` the current hook and keep it alive (None clears)."""
        self._pinned = hook
        self._tracked = None

    def track(self, hook: Any) -> None:
        """Make ``hook`` the current hook without keeping it alive."""
        self._pinned = None
        self._tracked = weakref.ref(hook)

    def clear(self) -> None:
        """Forget the current hook (it is not closed)."""
        self._pinned = None
        self._tracked = None

    def forget(self, hook: Any) -> None:
        """Forget ``hook`` if it is the current one."""
        if self.get() is hook:
            self.clear()


_SLOT = HookSlot()  # smdebug's process-wide hook of the generic, XGBoost and MXNet hooks


def set_hook(custom_hook: Any) -> None:
    """Make ``custom_hook`` the current hook.

    Raises:
        ConfigTypeError: not a hook of this package.
    """
    from ._hook import BaseHook  # the hook machinery only when a hook is set

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
