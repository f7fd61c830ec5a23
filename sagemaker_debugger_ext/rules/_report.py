"""The human-readable rule report: ``rule-report.json`` and ``rule-report.md``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..format._files import atomic_write
from ._result import EvaluationStatus, Finding

__all__ = ["REPORT_JSON", "REPORT_MD", "write_report"]

REPORT_JSON = "rule-report.json"
REPORT_MD = "rule-report.md"
_MAX_ROWS = 50


def _atomic_text(path: Path, text: str) -> None:
    atomic_write(path, text)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value).replace("|", "\\|")


def write_report(
    output_dir: str | os.PathLike[str],
    *,
    rule_configuration_name: str,
    rule_to_invoke: str,
    status: EvaluationStatus,
    status_details: str,
    parameters: Mapping[str, Any],
    fired_steps: list[int],
    findings: list[Finding],
    steps_evaluated: int | None,
    actions: list[str],
    smdebug_report: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write both report files into ``output_dir``; returns the JSON document."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {
        "RuleConfigurationName": rule_configuration_name,
        "RuleToInvoke": rule_to_invoke,
        "RuleEvaluationStatus": status.value,
        "StatusDetails": status_details,
        "RuleParameters": {
            k: v
            if isinstance(v, (str, int, float, bool, type(None)))
            else list(v)
            if isinstance(v, (list, tuple))
            else str(v)
            for k, v in parameters.items()
        },
        "FirstFiredStep": fired_steps[0] if fired_steps else None,
        "TimesFired": len(fired_steps),
        "FiredSteps": fired_steps[:1000],
        "StepsEvaluated": steps_evaluated,
        "Findings": [f.to_dict() for f in findings],
        "Actions": list(actions),
        "Report": dict(smdebug_report or {}),
    }
    _atomic_text(out / REPORT_JSON, json.dumps(doc, indent=2, default=str) + "\n")
    lines = [
        f"# Rule report: {rule_configuration_name}",
        "",
        f"- Rule: `{rule_to_invoke}`",
        f"- Status: **{status.value}**" + (f" — {status_details}" if status_details else ""),
        f"- Steps evaluated: {steps_evaluated if steps_evaluated is not None else 'n/a'}",
        f"- Fired: {len(fired_steps)} time(s)" + (f", first at step {fired_steps[0]}" if fired_steps else ""),
        "",
        "## Parameters",
        "",
    ]
    lines += [f"- `{k}` = `{v}`" for k, v in doc["RuleParameters"].items()] or ["(none)"]
    lines += ["", "## Findings", ""]
    if findings:
        lines += ["| step | mode | tensor | value | threshold | what |", "|---|---|---|---|---|---|"]
        lines += [
            f"| {f.step} | {_cell(f.mode)} | {_cell(f.tensor)} | {_cell(f.value)} | {_cell(f.threshold)} | {_cell(f.message)} |"
            for f in findings[:_MAX_ROWS]
        ]
        if len(findings) > _MAX_ROWS:
            lines.append(f"\n… {len(findings) - _MAX_ROWS} more in {REPORT_JSON}")
    elif fired_steps:
        lines.append("Condition met at steps: " + ", ".join(map(str, fired_steps[:_MAX_ROWS])))
    else:
        lines.append("The condition was not met.")
    if actions:
        lines += ["", "## Actions", ""] + [f"- {a}" for a in actions]
    _atomic_text(out / REPORT_MD, "\n".join(lines) + "\n")
    return doc
