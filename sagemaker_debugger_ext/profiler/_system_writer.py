"""Writer of SageMaker's system-metrics files.

Layout (what the SageMaker profiler agent writes, and what smdebug's reader lists)::

    <profiler dir>/system/incremental/<YYYYMMDDHH>/<minute epoch s>.algo-N.json

One JSON object per line (``Type``, ``Name``, ``Dimension``, ``Value``, ``NodeId``,
``Timestamp``); a new file every UTC minute, named after the minute's first second.
Each sample is written with one ``write`` and flushed, so a reader sees whole lines;
readers still ignore a last line without its newline.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Self

from ._events import SystemEvent

__all__ = ["SystemMetricsWriter", "system_file_path"]


def system_file_path(profiler_dir: str | Path, timestamp_s: float, host_file_suffix: str) -> Path:
    """The file a sample taken at ``timestamp_s`` belongs to."""
    minute = int(timestamp_s // 60) * 60
    hour_dir = datetime.fromtimestamp(minute, tz=UTC).strftime("%Y%m%d%H")
    return Path(profiler_dir) / "system" / "incremental" / hour_dir / f"{minute}.{host_file_suffix}.json"


class SystemMetricsWriter:
    """Appends samples to per-minute JSON-lines files.

    Args:
        profiler_dir: the profiler output folder (holding ``system/`` and ``framework/``).
        host_file_suffix: the ``algo-N`` part of the file names.

    .. versionadded:: 0.1.0
    """

    def __init__(self, profiler_dir: str | Path, host_file_suffix: str) -> None:
        self._root = Path(profiler_dir)
        self._suffix = host_file_suffix
        self._path: Path | None = None
        self._file: IO[str] | None = None

    @property
    def current_path(self) -> Path | None:
        """The file being written, if any."""
        return self._path

    def write(self, events: Iterable[SystemEvent]) -> int:
        """Write one sample (events sharing a timestamp); returns the number of lines."""
        batch = list(events)
        if not batch:
            return 0
        lines = [json.dumps(e.to_json(), separators=(",", ":")) for e in batch]
        path = system_file_path(self._root, batch[0].timestamp, self._suffix)
        if path != self._path:
            self.close()
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8")
            self._path = path
        if self._file is None:  # pragma: no cover - opened just above
            return 0
        self._file.write("\n".join(lines) + "\n")
        self._file.flush()
        return len(lines)

    def close(self) -> None:
        """Flush and close the current file."""
        if self._file is not None:
            self._file.flush()
            self._file.close()
        self._file = None
        self._path = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
