"""Retries with exponential backoff for remote stores; what still fails becomes StorageUnreachableError."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import attrs

from .._exceptions import (
    StorageError,
    StorageNotFoundError,
    StorageUnreachableError,
)

__all__ = ["S3_PARALLEL_READS", "S3_POOL_CONNECTIONS", "RetryPolicy", "s3_client", "with_retries"]


T = TypeVar("T")
_NOT_FOUND_CODES = frozenset({"NoSuchBucket", "NoSuchKey", "404", "NotFound"})
_TRANSIENT_CODES = frozenset(
    {
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "RequestTimeout",
        "InternalError",
        "ServiceUnavailable",
        "500",
        "503",
    }
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


S3_PARALLEL_READS = 16  # read_many's threads on a remote store
S3_POOL_CONNECTIONS = 2 * S3_PARALLEL_READS  # and room for a second reader or the sync on the same client


def s3_client() -> Any:
    """A boto3 S3 client; honours ``AWS_ENDPOINT_URL(_S3)``; we do the retrying."""
    import boto3  # storage stays light: boto3/botocore load with the first s3:// access
    from botocore.config import Config

    cfg = Config(
        retries={"max_attempts": 1, "mode": "standard"},
        connect_timeout=3,
        read_timeout=60,
        max_pool_connections=S3_POOL_CONNECTIONS,  # read_many's threads each keep a connection (default 10)
    )
    return boto3.session.Session().client("s3", config=cfg)
