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

__all__ = ["VariableReader", "tf_variable"]


def tf_variable(var: Any) -> tf.Variable | None:
    """The plain ``tf.Variable`` behind a Keras (or TensorFlow) variable, else None."""
    value = getattr(var, "value", var) if not isinstance(var, tf.Variable) else var
    if not isinstance(value, tf.Variable) or isinstance(value, tf.distribute.DistributedValues):
        return None
    return value


class VariableReader:
    """Reads lists of variables, batching plain TensorFlow ones into one traced call."""

    def __init__(self) -> None:
        # per list of variables (by identity): its traced reader, or None to read one by one;
        # the entry keeps the variables alive, so their ids in the key stay theirs
        self._readers: dict[tuple[int, ...], tuple[Callable[[], list[tf.Tensor]] | None, list[Any]]] = {}

    def read(self, variables: Sequence[Any]) -> list[Any]:
        """The values of ``variables``: tensors, or the variables themselves where they are
        read one by one (by the caller's conversion)."""
        key = tuple(id(v) for v in variables)
        entry = self._readers.get(key)
        if entry is None:
            entry = self._readers[key] = (_trace(variables), list(variables))
        function = entry[0]
        return list(variables) if function is None else function()


def _trace(variables: Sequence[Any]) -> Callable[[], list[tf.Tensor]] | None:
    """One traced function returning the values of ``variables``; None when any of them is
    not a plain TensorFlow variable (or there is only one)."""
    plain = [tf_variable(v) for v in variables]
    if len(variables) < 2 or any(v is None for v in plain):
        return None
    return tf.function(lambda: [tf.identity(v) for v in plain], autograph=False)
