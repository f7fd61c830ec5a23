"""Rules against ``s3://`` trials and custom rule sources (moto's real HTTP server)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import boto3
import pytest

from sagemaker_debugger_ext.rules import EvaluationStatus, RunRequest, run_rule

RULE_SRC = """
from sagemaker_debugger_ext.rules import Rule

class LossAbove(Rule):
    def __init__(self, base_trial, limit="0"):
        super().__init__(base_trial)
        self.limit = float(limit)

    def invoke_at_step(self, step):
        t = self.base_trial.tensor("CrossEntropyLoss_output_0")
        return step in t.steps() and float(t.value(step)) > self.limit
"""


@pytest.fixture
def bucket(moto_server: str, monkeypatch: pytest.MonkeyPatch, smdebug_runs: Path) -> str:
    """A bucket holding the smdebug sample run under ``job/debug-output`` and a rule source."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    name = f"rules-{uuid.uuid4().hex[:10]}"
    s3 = boto3.client("s3", region_name="us-west-2")
    s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    root = smdebug_runs / "sample_run"
    for path in root.rglob("*"):
        if path.is_file():
            s3.upload_file(str(path), name, f"job/debug-output/{path.relative_to(root).as_posix()}")
    s3.put_object(Bucket=name, Key="rules/loss_above.py", Body=RULE_SRC.encode())
    return name


def test_builtin_rule_on_s3_trial(bucket: str, tmp_path: Path) -> None:
    """LossNotDecreasing reads the S3 debug-output of a (smdebug-written) job."""
    req = RunRequest(
        trial_path=f"s3://{bucket}/job/debug-output",
        rule_name="LossNotDecreasing",
        parameters={"rule_to_invoke": "LossNotDecreasing", "num_steps": "1", "mode": "TRAIN"},
        output_dir=tmp_path / "out",
        status_file=tmp_path / "status.json",
    )
    outcome = run_rule(req)
    assert outcome.status in (EvaluationStatus.ISSUES_FOUND, EvaluationStatus.NO_ISSUES_FOUND), outcome.details
    report = json.loads((tmp_path / "out" / "rule-report.json").read_text())
    assert (
        report["StepsEvaluated"] >= 4
        and json.loads((tmp_path / "status.json").read_text())["RuleEvaluationStatus"] == outcome.status.value
    )


def test_custom_rule_source_from_s3(bucket: str, tmp_path: Path) -> None:
    """A custom rule downloaded from s3:// runs against the S3 trial and fires at step 0."""
    req = RunRequest(
        trial_path=f"s3://{bucket}/job/debug-output",
        rule_name="LossAbove",
        parameters={
            "source_s3_uri": f"s3://{bucket}/rules/loss_above.py",
            "rule_to_invoke": "LossAbove",
            "limit": "0.01",
        },
        output_dir=tmp_path / "out",
    )
    outcome = run_rule(req)
    assert outcome.status is EvaluationStatus.ISSUES_FOUND, outcome.details
    assert outcome.fired_steps[0] == 0
