"""``smdebug.xgboost.hook``: the XGBoost :class:`Hook`."""

from __future__ import annotations

from ..hooks.xgboost._hook import Hook

__all__ = ["Hook"]
