"""Atomic file writes: ``<path>.tmp`` then rename, so readers never see half a file."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["atomic_write"]


def atomic_write(path: Path, data: bytes | Iterable[bytes | memoryview]) -> int:
    """Write ``data`` (bytes or chunks) to ``path`` via ``path.tmp`` + ``os.replace``.

    Parent folders are created. Returns the number of bytes written.
    """
    tmp = path.with_name(path.name + ".tmp")
    try:
        fh = open(tmp, "wb")  # noqa: SIM115 - closed below, before the rename
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(tmp, "wb")  # noqa: SIM115
    with fh:
        if isinstance(data, (bytes, bytearray, memoryview)):
            written = fh.write(data)
        else:
            written = 0
            for chunk in data:
                written += fh.write(chunk)
    os.replace(tmp, path)
    return written
