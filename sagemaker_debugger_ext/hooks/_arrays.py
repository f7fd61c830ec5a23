"""Turning values given to the hook into numpy arrays the writer stores."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["bf16_bits_to_float32", "float_view", "to_numpy"]


def to_numpy(value: Any) -> tuple[np.ndarray, str | None]:
    """``value`` as an ndarray (possibly sharing memory), and the dtype override for the writer.

    Accepts ndarrays, numpy and Python scalars, lists, and objects with ``.numpy()``
    (framework tensors that the framework adapters did not handle themselves). Callers that
    keep the array past the current call copy it.
    """
    if isinstance(value, np.ndarray):
        return value, None
    numpy = getattr(value, "numpy", None)
    if callable(numpy):
        return np.asarray(numpy()), None
    return np.asarray(value), None


def bf16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 raw bits (uint16) -> float32 values."""
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def float_view(array: np.ndarray, dtype: str | None) -> np.ndarray:
    """The numeric values of a stored array (bfloat16 bits decoded)."""
    if dtype == "bfloat16":
        return bf16_bits_to_float32(array)
    return array
