"""Private implementation of :mod:`sagemaker_debugger_ext.xgboost` (needs xgboost)."""

from __future__ import annotations

__all__: list[str] = []
