"""Switch a trial's automatic refresh off (or on) for a block (smdebug's ``smdebug.analysis.utils``).

::

    with no_refresh(trial):          # or a list of trials; yields what it was given
        steps = trial.steps()        # reads only what is already loaded

The previous ``dynamic_refresh`` of each trial is restored when the block ends, also when
it raises (smdebug sets it to True/False unconditionally, and not after an exception).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, TypeVar

from .._exceptions import ConfigTypeError, field_error_message

__all__ = ["no_refresh", "refresh"]

T = TypeVar("T")


def _as_list(trials: Any) -> list[Any]:
    items = list(trials) if isinstance(trials, (list, tuple)) else [trials]
    for trial in items:
        if not hasattr(trial, "dynamic_refresh"):
            msg = field_error_message("trials", "a trial or a list of trials", trial)
            raise ConfigTypeError(msg, field="trials", value=trial)
    return items


@contextlib.contextmanager
def _refresh_set(trials: T, value: bool) -> Iterator[T]:
    items = _as_list(trials)
    saved = [(t, t.dynamic_refresh) for t in items]
    for trial in items:
        trial.dynamic_refresh = value
    try:
        yield trials
    finally:
        for trial, previous in saved:
            trial.dynamic_refresh = previous


def no_refresh(trials: T) -> contextlib.AbstractContextManager[T]:
    """Within the block, ``trials`` (one trial or a list) do not look for new steps.

    Raises:
        ConfigTypeError: something that is not a trial.
    """
    return _refresh_set(trials, False)


def refresh(trials: T) -> contextlib.AbstractContextManager[T]:
    """Within the block, ``trials`` (one trial or a list) look for new steps when asked.

    Raises:
        ConfigTypeError: something that is not a trial.
    """
    return _refresh_set(trials, True)
