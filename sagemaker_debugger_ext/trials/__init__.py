"""Read a trial the way ``smdebug.trials`` does: ``create_trial(path)`` for local or S3 paths.

Scripts written for smdebug work after changing ``from smdebug.trials import create_trial``
to ``from sagemaker_debugger_ext.trials import create_trial``.
"""

from __future__ import annotations

import os
from typing import Any

from .. import modes
from .._container_env import INCOMPLETE_STEP_WAIT_WINDOW_ENV
from .._exceptions import ConfigValueError, field_error_message
from ..modes import ModeKeys
from ..profiler import create_profiler_trial
from ..storage import Storage, open_storage
from ._collections import Collection
from ._smdebug_trials import LocalTrial, S3Trial
from ._state import StepState
from ._tensor import Tensor
from ._trial import Trial

__all__ = ["Collection", "LocalTrial", "ModeKeys", "S3Trial", "StepState", "Tensor", "Trial", "create_trial", "modes"]


def create_trial(
    path: str | os.PathLike[str] | Storage,
    name: str | None = None,
    range_steps: tuple[int, int] | None = None,
    *,
    poll_interval_s: float = 2.0,
    wait_timeout_s: float = 120.0,
    incomplete_step_window: int | None = None,
    **smdebug_kwargs: Any,
) -> Trial:
    """Open the trial at ``path`` (a folder, ``file://`` or ``s3://`` URI, or a Storage).

    Blocks until every worker's collections file exists (polling every
    ``poll_interval_s``, at most ``wait_timeout_s``), then reads the index files.

    Args:
        path: the trial (the hook's ``out_dir`` / the job's debug output).
        name: a display name.
        range_steps: ``(begin, end)``: load only global steps ``begin <= s < end``.
        poll_interval_s: pause between polls while waiting.
        wait_timeout_s: the longest any wait lasts.
        incomplete_step_window: see :class:`Trial`; default
            ``$SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW`` (as smdebug), else 1000.
        **smdebug_kwargs: ``profiler=True`` opens the profiler data instead (a
            :class:`~sagemaker_debugger_ext.profiler.ProfilerTrial`, as smdebug does);
            smdebug's ``check``, ``index_mode``, ``cache``, ``parallel`` and ``output_dir``
            are accepted and ignored.

    Raises:
        StorageNotFoundError: a missing local folder or bucket.
        MissingCollectionFiles: no collections files (job ended, or the wait ran out).
        ConfigValueError: bad arguments.
    """
    unknown = set(smdebug_kwargs) - {"check", "index_mode", "cache", "parallel", "profiler", "output_dir"}
    if unknown:
        msg = field_error_message("create_trial keyword", "a known argument", min(unknown))
        raise ConfigValueError(msg, field="create_trial", value=sorted(unknown))
    if smdebug_kwargs.get("profiler"):  # smdebug: create_trial(path, profiler=True) is a profiler trial
        return create_profiler_trial(os.fspath(path))  # type: ignore[arg-type,return-value]
    if incomplete_step_window is None:
        incomplete_step_window = _window_from_env()
    storage = path if isinstance(path, Storage) and not isinstance(path, (str, os.PathLike)) else open_storage(path)
    trial = Trial(
        storage,
        name=name,
        range_steps=range_steps,
        poll_interval_s=poll_interval_s,
        wait_timeout_s=wait_timeout_s,
        incomplete_step_window=incomplete_step_window,
    )
    if isinstance(path, (str, os.PathLike)) and "://" not in os.fspath(path):
        trial._given_path = os.fspath(path)  # smdebug's last_index_token joins the path as given
    trial._load()
    return trial


_WINDOW_ENV = INCOMPLETE_STEP_WAIT_WINDOW_ENV


def _window_from_env() -> int:
    raw = os.environ.get(_WINDOW_ENV)
    if raw is None or not raw.strip():
        return 1000
    try:
        return int(raw)
    except ValueError:
        msg = field_error_message(_WINDOW_ENV, "an int >= 2", raw)
        raise ConfigValueError(msg, field=_WINDOW_ENV, value=raw) from None
