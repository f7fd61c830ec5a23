"""``smdebug.core.singleton_utils``: the process's current hook (``get_hook`` / ``set_hook`` / ``del_hook``).

smdebug keeps one hook per process: each framework's ``Hook`` registers itself when
created, ``set_hook`` replaces it, ``del_hook`` forgets it. Implemented in
:mod:`sagemaker_debugger_ext.hooks._current`.
"""

from __future__ import annotations

from ..hooks._current import del_hook, get_hook, set_hook

__all__ = ["del_hook", "get_hook", "set_hook"]
