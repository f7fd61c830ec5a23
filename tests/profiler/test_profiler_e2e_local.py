"""A local job with ProfilerConfig(100 ms) and ProfilerReport: metrics and report at SageMaker's paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_profiler_report_html import assert_images_valid

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SCRIPTS = Path(__file__).resolve().parent / "scripts"
ROLE = "arn:aws:iam::123456789012:role/local"


def test_local_job_profiler_metrics_and_report(tmp_path, monkeypatch):
    """System metrics under <out>/<job>/profiler-output/system, report under rule-output/ProfilerReport."""
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    from sagemaker.debugger import (
        DebuggerHookConfig,
        ProfilerConfig,
        ProfilerRule,
        rule_configs,
    )
    from sagemaker.estimator import Estimator

    from sagemaker_debugger_ext.local import LocalSession

    out = (tmp_path / "out").as_uri()
    est = Estimator(
        image_uri="local-image", role=ROLE, instance_count=1, instance_type="local",
        entry_point="train_profiled.py", source_dir=str(SCRIPTS), sagemaker_session=LocalSession(),
        output_path=out, debugger_hook_config=DebuggerHookConfig(s3_output_path=out),
        profiler_config=ProfilerConfig(system_monitor_interval_millis=100),
        rules=[ProfilerRule.sagemaker(rule_configs.ProfilerReport(StepOutlier_n_outliers=1, StepOutlier_stddev=2))],
    )  # fmt: skip
    est.fit(job_name="profiled-job", logs="None")
    job = tmp_path / "out" / "profiled-job"
    desc = est.latest_training_job.describe()
    assert desc["TrainingJobStatus"] == "Completed", desc.get("FailureReason")
    files = sorted((job / "profiler-output" / "system" / "incremental").glob("*/*.algo-1.json"))
    assert files
    stamps = []
    for path in files:
        for line in path.read_text().splitlines():
            obj = json.loads(line)
            assert obj["NodeId"] == "algo-1" and {"Name", "Dimension", "Value", "Timestamp"} <= set(obj)
            stamps.append(obj["Timestamp"])
    assert stamps == sorted(stamps)
    ts = sorted(set(stamps))
    assert len(ts) >= 10
    assert 0.075 <= (ts[-1] - ts[0]) / (len(ts) - 1) <= 0.125
    assert list((job / "profiler-output" / "framework" / "pevents").glob("*/*_pythontimeline.json"))
    report = job / "rule-output" / "ProfilerReport" / "profiler-output" / "profiler-report.html"
    assert report.exists()
    assert assert_images_valid(report) == 4  # CPU, memory, step histogram, step timeline; no GPU plot without GPUs
    (status,) = [s for s in desc["ProfilerRuleEvaluationStatuses"] if s["RuleConfigurationName"] == "ProfilerReport"]
    step_report = report.parent / "profiler-reports" / "StepOutlier.json"
    assert status["RuleEvaluationStatus"] == "IssuesFound", (status, step_report.read_text())
    assert "StepOutlier" in status.get("StatusDetails", "")
    from sagemaker_debugger_ext.cli import main as cli_main

    assert cli_main(["report", "profiled-job", "--out", str(tmp_path / "cli-report")]) == 0
    assert_images_valid(tmp_path / "cli-report" / "profiler-report.html")
