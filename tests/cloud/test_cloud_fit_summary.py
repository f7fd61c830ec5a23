"""fit()'s closing summary and ``jobs describe`` for self-hosted jobs, against ``serve`` and moto's S3 server (issue 30).

The training job ends at once and saves nothing, so the rule job makes its final evaluation at
its first poll (an ``Error`` naming the missing collection files): the whole run takes seconds. The rules' verdicts on real data are covered by
tests/e2e/test_e2e_self_hosted.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from offline_cloud import serve_on_moto

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SCRIPTS = Path(__file__).resolve().parent / "scripts"
ROLE = "arn:aws:iam::123456789012:role/training"


@pytest.fixture
def cloud(moto_server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Any]:
    """``serve`` (ml.* types) + moto's S3 and CloudWatch Logs + a fresh bucket."""
    with serve_on_moto(moto_server, monkeypatch, bucket_prefix="summary") as cloud:
        cloud.tmp = tmp_path
        yield cloud


def _session(cloud: Any, **kwargs: Any) -> Any:
    from sagemaker_debugger_ext.cloud import DebuggerSession

    boto_session = boto3.Session(region_name="us-west-2")
    return DebuggerSession(
        boto_session=boto_session,
        sagemaker_client=boto_session.client("sagemaker"),
        default_bucket=cloud.bucket,
        rule_poll_seconds=0.3,
        **kwargs,
    )


def _rules() -> list[Any]:
    from sagemaker.debugger import Rule, rule_configs

    return [Rule.sagemaker(rule_configs.loss_not_decreasing())]


def _check_summary(text: str, cloud: Any, job: str) -> None:
    lines = text.splitlines()
    rule = [line for line in lines if line.lstrip().startswith("LossNotDecreasing")]
    assert rule, text
    # Printed after the rule job's final evaluation, with its details: the script saved nothing.
    assert rule[0].split()[1] == "Error", text
    assert "MissingCollectionFiles" in rule[0], text
    out = f"s3://{cloud.bucket}/out/{job}"
    assert f"Debug output:       {out}/debug-output" in lines, text
    assert f"Rule output:        {out}/rule-output" in lines, text
    assert f"{job}: Completed" in text, text


