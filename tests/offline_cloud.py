"""The offline cloud of the self-hosted tests: ``serve`` (ml.* types run here) + moto's S3 and CloudWatch Logs.

One fixture body for the v2 tests (tests/e2e, tests/cloud) and the SDK v3 ones (tests/train/sdk3):
the endpoint variables point every client (the test's, the jobs', the rule jobs') at them.
"""

from __future__ import annotations

import types
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest


@contextmanager
def serve_on_moto(moto_server: str, monkeypatch: pytest.MonkeyPatch, *, bucket_prefix: str) -> Iterator[Any]:
    """Yields ``url`` (serve's), ``client`` (its LocalTrainingClient), ``s3``, ``sm`` and a fresh ``bucket``."""
    from sagemaker_debugger_ext.local import LocalTrainingClient
    from sagemaker_debugger_ext.local.api._server import ApiServer

    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto_server)  # the jobs' processes inherit it
    monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDWATCH_LOGS", moto_server)  # the SDKs' log followers
    monkeypatch.setenv("SAGEMAKER_DEBUGGER_EXT_SYNC_SECONDS", "0.3")
    client = LocalTrainingClient(region="us-west-2", settings={"CloudInstanceTypes": True, "StartMonitor": False})
    server = ApiServer(client).start()
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", server.url)
    bucket = f"{bucket_prefix}-{uuid.uuid4().hex[:12]}"
    s3 = boto3.client("s3", region_name="us-west-2")
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    sm = boto3.client("sagemaker", region_name="us-west-2")
    try:
        yield types.SimpleNamespace(url=server.url, client=client, s3=s3, sm=sm, bucket=bucket)
    finally:
        server.stop()
