"""Profiler rules over system metrics: bottlenecks, GPU use, overall usage."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from ...rule_contract._params import Kind, Param, at_least, fraction, non_negative
from ...rule_contract._result import Finding, RuleResult
from ._base import PATIENCE, ProfilerRule, Window, group_snapshots, make_params, percentile
from ._snapshot import Snapshot, to_snapshots

__all__ = [
    "NO_GPU_NOTE",
    "BatchSize",
    "CPUBottleneck",
    "GPUMemoryIncrease",
    "IOBottleneck",
    "LoadBalancing",
    "LowGPUUtilization",
    "OverallSystemUsage",
]

NO_GPU_NOTE = "no GPU metrics in the profiler data (no GPU on the training machine): nothing to evaluate"
"""The note of a GPU rule that saw no GPU metrics (the profiler report says it once)."""


def _snapshots(window: Window) -> list[Snapshot]:
    return to_snapshots(group_snapshots(window.system))


# Parameters two rules declare alike (the bottleneck rules; BatchSize and LowGPUUtilization).
_SHARE = Param.percentage("threshold", 50, "% of samples that must be bottlenecks")
_WINDOW = Param(name="window", kind=Kind.INT, default=500, check=at_least(1), doc="samples in the moving window")
_GPU_UNDER_USED = Param.percentage("gpu_threshold", 10, "GPU utilisation below which the GPU is under-used")


class _Bottleneck(ProfilerRule):
    """Share of snapshots where some core is busy (> limit) while the GPUs idle."""

    _LIMIT = "cpu_threshold"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.datapoints = 0
        self.bottlenecks = 0
        self.saw_gpu = False

    def _busy(self, snap: Snapshot) -> bool:
        raise NotImplementedError

    def evaluate(self, window: Window) -> RuleResult:
        p = self.params
        for snap in _snapshots(window):
            if not snap.cpu and not snap.gpu:
                continue
            self.datapoints += 1
            self.saw_gpu = self.saw_gpu or bool(snap.gpu)
            # Without GPUs there is nothing to starve: a busy CPU alone counts (documented).
            gpu_low = not snap.gpu or min(snap.gpu.values()) < p["gpu_threshold"]
            if gpu_low and self._busy(snap):
                self.bottlenecks += 1
        self.report["Datapoints"] = self.datapoints
        self.report["Violations"] = self.bottlenecks
        self.report["Details"]["gpu_present"] = self.saw_gpu
        if self.datapoints > p["patience"] and self.datapoints:
            share = 100.0 * self.bottlenecks / self.datapoints
            self.report["Details"]["bottleneck_percent"] = round(share, 2)
            if share > p["threshold"]:
                return self.fire(
                    f"{self.NAME}: {self.bottlenecks} of {self.datapoints} samples ({share:.1f}% > "
                    f"{p['threshold']:g}%) had {self._what()} while GPUs were under-used"
                )
        return RuleResult.from_findings((), seen=self.datapoints > 0)

    def _what(self) -> str:
        return ""


class CPUBottleneck(_Bottleneck):
    """Fires when CPU bottlenecks (a core above ``cpu_threshold`` while GPU below
    ``gpu_threshold``) exceed ``threshold`` % of samples after ``patience`` samples."""

    NAME = "CPUBottleneck"
    PARAMS = make_params(
        _SHARE,
        _GPU_UNDER_USED,
        Param.percentage("cpu_threshold", 90, "core utilisation above which the CPU is busy"),
        PATIENCE,
    )
    DESCRIPTION = "Checks if CPU utilization is high while GPU utilization is low: a CPU bottleneck."
    RECOMMENDATION = (
        "Consider increasing the number of data loader processes, or moving data "
        "pre-processing offline or onto the GPU."
    )

    def _busy(self, snap: Snapshot) -> bool:
        return bool(snap.cpu) and max(snap.cpu.values()) > self.params["cpu_threshold"]

    def _what(self) -> str:
        return f"a core above {self.params['cpu_threshold']:g}%"


class IOBottleneck(_Bottleneck):
    """Fires when I/O wait above ``io_threshold`` while GPU is under-used exceeds ``threshold`` %."""

    NAME = "IOBottleneck"
    PARAMS = make_params(
        _SHARE,
        _GPU_UNDER_USED,
        Param.percentage("io_threshold", 50, "I/O wait % above which I/O is the bottleneck"),
        PATIENCE,
    )
    DESCRIPTION = "Checks if I/O wait time is high while GPU utilization is low: an I/O bottleneck."
    RECOMMENDATION = "Pre-fetch data, use faster storage or a streaming input mode, or choose a different file format."

    def _busy(self, snap: Snapshot) -> bool:
        return bool(snap.iowait) and max(snap.iowait.values()) > self.params["io_threshold"]

    def _what(self) -> str:
        return f"I/O wait above {self.params['io_threshold']:g}%"


class _GpuRule(ProfilerRule):
    NEEDS_GPU = True
    NO_GPU_NOTE = NO_GPU_NOTE

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.datapoints = 0
        self.saw_gpu = False

    def gpu_snapshots(self, window: Window) -> list[Snapshot]:
        """The window's snapshots that hold GPU metrics, counted as datapoints."""
        snaps = [s for s in _snapshots(window) if s.gpu]
        self.saw_gpu = self.saw_gpu or bool(snaps)
        self.datapoints += len(snaps)
        self.report["Datapoints"] = self.datapoints
        return snaps

    def full_buffers(self, window: Window, buf: deque[Snapshot]) -> Iterator[Snapshot]:
        """The GPU rules' moving-window loop: each snapshot goes into ``buf``; once past
        ``patience`` and with ``buf`` full, yield the snapshot that filled it (the caller judges
        ``buf``), then empty it."""
        for snap in self.gpu_snapshots(window):
            buf.append(snap)
            if self.datapoints <= self.params["patience"] or len(buf) < (buf.maxlen or 0):
                continue
            yield snap
            buf.clear()

    def result(self, findings: list[Finding]) -> RuleResult:
        """The window's result: met with ``findings``, else not met once a GPU was seen."""
        return RuleResult.from_findings(findings, seen=self.saw_gpu)

    def finish(self, window: Window) -> RuleResult:
        if not self.saw_gpu:
            self.note = f"{self.NAME}: {self.NO_GPU_NOTE}"
        return RuleResult.not_met()


