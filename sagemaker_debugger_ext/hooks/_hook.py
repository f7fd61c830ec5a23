"""The framework-independent hook: configuration, steps and modes, what to save, when.

Hot path: a step that saves nothing costs one counter increment and one schedule check
per included collection (``_start_step``); framework adapters attach their per-tensor
callbacks only for steps where something is due.
"""

from __future__ import annotations

import atexit
import os
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np

from .._container_env import TRAINING_END_MARKER, ContainerPaths
from .._exceptions import HookConfigError, field_error_message
from ..format import BackgroundWriter, write_collections_file, write_training_end
from ..format._in_process import register_writer, unregister_writer
from ..modes import ModeKeys
from ._arena import ArenaPool
from ._arrays import to_numpy
from ._claim import WorkerClaim, claim_worker
from ._collections import (
    NAMED_ONLY_COLLECTIONS,
    PYTORCH_BUILTIN_REGEXES,
    Collection,
    CollectionKeys,
    CollectionManager,
)
from ._context import TrainingContext
from ._due import NOTHING_DUE, DueCollections
from ._guard import NeverCrashGuard
from ._json_config import load_hook_settings, writer_nice, writer_uncached
from ._outputs import FrameworkMetrics, TensorBoardExport
from ._quiet import QuietSteps
from ._reduction_config import ReductionConfig
from ._save_config import SaveConfig, SaveConfigMode
from ._saving import ExplicitSaves
from ._step import StepOutput

__all__ = ["BaseHook"]


def _close_at_exit(ref: weakref.ReferenceType[BaseHook]) -> None:
    hook = ref()
    if hook is not None:
        hook.close()


