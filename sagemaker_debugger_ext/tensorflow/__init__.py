"""TensorFlow/Keras hook with the names of ``smdebug.tensorflow``: change only the import.

``import smdebug.tensorflow as smd`` -> ``import sagemaker_debugger_ext.tensorflow as smd``.
Runs on TensorFlow 2.16+ with Keras 3 (the ``tensorflow`` extra). Importing this module does
not import TensorFlow; ``KerasHook`` loads it on first use. ``create_trial`` (the trial
reader) is loaded on first use too, so that training processes do not import it.
Submodules as in smdebug: ``tensorflow.keras`` (``KerasHook``), ``tensorflow.session``
(``SessionHook``, ``EstimatorHook``), ``tensorflow.collection`` (``Collection``,
``CollectionKeys``, ``CollectionManager``), ``tensorflow.singleton_utils`` (``get_hook``,
``set_hook``, ``del_hook``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .. import modes
from ..hooks._collections import Collection, CollectionKeys
from ..hooks._reduction_config import ReductionConfig
from ..hooks._save_config import SaveConfig, SaveConfigMode
from ..hooks.tensorflow._legacy import EstimatorHook, SessionHook
from ..hooks.tensorflow._singleton import del_hook, get_hook, set_hook

if TYPE_CHECKING:
    from ..hooks.tensorflow._keras_hook import KerasHook
    from ..trials import create_trial

__all__ = [
    "Collection",
    "CollectionKeys",
    "EstimatorHook",
    "KerasHook",
    "ReductionConfig",
    "SaveConfig",
    "SaveConfigMode",
    "SessionHook",
    "create_from_json_file",
    "create_trial",
    "del_hook",
    "get_hook",
    "modes",
    "set_hook",
]


def create_from_json_file(json_file_path: str | os.PathLike[str] | None = None) -> KerasHook:
    """Same as :meth:`KerasHook.create_from_json_file`."""
    from ..hooks.tensorflow._keras_hook import KerasHook

    return KerasHook.create_from_json_file(json_file_path)


def __getattr__(name: str) -> Any:
    if name == "KerasHook":  # TensorFlow and Keras: on first use
        from ..hooks.tensorflow._keras_hook import KerasHook

        return KerasHook
    if name == "create_trial":  # the reader side (trials, storage): not loaded into training processes
        from ..trials import create_trial

        return create_trial
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
