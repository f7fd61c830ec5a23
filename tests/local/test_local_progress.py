"""fit() shows progress while a local job runs: plain ``[progress]`` lines at a steady rate,
piped or not, then the end summary; ``logs="None"`` prints none (issue 15, item 3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagemaker_debugger_ext.local.caller._progress import ProgressLines, last_saved_step

SCRIPTS = Path(__file__).resolve().parents[1] / "e2e" / "scripts"

FIT = r"""
import sys
from sagemaker_debugger_ext import DebuggerHookConfig, Estimator, Rule, rule_configs
est = Estimator(image_uri="local-image", role="arn:aws:iam::123456789012:role/x", instance_count=1,
                instance_type="local", entry_point=sys.argv[1],
                debugger_hook_config=DebuggerHookConfig(hook_parameters={"save_interval": "10"}),
                rules=[Rule.sagemaker(rule_configs.loss_not_decreasing())])
est.fit(job_name=sys.argv[2], logs=sys.argv[3])
"""


def _fit_piped(tmp_path: Path, logs: str) -> str:
    env = {**os.environ, "SAGEMAKER_DEBUGGER_EXT_PROGRESS_SECONDS": "0.5", "SAGEMAKER_DEBUGGER_EXT_HOME": str(tmp_path / "home"),
           "PYTHONWARNINGS": "ignore"}  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", FIT, str(SCRIPTS / "train_320.py"), f"progress-{logs.lower()}", logs],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.slow
def test_piped_fit_prints_progress_then_the_summary(tmp_path: Path) -> None:
    out = _fit_piped(tmp_path, "All")
    lines = [line for line in out.splitlines() if line.startswith("[progress] progress-all: ")]
    assert len(lines) >= 2, out
    assert any("last saved step" in line for line in lines), lines
    assert all("rules: LossNotDecreasing " in line for line in lines), lines
    assert out.index(lines[-1]) < out.index("Training seconds:"), out  # progress, then the SDK's closing lines
    assert "Rule summary of progress-all:" in out


@pytest.mark.slow
def test_logs_none_prints_no_progress(tmp_path: Path) -> None:
    assert "[progress]" not in _fit_piped(tmp_path, "None")


def test_progress_line_at_status_changes_and_steady_rate(tmp_path: Path) -> None:
    import io

    (tmp_path / "index" / "000000000").mkdir(parents=True)
    (tmp_path / "index" / "000000000" / "000000000020_worker_0.json").write_text("{}")
    out = io.StringIO()
    lines = ProgressLines("job", tmp_path, out, environ={"SAGEMAKER_DEBUGGER_EXT_PROGRESS_SECONDS": "10"})
    desc = {
        "TrainingJobStatus": "InProgress",
        "SecondaryStatus": "Training",
        "DebugRuleEvaluationStatuses": [{"RuleConfigurationName": "Overfit", "RuleEvaluationStatus": "InProgress"}],
    }
    for now in (0.0, 1.0, 5.0):  # unchanged within the interval: one line
        lines.tick(lambda: desc, now=now)
    desc["DebugRuleEvaluationStatuses"][0]["RuleEvaluationStatus"] = "IssuesFound"  # type: ignore[index]
    lines.tick(lambda: desc, now=6.0)  # a change: a line at once
    lines.tick(lambda: desc, now=17.0)  # the interval: a line
    printed = out.getvalue().splitlines()
    first = "[progress] job: InProgress (Training), last saved step 20; rules: Overfit InProgress"
    then = "[progress] job: InProgress (Training), last saved step 20; rules: Overfit IssuesFound"
    assert printed == [first, then, then], printed
    assert last_saved_step(tmp_path / "nothing") is None
