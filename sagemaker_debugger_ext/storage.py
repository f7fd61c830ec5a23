"""``file://``, plain paths and ``s3://`` behind one small interface (contract §C).

Read side: :meth:`Storage.list` (sorted keys relative to the base, optionally after a
key, like S3's ``StartAfter``), :meth:`Storage.read`, :meth:`Storage.read_range`,
:meth:`Storage.exists`. The write side (``write_bytes``, ``upload_file``, ``sync_dir``)
lives in :mod:`._storage_write` and is attached by the local-mode code.
:class:`MemoryStorage` is the in-memory fake for tests.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ._exceptions import (
    ConfigValueError,
    PathEscapeError,
    StorageError,
    StorageNotFoundError,
    field_error_message,
)
from .format._layout import safe_join

__all__ = [
    "LocalStorage",
    "MemoryStorage",
    "S3Storage",
    "Storage",
    "open_storage",
    "read_many",
    "split_s3_uri",
]


@runtime_checkable
class Storage(Protocol):
    """What the reader (and, with the write side, the local platform) needs from a store."""

    uri: str

    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[str]:
        """Yield keys (relative to the base) starting with ``prefix``, sorted, after ``start_after``."""
        ...

    def read(self, key: str) -> bytes:
        """Return the whole object ``key`` (StorageNotFoundError if missing)."""
        ...

    def read_range(self, key: str, start: int, length: int) -> bytes:
        """Return up to ``length`` bytes of ``key`` from ``start`` (fewer at the end)."""
        ...

    def exists(self, key: str) -> bool:
        """Return whether ``key`` exists."""
        ...

    def write_bytes(self, key: str, data: bytes) -> None:
        """Store ``data`` at ``key`` (atomically for local folders)."""
        ...

    def upload_file(self, local_path: str | os.PathLike[str], key: str) -> None:
        """Store the local file ``local_path`` at ``key`` (retries + backoff for S3)."""
        ...

    def sync_dir(self, local_dir: str | os.PathLike[str], prefix: str = "") -> int:
        """Store files of ``local_dir`` new or changed since the last call; returns how many."""
        ...


# --- local folders -----------------------------------------------------------------------
class LocalStorage:
    """A local folder. Keys are ``/``-separated paths below ``root``; none may escape it."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.abspath(os.fspath(root)))
        self.uri = str(self.root)
        self._real_root: str | None = None
        self._checked_dirs: set[str] = set()

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
                if os.path.isdir(parent) and not self._inside(parent):
                    raise self._escape(key, parent)
                self._checked_dirs.add(parent)
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
            with open(fd, "rb", closefd=False) as fh:
                return fh.read()
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
        _check_range(key, start, length)
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
        from .format._files import atomic_write

        atomic_write(self._path(key), data)

    def upload_file(self, local_path: str | os.PathLike[str], key: str) -> None:
        """Copy the local file ``local_path`` to ``key`` (temporary file + rename)."""
        from ._storage_write import local_upload_file

        local_upload_file(Path(local_path), self._path(key))

    def sync_dir(self, local_dir: str | os.PathLike[str], prefix: str = "") -> int:
        """Copy files of ``local_dir`` that are new or changed since the last call; returns how many."""
        from ._storage_write import sync_dir

        return sync_dir(self, Path(local_dir), prefix)


# --- S3 ------------------------------------------------------------------------------------
def split_s3_uri(uri: str) -> tuple[str, str]:
    """Split ``s3://bucket/prefix`` into ``(bucket, prefix)`` (prefix without leading ``/``)."""
    if not uri.startswith("s3://") or len(uri) <= 5 or uri[5] == "/":
        msg = field_error_message("uri", "an s3://bucket[/prefix] URI", uri)
        raise ConfigValueError(msg, field="uri", value=uri)
    bucket, _, prefix = uri[5:].partition("/")
    return bucket, prefix


