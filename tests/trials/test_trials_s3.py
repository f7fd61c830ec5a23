"""S3 trials: moto in-process and moto's HTTP server (real wire protocol, ranged GETs)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import numpy as np
import pytest

from sagemaker_debugger_ext._exceptions import StorageNotFoundError
from sagemaker_debugger_ext.format import (
    StepWriter,
    write_collections_file,
    write_training_end,
)
from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.storage import S3Storage, open_storage
from sagemaker_debugger_ext.trials import create_trial

FAST = {"poll_interval_s": 0.01, "wait_timeout_s": 2.0}


def _write_steps(root: Path, steps: range, workers: int = 1) -> None:
    for s in steps:
        for w in range(workers):
            with StepWriter(root, global_step=s, worker=f"worker_{w}", mode=ModeKeys.TRAIN, mode_step=s) as sw:
                sw.write_tensor("layer/w", np.full(300, s * 10 + w, np.float32))
                sw.write_tensor("loss", np.float64(s))


def _upload(client, root: Path, bucket: str, prefix: str) -> None:  # type: ignore[no-untyped-def]
    for p in sorted(root.rglob("*")):
        if p.is_file():
            client.put_object(Bucket=bucket, Key=f"{prefix}/{p.relative_to(root).as_posix()}", Body=p.read_bytes())


@pytest.fixture
def moto_s3() -> Iterator[object]:
    """An in-process moto S3 with one bucket."""
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("s3", region_name="us-west-2")
        client.create_bucket(Bucket="bkt", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
        yield client


def test_s3_trial_in_process(moto_s3, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An S3 trial returns the same steps, workers and values as written, and refreshes."""
    for w in range(2):
        write_collections_file(tmp_path, f"worker_{w}", {}, 2)
    _write_steps(tmp_path, range(3), workers=2)
    _upload(moto_s3, tmp_path, "bkt", "job/debug-output")
    trial = create_trial("s3://bkt/job/debug-output", **FAST)
    assert trial.steps() == [0, 1, 2] and trial.workers() == ["worker_0", "worker_1"]
    w = trial.tensor("layer/w")
    assert w.value(2, worker="worker_1")[0] == 21
    assert {s: v[0] for s, v in w.values().items()} == {0: 0, 1: 10, 2: 20}
    more = tmp_path / "more"
    _write_steps(more, range(3, 5), workers=2)
    write_training_end(more)
    _upload(moto_s3, more, "bkt", "job/debug-output")
    assert trial.steps() == [0, 1, 2, 3, 4] and trial.loaded_all_steps
    assert trial.tensor("loss").value(4).tolist() == [4.0]


def test_s3_listing_uses_start_after(moto_s3) -> None:  # type: ignore[no-untyped-def]
    """Storage.list returns sorted relative keys after start_after, across pages."""
    for i in range(5):
        moto_s3.put_object(Bucket="bkt", Key=f"p/index/000000000/{i:012d}_worker_0.json", Body=b"{}")
    st = open_storage("s3://bkt/p")
    assert isinstance(st, S3Storage)
    keys = list(st.list("index/", start_after="index/000000000/000000000002"))
    assert keys == [f"index/000000000/{i:012d}_worker_0.json" for i in (2, 3, 4)]
    assert st.read_range(keys[0], 1, 1) == b"}"


def test_missing_bucket_is_a_clear_error(moto_s3) -> None:  # type: ignore[no-untyped-def]
    """A bucket that does not exist raises StorageNotFoundError at once (no waiting)."""
    with pytest.raises(StorageNotFoundError, match="does not exist"):
        create_trial("s3://no-such-bucket/x", poll_interval_s=0.01, wait_timeout_s=30)


def test_s3_trial_over_moto_server(moto_server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Over HTTP (AWS_ENDPOINT_URL), values come back through ranged GETs, in parallel."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    client = boto3.client("s3", region_name="us-west-2")
    bucket = f"trial-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    write_collections_file(tmp_path, "worker_0", {}, 1)
    _write_steps(tmp_path, range(12))
    write_training_end(tmp_path)
    _upload(client, tmp_path, bucket, "run")
    trial = create_trial(f"s3://{bucket}/run/", **FAST)
    values = trial.tensor("layer/w").values(mode=ModeKeys.TRAIN)
    assert sorted(values) == list(range(12))
    assert all(v.shape == (300,) and v[0] == s * 10 for s, v in values.items())
    assert trial.tensor("loss").value(11).tolist() == [11.0]


def test_delete_prefix_deletes_only_under_the_prefix(moto_s3) -> None:  # type: ignore[no-untyped-def]
    """smdebug's S3Handler.delete_prefix goes through S3Storage.delete_all: more than one request's
    worth of keys under the prefix are gone, a key beside it stays."""
    from sagemaker_debugger_ext.core.access_layer.s3handler import DeleteRequest, S3Handler

    for i in range(1003):
        moto_s3.put_object(Bucket="bkt", Key=f"run/a/{i:05d}", Body=b"x")
    moto_s3.put_object(Bucket="bkt", Key="other/keep", Body=b"x")
    S3Handler.delete_prefix(delete_request=DeleteRequest(Bucket="bkt", Prefix="run/a"))
    keys = [o["Key"] for o in moto_s3.list_objects_v2(Bucket="bkt").get("Contents", [])]
    assert keys == ["other/keep"]
    assert S3Storage("s3://bkt/other").delete_all() == 1


def test_s3_reads_each_event_file_once(moto_s3, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Every value of a 2-worker trial costs one GET per event file (not one ranged GET per value)."""
    from sagemaker_debugger_ext.trials._trial import Trial

    for w in range(2):
        write_collections_file(tmp_path, f"worker_{w}", {}, 2)
    _write_steps(tmp_path, range(4), workers=2)
    write_training_end(tmp_path)
    _upload(moto_s3, tmp_path, "bkt", "once/debug-output")
    gets: list[str] = []
    client = boto3.client("s3", region_name="us-west-2")
    client.meta.events.register("before-parameter-build.s3.GetObject", lambda params, **_: gets.append(params["Key"]))
    trial = Trial(S3Storage("s3://bkt/once/debug-output", client=client), **FAST)
    names = sorted(trial.tensor_names())
    gets.clear()
    for step in trial.steps():
        for name in names:
            for worker in trial.workers():
                expected = step * 10 + int(worker[-1]) if name == "layer/w" else step
                assert trial.tensor(name).value(step, worker=worker).ravel()[0] == expected
    event_gets = [k for k in gets if "/events/" in k]
    assert len(event_gets) == len(set(event_gets)) == 8, gets
    assert {s: v[0] for s, v in trial.tensor("layer/w").values(worker="worker_1").items()} == {
        0: 1, 1: 11, 2: 21, 3: 31}  # fmt: skip
