"""``Trial``: the reader of one trial folder (local or S3), refreshed while a job writes."""

from __future__ import annotations

import bisect
import logging
import os
import re
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from .._exceptions import ConfigValueError, field_error_message
from ..exceptions import (
    NoMoreData,
    StepNotYetAvailable,
    StepUnavailable,
    TensorUnavailable,
)
from ..modes import ModeKeys
from ..storage import Storage
from ._collections import Collection
from ._loading import TrialLoader
from ._state import StepState
from ._tensor import _R_LOCS, _R_REDS, _R_SHAPES, Tensor, _check_mode

_LOG = logging.getLogger(__name__)

__all__ = ["Trial"]


class Trial:
    """A trial: the tensors a training job saved, with smdebug's ``Trial`` API.

    Use :func:`~sagemaker_debugger_ext.trials.create_trial`; the constructor only stores
    and validates its arguments.

    Args:
        storage: where the trial lives.
        name: a display name (default: the folder name).
        range_steps: ``(begin, end)``: only global steps ``begin <= s < end`` are loaded.
        poll_interval_s: pause between polls while waiting (smdebug: 2 s).
        wait_timeout_s: the longest any wait (collections files, ``wait_for_steps``) lasts.
        incomplete_step_window: pending incomplete steps tolerated before the older half
            is declared complete (smdebug's ``SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW``).
        clock, sleep: time sources (tests may pass fakes).
    """

    def __init__(
        self,
        storage: Storage,
        *,
        name: str | None = None,
        range_steps: tuple[int, int] | None = None,
        poll_interval_s: float = 2.0,
        wait_timeout_s: float = 120.0,
        incomplete_step_window: int = 1000,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if range_steps is not None and (
            not isinstance(range_steps, (tuple, list)) or len(range_steps) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in range_steps)
            or range_steps[0] < 0 or range_steps[1] < range_steps[0]
        ):  # fmt: skip
            msg = field_error_message("range_steps", "a (begin, end) pair of ints with 0 <= begin <= end", range_steps)
            raise ConfigValueError(msg, field="range_steps", value=range_steps)
        for fname, val in (("poll_interval_s", poll_interval_s), ("wait_timeout_s", wait_timeout_s)):
            if isinstance(val, bool) or not isinstance(val, (int, float)) or val < 0:
                raise ConfigValueError(field_error_message(fname, "a number >= 0", val), field=fname, value=val)
        if (
            isinstance(incomplete_step_window, bool)
            or not isinstance(incomplete_step_window, int)
            or incomplete_step_window < 2
        ):
            msg = field_error_message("incomplete_step_window", "an int >= 2", incomplete_step_window)
            raise ConfigValueError(msg, field="incomplete_step_window", value=incomplete_step_window)
        self._storage = storage
        self.name = name if name is not None else os.path.basename(storage.uri.rstrip("/")) or storage.uri
        loader = self._loader = TrialLoader(
            storage,
            range_steps=tuple(range_steps) if range_steps is not None else None,
            poll_interval_s=float(poll_interval_s),
            wait_timeout_s=float(wait_timeout_s),
            window=incomplete_step_window,
            clock=clock,
            sleep=sleep,
        )
        self._clock = clock
        self._sleep = sleep
        self._tensor_views: weakref.WeakValueDictionary[str, Tensor] = weakref.WeakValueDictionary()
        # the loader's containers, shared (they grow in place): the queries below read them directly
        self._fetcher = loader._fetcher
        self._collections = loader._collections
        self._workers = loader._workers
        self._tensors = loader._tensors
        self._global_to_mode = loader._global_to_mode
        self._mode_to_global = loader._mode_to_global
        self._step_records = loader._step_records
        self._mode_tensors = loader._mode_tensors
        self._maybe_refresh = loader.maybe_refresh  # bound once: Tensor calls it on every lookup
        self._load = loader.load

    # --- the loader's state -------------------------------------------------------------------
    @property
    def path(self) -> str:
        """The trial's URI."""
        return self._loader.path

    @property
    def range_steps(self) -> tuple[int, ...] | None:
        """``(begin, end)`` of the global steps loaded, or None for all."""
        return self._loader.range_steps

    @property
    def poll_interval_s(self) -> float:
        """Pause between polls while waiting."""
        return self._loader.poll_interval_s

    @property
    def wait_timeout_s(self) -> float:
        """The longest any wait lasts."""
        return self._loader.wait_timeout_s

    _given_path: str | None = None

    @property
    def last_index_token(self) -> str | None:
        """The newest index file loaded, as smdebug names it: joined to the path the trial was
        opened with (local), or the object key below the bucket (S3); None before any step."""
        key = self._loader.last_index_key
        if key is None:
            return None
        if self._given_path is not None:
            return os.path.join(self._given_path, key)
        uri = self.path.rstrip("/")
        if uri.startswith("s3://"):
            prefix = uri[len("s3://") :].partition("/")[2]
            return f"{prefix}/{key}" if prefix else key
        return f"{uri}/{key}"

    @property
    def loaded_all_steps(self) -> bool:
        """Whether training has ended and every step is loaded."""
        return self._loader.loaded_all_steps

    @property
    def last_complete_step(self) -> int:
        """The last global step every worker has written (-1: none yet)."""
        return self._loader.last_complete_step

    @property
    def num_workers(self) -> int:
        """The number of workers of the job (from the collections files)."""
        return self._loader.num_workers

    @property
    def dynamic_refresh(self) -> bool:
        """Whether queries refresh the trial while the job runs (smdebug's attribute)."""
        return self._loader.dynamic_refresh

    @dynamic_refresh.setter
    def dynamic_refresh(self, value: bool) -> None:
        self._loader.dynamic_refresh = value

    def refresh(self) -> None:
        """Read index files written since the last refresh (no-op once all steps are loaded)."""
        self._loader.refresh()

    def maybe_refresh(self) -> None:
        """Refresh unless ``dynamic_refresh`` is off or every step is loaded."""
        self._loader.maybe_refresh()

    def training_has_ended(self) -> bool:
        """Whether ``training_job_end.ts`` exists (the job finished writing)."""
        return self._loader.training_has_ended()

    def __repr__(self) -> str:
        return f"<Trial name={self.name!r} path={self.path!r} steps={len(self._global_to_mode)}>"

    # --- steps and modes -----------------------------------------------------------------
    def _mode_of(self, step: int) -> tuple[int, int] | None:
        return self._global_to_mode.get(step)

    def _global_of(self, mode: int, mode_step: int) -> int | None:
        mode = int(mode)
        if mode == 4:  # ModeKeys.GLOBAL
            return mode_step
        by_step = self._mode_to_global.get(mode)
        return by_step.get(mode_step) if by_step is not None else None

    def _is_complete(self, step: int | None) -> bool:
        if step is None:
            return False
        loader = self._loader
        return (
            loader.loaded_all_steps
            or loader.last_complete_step >= step
            or len(self._step_records.get(step, ())) >= loader.num_workers  # one record per worker
        )

    def _all_steps(self, mode: ModeKeys) -> list[int]:
        self._maybe_refresh()
        if mode == ModeKeys.GLOBAL:
            return sorted(self._global_to_mode)
        return sorted(self._mode_to_global.get(int(mode), ()))

    def steps(self, mode: ModeKeys = ModeKeys.GLOBAL, show_incomplete_steps: bool = False) -> list[int]:
        """Saved steps of ``mode`` (global steps by default); complete steps only unless asked."""
        mode = _check_mode(mode)
        steps = self._all_steps(mode)
        if show_incomplete_steps:
            return steps
        return [s for s in steps if self._is_complete(self._global_of(mode, s))]

    def modes(self) -> list[ModeKeys]:
        """The modes with saved steps (GLOBAL is not listed, as in smdebug)."""
        self._maybe_refresh()
        return [ModeKeys(m) for m in sorted(self._mode_to_global)]

    def mode(self, global_step: int) -> ModeKeys | None:
        """The mode of ``global_step`` (None if unknown)."""
        mm = self._mode_modestep(global_step)
        return ModeKeys(mm[0]) if mm else None

    def mode_step(self, global_step: int) -> int | None:
        """The step within its mode of ``global_step`` (None if unknown)."""
        mm = self._mode_modestep(global_step)
        return mm[1] if mm else None

    def mode_modestep(self, global_step: int) -> tuple[ModeKeys | None, int | None]:
        """``(mode, mode_step)`` of ``global_step``, ``(None, None)`` if unknown."""
        mm = self._mode_modestep(global_step)
        return (ModeKeys(mm[0]), mm[1]) if mm else (None, None)

    def _mode_modestep(self, global_step: int) -> tuple[int, int] | None:
        mm = self._global_to_mode.get(global_step)
        if mm is None:
            self._maybe_refresh()
            mm = self._global_to_mode.get(global_step)
        return mm

    def global_step(self, mode: ModeKeys, mode_step: int) -> int | None:
        """The global step of ``mode_step`` in ``mode`` (None if unknown)."""
        mode = _check_mode(mode)
        g = self._global_of(mode, mode_step)
        if g is None:
            self._maybe_refresh()
            g = self._global_of(mode, mode_step)
        return g

    def workers(self) -> list[str]:
        """Worker names, sorted."""
        self._maybe_refresh()
        return sorted(self._workers)

    def has_passed_step(self, step: int, mode: ModeKeys = ModeKeys.GLOBAL) -> StepState:
        """Whether ``step`` of ``mode`` is AVAILABLE, NOT_YET_AVAILABLE or UNAVAILABLE."""
        mode = _check_mode(mode)
        all_steps = self.steps(mode=mode, show_incomplete_steps=True)
        i = bisect.bisect_left(all_steps, step)
        if i < len(all_steps):
            g = self._global_of(mode, all_steps[i])
            if g is None:  # cannot happen: all_steps come from the same maps
                return StepState.NOT_YET_AVAILABLE
            if all_steps[i] > step:
                return StepState.UNAVAILABLE if self.last_complete_step >= g else StepState.NOT_YET_AVAILABLE
            return StepState.AVAILABLE if self._is_complete(g) else StepState.NOT_YET_AVAILABLE
        return StepState.UNAVAILABLE if self._loader.loaded_all_steps else StepState.NOT_YET_AVAILABLE

    def wait_for_steps(
        self,
        required_steps: Iterable[int],
        mode: ModeKeys = ModeKeys.GLOBAL,
        *,
        timeout_s: float | None = None,
    ) -> None:
        """Block until every step in ``required_steps`` is available, polling.

        Raises:
            StepUnavailable: a step was skipped.
            NoMoreData: training ended before the step.
            StepNotYetAvailable: the wait (``timeout_s``, default ``wait_timeout_s``) ran out.
        """
        mode = _check_mode(mode)
        deadline = self._clock() + (self.wait_timeout_s if timeout_s is None else timeout_s)
        for step in required_steps:
            while True:
                self.refresh()
                state = self.has_passed_step(step, mode)
                if state == StepState.AVAILABLE:
                    break
                if state == StepState.UNAVAILABLE:
                    steps = self.steps(mode=mode, show_incomplete_steps=True)
                    last = steps[-1] if steps else -1
                    if not self.loaded_all_steps or step < last:
                        raise StepUnavailable(step, mode)
                    raise NoMoreData(step, mode, last)
                remaining = deadline - self._clock()
                if remaining <= 0:
                    raise StepNotYetAvailable(step, mode)
                self._sleep(min(self.poll_interval_s, remaining))

    # --- tensors and collections -----------------------------------------------------------
    def has_tensor(self, tname: str) -> bool:
        """Whether tensor ``tname`` has been saved (refreshes once if not yet seen)."""
        if tname not in self._tensors:
            self._maybe_refresh()
        return tname in self._tensors

    def tensor(self, tname: str) -> Tensor:
        """The :class:`Tensor` named ``tname``.

        Raises:
            TensorUnavailable: no step holds it.
        """
        if not self.has_tensor(tname):
            raise TensorUnavailable(tname)
        tensor = self._tensor_views.get(tname)
        if tensor is None:  # the same object while anyone holds it
            tensor = self._tensor_views[tname] = Tensor(tname, self)
        return tensor

    def collections(self) -> dict[str, Collection]:
        """``{name: Collection}`` from the workers' collections files."""
        return dict(self._collections)

    def collection(self, coll_name: str) -> Collection:
        """The collection named ``coll_name``; a new, empty one when the trial has none of
        that name (as in smdebug): fill it with ``.include(regex)`` / ``.add_tensor_name()``
        and pass it (or its name) to :meth:`tensor_names`.

        Raises:
            ConfigValueError: ``coll_name`` is not a non-empty string.
        """
        coll = self._collections.get(coll_name)
        if coll is None:
            if not isinstance(coll_name, str) or not coll_name:
                msg = field_error_message("collection", "a non-empty collection name", coll_name)
                raise ConfigValueError(msg, field="collection", value=coll_name)
            coll = self._collections[coll_name] = Collection(name=coll_name)
        return coll

    def tensor_names(
        self,
        show_prefixed_tensors: bool = False,
        *,
        step: int | None = None,
        mode: ModeKeys = ModeKeys.GLOBAL,
        regex: str | list[str] | None = None,
        collection: str | Collection | None = None,
    ) -> list[str]:
        """Sorted names of saved tensors, filtered by step, mode, regex or collection.

        ``show_prefixed_tensors`` is accepted for compatibility; reductions are always
        folded into their base tensor.

        Raises:
            ConfigValueError: both ``regex`` and ``collection``.

        A ``collection`` name the trial does not hold becomes an empty collection and lists
        nothing (a warning is logged), as in smdebug 1.0.34.
        """
        mode = _check_mode(mode)
        self._maybe_refresh()
        if regex is not None and collection is not None:
            msg = "only one of 'regex' and 'collection' may be given"
            raise ConfigValueError(msg, field="regex", value=regex)
        names: set[str]
        if step is None:
            names = set(self._tensors) if mode == ModeKeys.GLOBAL else set(self._mode_tensors.get(int(mode), ()))
        else:
            g = self._global_of(mode, step)
            names = set()
            for rec in self._step_records.get(g, ()) if g is not None else ():
                names.update(rec[_R_LOCS], rec[_R_REDS], rec[_R_SHAPES])
        if collection is not None:
            if isinstance(collection, str) and collection not in self._collections:
                # smdebug: the name becomes an empty collection (as trial.collection(name)); say so
                _LOG.warning("no tensors of collection %r were saved (the trial has %s)", collection,
                             sorted(self._collections))  # fmt: skip
            coll = self.collection(collection) if isinstance(collection, str) else collection  # any Collection
            names = {n for n in names if coll.matches(n)}
        elif regex is not None:
            patterns = [regex] if isinstance(regex, str) else list(regex)
            names = {n for n in names if any(re.search(p, n) for p in patterns)}
        return sorted(names)

    def _describe(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "steps": self.steps(), "workers": self.workers()}
