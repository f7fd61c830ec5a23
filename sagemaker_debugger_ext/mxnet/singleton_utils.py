"""``smdebug.mxnet.singleton_utils``: the process-wide hook."""

from __future__ import annotations

from ..hooks import _current
from ..hooks._current import del_hook, set_hook
from ..hooks.mxnet._hook import Hook

__all__ = ["del_hook", "get_hook", "set_hook"]


def get_hook(json_config_path: str | None = None) -> Hook | None:
    """The process's MXNet hook; created from the JSON config when there is none yet (None
    when there is no config file), as ``smdebug.mxnet.get_hook``."""
    hook: Hook | None = _current.get_hook(json_config_path=json_config_path, hook_class=Hook, create_if_not_exists=True)
    return hook
