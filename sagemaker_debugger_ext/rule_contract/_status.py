"""The rule process's status vocabulary and status file, written atomically.

The one status writer of both rule kinds: Debugger rules (``rules``) and profiler rules
(``profiler.rules``) write ``{"RuleEvaluationStatus", "StatusDetails", "LastModifiedTime"}``
through :func:`write_status`, and local mode's rule containers read them back. Every one of
them says a status with :class:`EvaluationStatus` and cuts ``StatusDetails`` with
:func:`truncate_details`: the head is kept (it holds the service's sentence and the first
finding), and a cut text ends with ``...``.
"""

from __future__ import annotations

import enum
import json
import os
import time
from pathlib import Path

from ..format._files import atomic_write

__all__ = ["MAX_DETAILS", "EvaluationStatus", "status_record", "truncate_details", "write_status"]

MAX_DETAILS = 1024  # DebugRuleEvaluationStatus.StatusDetails limit


class EvaluationStatus(str, enum.Enum):
    """``RuleEvaluationStatus`` values (botocore's enum for Debug/ProfilerRuleEvaluationStatus)."""

    IN_PROGRESS = "InProgress"
    NO_ISSUES_FOUND = "NoIssuesFound"
    ISSUES_FOUND = "IssuesFound"
    ERROR = "Error"
    STOPPING = "Stopping"
    STOPPED = "Stopped"

    @property
    def terminal(self) -> bool:
        """Whether the evaluation has finished (no further status follows)."""
        return self in _TERMINAL


_TERMINAL = frozenset(
    {EvaluationStatus.NO_ISSUES_FOUND, EvaluationStatus.ISSUES_FOUND, EvaluationStatus.ERROR, EvaluationStatus.STOPPED}
)


def truncate_details(details: str) -> str:
    """``details`` cut to :data:`MAX_DETAILS` characters, keeping the head and ending ``...`` when cut."""
    if len(details) > MAX_DETAILS:
        return details[: MAX_DETAILS - 3] + "..."
    return details


def status_record(status: str | enum.Enum, details: str = "") -> dict[str, object]:
    """The status JSON object, ``StatusDetails`` cut by :func:`truncate_details`."""
    value = status.value if isinstance(status, enum.Enum) else str(status)
    return {"RuleEvaluationStatus": value, "StatusDetails": truncate_details(details), "LastModifiedTime": time.time()}


def write_status(path: str | os.PathLike[str], status: str | enum.Enum, details: str = "") -> dict[str, object]:
    """Write the status record to ``path`` (tmp + rename) and return it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    record = status_record(status, details)
    atomic_write(target, json.dumps(record))
    return record
