"""UpdateTrainingJob on a running local job: how the supervisor learns of and applies it.

The client records every accepted ``UpdateTrainingJob`` in the job's ``updates.json``
(atomic rewrite; the merged ``ProfilerConfig`` and the full ``ProfilerRuleConfigurations``
list). The supervisor polls that file's stamp each loop (:class:`UpdateWatcher`) and applies
a change: it rewrites every host's ``input/config/profilerconfig.json`` (which the system
monitor watches through ``--config-file``), starts or stops the monitor, and starts the
rule processes of new ``ProfilerRuleConfigurations``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...profiler import update_profiler_config_file
from ..store._job_store import UPDATES_FILE, JobPaths, atomic_write_json, read_json

__all__ = ["UpdateWatcher", "write_host_profiler_config"]


def updates_path(paths: JobPaths) -> Path:
    """``<job>/updates.json``."""
    return paths.root / UPDATES_FILE


class UpdateWatcher:
    """Reports the recorded updates each time ``updates.json`` changes."""

    def __init__(self, paths: JobPaths) -> None:
        self.path = updates_path(paths)
        self._stamp: tuple[int, int, int] | None = None

    def poll(self) -> dict[str, Any] | None:
        """The updates when the file changed since the last call (or first seen), else ``None``."""
        try:
            st = self.path.stat()
        except OSError:
            return None
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp == self._stamp:
            return None
        data = read_json(self.path)
        if not isinstance(data, dict):
            return None  # replaced between stat and read: seen again next poll
        self._stamp = stamp
        return data


def write_host_profiler_config(path: Path, config: Mapping[str, Any], *, local_path: Path) -> dict[str, Any]:
    """Apply a (merged) ``ProfilerConfig`` to one host's ``profilerconfig.json``, atomically.

    A job that started with profiling disabled has no such file: it is created with the
    job's profiler ``LocalPath`` first, as the container setup would have written it.
    """
    if not path.exists():
        enabled = not bool(config.get("DisableProfiler", False))
        atomic_write_json(
            path,
            {
                "DisableProfiler": not enabled,
                "ProfilingParameters": {"ProfilerEnabled": enabled, "LocalPath": str(local_path)},
            },
        )
    return update_profiler_config_file(path, config)
