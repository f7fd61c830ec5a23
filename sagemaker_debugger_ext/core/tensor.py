"""``smdebug.core.tensor``: :class:`StepState` and the trial's :class:`Tensor`."""

from __future__ import annotations

from ..trials._state import StepState
from ..trials._tensor import Tensor

__all__ = ["StepState", "Tensor"]
