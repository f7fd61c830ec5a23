"""Converters for values that arrive as strings: booleans and numbers, one set for the package.

SageMaker sends hook parameters, rule parameters and profiler settings as strings
(``"True"``, ``"1e-7"``, ``"500"``); users calling from Python pass real values. The hook's
JSON config, the rule parameters and ``profilerconfig.json`` all convert through these
functions, so ``"on"`` means the same everywhere and ``"Flase"`` is an error everywhere.

The converters raise plain :class:`ValueError` / :class:`TypeError` whose text is what was
expected (``BOOL_EXPECTED`` ...); each caller maps that to its own error naming the field
(``HookConfigError``, ``RuleParameterError``, ``ProfilerError``).
"""

from __future__ import annotations

import math
from typing import Any

import attrs

__all__ = [
    "BOOL_EXPECTED",
    "FLOAT_EXPECTED",
    "INT_EXPECTED",
    "is_unset",
    "to_bool",
    "to_float",
    "to_int",
]

BOOL_EXPECTED = "a boolean (true/false, yes/no, on/off, 1/0)"
INT_EXPECTED = "an integer"
FLOAT_EXPECTED = "a number"


def is_unset(value: object) -> bool:
    """Whether ``value`` means "not given": ``None`` or a blank string."""
    return value is None or (isinstance(value, str) and not value.strip())


def to_bool(value: object) -> bool:
    """Convert a bool, ``0``/``1`` or a boolean word (any case, surrounding blanks ignored).

    True: ``True, 1, "true", "t", "yes", "y", "on", "1"``; false: the negatives
    (``attrs.converters.to_bool``'s table).

    Raises:
        ValueError: anything else, including ``"Flase"``, ``""``, ``2`` and ``None``.
    """
    raw: Any = value.strip() if isinstance(value, str) else value
    try:
        return bool(attrs.converters.to_bool(raw))
    except ValueError:
        raise ValueError(BOOL_EXPECTED) from None


def to_float(value: object) -> float:
    """Convert a number or a numeric string (``"1e-7"``) to a float (infinities allowed, NaN not).

    Raises:
        TypeError: a bool or a non-numeric type.
        ValueError: a string that is not a number, or NaN.
    """
    if isinstance(value, bool):
        raise TypeError(FLOAT_EXPECTED)
    try:
        out = float(value.strip() if isinstance(value, str) else value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(FLOAT_EXPECTED) from None
    if math.isnan(out):
        raise ValueError(FLOAT_EXPECTED)
    return out


def to_int(value: object) -> int:
    """Convert an integer, an integral float (``3.0``) or a string of either (``"3"``, ``"3.0"``).

    Raises:
        TypeError: a bool or a non-numeric type.
        ValueError: a fraction (``1.5``), a non-numeric string, NaN or infinity.
    """
    if isinstance(value, bool):
        raise TypeError(INT_EXPECTED)
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    try:
        as_float = to_float(value)
    except (TypeError, ValueError):
        raise ValueError(INT_EXPECTED) from None
    if not as_float.is_integer():
        raise ValueError(INT_EXPECTED)
    return int(as_float)
