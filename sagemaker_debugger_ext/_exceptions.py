"""Private alias of :mod:`sagemaker_debugger_ext.exceptions`, the one home of the exception tree.

Internal modules import from here (``from .._exceptions import ...``); nothing is defined here.
"""

from __future__ import annotations

from .exceptions import *  # noqa: F403 - a pure re-export of the one tree
from .exceptions import __all__ as _tree
from .exceptions import field_error_message

__all__ = [*_tree, "field_error_message"]
