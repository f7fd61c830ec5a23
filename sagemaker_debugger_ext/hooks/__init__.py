"""Training-side hook core, shared by :mod:`sagemaker_debugger_ext.pytorch` and
:mod:`sagemaker_debugger_ext.xgboost`, plus a generic :class:`Hook` for any Python loop.

Configuration follows smdebug 1.0.34 (``SaveConfig``, ``SaveConfigMode``,
``ReductionConfig``, collections, modes) and SageMaker's ``debughookconfig.json``.
"""

from __future__ import annotations

from .. import modes
from .._exceptions import HookConfigError, InvalidCollectionConfiguration
from ..modes import ModeKeys
from ._collections import Collection, CollectionKeys, CollectionManager
from ._context import TrainingContext
from ._generic import Hook
from ._hook import BaseHook
from ._json_config import HookSettings, load_hook_settings, parse_hook_config
from ._reduction_config import ReductionConfig
from ._save_config import SaveConfig, SaveConfigMode

__all__ = [
    "BaseHook",
    "Collection",
    "CollectionKeys",
    "CollectionManager",
    "Hook",
    "HookConfigError",
    "HookSettings",
    "InvalidCollectionConfiguration",
    "ModeKeys",
    "ReductionConfig",
    "SaveConfig",
    "SaveConfigMode",
    "TrainingContext",
    "load_hook_settings",
    "modes",
    "parse_hook_config",
]