def test_our_estimator_fit_prints_the_self_hosted_rules(cloud: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Estimator(debugger_backend="self-hosted").fit() ends with local mode's summary of the rule jobs."""
    from sagemaker_debugger_ext import Estimator

    est = Estimator(
        image_uri="123456789012.dkr.ecr.us-west-2.amazonaws.com/pytorch:latest", role=ROLE,
        instance_count=1, instance_type="ml.m5.xlarge", entry_point="train_quick.py",
        source_dir=str(SCRIPTS), output_path=f"s3://{cloud.bucket}/out",
        sagemaker_session=_session(cloud), rules=_rules(), debugger_backend="self-hosted",
    )  # fmt: skip
    est.fit(job_name="summary-ours", wait=False)
    cloud.client.wait("summary-ours", timeout_s=120)  # the SDK's log follower describes every 30 s while running
    capsys.readouterr()
    est.latest_training_job.wait(logs="All")
    _check_summary(capsys.readouterr().out, cloud, "summary-ours")
    _check_cli(cloud, capsys, "summary-ours")


def _check_cli(cloud: Any, capsys: pytest.CaptureFixture[str], job: str) -> None:
    """``jobs describe`` through the endpoint shows the rule statuses in the service's shape, and as a table."""
    from sagemaker_debugger_ext.cli import main

    assert main(["jobs", "describe", job, "--endpoint-url", cloud.url]) == 0
    described = json.loads(capsys.readouterr().out)
    (status,) = described["DebugRuleEvaluationStatuses"]
    assert status["RuleConfigurationName"] == "LossNotDecreasing"
    assert status["RuleEvaluationStatus"] == "Error"
    assert re.match(rf"^arn:aws:sagemaker:us-west-2:\d{{12}}:processing-job/{job}-lossnotdecreasing-[0-9a-f]{{8}}$",
                    status["RuleEvaluationJobArn"]), status  # fmt: skip
    assert "MissingCollectionFiles" in status["StatusDetails"]
    assert main(["jobs", "describe", job, "--sagemaker", "--rules"]) == 0  # $AWS_ENDPOINT_URL_SAGEMAKER
    table = capsys.readouterr().out
    assert "LossNotDecreasing" in table and "Error" in table and job in table, table
    _check_report(cloud, capsys, job, status)


def _check_report(cloud: Any, capsys: pytest.CaptureFixture[str], job: str, status: dict[str, Any]) -> None:
    """``report --endpoint-url``: the self-hosted rules from describe() and their rule output on S3."""
    from sagemaker_debugger_ext.cli import main

    out = Path(cloud.tmp) / "report"
    assert main(["report", job, "--endpoint-url", cloud.url, "--out", str(out)]) == 0
    (written,) = capsys.readouterr().out.split()
    page = Path(written).read_text()
    assert Path(written) == out / "job-report.html"
    assert status["RuleEvaluationJobArn"] in page, page
    assert "MissingCollectionFiles" in page and 'class="status-Error"' in page, page
    # The rule's rule-report.json was read from its rule output on S3 (no findings: it saw no data).
    assert f"s3://{cloud.bucket}/out/{job}/rule-output/LossNotDecreasing</td><td>0</td>" in page, page
    assert main(["report", "no-such-job", "--sagemaker"]) == 2
    assert "Requested resource not found" in capsys.readouterr().err


def test_jobs_describe_of_an_unknown_job_says_so(cloud: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The service's answer for an unknown job reaches the user, exit status 2."""
    from sagemaker_debugger_ext.cli import main

    assert main(["jobs", "describe", "no-such-job", "--endpoint-url", cloud.url]) == 2
    err = capsys.readouterr().err
    assert "no-such-job" in err and "Requested resource not found" in err, err


def test_sdk_estimator_on_a_debugger_session_prints_the_self_hosted_rules(
    cloud: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """An SDK estimator on DebuggerSession(debugger_backend="self-hosted"): the same summary through logs_for_job."""
    from sagemaker.estimator import Estimator

    est = Estimator(
        image_uri="123456789012.dkr.ecr.us-west-2.amazonaws.com/pytorch:latest", role=ROLE,
        instance_count=1, instance_type="ml.m5.xlarge", entry_point="train_quick.py",
        source_dir=str(SCRIPTS), output_path=f"s3://{cloud.bucket}/out",
        sagemaker_session=_session(cloud, debugger_backend="self-hosted"), rules=_rules(),
    )  # fmt: skip
    est.fit(job_name="summary-sdk", wait=False)
    cloud.client.wait("summary-sdk", timeout_s=120)
    capsys.readouterr()
    est.latest_training_job.wait(logs="All")
    _check_summary(capsys.readouterr().out, cloud, "summary-sdk")


def test_a_job_without_self_hosted_rules_has_no_self_hosted_summary(cloud: Any) -> None:
    """No manifest, no summary: the SDK's own lines are all a job the backend did not start prints."""
    from sagemaker.estimator import Estimator

    from sagemaker_debugger_ext.cloud._self_hosted import self_hosted_fit_summary

    session = _session(cloud)
    est = Estimator(
        image_uri="123456789012.dkr.ecr.us-west-2.amazonaws.com/pytorch:latest", role=ROLE,
        instance_count=1, instance_type="ml.m5.xlarge", entry_point="train_quick.py",
        source_dir=str(SCRIPTS), output_path=f"s3://{cloud.bucket}/out",
        sagemaker_session=session, debugger_hook_config=False, disable_profiler=True,
    )  # fmt: skip
    est.fit(job_name="summary-none", wait=False)
    cloud.client.wait("summary-none", timeout_s=120)
    summary = self_hosted_fit_summary(
        "summary-none", sagemaker_client=session.sagemaker_client, s3_client=session.s3_client
    )
    assert summary is None
