"""XGBoost hook with the names of ``smdebug.xgboost``: change only the import.

``hook = Hook(out_dir=..., validation_data=dvalid, hyperparameters=params)`` then
``xgboost.train(params, dtrain, callbacks=[hook])``; or ``Hook.create_from_json_file()``.
``get_hook()`` returns the hook created last (or one from the JSON config), ``set_hook``
and ``del_hook`` replace or forget it. Submodules ``hook`` and ``collection`` mirror
smdebug's (``from smdebug.xgboost.hook import Hook``).
"""

from __future__ import annotations

import os
from typing import Any

from .. import modes
from ..hooks import _current
from ..hooks._collections import Collection, CollectionKeys
from ..hooks._current import del_hook, set_hook
from ..hooks._reduction_config import ReductionConfig
from ..hooks._save_config import SaveConfig, SaveConfigMode
from ..hooks.xgboost._hook import Hook

__all__ = [
    "Collection",
    "CollectionKeys",
    "Hook",
    "ReductionConfig",
    "SaveConfig",
    "SaveConfigMode",
    "create_from_json_file",
    "create_trial",
    "del_hook",
    "get_hook",
    "modes",
    "set_hook",
]


def create_from_json_file(json_file_path: str | os.PathLike[str] | None = None) -> Hook:
    """Same as :meth:`Hook.create_from_json_file` (default interval 10)."""
    return Hook.create_from_json_file(json_file_path)


def get_hook(json_config_path: str | None = None) -> Hook | None:
    """The current XGBoost hook; created from the JSON config when there is none (None if
    there is no config file), as smdebug's ``smdebug.xgboost.get_hook``."""
    hook: Hook | None = _current.get_hook(json_config_path=json_config_path, hook_class=Hook, create_if_not_exists=True)
    return hook


def __getattr__(name: str) -> Any:
    if name == "create_trial":  # the reader side (trials, storage): not loaded into training processes
        from ..trials import create_trial

        return create_trial
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
