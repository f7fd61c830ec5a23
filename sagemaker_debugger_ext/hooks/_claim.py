"""One writer per (trial folder, worker): the claim a hook takes at its first write.

Two processes writing the same worker's files into one folder overwrite each other's
steps. At its first write the hook takes an exclusive ``flock`` on
``<out_dir>/.claim.<worker>.smd`` (smdebug's ``claim.smd`` idea) and keeps it until
``close()``; the file records who holds it (pid, host, start time). A second process
gets :class:`HookError` naming the folder and the holder. The lock belongs to the
process: it disappears when the holder exits, even by SIGKILL, so a stale claim never
blocks a new run. Hooks of one process share their claim (a script may replace its hook).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from typing import Any

from .._exceptions import HookError
from ..format._layout import check_name

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no claim, as before
    fcntl = None  # type: ignore[assignment]

__all__ = ["WorkerClaim", "claim_worker"]

_HELD: dict[str, list[Any]] = {}  # claim path -> [fd, holders]
_LOCK = threading.Lock()


class WorkerClaim:
    """A held claim; :meth:`release` once (the last release of the process unlocks)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._released = False

    def release(self) -> None:
        """Give the claim back (idempotent)."""
        if self._released:
            return
        self._released = True
        with _LOCK:
            held = _HELD.get(self.path)
            if held is None:
                return
            held[1] -= 1
            if held[1] <= 0:
                del _HELD[self.path]
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
                os.close(held[0])


def _holder(fd: int) -> str:
    try:
        doc = json.loads(os.pread(fd, 4096, 0) or b"{}")
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(float(doc["started"])))
        return f"pid {int(doc['pid'])} on host {doc['host']!s}, writing since {started} UTC"
    except (ValueError, KeyError, TypeError, OSError):
        return "another process"


def claim_worker(out_dir: str | os.PathLike[str], worker: str) -> WorkerClaim:
    """Claim ``worker`` in ``out_dir`` for this process.

    Raises:
        HookError: another live process holds the claim (named in the message).
    """
    folder = os.path.abspath(os.fspath(out_dir))
    path = os.path.join(folder, f".claim.{check_name('worker', worker)}.smd")
    with _LOCK:
        held = _HELD.get(path)
        if held is not None:
            held[1] += 1
            return WorkerClaim(path)
        if fcntl is None:
            return WorkerClaim(path)
        os.makedirs(folder, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _holder(fd)
            os.close(fd)
            msg = (f"another writer is already saving worker {worker!r} to {folder} ({holder}); two writers of "
                   "one worker in one folder overwrite each other's steps: give each run its own out_dir "
                   "(or each process its own worker name)")  # fmt: skip
            raise HookError(msg) from None
        info = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, info, 0)
        _HELD[path] = [fd, 1]
        return WorkerClaim(path)
