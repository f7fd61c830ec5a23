"""The one outcome type of every rule (normal outcomes are values, not exceptions).

Built-in Debugger rules (``rules.builtin``) and profiler rules (``profiler.rules``) both return
a :class:`RuleResult` per evaluation, and the rule processes consume it directly. Only the
smdebug-compatible surface for users' own rules (:meth:`Rule.invoke`, :func:`invoke_rule`)
still raises ``RuleEvaluationConditionMet``.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable
from typing import Any

import attrs

from ._status import EvaluationStatus

__all__ = ["EvaluationStatus", "Finding", "RuleResult", "RuleStatus"]


class RuleStatus(enum.Enum):
    """Outcome of evaluating a rule at one step."""

    CONDITION_MET = "condition_met"
    NOT_MET = "not_met"
    INSUFFICIENT_DATA = "insufficient_data"


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if hasattr(value, "item") and callable(value.item):
        return _jsonable(value.item())
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


@attrs.frozen(kw_only=True)
class Finding:
    """One violation: what fired, where, and the value against the threshold.

    Attributes:
        step: Global step at which the condition was met (None for profiler rules, which judge
            windows of time rather than steps).
        message: Human-readable sentence.
        tensor: Tensor name involved, if any.
        value: The measured value.
        threshold: The threshold it was compared with (number, range or text).
        mode: Mode name of the step (TRAIN/EVAL/...), if known.
    """

    step: int | None
    message: str
    tensor: str | None = None
    value: Any = None
    threshold: Any = None
    mode: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict (non-finite floats as strings)."""
        return {
            "step": self.step,
            "mode": self.mode,
            "tensor": self.tensor,
            "value": _jsonable(self.value),
            "threshold": _jsonable(self.threshold),
            "message": self.message,
        }


@attrs.frozen(kw_only=True)
class RuleResult:
    """Outcome of evaluating one rule at one step."""

    status: RuleStatus
    findings: tuple[Finding, ...] = ()
    end_of_rule: bool = False

    @property
    def fired(self) -> bool:
        """True when the condition was met."""
        return self.status is RuleStatus.CONDITION_MET

    @classmethod
    def met(cls, *findings: Finding, end_of_rule: bool = False) -> RuleResult:
        """Condition met, with the findings that explain it."""
        return cls(status=RuleStatus.CONDITION_MET, findings=tuple(findings), end_of_rule=end_of_rule)

    @classmethod
    def from_findings(cls, findings: Iterable[Finding], *, seen: bool, end_of_rule: bool = False) -> RuleResult:
        """Met when there are findings; else not met when the rule saw data (``seen``); else insufficient data."""
        found = tuple(findings)
        if found:
            return cls.met(*found, end_of_rule=end_of_rule)
        return cls.not_met() if seen else cls.insufficient()

    @classmethod
    def not_met(cls) -> RuleResult:
        """Evaluated; condition not met."""
        return cls(status=RuleStatus.NOT_MET)

    @classmethod
    def insufficient(cls) -> RuleResult:
        """Nothing to evaluate at this step."""
        return cls(status=RuleStatus.INSUFFICIENT_DATA)
