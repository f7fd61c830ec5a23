"""Profiler rule machinery: parameters (strings accepted), windows, per-rule reports."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import attrs

from ..._exceptions import RuleParameterError, field_error_message
from ..._rule_params import Kind
from ..._rule_params import Param as RuleParam
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


_KINDS = {int: Kind.INT, float: Kind.FLOAT, str: Kind.STR}


def _expected(kind: type, low: float | None, high: float | None, optional: bool) -> str:
    what = {int: "an integer", float: "a number", str: "a string"}[kind]
    if low is not None and high is not None:
        what += f" between {low:g} and {high:g}"
    elif low is not None:
        what += f" >= {low:g}"
    return what + (" or None" if optional else "")


def Param(
    name: str,
    kind: type,
    default: Any,
    low: float | None = None,
    high: float | None = None,
    optional: bool = False,
    doc: str = "",
) -> RuleParam:
    """One profiler rule parameter, declared positionally: name, type (``int``/``float``/``str``), default, range.

    Builds the rule-parameter class every rule shares (:class:`~sagemaker_debugger_ext._rule_params.Param`),
    with the range as its check.

    .. versionadded:: 0.1.0
    """
    expected = _expected(kind, low, high, optional)

    def in_range(value: Any) -> str | None:
        if isinstance(value, str) or value is None:
            return None
        too_low = low is not None and value < low
        too_high = high is not None and value > high
        return expected if too_low or too_high else None

    check = in_range if kind is not str and (low is not None or high is not None) else None
    return RuleParam(name=name, kind=_KINDS[kind], default=default, doc=doc, check=check)


def _percent(name: str, default: float, doc: str) -> RuleParam:
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
    PARAMS: ClassVar[tuple[RuleParam, ...]] = ()
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


def make_params(*params: RuleParam) -> tuple[RuleParam, ...]:
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
                "ProfilerReport: "
                + field_error_message("parameter", f"'<Rule>_<param>' with Rule one of {allowed}", key),
                rule_name="ProfilerReport",
            )
        out[rule][rest] = value
    for rule, kwargs in out.items():
        rules[rule](**kwargs)  # validate now, at the boundary
    return out


Percent: Callable[[str, float, str], RuleParam] = _percent
