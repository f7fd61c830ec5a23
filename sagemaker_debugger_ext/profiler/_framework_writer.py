"""Framework metrics: smdebug's ``pythontimeline`` trace files.

Layout and format (as smdebug's ``TimelineFileWriter`` writes them)::

    <profiler dir>/framework/pevents/<YYYYMMDDHH>/<end_us>_<node_id>_pythontimeline.json

A JSON array in Chrome-trace form. The first entries are metadata: ``process_name`` on
pid 0 with ``args.start_time_since_epoch_in_micros`` (the base every ``ts`` is relative
to), then one ``process_name``/``process_sort_index`` pair per track (a track per event
name, e.g. ``Step:ModeKeys.TRAIN``). Events are ``{"name", "pid", "ph": "X", "ts", "dur",
"args": {"step_num": "<str>", ...}}`` in microseconds. The file is written as
``<profiler dir>/<node_id>.tmp`` and renamed when it rotates (size, age, or a new UTC
hour) or closes; ``<end_us>`` is the end of its last event.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Self

from .._exceptions import ProfilerError, field_error_message
from ._config import (
    DEFAULT_CLOSE_INTERVAL_S,
    DEFAULT_ROTATE_MAX_BYTES,
    read_profiler_config,
)

__all__ = ["FrameworkMetricsWriter", "framework_file_path"]

_US = 1_000_000


def framework_file_path(profiler_dir: str | Path, end_us: int, node_id: str) -> Path:
    """Final path of a timeline file whose last event ends at ``end_us``."""
    hour = datetime.fromtimestamp(end_us / _US, tz=UTC).strftime("%Y%m%d%H")
    return Path(profiler_dir) / "framework" / "pevents" / hour / f"{end_us}_{node_id}_pythontimeline.json"


def _check_node_id(node_id: str) -> str:
    if not node_id or "/" in node_id or "\\" in node_id or node_id in {".", ".."} or "\x00" in node_id:
        raise ProfilerError(field_error_message("node_id", "a non-empty name without path separators", node_id))
    return node_id


class FrameworkMetricsWriter:
    """Records framework events (step, forward, backward, dataloader) to timeline files.

    Args:
        profiler_dir: the profiler output folder.
        node_id: names the files (smdebug uses ``<pid>-<host>``); no path separators.
        rotate_max_bytes: rotate once a file grows past this size.
        close_interval_s: rotate once a file has been open this long.

    Example::

        writer = FrameworkMetricsWriter.from_profiler_config(path, node_id="1234-algo-1")
        if writer is not None:
            writer.record("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", t0, t1, step=3, mode="TRAIN")
            writer.close()

    .. versionadded:: 0.1.0
    """

    def __init__(
        self,
        profiler_dir: str | Path,
        node_id: str,
        *,
        rotate_max_bytes: int = DEFAULT_ROTATE_MAX_BYTES,
        close_interval_s: float = DEFAULT_CLOSE_INTERVAL_S,
    ) -> None:
        self._root = Path(profiler_dir)
        self._node = _check_node_id(node_id)
        self._max_bytes = int(rotate_max_bytes)
        self._close_interval = float(close_interval_s)
        self._base_us = round(time.time() * _US)
        self._file: IO[bytes] | None = None
        self._opened_at = 0.0
        self._hour = ""
        self._tracks: dict[str, int] = {}
        self._last_end_us = 0
        self._closed = False

    @classmethod
    def from_profiler_config(cls, path: str | Path, node_id: str) -> FrameworkMetricsWriter | None:
        """A writer configured from ``profilerconfig.json``, or None when profiling is disabled.

        Uses ``ProfilingParameters.LocalPath`` (default ``/opt/ml/output/profiler``),
        ``RotateMaxFileSizeInBytes`` and ``RotateFileCloseIntervalInSeconds``.
        """
        settings = read_profiler_config(path)
        if settings.disabled or not settings.framework_metrics:
            return None
        return cls(
            settings.local_path,
            node_id,
            rotate_max_bytes=settings.rotate_max_bytes,
            close_interval_s=settings.close_interval_s,
        )

    @property
    def tmp_path(self) -> Path:
        """Where the open file is written before its final rename."""
        return self._root / f"{self._node}.tmp"

    def record(self, name: str, phase: str, start_s: float, end_s: float, step: int, mode: str, **args: Any) -> None:
        """Record one complete event.

        Args:
            name: event name (``Step:ModeKeys.TRAIN``, ``forward``, ``backward``, ``dataloader``).
            phase: the track the event is drawn on (usually the step name or ``name``).
            start_s: start, seconds since the epoch (``time.time()``).
            end_s: end, seconds since the epoch.
            step: the step number (written as the string ``step_num``, like smdebug).
            mode: ``TRAIN``/``EVAL``/``PREDICT``/``GLOBAL`` (or ``ModeKeys.TRAIN``).
            **args: extra ``args`` (JSON-able), e.g. ``pid``.

        Raises:
            ProfilerError: the writer is closed, or ``end_s < start_s``.
        """
        if self._closed:
            msg = "FrameworkMetricsWriter is closed"
            raise ProfilerError(msg)
        if end_s < start_s:
            raise ProfilerError(field_error_message("end_s", f"at least start_s={start_s!r}", end_s))
        start_us = round(start_s * _US)
        end_us = round(end_s * _US)
        track = phase or name
        self._rotate_if_needed(end_us)
        fh = self._open(end_us)
        lines = []
        if track not in self._tracks:
            idx = len(self._tracks) + 1
            self._tracks[track] = idx
            lines.append({"name": "process_name", "ph": "M", "pid": idx, "args": {"name": track}})
            lines.append({"name": "process_sort_index", "ph": "M", "pid": idx, "args": {"sort_index": idx}})
        ev_args: dict[str, Any] = {"pid": os.getpid(), "step_num": str(int(step)), "mode": str(mode).split(".")[-1]}
        ev_args.update(args)
        lines.append(
            {
                "name": name,
                "pid": self._tracks[track],
                "ph": "X",
                "ts": start_us - self._base_us,
                "dur": end_us - start_us,
                "args": ev_args,
            }
        )
        fh.write("".join(json.dumps(obj) + ",\n" for obj in lines).encode())
        fh.flush()
        self._last_end_us = max(self._last_end_us, end_us)

    def _open(self, end_us: int) -> IO[bytes]:
        if self._file is not None:
            return self._file
        self._root.mkdir(parents=True, exist_ok=True)
        fh = open(self.tmp_path, "wb")
        fh.write(b"[\n")
        meta = [
            {"name": "process_name", "ph": "M", "pid": 0, "args": {"start_time_since_epoch_in_micros": self._base_us}},
            {"name": "process_sort_index", "ph": "M", "pid": 0, "args": {"sort_index": 0}},
        ]
        fh.write("".join(json.dumps(obj) + ",\n" for obj in meta).encode())
        self._file = fh
        self._tracks = {}
        self._opened_at = time.monotonic()
        self._hour = datetime.fromtimestamp(end_us / _US, tz=UTC).strftime("%Y%m%d%H")
        return fh

    def _rotate_if_needed(self, end_us: int) -> None:
        if self._file is None:
            return
        hour = datetime.fromtimestamp(end_us / _US, tz=UTC).strftime("%Y%m%d%H")
        if (
            hour != self._hour
            or time.monotonic() - self._opened_at > self._close_interval
            or self._file.tell() > self._max_bytes
        ):
            self._finish_file()

    def _finish_file(self) -> None:
        fh = self._file
        if fh is None:
            return
        self._file = None
        pos = fh.tell()
        fh.seek(pos - 2)  # drop the trailing ",\n" (every line ends with it)
        fh.truncate()
        fh.write(b"\n]\n")
        fh.close()
        final = framework_file_path(self._root, self._last_end_us, self._node)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.tmp_path, final)

    def flush(self) -> None:
        """Close the current file so readers see everything recorded so far."""
        self._finish_file()

    def close(self) -> None:
        """Finish the current file (rename it into place); further ``record`` calls raise."""
        if not self._closed:
            self._finish_file()
            self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
