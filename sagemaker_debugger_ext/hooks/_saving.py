"""What a training script saves itself: smdebug's ``hook.save_tensor`` and ``hook.save_scalar``.

A mixin of :class:`~._hook.BaseHook`: values are copied when given and written at the step
where one of their collections is due (tensors) or at the end of the current step (scalars;
with ``scalars_wait_for_saved_step``, as smdebug's PyTorch hook: at the end of the next step
due to save something, or at ``close()``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import numpy as np

from .._exceptions import HookConfigError, field_error_message
from ._arrays import float_view
from ._collections import SCALAR_PREFIX, Collection, CollectionKeys, CollectionManager
from ._due import DueCollections
from ._step import StepOutput

__all__ = ["ExplicitSaves"]


class ExplicitSaves:
    """``save_tensor`` / ``save_scalar`` of the hooks (and ``_assign``, which framework adapters use)."""

    #: ``save_scalar`` values wait for the next step due to save something (see the module doc)
    scalars_wait_for_saved_step: ClassVar[bool] = False
    collection_manager: CollectionManager
    _writes: bool
    _schedule: DueCollections
    _output: StepOutput | None
    _step_mode: Any
    _step_mode_step: int
    _output_for_step: Callable[[], StepOutput]  # BaseHook's
    _tensor_colls: dict[str, tuple[Collection, ...]]
    _pending: dict[str, tuple[np.ndarray, str | None, tuple[str, ...]]]
    _scalars: list[tuple[str, np.ndarray, float | None]]
    _dirty: bool
    _prepared: bool
    get_collection: Callable[..., Collection]  # BaseHook's
    _to_numpy: Callable[[Any], tuple[np.ndarray, str | None]]  # BaseHook's (framework adapters override it)

    def _assign(self, tensor_name: str, collection_name: str) -> None:
        """Make ``tensor_name`` an explicit member of ``collection_name``."""
        known = self.collection_manager.find(collection_name) if self._prepared else None
        if known is not None and tensor_name in known.tensor_names:  # per-step calls: the usual answer
            return
        coll = self.get_collection(collection_name)
        if tensor_name not in coll.tensor_names:
            coll.add_tensor_name(tensor_name)
            self._tensor_colls.pop(tensor_name, None)
            self._forget_plans()
            self._dirty = True

    def _forget_plans(self) -> None:
        """Drop what a framework adapter cached about which tensors a step saves."""

    def save_tensor(
        self, tensor_name: str, tensor_value: Any, collections_to_write: str | Iterable[str] = "default"
    ) -> None:
        """Save a value under ``tensor_name`` into one or more collections (new names allowed).

        The value is copied now and written into the first step, this one included, at
        which one of its collections is due.

        Raises:
            HookConfigError: empty name or collection names that are not strings.
        """
        if not isinstance(tensor_name, str) or not tensor_name:
            raise HookConfigError(field_error_message("tensor_name", "a non-empty string", tensor_name))
        targets = (collections_to_write,) if isinstance(collections_to_write, str) else tuple(collections_to_write)
        if not targets or not all(isinstance(t, str) and t for t in targets):
            raise HookConfigError(
                field_error_message("collections_to_write", "a collection name or a list of them", collections_to_write)
            )
        for t in targets:
            self._assign(tensor_name, t)
        array, dtype = self._to_numpy(tensor_value)
        self._pending[tensor_name] = (np.array(array, copy=True), dtype, targets)

    def save_scalar(self, name: str, value: Any, sm_metric: bool = False, timestamp: float | None = None) -> None:
        """Save a scalar as ``scalar/<name>`` in the current step (always written).

        ``timestamp`` (seconds since the epoch) becomes the event's ``wall_time``, as in
        smdebug; ``sm_metric`` is accepted for smdebug compatibility.

        Raises:
            HookConfigError: ``value`` has more than one element, or ``timestamp`` is not a number.
        """
        if timestamp is not None and (isinstance(timestamp, bool) or not isinstance(timestamp, int | float)):
            raise HookConfigError(field_error_message("timestamp", "seconds since the epoch (a number)", timestamp),
                                  field="timestamp", value=timestamp)  # fmt: skip
        array, dtype = self._to_numpy(value)
        array = float_view(array, dtype)
        if array.size != 1:
            raise HookConfigError(field_error_message(name, "a scalar value", value), field=name)
        full = SCALAR_PREFIX + name
        self._scalars.append((full, np.array(array, copy=True).reshape(1), timestamp))
        scalars = self.collection_manager.get(CollectionKeys.SCALARS)
        if full not in scalars.tensor_names:
            scalars.add_tensor_name(full)
            self._dirty = True

    def _write_scalars(self, final: bool) -> None:
        """At a step's end (``final``: the hook's close): write the ``save_scalar`` values
        given since the last write, unless they wait for a step due to save (see the module doc)."""
        if not self._writes:
            self._scalars.clear()
            return
        due = self._output is not None or self._schedule.at(self._step_mode, self._step_mode_step)
        if final or due or not self.scalars_wait_for_saved_step:
            for name, array, timestamp in self._scalars:
                self._output_for_step().write_scalar(name, array, timestamp)
            self._scalars.clear()
