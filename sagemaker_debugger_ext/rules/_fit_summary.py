"""The closing lines of a local ``fit()``: SageMaker's own, then every rule and where the output is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..request._paths import (
    debugger_artifacts_path,
    profiler_artifacts_path,
    rule_output_path,
    tensorboard_artifacts_path,
)
from ._summary import rule_summary

__all__ = ["fit_summary"]


def fit_summary(description: Mapping[str, Any]) -> str:
    """Text printed when a local job that ``fit()`` followed has ended.

    First the lines SageMaker's SDK prints (``Training seconds``, ``Billable seconds``), then a
    table of every rule (status, shown "(not evaluated)" when it evaluated nothing, and its
    details), then the debug output, TensorBoard output, profiler output and rule output paths.
    """
    job = str(description.get("TrainingJobName", ""))
    lines = [f"{job}: {description.get('TrainingJobStatus')} ({description.get('SecondaryStatus')})"]
    if description.get("FailureReason"):
        lines.append(f"Failure reason: {description['FailureReason']}")
    seconds = description.get("TrainingTimeInSeconds")
    if seconds is not None:
        lines += [
            f"Training seconds: {seconds}",
            f"Billable seconds: {description.get('BillableTimeInSeconds', seconds)}",
        ]
    summary = rule_summary(description)
    if summary.rows:
        lines.append(str(summary))
        missing = summary.not_evaluated()
        if missing:
            lines.append(
                f"Not evaluated ({', '.join(missing)}): these rules saw (next to) no data; NoIssuesFound does not mean "
                "healthy here. Their details say which collection to save more often."
            )
    hook = description.get("DebugHookConfig") or {}
    board = description.get("TensorBoardOutputConfig") or {}
    output = (description.get("OutputDataConfig") or {}).get("S3OutputPath")
    profiler = (description.get("ProfilerConfig") or {}).get("S3OutputPath")
    profiling = description.get("ProfilingStatus") == "Enabled"
    paths = [
        ("Debug output", debugger_artifacts_path(hook.get("S3OutputPath"), job) if hook else None),
        ("TensorBoard output", tensorboard_artifacts_path(board.get("S3OutputPath"), job) if board else None),
        ("Profiler output", profiler_artifacts_path(profiler, job) if profiling else None),
        ("Rule output", rule_output_path(output, job, "") if summary.rows else None),
    ]
    for label, path in paths:
        if path:
            lines.append(f"{label + ':':<20}{path.rstrip('/')}")
    return "\n".join(lines)
