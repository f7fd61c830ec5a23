"""The rule summary of a training job: one row per rule with its evaluation status."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import attrs

from ..profiler.rules._registry import PROFILER_RULES, ProfilerReport
from ..render._html import esc, table
from ..rule_contract._status import EvaluationStatus
from ._evidence import is_not_evaluated

__all__ = ["RuleRow", "RuleSummary", "rule_summary"]

_MAX_DETAIL = 140  # characters of StatusDetails in the text form (the HTML form has them all)


@attrs.frozen(kw_only=True)
class RuleRow:
    """One rule's evaluation status, as in ``DebugRuleEvaluationStatuses``."""

    name: str
    status: str
    details: str
    kind: str  # "debugger" or "profiler"
    last_modified: str
    not_evaluated: bool = False

    @property
    def label(self) -> str:
        """The status as shown: a NoIssuesFound that evaluated nothing is never shown as healthy."""
        return f"{self.status} (not evaluated)" if self.not_evaluated else self.status

    @property
    def css_class(self) -> str:
        """``status-<Status>``, or ``status-NotEvaluated``."""
        return "status-NotEvaluated" if self.not_evaluated else f"status-{self.status}"


def _when(value: Any) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "" if value is None else str(value)


@attrs.frozen(kw_only=True)
class RuleSummary:
    """The rule summary of a job; renders as text (``str``) and as HTML in notebooks.

    .. versionadded:: 0.1
    """

    job_name: str
    rows: tuple[RuleRow, ...]

    def statuses(self) -> dict[str, str]:
        """``{rule name: RuleEvaluationStatus}``."""
        return {r.name: r.status for r in self.rows}

    def issues_found(self) -> list[str]:
        """Names of the rules whose status is ``IssuesFound``."""
        return [r.name for r in self.rows if r.status == EvaluationStatus.ISSUES_FOUND]

    def not_evaluated(self) -> list[str]:
        """Names of the rules that ended ``NoIssuesFound`` without evaluating anything."""
        return [r.name for r in self.rows if r.not_evaluated]

    def __str__(self) -> str:
        if not self.rows:
            return f"Rule summary of {self.job_name}: no rules"
        width = max(len(r.name) for r in self.rows)
        status_width = max(len(r.label) for r in self.rows)
        lines = [f"Rule summary of {self.job_name}:"]
        for r in self.rows:
            text = r.details if len(r.details) <= _MAX_DETAIL else r.details[: _MAX_DETAIL - 1] + "…"
            detail = f"  {text}" if text else ""
            lines.append(f"  {r.name:<{width}}  {r.label:<{status_width}}{detail}")
        return "\n".join(lines)

    def to_html(self) -> str:
        """An HTML table of the rows."""
        rows = [
            [esc(r.name), esc(r.kind), f"<b>{esc(r.label)}</b>", esc(r.details), esc(r.last_modified)]
            for r in self.rows
        ]
        return table(
            ("rule", "kind", "status", "details", "last modified"),
            rows,
            caption=f"Rule summary of {self.job_name}",
            cls="rule-summary",
            row_classes=[r.css_class for r in self.rows],
        )

    def _repr_html_(self) -> str:
        return self.to_html()


def _rows(statuses: Iterable[Mapping[str, Any]], kind: str) -> list[RuleRow]:
    return [
        RuleRow(
            name=str(s.get("RuleConfigurationName", "")),
            status=str(s.get("RuleEvaluationStatus", "")),
            details=str(s.get("StatusDetails", "") or ""),
            kind=kind,
            last_modified=_when(s.get("LastModifiedTime")),
            not_evaluated=is_not_evaluated(s),
        )
        for s in statuses
    ]


def rule_summary(description: Mapping[str, Any] | Iterable[Mapping[str, Any]], job_name: str = "") -> RuleSummary:
    """Build a :class:`RuleSummary`.

    Args:
        description: a ``describe_training_job`` response, or the list that
            ``estimator.latest_training_job.rule_job_summary()`` returns.
        job_name: the job's name (taken from the description when it has one).

    Returns:
        The summary, debugger rules first, then profiler rules.
    """
    if isinstance(description, Mapping):
        name = job_name or str(description.get("TrainingJobName", ""))
        rows = _rows(description.get("DebugRuleEvaluationStatuses") or [], "debugger")
        rows += _rows(description.get("ProfilerRuleEvaluationStatuses") or [], "profiler")
        return RuleSummary(job_name=name, rows=tuple(rows))
    rows = [row for s in description for row in _rows([s], "profiler" if _looks_like_profiler_rule(s) else "debugger")]
    return RuleSummary(job_name=job_name, rows=tuple(rows))


_PROFILER_RULES = (ProfilerReport.NAME, *PROFILER_RULES)


def _looks_like_profiler_rule(status: Mapping[str, Any]) -> bool:
    """``rule_job_summary()`` merges both lists; tell them apart by the built-in name prefix."""
    return str(status.get("RuleConfigurationName", "")).startswith(_PROFILER_RULES)
