"""StatusDetails say what a rule evaluated: "Not evaluated" is never shown as healthy (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sagemaker_debugger_ext.format import StepWriter, write_collections_file, write_training_end
from sagemaker_debugger_ext.modes import ModeKeys
from sagemaker_debugger_ext.rules._evidence import is_not_evaluated
from sagemaker_debugger_ext.rules._run_rule import RunRequest, run_rule


def _collection(name: str, regex: str, interval: int) -> dict[str, Any]:
    mode = {"save_interval": interval, "save_steps": [], "start_step": 0, "end_step": None}
    return {
        "name": name, "include_regex": [regex], "tensor_names": [], "reduction_config": None,
        "save_config": {m: dict(mode) for m in ("TRAIN", "EVAL", "PREDICT", "GLOBAL")}, "save_histogram": False,
    }  # fmt: skip


def _trial(root: Path, *, loss_interval: int, last: int = 320, eval_every: int = 0, loss_falls: bool = True) -> Path:
    """A 320-step run: weights every 10 steps, the loss every ``loss_interval`` steps, EVAL steps optional."""
    root.mkdir(parents=True)
    colls = {
        "losses": _collection("losses", "loss", loss_interval),
        "gradients": _collection("gradients", "^gradient/", 500),
        "weights": _collection("weights", "weight", 10),
    }
    write_collections_file(root, "worker_0", colls, num_workers=1)
    for g in range(last + 1):
        is_eval = bool(eval_every) and g % eval_every == eval_every - 1
        tensors: dict[str, np.ndarray] = {}
        if g % 10 == 0:
            tensors["fc.weight"] = np.full((2, 2), 0.5 + g * 1e-3, dtype=np.float32)
        if g % loss_interval == 0 or is_eval:
            value = 2.0 / (1 + g) if loss_falls else 2.0
            tensors["loss"] = np.array(value * (1.1 if is_eval else 1.0), dtype=np.float32)
        if g % 500 == 0:
            tensors["gradient/fc.weight"] = np.full((2, 2), 0.1, dtype=np.float32)
        if tensors:
            mode = ModeKeys.EVAL if is_eval else ModeKeys.TRAIN
            with StepWriter(root, global_step=g, worker="worker_0", mode=mode, mode_step=g) as w:
                for name, value in tensors.items():
                    w.write_tensor(name, value)
    write_training_end(root)
    return root


def _run(trial: Path, rule: str, tmp_path: Path, **params: str) -> tuple[str, str, dict[str, Any]]:
    out = tmp_path / f"out-{rule}"
    status_file = tmp_path / f"{rule}.status.json"
    outcome = run_rule(
        RunRequest(trial_path=str(trial), rule_name=rule, parameters={"rule_to_invoke": rule, **params},
                   output_dir=out, status_file=status_file, trial_wait_s=0.0)
    )  # fmt: skip
    status = json.loads(status_file.read_text())
    assert status["StatusDetails"] == outcome.details
    return outcome.status.value, outcome.details, json.loads((out / "rule-report.json").read_text())


def test_rules_that_saw_nothing_say_not_evaluated(tmp_path: Path) -> None:
    """The issue's 320-step scenario: default 500-step collections and no EVAL data give "Not evaluated"."""
    trial = _trial(tmp_path / "t", loss_interval=500)
    status, details, report = _run(trial, "LossNotDecreasing", tmp_path)
    assert status == "NoIssuesFound" and report["StepsEvaluated"] == 0
    assert details.startswith("Not evaluated: 0 steps had the data this rule needs.")
    assert "Collection 'losses' saves every 500 steps (saved at steps: 0)" in details
    assert "the job's last saved step is 320" in details
    assert 'collections_to_save=[CollectionConfig("losses", {"save_interval": "10"})]' in details
    status, details, _ = _run(trial, "Overfit", tmp_path)
    assert status == "NoIssuesFound" and details.startswith("Not evaluated")
    assert "the trial has no EVAL step" in details and "hook.set_mode(modes.EVAL)" in details
    status, details, report = _run(trial, "VanishingGradient", tmp_path)
    assert status == "NoIssuesFound" and report["StepsEvaluated"] == 1
    assert details.startswith(
        "Not evaluated: only 1 step(s) (0) had the data this rule needs, and the trial's saved steps end at 320."
    )
    assert "Collection 'gradients' saves every 500 steps" in details
    assert is_not_evaluated({"RuleEvaluationStatus": status, "StatusDetails": details})


