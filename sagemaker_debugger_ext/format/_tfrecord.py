"""TFRecord framing (docs/format.md, "Records") and a reader tolerant of a torn tail.

Record layout, all little-endian::

    uint64  N                      payload length              struct "<Q"
    uint32  masked_crc32c(N bytes)                             struct "<I"
    bytes   payload[N]             one serialized Event
    uint32  footer                 events/: MAGIC_FOOTER; TensorBoard: masked_crc32c(payload)
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterator
from typing import BinaryIO

import attrs

from .._exceptions import CorruptRecordError, TruncatedRecordError
from ._crc import MAGIC_FOOTER, get_crc32c, mask_crc, masked_crc32c

__all__ = [
    "FooterCheck",
    "Record",
    "RecordWriter",
    "frame_header",
    "locate_record",
    "read_record_at",
    "read_records",
]

_LEN = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_MAGIC = _U32.pack(MAGIC_FOOTER)


@functools.lru_cache(maxsize=4096)
def frame_header(length: int) -> bytes:
    """Return the 12-byte record header for a payload of ``length`` bytes (cached: a
    tensor's records keep their size from step to step)."""
    raw = _LEN.pack(length)
    return raw + _U32.pack(mask_crc(get_crc32c()(raw)))


def magic_footer() -> bytes:
    """Return smdebug's constant footer for events/ files."""
    return _MAGIC


def crc_footer(payload: bytes) -> bytes:
    """Return the real TF footer: the masked CRC32C of ``payload``."""
    return _U32.pack(masked_crc32c(payload))


class FooterCheck:
    """How the 4-byte footer is checked: accept smdebug's magic value or the real CRC."""

    ANY = "any"  # magic footer or a correct payload CRC (our default)
    MAGIC = "magic"  # smdebug's check="minimal"
    FULL = "full"  # a correct payload CRC only
    NONE = "none"


class RecordWriter:
    """Write framed records to a binary stream.

    Args:
        stream: a binary file-like object.
        payload_crc: write the real payload CRC (TensorBoard) instead of the magic footer.
    """

    def __init__(self, stream: BinaryIO, *, payload_crc: bool = False) -> None:
        self._stream = stream
        self._payload_crc = payload_crc

    def write(self, payload: bytes) -> int:
        """Write one record; return the number of bytes written."""
        footer = crc_footer(payload) if self._payload_crc else _MAGIC
        data = frame_header(len(payload)) + payload + footer
        self._stream.write(data)
        return len(data)


@attrs.frozen
class Record:
    """One decoded record: its ``payload`` and the ``offset``/``length`` of the whole frame."""

    payload: bytes
    offset: int
    length: int


def _check_footer(buf: memoryview, pos: int, plen: int, footer: int, check: str, path: str | None) -> None:
    if check == FooterCheck.NONE:
        return
    if check != FooterCheck.FULL and footer == MAGIC_FOOTER:
        return
    if check != FooterCheck.MAGIC and footer == masked_crc32c(buf[pos + 12 : pos + 12 + plen]):
        return
    msg = f"record at offset {pos} has a bad payload footer 0x{footer:08x} (check={check!r})"
    raise CorruptRecordError(msg, path=path, offset=pos)


def locate_record(
    data: bytes | memoryview, pos: int = 0, *, check: str = FooterCheck.ANY, path: str | None = None
) -> tuple[int, int]:
    """Validate the record starting at ``pos``; return ``(payload_start, payload_end)``.

    The whole frame ends 4 bytes after ``payload_end``.

    Raises:
        TruncatedRecordError: the buffer ends inside the record (retry later from ``pos``).
        CorruptRecordError: the length CRC or footer is wrong.
    """
    end = len(data)
    if pos + 12 > end:
        msg = f"record header at offset {pos} is truncated ({end - pos} of 12 bytes)"
        raise TruncatedRecordError(msg, path=path, offset=pos)
    (plen,) = _LEN.unpack_from(data, pos)
    (len_crc,) = _U32.unpack_from(data, pos + 8)
    if len_crc != mask_crc(get_crc32c()(bytes(data[pos : pos + 8]))):
        msg = f"record at offset {pos} has a bad length CRC 0x{len_crc:08x}"
        raise CorruptRecordError(msg, path=path, offset=pos)
    stop = pos + 12 + plen + 4
    if stop > end:
        msg = f"record at offset {pos} is truncated ({end - pos} of {stop - pos} bytes)"
        raise TruncatedRecordError(msg, path=path, offset=pos)
    (footer,) = _U32.unpack_from(data, stop - 4)
    if footer != MAGIC_FOOTER or check == FooterCheck.FULL:
        _check_footer(memoryview(data), pos, plen, footer, check, path)
    return pos + 12, stop - 4


def read_record_at(
    data: bytes | memoryview, pos: int = 0, *, check: str = FooterCheck.ANY, path: str | None = None
) -> Record:
    """Decode the record starting at ``pos`` of ``data``.

    Raises:
        TruncatedRecordError: the buffer ends inside the record (retry later from ``pos``).
        CorruptRecordError: the length CRC or footer is wrong.
    """
    start, stop = locate_record(data, pos, check=check, path=path)
    return Record(bytes(data[start:stop]), pos, stop + 4 - pos)


def read_records(
    source: str | bytes | memoryview | BinaryIO,
    *,
    check: str = FooterCheck.ANY,
    allow_torn_tail: bool = True,
) -> Iterator[Record]:
    """Iterate the records of a file path, a buffer or a binary stream.

    A half-written last record ends the iteration quietly when ``allow_torn_tail`` (the
    writer may still be appending); otherwise it raises TruncatedRecordError.

    Raises:
        CorruptRecordError: a CRC or footer mismatch.
        TruncatedRecordError: a torn tail and ``allow_torn_tail`` is false.
    """
    path: str | None = None
    if isinstance(source, str):
        path = source
        with open(source, "rb") as fh:
            data: bytes | memoryview = fh.read()
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data = source
    else:
        data = source.read()
    pos, end = 0, len(data)
    while pos < end:
        try:
            rec = read_record_at(data, pos, check=check, path=path)
        except TruncatedRecordError:
            if allow_torn_tail:
                return
            raise
        yield rec
        pos += rec.length
