"""Input channels in local mode: plain paths, file:// URIs, TrainingInput with either, s3://,
with our Estimator and the SDK's, each channel's data seen by the training script."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SCRIPTS = Path(__file__).resolve().parent / "scripts"
ROLE = "arn:aws:iam::123456789012:role/R"


def _data(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "data.csv").write_text(f"{name}-rows")
    return folder


@pytest.mark.parametrize("kind", ["ours", "sdk"])
def test_every_channel_form_reaches_the_script(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moto_server: str
) -> None:
    """Plain absolute and relative paths, file:// strings, TrainingInput(file:// / plain) and s3:// all train."""
    from sagemaker.estimator import Estimator as SdkEstimator
    from sagemaker.inputs import TrainingInput

    from sagemaker_debugger_ext import Estimator, LocalSession
    from sagemaker_debugger_ext.local import LocalTrainingClient

    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    monkeypatch.chdir(tmp_path)
    bucket = f"channels-{kind}"
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    s3.put_object(Bucket=bucket, Key="in/data.csv", Body=b"s3-rows")
    inputs: dict[str, Any] = {
        "plainabs": str(_data(tmp_path, "plainabs")),
        "plainrel": "plainrel",
        "fileuri": _data(tmp_path, "fileuri").as_uri(),
        "tifile": TrainingInput(_data(tmp_path, "tifile").as_uri()),
        "tiplain": TrainingInput(str(_data(tmp_path, "tiplain"))),
        "s3": f"s3://{bucket}/in",
    }
    _data(tmp_path, "plainrel")
    cls = Estimator if kind == "ours" else SdkEstimator
    est = cls(
        image_uri="local-python", role=ROLE, instance_count=1, instance_type="local", entry_point="read_channels.py",
        source_dir=str(SCRIPTS), sagemaker_session=LocalSession(settings={"StartMonitor": False}),
        output_path=(tmp_path / "out").as_uri(), debugger_hook_config=False, disable_profiler=True,
    )  # fmt: skip
    est.fit(inputs, job_name=f"channels-{kind}", logs="None")
    log = LocalTrainingClient().store.paths(f"channels-{kind}").host_log("algo-1").read_text()
    for name in ("plainabs", "plainrel", "fileuri", "tifile", "tiplain"):
        assert f"channel {name} data.csv='{name}-rows'" in log
    assert "channel s3 data.csv='s3-rows'" in log
