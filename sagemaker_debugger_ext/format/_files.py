"""Atomic file writes, the package's one implementation: a temporary name, then a rename.

Readers never see half a file. The temporary name is unique per process, thread and call
(``.<name>.<pid>.<thread>.<n>.tmp``), so two writers of one path never share it, and it is
removed when the write fails (a full disk leaves no ``.tmp`` behind).

``uncached=True`` asks for an uncached buffered write (Linux 6.14+'s ``RWF_DONTCACHE``) of
data of at least ``UNCACHED_MIN_BYTES``: the kernel starts writing the pages to disk at once
and drops them from the page cache when that is done, so write-once data (a hook's event
files, read later by another process or not at all) neither pushes the training's own files
out of the cache nor makes the kernel find new pages for every step (:func:`write_uncached`
decides; measurements: docs/format.md, "Speed"). Where the kernel or the filesystem does
not support it (older kernels, tmpfs: ``EOPNOTSUPP``) the write is an ordinary one, and that
filesystem is not asked again; the bytes on disk are the same either way.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import final

from .._exceptions import DiskFullError

__all__ = [
    "UNCACHED_MIN_BYTES",
    "Data",
    "WriteGuard",
    "atomic_copy",
    "atomic_target",
    "atomic_write",
    "atomic_write_group",
    "set_write_guard",
    "temp_name",
    "write_uncached",
]

#: what :func:`atomic_write` accepts: one buffer, text (UTF-8), or chunks written back to back
Data = bytes | bytearray | memoryview | str | Iterable[bytes | bytearray | memoryview]

_COUNTER = itertools.count()


def temp_name(target: str) -> str:
    """The temporary path for ``target``: a dot-file in the same folder, unique to this
    process, thread and call (sync and the reader skip dot-files and ``*.tmp``)."""
    head, tail = os.path.split(target)
    return os.path.join(head, f".{tail}.{os.getpid()}.{threading.get_ident() & 0xFFFFFF}.{next(_COUNTER)}.tmp")


def atomic_write(
    path: str | os.PathLike[str],
    data: Data,
    *,
    new_dir: bool = False,
    uncached: bool = False,
) -> int:
    """Write ``data`` (bytes, text or chunks) to ``path`` via a temporary file + ``os.replace``.

    Parent folders are created. ``new_dir`` says the parent folder is probably new (one
    ``mkdir`` instead of a failed ``open`` first). ``uncached``: an uncached write where the
    system supports it and ``data`` has at least ``UNCACHED_MIN_BYTES`` (module docstring).
    Returns the number of bytes written.
    On failure (``OSError``, e.g. ``ENOSPC``) the temporary file is removed and the target
    is left as it was.
    """
    target = os.fspath(path)
    return _write_prepared(target, temp_name(target), _data_views(data), new_dir=new_dir, uncached=uncached)


def atomic_write_group(writes: Iterable[tuple[str, Data, bool, bool]]) -> None:
    """:func:`atomic_write` of each ``(path, data, new_dir, uncached)``, in this order, all
    prepared (views, temporary names) before the first file is opened: on a writer thread,
    which takes the interpreter lock back after each system call from a training thread that
    may need it, the calls then follow each other with little Python between them."""
    prepared = []
    for path, data, new_dir, uncached in writes:
        target = os.fspath(path)
        prepared.append((target, temp_name(target), _data_views(data), new_dir, uncached))
    for target, tmp, views, new_dir, uncached in prepared:
        _write_prepared(target, tmp, views, new_dir=new_dir, uncached=uncached)


def _data_views(data: Data) -> list[memoryview]:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _byte_views([data] if isinstance(data, (bytes, bytearray, memoryview)) else list(data))


def _write_prepared(target: str, tmp: str, views: list[memoryview], *, new_dir: bool, uncached: bool) -> int:
    """The system calls of :func:`atomic_write` (see there), ``views`` prepared by the caller."""
    try:
        fd = _open_for_write(tmp, new_dir=new_dir)
    except OSError as exc:
        raise _disk_full(exc, target) from exc
    try:
        try:
            if _SEAM.guard is not None:
                _SEAM.guard(target, sum(v.nbytes for v in views))
            written = _write_views(fd, views, uncached=uncached)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException as exc:  # as _replaced_or_discarded, without a generator's frames
        _discard(tmp)
        if isinstance(exc, OSError):
            raise _disk_full(exc, target) from exc
        raise
    return written


@contextlib.contextmanager
def atomic_target(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path to fill; it replaces ``path`` when the block succeeds and is
    removed when it fails. Parent folders are created."""
    target = os.fspath(path)
    tmp = temp_name(target)
    with _replaced_or_discarded(tmp, target):
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        yield tmp
        if _SEAM.guard is not None:
            _SEAM.guard(target, os.path.getsize(tmp))


@contextlib.contextmanager
def _replaced_or_discarded(tmp: str, target: str) -> Iterator[None]:
    """Rename ``tmp`` over ``target`` when the block succeeds; otherwise remove ``tmp`` and
    re-raise (a full disk as :class:`DiskFullError` naming the folder)."""
    try:
        yield
        os.replace(tmp, target)
    except BaseException as exc:
        _discard(tmp)
        if isinstance(exc, OSError):
            raise _disk_full(exc, target) from exc
        raise