def test_a_job_shorter_than_the_save_interval_is_not_evaluated(tmp_path: Path) -> None:
    """Only collections saved every 500 steps: the trial ends at step 0, and one step is no evidence."""
    root = tmp_path / "t"
    root.mkdir()
    write_collections_file(root, "worker_0", {"gradients": _collection("gradients", "^gradient/", 500)}, num_workers=1)
    with StepWriter(root, global_step=0, worker="worker_0", mode=ModeKeys.TRAIN, mode_step=0) as w:
        w.write_tensor("gradient/fc.weight", np.full((2, 2), 0.1, dtype=np.float32))
    write_training_end(root)
    status, details, report = _run(root, "VanishingGradient", tmp_path)
    assert status == "NoIssuesFound" and report["StepsEvaluated"] == 1
    assert details.startswith("Not evaluated: only 1 step(s) (0) had the data this rule needs")
    assert (
        "Collection 'gradients' saves every 500 steps (saved at steps: 0) and the job's last saved step is 0" in details
    )


def test_a_healthy_verdict_names_its_evidence(tmp_path: Path) -> None:
    """NoIssuesFound after real evaluation says how many steps per mode and the last one."""
    trial = _trial(tmp_path / "t", loss_interval=10, eval_every=40)
    status, details, report = _run(trial, "LossNotDecreasing", tmp_path, mode="TRAIN")
    assert status == "NoIssuesFound"
    assert details.startswith(f"No issues found: evaluated {report['StepsEvaluated']} steps (")
    assert "TRAIN" in details and details.endswith("last step 320.")
    assert not is_not_evaluated({"RuleEvaluationStatus": status, "StatusDetails": details})


def test_issues_found_names_the_first_finding(tmp_path: Path) -> None:
    """IssuesFound keeps the service's sentence and adds the first step, tensor and value that fired."""
    trial = _trial(tmp_path / "t", loss_interval=10, loss_falls=False)
    status, details, report = _run(trial, "LossNotDecreasing", tmp_path, mode="TRAIN", num_steps="3")
    assert status == "IssuesFound"
    first = report["Findings"][0]
    assert details.startswith(
        f"RuleEvaluationConditionMet: Evaluation of the rule LossNotDecreasing at step {report['FirstFiredStep']} "
        "resulted in the condition being met: "
    )
    assert first["message"] in details


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"RuleEvaluationStatus": "NoIssuesFound", "StatusDetails": "Not evaluated: 0 steps ..."}, True),
        ({"RuleEvaluationStatus": "NoIssuesFound", "StatusDetails": "No issues found: evaluated 3 steps"}, False),
        ({"RuleEvaluationStatus": "NoIssuesFound"}, False),
        ({"RuleEvaluationStatus": "IssuesFound", "StatusDetails": "Not evaluated"}, False),
    ],
)
def test_is_not_evaluated(entry: dict[str, str], expected: bool) -> None:
    """Only a NoIssuesFound whose details say so counts as not evaluated."""
    assert is_not_evaluated(entry) is expected


class _BrokenTrial:
    """A trial whose reads fail with ``error`` (the evidence must tell trial errors from bugs)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def steps(self, mode: Any = None) -> list[int]:
        """Fail."""
        raise self.error

    def collections(self) -> dict[str, Any]:
        """Fail."""
        raise self.error


def test_evidence_says_a_trial_error_but_lets_a_bug_through() -> None:
    """A trial's own error becomes "could not be read"; any other exception is not swallowed."""
    from sagemaker_debugger_ext.exceptions import IndexReaderException
    from sagemaker_debugger_ext.rules._evidence import Evidence

    read_error = Evidence(_BrokenTrial(IndexReaderException("bad index")), "R", "VanishingGradient", {})
    assert "The trial could not be read." in read_error.no_issues_found()
    bug = Evidence(_BrokenTrial(AttributeError("a bug")), "R", "VanishingGradient", {})
    with pytest.raises(AttributeError, match="a bug"):
        bug.no_issues_found()
