"""The launchers of one host: one leads (monitor, sync, end markers), the others only run their script.

Under ``torchrun`` (SDK v2 ``distribution={"torch_distributed": ...}``, SDK v3 ``Torchrun()``) the
training toolkit starts the launcher once per process, so one host holds several launchers that
share one work folder. Doing the Debugger service's work once per host needs one of them to lead:
the first to take an exclusive lock on ``leader.lock`` in that folder. Leadership is decided by
the folder, not by ``LOCAL_RANK``: processes that share a folder share a host, whatever the
launcher (torchrun, or local mode's one process per simulated host).

Every launcher marks itself ``<pid>.running`` while its script runs and ``<pid>.ended`` after.
The leader, once its own script has ended, waits until torchrun's ``LOCAL_WORLD_SIZE`` launchers
have all marked themselves and none still runs (a marker whose process is gone counts as ended,
so a killed rank does not hold the job), then writes the end-of-training markers and syncs a
last time: the rule jobs never see the end before every rank's files are there.

Across hosts (``instance_count`` > 1) the leaders meet on S3 (:class:`JobHosts`): each, after its
last sync, puts ``<hook output>/<job>/debugger-self-hosted/hosts/<host>.ended``; only the first
host of ``SM_HOSTS`` writes the end markers, once every host has reported, so a rule job does not
end before the last host's final steps have arrived.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._container_env import SM_CURRENT_HOST, SM_HOSTS
from ..local.store._job_store import pid_alive
from ..request._paths import artifacts_path
from ..storage import open_storage
from ._bundle import SELF_HOSTED_FOLDER

__all__ = ["HostGroup", "JobHosts"]

_LOCK = "leader.lock"
_RUNNING, _ENDED = ".running", ".ended"
_POLL_S = 0.2
_NEVER = threading.Event()  # never set: a plain poll interval once stopping
_HOST_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
_HOSTS_POLL_S = 2.0


def _poll(done: Any, timeout_s: float, stop: threading.Event | None, grace_s: float, interval_s: float) -> Any:
    """Call ``done()`` until it returns a falsy value (what is still awaited) or time runs out; once
    ``stop`` is set, at most ``grace_s`` more. Returns the last value."""
    stop = stop or threading.Event()
    deadline = time.monotonic() + max(0.0, timeout_s)
    stopping = False
    while True:
        left = done()
        now = time.monotonic()
        if not left or now >= deadline:
            return left
        if stop.is_set() and not stopping:
            stopping, deadline = True, min(deadline, now + max(0.0, grace_s))
        (_NEVER if stopping else stop).wait(min(interval_s, max(0.0, deadline - now)))


class HostGroup:
    """This launcher's place among the launchers sharing ``folder`` (one host's work folder).

    ``expected``: how many launchers this host runs (torchrun's ``LOCAL_WORLD_SIZE``, see
    :meth:`expected_from`), so the leader also waits for a rank whose launcher has not started yet.
    """

    def __init__(self, folder: Path, expected: int = 1) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.expected = max(1, expected)
        self._lock_fd: int | None = os.open(folder / _LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock_fd)
            self._lock_fd = None
        self.leader = self._lock_fd is not None
        self._marker = folder / f"{os.getpid()}{_RUNNING}"
        self._marker.touch()

    @staticmethod
    def expected_from(env: Mapping[str, str]) -> int:
        """Launchers on this host: ``LOCAL_WORLD_SIZE`` under torchrun (``TORCHELASTIC_RUN_ID`` set), else 1
        (local mode's one process per simulated host sets ``LOCAL_WORLD_SIZE`` too, each host in its own folder)."""
        raw = env.get("LOCAL_WORLD_SIZE") or ""
        if not env.get("TORCHELASTIC_RUN_ID") or not raw.isdigit():
            return 1
        return min(int(raw), 4096)

    def script_ended(self) -> None:
        """This launcher's script has ended: it no longer holds the leader's end back."""
        try:
            self._marker.rename(self._marker.with_suffix(_ENDED))
        except FileNotFoundError:
            pass

    def waiting_for(self) -> list[str]:
        """What the leader still waits for: other launchers whose scripts run (markers of dead
        processes skipped), and launchers expected but not started yet."""
        running, seen = [], 0
        for entry in self.folder.iterdir():
            stem, suffix = entry.stem, entry.suffix
            if not stem.isdigit() or suffix not in (_RUNNING, _ENDED) or int(stem) == os.getpid():
                continue
            seen += 1
            if suffix == _RUNNING and pid_alive(int(stem)):
                running.append(f"pid {stem}")
        missing = self.expected - 1 - seen
        return sorted(running) + ([f"{missing} launcher(s) not started"] if missing > 0 else [])

    def wait_for_others(
        self, timeout_s: float, *, stop: threading.Event | None = None, grace_s: float = 0.0
    ) -> list[str]:
        """Poll until nothing is waited for or ``timeout_s`` passes; once ``stop`` is set
        (the job is being stopped), wait at most ``grace_s`` more.

        Returns what is still waited for at the end (empty when all ended).
        """
        return list(_poll(self.waiting_for, timeout_s, stop, grace_s, _POLL_S))

    def close(self) -> None:
        """Release the lead (if held) and this launcher's marker."""
        self.script_ended()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


class JobHosts:
    """The hosts of a multi-host job, meeting on the storage beside the job's debug output."""

    def __init__(self, uri: str, hosts: list[str], current: str) -> None:
        self.hosts, self.current = hosts, current
        self.first = current == hosts[0]
        self._store = open_storage(uri)

    @classmethod
    def of_job(cls, config: Mapping[str, Any], env: Mapping[str, str], job: str) -> JobHosts | None:
        """The job's hosts from ``SM_HOSTS``/``SM_CURRENT_HOST``; ``None`` for a one-host job (or names
        that are not host names: then each host ends on its own, as before)."""
        try:
            hosts = json.loads(env.get(SM_HOSTS) or "[]")
        except ValueError:
            return None
        current = env.get(SM_CURRENT_HOST) or ""
        if not isinstance(hosts, list) or len(hosts) < 2 or current not in hosts:
            return None
        if not all(isinstance(h, str) and _HOST_RE.match(h) for h in hosts):
            return None
        output = (config.get("DebugHookConfig") or {}).get("S3OutputPath") or (
            (config.get("ProfilerConfig") or {}).get("S3OutputPath")
        )
        if not output:
            return None
        return cls(artifacts_path(str(output), job, SELF_HOSTED_FOLDER, "hosts"), list(hosts), current)

    def report_ended(self) -> None:
        """This host's last files are synced."""
        self._store.write_bytes(f"{self.current}.ended", b"")

    def not_ended(self) -> list[str]:
        """The hosts that have not reported yet."""
        return [h for h in self.hosts if not self._store.exists(f"{h}.ended")]

    def wait_for_all(self, timeout_s: float, *, stop: threading.Event | None = None, grace_s: float = 0.0) -> list[str]:
        """Poll until every host has reported (or the time is up); returns the hosts still missing."""
        return list(_poll(self.not_ended, timeout_s, stop, grace_s, _HOSTS_POLL_S))
