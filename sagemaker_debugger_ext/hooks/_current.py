"""The process's current hook of one framework: smdebug's ``get_hook`` / ``set_hook`` / ``del_hook``.

smdebug keeps one hook per process and framework. Each framework module owns one
:class:`HookSlot` (``core.singleton_utils`` for the generic and XGBoost hooks,
``pytorch``, ``tensorflow``); this is the one implementation they share.
"""

from __future__ import annotations

import weakref
from typing import Any, final

__all__ = ["HookSlot"]


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
