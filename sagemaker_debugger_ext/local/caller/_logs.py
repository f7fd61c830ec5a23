"""Following a local job: stream its logs while waiting, and stop it on Ctrl-C."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, TextIO

from ..api._client import TERMINAL_STATUSES, LocalTrainingClient
from ..store._job_store import JobPaths
from ._progress import ProgressLines

__all__ = ["LogFollower", "follow_job"]


class LogFollower:
    """Prints the new complete lines of a job's log files, prefixed when there are several."""

    def __init__(self, paths: JobPaths, *, hosts: list[str], include_rules: bool, out: TextIO) -> None:
        self.paths = paths
        self.hosts = hosts
        self.include_rules = include_rules
        self.out = out
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}

    def _files(self) -> list[tuple[str, Path]]:
        files = [(h if len(self.hosts) > 1 else "", self.paths.host_log(h)) for h in self.hosts]
        rules_dir = self.paths.logs_dir / "rules"
        if self.include_rules and rules_dir.is_dir():
            files += [(f"[{p.stem}]", p) for p in sorted(rules_dir.glob("*.log"))]
        handlers = self.paths.logs_dir / "handlers.log"
        if handlers.is_file():
            files.append(("[handlers]", handlers))
        return files

    def pump(self, *, final: bool = False) -> None:
        """Print what was appended since the last call."""
        for prefix, path in self._files():
            try:
                with open(path, "rb") as fh:
                    fh.seek(self._offsets.get(path, 0))
                    data = fh.read()
                    self._offsets[path] = fh.tell()
            except FileNotFoundError:
                continue
            data = self._partial.pop(path, b"") + data
            lines = data.split(b"\n")
            tail = lines.pop()
            if tail and not final:
                self._partial[path] = tail
            elif tail:
                lines.append(tail)
            for raw in lines:
                text = raw.decode("utf-8", "replace")
                self.out.write(f"{prefix} | {text}\n" if prefix else f"{text}\n")
        self.out.flush()


def follow_job(
    client: LocalTrainingClient,
    name: str,
    *,
    log_type: str = "All",
    out: TextIO | None = None,
    poll_s: float = 0.1,
) -> dict[str, Any]:
    """Wait for job ``name``, streaming its logs; Ctrl-C stops the job, then re-raises.

    Args:
        client: the local client.
        name: the job.
        log_type: "All", "Training", "Rules" or "None" (SDK values).
        out: where logs go (default ``sys.stdout``).
        poll_s: polling interval.

    Returns:
        The job's final description.
    """
    stream = out or sys.stdout
    request = client.store.read_request(name)
    count = int((request.get("ResourceConfig") or {}).get("InstanceCount") or 1)
    hosts = [f"algo-{i + 1}" for i in range(count)] if log_type in ("All", "Training") else []
    follower = LogFollower(
        client.store.paths(name), hosts=hosts, include_rules=log_type in ("All", "Rules"), out=stream
    )
    progress = ProgressLines(name, client.store.paths(name).debug_dir, stream) if log_type != "None" else None
    try:
        while client._state(name).get("TrainingJobStatus") not in TERMINAL_STATUSES:
            follower.pump()
            if progress is not None:
                progress.tick(lambda: client.describe_training_job(name))
            time.sleep(poll_s)
        follower.pump(final=True)
        client.wait_supervisor_exit(name)
    except KeyboardInterrupt:
        client.stop_training_job(name)
        try:
            client.wait(name, timeout_s=120)
        finally:
            follower.pump(final=True)
        raise
    return client.describe_training_job(name)
