"""The protobuf messages of smdebug's tensor events and their general decoders.

Field numbers of TensorFlow's ``event.proto``, ``summary.proto``, ``tensor.proto`` and
``tensor_shape.proto`` as smdebug writes them, their one-byte wire keys (which the fast path,
:mod:`._fast_path`, compares bytes with), and field-by-field decoders of a ``TensorProto``
and of a ``SummaryMetadata`` (any field order, value fallbacks, strings).
"""

from __future__ import annotations

import functools
import math
import struct
from typing import NamedTuple

import numpy as np

from .._exceptions import CorruptRecordError, field_error_message
from ..modes import ModeKeys
from ._dtypes import DataType, numpy_dtype_for
from ._wire import FIXED32, FIXED64, LEN, VARINT, decode_varint, iter_fields

__all__ = ["DecodedTensor", "bf16_bits_to_float32"]

# Field numbers of the messages smdebug writes (TensorFlow's event.proto, summary.proto,
# tensor.proto, tensor_shape.proto), and the wire keys ``field << 3 | wire type`` the fast path
# compares bytes with.
_EVENT_WALL_TIME, _EVENT_STEP, _EVENT_SUMMARY = 1, 2, 5  # Event
_SUMMARY_VALUE = 1  # Summary
_VALUE_TAG, _VALUE_SIMPLE_VALUE, _VALUE_TENSOR, _VALUE_METADATA = 1, 2, 8, 9  # Summary.Value
_TENSOR_DTYPE, _TENSOR_SHAPE, _TENSOR_CONTENT, _TENSOR_STRING_VAL = 1, 2, 4, 8  # TensorProto
_SHAPE_DIM = 2  # TensorShapeProto
_DIM_SIZE = 1  # TensorShapeProto.Dim
_METADATA_PLUGIN_DATA = 1  # SummaryMetadata (smdebug keeps mode and mode_step there)
_PLUGIN_NAME, _PLUGIN_CONTENT = 1, 2  # SummaryMetadata.PluginData


def _key(field: int, wire_type: int) -> int:
    """The one-byte wire key of ``field`` (fields 1..15) with ``wire_type``."""
    return (field << 3) | wire_type


_KEY_WALL_TIME = _key(_EVENT_WALL_TIME, FIXED64)  # 0x09
_KEY_STEP = _key(_EVENT_STEP, VARINT)  # 0x10
_KEY_SUMMARY = _key(_EVENT_SUMMARY, LEN)  # 0x2A
_KEY_SUMMARY_VALUE = _key(_SUMMARY_VALUE, LEN)  # 0x0A
_KEY_VALUE_TAG = _key(_VALUE_TAG, LEN)  # 0x0A
_KEY_VALUE_TENSOR = _key(_VALUE_TENSOR, LEN)  # 0x42
_KEY_VALUE_METADATA = _key(_VALUE_METADATA, LEN)  # 0x4A
_KEY_TENSOR_DTYPE = _key(_TENSOR_DTYPE, VARINT)  # 0x08
_KEY_TENSOR_SHAPE = _key(_TENSOR_SHAPE, LEN)  # 0x12
_KEY_TENSOR_CONTENT = _key(_TENSOR_CONTENT, LEN)  # 0x22
_KEY_SHAPE_DIM = _key(_SHAPE_DIM, LEN)  # 0x12
_KEY_DIM_SIZE = _key(_DIM_SIZE, VARINT)  # 0x08
_INT64_SIGN = 1 << 63
_VARINT_MORE = 0x80  # high bit of a varint byte: more bytes follow

_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")
_STRING_DTYPES = (int(DataType.DT_INVALID), int(DataType.DT_STRING))
_FAST_DTYPES = {
    int(d): numpy_dtype_for(int(d))
    for d in DataType
    if d not in (DataType.DT_INVALID, DataType.DT_STRING, DataType.DT_BFLOAT16)
}
#: TensorProto's typed value fields, used when tensor_content is absent: float_val, double_val,
#: int_val, int64_val, bool_val, with the element format of their packed form
_PACKED_FALLBACKS = {5: "<f4", 6: "<f8", 7: "<i4", 10: "<i8", 11: "?"}
_PACKED_FLOATS = (5, 6)  # float_val, double_val: fixed-width; the others are varints
#: the largest value a record may expand to through TF's "fill" convention (one value, a big shape)
_MAX_FILL_BYTES = 256 << 20


class DecodedTensor(NamedTuple):
    """One tensor record: its name, value, mode, mode step, global step and wall time."""

    tag: str
    value: np.ndarray
    mode: ModeKeys
    mode_step: int
    step: int
    wall_time: float = 0.0


