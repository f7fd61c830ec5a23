"""The system monitor process: ``python -m sagemaker_debugger_ext.profiler monitor``.

Samples the machine every interval and writes SageMaker's system-metrics files. SIGTERM
(or SIGINT) makes it finish the current sample, flush, close and exit 0 at once. With
``--config-file`` it watches the job's ``profilerconfig.json`` (its mtime, each interval)
and applies ``ProfilingIntervalInMilliseconds`` and ``DisableProfiler`` live: that is how
``update_profiler()`` / ``disable_profiling()`` reach a running local job.
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import attrs

from .._exceptions import ProfilerError, field_error_message
from ._config import DEFAULT_INTERVAL_MS, read_profiler_config
from ._sampler import GpuProbe, SystemSampler
from ._system_writer import SystemMetricsWriter

__all__ = ["MonitorOptions", "SystemMonitor", "build_monitor_parser", "monitor_main"]

_ALGO_HOST = re.compile(r"^algo-\d+$")
_SAFE_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


@attrs.frozen(kw_only=True)
class MonitorOptions:
    """What the monitor process was asked to do.

    .. versionadded:: 0.1.0
    """

    output_dir: Path = attrs.field(converter=Path)
    interval_ms: int = DEFAULT_INTERVAL_MS
    host: str = "algo-1"
    host_index: int | None = None
    config_file: Path | None = attrs.field(default=None, converter=attrs.converters.optional(Path))
    gpu: bool = True

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.interval_ms, int) or self.interval_ms <= 0:
            raise ProfilerError(field_error_message("interval_ms", "a positive integer", self.interval_ms))
        if not _SAFE_HOST.match(self.host) or ".." in self.host:
            raise ProfilerError(field_error_message("host", "a host name such as 'algo-1'", self.host))
        if self.host_index is not None and self.host_index < 1:
            raise ProfilerError(field_error_message("host_index", "an integer >= 1", self.host_index))

    @property
    def file_suffix(self) -> str:
        """The ``algo-N`` part of the file names."""
        if self.host_index is not None:
            return f"algo-{self.host_index}"
        return self.host if _ALGO_HOST.match(self.host) else "algo-1"


class SystemMonitor:
    """Sampling loop; ``stop()`` (or a signal) ends it promptly.

    .. versionadded:: 0.1.0
    """

    def __init__(self, options: MonitorOptions) -> None:
        self.options = options
        self._stop = threading.Event()
        self._interval_s = options.interval_ms / 1000.0
        self._disabled = False
        self._config_stamp: tuple[int, int] | None = None
        self.samples_written = 0

    @property
    def interval_s(self) -> float:
        """The sampling interval now in force, in seconds."""
        return self._interval_s

    @property
    def disabled(self) -> bool:
        """Whether the watched config currently disables profiling."""
        return self._disabled

    def stop(self) -> None:
        """Ask the loop to finish (safe from a signal handler)."""
        self._stop.set()

    def poll_config(self) -> bool:
        """Re-read the watched config file if it changed; returns whether it was applied."""
        path = self.options.config_file
        if path is None:
            return False
        try:
            st = path.stat()
        except OSError:
            return False
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._config_stamp:
            return False
        try:
            settings = read_profiler_config(path)
        except (ProfilerError, OSError):
            return False  # half-written or bad file: keep the current settings, retry on change
        self._config_stamp = stamp
        self._disabled = settings.disabled
        self._interval_s = settings.interval_ms / 1000.0
        return True

    def run(self) -> int:
        """Sample until stopped; returns the process exit code."""
        gpu = GpuProbe() if self.options.gpu else None
        sampler = SystemSampler(self.options.host, gpu)
        writer = SystemMetricsWriter(self.options.output_dir, self.options.file_suffix)
        self.poll_config()
        next_t = time.monotonic()
        try:
            while not self._stop.is_set():
                self.poll_config()
                if not self._disabled:
                    writer.write(sampler.sample())
                    self.samples_written += 1
                else:
                    writer.close()
                next_t += self._interval_s
                now = time.monotonic()
                if next_t < now:  # fell behind (machine busy, interval changed): skip, never burst
                    next_t = now + self._interval_s
                self._stop.wait(next_t - now)
        finally:
            writer.close()
            if gpu is not None:
                gpu.close()
        return 0


def build_monitor_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the monitor's flags to ``parser``."""
    parser.add_argument("--output-dir", required=True, help="profiler output folder (gets system/...)")
    parser.add_argument("--interval-ms", type=int, default=DEFAULT_INTERVAL_MS, help="sampling interval")
    parser.add_argument("--host", default="algo-1", help="NodeId written in each sample")
    parser.add_argument("--host-index", type=int, default=None, help="N of the algo-N file suffix")
    parser.add_argument("--config-file", default=None, help="profilerconfig.json to watch for live updates")
    parser.add_argument("--no-gpu", action="store_true", help="do not query NVML")
    return parser


def monitor_main(argv: Sequence[str]) -> int:
    """Run the monitor with command-line ``argv`` (without the ``monitor`` word)."""
    parser = build_monitor_parser(argparse.ArgumentParser(prog="python -m sagemaker_debugger_ext.profiler monitor"))
    args = parser.parse_args(list(argv))
    try:
        options = MonitorOptions(
            output_dir=args.output_dir,
            interval_ms=args.interval_ms,
            host=args.host,
            host_index=args.host_index,
            config_file=args.config_file,
            gpu=not args.no_gpu,
        )
    except ProfilerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    monitor = SystemMonitor(options)

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        monitor.stop()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    return monitor.run()
