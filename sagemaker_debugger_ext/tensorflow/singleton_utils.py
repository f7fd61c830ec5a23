"""``smdebug.tensorflow.singleton_utils``: the process-wide Keras hook."""

from __future__ import annotations

from ..hooks.tensorflow._singleton import del_hook, get_hook, set_hook

__all__ = ["del_hook", "get_hook", "set_hook"]
