"""Reading many Keras variables at a step's end in one TensorFlow call.

Reading a variable eagerly costs two op dispatches (read, copy) of tens of microseconds each;
a model's weights plus the optimizer's slots are dozens of variables, read at every saved
step. :class:`VariableReader` traces one function per set of variables that returns all their
values and calls it instead (the values are the variables' at that moment, as an eager read
gives). Variables that are not plain TensorFlow variables (other Keras backends, variables of
a distribution strategy, whose reads depend on the replica context) are read one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tensorflow as tf

__all__ = ["VariableReader"]


def _tf_variable(var: Any) -> tf.Variable | None:
    """The plain ``tf.Variable`` behind a Keras (or TensorFlow) variable, else None."""
    value = getattr(var, "value", var) if not isinstance(var, tf.Variable) else var
    if not isinstance(value, tf.Variable) or isinstance(value, tf.distribute.DistributedValues):
        return None
    return value


class VariableReader:
    """Reads lists of variables, batching plain TensorFlow ones into one traced call."""

    def __init__(self) -> None:
        self._functions: dict[tuple[int, ...], tuple[Callable[[], list[tf.Tensor]], list[Any]] | None] = {}

    def read(self, variables: Sequence[Any]) -> list[Any]:
        """The values of ``variables`` (tensors, or the variables themselves where they are
        read one by one by the caller's conversion)."""
        key = tuple(id(v) for v in variables)
        entry = self._functions.get(key, ...)
        if entry is ...:
            entry = self._functions[key] = self._trace(variables)
        if entry is None:
            return list(variables)
        function, _ = entry
        return function()

    @staticmethod
    def _trace(variables: Sequence[Any]) -> tuple[Callable[[], list[tf.Tensor]], list[Any]] | None:
        plain = [_tf_variable(v) for v in variables]
        if len(variables) < 2 or any(v is None for v in plain):
            return None
        held = list(variables)  # keeps the ids of the key valid while the entry lives
        function = tf.function(lambda: [tf.identity(v) for v in plain], autograph=False)
        return function, held