class BaseHook(QuietSteps, ExplicitSaves, NeverCrashGuard):
    """Shared machinery of the generic, PyTorch and XGBoost hooks (smdebug's ``BaseHook``)."""

    builtin_collections: ClassVar[Mapping[str, list[str]]] = PYTORCH_BUILTIN_REGEXES
    default_include_collections: ClassVar[tuple[str, ...]] = (CollectionKeys.LOSSES,)
    default_save_values: ClassVar[Mapping[str, Any]] = {}
    #: copy saved tensors into one buffer reused from step to step (see ``_arena``: measured per framework)
    reuse_copy_buffer: ClassVar[bool] = False
    #: reduction names keep a tensor's ``:0`` (smdebug: TensorFlow's hooks do, the others drop it)
    reductions_keep_colon_index: ClassVar[bool] = False

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
        *,
        never_crash: bool = False,
        context: TrainingContext | None = None,
        background_writes: bool = True,
    ) -> None:
        self.context = context or TrainingContext.from_environ(os.environ)
        self.out_dir = str(out_dir) if out_dir is not None else str(ContainerPaths().tensors_dir)
        if "://" in self.out_dir:
            msg = field_error_message("out_dir", "a local folder (the platform uploads it)", self.out_dir)
            raise HookConfigError(msg, field="out_dir", value=self.out_dir)
        if (Path(self.out_dir) / TRAINING_END_MARKER).exists():
            msg = field_error_message(
                "out_dir", f"a folder without {TRAINING_END_MARKER} (it holds a finished run)", self.out_dir
            )
            raise HookConfigError(msg, field="out_dir", value=self.out_dir)
        self.tensorboard_dir = TensorBoardExport.resolve_dir(self.out_dir, export_tensorboard, tensorboard_dir)
        if include_workers not in ("one", "all"):
            raise HookConfigError(
                field_error_message("include_workers", "'one' or 'all'", include_workers),
                field="include_workers",
                value=include_workers,
            )
        self.dry_run = bool(dry_run)
        self.save_all_workers = include_workers == "all"
        self.worker = self.context.worker
        self._writes = not self.dry_run and (self.save_all_workers or self.context.rank == 0)
        self.save_config = (
            SaveConfig.parse(save_config) if save_config is not None else SaveConfig(**self.default_save_values)
        )
        if reduction_config is not None and not isinstance(reduction_config, ReductionConfig):
            raise HookConfigError(
                field_error_message("reduction_config", "a ReductionConfig", reduction_config),
                field="reduction_config",
            )
        self.reduction_config = reduction_config or ReductionConfig(save_raw_tensor=True)
        self.collection_manager = CollectionManager(dict(self.builtin_collections))
        self.save_all = bool(save_all)
        self.include_collections = self.collection_manager.included_names(
            self.default_include_collections, include_collections, include_regex, self.save_all
        )
        self.never_crash = bool(never_crash)
        self.step = -1
        self.mode = ModeKeys.GLOBAL
        self.mode_steps: dict[ModeKeys, int] = dict.fromkeys(ModeKeys, -1)
        self.last_saved_step: int | None = None
        self._prepared = False
        self._disabled = False
        self._closed = False
        self._to_save: list[Collection] = []
        self._schedule = DueCollections(())
        self._due: frozenset[Collection] = NOTHING_DUE
        self._tensor_colls: dict[str, tuple[Collection, ...]] = {}
        self._pending: dict[str, tuple[np.ndarray, str | None, tuple[str, ...]]] = {}
        self._scalars: list[tuple[str, np.ndarray, float | None]] = []
        self._output: StepOutput | None = None
        self._exported = False
        self._dirty = False
        self._tb = TensorBoardExport(self.tensorboard_dir) if self.tensorboard_dir and self._writes else None
        self._metrics = FrameworkMetrics.create(self.context)
        self._step_started: float | None = None
        self._step_open = False
        self._step_mode, self._step_mode_step = self.mode, -1
        self._quiet_mode: ModeKeys | None = None  # see QuietSteps
        self._quiet_below: float = -1
        self._atexit: Any = None
        # A finished step's files are written by one thread while the next step trains, until
        # that step saves its first tensor: it waits for them then (long written, in practice,
        # unless every step saves), so a killed process loses at most one step, the one in
        # flight (atomic files: never half of one). The thread yields the CPU to the training's
        # (its niceness: $SAGEMAKER_DEBUGGER_EXT_WRITER_NICE, default 19).
        self._background = BackgroundWriter(max_pending=1, nice=writer_nice(os.environ)) if background_writes else None
        self._uncached = writer_uncached(os.environ)  # large event files skip the page cache
        self._arenas = ArenaPool(reuse=self.reuse_copy_buffer)  # the saved steps' copies (see _arena)

    # --- construction from SageMaker's JSON --------------------------------------------
    @classmethod
    def create_from_json_file(cls, json_file_path: str | os.PathLike[str] | None = None) -> Self:
        """Build a hook from ``debughookconfig.json`` as SageMaker passes it.

        Args:
            json_file_path: the file; default ``$SMDEBUG_CONFIG_FILE_PATH``, else
                ``/opt/ml/input/config/debughookconfig.json``.

        Raises:
            FileNotFoundError: no config file (as smdebug).
            HookConfigError: a bad value, naming its key.
        """
        settings = load_hook_settings(json_file_path, os.environ, default_save_values=cls.default_save_values)
        hook = cls(**settings.hook_kwargs(), never_crash=settings.never_crash)
        settings.apply_to(hook.collection_manager)
        return hook

    # --- collections ---------------------------------------------------------------------
    def get_collection(self, name: str, create: bool = True) -> Collection:
        """The collection ``name`` (created when missing)."""
        coll = self.collection_manager.get(name, create=create)
        if self._prepared:
            self._complete(coll)
        return coll

    def get_collections(self) -> dict[str, Collection]:
        """Every collection by name."""
        return self.collection_manager.collections()

    def add_collection(self, collection: Collection) -> None:
        """Add (or replace) a collection."""
        self.collection_manager.add(collection)
        if self._prepared:
            self._complete(collection)

    def _complete(self, coll: Collection) -> None:
        coll.complete(self.save_config, self.reduction_config)

    def _prepare(self, *, check: bool = True) -> None:
        """Fix the collections to save; ``check`` refuses one with nothing to match, as
        smdebug does when saving starts (a hook closed before any step checks nothing)."""
        cm = self.collection_manager
        if check:
            cm.check_configured()
        every = CollectionKeys.ALL in self.include_collections
        self._to_save = [
            c for c in cm if c.name in self.include_collections or (every and c.name not in NAMED_ONLY_COLLECTIONS)
        ]
        for coll in cm:
            self._complete(coll)
        self._schedule = DueCollections(self._to_save)
        self._prepared = True

    def _collections_of(self, name: str) -> tuple[Collection, ...]:
        colls = self._tensor_colls.get(name)
        if colls is None:
            colls = tuple(c for c in self._to_save if c.matches(name))
            for c in colls:
                if name not in c.tensor_names:
                    c.add_tensor_name(name)
                    self._dirty = True
            self._tensor_colls[name] = colls
        return colls

    # --- steps and modes ---------------------------------------------------------------------
    def set_mode(self, mode: ModeKeys) -> None:
        """Switch to ``mode``; each mode keeps its own step count.

        Raises:
            HookConfigError: ``mode`` is not a :class:`ModeKeys` member.
        """
        if mode is self.mode:  # every step of a framework loop sets it again: keep that cheap
            return
        if mode not in ModeKeys.__members__.values():
            msg = field_error_message("mode", "one of modes.TRAIN, EVAL, PREDICT, GLOBAL", mode)
            raise HookConfigError(msg, field="mode", value=mode)
        self.mode = ModeKeys(mode)
        self._quiet_mode = None
        if self._prepared and self.step >= 0:
            self._due = self._compute_due()

    def _compute_due(self) -> frozenset[Collection]:
        return self._schedule.at(self.mode, self.mode_steps[self.mode]) if self._writes else NOTHING_DUE

    def _start_step(self, at: int | None = None) -> None:
        """Close the running step and open the next one (smdebug's ``_increment_step``).

        ``at`` sets the global and mode step instead of incrementing (XGBoost's iteration).
        """
        if not self._prepared:
            self._prepare()
            self._atexit = atexit.register(_close_at_exit, weakref.ref(self))
        self._end_step()
        now = time.time() if self._metrics is not None else 0.0
        if at is None:
            self.step += 1
            self.mode_steps[self.mode] += 1
        else:
            self.step = self.mode_steps[self.mode] = at
        if self.mode != ModeKeys.GLOBAL:
            self.mode_steps[ModeKeys.GLOBAL] = self.step
        self._due = self._compute_due()
        self._step_mode, self._step_mode_step = self.mode, self.mode_steps[self.mode]
        self._step_started = now
        self._step_open = True
        # the steps that may open on the quiet path: none with step timing (each is recorded)
        self._quiet_mode = self.mode if self._metrics is None else None
        self._quiet_below = -1  # the next due step: worked out by _quiet_step, when asked

    _claim: WorkerClaim | None = None  # one writer per (out_dir, worker), taken at the first write

    def _output_for_step(self) -> StepOutput:
        if self._output is None:
            # The previous step's files are on disk before this step holds anything: a killed
            # process loses at most the step in flight (the one being written, or this one).
            if self._background is not None:
                self._background.wait_idle()
            if self._claim is None:
                self._claim = claim_worker(self.out_dir, self.worker)
                if self._background is not None:  # a reader in this process flushes it (format._in_process)
                    register_writer(self.out_dir, self._background)
            self._output = StepOutput(self.out_dir, worker=self.worker, step=self.step, mode=self._step_mode,
                                      mode_step=self._step_mode_step, tensorboard=self._tb,
                                      background=self._background, arenas=self._arenas,
                                      uncached=self._uncached,
                                      keep_colon_index=self.reductions_keep_colon_index)  # fmt: skip
        return self._output

    def _end_step(self, *, final: bool = False) -> None:
        if not self._step_open:
            return
        self._step_open = False
        if self._metrics is not None and self._step_started is not None:
            mode = self._step_mode
            self._metrics.record(
                f"Step:ModeKeys.{mode.name}", self._step_started, time.time(), self._step_mode_step, mode
            )
        if self._pending and self._writes:
            self._flush_pending()
        if self._scalars:
            self._write_scalars(final)
        if self._output is not None:
            if self._output.close():
                self.last_saved_step = self.step
            self._output = None
        if self.last_saved_step is not None and (not self._exported or self._dirty):
            self.export_collections()

    def _flush_pending(self) -> None:
        if not self._pending:
            return
        mode, step = self._step_mode, self._step_mode_step
        for name, (array, dtype, targets) in list(self._pending.items()):
            explicit = [self.get_collection(t) for t in targets]
            due = [c for c in explicit if c.save_config.should_save_step(mode, step)]  # type: ignore[union-attr]
            due += [c for c in self._collections_of(name) if c in self._due and c not in due]
            if due:
                del self._pending[name]
                self._output_for_step().write_tensor(name, array, dtype, due)

    def _flush_writes(self) -> None:
        """Wait until every finished step is on disk (the hook stays open): for frameworks
        that leave the hook for long, e.g. XGBoost's ``after_training``."""
        if self._background is not None:
            self._background.flush()

    # --- saving ------------------------------------------------------------------------------
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
        write_collections_file(self.out_dir, self.worker, self.collection_manager.to_json_dict(), num_workers)
        self._exported = True
        self._dirty = False

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
            if self._background is not None:
                self._background.close()
                unregister_writer(self.out_dir, self._background)
            if self._writes:
                self.export_collections()
                if not self.context.sagemaker_job and self.context.rank == 0:
                    write_training_end(self.out_dir)
        if self._tb is not None:
            self._tb.close()
        if self._metrics is not None:
            self._metrics.close()
        if self._claim is not None:
            self._claim.release()

    def __getstate__(self) -> dict[str, Any]:
        # torch.save(model) pickles the modules' hooks: the hook itself is never pickled (smdebug)
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # an unpickled hook (inside a loaded model) is inert: it saves nothing and never fails
        self._disabled = self._closed = True
        self._metrics = None
        self._due = NOTHING_DUE

    def _cleanup(self) -> None:
        """smdebug's name for what ``close()`` does (scripts and tests call it)."""
        self.close()

    def _get_worker_name(self) -> str:
        """smdebug's accessor for this process's worker name, e.g. ``worker_0``."""
        return self.worker

    def __repr__(self) -> str:
        return f"<{type(self).__name__} out_dir={self.out_dir!r} step={self.step} mode={self.mode.name}>"
