"""The profiler rules' contract is the Debugger rules': one parameter parser, one outcome type, one GPU window loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagemaker_debugger_ext._exceptions import RuleParameterError
from sagemaker_debugger_ext.profiler._trial import ProfilerTrial
from sagemaker_debugger_ext.profiler.rules import BatchSize, CPUBottleneck, LowGPUUtilization, ProfilerRule, Window
from sagemaker_debugger_ext.profiler.rules._follow import follow_trial
from sagemaker_debugger_ext.rule_contract._result import RuleResult
from sagemaker_debugger_ext.rules.builtin import BUILTIN_RULES


def _message(exc_info: pytest.ExceptionInfo[RuleParameterError]) -> str:
    return str(exc_info.value).split(": ", 1)[1]


def test_unknown_parameter_is_refused_with_the_debugger_rules_message(tmp_path: Path) -> None:
    """Both rule kinds refuse an unknown parameter with the same sentence (the profiler's own parser said it otherwise)."""
    with pytest.raises(RuleParameterError) as profiler:
        CPUBottleneck(treshold="1")
    with pytest.raises(RuleParameterError) as debugger:
        BUILTIN_RULES["LossNotDecreasing"](object(), treshold="1")
    shape = "unknown parameter 'treshold' (got '1'); allowed parameters: "
    assert _message(profiler).startswith(shape) and _message(debugger).startswith(shape)


def test_profiler_parameter_names_stay_case_insensitive() -> None:
    """The service's ProfilerReport keys were always matched ignoring case; the shared parser keeps that for profiler rules."""
    assert CPUBottleneck(THRESHOLD="12").params["threshold"] == 12.0


def test_profiler_rules_return_rule_results(profiler_data, tmp_path: Path) -> None:
    """evaluate() returns a RuleResult whose finding is the message the status file says."""
    profiler_data.system(60, cpu=lambda i, c: 99.0 if c == 0 else 10.0)
    profiler_data.end()
    rule = CPUBottleneck(patience="10", scan_interval_us="5000000")
    trial = ProfilerTrial(profiler_data.root)
    trial.refresh()
    first, last = trial.first_timestamp, trial.last_timestamp
    assert first is not None and last is not None
    result = rule.evaluate(Window(start_us=first, end_us=last + 1, system=trial.get_system_metrics(first, last + 1)))
    assert isinstance(result, RuleResult) and result.fired
    assert result.findings[0].message == rule.message and result.findings[0].step is None
    assert isinstance(CPUBottleneck().evaluate(Window(start_us=0, end_us=1)), RuleResult)


@pytest.mark.parametrize("rule_cls", [BatchSize, LowGPUUtilization], ids=lambda c: c.NAME)
def test_gpu_moving_window_rules_judge_the_same_snapshots(profiler_data, rule_cls: type[ProfilerRule]) -> None:
    """Both moving-window GPU rules judge once per full window after patience (one loop, not two copies)."""
    # 40 idle-GPU snapshots, window 5, patience 10: windows fill at snapshots 15, 20, ..., 40 -> 6 judgements.
    profiler_data.system(40, cpu=lambda i, c: 5.0, gpus=1, gpu=lambda i, g: 2.0, gpu_mem=lambda i, g: 2.0)
    profiler_data.end()
    rule = rule_cls(patience="10", window="5", scan_interval_us="5000000")
    outcome = follow_trial(ProfilerTrial(profiler_data.root), rule, wait=False)
    assert outcome.fired
    assert rule.report["Violations"] == 6, rule.report
    assert rule.report["RuleTriggered"] == 6


def test_profiler_status_file_says_the_first_finding(profiler_data, tmp_path: Path) -> None:
    """The IssuesFound details come from the RuleResult's finding, through the one status writer."""
    from sagemaker_debugger_ext.profiler.rules import run_rule

    profiler_data.system(60, cpu=lambda i, c: 99.0 if c == 0 else 10.0)
    profiler_data.end()
    status = tmp_path / "status.json"
    params = {"patience": "10", "scan_interval_us": "5000000"}
    assert run_rule(profiler_data.root, "CPUBottleneck", params, tmp_path / "out", status) == 0
    body = json.loads(status.read_text())
    assert body["RuleEvaluationStatus"] == "IssuesFound"
    assert body["StatusDetails"].startswith("CPUBottleneck: ")