class BatchSize(_GpuRule):
    """Fires when CPU, GPU and GPU memory p95 are all below their thresholds (batch too small)."""

    NAME = "BatchSize"
    PARAMS = make_params(
        Param.percentage("cpu_threshold_p95", 70, "p95 CPU utilisation below which the CPU is under-used"),
        Param.percentage("gpu_threshold_p95", 70, "p95 GPU utilisation below which the GPU is under-used"),
        Param.percentage("gpu_memory_threshold_p95", 70, "p95 GPU memory below which memory is under-used"),
        PATIENCE,
        _WINDOW,
    )
    DESCRIPTION = "Checks if the GPU is under-utilized because the batch size is too small."
    RECOMMENDATION = "Run on a smaller instance type or increase the batch size."

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.buf: deque[Snapshot] = deque(maxlen=self.params["window"])

    def evaluate(self, window: Window) -> RuleResult:
        p = self.params
        found: list[Finding] = []
        for snap in self.full_buffers(window, self.buf):
            cpu = percentile([s.cpu_total or 0.0 for s in self.buf], 95)
            for gpu in snap.gpu:
                util = percentile([s.gpu.get(gpu, 0.0) for s in self.buf], 95)
                mem = percentile([s.gpu_memory.get(gpu, 0.0) for s in self.buf], 95)
                if (
                    cpu < p["cpu_threshold_p95"]
                    and util < p["gpu_threshold_p95"]
                    and mem < p["gpu_memory_threshold_p95"]
                ):
                    found += self.violation(
                        f"BatchSize: {gpu} p95 utilisation {util:.0f}% and memory {mem:.0f}% "
                        f"with CPU p95 {cpu:.0f}%: the batch size is likely too small"
                    ).findings
        return self.result(found)


