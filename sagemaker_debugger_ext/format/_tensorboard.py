"""TensorBoard event files: scalars and histograms, real payload CRCs."""

from __future__ import annotations

import functools
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .._exceptions import ConfigValueError, field_error_message
from ._closing import ClosesOnExit
from ._encode import encode_histogram_value, encode_scalar_value, encode_summary_event
from ._files import atomic_write
from ._layout import check_name, check_step, safe_join
from ._tfrecord import crc_footer, frame_header

__all__ = ["TensorBoardWriter", "default_histogram_edges", "histogram_buckets"]

_NUMERIC_KINDS = frozenset("biuf")  # bool, signed, unsigned, float: what a histogram can show


@functools.cache
def default_histogram_edges() -> np.ndarray:
    """TensorFlow's default histogram bucket edges: ±1e-12·1.1^k up to 1e20, and 0."""
    pos = []
    v = 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    edges = np.array([-x for x in reversed(pos)] + [0.0] + pos)
    edges.setflags(write=False)
    return edges


def histogram_buckets(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Return ``(bucket_limit, bucket)`` over the default edges, trimmed to the support.

    TensorBoard stores right edges only, so one empty bucket is kept left of the first
    non-empty one. Returns None when no finite value falls inside the edges.
    """
    edges = default_histogram_edges()
    counts, _ = np.histogram(values, bins=edges)
    nz = np.flatnonzero(counts)
    if nz.size == 0:
        return None
    first, last = int(nz[0]), int(nz[-1])
    limits = edges[first : last + 2]  # left edge of the first bucket, then right edges
    buckets = np.concatenate([[0.0], counts[first : last + 1].astype(np.float64)])
    return limits, buckets


class TensorBoardWriter(ClosesOnExit):
    """Write TensorBoard event files for one mode, one file per global step, like smdebug.

    Files are ``<logdir>/<MODE>/<step:012d>_<pid>_<hostname>.tfevents``; a step's file is
    (re)written atomically on ``flush()``/``close()`` and when a later step starts.

    Args:
        logdir: the TensorBoard folder.
        mode_name: ``TRAIN``, ``EVAL``, ``PREDICT`` or ``GLOBAL`` (the sub-folder).
        clock: the source of ``Event.wall_time``.
    """

    def __init__(
        self,
        logdir: str | os.PathLike[str],
        *,
        mode_name: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._dir = safe_join(logdir, check_name("mode_name", mode_name))
        self._clock = clock
        self._suffix = f"{os.getpid()}_{socket.gethostname()}"
        self._step: int | None = None
        self._records: list[bytes] = []
        self._dirty = False
        self._closed = False

    def _record(self, step: int, value: bytes) -> None:
        if self._closed:
            msg = "TensorBoardWriter is closed"
            raise ConfigValueError(msg, field="TensorBoardWriter", value=step)
        check_step("step", step)
        if self._step is not None and step != self._step:
            self.flush()
            self._records = []
        self._step = step
        payload = encode_summary_event(self._clock(), step, value)
        self._records.append(frame_header(len(payload)) + payload + crc_footer(payload))
        self._dirty = True

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        """Add a scalar (``simple_value``) under ``tag`` at global ``step``."""
        try:
            scalar = float(np.asarray(value, dtype=np.float64).reshape(-1)[0]) if np.size(value) == 1 else None
        except (TypeError, ValueError):
            scalar = None
        if scalar is None:
            msg = field_error_message("value", "a number or a one-element array", value)
            raise ConfigValueError(msg, field="value", value=value)
        self._record(step, encode_scalar_value(tag, scalar))

    def add_histogram(self, tag: str, values: np.ndarray, step: int) -> bool:
        """Add a histogram of ``values`` (TF default buckets); return False if none was written.

        Non-finite values are ignored; an empty or all-non-finite input, and a non-numeric
        one (strings, e.g. XGBoost's ``trees/*`` columns, objects, complex), write nothing.
        """
        arr = np.asarray(values)
        if arr.dtype.kind not in _NUMERIC_KINDS:
            return False
        flat = arr.astype(np.float64, copy=False).reshape(-1)
        flat = flat[np.isfinite(flat)]
        if flat.size == 0:
            return False
        buckets = histogram_buckets(flat)
        if buckets is None:
            return False
        limits, counts = buckets
        value = encode_histogram_value(
            tag,
            vmin=float(flat.min()),
            vmax=float(flat.max()),
            num=float(flat.size),
            vsum=float(flat.sum()),
            sum_squares=float(flat.dot(flat)),
            bucket_limit=limits,
            bucket=counts,
        )
        self._record(step, value)
        return True

    def flush(self) -> None:
        """Write the current step's file (all its records so far) atomically."""
        if not self._dirty or self._step is None:
            return
        path: Path = self._dir / f"{self._step:012d}_{self._suffix}.tfevents"
        atomic_write(path, self._records)
        self._dirty = False

    def close(self) -> None:
        """Flush and stop accepting records."""
        if not self._closed:
            self.flush()
            self._records = []
            self._closed = True
