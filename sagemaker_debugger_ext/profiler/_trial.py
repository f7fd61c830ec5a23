"""``ProfilerTrial``: the profiler's equivalent of smdebug's ``ProfilerTrial``.

Reads a profiler output folder (the one holding ``system/`` and ``framework/``): system and
framework metrics, time-range queries in microseconds since the epoch, pandas DataFrames
where pandas is installed, and the end-of-job marker.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .._container_env import TRAINING_END_MARKER
from .._exceptions import ProfilerError, field_error_message
from ..storage import open_storage
from ._events import FrameworkEvent, SystemEvent, is_gpu_dimension
from ._mirror import RemoteMirror
from ._readers import FrameworkMetricsReader, SystemMetricsReader

__all__ = ["ProfilerTrial", "create_profiler_trial", "local_profiler_dir"]


def local_profiler_dir(path: str | Path) -> Path:
    """A local folder for ``path`` (plain path or ``file://`` URI).

    Raises:
        ProfilerError: ``path`` is an ``s3://`` or other remote URI.
    """
    text = str(path)
    parsed = urlparse(text)
    if parsed.scheme == "file":
        return Path(parsed.netloc + parsed.path) if parsed.netloc else Path(parsed.path)
    if parsed.scheme and len(parsed.scheme) > 1:
        msg = field_error_message("path", "a local folder, file:// or s3:// URI", text)
        raise ProfilerError(msg)
    return Path(text)


class ProfilerTrial:
    """Profiler data of one training job.

    Args:
        path: the profiler folder (``.../profiler-output`` or a LocalPath), a ``file://`` URI,
            or an ``s3://`` URI (new files are copied into ``cache_dir`` at each refresh).
        cache_dir: local folder for the copies of an ``s3://`` folder (default: a new
            temporary folder).

    .. versionadded:: 0.1.0
    """

    def __init__(self, path: str | Path, *, cache_dir: str | Path | None = None) -> None:
        self.uri = str(path)
        self._mirror: RemoteMirror | None = None
        if self.uri.startswith("s3://"):
            cache = Path(cache_dir) if cache_dir is not None else Path(tempfile.mkdtemp(prefix="profiler-trial-"))
            self._mirror = RemoteMirror(open_storage(self.uri), cache)
            self.path = cache
            self._mirror.refresh()
        else:
            self.path = local_profiler_dir(path)
        self.system_metrics_reader = SystemMetricsReader(self.path)
        self.framework_metrics_reader = FrameworkMetricsReader(self.path)
        self.refresh()

    def refresh(self) -> None:
        """Read whatever was written since the last refresh."""
        if self._mirror is not None:
            self._mirror.refresh()
        self.system_metrics_reader.refresh()
        self.framework_metrics_reader.refresh()

    def training_ended(self) -> bool:
        """Whether ``training_job_end.ts`` exists at the folder's root or under ``system/``."""
        if self._mirror is not None:
            return self._mirror.training_ended()
        return (self.path / TRAINING_END_MARKER).exists() or (self.path / "system" / TRAINING_END_MARKER).exists()

    def get_system_metrics(self, start_us: int | None = None, end_us: int | None = None) -> list[SystemEvent]:
        """System events with ``start_us <= timestamp < end_us``."""
        return self.system_metrics_reader.get_events(start_us, end_us)

    def get_framework_metrics(self, start_us: int | None = None, end_us: int | None = None) -> list[FrameworkEvent]:
        """Framework events overlapping ``[start_us, end_us)``."""
        return self.framework_metrics_reader.get_events(start_us, end_us)

    @property
    def first_timestamp(self) -> int | None:
        """Earliest time seen in any stream (microseconds), None when empty."""
        candidates = [self.system_metrics_reader.first_timestamp_us]
        fw = self.framework_metrics_reader.events
        if fw:
            candidates.append(fw[0].start_us)
        known = [c for c in candidates if c is not None]
        return min(known) if known else None

    @property
    def last_timestamp(self) -> int | None:
        """Latest time seen in any stream (microseconds), None when empty."""
        candidates = [self.system_metrics_reader.last_timestamp_us]
        fw = self.framework_metrics_reader.events
        if fw:
            candidates.append(max(e.end_us for e in fw))
        known = [c for c in candidates if c is not None]
        return max(known) if known else None

    def has_gpu_metrics(self) -> bool:
        """Whether any GPU sample was recorded."""
        return any(is_gpu_dimension(e.dimension) for e in self.system_metrics_reader.events)

    def step_events(self, mode: str | None = None) -> list[FrameworkEvent]:
        """Whole-step events (``Step:ModeKeys.*``), optionally of one mode (``TRAIN``...)."""
        want = None if mode is None else str(mode).split(".")[-1].upper()
        return [e for e in self.framework_metrics_reader.events if e.is_step and (want is None or e.mode == want)]

    def step_durations(self, mode: str | None = None) -> list[float]:
        """Step durations in seconds, in start order."""
        return [e.duration_s for e in self.step_events(mode)]

    # ---- pandas --------------------------------------------------------------------------
    @staticmethod
    def _pandas() -> Any:
        try:
            import pandas
        except ImportError as exc:
            msg = "pandas is not installed: pip install 'sagemaker-debugger-ext[pandas]'"
            raise ProfilerError(msg) from exc
        return pandas

    def system_metrics_df(self, start_us: int | None = None, end_us: int | None = None) -> Any:
        """System metrics as a DataFrame (timestamp, timestamp_us, type, name, dimension, value, node_id)."""
        pd = self._pandas()
        rows = [
            {
                "timestamp": e.timestamp,
                "timestamp_us": e.timestamp_us,
                "type": e.type,
                "name": e.name,
                "dimension": e.dimension,
                "value": e.value,
                "node_id": e.node_id,
            }
            for e in self.get_system_metrics(start_us, end_us)
        ]
        cols = ["timestamp", "timestamp_us", "type", "name", "dimension", "value", "node_id"]
        return pd.DataFrame(rows, columns=cols)

    def framework_metrics_df(self, start_us: int | None = None, end_us: int | None = None) -> Any:
        """Framework events as a DataFrame (start/end in µs, duration in s, step, mode, name, phase, node)."""
        pd = self._pandas()
        rows = [
            {
                "start_time_us": e.start_us,
                "end_time_us": e.end_us,
                "duration_s": e.duration_s,
                "step": e.step,
                "mode": e.mode,
                "name": e.name,
                "phase": e.phase,
                "node_id": e.node_id,
            }
            for e in self.get_framework_metrics(start_us, end_us)
        ]
        cols = ["start_time_us", "end_time_us", "duration_s", "step", "mode", "name", "phase", "node_id"]
        return pd.DataFrame(rows, columns=cols)


def create_profiler_trial(path: str | Path) -> ProfilerTrial:
    """Open the profiler data at ``path`` (like smdebug's ``create_trial(path, profiler=True)``)."""
    return ProfilerTrial(path)
