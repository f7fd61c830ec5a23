"""Fixtures for profiler tests: a builder of synthetic profiler folders, written with our writers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from sagemaker_debugger_ext.profiler import (
    FrameworkMetricsWriter,
    SystemEvent,
    SystemMetricsWriter,
)

T0 = 1_700_000_000.0  # a fixed start (2023-11-14 22:13:20 UTC)


class ProfilerData:
    """Writes system samples and framework events into a profiler folder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def system(
        self,
        n: int,
        *,
        interval: float = 0.5,
        start: float = T0,
        cores: int = 4,
        cpu: Callable[[int, int], float] = lambda i, c: 20.0,
        iowait: Callable[[int, int], float] = lambda i, c: 1.0,
        gpus: int = 0,
        gpu: Callable[[int, int], float] = lambda i, g: 90.0,
        gpu_mem: Callable[[int, int], float] = lambda i, g: 50.0,
        memory: float = 30.0,
    ) -> None:
        """``n`` samples, ``interval`` s apart."""
        with SystemMetricsWriter(self.root, "algo-1") as writer:
            cpu_dims = (("CPUUtilization", cpu), ("I/OWaitPercentage", iowait))
            gpu_dims = (("GPUUtilization", gpu), ("GPUMemoryUtilization", gpu_mem))
            for i in range(n):
                rows = [("cpu", f"cpu{c}", dim, value(i, c)) for c in range(cores) for dim, value in cpu_dims]
                rows.append(("memory", "MemoryUsedPercent", "Memory", memory))
                rows += [("gpu", f"gpu{g}", dim, value(i, g)) for g in range(gpus) for dim, value in gpu_dims]
                ts = start + i * interval
                writer.write(
                    [
                        SystemEvent(type=t, name=m, dimension=d, value=v, node_id="algo-1", timestamp=ts)
                        for t, m, d, v in rows
                    ]
                )

    def steps(
        self,
        durations: Sequence[float],
        *,
        start: float = T0 + 1.0,
        gap: float = 0.01,
        mode: str = "TRAIN",
        node: str = "1-algo-1",
    ) -> None:
        """Consecutive step events of the given durations (seconds)."""
        with FrameworkMetricsWriter(self.root, node) as writer:
            t = start
            for i, d in enumerate(durations):
                name = f"Step:ModeKeys.{mode}"
                writer.record(name, name, t, t + d, step=i, mode=mode)
                t += d + gap

    def dataloader(self, seconds: int, workers: int, *, start: float = T0 + 1.0, node: str = "1-algo-1") -> None:
        """``workers`` data-loader events per second, each with its own worker pid."""
        with FrameworkMetricsWriter(self.root, node) as writer:
            for s in range(seconds):
                for w in range(workers):
                    t = start + s + w * 0.01
                    writer.record(
                        "DataLoaderIterator", "dataloader", t, t + 0.005, step=s, mode="TRAIN", worker_pid=1000 + w
                    )

    def end(self) -> None:
        """Write ``training_job_end.ts`` at the folder's root."""
        (self.root / "training_job_end.ts").touch()


@pytest.fixture
def profiler_data(tmp_path: Path) -> ProfilerData:
    """An empty profiler folder with writers for synthetic metrics."""
    root = tmp_path / "profiler"
    root.mkdir()
    return ProfilerData(root)
