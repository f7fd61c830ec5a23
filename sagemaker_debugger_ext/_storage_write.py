"""The write side of :mod:`sagemaker_debugger_ext.storage`: uploads, sync, retries.

Kept in its own module (one concept: getting bytes to a destination reliably) and used by
the ``Storage`` classes' ``write_bytes`` / ``upload_file`` / ``sync_dir`` methods.
Transient failures are retried with exponential backoff; what is still failing after the
last attempt becomes :class:`StorageUnreachableError`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import attrs

from ._exceptions import StorageError, StorageNotFoundError, StorageUnreachableError
from .format._files import atomic_copy

__all__ = [
    "RetryPolicy",
    "changed_files",
    "copy_file_atomic",
    "local_upload_file",
    "s3_client",
    "s3_upload_file",
    "s3_write_bytes",
    "sync_dir",
    "with_retries",
]

T = TypeVar("T")
_NOT_FOUND_CODES = frozenset({"NoSuchBucket", "NoSuchKey", "404", "NotFound"})
_TRANSIENT_CODES = frozenset(
    {"SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "InternalError", "ServiceUnavailable", "500", "503"}
)


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How often and how patiently to retry a transient failure."""

    attempts: int = attrs.field(default=4, validator=attrs.validators.ge(1))
    base_delay_s: float = attrs.field(default=0.25, validator=attrs.validators.ge(0))
    max_delay_s: float = attrs.field(default=4.0, validator=attrs.validators.ge(0))

    def delays(self) -> Iterator[float]:
        """Sleep before attempt 2, 3, ...: exponential backoff, capped."""
        for i in range(self.attempts - 1):
            yield min(self.max_delay_s, self.base_delay_s * (2**i))


def _classify(exc: BaseException) -> str:
    """'transient', 'notfound' or 'fatal' for an exception raised by an operation."""
    from botocore.exceptions import BotoCoreError, ClientError

    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        if code in _NOT_FOUND_CODES:
            return "notfound"
        if code in _TRANSIENT_CODES or status >= 500:
            return "transient"
        return "fatal"
    if isinstance(exc, BotoCoreError | ConnectionError | TimeoutError):
        return "transient"
    return "fatal"


def with_retries(op: Callable[[], T], *, uri: str, what: str, policy: RetryPolicy | None = None) -> T:
    """Run ``op``, retrying transient S3/network failures with backoff.

    Raises:
        StorageUnreachableError: still failing after the last attempt.
        StorageNotFoundError: the bucket or object does not exist.
        StorageError: any other failure (not retried).
    """
    from botocore.exceptions import BotoCoreError, ClientError

    pol = policy or RetryPolicy()
    delays = pol.delays()
    attempt = 0
    while True:
        attempt += 1
        try:
            return op()
        except (BotoCoreError, ClientError, OSError) as exc:
            kind = _classify(exc)
            if kind == "notfound":
                msg = f"{what} failed: {uri} does not exist ({exc})"
                raise StorageNotFoundError(msg, uri=uri) from exc
            if kind == "fatal" and not isinstance(exc, ConnectionError | TimeoutError):
                msg = f"{what} failed for {uri}: {exc}"
                raise StorageError(msg, uri=uri) from exc
            delay = next(delays, None)
            if delay is None:
                msg = f"{what} failed for {uri} after {attempt} attempts: {exc}"
                raise StorageUnreachableError(msg, uri=uri) from exc
            time.sleep(delay)


def s3_client() -> Any:
    """A boto3 S3 client; honours ``AWS_ENDPOINT_URL(_S3)``; we do the retrying."""
    import boto3
    from botocore.config import Config

    cfg = Config(retries={"max_attempts": 1, "mode": "standard"}, connect_timeout=3, read_timeout=60)
    return boto3.session.Session().client("s3", config=cfg)


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


def changed_files(local_dir: Path, manifest: dict[str, tuple[int, int]]) -> Iterator[tuple[str, Path, tuple[int, int]]]:
    """Files under ``local_dir`` that are new or changed since ``manifest`` (key -> (size, mtime_ns)).

    Dot-files and ``*.tmp`` / ``*.part`` files (being written) are skipped. Keys use ``/``.
    """
    for dirpath, dirnames, filenames in os.walk(local_dir):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fname in sorted(filenames):
            if fname.startswith(".") or fname.endswith((".tmp", ".part")):
                continue
            path = Path(dirpath) / fname
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            key = path.relative_to(local_dir).as_posix()
            sig = (st.st_size, st.st_mtime_ns)
            if manifest.get(key) != sig:
                yield key, path, sig



def sync_dir(storage: Any, local_dir: Path, prefix: str = "") -> int:
    """Upload the files of ``local_dir`` that are new or changed since the last call.

    ``storage`` is a Storage with ``upload_file``; what was uploaded is remembered on it
    (per local folder), so repeated calls are incremental. Returns the number of files.
    """
    manifests: dict[str, dict[str, tuple[int, int]]] = storage.__dict__.setdefault("_sync_manifests", {})
    manifest = manifests.setdefault(f"{Path(local_dir).resolve()}|{prefix}", {})
    count = 0
    for key, path, sig in _steps_in_order(list(changed_files(Path(local_dir), manifest))):
        event = _event_of_index(key)
        if event is not None and event not in manifest and (Path(local_dir) / event).exists():
            continue  # an index goes after its event file (it appeared while we walked)
        dest_key = f"{prefix.rstrip('/')}/{key}" if prefix else key
        try:
            storage.upload_file(path, dest_key)
        except StorageError:
            if path.exists():
                raise
            continue  # removed while we walked (a writer's temporary file)
        manifest[key] = sig
        count += 1
    return count


def _steps_in_order(items: list[tuple[str, Path, tuple[int, int]]]) -> list[tuple[str, Path, tuple[int, int]]]:
    """Each index file right after its event file: a destination that fills up part way
    holds whole steps (event + index), not all events and no index."""
    by_event: dict[str, tuple[str, Path, tuple[int, int]]] = {}
    for item in items:
        event = _event_of_index(item[0])
        if event is not None:
            by_event[event] = item
    keys = {item[0] for item in items}
    paired = {item[0] for event, item in by_event.items() if event in keys}
    out: list[tuple[str, Path, tuple[int, int]]] = []
    for item in items:
        if item[0] in paired:
            continue
        out.append(item)
        follower = by_event.get(item[0])
        if follower is not None and follower[0] in paired:
            out.append(follower)
    return out


def _event_of_index(key: str) -> str | None:
    """The event file of a trial's index file ``key`` (any folder depth), else None."""
    from .format._layout import event_key, parse_index_key

    if not key.endswith(".json") or "index/" not in key:
        return None
    parsed = parse_index_key(key)
    if parsed is None:
        return None
    return key[: key.rindex("index/")] + event_key(*parsed)


def local_upload_file(local_path: Path, target: Path) -> None:
    """Copy ``local_path`` to ``target`` atomically, as a StorageError on failure."""
    try:
        copy_file_atomic(Path(local_path), target)
    except OSError as exc:
        msg = f"copy of {local_path} to {target} failed: {exc}"
        raise StorageError(msg, uri=str(target)) from exc
