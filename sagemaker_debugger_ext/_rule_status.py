"""The rule process's status file (CONTRACTS §E), written atomically.

The one status writer of both rule kinds: Debugger rules (``rules``) and profiler rules
(``profiler.rules``) write ``{"RuleEvaluationStatus", "StatusDetails", "LastModifiedTime"}``
through :func:`write_status`, so both truncate ``StatusDetails`` the same way.
"""

from __future__ import annotations

import enum
import json
import os
import time
from pathlib import Path

from .format._files import atomic_write

__all__ = ["MAX_DETAILS", "status_record", "write_status"]

MAX_DETAILS = 1024  # DebugRuleEvaluationStatus.StatusDetails limit


def status_record(status: str | enum.Enum, details: str = "") -> dict[str, object]:
    """The status JSON object: ``StatusDetails`` cut to :data:`MAX_DETAILS` characters, ending ``...`` when cut."""
    value = status.value if isinstance(status, enum.Enum) else str(status)
    if len(details) > MAX_DETAILS:
        details = details[: MAX_DETAILS - 3] + "..."
    return {"RuleEvaluationStatus": value, "StatusDetails": details, "LastModifiedTime": time.time()}


def write_status(path: str | os.PathLike[str], status: str | enum.Enum, details: str = "") -> dict[str, object]:
    """Write the status record to ``path`` (tmp + rename) and return it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    record = status_record(status, details)
    atomic_write(target, json.dumps(record))
    return record
