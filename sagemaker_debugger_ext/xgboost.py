"""XGBoost hook with the names of ``smdebug.xgboost``: change only the import.

``hook = Hook(out_dir=..., validation_data=dvalid, hyperparameters=params)`` then
``xgboost.train(params, dtrain, callbacks=[hook])``; or ``Hook.create_from_json_file()``.
"""

from __future__ import annotations

import os

from . import modes
from ._xgboost._hook import Hook
from .hooks._collections import Collection, CollectionKeys
from .hooks._reduction_config import ReductionConfig
from .hooks._save_config import SaveConfig, SaveConfigMode

__all__ = [
    "Collection",
    "CollectionKeys",
    "Hook",
    "ReductionConfig",
    "SaveConfig",
    "SaveConfigMode",
    "create_from_json_file",
    "modes",
]


def create_from_json_file(json_file_path: str | os.PathLike[str] | None = None) -> Hook:
    """Same as :meth:`Hook.create_from_json_file` (default interval 10)."""
    return Hook.create_from_json_file(json_file_path)
