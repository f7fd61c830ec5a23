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

__all__ = ["CrashGuard"]

_LOG = logging.getLogger("sagemaker_debugger_ext.hooks")


class CrashGuard:
    """The boundary a hook runs its own work in (the hook binds :meth:`run` as its
    ``_guarded`` and :meth:`scope` as its ``_guard``).

    Args:
        never_crash: log the hook's failures and stop saving instead of raising.
        context: names the job's failure file for a full disk (see ``_disk_full``).
        on_failure: called when a failure is swallowed: the hook stops saving.
    """

    __slots__ = ("_context", "_on_failure", "never_crash")

    def __init__(self, never_crash: bool, context: TrainingContext, on_failure: Callable[[], None]) -> None:
        self.never_crash = never_crash
        self._context = context
        self._on_failure = on_failure

    def run(self, fn: Callable[..., object], *args: Any) -> None:
        """``fn(*args)`` under :meth:`scope` (cheaper on the per-tensor paths)."""
        if not self.never_crash:
            try:
                fn(*args)
            except StorageError as exc:  # a full disk: named in the job's failure file (see _disk_full)
                report_disk_full(exc, self._context)
                raise
            return
        with self.scope():
            fn(*args)

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """Log the hook's own failure and stop saving (when ``never_crash`` is on)."""
        if not self.never_crash:
            try:
                yield
            except StorageError as exc:
                report_disk_full(exc, self._context)
                raise
            return
        try:
            yield
        except Exception:  # noqa: BLE001 - the documented opt-in process boundary
            _LOG.warning("sagemaker_debugger_ext hook failed; it stops saving, training continues", exc_info=True)
            self._on_failure()
