"""fit(logs=True) on a local job: the logs of every host, prefixed with the host name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]

ROLE = "arn:aws:iam::123456789012:role/local"


def test_fit_logs_streams_every_host_prefixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripts_dir: Path, capsys: Any
) -> None:
    """fit(logs=True) on a two-host job prints both hosts' lines, each prefixed with its host."""
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    from sagemaker_debugger_ext import Estimator

    est = Estimator(
        image_uri="local-image", role=ROLE, instance_count=2, instance_type="local",
        entry_point="train_steps.py", source_dir=str(scripts_dir), output_path=(tmp_path / "out").as_uri(),
        hyperparameters={"steps": 2},
    )  # fmt: skip
    est.fit(job_name="two-logs", logs=True)
    lines = capsys.readouterr().out.splitlines()
    for host, loss in (("algo-1", "1.0"), ("algo-2", "2.0")):
        assert f"{host} | step 0 loss {loss}" in lines
        assert f"{host} | done" in lines
