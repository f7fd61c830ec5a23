"""Reductions computed by the reader from a raw value.

Deliberate difference from smdebug 1.0.34: norms are computed on the *flattened* tensor
(``l1`` = sum of absolute values, ``l2`` = Euclidean/Frobenius norm), which is what the
hooks store (``torch.norm``), whereas smdebug's reader uses ``np.linalg.norm(x, ord)`` on
the array as is (matrix norms for 2-D values). Stored reductions are returned as stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._exceptions import ConfigValueError, field_error_message

__all__ = ["ALLOWED_NORMS", "ALLOWED_REDUCTIONS", "compute_reduction", "normalize_reduction_name"]

ALLOWED_REDUCTIONS = ("min", "max", "mean", "std", "variance", "sum", "prod")
ALLOWED_NORMS = ("l1", "l2")
_ALIASES = {"l1_norm": "l1", "l2_norm": "l2", "var": "variance"}


def normalize_reduction_name(name: str) -> str:
    """Return the stored op name for ``name`` (``l2_norm`` → ``l2``).

    Raises:
        ConfigValueError: not a known reduction.
    """
    op = _ALIASES.get(name, name)
    if op not in ALLOWED_REDUCTIONS and op not in ALLOWED_NORMS:
        allowed = ", ".join(ALLOWED_REDUCTIONS + ALLOWED_NORMS)
        msg = field_error_message("reduction_name", f"one of {allowed}", name)
        raise ConfigValueError(msg, field="reduction_name", value=name)
    return op


def compute_reduction(name: str, value: np.ndarray, abs: bool = False) -> np.generic:
    """Compute reduction ``name`` of ``value`` (on ``|value|`` when ``abs``)."""
    op = normalize_reduction_name(name)
    data = np.absolute(value) if abs else np.asarray(value)
    if op == "l1":
        return np.sum(np.absolute(data))  # type: ignore[no-any-return]
    if op == "l2":
        flat = data.reshape(-1)
        return np.sqrt(np.sum(np.real(flat * np.conj(flat))))  # type: ignore[no-any-return]
    funcs: dict[str, Callable[[np.ndarray], Any]] = {
        "min": np.amin, "max": np.amax, "mean": np.mean, "std": np.std, "variance": np.var,
        "sum": np.sum, "prod": np.prod,
    }  # fmt: skip
    return funcs[op](data)  # type: ignore[no-any-return]