class S3Storage:
    """An S3 prefix. boto3 honours ``AWS_ENDPOINT_URL(_S3)``; transient errors are retried.

    Args:
        uri: ``s3://bucket[/prefix]``; keys are relative to the prefix (a folder).
        client: an S3 client (default: a new boto3 client, created on first use).
    """

    def __init__(self, uri: str, *, client: Any = None) -> None:
        self.bucket, prefix = split_s3_uri(uri)
        self.prefix = prefix.rstrip("/") + "/" if prefix.strip("/") else ""
        self.uri = f"s3://{self.bucket}/{self.prefix}"
        self._client = client
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        """The boto3 S3 client (thread-safe; created once)."""
        with self._lock:
            if self._client is None:
                from ._storage_write import s3_client

                self._client = s3_client()
            return self._client

    def _call(self, what: str, key: str, op: Any) -> Any:
        from ._storage_write import with_retries

        return with_retries(op, uri=f"s3://{self.bucket}/{self.prefix}{key}", what=what)

    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[str]:
        """Yield keys with ``list_objects_v2`` (``StartAfter``), already sorted by S3."""
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": self.prefix + prefix}
        if start_after is not None:
            kwargs["StartAfter"] = self.prefix + start_after
        cut = len(self.prefix)
        while True:
            page = self._call("list", prefix, lambda kw=dict(kwargs): self.client.list_objects_v2(**kw))
            for item in page.get("Contents", ()):
                yield item["Key"][cut:]
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return
            kwargs["ContinuationToken"] = token

    def read(self, key: str) -> bytes:
        """GET the whole object ``key``."""
        resp = self._call("read", key, lambda: self.client.get_object(Bucket=self.bucket, Key=self.prefix + key))
        return bytes(resp["Body"].read())

    def size(self, key: str) -> int:
        """Return the size in bytes of object ``key`` (one HEAD request)."""
        resp = self._call("head", key, lambda: self.client.head_object(Bucket=self.bucket, Key=self.prefix + key))
        return int(resp["ContentLength"])

    def read_range(self, key: str, start: int, length: int) -> bytes:
        """GET bytes ``start .. start+length-1`` of ``key`` (one ranged request); fewer at
        the end of the object, none past it."""
        _check_range(key, start, length)
        if length <= 0:
            return b""
        rng = f"bytes={start}-{start + length - 1}"
        try:
            resp = self._call(
                "ranged read",
                key,
                lambda: self.client.get_object(Bucket=self.bucket, Key=self.prefix + key, Range=rng),
            )
        except StorageError as exc:
            if "InvalidRange" in str(exc.__cause__):  # the range starts past the end of the object
                return b""
            raise
        return bytes(resp["Body"].read())

    def exists(self, key: str = "") -> bool:
        """Return whether object ``key`` exists (with no key: whether the bucket exists)."""
        if not key:
            self._call("head bucket", "", lambda: self.client.head_bucket(Bucket=self.bucket))
            return True
        try:
            self._call("head", key, lambda: self.client.head_object(Bucket=self.bucket, Key=self.prefix + key))
        except StorageNotFoundError:
            return False
        return True

    def write_bytes(self, key: str, data: bytes) -> None:
        """PUT ``data`` at ``key``."""
        from ._storage_write import s3_write_bytes

        s3_write_bytes(self.client, self.bucket, self.prefix + key, data)

    def upload_file(self, local_path: str | os.PathLike[str], key: str) -> None:
        """Upload the local file ``local_path`` to ``key`` (retries with backoff)."""
        from ._storage_write import s3_upload_file

        s3_upload_file(self.client, self.bucket, self.prefix + key, Path(local_path))

    def sync_dir(self, local_dir: str | os.PathLike[str], prefix: str = "") -> int:
        """Upload files of ``local_dir`` that are new or changed since the last call; returns how many."""
        from ._storage_write import sync_dir

        return sync_dir(self, Path(local_dir), prefix)


