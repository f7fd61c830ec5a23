"""Optional background file writes, so a training step does not wait for the filesystem.

A :class:`BackgroundWriter` performs atomic writes in submission order on one daemon
thread. Encoding still happens on the caller's thread; only the system calls (which
release the GIL) move. ``flush()`` waits until everything submitted is on disk and
re-raises the first failure. The owner must ``close()`` it before declaring the run
finished (e.g. before ``write_training_end``).
"""

from __future__ import annotations

import os
import queue
import threading
from types import TracebackType
from typing import Self, cast

from .._exceptions import ConfigValueError, StorageError, field_error_message
from ._files import atomic_write

__all__ = ["BackgroundWriter"]

_STOP = object()


class BackgroundWriter:
    """Ordered atomic file writes on a background thread.

    Args:
        max_pending: submitted writes that may wait at most; ``submit`` blocks beyond it
            (backpressure keeps memory bounded).
    """

    def __init__(self, *, max_pending: int = 64) -> None:
        if isinstance(max_pending, bool) or not isinstance(max_pending, int) or max_pending < 1:
            msg = field_error_message("max_pending", "an int >= 1", max_pending)
            raise ConfigValueError(msg, field="max_pending", value=max_pending)
        self._queue: queue.Queue[object] = queue.Queue(maxsize=max_pending)
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                if self._error is None:
                    path, data, new_dir = cast("tuple[str, bytes, bool]", item)
                    try:
                        atomic_write(path, data, new_dir=new_dir)
                    except OSError as exc:
                        self._error = exc
            finally:
                self._queue.task_done()

    def submit(self, path: str | os.PathLike[str], data: bytes | bytearray, *, new_dir: bool = False) -> None:
        """Queue an atomic write of ``data`` to ``path`` (after all earlier submissions).

        Raises:
            StorageError: an earlier background write failed, or the writer is closed.
        """
        self._raise_pending()
        with self._lock:
            if self._closed:
                msg = "BackgroundWriter is closed"
                raise StorageError(msg, uri=os.fspath(path))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sdx-format-writer", daemon=True)
                self._thread.start()
        self._queue.put((path, data, new_dir))

    def _raise_pending(self) -> None:
        if self._error is not None:
            exc = self._error
            msg = f"a background write failed: {exc}"
            raise StorageError(msg, uri=getattr(exc, "filename", None)) from exc

    def flush(self) -> None:
        """Wait until every submitted write is done; raise the first failure."""
        if self._thread is not None:
            self._queue.join()
        self._raise_pending()

    def close(self) -> None:
        """Flush, then stop the thread. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._queue.put(_STOP)
            thread.join()
        self._raise_pending()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
