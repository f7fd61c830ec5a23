"""The reductions smdebug stores instead of (or beside) a raw tensor — one implementation.

The hook computes them before writing and the reader computes them from a raw value, so
both use this module and always agree. Norms are taken on the *flattened* tensor (``l1`` =
sum of absolute values, ``l2`` = Euclidean/Frobenius norm, as ``torch.norm`` gives);
smdebug 1.0.34's reader used matrix norms for 2-D values, a deliberate difference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._exceptions import ConfigValueError, field_error_message

__all__ = ["ALLOWED_NORMS", "ALLOWED_REDUCTIONS", "compute_reduction"]

ALLOWED_REDUCTIONS = ("min", "max", "mean", "std", "variance", "sum", "prod")
ALLOWED_NORMS = ("l1", "l2")

_FUNCS: dict[str, Callable[[np.ndarray], Any]] = {
    "l1": lambda flat: np.sum(np.abs(flat)),
    "l2": lambda flat: np.sqrt(np.sum(np.real(flat * np.conj(flat)).astype(np.float64))),
    "min": np.min,
    "max": np.max,
    "mean": np.mean,
    "std": np.std,
    "variance": np.var,
    "sum": np.sum,
    "prod": np.prod,
}


def compute_reduction(op: str, array: Any, *, is_abs: bool = False) -> np.ndarray:
    """Reduction ``op`` of ``array`` (of ``|array|`` when ``is_abs``) as a 0-d array.

    Float inputs keep their float dtype (smdebug stores a float32 reduction of a float32
    tensor).

    Raises:
        ConfigValueError: ``op`` is not one of ``ALLOWED_REDUCTIONS + ALLOWED_NORMS``.
    """
    func = _FUNCS.get(op)
    if func is None:
        msg = field_error_message("reduction", f"one of {', '.join((*ALLOWED_REDUCTIONS, *ALLOWED_NORMS))}", op)
        raise ConfigValueError(msg, field="reduction", value=op)
    flat = np.asarray(array).reshape(-1)
    if is_abs:
        flat = np.abs(flat)
    out = np.asarray(func(flat))
    if np.issubdtype(flat.dtype, np.floating):
        out = out.astype(flat.dtype)
    return out
