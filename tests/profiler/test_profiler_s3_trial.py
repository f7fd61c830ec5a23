"""A profiler rule run standalone against an s3:// profiler folder (moto's HTTP server)."""

from __future__ import annotations

import json
import uuid

import boto3

from sagemaker_debugger_ext.profiler import ProfilerTrial
from sagemaker_debugger_ext.profiler.rules import run_rule


def _upload(local_root, bucket: str, prefix: str) -> None:
    s3 = boto3.client("s3")
    for path in sorted(local_root.rglob("*")):
        if path.is_file():
            s3.upload_file(str(path), bucket, f"{prefix}/{path.relative_to(local_root).as_posix()}")


def test_rule_over_s3_profiler_folder(profiler_data, tmp_path, moto_server, monkeypatch):
    """StepOutlier reads system and framework files from s3:// and sees the end marker there."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    bucket = f"prof-{uuid.uuid4().hex[:12]}"
    boto3.client("s3").create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    profiler_data.system(30)
    profiler_data.steps([0.1] * 60 + [3.0] * 4)
    uri = f"s3://{bucket}/job/profiler-output"
    _upload(profiler_data.root, bucket, "job/profiler-output")
    trial = ProfilerTrial(uri, cache_dir=tmp_path / "cache")
    assert len(trial.step_events()) == 64 and not trial.training_ended()
    boto3.client("s3").put_object(Bucket=bucket, Key="job/profiler-output/training_job_end.ts", Body=b"")
    assert trial.training_ended()
    status = tmp_path / "status.json"
    code = run_rule(uri, "StepOutlier", {"n_outliers": "2", "scan_interval_us": "5000000"}, tmp_path / "out", status)
    assert code == 0
    body = json.loads(status.read_text())
    assert body["RuleEvaluationStatus"] == "IssuesFound", body
