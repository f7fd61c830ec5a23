"""What a training script saves itself: smdebug's ``hook.save_tensor`` and ``hook.save_scalar``.

:class:`ExplicitSaves`, held by every hook: values are copied when given and written at the
step where one of their collections is due (tensors) or at the end of the current step
(scalars; with ``wait_for_saved_step``, as smdebug's PyTorch hook: at the end of the next
step due to save something, or at ``close()``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._exceptions import HookConfigError, field_error_message
from ._arrays import float_view
from ._collections import SCALAR_PREFIX, CollectionKeys

if TYPE_CHECKING:
    from ._hook import BaseHook

__all__ = ["ExplicitSaves"]


class ExplicitSaves:
    """The values ``save_tensor`` / ``save_scalar`` were given and not yet written.

    Attributes:
        pending: tensor name -> (copy, dtype name, target collections), until a target is due.
        scalars: ``(scalar/<name>, copy, timestamp)`` in the order given.
    """

    __slots__ = ("_hook", "_wait_for_saved_step", "pending", "scalars")

    def __init__(self, hook: BaseHook, *, wait_for_saved_step: bool) -> None:
        self._hook = hook
        self._wait_for_saved_step = wait_for_saved_step
        self.pending: dict[str, tuple[np.ndarray, str | None, tuple[str, ...]]] = {}
        self.scalars: list[tuple[str, np.ndarray, float | None]] = []

    def save_tensor(self, tensor_name: str, tensor_value: Any, collections_to_write: str | Iterable[str]) -> None:
        """See ``BaseHook.save_tensor``."""
        if not isinstance(tensor_name, str) or not tensor_name:
            raise HookConfigError(field_error_message("tensor_name", "a non-empty string", tensor_name))
        targets = (collections_to_write,) if isinstance(collections_to_write, str) else tuple(collections_to_write)
        if not targets or not all(isinstance(t, str) and t for t in targets):
            raise HookConfigError(
                field_error_message("collections_to_write", "a collection name or a list of them", collections_to_write)
            )
        hook = self._hook
        for t in targets:
            hook._assign(tensor_name, t)
        array, dtype = hook._to_numpy(tensor_value)
        self.pending[tensor_name] = (np.array(array, copy=True), dtype, targets)

    def save_scalar(self, name: str, value: Any, timestamp: float | None) -> None:
        """See ``BaseHook.save_scalar``."""
        if timestamp is not None and (isinstance(timestamp, bool) or not isinstance(timestamp, int | float)):
            raise HookConfigError(field_error_message("timestamp", "seconds since the epoch (a number)", timestamp),
                                  field="timestamp", value=timestamp)  # fmt: skip
        hook = self._hook
        array, dtype = hook._to_numpy(value)
        array = float_view(array, dtype)
        if array.size != 1:
            raise HookConfigError(field_error_message(name, "a scalar value", value), field=name)
        full = SCALAR_PREFIX + name
        self.scalars.append((full, np.array(array, copy=True).reshape(1), timestamp))
        scalars = hook.collection_manager.get(CollectionKeys.SCALARS)
        if full not in scalars.tensor_names:
            scalars.add_tensor_name(full)
            hook._dirty = True

    def write_pending(self) -> None:
        """At a step's end: write the pending tensors one of whose collections is due now."""
        hook = self._hook
        clock = hook._clock
        mode, step = clock.step_mode, clock.step_mode_step
        for name, (array, dtype, targets) in list(self.pending.items()):
            explicit = [hook.get_collection(t) for t in targets]
            due = [c for c in explicit if c.save_config.should_save_step(mode, step)]  # type: ignore[union-attr]
            due += [c for c in hook._collections_of(name) if c in hook._due and c not in due]
            if due:
                del self.pending[name]
                hook._output_for_step().write_tensor(name, array, dtype, due)

    def write_scalars(self, final: bool) -> None:
        """At a step's end (``final``: the hook's close): write the ``save_scalar`` values
        given since the last write, unless they wait for a step due to save (see the module doc)."""
        hook = self._hook
        if not hook._writes:
            self.scalars.clear()
            return
        clock = hook._clock
        due = hook._output is not None or hook._schedule.at(clock.step_mode, clock.step_mode_step)
        if final or due or not self._wait_for_saved_step:
            for name, array, timestamp in self.scalars:
                hook._output_for_step().write_scalar(name, array, timestamp)
            self.scalars.clear()
