"""Profiler rule machinery: windows of profiler data, per-rule reports.

Profiler rules share the Debugger rules' contract pieces: parameters are declared with
:class:`~sagemaker_debugger_ext.rule_contract._params.Param` and parsed by
:func:`~sagemaker_debugger_ext.rule_contract._params.parse_parameters` (names case-insensitive, as
ProfilerReport's ``<Rule>_<param>`` keys always were), and every evaluation returns a
:class:`~sagemaker_debugger_ext.rule_contract._result.RuleResult`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import attrs

from ..._exceptions import RuleParameterError, field_error_message
from ...rule_contract._params import Kind, Param, at_least, non_negative, parse_parameters
from ...rule_contract._result import Finding, RuleResult
from .._events import FrameworkEvent, SystemEvent

__all__ = [
    "DEFAULT_SCAN_INTERVAL_US",
    "PATIENCE",
    "Param",
    "ProfilerRule",
    "Window",
    "group_snapshots",
    "percentile",
]

DEFAULT_SCAN_INTERVAL_US = 60_000_000
_SNAPSHOT_WINDOW_S = 0.02


SCAN = Param(
    name="scan_interval_us",
    kind=Kind.INT,
    default=DEFAULT_SCAN_INTERVAL_US,
    check=at_least(1),
    doc="how often (µs of data) the rule evaluates",
)
PATIENCE = Param(
    name="patience", kind=Kind.INT, default=1000, check=non_negative, doc="data points to see before the first check"
)


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

    Subclasses declare ``PARAMS`` and implement :meth:`evaluate`, which returns the window's
    :class:`RuleResult` (:meth:`fire` / :meth:`violation` build a met one). ``report`` follows smdebug's per-rule report
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
        values = parse_parameters(self.PARAMS, params, rule_name=self.NAME, case_insensitive=True)
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
    def evaluate(self, window: Window) -> RuleResult:
        """Evaluate one window."""

    def finish(self, window: Window) -> RuleResult:
        """Called once after the last window (a met result fires at the end)."""
        return RuleResult.not_met()

    def fire(self, message: str) -> RuleResult:
        """Record a firing (count + message) and return the met result saying it."""
        self.report["RuleTriggered"] += 1
        self.message = message
        return RuleResult.met(Finding(step=None, message=message))

    def violation(self, message: str) -> RuleResult:
        """Count one violation in the report, then :meth:`fire`."""
        self.report["Violations"] += 1
        return self.fire(message)

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
                "ProfilerReport: "
                + field_error_message("parameter", f"'<Rule>_<param>' with Rule one of {allowed}", key),
                rule_name="ProfilerReport",
            )
        out[rule][rest] = value
    for rule, kwargs in out.items():
        rules[rule](**kwargs)  # validate now, at the boundary
    return out
