"""``sagemaker-debugger-ext rules list|run`` as the installed console script."""

from __future__ import annotations

import json


def test_rules_list_json_has_parameters_and_defaults(cli):
    """rules list --json gives every built-in with its parameters and defaults."""
    proc = cli("rules", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    rules = {r["name"]: r for r in json.loads(proc.stdout)}
    assert {"VanishingGradient", "LossNotDecreasing", "ExplodingTensor", "TreeDepth"} <= set(rules)
    params = {p["name"]: p["default"] for p in rules["LossNotDecreasing"]["parameters"]}
    assert params["num_steps"] in (10, "10")


def test_rules_list_table(cli):
    """rules list prints a table naming the rules and their parameters."""
    proc = cli("rules", "list")
    assert proc.returncode == 0, proc.stderr
    assert "VanishingGradient" in proc.stdout and "threshold" in proc.stdout


def test_rules_run_on_smdebug_trial(cli, smdebug_runs, tmp_path):
    """A built-in rule run on a real smdebug run reports IssuesFound with its findings."""
    proc = cli(
        "rules", "run", str(smdebug_runs / "sample_run"), "TensorVariance",
        "--param", "collection_names=weights", "--param", "max_threshold=0.0001",
        "--output-dir", str(tmp_path / "out"), "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["RuleEvaluationStatus"] == "IssuesFound"
    assert {f["tensor"] for f in report["Findings"]} <= {"Net_fc1.weight", "Net_fc2.weight"}
    assert (tmp_path / "out" / "rule-report.json").exists()


def test_rules_run_bad_param_is_one_line(cli, expect_error, expect_traceback, smdebug_runs):
    """A --param without '=' is a one-line error naming it; --debug shows the traceback."""
    args = ("rules", "run", str(smdebug_runs / "sample_run"), "LossNotDecreasing", "--param", "num_steps")
    expect_error(cli(*args), "--param", "num_steps")
    expect_traceback(cli("--debug", *args))


def test_rules_run_unknown_rule_is_one_line(cli, expect_error, smdebug_runs):
    """An unknown rule name is a one-line error naming it."""
    expect_error(cli("rules", "run", str(smdebug_runs / "sample_run"), "NoSuchRule"), "NoSuchRule")


def test_rules_run_missing_trial_path_is_one_line(cli, expect_error, tmp_path):
    """A trial path that does not exist is a one-line error naming it."""
    missing = str(tmp_path / "no-such-trial")
    expect_error(cli("rules", "run", missing, "LossNotDecreasing"), "TRIAL_PATH", missing)
