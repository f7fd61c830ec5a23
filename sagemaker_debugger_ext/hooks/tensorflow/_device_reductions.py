"""Reductions of the values a Keras step hands over, computed with TensorFlow inside the step.

When every collection a tapped value (a gradient, a layer's input or output, a weight read at
the step's end) can be saved into asks for reductions only (``device_plan``) and no
TensorBoard histogram is written, the tapped step function does not hand the tensor to the
host: it reduces it where it lives (CPU or GPU) with TensorFlow ops traced into the step, the
values of one set of reductions stacked into one float64 ``(tensors, reductions)`` tensor, and
only those scalars cross to the host in the step's one ``tf.numpy_function``. Which values are
reduced is decided when the step is traced, from the collections configured then.

Values are those of the NumPy path (``sagemaker_debugger_ext._reductions``): float64
accumulators for sums, means, norms, products and variances (population); min and max exact
(NaN when the tensor holds one); bfloat16 tensors reduced from their values and stored as
float32, float16 ones stored as float16, float32 and float64 in their own dtype (beyond the
stored dtype's range: inf, as there). Sums are taken in another order than NumPy's: a stored
float64 value may differ from the NumPy path's in its last bits. A result below the stored
dtype's normal range (a product of many small gradients) is 0 here: TensorFlow runs the
step's ops, and the hand-over, with subnormal numbers flushed to zero. Tensors whose size is not
known when the step is traced (a batch dimension), empty ones and non-float ones take the
NumPy path.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from .._device_plan import Ops, derivation, device_plan
from ._graph import plain_tensor

__all__ = ["ReducedGroup", "reduce_tensors", "save_reduced", "split_for_device", "stored_dtype"]

_LOG = logging.getLogger("sagemaker_debugger_ext.hooks")
_F64 = tf.float64
_STORED: dict[tf.dtypes.DType, np.dtype[Any]] = {
    tf.float32: np.dtype(np.float32),
    tf.float64: np.dtype(np.float64),
    tf.float16: np.dtype(np.float16),
    tf.bfloat16: np.dtype(np.float32),  # the NumPy path reduces bf16 values as float32
}

#: one handed-over value: ``(name, collection, caught, tensor)`` (see ``TapsMixin._tap_save``)
Entry = tuple[str, str | None, bool, Any]
#: reduced values of one set of ops: ``(ops, [(name, collection, caught, shape, stored dtype)], (n, k) float64 tensor)``
ReducedGroup = tuple[Ops, list[tuple[str, str | None, bool, tuple[int, ...], np.dtype[Any]]], tf.Tensor]


def stored_dtype(tensor: tf.Tensor) -> np.dtype[Any] | None:
    """The dtype the reductions of ``tensor`` are stored in, or None when it takes the NumPy
    path (not a float tensor, size unknown at tracing, or empty)."""
    dtype = _STORED.get(tensor.dtype)
    shape = tensor.shape
    if dtype is None or not shape.is_fully_defined() or not shape.num_elements():
        return None
    return dtype


def _reduce_one(tensor: tf.Tensor, ops: Ops) -> tf.Tensor:
    x = tf.reshape(tf.cast(tensor, _F64), [-1])
    size = tf.cast(tf.size(x), _F64)
    cache: dict[str, tf.Tensor] = {}

    def quantity(name: str) -> tf.Tensor:
        if name in cache:
            return cache[name]
        base, is_abs = name.removeprefix("abs_"), name.startswith("abs_")
        values = quantity("abs") if is_abs and base != "abs" else x
        if name == "abs":
            value = tf.abs(x)
        elif base in ("min", "max"):
            extreme = tf.reduce_min(values) if base == "min" else tf.reduce_max(values)
            value = tf.where(tf.reduce_any(tf.math.is_nan(values)), tf.constant(np.nan, _F64), extreme)
        elif base == "sum":
            value = tf.reduce_sum(values)
        elif base == "prod":
            value = tf.reduce_prod(values)
        elif base == "variance":
            value = tf.math.reduce_variance(values)
        else:  # "l2": the square root of the float64 sum of squares
            value = tf.sqrt(tf.reduce_sum(tf.square(values)))
        cache[name] = value
        return value

    columns = []
    for how, name in (derivation(op, is_abs) for op, is_abs in ops):
        value = quantity(name)
        columns.append(value / size if how == "mean" else tf.sqrt(value) if how == "sqrt" else value)
    return tf.stack(columns)


def reduce_tensors(tensors: Sequence[tf.Tensor], ops: Ops) -> tf.Tensor:
    """The reductions ``ops`` (``(op, abs)``) of each of ``tensors`` (non-empty floats) as a
    ``(len(tensors), len(ops))`` float64 tensor, computed where the tensors are."""
    return tf.stack([_reduce_one(t, ops) for t in tensors])


def split_for_device(hook: Any, entries: Sequence[Entry]) -> tuple[list[Entry], list[ReducedGroup]]:
    """At tracing: the ``entries`` handed over as tensors, and the groups reduced in the graph."""
    if getattr(hook, "_tb", None) is not None:  # TensorBoard histograms need the values
        return list(entries), []
    from ._taps import _CAUGHT_INTO

    raw: list[Entry] = []
    groups: dict[Ops, list[tuple[tuple[str, str | None, bool, tuple[int, ...], np.dtype[Any]], tf.Tensor]]] = {}
    for entry in entries:
        name, collection, caught, value = entry
        colls = [c for c in hook._to_save if c.name == collection or c.matches(name)]
        if caught:
            colls = [c for c in colls if c.name in _CAUGHT_INTO]
        plan = device_plan(colls) if colls else None
        tensor = plain_tensor(value) if plan is not None else None
        dtype = stored_dtype(tensor) if tensor is not None else None
        if plan is None or tensor is None or dtype is None:
            raw.append(entry)
            continue
        shape = tuple(int(d) for d in tensor.shape)
        groups.setdefault(plan[0], []).append(((name, collection, caught, shape, dtype), tensor))
    reduced: list[ReducedGroup] = [
        (ops, [meta for meta, _ in items], reduce_tensors([t for _, t in items], ops)) for ops, items in groups.items()
    ]
    return raw, reduced


def save_reduced(
    hook: Any,
    name: str,
    collection: str | None,
    caught: bool,
    computed: Ops,
    row: np.ndarray,
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
) -> None:
    """At run time: store the reductions of ``name`` computed in the step (``row``, in the
    order of ``computed``) for its due collections, as ``_tap_save`` stores a value."""
    hook._tap_once(name, collection, _write_reduced, hook, name, caught, computed, row, shape, dtype)


def _write_reduced(
    hook: Any, name: str, caught: bool, computed: Ops, row: np.ndarray, shape: tuple[int, ...], dtype: np.dtype[Any]
) -> None:
    due = hook._due
    colls = hook._caught_collections(name) if caught else [c for c in hook._collections_of(name) if c in due]
    if not colls:
        return
    plan = device_plan(colls)
    if plan is None or any(key not in computed for key in plan[0]):
        _LOG.warning("%s: its collections changed after the step was traced; its reductions are not saved", name)
        return
    ops, save_shape = plan
    record = hook._output_for_step().write_reductions(name, ops, shape if save_shape else None)
    with np.errstate(over="ignore"):
        record.values = np.array([row[computed.index(key)] for key in ops]).astype(dtype)
