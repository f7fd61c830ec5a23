"""One system snapshot in a shape the rules can use."""

from __future__ import annotations

import re

import attrs

from .._events import SystemEvent

__all__ = ["Snapshot", "to_snapshots"]

_CORE = re.compile(r"^cpu\d+$")


@attrs.frozen(kw_only=True)
class Snapshot:
    """Values of one sampling instant: per core, per GPU, memory.

    .. versionadded:: 0.1.0
    """

    timestamp: float
    cpu: dict[str, float] = attrs.field(factory=dict)
    iowait: dict[str, float] = attrs.field(factory=dict)
    gpu: dict[str, float] = attrs.field(factory=dict)
    gpu_memory: dict[str, float] = attrs.field(factory=dict)
    memory: float | None = None
    network: float | None = None

    @property
    def cpu_total(self) -> float | None:
        """Mean utilisation over cores."""
        return sum(self.cpu.values()) / len(self.cpu) if self.cpu else None


def to_snapshots(groups: list[list[SystemEvent]]) -> list[Snapshot]:
    """Turn grouped events (see ``group_snapshots``) into snapshots."""
    out = []
    for group in groups:
        cpu: dict[str, float] = {}
        iowait: dict[str, float] = {}
        gpu: dict[str, float] = {}
        gmem: dict[str, float] = {}
        memory = network = None
        for e in group:
            if e.dimension == "CPUUtilization" and _CORE.match(e.name):
                cpu[e.name] = e.value
            elif e.dimension == "I/OWaitPercentage":
                iowait[e.name] = e.value
            elif e.dimension == "GPUUtilization":
                gpu[e.name] = e.value
            elif e.dimension == "GPUMemoryUtilization":
                gmem[e.name] = e.value
            elif e.name == "MemoryUsedPercent":
                memory = e.value
            elif e.dimension == "Algorithm":
                network = e.value
        out.append(
            Snapshot(
                timestamp=group[0].timestamp,
                cpu=cpu,
                iowait=iowait,
                gpu=gpu,
                gpu_memory=gmem,
                memory=memory,
                network=network,
            )
        )
    return out
