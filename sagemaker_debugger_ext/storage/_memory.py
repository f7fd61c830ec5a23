"""The in-memory store tests use instead of mocks."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from .._exceptions import (
    StorageNotFoundError,
)
from ._base import check_range
from ._sync import sync_dir

__all__ = ["MemoryStorage"]


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
        check_range(key, start, length)
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

        return sync_dir(self, Path(local_dir), prefix)
