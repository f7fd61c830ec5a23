"""``sagemaker-debugger-ext request``: prints the example estimator's request offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    # No endpoint is reachable: an AWS call would fail or hang, so success proves none was made.
    env = dict(os.environ, AWS_ENDPOINT_URL="http://127.0.0.1:9", SAGEMAKER_SUPPRESS_V2_WARNING="1")
    return subprocess.run(
        [sys.executable, "-m", "sagemaker_debugger_ext.cli", "request", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_request_prints_example_json() -> None:
    """The example file's request has the Debugger keys and the given job name."""
    out = _run("examples/estimator_request.py", "--job-name", "demo-job")
    assert out.returncode == 0, out.stderr
    request = json.loads(out.stdout)
    assert request["TrainingJobName"] == "demo-job"
    assert [c["CollectionName"] for c in request["DebugHookConfig"]["CollectionConfigurations"]] == [
        "losses",
        "gradients",
        "weights",
        "losses",
    ]
    assert {r["RuleConfigurationName"] for r in request["DebugRuleConfigurations"]} == {
        "LossNotDecreasing",
        "VanishingGradient",
    }
    assert request["TensorBoardOutputConfig"] == {"S3OutputPath": "s3://my-bucket/tensorboard/"}
    assert request["ProfilerConfig"]["ProfilingIntervalInMilliseconds"] == 500


def test_request_missing_variable_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--var naming no variable exits 2 with a one-line message (in-process)."""
    from sagemaker_debugger_ext.cli import main

    monkeypatch.chdir(REPO)
    assert main(["request", "examples/estimator_request.py", "--var", "nope"]) == 2
    assert "defines no module-level variable 'nope'" in capsys.readouterr().err


def test_request_rejects_non_estimator(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A variable that is not our Estimator is a clear one-line error."""
    from sagemaker_debugger_ext.cli import main

    script = tmp_path / "not_estimator.py"
    script.write_text("estimator = 42\n")
    assert main(["request", str(script)]) == 2
    assert "'estimator' must be a sagemaker_debugger_ext.Estimator (got 42)" in capsys.readouterr().err
