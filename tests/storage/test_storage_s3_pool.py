"""Parallel S3 reads keep their connections: the client's pool holds read_many's threads."""

from __future__ import annotations

import logging
import uuid

import boto3
import pytest

from sagemaker_debugger_ext.storage import open_storage, read_many
from sagemaker_debugger_ext.storage._retry import S3_PARALLEL_READS, S3_POOL_CONNECTIONS


def test_parallel_reads_do_not_overflow_the_connection_pool(
    moto_server: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """40 objects read by read_many's 16 threads through one client: botocore's default pool (10)
    discarded connections ("Connection pool is full"), each new one a new TCP handshake."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto_server)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    bucket = f"pool-{uuid.uuid4().hex[:12]}"
    s3 = boto3.client("s3", region_name="us-west-2")
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    keys = [f"k/{i:03d}" for i in range(40)]
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode() * 1000)
    store = open_storage(f"s3://{bucket}/")
    assert store.client.meta.config.max_pool_connections == S3_POOL_CONNECTIONS >= S3_PARALLEL_READS
    with caplog.at_level(logging.WARNING, logger="urllib3.connectionpool"):
        for _ in range(3):
            assert read_many(store, keys) == [key.encode() * 1000 for key in keys]
    assert not [r for r in caplog.records if "pool is full" in r.getMessage()]
