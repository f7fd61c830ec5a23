"""Step states: the normal outcomes of asking for a step (values, not exceptions)."""

from __future__ import annotations

import enum

__all__ = ["StepState"]


class StepState(enum.Enum):
    """Whether a step can be read now (smdebug's ``StepState``, same values)."""

    UNAVAILABLE = 0  # skipped, or beyond the end of a finished job
    AVAILABLE = 1  # every worker wrote it, or it can no longer change
    NOT_YET_AVAILABLE = 2  # may still be written
