"""Where a hook's saved steps go: its claim on the worker's files, its writer thread, its copies.

Nothing is opened when the hook is made: the first write claims the worker in ``out_dir``
(one writer per worker and folder, see ``_claim``) and starts the writer thread. A finished
step's files are written by that thread while the next step trains, until that step holds
its first record in host memory (a copy of a tensor) or ends: it waits for them then (long
written, in practice, unless every step saves), so a killed process loses at most one step,
the one in flight (atomic files: never half of one), and the one before only while its files
are still being written beside a step whose tensors so far were all reduced on their device.
The thread yields the CPU to the training's (its niceness:
``$SAGEMAKER_DEBUGGER_EXT_WRITER_NICE``, default 19).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..format import BackgroundWriter, write_collections_file
from ..format._in_process import register_writer, unregister_writer
from ..modes import ModeKeys
from ._arena import ArenaPool, CopyArena
from ._claim import WorkerClaim, claim_worker
from ._json_config import writer_nice, writer_uncached
from ._outputs import TensorBoardExport
from ._step import StepOutput

__all__ = ["HookWriter"]


class HookWriter:
    """The files of one hook in ``out_dir`` (of its worker: named at each call, since a
    process group initialised after the hook renames it before the first write).

    Args:
        out_dir: the trial folder.
        background: write a step's files on the writer thread (else on the caller's).
        copy_arena: the arena a saved step's copies go into, reused from step to step (see
            ``_arena``); None: plain NumPy copies.
        keep_colon_index: reduction names keep a tensor's ``:0`` (TensorFlow's hooks).

    Raises:
        HookConfigError: a bad ``$SAGEMAKER_DEBUGGER_EXT_WRITER_NICE`` or
            ``$SAGEMAKER_DEBUGGER_EXT_UNCACHED_WRITES`` (read here, before anything starts).
    """

    def __init__(
        self, out_dir: str, *, background: bool, copy_arena: type[CopyArena] | None, keep_colon_index: bool
    ) -> None:
        self.out_dir = out_dir
        #: the writer thread's queue, made at the first write (None before, or without ``background``)
        self.background: BackgroundWriter | None = None
        self.arenas = ArenaPool(reuse=copy_arena is not None, arena=copy_arena or CopyArena)  # see _arena
        self._background = background
        self._nice = writer_nice(os.environ)
        self._uncached = writer_uncached(os.environ)  # large event files skip the page cache
        self._keep_colon_index = keep_colon_index
        self._claim: WorkerClaim | None = None

    def open_step(
        self, worker: str, step: int, mode: ModeKeys, mode_step: int, tensorboard: TensorBoardExport | None
    ) -> StepOutput:
        """The output of a step that saves something (the first one claims the worker and
        starts the thread). The previous step's files are on disk before the step holds any
        record in host memory (:meth:`StepOutput._copies`) and before its own files are
        handed over, so a killed process loses at most the step in flight, plus the previous
        one while its files are written and the step in flight has only reductions computed
        on the device (a reductions-only step's scalars: a millisecond or so).

        Raises:
            HookError: another live process writes this worker in ``out_dir``.
            StorageError: an earlier background write failed.
        """
        background = self.background
        if self._claim is None:
            self._claim = claim_worker(self.out_dir, worker)
            if self._background:  # a reader in this process flushes it (format._in_process)
                self.background = background = BackgroundWriter(max_pending=1, nice=self._nice)
                register_writer(self.out_dir, background)
        return StepOutput(self.out_dir, worker=worker, step=step, mode=mode, mode_step=mode_step,
                          tensorboard=tensorboard, background=background, arenas=self.arenas,
                          uncached=self._uncached, keep_colon_index=self._keep_colon_index)  # fmt: skip

    def flush(self) -> None:
        """Wait until every handed-over step is on disk; raise the first failure."""
        if self.background is not None:
            self.background.flush()

    def write_collections(self, worker: str, document: Mapping[str, Any], num_workers: int) -> None:
        """Write ``worker``'s collections JSON."""
        write_collections_file(self.out_dir, worker, document, num_workers)

    def close(self) -> None:
        """Wait for the last files and stop the writer thread; raise the first failure."""
        background = self.background
        if background is not None:
            background.close()
            unregister_writer(self.out_dir, background)

    def release(self) -> None:
        """Give up the claim on the worker (after :meth:`close`, whether it raised or not)."""
        if self._claim is not None:
            self._claim.release()
