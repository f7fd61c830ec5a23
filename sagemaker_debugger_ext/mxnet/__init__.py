"""MXNet Gluon hook with the names of ``smdebug.mxnet``: change only the import.

``import smdebug.mxnet as smd`` -> ``import sagemaker_debugger_ext.mxnet as smd``. MXNet is
retired upstream (Apache Attic, 2023): ``mxnet`` 1.9.1 needs NumPy < 1.24, so it runs in a
venv of its own (see ``docs/migration.md``). Submodules as in smdebug: ``mxnet.hook``
(``Hook``), ``mxnet.collection`` (``Collection``, ``CollectionManager``),
``mxnet.singleton_utils`` (``get_hook``, ``set_hook``, ``del_hook``).
"""

from __future__ import annotations

from .. import modes
from ..hooks._collections import CollectionKeys
from ..hooks._reduction_config import ReductionConfig
from ..hooks._save_config import SaveConfig, SaveConfigMode
from ..trials import create_trial
from .collection import Collection
from .hook import Hook
from .singleton_utils import del_hook, get_hook, set_hook

__all__ = [
    "Collection",
    "CollectionKeys",
    "Hook",
    "ReductionConfig",
    "SaveConfig",
    "SaveConfigMode",
    "create_trial",
    "del_hook",
    "get_hook",
    "modes",
    "set_hook",
]
