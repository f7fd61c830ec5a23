"""Background file writes, so a training step does not wait for the filesystem.

A :class:`BackgroundWriter` owns one thread that performs submitted atomic writes (or
callables that write, :meth:`~BackgroundWriter.submit_call`) strictly in submission order,
so readers see exactly what the synchronous writer would show, in the same order (an event
file before its index, step after step). Python on that thread holds the GIL that a
training thread needs between its framework calls, so the thread is kept lean: one deque
under one lock, one ``writev`` per file. ``flush()`` waits until everything submitted is
visible and re-raises the first failure. The owner must ``close()`` it before declaring
the run finished (e.g. before ``write_training_end``).

A caller that must wait for queued work (``flush``, ``wait_idle``, ``submit`` beyond
``max_pending``) waits for the thread, unless the thread is starved: when a queued job has
been free to take (no job running) for ``help_after`` seconds and the thread has not taken
it, the caller takes the oldest queued job and runs it itself, then the next while the
thread still takes none; it always waits for a job that has started. One job runs at a
time, in submission order, whoever runs it. On a loaded machine the thread at niceness 19
may get no CPU for long stretches (a nice-19 thread weighs 15 against a nice-0 one's
1024): the training's saving step then does the previous step's writes itself instead of
sleeping until the scheduler gets round to the thread. On a quiet machine the thread takes
a job within microseconds of being woken, so the writes stay off the caller's thread (a
caller that took every job not yet started, as this class once did, took nearly all of
them: the hook waits for the previous step's files right after handing them over).

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
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from functools import partial

from .._exceptions import ConfigValueError, StorageError, field_error_message
from ._closing import ClosesOnExit
from ._files import Data, atomic_write_group

__all__ = ["BackgroundWriter"]

MAX_NICE = 19  # the lowest priority Linux gives a thread
#: seconds a queued job may stay free without the thread taking it before a waiting caller
#: runs it (the thread is starved then; on a quiet machine it takes one within ~0.1 ms)
HELP_AFTER = 0.002
#: the longest ``help_after`` accepted (seconds; a caller never waits longer than that for a starved thread)
_MAX_HELP = 3600.0


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


class _Uncounted:
    """A job that takes no ``max_pending`` place."""

    __slots__ = ("call",)

    def __init__(self, call: Callable[[], object]) -> None:
        self.call = call


class BackgroundWriter(ClosesOnExit):
    """Atomic file writes off the caller's thread, made visible in submission order.

    Args:
        max_pending: submitted groups that may wait at most; ``submit`` beyond it runs the
            oldest itself or waits (backpressure keeps memory bounded when the disk is
            slower than training).
        nice: the writer thread's niceness, 0-19 (Linux; elsewhere ignored): at least this,
            never higher priority than the caller's; 0 leaves it as the caller's.
        help_after: seconds a queued job may wait, free to take, before a caller waiting for
            it counts the thread as starved and runs it itself (see the module docstring).

    Raises:
        ConfigValueError: ``max_pending`` is not an int >= 1, ``nice`` not an int 0-19, or
            ``help_after`` not a number of seconds from 0 to 3600 (both included).
    """

    def __init__(self, *, max_pending: int = 64, nice: int = 0, help_after: float = HELP_AFTER) -> None:
        if isinstance(max_pending, bool) or not isinstance(max_pending, int) or max_pending < 1:
            msg = field_error_message("max_pending", "an int >= 1", max_pending)
            raise ConfigValueError(msg, field="max_pending", value=max_pending)
        if isinstance(nice, bool) or not isinstance(nice, int) or not 0 <= nice <= MAX_NICE:
            msg = field_error_message("nice", f"an int from 0 to {MAX_NICE}", nice)
            raise ConfigValueError(msg, field="nice", value=nice)
        if isinstance(help_after, bool) or not isinstance(help_after, int | float) or not 0 <= help_after <= _MAX_HELP:
            msg = field_error_message("help_after", f"a number of seconds from 0 to {_MAX_HELP:g}", help_after)
            raise ConfigValueError(msg, field="help_after", value=help_after)
        self._nice = nice
        self._help_after = float(help_after)
        # when the oldest queued job became free to take (queued, none running) and no
        # thread has taken one since (time.monotonic())
        self._free_since = 0.0
        self._jobs: deque[object] = deque()
        self._max_pending = max_pending
        self._counted = 0  # counted jobs queued or running
        self._busy = False  # a job runs (on the thread or on a caller's)
        self._stopping = False
        self._cond = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        #: the writer thread's niceness once it runs (None: not set, see ``nice``)
        self.niceness: int | None = None
        #: jobs a waiting caller ran itself (the thread, starved, had not taken them)
        self.run_by_callers = 0
        self._error: BaseException | None = None
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
        """Queue ``job()`` to run in order with the file writes, on the writer thread (or on
        a caller's that waits for it, see the module docstring): the hook hands over a whole
        finished step this way, encoding included, which keeps that Python off the training
        thread.

        Args:
            job: the callable; its failure is raised by a later call, as a write's.
            counted: whether the job takes one of the ``max_pending`` places (and may make
                the caller wait until one is free). Uncounted jobs never wait: for work that
                prepares a counted job submitted after it (the hook reduces a step's tensors
                this way while the step trains), whose memory the caller bounds.

        Raises:
            StorageError: an earlier background write failed, or the writer is closed.
        """
        self._enqueue(job if counted else _Uncounted(job), None)

    def _enqueue(self, job: object, uri: str | None) -> None:
        self._raise_pending()
        with self._cond:
            if self._closed:
                msg = "BackgroundWriter is closed"
                raise StorageError(msg, uri=uri)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sdx-format-writer", daemon=True)
                self._thread.start()
            if type(job) is not _Uncounted:
                while self._counted >= self._max_pending:
                    self._help_or_wait()
                self._counted += 1
            if not self._jobs and not self._busy:
                self._free_since = time.monotonic()  # free to take from now
            self._jobs.append(job)
            self._cond.notify_all()

    def _run(self) -> None:
        self.niceness = lower_thread_priority(self._nice)
        cond, jobs = self._cond, self._jobs
        while True:
            with cond:
                while self._busy or not jobs:
                    if self._stopping and not jobs:
                        return
                    cond.wait()
                job = jobs.popleft()
                self._busy = True
            self._perform(job)

    def _help_or_wait(self) -> None:
        """With the lock held: run the oldest queued job here when none runs and the thread
        has left one free for ``help_after`` seconds (starved), else wait for a change (or
        until the thread would count as starved)."""
        if self._jobs and not self._busy:
            left = self._free_since + self._help_after - time.monotonic()
            if left > 0:
                self._cond.wait(left)
                return
            job = self._jobs.popleft()
            self._busy = True
            self.run_by_callers += 1
            self._cond.release()
            try:
                self._perform(job, by_caller=True)
            finally:
                self._cond.acquire()
        else:
            self._cond.wait()

    def _perform(self, job: object, *, by_caller: bool = False) -> None:
        """Run one dequeued job (lock not held), then mark it done: the next queued job is
        free to take from now, unless a caller ran this one (the thread, starved, has
        still taken none: the caller goes on with the next at once)."""
        try:
            if type(job) is _Uncounted:
                self._call(job.call)
            else:
                self._call(job if callable(job) else partial(atomic_write_group, job))  # type: ignore[arg-type]
        finally:
            counted = type(job) is not _Uncounted
            job = None  # the written buffers are freed now, not at the next hand-over
            with self._cond:
                self._busy = False
                if not by_caller:
                    self._free_since = time.monotonic()
                if counted:
                    self._counted -= 1
                self._cond.notify_all()

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
        """Return once no counted job (a write) is queued or running, at once when none is
        (running queued jobs here while the thread has not started them); raise the first
        failure. Cheaper than :meth:`flush` when the writer is already idle."""
        if self._counted:
            with self._cond:
                while self._counted:
                    self._help_or_wait()
        self._raise_pending()

    def flush(self) -> None:
        """Wait until every submitted write is visible (running queued ones here while the
        thread has not started them); raise the first failure."""
        with self._cond:
            while self._jobs or self._busy:
                self._help_or_wait()
        self._raise_pending()

    def close(self) -> None:
        """Flush, then stop the thread; raise the first failure. Idempotent."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
            while self._jobs or self._busy:
                self._help_or_wait()
            self._stopping = True
            self._cond.notify_all()
        if thread is not None:
            thread.join()
        self._raise_pending()
