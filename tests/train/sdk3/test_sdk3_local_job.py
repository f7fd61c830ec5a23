"""A ModelTrainer job with a Debugger, run on this machine through ``serve`` with S3 on moto's server.

SDK v3's own code stages the source and drivers in S3 (moto) and sends its CreateTrainingJob
(``sm_train.sh`` entrypoint, ``code`` and ``sm_drivers`` channels) to the package's local API,
which runs the PyTorch script with the hook and ExplodingTensor; StopTraining stops the job.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from sagemaker_debugger_ext import DebuggerHookConfig, Rule, rule_configs

SCRIPTS = Path(__file__).parent / "scripts"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"

pytest.importorskip("torch", reason="the local ModelTrainer job trains a PyTorch script (torch==2.13.0)")


@pytest.fixture
def serve(moto_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """``serve``'s API on 127.0.0.1 for a fresh job store; its jobs reach S3 on moto's server."""
    from sagemaker_debugger_ext.local import JobStore, LocalTrainingClient
    from sagemaker_debugger_ext.local.api._server import ApiServer

    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto_server)  # the job's processes inherit it
    store = tmp_path / "store"
    client = LocalTrainingClient(JobStore(store), region="us-west-2", settings={"CloudInstanceTypes": True})
    server = ApiServer(client).start()
    try:
        yield server.url, store
    finally:
        server.stop()


def _trainer(session: Any, source_dir: Path, **kwargs: Any) -> Any:
    from sagemaker.core.training.configs import Compute, SourceCode

    from sagemaker_debugger_ext.train import ModelTrainer

    return ModelTrainer(
        training_image="local-python",  # recorded; the job runs the script in this Python
        role=ROLE,
        sagemaker_session=session,
        source_code=SourceCode(source_dir=str(source_dir), entry_script="train_nan.py"),
        compute=Compute(instance_type="ml.m5.xlarge", instance_count=1),
        base_job_name="mt-nan",
        **kwargs,
    )


@pytest.mark.slow
def test_model_trainer_nan_job_is_stopped_by_exploding_tensor(
    serve: tuple[str, Path], moto_server: str, tmp_path: Path
) -> None:
    from sagemaker.core.resources import TrainingJob

    from sagemaker_debugger_ext import modes
    from sagemaker_debugger_ext.train import local_session
    from sagemaker_debugger_ext.trials import create_trial

    url, store = serve
    source = tmp_path / "src"
    shutil.copytree(SCRIPTS, source)
    session = local_session(url, s3_endpoint_url=moto_server, region="us-west-2", default_bucket="mt-local",
                            job_store=store)  # fmt: skip
    trainer = _trainer(session, source, hyperparameters={"nan-step": 30, "steps": 400}).with_debugger(
        rules=[Rule.sagemaker(rule_configs.exploding_tensor(), actions=rule_configs.StopTraining())],
        debugger_hook_config=DebuggerHookConfig(hook_parameters={"save_interval": "1"}),
    )
    logs = io.StringIO()
    trainer.train(wait=False, logs=False)
    from sagemaker_debugger_ext.train._local import wait_locally

    job = trainer._latest_training_job
    wait_locally(job, session, poll_s=0.2, out=logs)

    name = job.training_job_name
    got = TrainingJob.get(training_job_name=name, session=session.boto_session)
    assert got.training_job_status == "Stopped", (got.failure_reason, logs.getvalue()[-3000:])
    assert [(s.rule_configuration_name, s.rule_evaluation_status) for s in got.debug_rule_evaluation_statuses] == [
        ("ExplodingTensor", "IssuesFound")
    ]
    assert "entry script train_nan.py" in logs.getvalue() and "trained all steps" not in logs.getvalue()
    assert trainer.rule_job_summary()[0]["RuleEvaluationStatus"] == "IssuesFound"

    path = trainer.latest_job_debugger_artifacts_path()
    assert path == f"s3://mt-local/mt-nan/{name}/debug-output"
    trial = create_trial(path)
    steps = trial.tensor(trial.tensor_names(collection="losses")[0]).steps(mode=modes.TRAIN)
    assert 30 in steps and max(steps) < 399  # saved past the NaN, stopped long before the end
    assert "nan" in str(trial.tensor(trial.tensor_names(collection="losses")[0]).value(30, mode=modes.TRAIN))
    s3 = boto3.client("s3", endpoint_url=moto_server, region_name="us-west-2")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="mt-local", Prefix=f"mt-nan/{name}/input/")["Contents"]]
    assert any(k.endswith("code/train_nan.py") for k in keys) and any(
        k.endswith("sm_drivers/sm_train.sh") for k in keys
    )


@pytest.mark.slow
def test_train_wait_with_logs_prints_the_job_logs_without_cloudwatch(
    serve: tuple[str, Path], moto_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``train(wait=True, logs=True)`` on a local session prints the job's log from the job store (no
    CloudWatch Logs call) and raises the SDK's FailedStatusError with the job's FailureReason."""
    from sagemaker.core.utils.exceptions import FailedStatusError

    from sagemaker_debugger_ext.train import local_session

    url, store = serve
    source = tmp_path / "src"
    shutil.copytree(SCRIPTS, source)
    session = local_session(url, s3_endpoint_url=moto_server, region="us-west-2", default_bucket="mt-logs",
                            job_store=store)  # fmt: skip
    trainer = _trainer(session, source, hyperparameters={"steps": 3, "step-seconds": 0})
    trainer.with_debugger(debugger_hook_config=False, disable_profiler=True)  # the script needs its hook config
    with pytest.raises(FailedStatusError, match="debug hook config not found"):
        trainer.train(wait=True, logs=True)
    out = capsys.readouterr().out
    assert "entry script train_nan.py" in out and "FileNotFoundError" in out
    assert trainer._latest_training_job.training_job_status == "Failed"
    assert trainer.latest_job_debugger_artifacts_path() is None
