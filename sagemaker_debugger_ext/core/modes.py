"""``smdebug.core.modes``: :class:`ModeKeys` and the allowed modes."""

from __future__ import annotations

from ..modes import ModeKeys

__all__ = ["ALLOWED_MODES", "ALLOWED_MODE_NAMES", "ModeKeys"]

ALLOWED_MODES = list(ModeKeys)
ALLOWED_MODE_NAMES = [m.name for m in ModeKeys]
