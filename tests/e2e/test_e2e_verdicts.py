"""Issue 15's scenario end to end: rules that saw nothing are "not evaluated" everywhere a user looks."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent / "scripts"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
RULES = ("LossNotDecreasing", "Overfit", "VanishingGradient")


class _Rows(HTMLParser):
    """Collects ``(class, first cell text)`` of every table row."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str]] = []
        self._cls: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self._cls = dict(attrs).get("class") or ""
        elif tag == "td" and self._cls is not None and self._cell is None:
            self._cell = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self._cls is not None:
            self.rows.append((self._cls, "".join(self._cell)))
            self._cls = None
            self._cell = None


@pytest.mark.slow
def test_rules_that_saw_nothing_are_not_evaluated_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """StatusDetails, the fit() summary, the CLI rule table and the HTML report all say "not evaluated"."""
    from rich.console import Console

    from sagemaker_debugger_ext import DebuggerHookConfig, Estimator, Rule, rule_configs
    from sagemaker_debugger_ext.reports import write_job_report
    from sagemaker_debugger_ext.reports._local_view import rule_table

    monkeypatch.chdir(tmp_path)
    est = Estimator(
        image_uri="local-image", role=ROLE, instance_count=1, instance_type="local",
        entry_point=str(SCRIPTS / "train_320.py"),
        debugger_hook_config=DebuggerHookConfig(hook_parameters={"save_interval": "10"}),
        rules=[Rule.sagemaker(rule_configs.loss_not_decreasing()), Rule.sagemaker(rule_configs.overfit()),
               Rule.sagemaker(rule_configs.vanishing_gradient())],
    )  # fmt: skip
    from sagemaker_debugger_ext.exceptions import RuleCoverageWarning

    with pytest.warns(RuleCoverageWarning) as warned:
        est.fit(job_name="verdicts-320", logs="All")
    texts = [str(w.message) for w in warned if w.category is RuleCoverageWarning]
    assert any(t.startswith("Rule LossNotDecreasing: collection 'losses' saves every 500 steps") for t in texts), texts
    assert any(t.startswith("Rule Overfit compares TRAIN and EVAL losses") for t in texts), texts
    assert all('CollectionConfig("losses"' in t or "gradients" in t for t in texts), texts
    printed = capsys.readouterr().out
    statuses = {s["RuleConfigurationName"]: s for s in est.latest_training_job.rule_job_summary()}
    for rule in RULES:
        assert statuses[rule]["RuleEvaluationStatus"] == "NoIssuesFound"
        assert statuses[rule]["StatusDetails"].startswith("Not evaluated"), statuses[rule]["StatusDetails"]
        assert re.search(rf"^\s+{rule}\s+NoIssuesFound \(not evaluated\)\s+Not evaluated", printed, re.M), printed
    assert "Collection 'losses' saves every 500 steps" in statuses["LossNotDecreasing"]["StatusDetails"]
    assert "no EVAL step" in statuses["Overfit"]["StatusDetails"]
    assert re.search(r"^Training seconds: \d+$", printed, re.M)
    assert f"Debug output:       {est.latest_job_debugger_artifacts_path()}" in printed
    desc = est.latest_training_job.describe()
    console = Console(record=True, width=400)
    console.print(rule_table(desc))
    assert console.export_text().count("NoIssuesFound (not evaluated)") == 3
    page = write_job_report(desc, tmp_path / "report.html").read_text()
    parser = _Rows()
    parser.feed(page)
    classes: dict[str, str] = {}
    for cls, cell in parser.rows:  # the status table's row of each rule (the "Rule jobs" table follows it)
        if cell in RULES:
            classes.setdefault(cell, cls)
    assert classes == dict.fromkeys(RULES, "status-NotEvaluated")
    assert 'class="status-NoIssuesFound"' not in page
