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

from .._exceptions import StorageError
from ._context import TrainingContext
from ._disk_full import report_disk_full
from ._due import NOTHING_DUE

__all__ = ["NeverCrashGuard"]

_LOG = logging.getLogger("sagemaker_debugger_ext.hooks")


class NeverCrashGuard:
    """Mixin of the hooks: ``_guard()`` / ``_guarded()`` around the hook's own work."""

    never_crash: bool
    context: TrainingContext
    _disabled: bool
    _due: Any

    def _guarded(self, fn: Callable[..., object], *args: Any) -> None:
        """``fn(*args)`` under :meth:`_guard` (cheaper on the per-tensor paths)."""
        if not self.never_crash:
            try:
                fn(*args)
            except StorageError as exc:  # a full disk: named in the job's failure file (see _disk_full)
                report_disk_full(exc, self.context)
                raise
            return
        with self._guard():
            fn(*args)

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """Log the hook's own failure and stop saving (when ``never_crash`` is on)."""
        if not self.never_crash:
            try:
                yield
            except StorageError as exc:
                report_disk_full(exc, self.context)
                raise
            return
        try:
            yield
        except Exception:  # noqa: BLE001 - the documented opt-in process boundary
            _LOG.warning("sagemaker_debugger_ext hook failed; it stops saving, training continues", exc_info=True)
            self._disabled = True
            self._due = NOTHING_DUE
