"""Summaries of a trial: steps per mode, workers, collections, tensors and their shapes."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import attrs

from .._exceptions import ConfigValueError, DebuggerExtError, StorageNotFoundError, field_error_message
from ..storage import open_storage
from ..trials import create_trial

__all__ = ["ModeSteps", "TensorRow", "TrialSummary", "format_steps", "open_trial", "summarize_trial"]


@attrs.frozen(kw_only=True)
class ModeSteps:
    """The steps saved in one mode.

    Attributes:
        mode: the mode's name (``TRAIN``, ``EVAL``, ``PREDICT``, ``GLOBAL``); steps saved
            without a mode (XGBoost, scripts that never call ``set_mode``) are ``GLOBAL``.
        steps: the mode steps, sorted.
        global_steps: the matching global steps, sorted.
    """

    mode: str
    steps: tuple[int, ...]
    global_steps: tuple[int, ...]


@attrs.frozen(kw_only=True)
class TensorRow:
    """One tensor of a trial.

    Attributes:
        name: the tensor name.
        collections: names of the collections the tensor belongs to.
        steps: the global steps at which it was saved.
        shape: its shape at the last saved step, or None when only reductions were saved.
    """

    name: str
    collections: tuple[str, ...]
    steps: tuple[int, ...]
    shape: tuple[int, ...] | None


@attrs.frozen(kw_only=True)
class TrialSummary:
    """What a trial path holds.

    .. versionadded:: 0.1
    """

    path: str
    workers: tuple[str, ...]
    modes: tuple[ModeSteps, ...]
    collections: dict[str, int]
    tensors: tuple[TensorRow, ...]
    training_ended: bool | None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-able dict."""
        return attrs.asdict(self, recurse=True, value_serializer=_json_value)


def _json_value(_inst: Any, _field: Any, value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value


def format_steps(steps: tuple[int, ...] | list[int]) -> str:
    """Compact steps: ``0..9``, ``0..90 every 10``, ``0..3, 6..7``, else ``first..last (n)``."""
    if not steps:
        return "-"
    if len(steps) <= 3:
        return ", ".join(map(str, steps))
    gaps = {b - a for a, b in itertools.pairwise(steps)}
    if len(gaps) == 1:
        gap = gaps.pop()
        return f"{steps[0]}..{steps[-1]}" + (f" every {gap}" if gap != 1 else "")
    runs: list[tuple[int, int]] = []
    for step in steps:
        if runs and step == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], step)
        else:
            runs.append((step, step))
    if len(runs) <= 4:
        return ", ".join(str(a) if a == b else f"{a}..{b}" for a, b in runs)
    return f"{steps[0]}..{steps[-1]} ({len(steps)} steps)"


def _has_collections(path: str) -> bool:
    if path.startswith("s3://"):
        try:
            return next(iter(open_storage(path).list("collections/")), None) is not None
        except StorageNotFoundError:
            return False
    local = Path(path.removeprefix("file://"))
    coll = local / "collections"
    return coll.is_dir() and any(coll.rglob("*collections.json"))


def open_trial(path: str | Path) -> Any:
    """Open a trial, failing at once (instead of waiting) when ``path`` holds no trial.

    Args:
        path: a local folder, ``file://`` URI or ``s3://`` URI of a debug output.

    Returns:
        The trial object of :func:`sagemaker_debugger_ext.trials.create_trial`.

    Raises:
        StorageNotFoundError: ``path`` holds no collections file (not a trial, or not yet written).
    """
    text = str(path)
    if not _has_collections(text):
        msg = field_error_message("path", "a debug output folder or s3:// URI with a collections/ file", text)
        raise StorageNotFoundError(msg, uri=text)
    uri = text.removeprefix("file://")
    return create_trial(uri)


def _mode_name(mode: Any) -> str:
    return str(getattr(mode, "name", mode))


def _tensor_shape(tensor: Any, step: int) -> tuple[int, ...] | None:
    try:
        shape = tensor.shape(step)
    except (DebuggerExtError, AttributeError, KeyError, ValueError, TypeError):
        shape = None
    if shape is None:
        try:
            shape = tensor.value(step).shape
        except (DebuggerExtError, KeyError, ValueError):
            return None
    return tuple(int(d) for d in shape)


def summarize_trial(trial: Any, *, collection: str | None = None) -> TrialSummary:
    """Summarise a trial.

    Args:
        trial: a trial from ``create_trial`` (or :func:`open_trial`).
        collection: list only the tensors of this collection.

    Returns:
        A :class:`TrialSummary`.

    Raises:
        ConfigValueError: ``collection`` is not one of the trial's collections.
    """
    coll_names = sorted(trial.collections())
    if collection is not None and collection not in coll_names:
        msg = field_error_message("collection", f"one of {coll_names}", collection)
        raise ConfigValueError(msg, field="collection", value=collection)
    members: dict[str, tuple[str, ...]] = {}
    counts: dict[str, int] = {}
    for cname in coll_names:
        names = trial.tensor_names(collection=cname)
        counts[cname] = len(names)
        for name in names:
            members[name] = (*members.get(name, ()), cname)
    modes = []
    for mode in trial.modes():
        msteps = tuple(sorted(trial.steps(mode=mode)))
        modes.append(
            ModeSteps(
                mode=_mode_name(mode),
                steps=msteps,
                global_steps=tuple(sorted(trial.global_step(mode, s) for s in msteps)),
            )
        )
    # Steps saved without a mode (XGBoost, scripts that never call set_mode) are GLOBAL steps.
    covered = {g for m in modes for g in m.global_steps}
    unmoded = tuple(sorted(int(s) for s in trial.steps() if int(s) not in covered))
    if unmoded:
        modes.append(ModeSteps(mode="GLOBAL", steps=unmoded, global_steps=unmoded))
    wanted = trial.tensor_names(collection=collection) if collection else trial.tensor_names()
    rows = []
    for name in sorted(wanted):
        tensor = trial.tensor(name)
        steps = tuple(tensor.steps())
        rows.append(
            TensorRow(
                name=name,
                collections=members.get(name, ()),
                steps=steps,
                shape=_tensor_shape(tensor, steps[-1]) if steps else None,
            )
        )
    ended = getattr(trial, "loaded_all_steps", None)
    return TrialSummary(
        path=str(getattr(trial, "path", "")),
        workers=tuple(sorted(trial.workers())),
        modes=tuple(sorted(modes, key=lambda m: m.global_steps[:1])),
        collections=counts,
        tensors=tuple(rows),
        training_ended=ended if isinstance(ended, bool) else None,
    )
