"""A local folder (plain path or ``file://``) as a store; keys never escape the root."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from .._exceptions import (
    PathEscapeError,
    StorageError,
    StorageNotFoundError,
)
from ..format._files import atomic_write
from ..format._layout import safe_join
from ._base import check_range
from ._sync import sync_dir
from ._write import local_upload_file

__all__ = ["LocalStorage"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_SCAN_AFTER = 8  # subfolders of one folder checked one by one before all of them are checked at once


class LocalStorage:
    """A local folder. Keys are ``/``-separated paths below ``root``; none may escape it."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.abspath(os.fspath(root)))
        self.uri = str(self.root)
        self._real_root: str | None = None
        self._checked_dirs: set[str] = set()
        self._dir_checks: dict[str, int] = {}  # folder -> its subfolders checked one by one

    def _inside(self, path: str) -> bool:
        if self._real_root is None:
            self._real_root = os.path.realpath(self.uri)
        real = os.path.realpath(path)
        return real == self._real_root or real.startswith(self._real_root.rstrip(os.sep) + os.sep)

    def _open(self, key: str) -> tuple[int, str]:
        """Open file ``key`` for reading, refusing symlinks that lead outside the root.

        Symlinks (of the file or of a folder on its way) are followed only while their
        target stays inside the trial folder, as ``..`` names are refused.
        """
        path = self._fast_path(key)
        parent = os.path.dirname(path)
        try:
            if parent not in self._checked_dirs:
                self._check_dir(key, parent)
            try:
                return os.open(path, os.O_RDONLY | _NOFOLLOW), path
            except OSError as exc:
                if exc.errno != errno.ELOOP or not os.path.islink(path):
                    raise
            if not self._inside(path):
                raise self._escape(key, path)
            return os.open(path, os.O_RDONLY), path
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as exc:
            msg = f"{path} does not exist"
            raise StorageNotFoundError(msg, uri=str(path)) from exc
        except OSError as exc:
            msg = f"reading {path} failed: {exc}"
            raise StorageError(msg, uri=str(path)) from exc

    def _check_dir(self, key: str, folder: str) -> None:
        """Refuse ``folder`` if it resolves outside the root; remember it once it passed.

        Paid once per folder, with one ``lstat``: a folder that is not a link, inside a folder
        that passed (or the root), is inside the root. Links take the full ``realpath`` test.
        A folder that does not exist is not remembered (the open fails and says so). From the
        ``_SCAN_AFTER``-th subfolder of one folder on, one listing checks all of them.
        """
        if len(folder) <= len(self.uri):  # the root itself (keys never reach above it)
            return
        up = os.path.dirname(folder)
        if up != self.uri and up not in self._checked_dirs:
            self._check_dir(key, up)
        checks = self._dir_checks[up] = self._dir_checks.get(up, 0) + 1
        if checks == _SCAN_AFTER and (up == self.uri or up in self._checked_dirs):  # once per folder
            self._check_subfolders(up)
            if folder in self._checked_dirs:
                return
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            return
        if stat.S_ISLNK(mode) and not self._inside(folder):
            raise self._escape(key, folder)
        self._checked_dirs.add(folder)

    def _check_subfolders(self, folder: str) -> None:
        """Check every subfolder of ``folder`` (inside the root) at once: a reader that opens files
        in many of them (a trial's ``events/<step>/``) pays one listing, not one ``lstat`` each. The
        listing says which entries are links (those, and folders made later, are checked one by one).
        """
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):  # a folder, not a link, inside one that passed
                        self._checked_dirs.add(entry.path)
        except OSError:
            return

    def _escape(self, key: str, path: str) -> PathEscapeError:
        msg = (f"{path} is a symbolic link to {os.path.realpath(path)}, outside the trial folder {self.uri}; "
               "the reader does not follow links out of a trial folder")  # fmt: skip
        return PathEscapeError(msg, name=key, root=self.uri)

    def _path(self, key: str) -> Path:
        return safe_join(self.root, key) if key else self.root

    def _fast_path(self, key: str) -> str:
        # plain relative keys (the common case) skip pathlib; anything unusual goes through safe_join
        if key and key[0] not in "/\\" and ".." not in key and "\0" not in key and "\\" not in key:
            return f"{self.uri}/{key}"
        return str(self._path(key))

    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[str]:
        """Yield the files below ``root`` whose key starts with ``prefix``, sorted."""
        folder = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        base = self._path(folder)
        keys: list[str] = []
        root_len = len(str(self.root)) + 1
        for dirpath, dirs, files in os.walk(base):
            rel_dir = dirpath[root_len:].replace(os.sep, "/")
            if start_after is not None:
                # every key below folder D sorts before D + "/\U0010ffff": skip folders wholly before start_after
                pre = f"{rel_dir}/" if rel_dir else ""
                dirs[:] = [d for d in dirs if f"{pre}{d}/\U0010ffff" > start_after]
            for name in files:
                key = f"{rel_dir}/{name}" if rel_dir else name
                if key.startswith(prefix) and (start_after is None or key > start_after):
                    keys.append(key)
        keys.sort()
        return iter(keys)

    def read(self, key: str) -> bytes:
        """Return the bytes of file ``key``."""
        fd, path = self._open(key)
        try:
            size = os.fstat(fd).st_size
            data = os.read(fd, size + 1)  # one byte more: a file that grew since fstat says so at once
            if len(data) == size:
                return data  # the whole file: a regular file's read stops short only at its end
            return data + _read_rest(fd)  # shrank or grew (or a short read, or a file that reports no size)
        except OSError as exc:
            msg = f"reading {path} failed: {exc}"
            raise StorageError(msg, uri=str(path)) from exc
        finally:
            os.close(fd)

    def size(self, key: str) -> int:
        """Return the size in bytes of file ``key``."""
        fd, _ = self._open(key)
        try:
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    def read_range(self, key: str, start: int, length: int) -> bytes:
        """Return up to ``length`` bytes of file ``key`` from offset ``start``.

        Never reads (or allocates) past the file's real end, whatever ``length`` says.
        """
        check_range(key, start, length)
        fd, path = self._open(key)
        try:
            size = os.fstat(fd).st_size
            if start >= size or length <= 0:
                return b""
            return os.pread(fd, min(length, size - start), start)
        except OSError as exc:
            msg = f"reading {path} failed: {exc}"
            raise StorageError(msg, uri=str(path)) from exc
        finally:
            os.close(fd)

    def exists(self, key: str = "") -> bool:
        """Return whether ``key`` (or, with no key, the root folder) exists."""
        return os.path.exists(self._fast_path(key)) if key else self.root.exists()

    def write_bytes(self, key: str, data: bytes) -> None:
        """Write ``data`` to file ``key`` via a temporary file and a rename."""

        atomic_write(self._path(key), data)

    def upload_file(self, local_path: str | os.PathLike[str], key: str) -> None:
        """Copy the local file ``local_path`` to ``key`` (temporary file + rename)."""

        local_upload_file(Path(local_path), self._path(key))

    def sync_dir(self, local_dir: str | os.PathLike[str], prefix: str = "") -> int:
        """Copy files of ``local_dir`` that are new or changed since the last call; returns how many."""

        return sync_dir(self, Path(local_dir), prefix)


def _read_rest(fd: int) -> bytes:
    """Read ``fd`` from its position to the end."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


# --- S3 ------------------------------------------------------------------------------------
