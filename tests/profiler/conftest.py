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
            for i in range(n):
                ts = start + i * interval
                ev = []
                for c in range(cores):
                    ev.append(
                        SystemEvent(
                            type="cpu",
                            name=f"cpu{c}",
                            dimension="CPUUtilization",
                            value=cpu(i, c),
                            node_id="algo-1",
                            timestamp=ts,
                        )
                    )
                    ev.append(
                        SystemEvent(
                            type="cpu",
                            name=f"cpu{c}",
                            dimension="I/OWaitPercentage",
                            value=iowait(i, c),
                            node_id="algo-1",
                            timestamp=ts,
                        )
                    )
                ev.append(
                    SystemEvent(
                        type="memory",
                        name="MemoryUsedPercent",
                        dimension="Memory",
                        value=memory,
                        node_id="algo-1",
                        timestamp=ts,
                    )
                )
                for g in range(gpus):
                    ev.append(
                        SystemEvent(
                            type="gpu",
                            name=f"gpu{g}",
                            dimension="GPUUtilization",
                            value=gpu(i, g),
                            node_id="algo-1",
                            timestamp=ts,
                        )
                    )
                    ev.append(
                        SystemEvent(
                            type="gpu",
                            name=f"gpu{g}",
                            dimension="GPUMemoryUtilization",
                            value=gpu_mem(i, g),
                            node_id="algo-1",
                            timestamp=ts,
                        )
                    )
                writer.write(ev)

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
