"""Atomic file writes: ``<path>.tmp`` then rename, so readers never see half a file."""

from __future__ import annotations

import os
from collections.abc import Iterable

__all__ = ["atomic_write"]


def atomic_write(
    path: str | os.PathLike[str],
    data: bytes | bytearray | memoryview | Iterable[bytes | memoryview],
    *,
    new_dir: bool = False,
) -> int:
    """Write ``data`` (bytes or chunks) to ``path`` via ``path.tmp`` + ``os.replace``.

    Parent folders are created. ``new_dir`` says the parent folder is probably new (one
    ``mkdir`` instead of a failed ``open`` first). Returns the number of bytes written.
    """
    target = os.fspath(path)
    parent = os.path.dirname(target)
    if new_dir:
        try:
            os.mkdir(parent)
        except FileExistsError:
            pass
        except FileNotFoundError:
            os.makedirs(parent, exist_ok=True)
    tmp = target + ".tmp"
    try:
        fh = open(tmp, "wb")  # noqa: SIM115 - closed below, before the rename
    except FileNotFoundError:
        os.makedirs(parent, exist_ok=True)
        fh = open(tmp, "wb")  # noqa: SIM115
    with fh:
        if isinstance(data, (bytes, bytearray, memoryview)):
            written = fh.write(data)
        else:
            written = 0
            for chunk in data:
                written += fh.write(chunk)
    os.replace(tmp, target)
    return written
