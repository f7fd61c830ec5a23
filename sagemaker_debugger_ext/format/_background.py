"""Background file writes, so a training step does not wait for the filesystem.

A :class:`BackgroundWriter` owns one thread that performs submitted atomic writes (or
callables that write, :meth:`~BackgroundWriter.submit_call`) strictly in submission order,
so readers see exactly what the synchronous writer would show, in the same order (an event
file before its index, step after step). Python on that thread holds the GIL that a
training thread needs between its framework calls, so the thread is kept lean: C-level
``SimpleQueue``s for the jobs and the backpressure tokens, one ``writev`` per file. ``flush()``
waits until everything submitted is visible and re-raises the first failure. The owner
must ``close()`` it before declaring the run finished (e.g. before ``write_training_end``).

With ``nice`` (Linux) the thread runs at that niceness: the scheduler then gives the CPU to
the training's threads first and the writes fill the idle time. Measured on the 2-vCPU
Keras benchmark, a thread of normal priority writing one saved step's files (2.4 MB, about
7 ms, mostly the kernel filling new page-cache pages) slowed the training's next steps by
about as much again; in one process, alternating blocks, the hook's overhead was 0.054
with the thread at niceness 0 and 0.021 at 19. When the training itself waits
for the writer (``flush``, ``wait_idle``), its CPU is free and the writer gets it.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Callable, Iterable
from functools import partial

from .._exceptions import ConfigValueError, StorageError, field_error_message
from ._closing import ClosesOnExit
from ._files import Data, atomic_write

__all__ = ["BackgroundWriter"]

_STOP = object()
MAX_NICE = 19  # the lowest priority Linux gives a thread


def lower_thread_priority(nice: int) -> int | None:
    """Give the calling thread niceness ``nice`` unless it already has as much (Linux, where
    niceness is per thread); returns the niceness it runs at, None where this is not done.
    A refusal (a sandbox) leaves the thread as it was."""
    if nice <= 0 or not sys.platform.startswith("linux"):
        return None
    tid = threading.get_native_id()
    try:
        current = os.getpriority(os.PRIO_PROCESS, tid)
        if current < nice:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        return os.getpriority(os.PRIO_PROCESS, tid)
    except OSError:
        return None


#: one file of a submitted group: (path, bytes or chunks, whether its folder is probably new,
#: whether to write it uncached: see ``_files``)
FileWrite = tuple[str, Data, bool, bool]


def _write_group(group: Iterable[FileWrite]) -> None:
    for path, data, new_dir, uncached in group:
        atomic_write(path, data, new_dir=new_dir, uncached=uncached)


class _Uncounted:
    """A job that takes no ``max_pending`` place."""

    __slots__ = ("call",)

    def __init__(self, call: Callable[[], object]) -> None:
        self.call = call


class BackgroundWriter(ClosesOnExit):
    """Atomic file writes off the caller's thread, made visible in submission order.

    Args:
        max_pending: submitted groups that may wait at most; ``submit`` blocks beyond it
            (backpressure keeps memory bounded when the disk is slower than training).
        nice: the writer thread's niceness, 0-19 (Linux; elsewhere ignored): at least this,
            never higher priority than the caller's; 0 leaves it as the caller's.

    Raises:
        ConfigValueError: ``max_pending`` is not an int >= 1, or ``nice`` not an int 0-19.
    """

    def __init__(self, *, max_pending: int = 64, nice: int = 0) -> None:
        if isinstance(max_pending, bool) or not isinstance(max_pending, int) or max_pending < 1:
            msg = field_error_message("max_pending", "an int >= 1", max_pending)
            raise ConfigValueError(msg, field="max_pending", value=max_pending)
        if isinstance(nice, bool) or not isinstance(nice, int) or not 0 <= nice <= MAX_NICE:
            msg = field_error_message("nice", f"an int from 0 to {MAX_NICE}", nice)
            raise ConfigValueError(msg, field="nice", value=nice)
        self._nice = nice
        self._jobs: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._slots: queue.SimpleQueue[None] = queue.SimpleQueue()  # backpressure tokens (C-level)
        self._max_pending = max_pending
        for _ in range(max_pending):
            self._slots.put(None)
        self._thread: threading.Thread | None = None
        #: the writer thread's niceness once it runs (None: not set, see ``nice``)
        self.niceness: int | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, path: str | os.PathLike[str], data: Data, *, new_dir: bool = False) -> None:
        """Queue an atomic write of ``data`` (bytes or a sequence of chunks) to ``path``,
        visible after all earlier ones. The caller must not change ``data`` afterwards.

        Raises:
            StorageError: an earlier background write failed, or the writer is closed.
        """
        self.submit_group([(os.fspath(path), data, new_dir, False)])

    def submit_group(self, writes: Iterable[FileWrite]) -> None:
        """Queue several atomic writes, performed in this order by one hand-over.

        Raises:
            StorageError: an earlier background write failed, or the writer is closed.
        """
        group = list(writes)
        self._enqueue(group, group[0][0] if group else None)

    def submit_call(self, job: Callable[[], object], *, counted: bool = True) -> None:
        """Queue ``job()`` to run on the writer thread, in order with the file writes (the
        hook hands over a whole finished step this way: encoding included, which keeps
        that Python off the training thread).

        Args:
            job: the callable; its failure is raised by a later call, as a write's.
            counted: whether the job takes one of the ``max_pending`` places (and may block
                until one is free). Uncounted jobs never block: for work that prepares a
                counted job submitted after it (the hook reduces a step's tensors this way
                while the step trains), whose memory the caller bounds.

        Raises:
            StorageError: an earlier background write failed, or the writer is closed.
        """
        self._enqueue(job if counted else _Uncounted(job), None)

    def _enqueue(self, job: object, uri: str | None) -> None:
        self._raise_pending()
        if self._thread is None or self._closed:
            with self._lock:
                if self._closed:
                    msg = "BackgroundWriter is closed"
                    raise StorageError(msg, uri=uri)
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="sdx-format-writer", daemon=True)
                    self._thread.start()
        if type(job) is not _Uncounted:
            self._slots.get()  # blocks while max_pending jobs wait
        self._jobs.put(job)

    def _run(self) -> None:
        self.niceness = lower_thread_priority(self._nice)
        jobs, release = self._jobs, self._slots.put
        while True:
            job = jobs.get()
            if job is _STOP:
                return
            if isinstance(job, threading.Event):  # a flush() marker
                job.set()
                continue
            if type(job) is _Uncounted:
                self._call(job.call)
                continue
            try:
                self._call(job if callable(job) else partial(_write_group, job))  # type: ignore[arg-type]
            finally:
                job = None  # the written buffers are freed now, not at the next hand-over
                release(None)

    def _call(self, call: Callable[[], object]) -> None:
        try:
            if self._error is None:
                call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the submitting thread
            if self._error is None:
                self._error = exc

    def _raise_pending(self) -> None:
        if self._error is not None:
            exc = self._error
            msg = f"a background write failed: {exc}"
            raise StorageError(msg, uri=getattr(exc, "filename", None)) from exc

    def wait_idle(self) -> None:
        """Return once no submitted write is pending (at once when none is); raise the first
        failure. Cheaper than :meth:`flush` when the writer is already idle."""
        if self._slots.qsize() < self._max_pending:
            self.flush()
        else:
            self._raise_pending()

    def flush(self) -> None:
        """Wait until every submitted write is visible; raise the first failure."""
        if self._thread is not None and self._thread.is_alive():
            done = threading.Event()
            self._jobs.put(done)
            done.wait()
        self._raise_pending()

    def close(self) -> None:
        """Flush, then stop the thread; raise the first failure. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._jobs.put(_STOP)
            thread.join()
        self._raise_pending()
