"""PyTorch hook with the names of ``smdebug.pytorch``: change only the import.

``import smdebug.pytorch as smd`` -> ``import sagemaker_debugger_ext.pytorch as smd``.
Tensor names are smdebug's (see ``docs/hook.md``). Submodules as in smdebug:
``pytorch.hook`` (``Hook``), ``pytorch.collection`` (``Collection``, ``CollectionManager``),
``pytorch.singleton_utils`` (``get_hook``, ``set_hook``, ``del_hook``).
"""

from __future__ import annotations

import os
from typing import Any

from .. import modes
from ..hooks._collections import Collection, CollectionKeys
from ..hooks._reduction_config import ReductionConfig
from ..hooks._save_config import SaveConfig, SaveConfigMode
from ..hooks.pytorch._hook import Hook
from ..hooks.pytorch._singleton import del_hook, get_hook, set_hook

__all__ = [
    "Collection",
    "CollectionKeys",
    "Hook",
    "ReductionConfig",
    "SaveConfig",
    "SaveConfigMode",
    "create_from_json_file",
    "del_hook",
    "get_hook",
    "modes",
    "set_hook",
]


def create_from_json_file(json_file_path: str | os.PathLike[str] | None = None) -> Hook:
    """Same as :meth:`Hook.create_from_json_file`."""
    return Hook.create_from_json_file(json_file_path)


def __getattr__(name: str) -> Any:
    if name == "create_trial":  # the reader side (trials, storage): not loaded into training processes
        from ..trials import create_trial

        return create_trial
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
