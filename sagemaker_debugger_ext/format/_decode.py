"""Decode one serialized ``Event`` holding a tensor (or a scalar/histogram summary)."""

from __future__ import annotations

import functools
import math
import struct
from typing import NamedTuple

import numpy as np

from .._exceptions import CorruptRecordError, DebuggerExtError, field_error_message
from .._modes import ModeKeys
from ._dtypes import DataType, numpy_dtype_for
from ._wire import FIXED32, FIXED64, LEN, VARINT, decode_varint, iter_fields

__all__ = [
    "DecodedTensor",
    "ValueLayout",
    "bf16_bits_to_float32",
    "decode_tensor_record",
    "decode_tensor_value",
    "tensor_value_layout",
]

_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")
_STRING_DTYPES = (int(DataType.DT_INVALID), int(DataType.DT_STRING))
_FAST_DTYPES = {
    int(d): numpy_dtype_for(int(d))
    for d in DataType
    if d not in (DataType.DT_INVALID, DataType.DT_STRING, DataType.DT_BFLOAT16)
}
_PACKED_FALLBACKS = {5: "<f4", 6: "<f8", 7: "<i4", 10: "<i8", 11: "?"}
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


@functools.lru_cache(maxsize=4096)
def _metadata_of(raw: bytes) -> tuple[ModeKeys | None, int | None]:
    return _metadata(memoryview(raw), 0, len(raw))


