"""Rendering of local jobs for the CLI: rule tables and job summaries (``rich``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..rule_contract._status import EvaluationStatus as _E
from ..rules._evidence import is_not_evaluated

__all__ = ["print_summary", "rule_table", "status_style"]

# Rule statuses (every EvaluationStatus has a style), then the job statuses they share a colour with.
_RULE_STYLES = {
    _E.NO_ISSUES_FOUND: "green", _E.ISSUES_FOUND: "bold red", _E.ERROR: "red",
    _E.STOPPED: "yellow", _E.STOPPING: "yellow", _E.IN_PROGRESS: "cyan",
}  # fmt: skip
_STYLES = {**{s.value: style for s, style in _RULE_STYLES.items()}, "Completed": "green", "Failed": "bold red"}


def status_style(status: str) -> str:
    """Colour of a job or rule status."""
    return _STYLES.get(status, "white")


def rule_table(desc: Mapping[str, Any], *, title: str = "Rules") -> Any:
    """A rich Table of the job's rule evaluation statuses."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column("Rule")
    table.add_column("Kind")
    table.add_column("Status")
    table.add_column("Details", overflow="fold")
    for key, kind in (("DebugRuleEvaluationStatuses", "debug"), ("ProfilerRuleEvaluationStatuses", "profiler")):
        for r in desc.get(key) or []:
            status = str(r.get("RuleEvaluationStatus", ""))
            shown = (
                f"[yellow]{status} (not evaluated)[/]"
                if is_not_evaluated(r)
                else f"[{status_style(status)}]{status}[/]"
            )
            table.add_row(str(r.get("RuleConfigurationName")), kind, shown, str(r.get("StatusDetails", ""))[:300])
    return table


def print_summary(desc: Mapping[str, Any]) -> None:
    """Print the job's final status and its rule table."""
    from rich.console import Console

    console = Console()
    status = str(desc.get("TrainingJobStatus"))
    transitions = desc.get("SecondaryStatusTransitions") or [{}]
    console.print(
        f"Job [bold]{desc.get('TrainingJobName')}[/]: [{status_style(status)}]{status}[/]"
        f" ({desc.get('SecondaryStatus')}: {transitions[-1].get('StatusMessage', '')})"
    )
    if desc.get("FailureReason"):
        console.print(f"[red]{desc['FailureReason']}[/]")
    if desc.get("DebugRuleEvaluationStatuses") or desc.get("ProfilerRuleEvaluationStatuses"):
        console.print(rule_table(desc, title="Rule summary"))
