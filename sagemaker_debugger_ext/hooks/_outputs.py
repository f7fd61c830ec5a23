"""Side outputs of the hook: TensorBoard export and framework metrics for the profiler.

Both are optional and created only when configured.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np

from .._exceptions import ProfilerError
from ..format import TensorBoardWriter
from ..modes import ModeKeys
from ..profiler import FrameworkMetricsWriter
from ._context import TrainingContext

__all__ = ["FrameworkMetrics", "TensorBoardExport"]

_LOG = logging.getLogger("sagemaker_debugger_ext.hooks")


class TensorBoardExport:
    """One TensorBoard writer per mode under ``<logdir>/<MODE>/``, opened on first use."""

    def __init__(self, logdir: str) -> None:
        self.logdir = logdir
        self._writers: dict[ModeKeys, Any] = {}

    def _writer(self, mode: ModeKeys) -> Any:
        writer = self._writers.get(mode)
        if writer is None:
            writer = self._writers[mode] = TensorBoardWriter(self.logdir, mode_name=mode.name)
        return writer

    def add_scalar(self, mode: ModeKeys, tag: str, value: float, step: int) -> None:
        """One scalar point."""
        self._writer(mode).add_scalar(tag, float(value), step)

    def add_histogram(self, mode: ModeKeys, tag: str, values: np.ndarray, step: int) -> None:
        """One histogram (skipped for empty, boolean and non-numeric arrays, as smdebug).

        An export that fails is logged and skipped: TensorBoard never stops training.
        """
        if values.size == 0 or values.dtype == np.bool_ or values.dtype.kind not in "iuf":
            return
        try:
            self._writer(mode).add_histogram(tag, values, step)
        except (ValueError, TypeError, OSError) as exc:
            _LOG.warning("TensorBoard histogram %r at step %d not exported: %s", tag, step, exc)

    def flush(self) -> None:
        """Flush every open writer."""
        for writer in self._writers.values():
            writer.flush()

    def close(self) -> None:
        """Close every writer."""
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()


class FrameworkMetrics:
    """Step / forward timings handed to the profiler's ``FrameworkMetricsWriter``."""

    def __init__(self, writer: Any) -> None:
        self._writer = writer

    @classmethod
    def create(cls, context: TrainingContext) -> FrameworkMetrics | None:
        """A recorder when ``SMPROFILER_CONFIG_PATH`` enables profiling, else None.

        A path naming no file, or an unreadable / invalid config, turns profiling off with a
        log line, as in smdebug: the hook never fails over the profiler's config.
        """
        path = context.profiler_config_path
        if not path:
            return None
        if not os.path.isfile(path):
            _LOG.info("profiler config %s not found: profiling is off", path)
            return None
        node_id = f"{os.getpid()}-{context.host}".replace("/", "_")
        try:
            writer = FrameworkMetricsWriter.from_profiler_config(path, node_id)
        except (OSError, ProfilerError) as exc:
            _LOG.warning("profiler config %s unusable (%s): profiling is off", path, exc)
            return None
        return cls(writer) if writer is not None else None

    def record(
        self, name: str, start_s: float, end_s: float, step: int, mode: ModeKeys, phase: str | None = None
    ) -> None:
        """One event; ``name`` is e.g. ``Step:ModeKeys.TRAIN`` or ``forward``."""
        self._writer.record(name, phase or name, start_s, end_s, step, mode.name)

    def close(self) -> None:
        """Flush and close the timeline file."""
        self._writer.close()
