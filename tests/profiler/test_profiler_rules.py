"""Each profiler rule fires on data built to trigger it and stays silent on clean data."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from polling import wait_until

from sagemaker_debugger_ext._exceptions import RuleNotFoundError, RuleParameterError
from sagemaker_debugger_ext.profiler.rules import (
    PROFILER_RULES,
    CPUBottleneck,
    ProfilerReport,
    StepOutlier,
    build_rule,
    run_rule,
)

SCAN = {"scan_interval_us": "5000000"}


def _evaluate(data, tmp_path: Path, rule: str, params: dict[str, str]) -> dict:
    """Run the rule like the container does (in-process) and return the status JSON."""
    data.end()
    status = tmp_path / "status.json"
    code = run_rule(data.root, rule, {"rule_to_invoke": rule, **params}, tmp_path / "out", status)
    assert code == 0
    return json.loads(status.read_text())


def _steady_steps(n: int = 100) -> list[float]:
    return [0.1 * (1 + 0.05 * ((i * 7) % 11 - 5) / 5) for i in range(n)]


# Each case: (rule, params, build-trigger, build-clean)
Case = tuple[str, dict[str, str], Callable, Callable]
CASES: list[Case] = [
    (
        "CPUBottleneck",
        {"patience": "10", **SCAN},
        lambda d: d.system(60, cpu=lambda i, c: 99.0 if c == 0 else 10.0),
        lambda d: d.system(60, cpu=lambda i, c: 30.0),
    ),
    (
        "IOBottleneck",
        {"patience": "10", **SCAN},
        lambda d: d.system(60, iowait=lambda i, c: 80.0 if c == 1 else 0.0),
        lambda d: d.system(60, iowait=lambda i, c: 2.0),
    ),
    (
        "BatchSize",
        {"patience": "5", "window": "10", **SCAN},
        lambda d: d.system(60, cpu=lambda i, c: 10.0, gpus=1, gpu=lambda i, g: 20.0, gpu_mem=lambda i, g: 10.0),
        lambda d: d.system(60, cpu=lambda i, c: 10.0, gpus=1, gpu=lambda i, g: 95.0, gpu_mem=lambda i, g: 10.0),
    ),
    (
        "LowGPUUtilization",
        {"patience": "5", "window": "10", **SCAN},
        lambda d: d.system(60, gpus=1, gpu=lambda i, g: 3.0),
        lambda d: d.system(60, gpus=1, gpu=lambda i, g: 90.0),
    ),
    (
        "GPUMemoryIncrease",
        {"patience": "0", "window": "5", **SCAN},
        lambda d: d.system(60, gpus=1, gpu_mem=lambda i, g: 10.0 + 1.5 * i),
        lambda d: d.system(60, gpus=1, gpu_mem=lambda i, g: 30.0),
    ),
    (
        "LoadBalancing",
        {"patience": "10", **SCAN},
        lambda d: d.system(60, gpus=2, gpu=lambda i, g: 95.0 if g == 0 else 5.0),
        lambda d: d.system(60, gpus=2, gpu=lambda i, g: 80.0),
    ),
    (
        "MaxInitializationTime",
        {"threshold": "0.25", **SCAN},
        lambda d: (d.system(80), d.steps([0.1] * 10, start=1_700_000_030.0)),
        lambda d: (d.system(80), d.steps([0.1] * 10, start=1_700_000_002.0)),
    ),
    (
        "StepOutlier",
        {"n_outliers": "2", **SCAN},
        lambda d: (d.system(60), d.steps(_steady_steps() + [3.0] * 5)),
        lambda d: (d.system(60), d.steps(_steady_steps())),
    ),
    (
        "Dataloader",
        {"patience": "5", **SCAN},
        lambda d: (d.system(60, cores=8), d.dataloader(20, workers=1)),
        lambda d: (d.system(60, cores=8), d.dataloader(20, workers=8)),
    ),
]


@pytest.mark.parametrize("rule,params,trigger,_clean", CASES, ids=[c[0] for c in CASES])
def test_rule_fires_on_triggering_workload(profiler_data, tmp_path, rule, params, trigger, _clean):
    """The rule reports IssuesFound on metrics built to trigger it."""
    trigger(profiler_data)
    status = _evaluate(profiler_data, tmp_path, rule, params)
    assert status["RuleEvaluationStatus"] == "IssuesFound", status
    assert rule in status["StatusDetails"]
    report = json.loads((tmp_path / "out" / "profiler-output" / "profiler-reports" / f"{rule}.json").read_text())
    assert report["RuleTriggered"] >= 1


@pytest.mark.parametrize("rule,params,_trigger,clean", CASES, ids=[c[0] for c in CASES])
def test_rule_silent_on_clean_workload(profiler_data, tmp_path, rule, params, _trigger, clean):
    """The rule reports NoIssuesFound on healthy metrics."""
    clean(profiler_data)
    status = _evaluate(profiler_data, tmp_path, rule, params)
    assert status["RuleEvaluationStatus"] == "NoIssuesFound", status


def test_overall_system_usage_never_fires_and_reports_stats(profiler_data, tmp_path):
    """OverallSystemUsage records percentiles but never fires."""
    profiler_data.system(40, cpu=lambda i, c: 100.0)
    status = _evaluate(profiler_data, tmp_path, "OverallSystemUsage", SCAN)
    assert status["RuleEvaluationStatus"] == "NoIssuesFound"
    report = json.loads((tmp_path / "out/profiler-output/profiler-reports/OverallSystemUsage.json").read_text())
    assert report["Details"]["CPU"]["p95"] == pytest.approx(100.0)
    assert report["Details"]["CPU memory"]["p50"] == pytest.approx(30.0)


@pytest.mark.parametrize("rule", ["BatchSize", "GPUMemoryIncrease", "LoadBalancing", "LowGPUUtilization"])
def test_gpu_rule_without_gpu_metrics_notes_it(profiler_data, tmp_path, rule):
    """GPU-only rules on data without GPU samples end NoIssuesFound with a note."""
    profiler_data.system(40)
    status = _evaluate(profiler_data, tmp_path, rule, {"patience": "0", **SCAN})
    assert status["RuleEvaluationStatus"] == "NoIssuesFound"
    assert "no GPU" in status["StatusDetails"]


def test_cpu_bottleneck_silent_when_gpu_busy(profiler_data, tmp_path):
    """A busy CPU is no bottleneck while the GPU is busy too."""
    profiler_data.system(60, cpu=lambda i, c: 99.0, gpus=1, gpu=lambda i, g: 90.0)
    status = _evaluate(profiler_data, tmp_path, "CPUBottleneck", {"patience": "10", **SCAN})
    assert status["RuleEvaluationStatus"] == "NoIssuesFound"


def test_profiler_report_runs_all_rules_with_prefixed_params(profiler_data, tmp_path):
    """ProfilerReport takes <Rule>_<param> keys (any case) and fires when one rule fires."""
    profiler_data.system(60)
    profiler_data.steps(_steady_steps() + [3.0] * 5)
    params = {"stepoutlier_N_OUTLIERS": "2", **{f"{r}_scan_interval_us": "5000000" for r in PROFILER_RULES}}
    status = _evaluate(profiler_data, tmp_path, "ProfilerReport", params)
    assert status["RuleEvaluationStatus"] == "IssuesFound"
    assert "StepOutlier" in status["StatusDetails"]
    reports = sorted(p.stem for p in (tmp_path / "out/profiler-output/profiler-reports").glob("*.json"))
    assert reports == sorted(PROFILER_RULES)
    assert (tmp_path / "out/profiler-output/profiler-report.html").stat().st_size > 1000


@pytest.mark.parametrize(
    "params,needle",
    [
        ({"Nope_x": "1"}, "'<Rule>_<param>'"),
        ({"StepOutlier_bogus": "1"}, "bogus"),
        ({"CPUBottleneck_threshold": "150"}, "between 0 and 100"),
        ({"threshold": "1"}, "'threshold'"),
    ],
    ids=["unknown-rule", "unknown-param", "out-of-range", "no-prefix"],
)
def test_profiler_report_rejects_bad_params(params, needle):
    """Invalid ProfilerReport keys raise RuleParameterError naming the problem."""
    with pytest.raises(RuleParameterError, match=needle):
        ProfilerReport(**params)


def test_params_accept_strings_and_reject_garbage():
    """Rule parameters arrive as strings; non-numbers are refused with the field named."""
    assert CPUBottleneck(threshold="20", patience="3").params["threshold"] == 20.0
    with pytest.raises(RuleParameterError, match="'patience' must be an integer"):
        CPUBottleneck(patience="1.5")
    with pytest.raises(RuleParameterError, match="'mode' must be one of"):
        StepOutlier(mode="TRAINING")


def test_unknown_rule_name_is_rejected():
    """An unknown rule_to_invoke is a RuleNotFoundError."""
    with pytest.raises(RuleNotFoundError, match="NotARule"):
        build_rule("x", {"rule_to_invoke": "NotARule"})


def test_bad_parameter_writes_error_status(profiler_data, tmp_path):
    """A bad parameter ends the rule with an Error status and exit code 1."""
    status = tmp_path / "status.json"
    code = run_rule(profiler_data.root, "StepOutlier", {"stddev": "many"}, tmp_path / "out", status)
    assert code == 1
    body = json.loads(status.read_text())
    assert body["RuleEvaluationStatus"] == "Error"
    assert "'stddev'" in body["StatusDetails"]


def test_issues_found_is_written_before_training_ends(profiler_data, tmp_path):
    """While training runs, the status turns IssuesFound as soon as the rule fires; the end makes it final."""
    import threading

    profiler_data.system(60, cpu=lambda i, c: 99.0)
    status = tmp_path / "status.json"
    stop = threading.Event()
    result: list[int] = []
    worker = threading.Thread(
        target=lambda: result.append(
            run_rule(
                profiler_data.root,
                "CPUBottleneck",
                {"patience": "5", **SCAN},
                tmp_path / "out",
                status,
                stop=stop,
                poll_s=0.02,
            )
        )
    )
    worker.start()
    try:

        def issues_found() -> bool:
            return status.exists() and json.loads(status.read_text())["RuleEvaluationStatus"] == "IssuesFound"

        wait_until(issues_found, timeout_s=30, what="IssuesFound in the status file")
        assert worker.is_alive()  # still following the job: no end marker yet
        profiler_data.end()
        worker.join(timeout=30)
    finally:
        stop.set()
        worker.join(timeout=30)
    assert result == [0]
    assert json.loads(status.read_text())["RuleEvaluationStatus"] == "IssuesFound"


def test_rule_process_entry_point_reports_error_and_list(profiler_data, tmp_path):
    """`python -m ...profiler.rules run` exits 1 with an Error status on a bad key; `list` names every rule."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    params = tmp_path / "params.json"
    params.write_text(json.dumps({"rule_to_invoke": "ProfilerReport", "Nope_x": "1"}))
    status = tmp_path / "status.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sagemaker_debugger_ext.profiler.rules",
            "run",
            "--trial-path",
            str(profiler_data.root),
            "--rule-name",
            "ProfilerReport",
            "--rule-parameters-file",
            str(params),
            "--output-dir",
            str(tmp_path / "o"),
            "--status-file",
            str(status),
            "--stop-file",
            str(tmp_path / "stop.json"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1
    body = json.loads(status.read_text())
    assert body["RuleEvaluationStatus"] == "Error" and "Nope_x" in body["StatusDetails"]
    listed = subprocess.run(
        [sys.executable, "-m", "sagemaker_debugger_ext.profiler.rules", "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert all(f"{name}:" in listed for name in [*PROFILER_RULES, "ProfilerReport"])
