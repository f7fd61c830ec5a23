"""``python -m sagemaker_debugger_ext.rules run``: status file, reports, custom rules, actions."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from polling import wait_until

from sagemaker_debugger_ext.format import StepWriter, write_training_end

CUSTOM_RULE_AWS_DOCS = """
from sagemaker_debugger_ext.rules.rule import Rule

class CustomGradientRule(Rule):
    def __init__(self, base_trial, threshold=10.0):
        super().__init__(base_trial)
        self.threshold = float(threshold)

    def invoke_at_step(self, step):
        for tname in self.base_trial.tensor_names(collection="gradients"):
            t = self.base_trial.tensor(tname)
            abs_mean = t.reduction_value(step, "mean", abs=True)
            if abs_mean > self.threshold:
                return True
        return False
"""

RAISING_RULE = """
from sagemaker_debugger_ext.rules import Rule

class Broken(Rule):
    def __init__(self, base_trial, action_str=None, other_trials=None):
        super().__init__(base_trial, action_str, other_trials)

    def invoke_at_step(self, step):
        return {}["missing_key_%d" % step]
"""


def _command(
    tmp_path: Path, trial: Path | str, name: str, params: dict[str, str], *extra: str
) -> tuple[list[str], Path, Path]:
    """The ``rules run`` command of rule ``name`` with ``params`` on ``trial``, its status file and output folder."""
    pfile = tmp_path / f"{name}-params.json"
    pfile.write_text(json.dumps(params))
    out, status = tmp_path / f"{name}-out", tmp_path / f"{name}-status.json"
    cmd = [
        sys.executable,
        "-m",
        "sagemaker_debugger_ext.rules",
        "run",
        "--trial-path",
        str(trial),
        "--rule-name",
        name,
        "--rule-parameters-file",
        str(pfile),
        "--output-dir",
        str(out),
        "--status-file",
        str(status),
        *extra,
    ]
    return cmd, status, out


def _run(
    tmp_path: Path, trial: Path | str, name: str, params: dict[str, str], *extra: str
) -> tuple[int, dict[str, Any], Path]:
    cmd, status, out = _command(tmp_path, trial, name, params, *extra)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    return proc.returncode, json.loads(status.read_text()), out


def test_entry_point_on_real_smdebug_run(smdebug_runs: Path, tmp_path: Path) -> None:
    """ExplodingTensor runs on the smdebug-written sample run: NoIssuesFound, report written."""
    code, status, out = _run(
        tmp_path, smdebug_runs / "sample_run", "ExplodingTensor", {"rule_to_invoke": "ExplodingTensor"}
    )
    assert code == 0 and status["RuleEvaluationStatus"] == "NoIssuesFound"
    report = json.loads((out / "rule-report.json").read_text())
    assert report["StepsEvaluated"] == 8 and report["TimesFired"] == 0
    assert "NoIssuesFound" in (out / "rule-report.md").read_text()


def test_issues_found_on_real_smdebug_run_with_parameters(smdebug_runs: Path, tmp_path: Path) -> None:
    """String parameters reach the rule: a 1e3 threshold makes VanishingGradient fire at step 0."""
    code, status, out = _run(
        tmp_path, smdebug_runs / "sample_run", "VG", {"rule_to_invoke": "VanishingGradient", "threshold": "1000"}
    )
    assert code == 0 and status["RuleEvaluationStatus"] == "IssuesFound"
    assert status["StatusDetails"].startswith(
        "RuleEvaluationConditionMet: Evaluation of the rule VG at step 0 resulted in the condition being met"
    )
    finding = json.loads((out / "rule-report.json").read_text())["Findings"][0]
    assert finding["step"] == 0 and finding["tensor"].startswith("gradient/") and finding["threshold"] == 1000.0


def test_unknown_parameter_is_error(trial_dir: Callable[..., Path], tmp_path: Path) -> None:
    """An unknown parameter gives Error naming it and the allowed ones; exit code 1."""
    trial = trial_dir({0: {"x": np.ones(3)}})
    code, status, _ = _run(
        tmp_path, trial, "VanishingGradient", {"rule_to_invoke": "VanishingGradient", "treshold": "1"}
    )
    assert code == 1 and status["RuleEvaluationStatus"] == "Error"
    assert "unknown parameter 'treshold'" in status["StatusDetails"] and "threshold" in status["StatusDetails"]


def test_custom_rule_from_aws_docs_runs_unchanged(trial_dir: Callable[..., Path], tmp_path: Path) -> None:
    """The AWS docs' CustomGradientRule (only its import changed) fires via source_s3_uri=file://."""
    steps = {s: {"gradient/w": np.full(4, 1.0 if s < 2 else 50.0, np.float32)} for s in range(4)}
    trial = trial_dir(steps, collections={"gradients": ["^gradient/"]})
    src = tmp_path / "my_custom_rule.py"
    src.write_text(CUSTOM_RULE_AWS_DOCS)
    params = {"source_s3_uri": src.as_uri(), "rule_to_invoke": "CustomGradientRule", "threshold": "20.0"}
    code, status, out = _run(tmp_path, trial, "MyCustomRule", params)
    assert code == 0 and status["RuleEvaluationStatus"] == "IssuesFound"
    assert "at step 2 " in status["StatusDetails"]
    assert json.loads((out / "rule-report.json").read_text())["FiredSteps"] == [2, 3]


