"""CRC32C (Castagnoli) and TFRecord's masked CRC, with a native fast path.

The ``crc32c`` package (C, hardware accelerated) is used when importable; otherwise a
table-driven pure-Python implementation gives the same results (both are tested).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

__all__ = [
    "MAGIC_FOOTER",
    "crc32c_python",
    "get_crc32c",
    "mask_crc",
    "masked_crc32c",
]

_POLY = 0x82F63B78  # reflected Castagnoli polynomial
_MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF


@functools.cache
def _table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


def crc32c_python(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """Return the CRC32C of ``data`` computed in pure Python (slow; fallback and oracle)."""
    table = _table()
    crc ^= _U32
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ _U32


@functools.cache
def get_crc32c() -> Callable[[bytes], int]:
    """Return the fastest available ``crc32c(data) -> int`` function."""
    try:
        import crc32c as _native
    except ImportError:  # no native package: the pure-Python fallback (tested)
        return crc32c_python
    native: Callable[[bytes], int] = _native.crc32c
    return native


def mask_crc(crc: int) -> int:
    """Apply TFRecord's CRC mask: rotate right by 15 bits and add a constant."""
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & _U32


def masked_crc32c(data: bytes | bytearray | memoryview, *, native: bool = True) -> int:
    """Return the masked CRC32C of ``data`` as stored in TFRecord headers and footers."""
    crc = get_crc32c()(bytes(data)) if native else crc32c_python(data)
    return mask_crc(crc)


#: smdebug's constant payload "checksum" in events/ files: masked_crc32c(b"0x12345678").
MAGIC_FOOTER = 0x062DC0B3
