"""Getting values out of traced TensorFlow code (``tf.function``, Keras' train step).

Inside a traced function tensors have no value yet. ``call_at_runtime`` puts a
``tf.numpy_function`` into the graph that hands the values to the hook when the graph runs;
with ``when`` (a boolean variable the hook sets per step) the call sits in a ``tf.cond`` and
costs one branch on steps that save nothing. XLA-compiled functions cannot hold such calls:
compile Keras models with ``jit_compile=False`` to capture gradients and layers there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

__all__ = ["call_at_runtime", "in_graph", "plain_tensor"]


def in_graph() -> bool:
    """Whether the code runs while a ``tf.function`` is traced (values not yet known)."""
    return not tf.executing_eagerly()


def plain_tensor(value: Any) -> tf.Tensor:
    """A dense tensor the hook can store (IndexedSlices densified, bfloat16 as float32)."""
    if isinstance(value, tf.IndexedSlices):
        value = tf.convert_to_tensor(value)
    value = tf.convert_to_tensor(value)
    if value.dtype == tf.bfloat16:
        value = tf.cast(value, tf.float32)
    return value


def call_at_runtime(fn: Callable[..., None], tensors: Sequence[Any], when: tf.Variable | None = None) -> tf.Tensor:
    """Call ``fn(*arrays)`` with the tensors' values each time the traced graph runs.

    Returns a token. The call runs whenever the traced function runs (it is stateful, and
    ``tf.function`` runs every stateful op before returning); depend on the token only to
    order other work after it.
    """
    inputs = [plain_tensor(t) for t in tensors]

    def callback(*arrays: np.ndarray) -> np.int32:
        fn(*arrays)
        return np.int32(0)

    def run() -> tf.Tensor:
        return tf.numpy_function(callback, inputs, tf.int32, stateful=True)

    if when is None:
        return run()
    return tf.cond(tf.convert_to_tensor(when), run, lambda: tf.constant(0, tf.int32))
