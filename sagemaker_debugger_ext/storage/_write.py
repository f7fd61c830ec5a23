"""Getting bytes to a destination reliably: S3 uploads and local atomic copies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._exceptions import (
    StorageError,
)
from ..format._files import atomic_copy
from ._retry import RetryPolicy, with_retries

__all__ = ["copy_file_atomic", "local_upload_file", "s3_upload_file", "s3_write_bytes"]


def s3_upload_file(client: Any, bucket: str, key: str, path: Path, *, policy: RetryPolicy | None = None) -> None:
    """Upload one local file to ``s3://bucket/key`` (multipart for big files)."""
    uri = f"s3://{bucket}/{key}"
    with_retries(lambda: client.upload_file(str(path), bucket, key), uri=uri, what="upload", policy=policy)


def s3_write_bytes(client: Any, bucket: str, key: str, data: bytes, *, policy: RetryPolicy | None = None) -> None:
    """Put ``data`` at ``s3://bucket/key``."""
    uri = f"s3://{bucket}/{key}"
    with_retries(lambda: client.put_object(Bucket=bucket, Key=key, Body=data), uri=uri, what="write", policy=policy)


def copy_file_atomic(src: Path, dest: Path) -> None:
    """Copy ``src`` to ``dest`` through a temporary file and a rename."""
    atomic_copy(src, dest)


def local_upload_file(local_path: Path, target: Path) -> None:
    """Copy ``local_path`` to ``target`` atomically, as a StorageError on failure."""
    try:
        copy_file_atomic(Path(local_path), target)
    except OSError as exc:
        msg = f"copy of {local_path} to {target} failed: {exc}"
        raise StorageError(msg, uri=str(target)) from exc
