"""Custom training loops: ``with hook.wrap_tape(tf.GradientTape()) as tape:``.

Each ``with`` block is one TRAIN step. ``tape.gradient(loss, variables)`` saves the
gradients (``gradients/<var>Grad``), the variables as they were (``weights/<var>:0``) and a
scalar target as ``loss``, smdebug's names. Inside ``tf.function`` the step starts and the
values are handed over when the graph runs (graph order is program order for these calls).
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np
import tensorflow as tf

from ..._exceptions import HookError, field_error_message
from ...modes import ModeKeys
from .._collections import CollectionKeys
from ._graph import call_at_runtime, in_graph
from ._naming import gradient_name, tape_weight_name

__all__ = ["TapeMixin", "WrappedTape"]


class WrappedTape:
    """A ``tf.GradientTape`` whose block is a step and whose ``gradient`` saves what it computes.

    Every other attribute is the tape's own.
    """

    def __init__(self, hook: TapeMixin, tape: tf.GradientTape) -> None:
        self._hook = hook
        self._tape = tape

    def __enter__(self) -> Self:
        self._hook._tape_begin()
        self._tape.__enter__()
        return self

    def __exit__(self, *exc: object) -> Any:
        return self._tape.__exit__(*exc)

    def gradient(self, target: Any, sources: Any, *args: Any, **kwargs: Any) -> Any:
        """``tape.gradient``; the gradients, variables and a scalar target are saved."""
        grads = self._tape.gradient(target, sources, *args, **kwargs)
        self._hook._tape_gradients(target, sources, grads)
        return grads

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tape, name)


class TapeMixin:
    """The KerasHook's GradientTape support (needs the BaseHook step API and ``_tap_save``)."""

    mode: ModeKeys
    _tape_steps: int

    def _init_tape(self) -> None:
        self._tape_steps = 0

    def wrap_tape(self, tape: tf.GradientTape) -> WrappedTape:
        """Wrap a ``tf.GradientTape``: each ``with`` block is a TRAIN step; ``gradient``
        saves gradients, variables and the loss.

        Raises:
            HookError: ``tape`` is not a ``tf.GradientTape``.
        """
        if isinstance(tape, WrappedTape):
            return tape
        if not isinstance(tape, tf.GradientTape):
            raise HookError(field_error_message("tape", "a tf.GradientTape", type(tape).__name__))
        self.set_mode(ModeKeys.TRAIN)  # type: ignore[attr-defined]
        return WrappedTape(self, tape)

    def _tape_begin(self) -> None:
        if not in_graph():
            self._tape_step()
            return
        hook: Any = self
        if hook._registered is None:
            call_at_runtime(lambda: self._tape_step(), [])
            return

        def begin() -> np.bool_:
            self._tape_step()
            return np.bool_(hook._flag_value)

        # a registered model's layer taps read the flag: assigned from the step's start in the
        # graph, so TensorFlow orders their reads after it (same resource, program order)
        hook._taps_flag().assign(tf.numpy_function(begin, [], tf.bool, stateful=True), read_value=False)

    def _tape_step(self) -> None:
        hook: Any = self
        if hook._disabled or hook._closed:
            return
        with hook._guard():
            if hook.mode != ModeKeys.TRAIN:
                hook.set_mode(ModeKeys.TRAIN)
            hook._start_step()
            hook._tapped.clear()
            hook._set_taps(bool(hook._due))  # a registered model's taps in a tf.function
            self._tape_steps += 1

    def _tape_gradients(self, target: Any, sources: Any, grads: Any) -> None:
        pairs = [(g, v) for g, v in zip(tf.nest.flatten(grads), tf.nest.flatten(sources), strict=False)
                 if g is not None and (isinstance(v, tf.Variable) or hasattr(v, "path"))]  # fmt: skip
        names = [gradient_name(v) for _, v in pairs]
        colls: list[str | None] = [CollectionKeys.GRADIENTS] * len(pairs)
        values: list[Any] = [g for g, _ in pairs]
        names += [tape_weight_name(v) for _, v in pairs]
        colls += [None] * len(pairs)  # weights or biases: by the built-in regexes
        values += [tf.convert_to_tensor(v) for _, v in pairs]
        if tf.is_tensor(target) and target.shape.rank == 0:
            names.append("loss")
            colls.append(CollectionKeys.LOSSES)
            values.append(target)
        hook: Any = self
        # the optimizer's variables as fit saves them (a wrapped optimizer's, or the registered
        # model's), read here as smdebug's tape did: before this step's update
        optimizer_variables = hook._optimizer_variables(hook._registered or hook.model)
        names += [name for name, _ in optimizer_variables]
        colls += [None] * len(optimizer_variables)  # listed in optimizer_variables by _optimizer_variables
        values += [tf.convert_to_tensor(var) for _, var in optimizer_variables]
        if in_graph():

            def deliver(*arrays: Any) -> None:
                for name, coll, array in zip(names, colls, arrays, strict=True):
                    hook._tap_save(name, array, coll)

            call_at_runtime(deliver, values)
        else:
            for name, coll, value in zip(names, colls, values, strict=True):
                hook._tap_save(name, value, coll)

    def _close_tape(self) -> None:
        """Nothing is patched on TensorFlow's classes; kept for symmetry with close()."""
