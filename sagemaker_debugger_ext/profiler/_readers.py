"""Incremental readers of system-metrics and framework-timeline files (local folders).

Each ``refresh()`` reads only what is new: system files are followed by byte offset
(a half-written last line is left for the next refresh), framework files are read once
when they appear (they are renamed into place complete).
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
from pathlib import Path
from typing import Any

from ._events import FrameworkEvent, SystemEvent

__all__ = ["FrameworkMetricsReader", "SystemMetricsReader"]

_SYSTEM_NAME = re.compile(r"^(\d+)\.(.+)\.json$")
_FRAMEWORK_NAME = re.compile(
    r"^(\d+)_(.+)_(pythontimeline|model_timeline|horovod_timeline|smdataparallel_timeline)\.json$"
)


class SystemMetricsReader:
    """Reads ``<profiler dir>/system/incremental/<hour>/<epoch>.algo-N.json``.

    .. versionadded:: 0.1.0
    """

    def __init__(self, profiler_dir: str | Path) -> None:
        self._root = Path(profiler_dir) / "system" / "incremental"
        self._offsets: dict[Path, int] = {}
        self._events: list[SystemEvent] = []
        self._times: list[float] = []
        self.bad_lines = 0

    def _files(self) -> list[Path]:
        if not self._root.is_dir():
            return []
        files: list[Path] = []
        for hour in sorted(p for p in self._root.iterdir() if p.is_dir()):
            files.extend(p for p in hour.iterdir() if _SYSTEM_NAME.match(p.name))
        return sorted(files, key=lambda p: (int(_SYSTEM_NAME.match(p.name).group(1)), p.name))  # type: ignore[union-attr]

    def refresh(self) -> int:
        """Read new lines; returns how many events were added."""
        added: list[SystemEvent] = []
        for path in self._files():
            offset = self._offsets.get(path, 0)
            try:
                with open(path, "rb") as fh:
                    fh.seek(offset)
                    data = fh.read()
            except OSError:
                continue
            end = data.rfind(b"\n")
            if end < 0:
                continue
            for line in data[: end + 1].splitlines():
                if not line.strip():
                    continue
                try:
                    added.append(SystemEvent.from_json(json.loads(line)))
                except _MALFORMED:
                    self.bad_lines += 1
            self._offsets[path] = offset + end + 1
        if added:
            in_order = (not self._times or added[0].timestamp >= self._times[-1]) and all(
                a.timestamp <= b.timestamp for a, b in itertools.pairwise(added)
            )
            self._events.extend(added)
            if in_order:
                self._times.extend(e.timestamp for e in added)
            else:
                self._events.sort(key=lambda e: e.timestamp)
                self._times = [e.timestamp for e in self._events]
        return len(added)

    @property
    def events(self) -> list[SystemEvent]:
        """Every event read so far, by timestamp."""
        return list(self._events)

    def get_events(self, start_us: int | None = None, end_us: int | None = None) -> list[SystemEvent]:
        """Events with ``start_us <= timestamp < end_us`` (microseconds since the epoch)."""
        lo = 0 if start_us is None else bisect.bisect_left(self._times, start_us / 1_000_000)
        hi = len(self._times) if end_us is None else bisect.bisect_left(self._times, end_us / 1_000_000)
        return self._events[lo:hi]

    @property
    def first_timestamp_us(self) -> int | None:
        """Earliest sample time, microseconds."""
        return int(self._times[0] * 1_000_000) if self._times else None

    @property
    def last_timestamp_us(self) -> int | None:
        """Latest sample time, microseconds."""
        return int(self._times[-1] * 1_000_000) if self._times else None


#: what a malformed JSON value raises on conversion; such lines/events are skipped and counted
_MALFORMED = (ValueError, KeyError, TypeError, AttributeError, OverflowError, RecursionError)


def _int(value: object) -> int | None:
    """``value`` as an int (ints and numeric strings; bools, floats' NaN/inf and others: None)."""
    if isinstance(value, bool):
        return None
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except _MALFORMED:
        return None


def _parse_timeline(data: Any, node_id: str) -> list[FrameworkEvent]:
    """The complete events of a timeline file; events with fields of the wrong type are skipped."""
    if not isinstance(data, list):
        return []
    base = 0
    tracks: dict[int, str] = {}
    for obj in data:
        if isinstance(obj, dict) and obj.get("ph") == "M" and obj.get("name") == "process_name":
            args = obj.get("args")
            if not isinstance(args, dict):
                continue
            if "start_time_since_epoch_in_micros" in args:
                base = _int(args["start_time_since_epoch_in_micros"]) or 0
            elif "name" in args and _int(obj.get("pid", 0)) is not None:
                tracks[_int(obj.get("pid", 0)) or 0] = str(args["name"])
    out = []
    for obj in data:
        if not isinstance(obj, dict) or obj.get("ph") != "X":
            continue
        ts, dur, pid, args = _int(obj.get("ts")), _int(obj.get("dur", 0)), _int(obj.get("pid", 0)), obj.get("args")
        if ts is None or dur is None or pid is None or not isinstance(args, dict | None):
            continue
        start = base + ts
        name = str(obj.get("name", ""))
        out.append(
            FrameworkEvent(
                name=name,
                phase=tracks.get(pid, name),
                start_us=start,
                end_us=start + dur,
                node_id=node_id,
                args=dict(args or {}),
            )
        )
    return out


class FrameworkMetricsReader:
    """Reads ``<profiler dir>/framework/pevents/<hour>/<end_us>_<node>_*timeline.json``.

    .. versionadded:: 0.1.0
    """

    def __init__(self, profiler_dir: str | Path) -> None:
        self._root = Path(profiler_dir) / "framework" / "pevents"
        self._seen: set[Path] = set()
        self._events: list[FrameworkEvent] = []
        self._new: list[FrameworkEvent] = []
        self.bad_files = 0
        self.last_file_end_us: int | None = None

    def refresh(self) -> int:
        """Read files that appeared since the last call; returns how many events were added."""
        if not self._root.is_dir():
            return 0
        added: list[FrameworkEvent] = []
        for hour in sorted(p for p in self._root.iterdir() if p.is_dir()):
            for path in sorted(hour.iterdir()):
                m = _FRAMEWORK_NAME.match(path.name)
                if m is None or path in self._seen:
                    continue
                try:
                    data = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError, RecursionError):
                    self.bad_files += 1
                    self._seen.add(path)
                    continue
                self._seen.add(path)
                added.extend(_parse_timeline(data, m.group(2)))
                end = int(m.group(1))
                self.last_file_end_us = max(end, self.last_file_end_us or end)
        if added:
            added.sort(key=lambda e: e.start_us)
            self._events.extend(added)
            self._events.sort(key=lambda e: e.start_us)
            self._new.extend(added)
        return len(added)

    def take_new(self) -> list[FrameworkEvent]:
        """Events read since the previous ``take_new`` call (arrival order, by start)."""
        new, self._new = self._new, []
        return new

    def put_back(self, events: list[FrameworkEvent]) -> None:
        """Return events from ``take_new`` that were not used; the next call yields them first."""
        self._new[:0] = events

    @property
    def events(self) -> list[FrameworkEvent]:
        """Every event read so far, by start time."""
        return list(self._events)

    def get_events(self, start_us: int | None = None, end_us: int | None = None) -> list[FrameworkEvent]:
        """Events overlapping ``[start_us, end_us)``."""
        lo = float("-inf") if start_us is None else start_us
        hi = float("inf") if end_us is None else end_us
        return [e for e in self._events if e.end_us >= lo and e.start_us < hi]
