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
from polling import wait_until

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
    # The job report, then the profiler report when the system monitor wrote anything (SDK default: profiled).
    written, *profiler = capsys.readouterr().out.split()
    assert profiler in ([], [str(out / "profiler-report.html")]), profiler
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


def test_training_job_request_is_what_self_hosted_fit_sends(cloud: Any) -> None:
    """training_job_request() of a self-hosted estimator is the request fit() sends (no Debugger field, the
    launcher and its bundle), and it uploads nothing."""
    from sagemaker.debugger import ProfilerRule, rule_configs

    from sagemaker_debugger_ext import Estimator
    from sagemaker_debugger_ext.cloud._bundle import LAUNCH_SCRIPT

    est = Estimator(
        image_uri="123456789012.dkr.ecr.us-west-2.amazonaws.com/pytorch:latest", role=ROLE,
        instance_count=1, instance_type="ml.m5.xlarge", entry_point="train_quick.py",
        source_dir=str(SCRIPTS), output_path=f"s3://{cloud.bucket}/out", hyperparameters={"lr": "0.1"},
        sagemaker_session=_session(cloud), rules=[*_rules(), ProfilerRule.sagemaker(rule_configs.CPUBottleneck())],
        debugger_backend="self-hosted",
    )  # fmt: skip
    request = est.training_job_request(job_name="request-shown")
    s3 = boto3.client("s3", region_name="us-west-2")
    assert "Contents" not in s3.list_objects_v2(Bucket=cloud.bucket)
    debugger = ("DebugHookConfig", "DebugRuleConfigurations", "ProfilerConfig", "ProfilerRuleConfigurations")
    assert [k for k in debugger if k in request] == []
    hps = request["HyperParameters"]
    assert json.loads(hps["sagemaker_program"]) == LAUNCH_SCRIPT
    bundle = f"s3://{cloud.bucket}/out/request-shown/debugger-self-hosted/sourcedir.tar.gz"
    assert json.loads(hps["sagemaker_submit_directory"]) == bundle
    assert hps["lr"] == '"0.1"'
    est.fit(job_name="request-shown", wait=False)
    sent = cloud.client.store.read_request("request-shown")
    assert json.loads(json.dumps(sent, default=str)) == json.loads(json.dumps(request, default=str))
    assert s3.head_object(Bucket=cloud.bucket, Key=bundle.split("/", 3)[3])["ContentLength"] > 0
    cloud.client.wait("request-shown", timeout_s=120)


def test_report_of_a_self_hosted_job_reads_its_profiler_output_from_s3(
    cloud: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """``report --endpoint-url`` of a profiled self-hosted job: the profiler report drawn from the S3 profiler
    output, and the profiler rule's findings read from its rule output (not "not found")."""
    from sagemaker.debugger import ProfilerConfig, ProfilerRule, rule_configs

    from sagemaker_debugger_ext import Estimator
    from sagemaker_debugger_ext.cli import main

    est = Estimator(
        image_uri="123456789012.dkr.ecr.us-west-2.amazonaws.com/pytorch:latest", role=ROLE,
        instance_count=1, instance_type="ml.m5.xlarge", entry_point="train_quick.py",
        source_dir=str(SCRIPTS), output_path=f"s3://{cloud.bucket}/out", hyperparameters={"seconds": "4"},
        sagemaker_session=_session(cloud), rules=[ProfilerRule.sagemaker(rule_configs.CPUBottleneck())],
        profiler_config=ProfilerConfig(system_monitor_interval_millis=100), debugger_backend="self-hosted",
    )  # fmt: skip
    est.fit(job_name="profiled-report", wait=False)
    cloud.client.wait("profiled-report", timeout_s=180)
    sm = boto3.client("sagemaker", region_name="us-west-2")
    (name,) = [
        s["ProcessingJobName"]
        for s in sm.list_processing_jobs(NameContains="profiled-report")["ProcessingJobSummaries"]
    ]
    wait_until(lambda: sm.describe_processing_job(ProcessingJobName=name)["ProcessingJobStatus"] != "InProgress",
               timeout_s=180, what="the CPUBottleneck rule job to end")  # fmt: skip
    out = Path(cloud.tmp) / "profiled"
    capsys.readouterr()
    assert main(["report", "profiled-report", "--endpoint-url", cloud.url, "--out", str(out)]) == 0
    written = capsys.readouterr().out.split()
    assert written == [str(out / "job-report.html"), str(out / "profiler-report.html")], written
    assert list((out / "profiler-data" / "system").rglob("*.json")), "the S3 profiler data was not read"
    profiler_page = (out / "profiler-report.html").read_text()
    assert "CPUBottleneck" in profiler_page, profiler_page[:2000]
    page = (out / "job-report.html").read_text()
    row = re.search(r"<td>CPUBottleneck</td><td>arn:aws:sagemaker:[^<]+</td><td>([^<]+)</td><td>([^<]+)</td>", page)
    assert row is not None, page
    assert row.group(1) == f"s3://{cloud.bucket}/out/profiled-report/rule-output/CPUBottleneck"
    assert re.fullmatch(r"triggered \d+ times, \d+ violations in [1-9]\d* datapoints", row.group(2)), row.group(2)
