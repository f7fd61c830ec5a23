"""A single background thread that writes finished steps' files.

Training hands over a closed step (its encoded records) and goes on; file creation,
``write`` and rename happen here, with the GIL released during the I/O. The queue is
bounded, so a disk slower than training slows training instead of growing memory.
``drain()`` waits for every submitted write and re-raises the first failure.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

__all__ = ["BackgroundWriter"]

_STOP = object()


class BackgroundWriter:
    """Runs submitted callables in order on one daemon thread (started on first use)."""

    def __init__(self, max_pending: int = 4) -> None:
        self._queue: queue.Queue[object] = queue.Queue(maxsize=max_pending)
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def submit(self, fn: Callable[[], object]) -> None:
        """Queue ``fn``; raises the error of an earlier job, if any."""
        self._raise_pending()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sagemaker-debugger-ext-writer", daemon=True)
            self._thread.start()
        self._queue.put(fn)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                if self._error is None:
                    item()  # type: ignore[operator]
            except BaseException as exc:  # noqa: BLE001 - handed back to the training thread
                self._error = exc
            finally:
                self._queue.task_done()

    def drain(self) -> None:
        """Wait until every queued job ran; raise the first failure."""
        if self._thread is not None:
            self._queue.join()
        self._raise_pending()

    def close(self) -> None:
        """Drain and stop the thread."""
        try:
            self.drain()
        finally:
            if self._thread is not None:
                self._queue.put(_STOP)
                self._thread.join()
                self._thread = None

    def _raise_pending(self) -> None:
        if self._error is not None:
            err, self._error = self._error, None
            raise err
