"""An ``s3://`` prefix as a store (boto3; honours ``AWS_ENDPOINT_URL``)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._exceptions import (
    ConfigValueError,
    StorageError,
    StorageNotFoundError,
    field_error_message,
)
from ._base import check_range
from ._retry import s3_client, with_retries
from ._sync import sync_dir
from ._write import s3_upload_file, s3_write_bytes

__all__ = ["S3Storage", "split_s3_uri"]


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
                self._client = s3_client()
            return self._client

    def _call(self, what: str, key: str, op: Any) -> Any:

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
        check_range(key, start, length)
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

        s3_write_bytes(self.client, self.bucket, self.prefix + key, data)

    def upload_file(self, local_path: str | os.PathLike[str], key: str) -> None:
        """Upload the local file ``local_path`` to ``key`` (retries with backoff)."""

        s3_upload_file(self.client, self.bucket, self.prefix + key, Path(local_path))

    def delete_all(self) -> int:
        """Delete every object under the prefix (1,000 a request, as S3 allows); returns how many.

        Raises:
            StorageError: S3 refused to delete a key (names the key and S3's message).
        """
        keys = [self.prefix + k for k in self.list("")]
        for i in range(0, len(keys), 1000):
            chunk = [{"Key": k} for k in keys[i : i + 1000]]
            resp = self._call(
                "delete", "", lambda c=chunk: self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": c})
            )
            for err in (resp or {}).get("Errors", [])[:1]:
                msg = f"S3 did not delete s3://{self.bucket}/{err.get('Key')}: {err.get('Code')} {err.get('Message')}"
                raise StorageError(msg, uri=f"s3://{self.bucket}/{err.get('Key')}")
        return len(keys)

    def sync_dir(self, local_dir: str | os.PathLike[str], prefix: str = "") -> int:
        """Upload files of ``local_dir`` that are new or changed since the last call; returns how many."""

        return sync_dir(self, Path(local_dir), prefix)


# --- in-memory fake --------------------------------------------------------------------------
