"""smdebug's ``FileWriter`` (``smdebug.core.writer``, re-exported there): one step's tensors as an event file.

A front over :class:`~sagemaker_debugger_ext.format.StepWriter` (trial event and
index files) and :class:`~sagemaker_debugger_ext.format.TensorBoardWriter`
(``wtype="tensorboard"``), with smdebug's constructor and method names::

    with FileWriter(trial_dir="run", step=3, worker="worker_0") as fw:
        fw.write_tensor(tdata=np.ones(4), tname="foo", mode=ModeKeys.TRAIN, mode_step=1)

Files appear on :meth:`close` (the event file first, then its index).
"""

from __future__ import annotations

import os
from typing import Any, Self

import numpy as np

from .._exceptions import ConfigValueError, field_error_message
from ..exceptions import SMDebugRuntimeError
from ..modes import ModeKeys
from ._layout import event_key
from ._tensorboard import TensorBoardWriter
from ._writer import StepWriter

__all__ = ["FileWriter"]

_WTYPES = ("events", "tensorboard")


def _check_mode(mode: Any) -> ModeKeys:
    if mode is None:
        return ModeKeys.GLOBAL
    if not isinstance(mode, ModeKeys):
        msg = field_error_message("mode", "one of ModeKeys.TRAIN, EVAL, PREDICT, GLOBAL", mode)
        raise ConfigValueError(msg, field="mode", value=mode)
    return mode


class FileWriter:
    """smdebug's ``FileWriter``: the tensors of one (step, worker) of a trial.

    Args:
        trial_dir: the trial folder (local; ``file://`` allowed).
        worker: the worker name, e.g. ``worker_0``.
        step: the global step.
        wtype: ``"events"`` (a trial's event + index files) or ``"tensorboard"``
            (TensorBoard scalars/histograms under ``trial_dir/<MODE>/``).
        mode: the mode of a TensorBoard writer.
        max_queue, flush_secs, verbose, write_checksum: accepted for compatibility.

    Raises:
        ConfigValueError: an unknown ``wtype``, a remote ``trial_dir`` or a bad mode.
    """

    def __init__(
        self,
        trial_dir: str | os.PathLike[str],
        worker: str,
        step: int = 0,
        wtype: str = "events",
        mode: ModeKeys = ModeKeys.GLOBAL,
        max_queue: int = 10,
        flush_secs: float = 120,
        verbose: bool = False,
        write_checksum: bool = False,
    ) -> None:
        if wtype not in _WTYPES:
            raise ConfigValueError(
                field_error_message("wtype", f"one of {list(_WTYPES)}", wtype), field="wtype", value=wtype
            )
        trial_dir = os.fspath(trial_dir)
        trial_dir = trial_dir.removeprefix("file://")
        if "://" in trial_dir:
            msg = field_error_message("trial_dir", "a local folder (write locally, then upload)", trial_dir)
            raise ConfigValueError(msg, field="trial_dir", value=trial_dir)
        self.trial_dir = trial_dir
        self.worker = worker
        self.step = step
        self.wtype = wtype
        self.mode = _check_mode(mode)
        self._steps: StepWriter | None = None
        self._tb: TensorBoardWriter | None = None
        self._written = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _step_writer(self, mode: ModeKeys, mode_step: int, timestamp: float | None) -> StepWriter:
        if self.wtype != "events":
            msg = field_error_message("wtype", "'events' to write tensors", self.wtype)
            raise ConfigValueError(msg, field="wtype", value=self.wtype)
        if self._steps is None:
            kwargs: dict[str, Any] = {} if timestamp is None else {"clock": lambda: float(timestamp)}
            self._steps = StepWriter(self.trial_dir, global_step=self.step, worker=self.worker, mode=mode,
                                     mode_step=mode_step, **kwargs)  # fmt: skip
            self._mode_of_step = (mode, mode_step)
        elif self._mode_of_step != (mode, mode_step):
            msg = field_error_message(
                "mode/mode_step", f"the same for every tensor of one FileWriter {self._mode_of_step}", (mode, mode_step)
            )
            raise ConfigValueError(msg, field="mode", value=mode)
        return self._steps

    def write_tensor(
        self,
        tdata: Any,
        tname: str,
        write_index: bool = True,
        mode: ModeKeys | None = ModeKeys.GLOBAL,
        mode_step: int | None = None,
        timestamp: float | None = None,
    ) -> None:
        """Add tensor ``tname`` (any array-like; strings too) to the step."""
        mode = _check_mode(mode)
        writer = self._step_writer(mode, self.step if mode_step is None else int(mode_step), timestamp)
        value = tdata.numpy() if callable(getattr(tdata, "numpy", None)) else tdata
        writer.write_tensor(tname, value)
        self._written = True

    def write_shape(
        self, name: str, shape: tuple[int, ...], mode: ModeKeys = ModeKeys.GLOBAL, mode_step: int | None = None,
        original_name: str | None = None,
    ) -> None:  # fmt: skip
        """Record only the shape of ``name`` in the step's index."""
        mode = _check_mode(mode)
        writer = self._step_writer(mode, self.step if mode_step is None else int(mode_step), None)
        writer.write_shape(name, tuple(shape), original_name=original_name)

    def _tensorboard(self) -> TensorBoardWriter:
        if self.wtype != "tensorboard":
            msg = field_error_message("wtype", "'tensorboard' to write summaries", self.wtype)
            raise ConfigValueError(msg, field="wtype", value=self.wtype)
        if self._tb is None:
            self._tb = TensorBoardWriter(self.trial_dir, mode_name=self.mode.name)
        return self._tb

    def write_scalar_summary(self, name: str, value: Any, global_step: int, timestamp: float | None = None) -> None:
        """A TensorBoard scalar (``wtype="tensorboard"``)."""
        self._tensorboard().add_scalar(name, value, global_step)
        self._written = True

    def write_histogram_summary(self, tdata: Any, tname: str, global_step: int, bins: str = "default") -> None:
        """A TensorBoard histogram over TensorFlow's default buckets (``wtype="tensorboard"``)."""
        if bins != "default":
            raise ConfigValueError(field_error_message("bins", "'default'", bins), field="bins", value=bins)
        self._tensorboard().add_histogram(tname, np.asarray(tdata), global_step)
        self._written = True

    def name(self) -> str:
        """The path of the event file (written at :meth:`close`).

        Raises:
            SMDebugRuntimeError: nothing was written yet (as in smdebug).
        """
        if self._steps is None:
            msg = "no tensor written yet: the event file is created with the first tensor"
            raise SMDebugRuntimeError(msg)
        return os.path.join(self.trial_dir, event_key(self.step, self.worker))

    def flush(self) -> None:
        """Write TensorBoard records so far (event files are written at close)."""
        if self._tb is not None:
            self._tb.flush()

    def close(self) -> None:
        """Write the event file, then its index file."""
        if self._steps is not None:
            self._steps.close()
        if self._tb is not None:
            self._tb.close()
