"""Profiler rule machinery: parameters (strings accepted), windows, per-rule reports."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import attrs

from ..._converters import to_float, to_int
from ..._exceptions import RuleParameterError, field_error_message
from .._events import FrameworkEvent, SystemEvent

__all__ = [
    "DEFAULT_SCAN_INTERVAL_US",
    "Param",
    "ProfilerRule",
    "Window",
    "group_snapshots",
    "percentile",
]

DEFAULT_SCAN_INTERVAL_US = 60_000_000
_SNAPSHOT_WINDOW_S = 0.02


def _to_number(raw: Any, kind: type) -> Any:
    return to_int(raw) if kind is int else to_float(raw)


@attrs.frozen
class Param:
    """One rule parameter: name, type (``int``/``float``/``str``), default and allowed range.

    .. versionadded:: 0.1.0
    """

    name: str
    kind: type
    default: Any
    low: float | None = None
    high: float | None = None
    optional: bool = False
    doc: str = ""

    def expected(self) -> str:
        """Human text for the allowed values."""
        what = {int: "an integer", float: "a number", str: "a string"}[self.kind]
        if self.low is not None and self.high is not None:
            what += f" between {self.low:g} and {self.high:g}"
        elif self.low is not None:
            what += f" >= {self.low:g}"
        return what + (" or None" if self.optional else "")

    def convert(self, raw: Any, rule: str) -> Any:
        """Parse ``raw`` (strings accepted, as RuleParameters arrive)."""
        if self.optional and (raw is None or (isinstance(raw, str) and raw.strip().lower() in {"", "none", "null"})):
            return None
        if self.kind is str:
            return str(raw)
        try:
            value = _to_number(raw, self.kind)
        except (TypeError, ValueError):
            raise RuleParameterError(
                f"{rule}: " + field_error_message(self.name, self.expected(), raw), rule_name=rule
            ) from None
        if (
            (self.low is not None and value < self.low) or (self.high is not None and value > self.high)
        ):
            raise RuleParameterError(f"{rule}: " + field_error_message(self.name, self.expected(), raw), rule_name=rule)
        return value


def _percent(name: str, default: float, doc: str) -> Param:
    return Param(name, float, default, 0, 100, doc=doc)


SCAN = Param("scan_interval_us", int, DEFAULT_SCAN_INTERVAL_US, 1, doc="how often (µs of data) the rule evaluates")
PATIENCE = Param("patience", int, 1000, 0, doc="data points to see before the first check")


@attrs.frozen(kw_only=True)
class Window:
    """The data one evaluation sees.

    Attributes:
        start_us: window start (µs since the epoch).
        end_us: window end.
        system: system events with ``start_us <= timestamp < end_us``.
        framework: framework events that arrived since the previous window.
        job_start_us: the first timestamp of the job's data.
        ended: whether training has ended and this is the last window.

    .. versionadded:: 0.1.0
    """

    start_us: int
    end_us: int
    system: list[SystemEvent] = attrs.field(factory=list)
    framework: list[FrameworkEvent] = attrs.field(factory=list)
    job_start_us: int = 0
    ended: bool = False


def group_snapshots(events: Iterable[SystemEvent]) -> list[list[SystemEvent]]:
    """Group events into snapshots: those within 20 ms of the snapshot's first event."""
    groups: list[list[SystemEvent]] = []
    anchor = -math.inf
    for e in events:
        if e.timestamp - anchor > _SNAPSHOT_WINDOW_S:
            anchor = e.timestamp
            groups.append([])
        groups[-1].append(e)
    return groups


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (0..100) of a non-empty list."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


class ProfilerRule(ABC):
    """Base of the built-in profiler rules.

    Subclasses declare ``PARAMS`` and implement :meth:`evaluate`, which returns whether the
    rule fired in that window. ``report`` follows smdebug's per-rule report
    (``RuleTriggered``, ``Violations``, ``Details``, ``Datapoints``, ``RuleParameters``).

    Args:
        **params: parameter values; strings are parsed as the service passes them.

    Raises:
        RuleParameterError: an unknown parameter or a bad value.

    .. versionadded:: 0.1.0
    """

    NAME: ClassVar[str] = ""
    PARAMS: ClassVar[tuple[Param, ...]] = ()
    NEEDS_GPU: ClassVar[bool] = False
    DESCRIPTION: ClassVar[str] = ""
    RECOMMENDATION: ClassVar[str] = ""

    def __init__(self, **params: Any) -> None:
        known = {p.name.lower(): p for p in self.PARAMS}
        values = {p.name: p.default for p in self.PARAMS}
        for key, raw in params.items():
            spec = known.get(str(key).lower())
            if spec is None:
                allowed = ", ".join(sorted(known)) or "none"
                msg = f"{self.NAME}: unknown parameter {key!r} (allowed: {allowed})"
                raise RuleParameterError(msg, rule_name=self.NAME)
            values[spec.name] = spec.convert(raw, self.NAME)
        self.params: dict[str, Any] = values
        self.scan_interval_us: int = values.get("scan_interval_us", DEFAULT_SCAN_INTERVAL_US)
        self.note: str = ""
        self.report: dict[str, Any] = {
            "RuleTriggered": 0,
            "Violations": 0,
            "Details": {},
            "Datapoints": 0,
            "RuleParameters": "\n".join(f"{k}:{v}" for k, v in values.items() if k != "scan_interval_us"),
        }
        self.message: str = ""

    @classmethod
    def param_names(cls) -> list[str]:
        """Names of the parameters the rule accepts."""
        return [p.name for p in cls.PARAMS]

    @abstractmethod
    def evaluate(self, window: Window) -> bool:
        """Evaluate one window; return True when the rule's condition is met."""

    def finish(self, window: Window) -> bool:
        """Called once after the last window; return True to fire at the end."""
        return False

    def fire(self, message: str) -> bool:
        """Record a firing (count + message) and return True."""
        self.report["RuleTriggered"] += 1
        self.message = message
        return True

    def summary(self) -> dict[str, Any]:
        """The report plus description, recommendation, note and last message."""
        return {
            "RuleName": self.NAME,
            "Description": self.DESCRIPTION,
            "Recommendation": self.RECOMMENDATION,
            "Message": self.message,
            "Note": self.note,
            **self.report,
        }


def make_params(*params: Param) -> tuple[Param, ...]:
    """Parameter tuple with ``scan_interval_us`` appended."""
    return (*params, SCAN)


def parse_rule_parameters(
    rules: Mapping[str, type[ProfilerRule]], params: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """Split ProfilerReport's ``<Rule>_<param>`` keys per rule (case-insensitive).

    Raises:
        RuleParameterError: a key that does not name a rule, or a bad value.
    """
    by_lower = {name.lower(): name for name in rules}
    out: dict[str, dict[str, Any]] = {name: {} for name in rules}
    for key, value in params.items():
        prefix, sep, rest = str(key).partition("_")
        rule = by_lower.get(prefix.lower())
        if not sep or rule is None or not rest:
            allowed = ", ".join(sorted(rules))
            raise RuleParameterError(
                "ProfilerReport: " + field_error_message(
                    "parameter", f"'<Rule>_<param>' with Rule one of {allowed}", key
                ),
                rule_name="ProfilerReport",
            )
        out[rule][rest] = value
    for rule, kwargs in out.items():
        rules[rule](**kwargs)  # validate now, at the boundary
    return out


Percent: Callable[[str, float, str], Param] = _percent
