"""Atomic file writes: ``<path>.tmp`` then rename, so readers never see half a file."""

from __future__ import annotations

import os
from collections.abc import Iterable

__all__ = ["Data", "atomic_write"]

#: what :func:`atomic_write` accepts: one buffer, or chunks written back to back
Data = bytes | bytearray | memoryview | Iterable[bytes | bytearray | memoryview]


def atomic_write(
    path: str | os.PathLike[str],
    data: Data,
    *,
    new_dir: bool = False,
) -> int:
    """Write ``data`` (bytes or chunks) to ``path`` via ``path.tmp`` + ``os.replace``.

    Parent folders are created. ``new_dir`` says the parent folder is probably new (one
    ``mkdir`` instead of a failed ``open`` first). Returns the number of bytes written.
    """
    target = os.fspath(path)
    fd = _open_for_write(target + ".tmp", new_dir=new_dir)
    try:
        if isinstance(data, (bytes, bytearray, memoryview)):
            written = _write_all(fd, [data])
        else:
            written = _write_all(fd, list(data))
    finally:
        os.close(fd)
    os.replace(target + ".tmp", target)
    return written


def _open_for_write(path: str, *, new_dir: bool = False) -> int:
    """Create or truncate ``path`` for writing; return its descriptor. Parent folders are
    created; ``new_dir`` says the parent is probably new (one ``mkdir`` instead of a failed
    ``open`` first)."""
    if new_dir:
        try:
            os.mkdir(os.path.dirname(path))
        except FileExistsError:
            pass
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        return os.open(path, _FLAGS, 0o666)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return os.open(path, _FLAGS, 0o666)


def _write_all(fd: int, chunks: list[bytes | bytearray | memoryview]) -> int:
    """Write every chunk with as few system calls as possible (``writev``, partial writes
    resumed); returns the number of bytes written."""
    views = [v for v in (memoryview(c).cast("B") for c in chunks) if v.nbytes]
    written = 0
    while views:
        n = os.writev(fd, views[:_IOV_MAX]) if _HAS_WRITEV else os.write(fd, views[0])
        written += n
        _advance(views, n)
    return written


def _advance(views: list[memoryview], n: int) -> None:
    """Drop the first ``n`` bytes of ``views`` (fully written views go, a partial one is cut)."""
    i = 0
    while i < len(views) and n >= views[i].nbytes:
        n -= views[i].nbytes
        i += 1
    del views[:i]
    if n:
        views[0] = views[0][n:]


_HAS_WRITEV = hasattr(os, "writev")
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
_IOV_MAX = min(os.sysconf("SC_IOV_MAX"), 1024) if hasattr(os, "sysconf") and "SC_IOV_MAX" in os.sysconf_names else 16
