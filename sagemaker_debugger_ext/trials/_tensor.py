"""``Tensor``: one tensor of a trial across steps, modes and workers (smdebug's API)."""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import numpy as np

from .._exceptions import ConfigValueError, field_error_message
from .._reductions import compute_reduction
from ..exceptions import (
    InvalidWorker,
    NoMoreData,
    ShapeUnavailableForStep,
    StepNotYetAvailable,
    StepUnavailable,
    TensorUnavailableForStep,
)
from ..modes import ModeKeys
from ._fetch import Location
from ._reductions import normalize_reduction_name
from ._state import StepState

if TYPE_CHECKING:
    from ._trial import Trial

__all__ = ["StepData", "StepRecords", "Tensor", "TensorSteps", "WorkerRecord", "step_location"]

_GLOBAL = ModeKeys.GLOBAL


#: What one worker saved of a tensor at one step: ``(worker, event file key, frame offset,
#: frame length, shape, reductions)`` (key None: no value saved; reductions:
#: ``{(op, abs): Location}``). Made on demand from the worker's record (below).
StepData = tuple[str, str | None, int, int, tuple[int, ...] | None, dict[tuple[str, bool], Location] | None]
_KEY: Final = 1
_START: Final = 2
_LEN: Final = 3
_SHAPE: Final = 4
_REDS: Final = 5

#: What one worker's index file of a step says, for all its tensors: ``(worker, event file
#: key, {name: (frame offset, frame length)}, {tensor: {(op, abs): (offset, length)}},
#: {name: shape})``. Every tensor of the step refers to the same record, and the offset maps
#: are shared by every step whose index lists the same records (the index parser hands out
#: one list per distinct payload): loading a trial makes no object per record, so neither
#: the time to make them nor the garbage collector's passes over them grow with the tensors.
WorkerRecord = tuple[
    str,
    str,
    Mapping[str, tuple[int, int]],
    Mapping[str, Mapping[tuple[str, bool], tuple[int, int]]],
    Mapping[str, tuple[int, ...]],
]
_R_KEY: Final = 1
_R_LOCS: Final = 2
_R_REDS: Final = 3
_R_SHAPES: Final = 4
#: The records of every worker at one step, sorted by worker (not all of them need name a given tensor).
StepRecords = tuple[WorkerRecord, ...]
#: int(mode) -> mode_step -> StepRecords
TensorSteps = dict[int, dict[int, StepRecords]]


def _names(rec: WorkerRecord, name: str) -> bool:
    """Whether worker record ``rec`` saved anything of tensor ``name`` (a value, reductions or a shape)."""
    return name in rec[_R_LOCS] or name in rec[_R_REDS] or name in rec[_R_SHAPES]


