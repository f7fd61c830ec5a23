"""``smdebug.pytorch.hook``: ``from sagemaker_debugger_ext.pytorch.hook import Hook``."""

from __future__ import annotations

from ..hooks.pytorch._hook import Hook

__all__ = ["Hook"]
