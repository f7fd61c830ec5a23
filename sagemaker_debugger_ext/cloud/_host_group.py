"""The launchers of one host: one leads (monitor, sync, end markers), the others only run their script.

Under ``torchrun`` (SDK v2 ``distribution={"torch_distributed": ...}``, SDK v3 ``Torchrun()``) the
training toolkit starts the launcher once per process, so one host holds several launchers that
share one work folder. Doing the Debugger service's work once per host needs one of them to lead:
the first to take an exclusive lock on ``leader.lock`` in that folder. Leadership is decided by
the folder, not by ``LOCAL_RANK``: processes that share a folder share a host, whatever the
launcher (torchrun, or local mode's one process per simulated host).

Every launcher marks itself running with ``<pid>.running`` while its script runs. The leader,
once its own script has ended, waits until no other marked launcher is still alive (a marker
whose process is gone counts as ended, so a killed rank does not hold the job), then writes the
end-of-training markers and syncs a last time: the rule jobs never see the end before every
rank's files are there.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

from ..local.store._job_store import pid_alive

__all__ = ["HostGroup"]

_LOCK = "leader.lock"
_SUFFIX = ".running"
_POLL_S = 0.2
_NEVER = threading.Event()  # never set: a plain poll interval once stopping


class HostGroup:
    """This launcher's place among the launchers sharing ``folder`` (one host's work folder)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self._lock_fd: int | None = os.open(folder / _LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock_fd)
            self._lock_fd = None
        self.leader = self._lock_fd is not None
        self._marker = folder / f"{os.getpid()}{_SUFFIX}"
        self._marker.touch()

    def script_ended(self) -> None:
        """This launcher's script has ended: it no longer holds the leader's end back."""
        self._marker.unlink(missing_ok=True)

    def others_running(self) -> list[int]:
        """Process ids of the other launchers whose scripts still run (markers of dead processes skipped)."""
        pids = []
        for entry in self.folder.glob(f"*{_SUFFIX}"):
            stem = entry.name[: -len(_SUFFIX)]
            if not stem.isdigit() or entry == self._marker:
                continue
            pid = int(stem)
            if pid_alive(pid):
                pids.append(pid)
        return sorted(pids)

    def wait_for_others(
        self, timeout_s: float, *, stop: threading.Event | None = None, grace_s: float = 0.0
    ) -> list[int]:
        """Poll until no other launcher's script runs or ``timeout_s`` passes; once ``stop`` is set
        (the job is being stopped), wait at most ``grace_s`` more.

        Returns the process ids still running at the end (empty when all ended).
        """
        stop = stop or threading.Event()
        deadline = time.monotonic() + max(0.0, timeout_s)
        stopping = False
        while True:
            running = self.others_running()
            now = time.monotonic()
            if not running or now >= deadline:
                return running
            if stop.is_set() and not stopping:
                stopping, deadline = True, min(deadline, now + max(0.0, grace_s))
            (_NEVER if stopping else stop).wait(min(_POLL_S, max(0.0, deadline - now)))

    def close(self) -> None:
        """Release the lead (if held) and this launcher's marker."""
        self.script_ended()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
