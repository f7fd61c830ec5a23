"""``sagemaker-debugger-ext rules list|run``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagemaker_debugger_ext.cli import main


def test_rules_list_prints_every_builtin(capsys: pytest.CaptureFixture[str]) -> None:
    """The table names each built-in rule and its defaults."""
    assert main(["rules", "list", "--json"]) == 0
    rules = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in rules} >= {"VanishingGradient", "SaturatedActivation", "CreateXgboostReport"}
    assert main(["rules", "list"]) == 0
    assert "threshold_layer = 50" in capsys.readouterr().out


def test_rules_list_shows_profiler_rules_with_sagemaker_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    """Profiler rules are listed, marked as such, with every parameter and default of the SDK's
    smdebug_rulesconfig.profiler_rules classes."""
    import inspect

    from smdebug_rulesconfig.profiler_rules import rules as sdk_profiler_rules

    assert main(["rules", "list", "--json"]) == 0
    rules = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    profiler = {name for name, r in rules.items() if r["kind"] == "profiler"}
    sdk = {n for n in dir(sdk_profiler_rules) if n[0].isupper() and n != "ProfilerRuleBase"}
    assert profiler == sdk
    assert rules["VanishingGradient"]["kind"] == "debugger"
    for name in sdk - {"ProfilerReport"}:
        signature = inspect.signature(getattr(sdk_profiler_rules, name).__init__)
        expected = {p.name: str(p.default) for p in signature.parameters.values() if p.name != "self"}
        listed = {p["name"]: p["default"] for p in rules[name]["parameters"]}
        assert expected.items() <= listed.items(), name  # every SageMaker parameter, its default
    assert main(["rules", "list"]) == 0
    table = capsys.readouterr().out
    assert "GPUMemoryIncrease" in table and "profiler" in table and "cpu_threshold = 90" in table


def test_rules_list_shows_recommended_settings(capsys: pytest.CaptureFixture[str]) -> None:
    """``rules list`` says which rules have recommended settings (``recommended_rule``) and what they are."""
    from sagemaker_debugger_ext.rules import RECOMMENDED_RULE_PARAMETERS

    assert main(["rules", "list", "--json"]) == 0
    rules = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rules["ClassImbalance"]["recommended_parameters"] == {
        "noise_aware": "True",
        "samples": "2000",
        "learning_window": "4",
    }
    assert rules["VanishingGradient"]["recommended_parameters"] == {}
    assert {n for n, r in rules.items() if r["recommended_parameters"]} == set(RECOMMENDED_RULE_PARAMETERS)
    assert main(["rules", "list"]) == 0
    out = capsys.readouterr().out
    assert "(recommended)" in out and "num_steps = 10 → 40" in out


def test_rules_run_on_smdebug_run(smdebug_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``rules run`` with --param prints the status and findings and writes the report."""
    code = main(
        [
            "rules",
            "run",
            str(smdebug_runs / "sample_run"),
            "VanishingGradient",
            "--param",
            "threshold=1000",
            "--output-dir",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "IssuesFound" in out and "gradient/" in out
    assert json.loads((tmp_path / "rule-report.json").read_text())["FirstFiredStep"] == 0


def test_rules_run_bad_param_is_an_error(
    smdebug_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A malformed --param is a one-line error; a bad value gives status Error and exit code 1."""
    assert main(["rules", "run", str(smdebug_runs / "sample_run"), "VanishingGradient", "--param", "threshold"]) == 2
    assert "'--param' must be KEY=VALUE" in capsys.readouterr().err
    assert (
        main(
            [
                "rules",
                "run",
                str(smdebug_runs / "sample_run"),
                "VanishingGradient",
                "--param",
                "threshold=abc",
                "--output-dir",
                str(tmp_path),
            ]
        )
        == 1
    )
    assert "'threshold' must be a number (got 'abc')" in capsys.readouterr().out
