"""Compatibility alias of ``smdebug.rules.rule``: ``from sagemaker_debugger_ext.rules.rule import Rule``."""

from __future__ import annotations

from ._rule import Rule

__all__ = ["Rule"]
