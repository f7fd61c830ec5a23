"""The reductions smdebug stores instead of (or beside) a raw tensor — one implementation.

The hook computes them before writing and the reader computes them from a raw value, so
both use this module and always agree. Norms are taken on the *flattened* tensor (``l1`` =
sum of absolute values, ``l2`` = Euclidean/Frobenius norm, as ``torch.norm`` gives);
smdebug 1.0.34's reader used matrix norms for 2-D values, a deliberate difference.

Edge data (smdebug raised numpy's errors for both):

- a zero-length tensor: ``sum`` is 0, ``prod`` 1, ``l1`` and ``l2`` 0 (the empty sum and
  product); ``min``, ``max``, ``mean``, ``std`` and ``variance`` have no value and are NaN
  (of the tensor's float dtype, float64 for integer tensors). The hook stores the same.
- a string (or other non-numeric) tensor: no reduction applies;
  :class:`ReductionNotApplicableError` (a ``ValueError``) from the reader, and the hook
  stores no reduction for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._exceptions import ConfigValueError, ReductionNotApplicableError, field_error_message

__all__ = [
    "ALLOWED_NORMS",
    "ALLOWED_REDUCTIONS",
    "BATCHED_REDUCTIONS",
    "compute_reduction",
    "compute_reductions",
    "compute_reductions_many",
    "reductions_apply",
]

#: reductions without a value for a zero-length tensor (NaN); the others are 0 or 1
_UNDEFINED_WHEN_EMPTY = frozenset({"min", "max", "mean", "std", "variance"})

ALLOWED_REDUCTIONS = ("min", "max", "mean", "std", "variance", "sum", "prod")
ALLOWED_NORMS = ("l1", "l2")


def _sq_sum(flat: np.ndarray) -> Any:
    # einsum, not np.dot: dot goes to the BLAS, whose thread pool spins beside the training
    # framework's threads (measured: docs/hook.md, "Big models: reductions only")
    if flat.dtype.kind == "c":
        return np.sum(np.abs(flat) ** 2)
    return np.einsum("i,i->", flat, flat, dtype=np.float64)


# Applied to the flattened tensor in its own dtype, with float64 accumulators for real
# tensors (the result is then stored in the tensor's float dtype): float32 squares overflow
# from |x| ~ 1.8e19 and a float32 sum of large finite values overflows, so a finite tensor
# would get an infinite norm or mean, which ExplodingTensor would report. No float64 copy of
# the tensor is made (a big model's tensors are reduced at every saved step).
def _acc(flat: np.ndarray) -> Any:
    return np.float64 if flat.dtype.kind == "f" else None


_FUNCS: dict[str, Callable[[np.ndarray], Any]] = {
    "l1": lambda flat: np.add.reduce(np.abs(flat), dtype=_acc(flat)),
    "l2": lambda flat: np.sqrt(_sq_sum(flat)),
    "min": np.min,
    "max": np.max,
    "mean": lambda flat: np.add.reduce(flat, dtype=_acc(flat)) / flat.size if flat.dtype.kind != "c" else np.mean(flat),
    "std": lambda flat: np.std(flat, dtype=_acc(flat)),
    "variance": lambda flat: np.var(flat, dtype=_acc(flat)),
    "sum": lambda flat: np.add.reduce(flat, dtype=_acc(flat)),
    "prod": lambda flat: np.multiply.reduce(flat, dtype=_acc(flat)),
}


def reductions_apply(dtype: np.dtype[Any]) -> bool:
    """Whether reductions are defined for tensors of ``dtype`` (bool and numbers)."""
    return np.dtype(dtype).kind in "biufc"


def compute_reduction(op: str, array: Any, *, is_abs: bool = False, name: str | None = None) -> np.ndarray:
    """Reduction ``op`` of ``array`` (of ``|array|`` when ``is_abs``) as a 0-d array.

    Float inputs keep their float dtype (smdebug stores a float32 reduction of a float32
    tensor). Zero-length tensors: see the module docstring (NaN or the empty sum/product).

    Raises:
        ConfigValueError: ``op`` is not one of ``ALLOWED_REDUCTIONS + ALLOWED_NORMS``.
        ReductionNotApplicableError: ``array`` is not numeric (strings); ``name`` (the
            tensor, for the message) is named.
    """
    return compute_reductions([(op, is_abs)], array, name=name)[0]


def compute_reductions(ops: Sequence[tuple[str, bool]], array: Any, *, name: str | None = None) -> list[np.ndarray]:
    """The reductions ``(op, is_abs)`` of one tensor, in order (see :func:`compute_reduction`).

    The tensor is flattened, widened and made absolute once for all of them (the hook saves
    several reductions of every tensor of a big model at every saved step).
    """
    _check_ops(ops)
    flat = np.asarray(array).reshape(-1)
    if not reductions_apply(flat.dtype):
        what = f"tensor {name}" if name else "a tensor"
        msg = f"reduction {ops[0][0] if ops else '?'!r} does not apply to {what} of dtype {flat.dtype}: reductions need numbers"
        raise ReductionNotApplicableError(msg)
    floating = np.issubdtype(flat.dtype, np.floating)
    segmented = (
        _reduce_segments([op for op in ops if op[0] in BATCHED_REDUCTIONS], flat, np.zeros(1, np.intp))
        if floating and flat.size
        else {}
    )
    absolute: np.ndarray | None = None
    out = []
    for op, is_abs in ops:
        if flat.size == 0 and op in _UNDEFINED_WHEN_EMPTY:
            out.append(np.asarray(np.nan, dtype=flat.dtype if flat.dtype.kind in "fc" else np.float64))
            continue
        if (op, is_abs) in segmented:
            out.append(np.asarray(segmented[op, is_abs][0]))
            continue
        source = flat
        if is_abs:
            absolute = np.abs(flat) if absolute is None else absolute
            source = absolute
        out.append(np.asarray(_FUNCS[op](source)))
    if floating:  # stored in the tensor's dtype; beyond its range: inf, as computed in it
        with np.errstate(over="ignore"):
            out = [v.astype(flat.dtype) for v in out]
    return out


def compute_reductions_many(
    ops: Sequence[tuple[str, bool]], arrays: Sequence[np.ndarray], *, batch_values: int = 1 << 22
) -> np.ndarray:
    """The reductions ``ops`` of each of ``arrays`` (non-empty, of one float dtype) as a
    ``(len(arrays), len(ops))`` array of that dtype: equal, value for value, to
    :func:`compute_reductions` of each array, in a few passes over all of them.

    The hook's writer thread reduces every saved tensor of a step with this: one NumPy call
    per reduction for the whole step instead of one per tensor (each call takes the
    interpreter lock back from the training thread). Tensors are reduced in batches of at
    most ``batch_values`` values (or one bigger tensor), which bounds the temporary memory
    (the default: 16 MiB of float32, float64 temporaries twice that).

    Raises:
        ConfigValueError: an op is not allowed, or not one of the six that batch
            (``min``, ``max``, ``mean``, ``sum``, ``l1``, ``l2``); an array is empty, not
            of a real float dtype, or not of the first array's dtype.
    """
    _check_ops(ops)
    for op, _ in ops:
        if op not in BATCHED_REDUCTIONS:
            msg = field_error_message("reduction", f"one of {', '.join(sorted(BATCHED_REDUCTIONS))} (batched)", op)
            raise ConfigValueError(msg, field="reduction", value=op)
    dtype = arrays[0].dtype if arrays else np.dtype(np.float32)
    for i, array in enumerate(arrays):
        if array.dtype != dtype or dtype.kind != "f" or not array.size:
            what = f"non-empty arrays of one real float dtype (arrays[0]: {dtype})"
            msg = field_error_message(f"arrays[{i}]", what, f"{array.dtype} array of {array.size} values")
            raise ConfigValueError(msg, field=f"arrays[{i}]", value=str(array.dtype))
    out = np.empty((len(arrays), len(ops)), dtype=dtype)
    start = 0
    while start < len(arrays):
        stop, count = start, 0
        while stop < len(arrays) and (count == 0 or count + arrays[stop].size <= batch_values):
            count += arrays[stop].size
            stop += 1
        batch = arrays[start:stop]
        flat = np.concatenate([a.reshape(-1) for a in batch]) if len(batch) > 1 else batch[0].reshape(-1)
        starts = np.zeros(len(batch), np.intp)
        np.cumsum([a.size for a in batch[:-1]], out=starts[1:])
        values = _reduce_segments(ops, flat, starts)
        with np.errstate(over="ignore"):
            for j, key in enumerate(ops):
                out[start:stop, j] = values[key]
        start = stop
    return out


#: the reductions :func:`compute_reductions_many` computes
BATCHED_REDUCTIONS = frozenset({"min", "max", "mean", "sum", "l1", "l2"})


def _check_ops(ops: Sequence[tuple[str, bool]]) -> None:
    for op, _ in ops:
        if op not in _FUNCS:
            msg = field_error_message("reduction", f"one of {', '.join((*ALLOWED_REDUCTIONS, *ALLOWED_NORMS))}", op)
            raise ConfigValueError(msg, field="reduction", value=op)


def _reduce_segments(
    ops: Sequence[tuple[str, bool]], flat: np.ndarray, starts: np.ndarray
) -> dict[tuple[str, bool], np.ndarray]:
    """``ops`` of each non-empty segment ``flat[starts[i]:starts[i + 1]]`` of a real float
    array, as float64 (sums) or ``flat``'s dtype (min, max) arrays of ``len(starts)``.

    ``ufunc.reduceat`` reduces each segment on its own (a segment's values do not depend on
    its neighbours), so one tensor alone and the same tensor among others give the same
    numbers: the reader's reductions of a raw tensor equal the hook's. Sums accumulate in
    float64 (see ``_acc``); squares are taken in float64, exact for float32 values.
    """
    sizes = np.diff(np.append(starts, flat.size))
    absolute = np.abs(flat) if any(is_abs or op == "l1" for op, is_abs in ops) else flat
    sums: dict[bool, np.ndarray] = {}
    out: dict[tuple[str, bool], np.ndarray] = {}
    for op, is_abs in ops:
        source = absolute if is_abs else flat
        if op == "min":
            out[op, is_abs] = np.minimum.reduceat(source, starts)
        elif op == "max":
            out[op, is_abs] = np.maximum.reduceat(source, starts)
        elif op == "l2":
            out[op, is_abs] = np.sqrt(np.add.reduceat(np.square(flat, dtype=np.float64), starts))
        else:  # sum, mean, l1: one float64 sum of the values (or of their absolutes) each
            absolute_sum = is_abs or op == "l1"
            if absolute_sum not in sums:
                sums[absolute_sum] = np.add.reduceat(absolute if absolute_sum else flat, starts, dtype=np.float64)
            out[op, is_abs] = sums[absolute_sum] / sizes if op == "mean" else sums[absolute_sum]
    return out
