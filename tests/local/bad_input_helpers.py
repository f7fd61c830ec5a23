"""Shared parts of the bad-input tables (``test_local_bad_inputs.py``, ``test_local_bad_requests.py``):
requests as an SDK estimator sends them, rule configurations, and the row check (the error
names the field, the value and what is allowed; no job was created)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import sagemaker_debugger_ext as sdx
from sagemaker_debugger_ext._exceptions import DebuggerExtError

rc = sdx.rule_configs
SCRIPTS = Path(__file__).resolve().parent / "scripts"
ROLE = "arn:aws:iam::123456789012:role/R"
Make = Callable[[Path], Any]


def est(**kwargs: Any) -> Any:
    base = {
        "image_uri": "local-python", "role": ROLE, "instance_count": 1, "instance_type": "local",
        "entry_point": "train_steps.py", "source_dir": str(SCRIPTS),
    }  # fmt: skip
    base.update(kwargs)
    if "sagemaker_session" not in base:
        base["sagemaker_session"] = sdx.LocalSession(settings={"StartMonitor": False})
    return sdx.Estimator(**base)


def job_request(**extra: Any) -> dict[str, Any]:
    req: dict[str, Any] = {
        "TrainingJobName": "bad-job",
        "AlgorithmSpecification": {"TrainingImage": "local-image", "TrainingInputMode": "File"},
        "RoleArn": ROLE,
        "OutputDataConfig": {"S3OutputPath": "out"},
        "ResourceConfig": {"InstanceType": "local", "InstanceCount": 1, "VolumeSizeInGB": 30},
        "StoppingCondition": {"MaxRuntimeInSeconds": 120},
        "HyperParameters": {
            "sagemaker_program": '"train_steps.py"',
            "sagemaker_submit_directory": f'"{SCRIPTS.as_uri()}"',
        },
        "DebugHookConfig": {"S3OutputPath": "out", "CollectionConfigurations": []},
    }
    req.update(extra)
    return req


def builtin(params: dict[str, str], name: str = "LossNotDecreasing") -> dict[str, Any]:
    return {
        "RuleConfigurationName": name,
        "RuleEvaluatorImage": "img",
        "RuleParameters": {"rule_to_invoke": "LossNotDecreasing", **params},
    }


def custom(tmp: Path, text: str | None, params: dict[str, str] | None = None, cls: str = "MyRule") -> dict[str, Any]:
    path = tmp / "my_rule.py"
    if text is not None:
        path.write_text(text)
    return {
        "RuleConfigurationName": "Mine", "RuleEvaluatorImage": "img", "InstanceType": "ml.m5.xlarge", "VolumeSizeInGB": 1,
        "RuleParameters": {"source_s3_uri": str(path), "rule_to_invoke": cls, **(params or {})},
    }  # fmt: skip


def send(request: dict[str, Any]) -> Callable[[], Any]:
    def send() -> Any:
        from sagemaker_debugger_ext.local import LocalTrainingClient

        return LocalTrainingClient(settings={"StartMonitor": False}, region="us-west-2").create_training_job(**request)

    return send


RULE_SRC = "from sagemaker_debugger_ext.rules import Rule\n\nclass MyRule(Rule):\n    def __init__(self, base_trial, threshold='1'):\n        super().__init__(base_trial)\n"


def no_job_started() -> None:
    from sagemaker_debugger_ext.local import LocalTrainingClient

    assert LocalTrainingClient().list_training_jobs()["TrainingJobSummaries"] == []


#: (id, make(tmp) -> thunk, error type, field, value, allowed)
Row = tuple[str, Make, type[Exception], str, str, str]


def rows_parametrized(rows: list[Row]) -> pytest.MarkDecorator:
    """``pytest.mark.parametrize`` over ``rows`` as ``row``, named by their ids."""
    return pytest.mark.parametrize("row", rows, ids=[r[0] for r in rows])


def check_row(row: Row, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run ``row`` in ``tmp``: its error names the field, the value and what is allowed, and
    no job exists."""
    _, make, error, field, value, allowed = row
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    monkeypatch.chdir(tmp)
    thunk = make(tmp)
    with pytest.raises(error) as info:
        thunk()
    message = str(info.value)
    assert isinstance(info.value, DebuggerExtError) and isinstance(info.value, (ValueError, TypeError))
    assert field in message, message
    assert value in message, message
    assert allowed in message, message
    no_job_started()
