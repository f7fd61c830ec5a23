"""The constructor options every hook shares, defined once.

smdebug's hooks take the same ten arguments (``out_dir`` ... ``include_workers``); this
package adds three keyword-only ones (``never_crash``, ``context``, ``background_writes``).
:class:`HookOptions` holds them with their defaults and checks; ``BaseHook.__init__`` is the
one constructor that lists them (the framework hooks inherit it, XGBoost's appends its own
three), and ``tests/hooks/test_hooks_signatures.py`` keeps its signature equal to these fields
and every hook class's signature equal to smdebug's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from .._container_env import TRAINING_END_MARKER, ContainerPaths
from .._exceptions import HookConfigError, field_error_message
from ..modes import ModeKeys
from ._context import TrainingContext
from ._reduction_config import ReductionConfig
from ._save_config import SaveConfig, SaveConfigMode

__all__ = ["HookOptions"]

_INCLUDE_WORKERS = ("one", "all")


def _out_dir(value: str | os.PathLike[str] | None) -> str:
    out_dir = str(value) if value is not None else str(ContainerPaths().tensors_dir)
    if "://" in out_dir:
        msg = field_error_message("out_dir", "a local folder (the platform uploads it)", out_dir)
        raise HookConfigError(msg, field="out_dir", value=out_dir)
    return out_dir


def _include_workers(instance: object, attribute: object, value: str) -> None:
    if value not in _INCLUDE_WORKERS:
        msg = field_error_message("include_workers", "'one' or 'all'", value)
        raise HookConfigError(msg, field="include_workers", value=value)


def _reduction_config(instance: object, attribute: object, value: Any) -> None:
    if value is not None and not isinstance(value, ReductionConfig):
        msg = field_error_message("reduction_config", "a ReductionConfig", value)
        raise HookConfigError(msg, field="reduction_config")


@attrs.frozen(kw_only=True)
class HookOptions:
    """A hook's constructor arguments, checked (each error names its argument).

    ``out_dir`` is resolved (default: the container's tensors folder; no URL);
    ``save_config`` and ``reduction_config`` are kept as given and resolved by
    :meth:`save_config_or` / :meth:`reduction_config_or_default`.
    """

    # smdebug's ten, in its order
    out_dir: str = attrs.field(default=None, converter=_out_dir)
    export_tensorboard: bool = attrs.field(default=False, converter=bool)
    tensorboard_dir: str | os.PathLike[str] | None = None
    dry_run: bool = attrs.field(default=False, converter=bool)
    reduction_config: ReductionConfig | None = attrs.field(default=None, validator=_reduction_config)
    save_config: SaveConfig | SaveConfigMode | Mapping[ModeKeys, SaveConfigMode] | None = None
    include_regex: Iterable[str] | None = None
    include_collections: Iterable[str] | None = None
    save_all: bool = attrs.field(default=False, converter=bool)
    include_workers: str = attrs.field(default="one", validator=_include_workers)
    # this package's, keyword-only
    never_crash: bool = attrs.field(default=False, converter=bool)
    context: TrainingContext | None = None
    background_writes: bool = True

    def check_out_dir(self) -> None:
        """Refuse an ``out_dir`` that holds a finished run, as smdebug does when the hook is made.

        Raises:
            HookConfigError: ``out_dir`` holds ``training_job_end.ts``.
        """
        if (Path(self.out_dir) / TRAINING_END_MARKER).exists():
            msg = field_error_message(
                "out_dir", f"a folder without {TRAINING_END_MARKER} (it holds a finished run)", self.out_dir
            )
            raise HookConfigError(msg, field="out_dir", value=self.out_dir)

    def tensorboard_folder(self) -> str | None:
        """smdebug's rule: a given ``tensorboard_dir`` is used; ``export_tensorboard`` without one
        means ``<out_dir>/tensorboard``; neither: no TensorBoard export."""
        if self.tensorboard_dir is not None:
            return str(self.tensorboard_dir)
        return os.path.join(self.out_dir, "tensorboard") if self.export_tensorboard else None

    def save_config_or(self, defaults: Mapping[str, Any]) -> SaveConfig:
        """The hook's ``SaveConfig``: the given one parsed, else one made of the hook class's defaults."""
        return SaveConfig.parse(self.save_config) if self.save_config is not None else SaveConfig(**defaults)

    def reduction_config_or_default(self) -> ReductionConfig:
        """The given ``ReductionConfig``, else one that saves raw tensors."""
        return self.reduction_config or ReductionConfig(save_raw_tensor=True)
