"""The rule summary built from describe_training_job responses and rule_job_summary lists."""

from __future__ import annotations

from datetime import UTC, datetime

from sagemaker_debugger_ext.reports import rule_summary

DESCRIPTION = {
    "TrainingJobName": "job-1",
    "DebugRuleEvaluationStatuses": [
        {
            "RuleConfigurationName": "LossNotDecreasing",
            "RuleEvaluationStatus": "IssuesFound",
            "StatusDetails": "loss <b> flat",
            "LastModifiedTime": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        },
        {
            "RuleConfigurationName": "VanishingGradient",
            "RuleEvaluationStatus": "NoIssuesFound",
            "LastModifiedTime": 0.0,
        },
    ],
    "ProfilerRuleEvaluationStatuses": [
        {"RuleConfigurationName": "ProfilerReport-1", "RuleEvaluationStatus": "InProgress"},
    ],
}


def test_rule_summary_from_description():
    """Debugger rules come first, then profiler rules, each with kind, status and time."""
    summary = rule_summary(DESCRIPTION)
    assert summary.job_name == "job-1"
    assert [(r.name, r.kind, r.status) for r in summary.rows] == [
        ("LossNotDecreasing", "debugger", "IssuesFound"),
        ("VanishingGradient", "debugger", "NoIssuesFound"),
        ("ProfilerReport-1", "profiler", "InProgress"),
    ]
    assert summary.rows[0].last_modified == "2026-01-02 03:04:05 UTC"
    assert summary.issues_found() == ["LossNotDecreasing"]
    assert summary.statuses()["VanishingGradient"] == "NoIssuesFound"


def test_rule_summary_text_and_html_escape():
    """The text form starts with 'Rule summary'; the HTML form escapes details."""
    summary = rule_summary(DESCRIPTION)
    text = str(summary)
    assert text.startswith("Rule summary of job-1:")
    assert "LossNotDecreasing" in text and "IssuesFound" in text
    page = summary._repr_html_()
    assert "loss &lt;b&gt; flat" in page and "<b> flat" not in page


def test_rule_summary_from_rule_job_summary_list():
    """The merged list of rule_job_summary() is split by built-in profiler rule names."""
    items = DESCRIPTION["DebugRuleEvaluationStatuses"] + DESCRIPTION["ProfilerRuleEvaluationStatuses"]
    summary = rule_summary(items, job_name="job-1")
    assert [r.kind for r in summary.rows] == ["debugger", "debugger", "profiler"]


def test_rule_summary_without_rules():
    """A job without rules says so."""
    assert str(rule_summary({"TrainingJobName": "j"})) == "Rule summary of j: no rules"


def test_rule_summary_text_truncates_long_details():
    """Long StatusDetails are cut in the text form and kept whole in the HTML form."""
    long = "x" * 500
    summary = rule_summary(
        {
            "TrainingJobName": "j",
            "ProfilerRuleEvaluationStatuses": [
                {
                    "RuleConfigurationName": "ProfilerReport",
                    "RuleEvaluationStatus": "NoIssuesFound",
                    "StatusDetails": long,
                }
            ],
        }
    )
    line = str(summary).splitlines()[1]
    assert line.endswith("…") and len(line) < 200
    assert long in summary.to_html()
