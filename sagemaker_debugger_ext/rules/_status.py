"""The rule process's status file (CONTRACTS §E), written atomically."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ..format._files import atomic_write
from ._result import EvaluationStatus

__all__ = ["MAX_DETAILS", "write_status"]

MAX_DETAILS = 1024  # DebugRuleEvaluationStatus.StatusDetails limit


def write_status(path: str | os.PathLike[str], status: EvaluationStatus, details: str = "") -> None:
    """Write ``{"RuleEvaluationStatus", "StatusDetails", "LastModifiedTime"}`` to ``path`` (tmp + rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if len(details) > MAX_DETAILS:
        details = details[: MAX_DETAILS - 3] + "..."
    data = {"RuleEvaluationStatus": status.value, "StatusDetails": details, "LastModifiedTime": time.time()}
    atomic_write(target, json.dumps(data))
