"""``smdebug.pytorch.singleton_utils``: the process-wide hook."""

from __future__ import annotations

from ..hooks.pytorch._singleton import del_hook, get_hook, set_hook

__all__ = ["del_hook", "get_hook", "set_hook"]
