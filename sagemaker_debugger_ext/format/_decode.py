"""Decode one serialized ``Event`` holding a tensor (or a scalar/histogram summary).

The fast path (:mod:`._fast_path`) takes smdebug's usual layout; everything else goes
through the general, field-by-field decoder here (:mod:`._event_proto`'s messages).
"""

from __future__ import annotations

import struct

import numpy as np

from .._exceptions import CorruptRecordError, DebuggerExtError
from ..modes import ModeKeys
from ._event_proto import (
    _DOUBLE,
    _EVENT_STEP,
    _EVENT_SUMMARY,
    _EVENT_WALL_TIME,
    _FLOAT,
    _INT64_SIGN,
    _SUMMARY_VALUE,
    _VALUE_METADATA,
    _VALUE_SIMPLE_VALUE,
    _VALUE_TAG,
    _VALUE_TENSOR,
    DecodedTensor,
    _metadata,
    _tensor,
    bf16_bits_to_float32,
)
from ._fast_path import ValueLayout, fast_decode, tensor_value_layout
from ._wire import FIXED32, FIXED64, LEN, VARINT, iter_fields

__all__ = [
    "DecodedTensor",
    "ValueLayout",
    "bf16_bits_to_float32",
    "decode_tensor_record",
    "decode_tensor_value",
    "tensor_value_layout",
]


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
        fast = fast_decode(payload, start, end)  # type: ignore[arg-type]
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
