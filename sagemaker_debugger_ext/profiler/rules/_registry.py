"""The built-in profiler rules by name, and ProfilerReport (runs them all)."""

from __future__ import annotations

from typing import Any

from ..._exceptions import RuleNotFoundError
from ...rule_contract._result import RuleResult, RuleStatus
from ._base import ProfilerRule, Window, parse_rule_parameters
from ._framework_rules import Dataloader, MaxInitializationTime, StepOutlier
from ._system_rules import (
    BatchSize,
    CPUBottleneck,
    GPUMemoryIncrease,
    IOBottleneck,
    LoadBalancing,
    LowGPUUtilization,
    OverallSystemUsage,
)

__all__ = ["PROFILER_RULES", "ProfilerReport", "get_profiler_rule_class"]

PROFILER_RULES: dict[str, type[ProfilerRule]] = {
    cls.NAME: cls
    for cls in (
        BatchSize,
        CPUBottleneck,
        Dataloader,
        GPUMemoryIncrease,
        IOBottleneck,
        LoadBalancing,
        LowGPUUtilization,
        MaxInitializationTime,
        OverallSystemUsage,
        StepOutlier,
    )
}


class ProfilerReport(ProfilerRule):
    """Runs every profiler rule; parameters are ``<Rule>_<param>`` (case-insensitive).

    Fires (IssuesFound) whenever one of its rules fires; ``summary()`` holds every rule's.

    .. versionadded:: 0.1.0
    """

    NAME = "ProfilerReport"
    DESCRIPTION = "Runs every profiler rule and writes the profiler report."

    def __init__(self, **params: Any) -> None:
        per_rule = parse_rule_parameters(PROFILER_RULES, params)
        super().__init__()
        self.report["RuleParameters"] = "\n".join(f"{k}:{v}" for k, v in params.items())
        self.rules: list[ProfilerRule] = [PROFILER_RULES[name](**kw) for name, kw in per_rule.items()]
        self.scan_interval_us = min(r.scan_interval_us for r in self.rules)
        self.fired_rules: list[str] = []

    def evaluate(self, window: Window) -> RuleResult:
        return self._record({rule.NAME: rule.evaluate(window) for rule in self.rules})

    def finish(self, window: Window) -> RuleResult:
        results = {rule.NAME: rule.finish(window) for rule in self.rules}
        notes = [r.note for r in self.rules if r.note]
        self.note = "; ".join(notes)
        return self._record(results)

    def _record(self, results: dict[str, RuleResult]) -> RuleResult:
        fired = [name for name, result in results.items() if result.fired]
        for name in fired:
            if name not in self.fired_rules:
                self.fired_rules.append(name)
        if fired:
            self.report["Violations"] += len(fired)
            return self.fire("ProfilerReport: rules that found issues: " + ", ".join(self.fired_rules))
        return RuleResult.from_findings(
            (), seen=any(r.status is not RuleStatus.INSUFFICIENT_DATA for r in results.values())
        )

    def summaries(self) -> list[dict[str, Any]]:
        """Each rule's summary, in name order."""
        return [r.summary() for r in self.rules]


def get_profiler_rule_class(name: str) -> type[ProfilerRule]:
    """The rule class for ``name`` (case-insensitive; ProfilerReport included).

    Raises:
        RuleNotFoundError: no built-in profiler rule has that name.
    """
    table: dict[str, type[ProfilerRule]] = {**PROFILER_RULES, "ProfilerReport": ProfilerReport}
    for key, cls in table.items():
        if key.lower() == str(name).lower():
            return cls
    allowed = ", ".join(sorted(table))
    msg = f"unknown profiler rule {name!r} (known: {allowed})"
    raise RuleNotFoundError(msg, rule_name=str(name))
