"""Decode one serialized ``Event`` holding a tensor (or a scalar/histogram summary)."""

from __future__ import annotations

import functools
import math
import struct
from typing import NamedTuple

import numpy as np

from .._exceptions import CorruptRecordError, DebuggerExtError, field_error_message
from ..modes import ModeKeys
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
                vals.extend(np.frombuffer(buf[val:end], _PACKED_FALLBACKS[field]).tolist()
                            if field in _PACKED_FLOATS else _varint_list(buf, val, end))
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


def _length(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """The varint at ``pos`` (a length): ``(value, next position)``, lengths under 16 KiB without a loop."""
    size = buf[pos]
    if size < _VARINT_MORE:
        return size, pos + 1
    more = buf[pos + 1]
    if more < _VARINT_MORE:
        return (size & 0x7F) | (more << 7), pos + 2
    return decode_varint(buf, pos, end)


# What _scan returns: offsets of the parts of one record (a plain tuple: this is the hot path):
# (tag_start, tag_end, dtype, shape, content_start, content_size, metadata_start)
_Scan = tuple[int, int, int, list[int], int, int, int]


def _scan(buf: bytes, pos: int, end: int) -> _Scan | None:
    """Walk one record in smdebug's usual field order, in one pass: the one fast path.

    The layout: ``Event{wall_time, step, summary{value{tag, tensor{dtype, tensor_shape{dim{size}...},
    tensor_content}, metadata}}}``, one value spanning the rest of the record. Any other
    layout (string tensors, value fallbacks, other field orders, a torn or malformed record)
    returns None: the general decoder handles it and says what is wrong. Lengths of one byte
    (the common case) are read inline; ``metadata_start == end`` when the value has none.
    """
    try:
        if buf[pos] == _KEY_WALL_TIME:
            pos += 9  # key + fixed64: read by _event_header when needed
        if buf[pos] == _KEY_STEP:
            pos += 1
            while buf[pos] & _VARINT_MORE:
                pos += 1
            pos += 1
        if buf[pos] != _KEY_SUMMARY:
            return None
        size, pos = _length(buf, pos + 1, end)
        if pos + size != end or buf[pos] != _KEY_SUMMARY_VALUE:
            return None
        size, pos = _length(buf, pos + 1, end)
        if pos + size != end or buf[pos] != _KEY_VALUE_TAG:
            return None
        size = buf[pos + 1]  # names are short: one length byte, read inline
        tag_start = pos + 2
        if size & _VARINT_MORE:
            size, tag_start = _length(buf, pos + 1, end)
        pos = tag_end = tag_start + size
        if buf[pos] != _KEY_VALUE_TENSOR:
            return None
        size, pos = _length(buf, pos + 1, end)
        tensor_end = pos + size
        dtype = 0
        if buf[pos] == _KEY_TENSOR_DTYPE:
            dtype = buf[pos + 1]
            if dtype & _VARINT_MORE:
                return None  # no DataType needs two bytes
            pos += 2
        if buf[pos] != _KEY_TENSOR_SHAPE or dtype in _STRING_DTYPES:
            return None
        size = buf[pos + 1]  # a few dims: one length byte, read inline
        if size & _VARINT_MORE:
            size, pos = _length(buf, pos + 1, end)
        else:
            pos += 2
        shape_end = pos + size
        shape = []
        while pos < shape_end:
            size = buf[pos + 1]
            if buf[pos] != _KEY_SHAPE_DIM or size & _VARINT_MORE:
                return None
            pos += 2
            shape.append(decode_varint(buf, pos + 1, end)[0] if buf[pos] == _KEY_DIM_SIZE else 0)
            pos += size
        if pos >= tensor_end or buf[pos] != _KEY_TENSOR_CONTENT:
            return None
        size, pos = _length(buf, pos + 1, end)
        if pos + size != tensor_end or tensor_end > end or (tensor_end < end and buf[tensor_end] != _KEY_VALUE_METADATA):
            return None
    except (IndexError, struct.error, CorruptRecordError):
        return None
    return (tag_start, tag_end, dtype, shape, pos, size, tensor_end)


def _event_header(buf: bytes, pos: int, end: int) -> tuple[float, int]:
    """``(wall_time, step)`` of a record that :func:`_scan` accepted (both come first there)."""
    wall_time = 0.0
    step = 0
    if buf[pos] == _KEY_WALL_TIME:
        wall_time = _DOUBLE.unpack_from(buf, pos + 1)[0]
        pos += 9
    if buf[pos] == _KEY_STEP:
        step = decode_varint(buf, pos + 1, end)[0]
        if step >= _INT64_SIGN:
            step -= 1 << 64
    return wall_time, step


def _fast_decode(buf: bytes, pos: int, end: int) -> DecodedTensor | None:
    """The whole record through the fast path; None means "use the general decoder"."""
    scan = _scan(buf, pos, end)
    if scan is None:
        return None
    tag_start, tag_end, dtype, shape, content_start, content_size, metadata_start = scan
    wall_time, step = _event_header(buf, pos, end)
    np_dtype = numpy_dtype_for(dtype)
    if content_size % np_dtype.itemsize:
        return None
    arr = np.frombuffer(buf, np_dtype, content_size // np_dtype.itemsize, content_start).copy()
    if dtype == int(DataType.DT_BFLOAT16):
        arr = bf16_bits_to_float32(arr)
    if arr.size != math.prod(shape):
        return None
    mode: ModeKeys | None = None
    mode_step: int | None = None
    if metadata_start < end:
        meta_start = decode_varint(buf, metadata_start + 1, end)[1]
        mode, mode_step = _metadata_of(bytes(buf[meta_start:end]))
    return DecodedTensor(
        bytes(buf[tag_start:tag_end]).decode("utf-8", errors="replace"),
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
    """Locate the numeric ``tensor_content`` of the record payload ``buf[start:end]`` (the fast path).

    Returns None for layouts the fast path does not handle (strings, bfloat16, value
    fallbacks, unusual field order): use :func:`decode_tensor_record` for those.
    """
    scan = _scan(buf, start, len(buf) if end is None else end)
    if scan is None:
        return None
    _, _, dtype, shape, content_start, size, _ = scan
    np_dtype = _FAST_DTYPES.get(dtype)
    if np_dtype is None:
        return None
    n_items, rest = divmod(size, np_dtype.itemsize)
    if rest or n_items != math.prod(shape):
        return None
    return ValueLayout(content_start, np_dtype, n_items, tuple(shape))


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
        if field == _EVENT_WALL_TIME and wtype == FIXED64:
            wall_time = _DOUBLE.unpack_from(buf, val)[0]
        elif field == _EVENT_STEP and wtype == VARINT:
            step = val - (1 << 64) if val >= _INT64_SIGN else val
        elif field == _EVENT_SUMMARY and wtype == LEN:
            for f2, w2, v2, e2 in iter_fields(buf, val, end):
                if f2 != _SUMMARY_VALUE or w2 != LEN:
                    continue
                for f3, w3, v3, e3 in iter_fields(buf, v2, e2):
                    if f3 == _VALUE_TAG and w3 == LEN:
                        tag = bytes(buf[v3:e3]).decode("utf-8", errors="replace")
                    elif f3 == _VALUE_TENSOR and w3 == LEN:
                        value = _tensor(buf, v3, e3)
                    elif f3 == _VALUE_SIMPLE_VALUE and w3 == FIXED32:
                        value = np.array(_FLOAT.unpack_from(buf, v3)[0], dtype=np.float32)
                    elif f3 == _VALUE_METADATA and w3 == LEN:
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


