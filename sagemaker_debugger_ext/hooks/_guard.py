"""The opt-in "never crash training" boundary of the hooks.

With ``never_crash`` (``SAGEMAKER_DEBUGGER_EXT_NEVER_CRASH=true`` or ``Hook(...,
never_crash=True)``) a failure inside the hook is logged at warning level and the hook stops
saving instead of raising into the training loop. Off by default.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

from ._due import NOTHING_DUE

__all__ = ["NeverCrashGuard"]

_LOG = logging.getLogger("sagemaker_debugger_ext.hooks")


class NeverCrashGuard:
    """Mixin of the hooks: ``_guard()`` / ``_guarded()`` around the hook's own work."""

    never_crash: bool
    _disabled: bool
    _due: Any

    def _guarded(self, fn: Callable[..., object], *args: Any) -> None:
        """``fn(*args)`` under :meth:`_guard` (cheaper on the per-tensor paths)."""
        if not self.never_crash:
            fn(*args)
            return
        with self._guard():
            fn(*args)

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Log the hook's own failure and stop saving (when ``never_crash`` is on)."""
        if not self.never_crash:
            yield
            return
        try:
            yield
        except Exception:  # noqa: BLE001 - the documented opt-in process boundary
            _LOG.warning("sagemaker_debugger_ext hook failed; it stops saving, training continues", exc_info=True)
            self._disabled = True
            self._due = NOTHING_DUE
