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
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags, 0o666)
    except FileNotFoundError:
        os.makedirs(parent, exist_ok=True)
        fd = os.open(tmp, flags, 0o666)
    written = 0
    try:
        chunks = (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data
        for chunk in chunks:
            view = memoryview(chunk).cast("B")
            while view:
                n = os.write(fd, view)
                written += n
                view = view[n:]
    finally:
        os.close(fd)
    os.replace(tmp, target)
    return written