def test_raising_custom_rule_reports_last_traceback_line(trial_dir: Callable[..., Path], tmp_path: Path) -> None:
    """A custom rule that raises gives Error with its traceback's last line."""
    trial = trial_dir({0: {"x": np.ones(3)}})
    src = tmp_path / "broken.py"
    src.write_text(RAISING_RULE)
    code, status, _ = _run(tmp_path, trial, "Broken", {"source_s3_uri": str(src), "rule_to_invoke": "Broken"})
    assert code == 1 and status["RuleEvaluationStatus"] == "Error"
    assert status["StatusDetails"] == "KeyError: 'missing_key_0'"


def test_missing_custom_class_is_error(trial_dir: Callable[..., Path], tmp_path: Path) -> None:
    """rule_to_invoke naming no class in the source is an Error listing the rule classes there."""
    src = tmp_path / "rules.py"
    src.write_text(CUSTOM_RULE_AWS_DOCS)
    code, status, _ = _run(
        tmp_path, trial_dir({0: {"x": np.ones(1)}}), "R", {"source_s3_uri": str(src), "rule_to_invoke": "Nope"}
    )
    assert (
        code == 1
        and "'rule_to_invoke' must name a class" in status["StatusDetails"]
        and "CustomGradientRule" in status["StatusDetails"]
    )


def test_other_trial_parameter_becomes_other_trial(trial_dir: Callable[..., Path], tmp_path: Path) -> None:
    """other_trial_0 opens a second trial for SimilarAcrossRuns."""
    base = trial_dir({s: {"w": np.full(3, s, np.float32)} for s in range(3)})
    other = trial_dir({s: {"w": np.full(3, s if s < 1 else 9, np.float32)} for s in range(3)})
    code, status, out = _run(
        tmp_path, base, "SimilarAcrossRuns", {"rule_to_invoke": "SimilarAcrossRuns", "other_trial_0": str(other)}
    )
    assert code == 0 and status["RuleEvaluationStatus"] == "IssuesFound"
    assert json.loads((out / "rule-report.json").read_text())["FirstFiredStep"] == 1


def _wait_for(predicate: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    wait_until(predicate, timeout_s=timeout, interval_s=0.05, what=what)


def _status(path: Path) -> str | None:
    try:
        return json.loads(path.read_text())["RuleEvaluationStatus"]
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def test_live_trial_issues_found_early_and_stop_file(tmp_path: Path) -> None:
    """While training runs, IssuesFound is written as soon as the rule fires and StopTraining writes the stop file."""
    from sagemaker_debugger_ext.format import write_collections_file

    trial = tmp_path / "live"
    write_collections_file(
        trial, "worker_0", {"default": {"name": "default", "include_regex": [], "tensor_names": []}}, num_workers=1
    )
    for s in range(3):
        with StepWriter(trial, global_step=s, worker="worker_0") as w:
            w.write_tensor("loss", np.float32(1.0))
    params = {
        "rule_to_invoke": "ExplodingTensor",
        "action_json": '[{\\"name\\": \\"stoptraining\\", \\"training_job_prefix\\": \\"job\\"}]',
    }
    stop = tmp_path / "stop.json"
    cmd, status, _ = _command(tmp_path, trial, "Exploding", params, "--stop-file", str(stop), "--poll-interval", "0.05")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for(lambda: _status(status) == "InProgress", "InProgress")
        with StepWriter(trial, global_step=3, worker="worker_0") as w:
            w.write_tensor("loss", np.float32(np.nan))
        _wait_for(lambda: _status(status) == "IssuesFound", "IssuesFound")
        assert proc.poll() is None  # still watching the running job
        assert json.loads(stop.read_text())["RuleConfigurationName"] == "Exploding"
        write_training_end(trial)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _status(status) == "IssuesFound"


def test_list_shows_every_builtin_with_defaults() -> None:
    """``list --json`` names all 21 built-ins with SageMaker's parameter defaults."""
    out = subprocess.run(
        [sys.executable, "-m", "sagemaker_debugger_ext.rules", "list", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    rules = {r["name"]: r for r in json.loads(out.stdout)}
    assert len(rules) == 21
    assert {p["name"]: p["default"] for p in rules["LossNotDecreasing"]["parameters"]}["num_steps"] == "10"


def test_profiler_rule_names_are_delegated(tmp_path: Path) -> None:
    """A profiler rule name is handed to the profiler rules entry point, not rejected as unknown."""
    prof = tmp_path / "profiler-output"
    (prof / "system").mkdir(parents=True)
    (prof / "system" / "training_job_end.ts").touch()
    (prof / "training_job_end.ts").touch()
    code, status, _ = _run(tmp_path, prof, "CPUBottleneck", {"rule_to_invoke": "CPUBottleneck"})
    assert status["RuleEvaluationStatus"] in ("NoIssuesFound", "IssuesFound", "Error")
    assert "must be a built-in rule" not in status["StatusDetails"]
    assert code in (0, 1)