def bf16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    """Widen raw bfloat16 bits (uint16) to float32 (exact)."""
    return (bits.astype("<u4") << 16).view("<f4")


def _varint_list(buf: memoryview, start: int, stop: int) -> list[int]:
    out = []
    pos = start
    while pos < stop:
        v, pos = decode_varint(buf, pos, stop)
        out.append(v)
    return out


def _tensor(buf: memoryview, start: int, stop: int) -> np.ndarray:
    dtype = 0
    shape: list[int] = []
    content: memoryview | None = None
    strings: list[bytes] = []
    fallback: dict[int, list[object]] = {}
    for field, wtype, val, end in iter_fields(buf, start, stop):
        if field == _TENSOR_DTYPE and wtype == VARINT:
            dtype = val
        elif field == _TENSOR_SHAPE and wtype == LEN:
            for f2, w2, v2, e2 in iter_fields(buf, val, end):
                if f2 == _SHAPE_DIM and w2 == LEN:
                    size = 0
                    for f3, w3, v3, _ in iter_fields(buf, v2, e2):
                        if f3 == _DIM_SIZE and w3 == VARINT:
                            size = v3
                    shape.append(size)
        elif field == _TENSOR_CONTENT and wtype == LEN:
            content = buf[val:end]
        elif field == _TENSOR_STRING_VAL and wtype == LEN:
            strings.append(bytes(buf[val:end]))
        elif field in _PACKED_FALLBACKS:
            vals = fallback.setdefault(field, [])
            if wtype == LEN:
                vals.extend(
                    np.frombuffer(buf[val:end], _PACKED_FALLBACKS[field]).tolist()
                    if field in _PACKED_FLOATS
                    else _varint_list(buf, val, end)
                )
            elif wtype == VARINT:
                vals.append(val)
            elif wtype == FIXED32:
                vals.append(_FLOAT.unpack_from(buf, val)[0])
            elif wtype == FIXED64:
                vals.append(_DOUBLE.unpack_from(buf, val)[0])
    if dtype in _STRING_DTYPES and (strings or dtype == int(DataType.DT_STRING) or content is None):
        arr = np.array([s.decode("utf-8", errors="replace") for s in strings], dtype=str)
        return arr.reshape(shape) if math.prod(shape) == arr.size else arr
    np_dtype = numpy_dtype_for(dtype)
    if content is not None:
        if len(content) % np_dtype.itemsize:
            msg = f"tensor_content of {len(content)} bytes is not a multiple of {np_dtype} itemsize"
            raise CorruptRecordError(msg)
        arr = np.frombuffer(content, np_dtype).copy()
    else:
        vals = next(iter(fallback.values()), [])
        arr = np.array(vals, dtype=np_dtype) if dtype != int(DataType.DT_BFLOAT16) else np.array(vals, "<u2")
    if dtype == int(DataType.DT_BFLOAT16):
        arr = bf16_bits_to_float32(arr)
    n = math.prod(shape)
    if arr.size == n:
        return arr.reshape(shape)
    if arr.size == 1 and content is None and n * arr.itemsize <= _MAX_FILL_BYTES:  # TF's "fill" convention
        return np.full(shape, arr[0], dtype=arr.dtype)
    msg = f"tensor has {arr.size} elements but its shape {shape} needs {n}"
    raise CorruptRecordError(msg)


def _metadata(buf: memoryview, start: int, stop: int) -> tuple[ModeKeys | None, int | None]:
    mode: ModeKeys | None = None
    mode_step: int | None = None
    for field, wtype, val, end in iter_fields(buf, start, stop):
        if field != _METADATA_PLUGIN_DATA or wtype != LEN:
            continue
        name = content = b""
        for f2, w2, v2, e2 in iter_fields(buf, val, end):
            if f2 == _PLUGIN_NAME and w2 == LEN:
                name = bytes(buf[v2:e2])
            elif f2 == _PLUGIN_CONTENT and w2 == LEN:
                content = bytes(buf[v2:e2])
        try:
            if name == b"mode_step":
                mode_step = int(content)
            elif name == b"mode":
                mode = ModeKeys(int(content))
        except ValueError:
            msg = field_error_message(f"plugin_data[{name.decode(errors='replace')}]", "an int", content)
            raise CorruptRecordError(msg) from None
    return mode, mode_step


@functools.lru_cache(maxsize=4096)
def _metadata_of(raw: bytes) -> tuple[ModeKeys | None, int | None]:
    return _metadata(memoryview(raw), 0, len(raw))
