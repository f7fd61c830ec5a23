"""The debugger job report built from a describe response and a real smdebug-written trial."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from sagemaker_debugger_ext.reports import (
    debug_output_uri,
    flagged_tensors,
    loss_tensors,
    open_trial,
    summarize_trial,
    tensor_series,
    write_job_report,
)


@pytest.fixture
def job_output(tmp_path: Path, smdebug_runs: Path) -> tuple[dict, Path]:
    """A describe response whose debug output is a copy of the smdebug sample run."""
    debug = tmp_path / "out" / "job-a" / "debug-output"
    shutil.copytree(smdebug_runs / "sample_run", debug)
    description = {
        "TrainingJobName": "job-a",
        "TrainingJobStatus": "Completed",
        "DebugHookConfig": {"S3OutputPath": (tmp_path / "out").as_uri() + "/"},
        "DebugRuleConfigurations": [
            {"RuleConfigurationName": "LossNotDecreasing", "RuleParameters": {"rule_to_invoke": "LossNotDecreasing"}},
            {
                "RuleConfigurationName": "Weights",
                "RuleParameters": {"rule_to_invoke": "AllZero", "tensor_regex": "Net_fc.*"},
            },
        ],
        "DebugRuleEvaluationStatuses": [
            {
                "RuleConfigurationName": "LossNotDecreasing",
                "RuleEvaluationStatus": "IssuesFound",
                "StatusDetails": "loss flat",
            },
            {"RuleConfigurationName": "Weights", "RuleEvaluationStatus": "IssuesFound"},
            {
                "RuleConfigurationName": "Gradients",
                "RuleEvaluationStatus": "IssuesFound",
                "StatusDetails": "gradient/Net_fc1.weight vanished at step 4",
            },
            {"RuleConfigurationName": "Other", "RuleEvaluationStatus": "NoIssuesFound"},
        ],
    }
    return description, debug


def test_debug_output_uri_joins_without_double_slash(job_output):
    """The debug output is <S3OutputPath>/<job>/debug-output."""
    description, debug = job_output
    assert debug_output_uri(description) == debug.as_uri()
    assert debug_output_uri({"TrainingJobName": "x"}) is None


def test_summary_and_series_of_sample_run(smdebug_runs):
    """Summary and loss series of the smdebug sample run match what its script saved."""
    trial = open_trial(smdebug_runs / "sample_run")
    summary = summarize_trial(trial)
    assert {m.mode: m.steps for m in summary.modes}["EVAL"] == (0, 1)
    assert loss_tensors(trial) == ["CrossEntropyLoss_output_0"]
    series = tensor_series(trial, "CrossEntropyLoss_output_0")
    assert series["TRAIN"][0] == [0, 1, 2, 3, 6, 7]
    assert series["EVAL"][0] == [4, 5]
    assert all(isinstance(v, float) for v in series["TRAIN"][1])


def test_flagged_tensors_sources(job_output):
    """Flagged tensors come from StatusDetails, else tensor_regex, else the rule's default collection."""
    description, debug = job_output
    flagged = flagged_tensors(description, open_trial(debug))
    assert flagged["LossNotDecreasing"] == ["CrossEntropyLoss_output_0"]
    assert flagged["Weights"] == ["Net_fc1.weight", "Net_fc2.weight"]
    assert flagged["Gradients"] == ["gradient/Net_fc1.weight"]
    assert "Other" not in flagged


def test_write_job_report(job_output, tmp_path):
    """The HTML report holds the rule table and inline PNG plots of losses and flagged tensors."""
    description, _debug = job_output
    page = write_job_report(description, tmp_path / "report.html").read_text()
    assert "<h2>Rule summary</h2>" in page and "LossNotDecreasing" in page
    assert "status-IssuesFound" in page and "status-NoIssuesFound" in page
    images = re.findall(r'src="data:image/png;base64,', page)
    assert len(images) >= 4  # loss curves + 3 flagged rules' plots


def test_job_report_without_debug_output(tmp_path):
    """A job without a debug output still gets its rule summary and says why plots are missing."""
    page = write_job_report(
        {"TrainingJobName": "j", "TrainingJobStatus": "Failed", "FailureReason": "boom"}, tmp_path / "r.html"
    ).read_text()
    assert "boom" in page and "No debug output" in page and "data:image/png" not in page


def test_rule_reports_read_from_each_rule_output_and_unreadable_ones_left_out(tmp_path: Path) -> None:
    """load_rule_reports / load_profiler_rule_reports: per rule, its rule output's report(s); a rule
    with no report, a broken one or no rule output at all is left out; non-object JSON is dropped."""
    import json

    from sagemaker_debugger_ext.reports import load_rule_reports
    from sagemaker_debugger_ext.reports._job_report import load_profiler_rule_reports

    out = tmp_path / "out"
    rules = out / "job-r" / "rule-output"
    files = {
        "Good/rule-report.json": json.dumps({"RuleTriggered": 1}),
        "Broken/rule-report.json": "{not json",
        "List/rule-report.json": "[1, 2]",
        "Prof/profiler-output/profiler-reports/B.json": json.dumps({"RuleName": "B"}),
        "Prof/profiler-output/profiler-reports/A.json": json.dumps({"RuleName": "A"}),
        "Prof/profiler-output/profiler-reports/notes.txt": "not a report",
        "Scalars/profiler-output/profiler-reports/X.json": "3",
        "BadProf/profiler-output/profiler-reports/A.json": "{",
    }
    for name, text in files.items():
        (rules / name).parent.mkdir(parents=True, exist_ok=True)
        (rules / name).write_text(text)

    def statuses(*names: str) -> list[dict[str, str]]:
        return [{"RuleConfigurationName": n, "RuleEvaluationStatus": "NoIssuesFound"} for n in names]

    description = {
        "TrainingJobName": "job-r",
        "OutputDataConfig": {"S3OutputPath": out.as_uri()},
        "DebugRuleEvaluationStatuses": statuses("Good", "Broken", "List", "Missing"),
        "ProfilerRuleEvaluationStatuses": statuses("Prof", "Scalars", "BadProf", "Missing"),
    }
    assert load_rule_reports(description) == {"Good": {"RuleTriggered": 1}}
    assert load_profiler_rule_reports(description) == {"Prof": [{"RuleName": "A"}, {"RuleName": "B"}], "Scalars": []}
    no_output = {k: v for k, v in description.items() if k != "OutputDataConfig"}
    assert load_rule_reports(no_output) == {} and load_profiler_rule_reports(no_output) == {}
