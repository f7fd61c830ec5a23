"""Decode one serialized ``Event`` holding a tensor (or a scalar/histogram summary)."""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

from .._exceptions import CorruptRecordError, UnsupportedDTypeError, field_error_message
from .._modes import ModeKeys
from ._dtypes import DataType, numpy_dtype_for
from ._wire import FIXED32, FIXED64, LEN, VARINT, decode_varint, iter_fields

__all__ = ["DecodedTensor", "decode_tensor_record", "bf16_bits_to_float32"]

_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")
_STRING_DTYPES = (int(DataType.DT_INVALID), int(DataType.DT_STRING))
_PACKED_FALLBACKS = {5: "<f4", 6: "<f8", 7: "<i4", 10: "<i8", 11: "?"}


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
        if field == 1 and wtype == VARINT:
            dtype = val
        elif field == 2 and wtype == LEN:
            for f2, w2, v2, e2 in iter_fields(buf, val, end):
                if f2 == 2 and w2 == LEN:
                    size = 0
                    for f3, w3, v3, _ in iter_fields(buf, v2, e2):
                        if f3 == 1 and w3 == VARINT:
                            size = v3
                    shape.append(size)
        elif field == 4 and wtype == LEN:
            content = buf[val:end]
        elif field == 8 and wtype == LEN:
            strings.append(bytes(buf[val:end]))
        elif field in _PACKED_FALLBACKS:
            vals = fallback.setdefault(field, [])
            if wtype == LEN:
                vals.extend(np.frombuffer(buf[val:end], _PACKED_FALLBACKS[field]).tolist()
                            if field in (5, 6) else _varint_list(buf, val, end))
            elif wtype == VARINT:
                vals.append(val)
            elif wtype == FIXED32:
                vals.append(_FLOAT.unpack_from(buf, val)[0])
            elif wtype == FIXED64:
                vals.append(_DOUBLE.unpack_from(buf, val)[0])
    if dtype in _STRING_DTYPES:
        if strings or dtype == int(DataType.DT_STRING) or content is None:
            arr = np.array([s.decode("utf-8", errors="replace") for s in strings], dtype=str)
            return arr.reshape(shape) if int(np.prod(shape, dtype=np.int64)) == arr.size else arr
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
    n = int(np.prod(shape, dtype=np.int64))
    if arr.size == n:
        return arr.reshape(shape)
    if arr.size == 1 and content is None:  # TF's "fill" convention for repeated *_val
        return np.full(shape, arr[0], dtype=arr.dtype)
    msg = f"tensor has {arr.size} elements but its shape {shape} needs {n}"
    raise CorruptRecordError(msg)


def _metadata(buf: memoryview, start: int, stop: int) -> tuple[ModeKeys | None, int | None]:
    mode: ModeKeys | None = None
    mode_step: int | None = None
    for field, wtype, val, end in iter_fields(buf, start, stop):
        if field != 1 or wtype != LEN:
            continue
        name = content = b""
        for f2, w2, v2, e2 in iter_fields(buf, val, end):
            if f2 == 1 and w2 == LEN:
                name = bytes(buf[v2:e2])
            elif f2 == 2 and w2 == LEN:
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


def decode_tensor_record(payload: bytes | memoryview) -> DecodedTensor:
    """Decode a serialized ``Event`` whose summary holds one tensor or simple value.

    Returns:
        ``DecodedTensor(tag, value, mode, mode_step, step, wall_time)``. A record without
        mode metadata is GLOBAL with ``mode_step`` = the global step, as in smdebug.

    Raises:
        CorruptRecordError: malformed protobuf or no tensor in the event.
        UnsupportedDTypeError: the tensor's DataType is unknown.
    """
    buf = memoryview(payload)
    wall_time = 0.0
    step = 0
    tag = ""
    value: np.ndarray | None = None
    mode: ModeKeys | None = None
    mode_step: int | None = None
    for field, wtype, val, end in iter_fields(buf):
        if field == 1 and wtype == FIXED64:
            wall_time = _DOUBLE.unpack_from(buf, val)[0]
        elif field == 2 and wtype == VARINT:
            step = val - (1 << 64) if val >= 1 << 63 else val
        elif field == 5 and wtype == LEN:
            for f2, w2, v2, e2 in iter_fields(buf, val, end):
                if f2 != 1 or w2 != LEN:
                    continue
                for f3, w3, v3, e3 in iter_fields(buf, v2, e2):
                    if f3 == 1 and w3 == LEN:
                        tag = bytes(buf[v3:e3]).decode("utf-8", errors="replace")
                    elif f3 == 8 and w3 == LEN:
                        value = _tensor(buf, v3, e3)
                    elif f3 == 2 and w3 == FIXED32:
                        value = np.array(_FLOAT.unpack_from(buf, v3)[0], dtype=np.float32)
                    elif f3 == 9 and w3 == LEN:
                        mode, mode_step = _metadata(buf, v3, e3)
    if value is None:
        msg = "event record holds no tensor"
        raise CorruptRecordError(msg)
    return DecodedTensor(
        tag,
        value,
        mode if mode is not None else ModeKeys.GLOBAL,
        mode_step if mode_step is not None else step,
        step,
        wall_time,
    )


