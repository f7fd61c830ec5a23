"""Matplotlib figures of the profiler report, returned as PNG bytes (Agg, no pyplot state)."""

from __future__ import annotations

import io

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..render._figure import choose_yscale
from ._events import FrameworkEvent, SystemEvent
from .rules._base import group_snapshots
from .rules._framework_rules import step_outliers
from .rules._snapshot import to_snapshots

__all__ = [
    "cpu_figure",
    "gpu_figure",
    "memory_figure",
    "step_duration_yscale",
    "step_histogram_figure",
    "step_timeline_figure",
]

_SIZE = (9.0, 3.0)


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    return buf.getvalue()


def _empty(ax: object, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)  # type: ignore[attr-defined]


def _percent_png(fig: Figure, ax: Axes, title: str) -> bytes:
    """The PNG of a percentage-over-time chart: its title, axes labels and 0-105 % range."""
    ax.set_title(title)
    ax.set_xlabel("seconds since start")
    ax.set_ylabel("%")
    ax.set_ylim(0, 105)
    return _png(fig)


def cpu_figure(events: list[SystemEvent], t0: float) -> bytes:
    """Total CPU utilisation (and each core, faintly) over time."""
    snaps = to_snapshots(group_snapshots(events))
    fig = Figure(figsize=_SIZE)
    ax = fig.add_subplot()
    xs = [s.timestamp - t0 for s in snaps if s.cpu]
    if xs:
        cores = sorted({c for s in snaps for c in s.cpu}, key=lambda c: int(c[3:]))
        for core in cores[:32]:
            ax.plot(xs, [s.cpu.get(core, 0.0) for s in snaps if s.cpu], lw=0.5, alpha=0.3)
        ax.plot(xs, [s.cpu_total or 0.0 for s in snaps if s.cpu], lw=1.8, color="black", label="total")
        ax.legend(loc="upper right")
    else:
        _empty(ax, "no CPU samples")
    return _percent_png(fig, ax, "CPU utilization")


def memory_figure(events: list[SystemEvent], t0: float) -> bytes:
    """Host memory use over time."""
    pts = [(e.timestamp - t0, e.value) for e in events if e.name == "MemoryUsedPercent"]
    fig = Figure(figsize=_SIZE)
    ax = fig.add_subplot()
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color="tab:green")
    else:
        _empty(ax, "no memory samples")
    return _percent_png(fig, ax, "Memory used")


def gpu_figure(events: list[SystemEvent], t0: float) -> bytes:
    """GPU utilisation and memory per GPU over time."""
    fig = Figure(figsize=_SIZE)
    ax = fig.add_subplot()
    series: dict[str, list[tuple[float, float]]] = {}
    for e in events:
        if e.dimension in ("GPUUtilization", "GPUMemoryUtilization"):
            label = f"{e.name} {'util' if e.dimension == 'GPUUtilization' else 'memory'}"
            series.setdefault(label, []).append((e.timestamp - t0, e.value))
    for label, pts in sorted(series.items()):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label)
    if series:
        ax.legend(loc="upper right", fontsize="small")
    else:
        _empty(ax, "no GPU on this machine (no NVML samples)")
    return _percent_png(fig, ax, "GPU utilization and memory")


def step_histogram_figure(steps: list[FrameworkEvent], stddev: float) -> bytes:
    """Histogram of step durations; outliers (> mean + stddev·std) drawn in red."""
    fig = Figure(figsize=_SIZE)
    ax = fig.add_subplot()
    durations = [e.duration_s * 1000 for e in steps]
    if durations:
        mean, std, idx = step_outliers(durations, stddev)
        out = set(idx)
        normal = [d for i, d in enumerate(durations) if i not in out]
        outliers = [d for i, d in enumerate(durations) if i in out]
        bins = min(50, max(5, len(durations) // 3))
        lo, hi = min(durations), max(durations)
        rng = (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5)
        ax.hist(normal, bins=bins, range=rng, color="tab:blue", label=f"steps ({len(normal)})")
        if outliers:
            ax.hist(outliers, bins=bins, range=rng, color="tab:red", label=f"outliers ({len(outliers)})")
        if std > 0:
            ax.axvline(mean + stddev * std, color="tab:red", ls="--", label=f"mean + {stddev:g}·std")
        ax.legend(loc="upper right")
    else:
        _empty(ax, "no step events in the framework metrics")
    ax.set_title("Step duration histogram")
    ax.set_xlabel("step duration (ms)")
    ax.set_ylabel("steps")
    return _png(fig)


def step_duration_yscale(steps: list[FrameworkEvent]) -> str:
    """``log`` when the step durations span three orders of magnitude, else ``linear``."""
    return choose_yscale([e.duration_s for e in steps if e.duration_s > 0])[0]


def step_timeline_figure(steps: list[FrameworkEvent], stddev: float, t0: float) -> bytes:
    """Step durations over time, outliers in red."""
    fig = Figure(figsize=_SIZE)
    ax = fig.add_subplot()
    if steps:
        durations = [e.duration_s * 1000 for e in steps]
        _, _, idx = step_outliers(durations, stddev)
        out = set(idx)
        xs = [e.start_us / 1e6 - t0 for e in steps]
        ax.scatter(xs, durations, s=6, c=["tab:red" if i in out else "tab:blue" for i in range(len(steps))])
        ax.set_yscale(step_duration_yscale(steps))
    else:
        _empty(ax, "no step events in the framework metrics")
    ax.set_title("Step duration over time")
    ax.set_xlabel("seconds since start")
    ax.set_ylabel("ms" + (" (log scale)" if ax.get_yscale() == "log" else ""))
    return _png(fig)
