"""``smdebug.pytorch.singleton_utils``: the process-wide hook."""

from __future__ import annotations

from . import get_hook
from .._pytorch._hook import del_hook, set_hook

__all__ = ["del_hook", "get_hook", "set_hook"]