class LowGPUUtilization(_GpuRule):
    """Fires when a GPU's p95 utilisation is below ``threshold_p95`` (idle) or its p5 is below
    ``threshold_p5`` while p95 is high (fluctuating)."""

    NAME = "LowGPUUtilization"
    PARAMS = make_params(
        Param.percentage("threshold_p95", 70, "p95 utilisation below which the GPU is under-used"),
        Param.percentage("threshold_p5", 10, "p5 utilisation below which utilisation fluctuates"),
        _WINDOW,
        PATIENCE,
    )
    DESCRIPTION = "Checks if GPU utilization is low or fluctuating."
    RECOMMENDATION = (
        "Check for bottlenecks, minimize blocking calls, change the distributed "
        "training strategy, or increase the batch size."
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.buf: deque[Snapshot] = deque(maxlen=self.params["window"])

    def evaluate(self, window: Window) -> RuleResult:
        p = self.params
        found: list[Finding] = []
        for snap in self.full_buffers(window, self.buf):
            for gpu in snap.gpu:
                vals = [s.gpu.get(gpu, 0.0) for s in self.buf]
                p95, p5 = percentile(vals, 95), percentile(vals, 5)
                if p95 < p["threshold_p95"] and p5 < p["threshold_p5"]:
                    found += self.violation(
                        f"LowGPUUtilization: {gpu} p95 {p95:.0f}% < {p['threshold_p95']:g}%"
                    ).findings
                elif p95 > p["threshold_p95"] and p5 < p["threshold_p5"]:
                    found += self.violation(
                        f"LowGPUUtilization: {gpu} fluctuates (p5 {p5:.0f}%, p95 {p95:.0f}%)"
                    ).findings
        return self.result(found)


class GPUMemoryIncrease(_GpuRule):
    """Fires when a GPU's memory moving average grows by more than ``increase`` percentage points."""

    NAME = "GPUMemoryIncrease"
    PARAMS = make_params(
        Param(
            name="increase",
            kind=Kind.FLOAT,
            default=5,
            check=non_negative,
            doc="absolute increase of memory use (percentage points)",
        ),
        PATIENCE,
        Param(name="window", kind=Kind.INT, default=10, check=at_least(1), doc="samples in the moving average"),
    )
    DESCRIPTION = "Checks for a large increase in GPU memory usage."
    RECOMMENDATION = "Check for memory leaks and tensors kept across steps; choose a larger instance if needed."

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.history: dict[str, list[float]] = {}

    def evaluate(self, window: Window) -> RuleResult:
        p = self.params
        w = p["window"]
        found: list[Finding] = []
        for snap in self.gpu_snapshots(window):
            for gpu, value in snap.gpu_memory.items():
                hist = self.history.setdefault(gpu, [])
                hist.append(value)
                if self.datapoints <= p["patience"] or len(hist) < 2 * w:
                    continue
                before = sum(hist[-2 * w : -w]) / w
                now = sum(hist[-w:]) / w
                if now - before > p["increase"]:
                    found += self.violation(
                        f"GPUMemoryIncrease: {gpu} memory moving average rose from "
                        f"{before:.1f}% to {now:.1f}% (> {p['increase']:g} points)"
                    ).findings
                del hist[: -2 * w]
        return self.result(found)


class LoadBalancing(_GpuRule):
    """Fires when the utilisation histograms of two GPUs differ by more than ``threshold``
    (total-variation distance, 0..1)."""

    NAME = "LoadBalancing"
    PARAMS = make_params(
        Param(
            name="threshold",
            kind=Kind.FLOAT,
            default=0.5,
            check=fraction,
            doc="maximum histogram distance between GPUs",
        ),
        PATIENCE,
    )
    DESCRIPTION = "Detects workload balancing issues across GPUs."
    RECOMMENDATION = "Choose a different distributed training strategy or data sharding."

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.hist: dict[str, list[int]] = {}

    def evaluate(self, window: Window) -> RuleResult:
        p = self.params
        for snap in self.gpu_snapshots(window):
            for gpu, value in snap.gpu.items():
                bins = self.hist.setdefault(gpu, [0] * 10)
                bins[min(int(value // 10), 9)] += 1
        found: list[Finding] = []
        if self.datapoints <= p["patience"] or len(self.hist) < 2:
            return self.result(found)
        names = sorted(self.hist)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                ha, hb = self.hist[a], self.hist[b]
                na, nb = sum(ha) or 1, sum(hb) or 1
                dist = 0.5 * sum(abs(x / na - y / nb) for x, y in zip(ha, hb, strict=True))
                if dist > p["threshold"]:
                    found += self.violation(
                        f"LoadBalancing: {a} and {b} workloads differ (distance {dist:.2f})"
                    ).findings
        return self.result(found)


class OverallSystemUsage(ProfilerRule):
    """Never fires: records max/p99/p95/p50/min of CPU, GPU, memory, I/O wait, network per node."""

    NAME = "OverallSystemUsage"
    PARAMS = make_params()
    DESCRIPTION = "Measures overall system usage per node (statistics only; never triggers)."
    RECOMMENDATION = "Use the statistics to size the instance: low usage suggests a smaller instance type."

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.series: dict[str, list[float]] = {
            k: [] for k in ("CPU", "GPU", "CPU memory", "GPU memory", "I/O", "Network")
        }

    def evaluate(self, window: Window) -> RuleResult:
        for snap in _snapshots(window):
            self.report["Datapoints"] += 1
            s = self.series
            if snap.cpu:
                s["CPU"].append(snap.cpu_total or 0.0)
            if snap.gpu:
                s["GPU"].append(sum(snap.gpu.values()) / len(snap.gpu))
            if snap.gpu_memory:
                s["GPU memory"].append(sum(snap.gpu_memory.values()) / len(snap.gpu_memory))
            if snap.memory is not None:
                s["CPU memory"].append(snap.memory)
            if snap.iowait:
                s["I/O"].append(sum(snap.iowait.values()) / len(snap.iowait))
            if snap.network is not None:
                s["Network"].append(snap.network)
        return RuleResult.from_findings((), seen=self.report["Datapoints"] > 0)

    def finish(self, window: Window) -> RuleResult:
        details = {}
        for name, vals in self.series.items():
            if vals:
                details[name] = {
                    "max": max(vals),
                    "p99": percentile(vals, 99),
                    "p95": percentile(vals, 95),
                    "p50": percentile(vals, 50),
                    "min": min(vals),
                }
        self.report["Details"] = details
        return RuleResult.not_met()