# --- in-memory fake --------------------------------------------------------------------------
class MemoryStorage:
    """An in-memory store for tests: a dict of key -> bytes behind the Storage interface."""

    def __init__(self, objects: dict[str, bytes] | None = None, *, uri: str = "memory://") -> None:
        self.objects: dict[str, bytes] = dict(objects or {})
        self.uri = uri
        self.reads = 0

    def list(self, prefix: str = "", start_after: str | None = None) -> Iterator[str]:
        """Yield stored keys starting with ``prefix``, sorted, after ``start_after``."""
        keys = sorted(k for k in self.objects if k.startswith(prefix) and (start_after is None or k > start_after))
        return iter(keys)

    def read(self, key: str) -> bytes:
        """Return the stored bytes of ``key``."""
        self.reads += 1
        try:
            return self.objects[key]
        except KeyError:
            msg = f"{self.uri}{key} does not exist"
            raise StorageNotFoundError(msg, uri=self.uri + key) from None

    def size(self, key: str) -> int:
        """Return the size of the stored bytes of ``key``."""
        if key not in self.objects:
            self.read(key)  # raises StorageNotFoundError
        return len(self.objects[key])

    def read_range(self, key: str, start: int, length: int) -> bytes:
        """Return a slice of the stored bytes of ``key``."""
        _check_range(key, start, length)
        return self.read(key)[start : start + length]

    def exists(self, key: str = "") -> bool:
        """Return whether ``key`` is stored (with no key: always true)."""
        return not key or key in self.objects

    def write_bytes(self, key: str, data: bytes) -> None:
        """Store ``data`` at ``key``."""
        self.objects[key] = bytes(data)

    def upload_file(self, local_path: str | os.PathLike[str], key: str) -> None:
        """Store the bytes of the local file ``local_path`` at ``key``."""
        self.objects[key] = Path(local_path).read_bytes()

    def sync_dir(self, local_dir: str | os.PathLike[str], prefix: str = "") -> int:
        """Store files of ``local_dir`` that are new or changed since the last call."""
        from ._storage_write import sync_dir

        return sync_dir(self, Path(local_dir), prefix)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: no offset or length read from a file may reach this (2**48 bytes, 256 TiB)
MAX_RANGE = 1 << 48


def _check_range(key: str, start: object, length: object) -> None:
    if start.__class__ is not int or length.__class__ is not int or not 0 <= start < MAX_RANGE or not 0 <= length < MAX_RANGE:  # type: ignore[operator]
        msg = field_error_message("range", f"offset and length ints in [0, 2**48) for {key!r}", (start, length))
        raise ConfigValueError(msg, field="range", value=(start, length))


def open_storage(uri: str | os.PathLike[str], *, client: Any = None) -> LocalStorage | S3Storage:
    """Return the Storage for ``s3://``, ``file://`` or a plain local path.

    Raises:
        ConfigValueError: an unsupported URI scheme or a malformed s3 URI.
    """
    if isinstance(uri, os.PathLike):
        return LocalStorage(uri)
    if not isinstance(uri, str) or not uri:
        msg = field_error_message("path", "a local path, file:// or s3:// URI", uri)
        raise ConfigValueError(msg, field="path", value=uri)
    if uri.startswith("s3://"):
        return S3Storage(uri, client=client)
    if uri.startswith("file://"):
        return LocalStorage(uri[len("file://") :])
    if "://" in uri:
        msg = field_error_message("path", "a local path, file:// or s3:// URI", uri)
        raise ConfigValueError(msg, field="path", value=uri)
    return LocalStorage(uri)


def read_many(
    storage: Storage,
    requests: Sequence[tuple[str, int, int] | str],
    *,
    max_workers: int = 16,
) -> list[bytes]:
    """Fetch several objects or ranges, in parallel for remote stores, in request order.

    Each request is a key (whole object) or ``(key, start, length)``.
    """

    def fetch(req: tuple[str, int, int] | str) -> bytes:
        if isinstance(req, str):
            return storage.read(req)
        return storage.read_range(*req)

    if len(requests) < 4 or isinstance(storage, (LocalStorage, MemoryStorage)):
        return [fetch(r) for r in requests]
    with ThreadPoolExecutor(max_workers=min(max_workers, len(requests))) as pool:
        return list(pool.map(fetch, requests))


