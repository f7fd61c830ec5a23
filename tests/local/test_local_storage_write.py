"""The storage write side: upload, incremental sync, retries with backoff, clear errors."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from sagemaker_debugger_ext._exceptions import StorageError, StorageUnreachableError
from sagemaker_debugger_ext.storage import MemoryStorage, RetryPolicy, open_storage, with_retries


def _tree(root: Path) -> None:
    (root / "a").mkdir(parents=True)
    (root / "a" / "x.bin").write_bytes(b"x1")
    (root / "top.json").write_text("{}")
    (root / "a" / ".hidden.tmp").write_text("partial")
    (root / "a" / "y.tmp").write_text("partial")


def test_file_sync_is_incremental(tmp_path: Path) -> None:
    """sync_dir copies new/changed files only, skipping temporary files."""
    src, dest = tmp_path / "src", tmp_path / "dest"
    _tree(src)
    store = open_storage(dest.as_uri())
    assert store.sync_dir(src) == 2
    assert (dest / "a" / "x.bin").read_bytes() == b"x1" and not (dest / "a" / "y.tmp").exists()
    assert store.sync_dir(src) == 0
    (src / "a" / "x.bin").write_bytes(b"x22")
    os.utime(src / "a" / "x.bin", ns=(time.time_ns(), time.time_ns() + 10**9))
    assert store.sync_dir(src, "pre") == 2  # new prefix: a separate manifest
    assert store.sync_dir(src) == 1
    assert (dest / "a" / "x.bin").read_bytes() == b"x22"


def test_memory_storage_sync(tmp_path: Path) -> None:
    """MemoryStorage implements the same write side."""
    _tree(tmp_path / "src")
    mem = MemoryStorage()
    assert mem.sync_dir(tmp_path / "src") == 2
    assert sorted(mem.objects) == ["a/x.bin", "top.json"]


def test_s3_upload_and_sync_in_process_moto(tmp_path: Path) -> None:
    """Upload and sync to s3:// against moto in-process."""
    with mock_aws():
        boto3.client("s3", region_name="us-west-2").create_bucket(
            Bucket="sync-b", CreateBucketConfiguration={"LocationConstraint": "us-west-2"}
        )
        _tree(tmp_path / "src")
        store = open_storage("s3://sync-b/job/debug-output")
        assert store.sync_dir(tmp_path / "src") == 2
        store.upload_file(tmp_path / "src" / "top.json", "again.json")
        assert sorted(store.list()) == ["a/x.bin", "again.json", "top.json"]
        assert store.read("a/x.bin") == b"x1"


def test_unreachable_endpoint_retries_then_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A closed port: every attempt fails, then StorageUnreachableError names the URI."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    (tmp_path / "f").write_text("x")
    store = open_storage("s3://nowhere/p")
    with pytest.raises(StorageUnreachableError, match=r"s3://nowhere/p/k.*after 4 attempts"):
        store.upload_file(tmp_path / "f", "k")


def test_with_retries_backoff_and_fatal() -> None:
    """Transient errors are retried with growing delays; other errors are not retried."""
    calls: list[float] = []

    def flaky() -> str:
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise ConnectionError("reset")
        return "ok"

    assert with_retries(flaky, uri="s3://b/k", what="upload", policy=RetryPolicy(base_delay_s=0.01)) == "ok"
    assert len(calls) == 3 and calls[2] - calls[1] >= calls[1] - calls[0]
    assert list(RetryPolicy(attempts=4, base_delay_s=0.25, max_delay_s=0.6).delays()) == [0.25, 0.5, 0.6]

    def denied() -> None:
        raise PermissionError("denied")

    with pytest.raises(StorageError, match="denied"):
        with_retries(denied, uri="file:///x", what="copy")
