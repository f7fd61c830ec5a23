"""Sampling the machine: CPU (total and per core), I/O wait, memory, disk, network, GPU.

psutil gives CPU/memory/disk/network; NVML (``pynvml`` from the ``nvidia-ml-py`` package)
gives GPU utilisation and memory when it is installed and a GPU is present. Dimension
names follow SageMaker's files and smdebug's rules: ``CPUUtilization`` per ``cpu<i>``,
``I/OWaitPercentage``, ``GPUUtilization``/``GPUMemoryUtilization`` per ``gpu<i>``,
``MemoryUsedPercent``, ``Algorithm`` for network bytes/s (as smdebug's OverallSystemUsage
reads it). Additions of ours use dimensions smdebug's rules do not count
(``CPUUtilizationTotal``, ``ReadBytesPerSecond``, ...), so they never skew them.
"""

from __future__ import annotations

import importlib
import time
from types import ModuleType
from typing import Any

import psutil

from ._events import SystemEvent

__all__ = ["GpuProbe", "SystemSampler"]


class GpuProbe:
    """NVML access, or nothing when NVML or a GPU is missing.

    .. versionadded:: 0.1.0
    """

    def __init__(self) -> None:
        self._nvml: ModuleType | None = None
        self._handles: list[Any] = []
        try:
            nvml = importlib.import_module("pynvml")
        except ImportError:
            return
        try:
            nvml.nvmlInit()
            count = nvml.nvmlDeviceGetCount()
            self._handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        except (nvml.NVMLError, OSError):  # no driver / no GPU is a normal outcome
            self._handles = []
            return
        self._nvml = nvml

    @property
    def count(self) -> int:
        """How many GPUs NVML reports (0 without NVML)."""
        return len(self._handles)

    def read(self) -> list[tuple[int, float, float]]:
        """``(index, utilisation %, memory used %)`` per GPU."""
        if self._nvml is None:
            return []
        out = []
        for i, handle in enumerate(self._handles):
            try:
                util = self._nvml.nvmlDeviceGetUtilizationRates(handle)
                mem = self._nvml.nvmlDeviceGetMemoryInfo(handle)
            except self._nvml.NVMLError:  # a GPU falling off the bus must not stop the monitor
                continue
            mem_pct = 100.0 * float(mem.used) / float(mem.total) if mem.total else 0.0
            out.append((i, float(util.gpu), round(mem_pct, 2)))
        return out

    def close(self) -> None:
        """Shut NVML down."""
        if self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            except self._nvml.NVMLError:  # best effort at exit
                pass
            self._nvml = None


class SystemSampler:
    """Takes one sample of the machine per call; rates are computed between calls.

    Args:
        node_id: the ``NodeId`` written in each line (``algo-1``).
        gpu: a :class:`GpuProbe`, or None to skip GPUs.

    .. versionadded:: 0.1.0
    """

    def __init__(self, node_id: str, gpu: GpuProbe | None = None) -> None:
        self._node = node_id
        self._gpu = gpu
        # Prime the "since last call" counters so the first sample is meaningful.
        psutil.cpu_times_percent(interval=None, percpu=True)
        self._last_t = time.monotonic()
        self._last_disk = self._disk()
        self._last_net = self._net()

    @staticmethod
    def _disk() -> tuple[int, int] | None:
        try:
            c = psutil.disk_io_counters()
        except (OSError, RuntimeError):
            return None
        return (c.read_bytes, c.write_bytes) if c is not None else None

    @staticmethod
    def _net() -> tuple[int, int] | None:
        try:
            c = psutil.net_io_counters()
        except (OSError, RuntimeError):
            return None
        return (c.bytes_recv, c.bytes_sent) if c is not None else None

    def sample(self, timestamp: float | None = None) -> list[SystemEvent]:
        """One sample: every metric with the same ``Timestamp`` (now, unless given)."""
        ts = time.time() if timestamp is None else timestamp
        now = time.monotonic()
        dt = max(now - self._last_t, 1e-6)
        self._last_t = now
        node = self._node
        events: list[SystemEvent] = []

        def add(type_: str, name: str, dimension: str, value: float) -> None:
            event = SystemEvent(type=type_, name=name, dimension=dimension, value=value, node_id=node, timestamp=ts)
            events.append(event)

        per_core = psutil.cpu_times_percent(interval=None, percpu=True)
        total_util = 0.0
        for i, times in enumerate(per_core):
            iowait = float(getattr(times, "iowait", 0.0))
            util = max(0.0, min(100.0, 100.0 - float(times.idle) - iowait))
            total_util += util
            add("cpu", f"cpu{i}", "CPUUtilization", round(util, 2))
            add("cpu", f"cpu{i}", "I/OWaitPercentage", round(iowait, 2))
        add("cpu", "cpu_total", "CPUUtilizationTotal", round(total_util / max(len(per_core), 1), 2))
        add("memory", "MemoryUsedPercent", "Memory", float(psutil.virtual_memory().percent))
        disk = self._disk()
        if disk is not None and self._last_disk is not None:
            add("disk", "disk", "ReadBytesPerSecond", round(max(disk[0] - self._last_disk[0], 0) / dt, 1))
            add("disk", "disk", "WriteBytesPerSecond", round(max(disk[1] - self._last_disk[1], 0) / dt, 1))
        self._last_disk = disk
        net = self._net()
        if net is not None and self._last_net is not None:
            recv = max(net[0] - self._last_net[0], 0) / dt
            sent = max(net[1] - self._last_net[1], 0) / dt
            add("network", "network", "Algorithm", round(recv + sent, 1))
            add("network", "network", "ReceiveBytesPerSecond", round(recv, 1))
            add("network", "network", "TransmitBytesPerSecond", round(sent, 1))
        self._last_net = net
        if self._gpu is not None:
            for idx, util, mem_pct in self._gpu.read():
                add("gpu", f"gpu{idx}", "GPUUtilization", util)
                add("gpu", f"gpu{idx}", "GPUMemoryUtilization", mem_pct)
        return events
