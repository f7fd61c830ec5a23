"""TensorFlow ``DataType`` numbers and their numpy counterparts (docs/format.md, "dtypes")."""

from __future__ import annotations

import enum
import functools

import numpy as np

from .._exceptions import UnsupportedDTypeError, field_error_message

__all__ = [
    "STRING_KINDS",
    "DataType",
    "dtype_from_name",
    "numpy_dtype_for",
    "proto_dtype_for",
]


class DataType(enum.IntEnum):
    """The subset of TensorFlow's ``DataType`` enum the format uses."""

    DT_INVALID = 0  # smdebug writes strings with dtype 0 and ``string_val``
    DT_FLOAT = 1
    DT_DOUBLE = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 5
    DT_INT8 = 6
    DT_STRING = 7
    DT_COMPLEX64 = 8
    DT_INT64 = 9
    DT_BOOL = 10
    DT_BFLOAT16 = 14
    DT_UINT16 = 17
    DT_COMPLEX128 = 18
    DT_HALF = 19
    DT_UINT32 = 22
    DT_UINT64 = 23


#: numpy dtype kinds stored as UTF-8 ``string_val`` entries.
STRING_KINDS = frozenset("USO")

_TO_PROTO: dict[str, DataType] = {
    "float16": DataType.DT_HALF,
    "float32": DataType.DT_FLOAT,
    "float64": DataType.DT_DOUBLE,
    "int8": DataType.DT_INT8,
    "int16": DataType.DT_INT16,
    "int32": DataType.DT_INT32,
    "int64": DataType.DT_INT64,
    "uint8": DataType.DT_UINT8,
    "uint16": DataType.DT_UINT16,
    "uint32": DataType.DT_UINT32,
    "uint64": DataType.DT_UINT64,
    "bool": DataType.DT_BOOL,
    "complex64": DataType.DT_COMPLEX64,
    "complex128": DataType.DT_COMPLEX128,
    "bfloat16": DataType.DT_BFLOAT16,
}

# Little-endian storage dtype of each numeric DataType (bfloat16 is stored as raw uint16 bits).
_FROM_PROTO: dict[int, np.dtype[np.generic]] = {
    int(DataType.DT_HALF): np.dtype("<f2"),
    int(DataType.DT_FLOAT): np.dtype("<f4"),
    int(DataType.DT_DOUBLE): np.dtype("<f8"),
    int(DataType.DT_INT8): np.dtype("i1"),
    int(DataType.DT_INT16): np.dtype("<i2"),
    int(DataType.DT_INT32): np.dtype("<i4"),
    int(DataType.DT_INT64): np.dtype("<i8"),
    int(DataType.DT_UINT8): np.dtype("u1"),
    int(DataType.DT_UINT16): np.dtype("<u2"),
    int(DataType.DT_UINT32): np.dtype("<u4"),
    int(DataType.DT_UINT64): np.dtype("<u8"),
    int(DataType.DT_BOOL): np.dtype("?"),
    int(DataType.DT_COMPLEX64): np.dtype("<c8"),
    int(DataType.DT_COMPLEX128): np.dtype("<c16"),
    int(DataType.DT_BFLOAT16): np.dtype("<u2"),
}


def dtype_from_name(name: str) -> DataType:
    """Return the DataType for a dtype name such as ``"float32"`` or ``"bfloat16"``.

    Raises:
        UnsupportedDTypeError: the name is not a supported dtype.
    """
    try:
        return _TO_PROTO[name]
    except KeyError:
        allowed = ", ".join(sorted(_TO_PROTO))
        msg = field_error_message("dtype", f"one of {allowed} or a string dtype", name)
        raise UnsupportedDTypeError(msg) from None


@functools.cache
def _by_dtype() -> dict[np.dtype[np.generic], DataType]:
    table: dict[np.dtype[np.generic], DataType] = {}
    for name, proto in _TO_PROTO.items():
        if name != "bfloat16":
            table[np.dtype(name)] = proto
            table[np.dtype(name).newbyteorder(">")] = proto
    return table


def proto_dtype_for(dtype: np.dtype[np.generic]) -> DataType:
    """Return the DataType written for a numpy dtype (strings: ``DT_INVALID``, as smdebug).

    Raises:
        UnsupportedDTypeError: the dtype cannot be written (e.g. datetime64, structured).
    """
    found = _by_dtype().get(dtype)
    if found is not None:
        return found
    if dtype.kind in STRING_KINDS:
        return DataType.DT_INVALID
    name = dtype.name if dtype.names is None else ""
    if name == "bfloat16":  # ml_dtypes' bfloat16 registers under this name
        return DataType.DT_BFLOAT16
    return dtype_from_name(name) if name in _TO_PROTO else _unsupported(dtype)


def _unsupported(dtype: np.dtype[np.generic]) -> DataType:
    allowed = ", ".join(sorted(_TO_PROTO))
    msg = field_error_message("dtype", f"one of {allowed} or a string dtype", str(dtype))
    raise UnsupportedDTypeError(msg)


def numpy_dtype_for(proto_dtype: int) -> np.dtype[np.generic]:
    """Return the little-endian storage dtype of a numeric DataType number.

    Raises:
        UnsupportedDTypeError: unknown or non-numeric DataType.
    """
    try:
        return _FROM_PROTO[proto_dtype]
    except KeyError:
        msg = field_error_message("TensorProto.dtype", "a supported numeric DataType number", proto_dtype)
        raise UnsupportedDTypeError(msg) from None