class Tensor:
    """A tensor of a trial. Obtain it with ``trial.tensor(name)``."""

    def __init__(self, name: str, trial: Trial) -> None:
        self.name = name
        self._trial = trial
        # owned and filled by the trial, which holds no strong reference to Tensor objects:
        # no reference cycle, so a dropped trial (and its file cache) is freed at once
        self._steps: TensorSteps = trial._tensors[name]
        self._step_records = trial._loader._step_records  # the trial's containers grow in place
        self._fetch = trial._fetcher.fetch

    def __repr__(self) -> str:
        return f"<Tensor name={self.name!r}>"

    # --- step lookup ----------------------------------------------------------------------
    def _step_dict(self, step: int, mode: ModeKeys) -> StepRecords | None:
        m = int(mode)
        if m == 4:  # ModeKeys.GLOBAL: saved as GLOBAL, else the mode step of that global step
            glob = self._steps.get(4)
            if glob is not None and step in glob:
                return glob[step]
            mm = self._trial._mode_of(step)
            if mm is None:
                return None
            m, step = mm
        by_step = self._steps.get(m)
        return by_step.get(step) if by_step is not None else None

    def _step_data(self, step: int, mode: ModeKeys, worker: str | None) -> StepData:
        mode = _check_mode(mode)
        found = self._step_dict(step, mode)
        if found is None:
            self._trial._maybe_refresh()
            found = self._step_dict(step, mode)
        if found is None:
            state = self._trial.has_passed_step(step, mode)
            if state == StepState.AVAILABLE:
                raise TensorUnavailableForStep(self.name, step, mode)
            if state == StepState.UNAVAILABLE:
                raise StepUnavailable(step, mode)
            if self._trial.loaded_all_steps:
                steps = self._trial.steps(mode=mode)
                raise NoMoreData(step, mode, steps[-1] if steps else -1)
            raise StepNotYetAvailable(step, mode)
        name = self.name
        for rec in found:  # the first worker (in sorted order) that saved anything of this tensor
            if (worker is None or rec[0] == worker) and _names(rec, name):
                loc = rec[_R_LOCS].get(name)
                reds = rec[_R_REDS].get(name)
                return (
                    rec[0],
                    None if loc is None else rec[_R_KEY],
                    *(loc or (0, 0)),
                    rec[_R_SHAPES].get(name),
                    None if reds is None else {k: (rec[_R_KEY], *v) for k, v in reds.items()},
                )
        raise InvalidWorker(str(worker))

    def _location(self, step: int, mode: ModeKeys, worker: str | None) -> Location | None:
        """Where the value at ``step`` is (None: only its shape or reductions were saved)."""
        return step_location(self._step_data(step, mode, worker))

    # --- steps ----------------------------------------------------------------------------
    def _all_steps(self, mode: ModeKeys) -> list[int]:
        mode = _check_mode(mode)
        self._trial._maybe_refresh()
        if mode != ModeKeys.GLOBAL:
            return sorted(self._steps.get(int(mode), ()))
        out = []
        for m, by_step in self._steps.items():
            for s in by_step:
                g = self._trial._global_of(m, s)
                if g is not None:
                    out.append(g)
        return sorted(set(out))

    def steps(self, mode: ModeKeys = ModeKeys.GLOBAL, show_incomplete_steps: bool = False) -> list[int]:
        """Steps (of ``mode``; global by default) at which this tensor was saved, complete ones only."""
        steps = self._all_steps(mode)
        if show_incomplete_steps:
            return steps
        trial = self._trial
        return [s for s in steps if trial._is_complete(s if mode == ModeKeys.GLOBAL else trial._global_of(mode, s))]

    def prev_steps(self, step: int, n: int | None = None, mode: ModeKeys = ModeKeys.GLOBAL) -> list[int]:
        """The saved steps up to and including ``step``; the last ``n`` of them if given."""
        steps = self.steps(mode=mode)
        before = steps[: bisect.bisect_right(steps, step)]
        return before[-n:] if n else before

    def workers(self, step_num: int, mode: ModeKeys = ModeKeys.GLOBAL) -> list[str]:
        """Workers that saved this tensor at ``step_num``."""
        found = self._step_dict(step_num, _check_mode(mode))
        if found is None:
            raise TensorUnavailableForStep(self.name, step_num, mode)
        name = self.name
        return [r[0] for r in found if _names(r, name)]

    # --- values ---------------------------------------------------------------------------
    def value(self, step_num: int, mode: ModeKeys = ModeKeys.GLOBAL, worker: str | None = None) -> np.ndarray:
        """The saved value at ``step_num`` (first worker in sorted order unless ``worker``).

        Raises:
            TensorUnavailableForStep: the step exists but this value was not saved
                (``has_reductions`` tells whether reductions were).
            StepNotYetAvailable / StepUnavailable / NoMoreData: see ``has_passed_step``.
            InvalidWorker: ``worker`` did not save this tensor at this step.
        """
        if mode is _GLOBAL and 4 not in self._steps:  # the common call: _step_data's lookup, inlined
            # the step's newest records: where the first of them names a value of this tensor, it is
            # the value _step_data finds (the first worker that saved anything of this tensor)
            found = self._step_records.get(step_num)
            if found is not None:
                for rec in found:
                    if worker is None or rec[0] == worker:
                        loc = rec[_R_LOCS].get(self.name)
                        if loc is not None:
                            return self._fetch(rec[_R_KEY], loc[0], loc[1])
                        break  # the first worker saved no value, or saved nothing of this tensor: see below
        data = self._step_data(step_num, mode, worker)
        key = data[_KEY]
        if key is None:
            raise TensorUnavailableForStep(self.name, step_num, mode, bool(data[_REDS]))
        return self._fetch(key, data[_START], data[_LEN])

    def values(self, mode: ModeKeys = ModeKeys.GLOBAL, worker: str | None = None) -> dict[int, np.ndarray]:
        """``{step: value}`` for every complete step of ``mode`` (fetched in parallel on S3)."""
        steps = self.steps(mode=mode)
        locs = []
        for s in steps:
            data = self._step_data(s, mode, worker)
            loc = step_location(data)
            if loc is None:
                raise TensorUnavailableForStep(self.name, s, mode, bool(data[_REDS]))
            locs.append(loc)
        return dict(zip(steps, self._trial._fetcher.fetch_many(locs), strict=False))

    def shape(self, step_num: int, mode: ModeKeys = ModeKeys.GLOBAL, worker: str | None = None) -> tuple[int, ...]:
        """The shape at ``step_num``: the saved shape, else the shape of the saved value."""
        data = self._step_data(step_num, mode, worker)
        if data[_SHAPE] is not None:
            return data[_SHAPE]
        loc = step_location(data)
        if loc is None:
            raise ShapeUnavailableForStep(self.name, step_num, mode)
        return tuple(self._fetch(*loc).shape)

    def reduction_value(
        self,
        step_num: int,
        reduction_name: str,
        mode: ModeKeys = ModeKeys.GLOBAL,
        worker: str | None = None,
        abs: bool = False,
    ) -> np.ndarray | np.generic:
        """A reduction at ``step_num``: the stored one, else computed from the saved value.

        Computed norms use the flattened tensor (see :mod:`._reductions`). A zero-length
        tensor's min/max/mean/std/variance are NaN, its sum/l1/l2 0 and prod 1.

        Raises:
            ReductionNotApplicableError: the tensor holds strings.
        """
        op = normalize_reduction_name(reduction_name)
        data = self._step_data(step_num, mode, worker)
        if data[_REDS] and (op, bool(abs)) in data[_REDS]:
            return self._fetch(*data[_REDS][(op, bool(abs))])
        loc = step_location(data)
        if loc is None:
            raise TensorUnavailableForStep(reduction_name, step_num, mode)
        value = self._fetch(*loc)
        return compute_reduction(op, value, is_abs=bool(abs), name=f"{self.name!r} at step {step_num}")

    def reduction_values(
        self, step_num: int, mode: ModeKeys = ModeKeys.GLOBAL, worker: str | None = None
    ) -> dict[tuple[str, bool], np.ndarray]:
        """``{(op, abs): value}`` of the reductions *stored* at ``step_num``."""
        data = self._step_data(step_num, mode, worker)
        if not data[_REDS]:
            return {}
        keys = list(data[_REDS])
        vals = self._trial._fetcher.fetch_many([data[_REDS][k] for k in keys])
        return dict(zip(keys, vals, strict=False))

    def has_reductions(self, step_num: int, mode: ModeKeys = ModeKeys.GLOBAL) -> bool:
        """Whether reductions were stored at ``step_num``."""
        return bool(self._step_data(step_num, mode, None)[_REDS])


def step_location(data: StepData) -> Location | None:
    """Where the value of ``data`` is, or None when only its shape or reductions were saved."""
    key = data[_KEY]
    return None if key is None else (key, data[_START], data[_LEN])


def _check_mode(mode: object) -> ModeKeys:
    if isinstance(mode, ModeKeys):
        return mode
    try:
        return ModeKeys(mode)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        msg = field_error_message("mode", "a ModeKeys member (TRAIN, EVAL, PREDICT, GLOBAL)", mode)
        raise ConfigValueError(msg, field="mode", value=mode) from None
