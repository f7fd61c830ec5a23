"""Optional background file writes, so a training step does not wait for the filesystem.

A :class:`BackgroundWriter` writes each file's ``.tmp`` copy on a small thread pool (file
creation is the slow part on a busy disk, and it overlaps well), and one committer thread
renames them into place strictly in submission order, so readers see exactly what the
synchronous writer would show, in the same order (an event file before its index, step
after step). Encoding stays on the caller's thread; only system calls (which release the
GIL) move. ``flush()`` waits until everything submitted is visible and re-raises the first
failure. The owner must ``close()`` it before declaring the run finished (e.g. before
``write_training_end``).
"""

from __future__ import annotations

import os
import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import cast

from .._exceptions import ConfigValueError, StorageError, field_error_message
from ._closing import ClosesOnExit

__all__ = ["BackgroundWriter"]

_STOP = object()
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


def _prepare(target: str, data: bytes | bytearray, new_dir: bool) -> str:
    """Write ``data`` to ``target.tmp`` (creating the folder); return the tmp path."""
    parent = os.path.dirname(target)
    if new_dir:
        os.makedirs(parent, exist_ok=True)
    tmp = target + ".tmp"
    try:
        fd = os.open(tmp, _FLAGS, 0o666)
    except FileNotFoundError:
        os.makedirs(parent, exist_ok=True)
        fd = os.open(tmp, _FLAGS, 0o666)
    try:
        view = memoryview(data).cast("B")
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return tmp


class BackgroundWriter(ClosesOnExit):
    """Atomic file writes off the caller's thread, made visible in submission order.

    Args:
        threads: threads writing ``.tmp`` files concurrently.
        max_pending: submitted writes that may wait at most; ``submit`` blocks beyond it
            (backpressure keeps memory bounded).
    """

    def __init__(self, *, threads: int = 4, max_pending: int = 64) -> None:
        for name, val in (("threads", threads), ("max_pending", max_pending)):
            if isinstance(val, bool) or not isinstance(val, int) or val < 1:
                msg = field_error_message(name, "an int >= 1", val)
                raise ConfigValueError(msg, field=name, value=val)
        self._threads = threads
        self._queue: queue.Queue[object] = queue.Queue(maxsize=max_pending)
        self._pool: ThreadPoolExecutor | None = None
        self._committer: threading.Thread | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _commit_loop(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                fut, target = cast("tuple[Future[str], str]", item)
                try:
                    tmp = fut.result()
                    if self._error is None:
                        os.replace(tmp, target)
                except OSError as exc:
                    if self._error is None:
                        self._error = exc
            finally:
                self._queue.task_done()

    def submit(self, path: str | os.PathLike[str], data: bytes | bytearray, *, new_dir: bool = False) -> None:
        """Queue an atomic write of ``data`` to ``path``, visible after all earlier ones.

        Raises:
            StorageError: an earlier background write failed, or the writer is closed.
        """
        self._raise_pending()
        target = os.fspath(path)
        with self._lock:
            if self._closed:
                msg = "BackgroundWriter is closed"
                raise StorageError(msg, uri=target)
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="sdx-format-io")
                self._committer = threading.Thread(target=self._commit_loop, name="sdx-format-commit", daemon=True)
                self._committer.start()
            pool = self._pool
        self._queue.put((pool.submit(_prepare, target, data, new_dir), target))

    def _raise_pending(self) -> None:
        if self._error is not None:
            exc = self._error
            msg = f"a background write failed: {exc}"
            raise StorageError(msg, uri=getattr(exc, "filename", None)) from exc

    def flush(self) -> None:
        """Wait until every submitted write is visible; raise the first failure."""
        if self._committer is not None:
            self._queue.join()
        self._raise_pending()

    def close(self) -> None:
        """Flush, then stop the threads. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            committer, pool = self._committer, self._pool
        if committer is not None and pool is not None:
            self._queue.put(_STOP)
            committer.join()
            pool.shutdown(wait=True)
        self._raise_pending()

