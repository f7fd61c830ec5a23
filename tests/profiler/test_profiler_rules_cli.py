"""Profiler rules through ``rules run`` (the CLI, a real subprocess) and the shared rule machinery."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sagemaker_debugger_ext.profiler.rules import PROFILER_RULES, CPUBottleneck, StepOutlier, run_rule
from sagemaker_debugger_ext.rule_contract import _params as rule_params
from sagemaker_debugger_ext.rule_contract import _status as _rule_status
from sagemaker_debugger_ext.rules._run_rule import PROFILER_RULE_NAMES, RunRequest
from sagemaker_debugger_ext.rules._run_rule import run_rule as run_any_rule

SCAN = "scan_interval_us=5000000"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sagemaker_debugger_ext.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_cli_rules_run_cpu_bottleneck_on_profiler_output(profiler_data, tmp_path: Path) -> None:
    """`rules run <profiler-output> CPUBottleneck` evaluates the profiler data (it used to need collections/ files)."""
    profiler_data.system(60, cpu=lambda i, c: 99.0 if c == 0 else 10.0)
    profiler_data.end()
    out = tmp_path / "out"
    proc = _cli(
        "rules",
        "run",
        str(profiler_data.root),
        "CPUBottleneck",
        "--param",
        "patience=10",
        "--param",
        SCAN,
        "--output-dir",
        str(out),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["RuleEvaluationStatus"] == "IssuesFound", report
    assert "MissingCollectionFiles" not in proc.stdout + proc.stderr
    assert (out / "profiler-output" / "profiler-reports" / "CPUBottleneck.json").is_file()


@pytest.mark.parametrize("name", sorted(PROFILER_RULE_NAMES), ids=str)
def test_every_profiler_rule_runs_through_rules_run(profiler_data, tmp_path: Path, name: str) -> None:
    """Each profiler rule name finishes through `rules run` on a profiler folder with a status other than Error."""
    profiler_data.system(20)
    profiler_data.steps([0.1] * 20)
    profiler_data.end()
    proc = _cli("rules", "run", str(profiler_data.root), name, "--output-dir", str(tmp_path / "out"), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["RuleEvaluationStatus"] in ("NoIssuesFound", "IssuesFound")


def test_rule_entry_point_runs_profiler_rule_in_process(profiler_data, tmp_path: Path) -> None:
    """The Debugger runner evaluates a profiler rule itself and reports through one status callback."""
    profiler_data.system(30)
    profiler_data.steps([0.1] * 60 + [3.0] * 4)
    profiler_data.end()
    seen: list[str] = []
    req = RunRequest(
        trial_path=str(profiler_data.root),
        rule_name="Outliers",
        parameters={"rule_to_invoke": "StepOutlier", "n_outliers": "2", "scan_interval_us": "5000000"},
        output_dir=tmp_path / "out",
        status_file=tmp_path / "status.json",
    )
    outcome = run_any_rule(req, on_status=lambda s, d: seen.append(s.value))
    assert outcome.status.value == "IssuesFound"
    assert seen[0] == "InProgress" and seen[-1] == "IssuesFound"
    assert json.loads((tmp_path / "status.json").read_text())["RuleEvaluationStatus"] == "IssuesFound"
    assert json.loads((tmp_path / "out" / "rule-report.json").read_text())["RuleToInvoke"] == "StepOutlier"


def test_profiler_status_details_cut_like_debugger_status(profiler_data, tmp_path: Path) -> None:
    """Both rule kinds cut StatusDetails the same way (the profiler writer used to cut silently, without '...')."""
    status = tmp_path / "status.json"
    assert run_rule(profiler_data.root, "CPUBottleneck", {"x" * 3000: "1"}, tmp_path / "out", status) == 1
    details = json.loads(status.read_text())["StatusDetails"]
    assert len(details) == _rule_status.MAX_DETAILS and details.endswith("...")


def test_profiler_params_are_the_shared_param_class() -> None:
    """Profiler rules declare parameters with the same Param class as the Debugger rules."""
    for cls in PROFILER_RULES.values():
        assert all(isinstance(p, rule_params.Param) for p in cls.PARAMS), cls.NAME


def test_profiler_empty_param_means_default_as_for_debugger_rules() -> None:
    """An empty or 'None' RuleParameters value takes the default in both rule kinds (the profiler used to refuse it)."""
    assert CPUBottleneck(threshold="").params["threshold"] == CPUBottleneck().params["threshold"]
    assert StepOutlier(n_outliers="None").params["n_outliers"] == 10
    debugger = rule_params.Param(name="n", kind=rule_params.Kind.INT, default=10)
    assert debugger.convert("", "R") == 10


def test_profiler_param_range_error_names_field_and_range() -> None:
    """A value out of range is a RuleParameterError naming the parameter, the value and the range."""
    from sagemaker_debugger_ext.exceptions import RuleParameterError

    with pytest.raises(RuleParameterError, match=r"'threshold' must be a percentage between 0 and 100 \(got '150'\)"):
        CPUBottleneck(threshold="150")
    with pytest.raises(RuleParameterError, match=r"'patience'"):
        CPUBottleneck(patience="abc")
