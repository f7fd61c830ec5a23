"""The one fast path of the tensor-record decoder: smdebug's usual field order, in one pass.

Every other layout is left to the general decoder (:mod:`._decode`), which also says what
is wrong with a malformed record.
"""

from __future__ import annotations

import math
import struct
from typing import NamedTuple

import numpy as np

from .._exceptions import CorruptRecordError
from ..modes import ModeKeys
from ._dtypes import DataType, numpy_dtype_for
from ._event_proto import (
    _DOUBLE,
    _FAST_DTYPES,
    _INT64_SIGN,
    _KEY_DIM_SIZE,
    _KEY_SHAPE_DIM,
    _KEY_STEP,
    _KEY_SUMMARY,
    _KEY_SUMMARY_VALUE,
    _KEY_TENSOR_CONTENT,
    _KEY_TENSOR_DTYPE,
    _KEY_TENSOR_SHAPE,
    _KEY_VALUE_METADATA,
    _KEY_VALUE_TAG,
    _KEY_VALUE_TENSOR,
    _KEY_WALL_TIME,
    _STRING_DTYPES,
    _VARINT_MORE,
    DecodedTensor,
    _metadata_of,
    bf16_bits_to_float32,
)
from ._wire import decode_varint

__all__ = ["ValueLayout", "fast_decode", "tensor_value_layout"]


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
        if (
            pos + size != tensor_end
            or tensor_end > end
            or (tensor_end < end and buf[tensor_end] != _KEY_VALUE_METADATA)
        ):
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


def fast_decode(buf: bytes, pos: int, end: int) -> DecodedTensor | None:
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
