"""``smdebug.core.reduction_config``: :class:`ReductionConfig` (the hook's) and the allowed names."""

from __future__ import annotations

from ..hooks._reduction_config import ALLOWED_NORMS, ALLOWED_REDUCTIONS, ReductionConfig

__all__ = ["ALLOWED_NORMS", "ALLOWED_REDUCTIONS", "ReductionConfig"]
