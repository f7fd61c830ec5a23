"""The storage interface and the range check every store applies."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from .._exceptions import (
    ConfigValueError,
    field_error_message,
)

__all__ = ["MAX_RANGE", "Storage", "check_range"]


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


#: no offset or length read from a file may reach this (2**48 bytes, 256 TiB)
MAX_RANGE = 1 << 48


def check_range(key: str, start: object, length: object) -> None:
    if (
        start.__class__ is not int
        or length.__class__ is not int
        or not 0 <= start < MAX_RANGE
        or not 0 <= length < MAX_RANGE
    ):
        msg = field_error_message("range", f"offset and length ints in [0, 2**48) for {key!r}", (start, length))
        raise ConfigValueError(msg, field="range", value=(start, length))
