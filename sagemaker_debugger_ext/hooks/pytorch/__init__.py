"""Private implementation of :mod:`sagemaker_debugger_ext.pytorch` (needs torch)."""

from __future__ import annotations

__all__: list[str] = []