def _fast_decode(buf: bytes, pos: int, end: int) -> DecodedTensor | None:
    """Decode smdebug's usual layout in one pass; None means "use the general decoder"."""
    try:
        wall_time = 0.0
        step = 0
        if buf[pos] == 0x09:
            wall_time = _DOUBLE.unpack_from(buf, pos + 1)[0]
            pos += 9
        if buf[pos] == 0x10:
            step, pos = decode_varint(buf, pos + 1, end)
        if buf[pos] != 0x2A:
            return None
        size, pos = decode_varint(buf, pos + 1, end)
        if pos + size != end or buf[pos] != 0x0A:
            return None
        size, pos = decode_varint(buf, pos + 1, end)
        if pos + size != end or buf[pos] != 0x0A:
            return None
        size, pos = decode_varint(buf, pos + 1, end)
        tag = bytes(buf[pos : pos + size]).decode("utf-8", errors="replace")
        pos += size
        if buf[pos] != 0x42:
            return None
        size, pos = decode_varint(buf, pos + 1, end)
        tensor_end = pos + size
        dtype = 0
        if buf[pos] == 0x08:
            dtype, pos = decode_varint(buf, pos + 1, end)
        if buf[pos] != 0x12:
            return None
        size, pos = decode_varint(buf, pos + 1, end)
        shape_end = pos + size
        shape = []
        while pos < shape_end:
            if buf[pos] != 0x12:
                return None
            size, pos = decode_varint(buf, pos + 1, end)
            dim = 0
            if buf[pos] == 0x08:
                dim = decode_varint(buf, pos + 1, end)[0]
            shape.append(dim)
            pos += size
        if pos >= tensor_end or buf[pos] != 0x22 or dtype in _STRING_DTYPES:
            return None
        size, pos = decode_varint(buf, pos + 1, end)
        content_start = pos
        pos += size
        if pos != tensor_end:
            return None
        mode: ModeKeys | None = None
        mode_step: int | None = None
        if pos < end:
            if buf[pos] != 0x4A:
                return None
            meta_start = decode_varint(buf, pos + 1, end)[1]
            mode, mode_step = _metadata_of(bytes(buf[meta_start:end]))
    except (IndexError, struct.error):
        return None
    np_dtype = numpy_dtype_for(dtype)
    if size % np_dtype.itemsize:
        return None
    arr = np.frombuffer(buf, np_dtype, size // np_dtype.itemsize, content_start).copy()
    if dtype == int(DataType.DT_BFLOAT16):
        arr = bf16_bits_to_float32(arr)
    if arr.size != math.prod(shape):
        return None
    return DecodedTensor(
        tag,
        arr.reshape(shape),
        mode if mode is not None else ModeKeys.GLOBAL,
        mode_step if mode_step is not None else step,
        step,
        wall_time,
    )


class ValueLayout(NamedTuple):
    """Where a numeric tensor's content is in a record, and how to view it."""

    content_start: int
    dtype: np.dtype[np.generic]
    n_items: int
    shape: tuple[int, ...]


def tensor_value_layout(buf: bytes, start: int = 0, end: int | None = None) -> ValueLayout | None:
    """Locate the numeric ``tensor_content`` of the record payload ``buf[start:end]``.

    Returns None for layouts the fast path does not handle (strings, bfloat16, value
    fallbacks, unusual field order): use :func:`decode_tensor_record` for those.
    """
    if end is None:
        end = len(buf)
    pos = start
    try:
        if buf[pos] == 0x09:
            pos += 9
        if buf[pos] == 0x10:
            pos += 1
            while buf[pos] & 0x80:
                pos += 1
            pos += 1
        # Event.summary, Summary.value, Value.tag: keys 0x2a, 0x0a, 0x0a, each with a varint length
        if buf[pos] != 0x2A:
            raise IndexError
        pos += 1
        while buf[pos] & 0x80:
            pos += 1
        if buf[pos + 1] != 0x0A:
            raise IndexError
        pos += 2
        while buf[pos] & 0x80:
            pos += 1
        if buf[pos + 1] != 0x0A:
            raise IndexError
        pos += 2
        size = buf[pos]
        if size & 0x80:
            size, pos = decode_varint(buf, pos, end)
        else:
            pos += 1
        pos += size
        if buf[pos] != 0x42:
            raise IndexError
        size = buf[pos + 1]
        if size & 0x80:
            size, pos = decode_varint(buf, pos + 1, end)
        else:
            pos += 2
        tensor_end = pos + size
        dtype = 0
        if buf[pos] == 0x08:
            dtype = buf[pos + 1]
            pos += 2
        if buf[pos] != 0x12 or dtype > 0x7F:
            raise IndexError
        size = buf[pos + 1]
        if size & 0x80:
            size, pos = decode_varint(buf, pos + 1, end)
        else:
            pos += 2
        shape_end = pos + size
        shape = []
        while pos < shape_end:
            size = buf[pos + 1]
            if buf[pos] != 0x12 or size & 0x80:
                raise IndexError
            pos += 2
            dim = 0
            if buf[pos] == 0x08:
                dim = decode_varint(buf, pos + 1, end)[0]
            shape.append(dim)
            pos += size
        if pos >= tensor_end or buf[pos] != 0x22 or dtype in _STRING_DTYPES:
            raise IndexError
        size = buf[pos + 1]
        if size & 0x80:
            size, pos = decode_varint(buf, pos + 1, end)
        else:
            pos += 2
        if pos + size != tensor_end or tensor_end > end:
            raise IndexError
        np_dtype = _FAST_DTYPES.get(dtype)
        if np_dtype is None or size % np_dtype.itemsize or size // np_dtype.itemsize != math.prod(shape):
            raise IndexError
    except (IndexError, CorruptRecordError):
        return None
    return ValueLayout(pos, np_dtype, size // np_dtype.itemsize, tuple(shape))


def decode_tensor_value(buf: bytes, start: int = 0, end: int | None = None) -> np.ndarray:
    """Return only the value of the tensor record payload ``buf[start:end]`` (fast path).

    The reader already knows the name, mode and steps from the index, so this skips the
    tag and metadata. Unusual layouts fall back to :func:`decode_tensor_record`.

    Raises:
        CorruptRecordError, UnsupportedDTypeError: as :func:`decode_tensor_record`.
    """
    layout = tensor_value_layout(buf, start, end)
    if layout is None:
        return decode_tensor_record(buf, start, end).value
    return np.frombuffer(buf, layout.dtype, layout.n_items, layout.content_start).copy().reshape(layout.shape)


def decode_tensor_record(payload: bytes | memoryview, start: int = 0, end: int | None = None) -> DecodedTensor:
    """Decode a serialized ``Event`` whose summary holds one tensor or simple value.

    Returns:
        ``DecodedTensor(tag, value, mode, mode_step, step, wall_time)``. A record without
        mode metadata is GLOBAL with ``mode_step`` = the global step, as in smdebug.

    Raises:
        CorruptRecordError: malformed protobuf, values that do not fit their dtype or
            shape, or no tensor in the event.
        UnsupportedDTypeError: the tensor's DataType is unknown.
    """
    try:
        return _decode_record(payload, start, end)
    except DebuggerExtError:
        raise
    except (ValueError, OverflowError, TypeError, IndexError, struct.error, MemoryError) as exc:
        msg = f"malformed tensor record: {type(exc).__name__}: {exc}"
        raise CorruptRecordError(msg) from None


def _decode_record(payload: bytes | memoryview, start: int = 0, end: int | None = None) -> DecodedTensor:
    if end is None:
        end = len(payload)
    if end - start > 2:
        fast = _fast_decode(payload, start, end)  # type: ignore[arg-type]
        if fast is not None:
            return fast
    buf = memoryview(payload)[start:end]
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


