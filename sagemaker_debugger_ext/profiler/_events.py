"""Value objects for one system-metrics sample and one framework (timeline) event."""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["FrameworkEvent", "SystemEvent", "is_gpu_dimension"]

_GPU_DIMENSIONS = frozenset({"GPUUtilization", "GPUMemoryUtilization"})


def is_gpu_dimension(dimension: str) -> bool:
    """Whether a system-metrics ``Dimension`` describes a GPU."""
    return dimension in _GPU_DIMENSIONS


@attrs.frozen(kw_only=True)
class SystemEvent:
    """One JSON line of SageMaker's system-metrics files.

    Attributes:
        type: ``Type`` (``cpu``, ``gpu``, ``memory``, ``disk``, ``network``).
        name: ``Name`` (``cpu0``, ``gpu1``, ``MemoryUsedPercent``, ...).
        dimension: ``Dimension`` (``CPUUtilization``, ``GPUUtilization``, ...).
        value: ``Value``.
        node_id: ``NodeId`` (``algo-1``).
        timestamp: ``Timestamp`` in seconds since the epoch.

    .. versionadded:: 0.1.0
    """

    type: str
    name: str
    dimension: str
    value: float
    node_id: str
    timestamp: float

    @property
    def timestamp_us(self) -> int:
        """The timestamp in microseconds since the epoch."""
        return int(self.timestamp * 1_000_000)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> SystemEvent:
        """Build from one decoded JSON line (``KeyError``/``TypeError``/``ValueError`` if malformed)."""
        return cls(
            type=str(obj.get("Type", "")),
            name=str(obj.get("Name", "")),
            dimension=str(obj["Dimension"]),
            value=float(obj["Value"]),
            node_id=str(obj.get("NodeId", "")),
            timestamp=float(obj["Timestamp"]),
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON object SageMaker writes for this sample."""
        return {
            "Type": self.type,
            "Name": self.name,
            "Dimension": self.dimension,
            "Value": self.value,
            "NodeId": self.node_id,
            "Timestamp": self.timestamp,
        }


@attrs.frozen(kw_only=True)
class FrameworkEvent:
    """One complete (``"ph": "X"``) event of a framework timeline file.

    Attributes:
        name: the event name, e.g. ``Step:ModeKeys.TRAIN`` or ``forward``.
        phase: the track (``process_name``) the event sits on.
        start_us: absolute start, microseconds since the epoch.
        end_us: absolute end, microseconds since the epoch.
        node_id: the node that wrote the file.
        args: the event's ``args`` (``step_num`` is a string, as smdebug writes it).

    .. versionadded:: 0.1.0
    """

    name: str
    phase: str
    start_us: int
    end_us: int
    node_id: str = ""
    args: dict[str, Any] = attrs.field(factory=dict, eq=False, hash=False)

    @property
    def duration_s(self) -> float:
        """Duration in seconds."""
        return (self.end_us - self.start_us) / 1_000_000

    @property
    def step(self) -> int | None:
        """The ``step_num`` argument as an int, or None."""
        raw = self.args.get("step_num")
        try:
            return int(raw) if raw is not None else None
        except (TypeError, ValueError):
            return None

    @property
    def mode(self) -> str | None:
        """``TRAIN``/``EVAL``/... for ``Step:ModeKeys.<MODE>`` events, else the ``mode`` argument."""
        if self.name.startswith("Step:ModeKeys."):
            return self.name.split(".", 1)[1]
        mode = self.args.get("mode")
        return str(mode) if mode is not None else None

    @property
    def is_step(self) -> bool:
        """Whether this is a whole-step event (``Step:ModeKeys.*`` on its own track)."""
        if not self.name.startswith("Step:ModeKeys."):
            return False
        return self.phase in ("", self.name) or self.phase.lower() == "step" or self.phase.startswith("Step:")

    @property
    def category(self) -> str:
        """``step``, ``forward``, ``backward``, ``dataloader`` or ``other`` (from phase, then name)."""
        if self.is_step:
            return "step"
        for text in (self.phase.lower(), self.name.lower()):
            for cat in ("dataloader", "forward", "backward"):
                if cat in text:
                    return cat
            if "data" in text and "load" in text:
                return "dataloader"
        return "other"
