"""Protocol-buffer wire primitives: varints, keys and a field walker (no protobuf runtime).

Wire types used here: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.
"""

from __future__ import annotations

from collections.abc import Iterator

from .._exceptions import CorruptRecordError

__all__ = [
    "FIXED32",
    "FIXED64",
    "LEN",
    "VARINT",
    "decode_varint",
    "encode_varint",
    "iter_fields",
    "key",
    "len_field",
]

VARINT = 0
FIXED64 = 1
LEN = 2
FIXED32 = 5

_U64 = (1 << 64) - 1


def encode_varint(value: int) -> bytes:
    """Encode a non-negative (or two's-complement int64) integer as a base-128 varint."""
    if value < 0:
        value &= _U64
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def key(field: int, wire_type: int) -> bytes:
    """Return the encoded key of ``field`` with ``wire_type``."""
    return encode_varint((field << 3) | wire_type)


def len_field(field: int, payload: bytes) -> bytes:
    """Return a length-delimited field: key, varint length, payload."""
    return key(field, LEN) + encode_varint(len(payload)) + payload


def decode_varint(buf: bytes | memoryview, pos: int, end: int) -> tuple[int, int]:
    """Decode the varint at ``pos``; return ``(value, new_pos)``.

    Raises:
        CorruptRecordError: the varint runs past ``end`` or is longer than 10 bytes.
    """
    result = 0
    shift = 0
    while True:
        if pos >= end or shift > 63:
            msg = f"malformed protobuf varint at offset {pos}"
            raise CorruptRecordError(msg, offset=pos)
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def iter_fields(buf: bytes | memoryview, pos: int = 0, end: int | None = None) -> Iterator[tuple[int, int, int, int]]:
    """Walk the fields of one message in ``buf[pos:end]``.

    Yields ``(field_number, wire_type, value, value_end)``: for varints ``value`` is the
    integer; for the other wire types it is the start offset of the raw bytes, which end
    at ``value_end``.

    Raises:
        CorruptRecordError: bad wire type or a field running past ``end``.
    """
    if end is None:
        end = len(buf)
    while pos < end:
        k, pos = decode_varint(buf, pos, end)
        field, wtype = k >> 3, k & 7
        if wtype == VARINT:
            value, pos = decode_varint(buf, pos, end)
            yield field, wtype, value, pos
            continue
        if wtype == LEN:
            length, pos = decode_varint(buf, pos, end)
            stop = pos + length
        elif wtype == FIXED64:
            stop = pos + 8
        elif wtype == FIXED32:
            stop = pos + 4
        else:
            msg = f"unsupported protobuf wire type {wtype} for field {field} at offset {pos}"
            raise CorruptRecordError(msg, offset=pos)
        if stop > end:
            msg = f"protobuf field {field} runs past the end of its message (offset {pos})"
            raise CorruptRecordError(msg, offset=pos)
        yield field, wtype, pos, stop
        pos = stop
