"""Opening a store by URI, and reading many objects or ranges at once."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .._exceptions import (
    ConfigValueError,
    field_error_message,
)
from ._base import Storage
from ._local import LocalStorage
from ._memory import MemoryStorage
from ._retry import S3_PARALLEL_READS
from ._s3 import S3Storage

__all__ = ["open_storage", "read_many"]


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
    max_workers: int = S3_PARALLEL_READS,
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
