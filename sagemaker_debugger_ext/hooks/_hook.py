"""The framework-independent hook: configuration, steps and modes, what to save, when.

Composed of collaborators it holds: :class:`~._clock.StepClock` (the step counters),
:class:`~._quiet.QuietSteps`, :class:`~._saving.ExplicitSaves`, :class:`~._guard.CrashGuard`
and :class:`~._writer.HookWriter` (files and writer thread, opened at the first write); the
collections API is its base :class:`~._hook_collections.HookCollections`. Hot path:
a step that saves nothing costs one clock advance and one schedule check per included collection
(``_start_step``); framework adapters attach their per-tensor callbacks only for steps where something is due.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Self

import numpy as np

from .._exceptions import HookConfigError, field_error_message
from ..format import write_training_end
from ..modes import ModeKeys
from ._arena import CopyArena
from ._arrays import to_numpy
from ._clock import StepClock
from ._collections import (
    PYTORCH_BUILTIN_REGEXES,
    Collection,
    CollectionKeys,
    CollectionManager,
)
from ._context import TrainingContext
from ._due import NOTHING_DUE, DueCollections
from ._guard import CrashGuard
from ._hook_collections import HookCollections
from ._json_config import load_hook_settings
from ._options import HookOptions
from ._outputs import FrameworkMetrics, TensorBoardExport
from ._quiet import QuietSteps
from ._reduction_config import ReductionConfig
from ._save_config import SaveConfig, SaveConfigMode
from ._saving import ExplicitSaves
from ._step import StepOutput
from ._writer import HookWriter

__all__ = ["BaseHook"]


def _close_at_exit(ref: weakref.ReferenceType[BaseHook]) -> None:
    hook = ref()
    if hook is not None:
        hook.close()


class BaseHook(HookCollections):
    """Shared machinery of every hook (smdebug's ``BaseHook``); framework hooks inherit its
    constructor (XGBoost's appends its own arguments) and set up in :meth:`_init_adapter`."""

    builtin_collections: ClassVar[Mapping[str, list[str]]] = PYTORCH_BUILTIN_REGEXES
    default_include_collections: ClassVar[tuple[str, ...]] = (CollectionKeys.LOSSES,)
    default_save_values: ClassVar[Mapping[str, Any]] = {}
    #: the arena saved tensors are copied into, reused from step to step (``_arena``: measured per framework)
    copy_arena: ClassVar[type[CopyArena] | None] = None
    #: reduction names keep a tensor's ``:0`` (smdebug: TensorFlow's hooks do, the others drop it)
    reductions_keep_colon_index: ClassVar[bool] = False
    #: ``save_scalar`` values wait for the next step due to save something (see ``_saving``)
    scalars_wait_for_saved_step: ClassVar[bool] = False
    _guarded: Callable[..., None]  # fn(*args) in the crash boundary: CrashGuard.run, bound in __init__
    _guard: Callable[[], contextlib.AbstractContextManager[None]]  # `with self._guard():` CrashGuard.scope

    def __init__(
        self,
        out_dir: str | os.PathLike[str] | None = None,
        export_tensorboard: bool = False,
        tensorboard_dir: str | os.PathLike[str] | None = None,
        dry_run: bool = False,
        reduction_config: ReductionConfig | None = None,
        save_config: SaveConfig | SaveConfigMode | Mapping[ModeKeys, SaveConfigMode] | None = None,
        include_regex: Iterable[str] | None = None,
        include_collections: Iterable[str] | None = None,
        save_all: bool = False,
        include_workers: str = "one",
        **kwargs: Any,
    ) -> None:
        """smdebug's ten arguments; keyword-only ``never_crash``, ``context``, ``background_writes`` (HookOptions)."""
        opts = HookOptions(out_dir=out_dir, export_tensorboard=export_tensorboard, tensorboard_dir=tensorboard_dir,
                           dry_run=dry_run, reduction_config=reduction_config, save_config=save_config,
                           include_regex=include_regex, include_collections=include_collections, save_all=save_all,
                           include_workers=include_workers, **kwargs)  # fmt: skip
        opts.check_out_dir()  # smdebug refuses a finished run's folder here
        self.context = opts.context or self._context_from_environ()
        self.out_dir = opts.out_dir
        self.tensorboard_dir = opts.tensorboard_folder()
        self.dry_run = opts.dry_run
        self.save_all_workers = opts.include_workers == "all"
        self.worker = self.context.worker
        self._writes = not self.dry_run and (self.save_all_workers or self.context.rank == 0)
        self.save_config = opts.save_config_or(self.default_save_values)
        self.reduction_config = opts.reduction_config_or_default()
        self.collection_manager = CollectionManager(dict(self.builtin_collections))
        self.save_all = opts.save_all
        self.include_collections = self.collection_manager.included_names(
            self.default_include_collections, opts.include_collections, opts.include_regex, self.save_all
        )
        self._crash = CrashGuard(opts.never_crash, self.context, self._stop_saving)
        self._guarded, self._guard = self._crash.run, self._crash.scope
        self._clock = StepClock()
        self._quiet = QuietSteps(self)
        self._saves = ExplicitSaves(self, wait_for_saved_step=self.scalars_wait_for_saved_step)
        self.last_saved_step: int | None = None
        self._prepared = self._running = self._disabled = self._closed = False
        self._to_save: list[Collection] = []
        self._schedule = DueCollections(())
        self._due: frozenset[Collection] = NOTHING_DUE
        self._tensor_colls: dict[str, tuple[Collection, ...]] = {}
        self._output: StepOutput | None = None
        self._exported = self._dirty = False
        self._tb = TensorBoardExport(self.tensorboard_dir) if self.tensorboard_dir and self._writes else None
        self._metrics: FrameworkMetrics | None = None  # from the profiler's config, read at the first step
        self._step_started: float | None = None
        self._atexit: Any = None
        self._writer = HookWriter(self.out_dir, background=opts.background_writes, copy_arena=self.copy_arena,
                                  keep_colon_index=self.reductions_keep_colon_index)  # fmt: skip  # opened at the first write
        self._init_adapter()

    def _init_adapter(self) -> None:
        """A framework hook's own state, set up at the end of ``__init__``."""

    def _context_from_environ(self) -> TrainingContext:
        """The training context when none is given (Keras reads ``TF_CONFIG`` too)."""
        return TrainingContext.from_environ(os.environ)

    def _stop_saving(self) -> None:
        """The hook failed (``never_crash``): it saves nothing from now on."""
        self._disabled = True
        self._due = NOTHING_DUE

    @property
    def step(self) -> int:
        """The global step (smdebug's ``hook.step``); -1 before the first."""
        return self._clock.step

    @property
    def mode(self) -> ModeKeys:
        """The current mode (``set_mode``)."""
        return self._clock.mode

    @property
    def mode_steps(self) -> dict[ModeKeys, int]:
        """Each mode's step count (-1: none yet)."""
        return self._clock.mode_steps

    @classmethod
    def create_from_json_file(cls, json_file_path: str | os.PathLike[str] | None = None) -> Self:
        """Build a hook from ``debughookconfig.json`` (``json_file_path``, default
        ``$SMDEBUG_CONFIG_FILE_PATH``, else ``/opt/ml/input/config/debughookconfig.json``).

        Raises:
            FileNotFoundError: no config file (as smdebug).
            HookConfigError: a bad value, naming its key.
        """
        settings = load_hook_settings(json_file_path, os.environ, default_save_values=cls.default_save_values)
        hook = cls(**settings.hook_kwargs(), never_crash=settings.never_crash)
        settings.apply_to(hook.collection_manager)
        return hook

    # --- collections: _prepare fixes what is saved (the rest: HookCollections) --------------
    def _prepare(self, *, check: bool = True) -> None:
        """Fix the collections to save; ``check`` refuses one with nothing to match, as
        smdebug does when saving starts (a hook closed before any step checks nothing)."""
        cm = self.collection_manager
        if check:
            cm.check_configured()
        self._to_save = cm.saved(self.include_collections)
        for coll in cm:
            self._complete(coll)
        self._schedule = DueCollections(self._to_save)
        self._prepared = True
        if self._atexit is None and not self._closed:  # prepared by a first step or by Keras' fit
            self._atexit = atexit.register(_close_at_exit, weakref.ref(self))

    # --- steps and modes ---------------------------------------------------------------------
    def set_mode(self, mode: ModeKeys) -> None:
        """Switch to ``mode``; each mode keeps its own step count.

        Raises: HookConfigError: ``mode`` is not a :class:`ModeKeys` member.
        """
        clock = self._clock
        if mode is clock.mode:  # every step of a framework loop sets it again: keep that cheap
            return
        if mode not in ModeKeys.__members__.values():
            msg = field_error_message("mode", "one of modes.TRAIN, EVAL, PREDICT, GLOBAL", mode)
            raise HookConfigError(msg, field="mode", value=mode)
        clock.mode = ModeKeys(mode)
        self._quiet.allow(None)
        if self._prepared and clock.step >= 0:
            self._due = self._compute_due()

    def _compute_due(self) -> frozenset[Collection]:
        clock = self._clock
        return self._schedule.at(clock.mode, clock.mode_steps[clock.mode]) if self._writes else NOTHING_DUE

    def _quiet_step(self, mode: ModeKeys) -> bool:
        """Open the next step of ``mode`` the quiet way if it saves nothing (see ``_quiet``)."""
        return self._quiet.open(mode)

    def _start_step(self, at: int | None = None) -> None:
        """Close the running step and open the next one (smdebug's ``_increment_step``); ``at``
        sets the global and mode step instead of incrementing (XGBoost's iteration)."""
        if not self._running:  # the first step: the profiler's config, the collections fixed, close at exit
            self._running = True
            self._metrics = FrameworkMetrics.create(self.context)
            if not self._prepared:  # Keras' fit prepares first
                self._prepare()
        self._end_step()
        metrics = self._metrics
        self._step_started = time.time() if metrics is not None else 0.0
        self._clock.advance(at)
        self._due = self._compute_due()
        # the steps that may open on the quiet path: none with step timing (each is recorded)
        self._quiet.allow(self._clock.mode if metrics is None else None)

    def _output_for_step(self) -> StepOutput:
        if self._output is None:
            clock = self._clock
            self._output = self._writer.open_step(
                self.worker, clock.step, clock.step_mode, clock.step_mode_step, self._tb
            )
        return self._output

    def _end_step(self, *, final: bool = False) -> None:
        clock = self._clock
        if not clock.open:
            return
        clock.open = False
        if self._metrics is not None and self._step_started is not None:
            mode = clock.step_mode
            self._metrics.record(
                f"Step:ModeKeys.{mode.name}", self._step_started, time.time(), clock.step_mode_step, mode
            )
        saves = self._saves
        if saves.pending and self._writes:
            saves.write_pending()
        if saves.scalars:
            saves.write_scalars(final)
        if self._output is not None:
            if self._output.close():
                self.last_saved_step = clock.step
            self._output = None
        if self.last_saved_step is not None and (not self._exported or self._dirty):
            self.export_collections()

    def _flush_writes(self) -> None:
        """Wait until every finished step is on disk (the hook stays open): for frameworks
        that leave the hook for long, e.g. XGBoost's ``after_training``."""
        self._writer.flush()

    # --- saving ------------------------------------------------------------------------------
    def save_tensor(
        self, tensor_name: str, tensor_value: Any, collections_to_write: str | Iterable[str] = "default"
    ) -> None:
        """Save a value under ``tensor_name`` into one or more collections (new names allowed):
        copied now, written into the first step (this one included) where one of them is due.

        Raises:
            HookConfigError: empty name or collection names that are not strings.
        """
        self._saves.save_tensor(tensor_name, tensor_value, collections_to_write)

    def save_scalar(self, name: str, value: Any, sm_metric: bool = False, timestamp: float | None = None) -> None:
        """Save a scalar as ``scalar/<name>`` in the current step (always written); ``timestamp``
        (seconds since the epoch) is the event's ``wall_time``; ``sm_metric``: for smdebug compatibility.

        Raises:
            HookConfigError: ``value`` has more than one element, or ``timestamp`` is not a number.
        """
        self._saves.save_scalar(name, value, timestamp)

    def _to_numpy(self, value: Any) -> tuple[np.ndarray, str | None]:
        """Framework adapters override this (PyTorch: bfloat16)."""
        return to_numpy(value)

    def _save_for_tensor(self, name: str, value: Any, private: bool = False) -> None:
        """Save ``value`` if an included collection holding ``name`` is due this step
        (``private``: see :meth:`_write_for`)."""
        due = self._due
        due_colls = [c for c in self._collections_of(name) if c in due]
        if due_colls:
            self._write_for(name, value, due_colls, private)

    def _write_for(self, name: str, value: Any, collections: Sequence[Collection], private: bool = False) -> None:
        """Save ``value`` as ``name`` for ``collections`` (all due) in this step; a
        ``private`` array (one nothing changes any more) is kept as it is, not copied."""
        array, dtype = self._to_numpy(value)
        self._output_for_step().write_tensor(name, array, dtype, collections, private)

    # --- output ------------------------------------------------------------------------------
    def export_collections(self) -> None:
        """Write this worker's collections JSON (done after the first saved step and at close)."""
        if not self._writes:
            return
        num_workers = self.context.world_size if self.save_all_workers else 1
        self._writer.write_collections(self.worker, self.collection_manager.to_json_dict(), num_workers)
        self._exported, self._dirty = True, False

    def close(self) -> None:
        """Write the last step, refresh the collections JSON, close TensorBoard and mark the end.

        ``training_job_end.ts`` is written only outside SageMaker-style jobs
        (``TRAINING_JOB_NAME`` unset), by the chief worker. Called at interpreter exit too.
        """
        if self._closed:
            return
        self._closed = True
        if self._atexit is not None:
            atexit.unregister(self._atexit)
            self._atexit = None
        with self._guard():
            if not self._prepared:
                self._prepare(check=False)  # no step ran: smdebug never checks then
            self._end_step(final=True)
            self._writer.close()
            if self._writes:
                self.export_collections()
                if not self.context.sagemaker_job and self.context.rank == 0:
                    write_training_end(self.out_dir)
        if self._tb is not None:
            self._tb.close()
        if self._metrics is not None:
            self._metrics.close()
        self._writer.release()

    def __getstate__(self) -> dict[str, Any]:
        # torch.save(model) pickles the modules' hooks: the hook itself is never pickled (smdebug)
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # an unpickled hook (inside a loaded model) is inert: it saves nothing and never fails
        self._disabled = self._closed = True
        self._metrics = None
        self._due = NOTHING_DUE
        self._clock = StepClock()

    def _cleanup(self) -> None:
        """smdebug's name for what ``close()`` does (scripts and tests call it)."""
        self.close()

    def _get_worker_name(self) -> str:
        """smdebug's accessor for this process's worker name, e.g. ``worker_0``."""
        return self.worker

    def __repr__(self) -> str:
        return f"<{type(self).__name__} out_dir={self.out_dir!r} step={self.step} mode={self.mode.name}>"