def atomic_copy(src: str | os.PathLike[str], dest: str | os.PathLike[str]) -> None:
    """Copy ``src`` to ``dest`` through a temporary file and a rename (streamed, any size)."""
    with atomic_target(dest) as tmp:
        shutil.copyfile(src, tmp)


def _discard(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def _disk_full(exc: OSError, target: str) -> OSError:
    """``exc`` itself, or a DiskFullError saying where, when the disk is full."""
    if exc.errno not in _FULL or isinstance(exc, DiskFullError):
        return exc
    folder = os.path.dirname(target) or "."
    try:
        free = f"{shutil.disk_usage(folder).free} bytes free there"
    except OSError:
        free = "free space unknown"
    msg = f"the disk is full: no space left on device writing {target} ({free})"
    return DiskFullError(msg, path=target, errno_value=exc.errno or errno.ENOSPC)


#: A check run before every write of this process: ``guard(target, nbytes)`` raises ``OSError``
#: (``ENOSPC``) to refuse it, as a full disk would. Tests install one with
#: :func:`set_write_guard` where no small file system can be mounted; by default nothing is checked.
WriteGuard = Callable[[str, int], None]


@final
class _Seam:
    """The process's write guard (one attribute, set only through :func:`set_write_guard`)."""

    guard: WriteGuard | None = None


_SEAM = _Seam()


def set_write_guard(guard: WriteGuard | None) -> WriteGuard | None:
    """Run ``guard(target, nbytes)`` before every atomic write of this process (None: no check).

    Returns:
        The guard it replaces, to restore afterwards.
    """
    previous, _SEAM.guard = _SEAM.guard, guard
    return previous


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


def write_uncached(uncached: bool, nbytes: int) -> bool:
    """Whether ``nbytes`` written in one call that asks for ``uncached`` go uncached (where the
    system supports it): only data of at least ``UNCACHED_MIN_BYTES``. The same rule for a
    hook's 2 MB event files whatever the step time: measured on both benchmarks, the Keras
    hook's overhead is 0.05-0.10 lower with them uncached, the fast-step MLP's 0.01-0.02 higher
    (docs/format.md, "Speed"); neither a size nor a byte budget separates the two."""
    return uncached and nbytes >= UNCACHED_MIN_BYTES


def _byte_views(chunks: Iterable[bytes | bytearray | memoryview]) -> list[memoryview]:
    """The non-empty ``chunks`` as flat byte views (what :func:`_write_views` takes)."""
    return [v for v in (memoryview(c).cast("B") for c in chunks) if v.nbytes]


def _write_views(fd: int, views: list[memoryview], *, uncached: bool = False) -> int:
    """Write every view, from the file's start, with as few system calls as possible
    (``writev``, partial writes resumed; ``uncached``: see the module docstring); returns the
    number of bytes written. The views are consumed. A write that takes everything, the
    usual case, returns at once: no Python between it and the caller's next system call
    (which matters on a writer thread, see :func:`atomic_write`), and the file's device is
    looked up only once some filesystem has refused an uncached write."""
    written = 0
    total = sum(v.nbytes for v in views)
    if uncached and _UNCACHED_SYSTEM and write_uncached(uncached, total):
        device = os.fstat(fd).st_dev if _REFUSED_DEVICES else None
        if device not in _REFUSED_DEVICES:
            try:
                while views:
                    n = os.pwritev(fd, views[:_IOV_MAX], written, RWF_DONTCACHE)
                    written += n
                    if written == total:
                        return written
                    _advance(views, n)
                return written
            except OSError as exc:
                if exc.errno not in _NOT_SUPPORTED:
                    raise
                # not supported there: ask no more, go on from `written`
                _REFUSED_DEVICES.add(os.fstat(fd).st_dev if device is None else device)
                os.lseek(fd, written, os.SEEK_SET)
    while views:
        n = os.writev(fd, views[:_IOV_MAX]) if _HAS_WRITEV else os.write(fd, views[0])
        written += n
        if written == total:
            return written
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
#: data at least this large is written uncached when asked (smaller files are cheap to cache)
UNCACHED_MIN_BYTES = 1 << 20
#: ``RWF_DONTCACHE`` from <linux/fs.h> (an older Python's ``os`` does not name it)
RWF_DONTCACHE = getattr(os, "RWF_DONTCACHE", 0x80)
_UNCACHED_SYSTEM = sys.platform.startswith("linux") and hasattr(os, "pwritev")
#: the errors of a kernel or filesystem without uncached writes (or without ``pwritev2``)
_NOT_SUPPORTED = frozenset({errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL, errno.ENOSYS})
_REFUSED_DEVICES: set[int] = set()  # st_dev of the filesystems that refused one
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
_IOV_MAX = min(os.sysconf("SC_IOV_MAX"), 1024) if hasattr(os, "sysconf") and "SC_IOV_MAX" in os.sysconf_names else 16
