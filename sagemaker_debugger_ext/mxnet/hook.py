"""``smdebug.mxnet.hook``: ``from sagemaker_debugger_ext.mxnet.hook import Hook``."""

from __future__ import annotations

from ..hooks.mxnet._hook import Hook

__all__ = ["Hook"]
