"""Local mode with Keras: the SDK's ``sagemaker.tensorflow.TensorFlow`` estimator (and ours)
with LocalSession, TF-style hyperparameters, ``--model_dir``, ``SM_*``; a diverging script
with ExplodingTensor + StopTraining ends IssuesFound / Stopped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SCRIPTS = Path(__file__).resolve().parent / "scripts"
ROLE = "arn:aws:iam::123456789012:role/local"


@pytest.fixture(autouse=True)
def _quiet_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")


def _session() -> Any:
    from sagemaker_debugger_ext.local import LocalSession

    return LocalSession(settings={"StartMonitor": False, "SyncIntervalSeconds": 0.5})


def _log(job: str) -> str:
    from sagemaker_debugger_ext.local import LocalTrainingClient

    return LocalTrainingClient().store.paths(job).host_log("algo-1").read_text()


def test_sdk_tensorflow_estimator_diverging_keras_script_is_stopped(tf, tmp_path: Path) -> None:
    from sagemaker.debugger import DebuggerHookConfig, Rule, rule_configs
    from sagemaker.tensorflow import TensorFlow

    from sagemaker_debugger_ext import modes
    from sagemaker_debugger_ext.trials import create_trial

    out = (tmp_path / "out").as_uri()
    nan_at = 6
    est = TensorFlow(
        entry_point="train_keras.py", source_dir=str(SCRIPTS), role=ROLE, framework_version="2.16", py_version="py310",
        instance_count=1, instance_type="local", sagemaker_session=_session(), output_path=out,
        hyperparameters={"epochs": 40, "nan-at-step": nan_at, "step-seconds": 0.05},
        rules=[Rule.sagemaker(rule_configs.exploding_tensor(), actions=rule_configs.StopTraining())],
        debugger_hook_config=DebuggerHookConfig(s3_output_path=out, hook_parameters={"save_interval": "2"}),
    )  # fmt: skip
    est.fit(job_name="keras-nan-job", logs="None")
    desc = est.latest_training_job.describe()
    log = _log("keras-nan-job")
    assert desc["TrainingJobStatus"] == "Stopped", (desc.get("FailureReason"), log[-3000:])
    summary = {
        s["RuleConfigurationName"]: s["RuleEvaluationStatus"] for s in est.latest_training_job.rule_job_summary()
    }
    assert summary == {"ExplodingTensor": "IssuesFound"}
    assert est.latest_job_debugger_artifacts_path() == f"{out}/keras-nan-job/debug-output"
    assert "model_dir=" in log and "hook=<KerasHook" in log
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    loss_steps = trial.tensor("loss").steps(mode=modes.TRAIN)
    assert loss_steps[:4] == [0, 2, 4, 6]
    assert max(loss_steps) < 40 * 6 - 1  # stopped long before the 40 epochs of 6 batches ended
    assert str(trial.tensor("loss").value(nan_at, mode=modes.TRAIN)[0]) == "nan"


def test_our_estimator_runs_keras_script(tf, tmp_path: Path) -> None:
    from sagemaker_debugger_ext import Estimator
    from sagemaker_debugger_ext.trials import create_trial

    out = (tmp_path / "out").as_uri()
    est = Estimator(
        image_uri="local-image", role=ROLE, instance_count=1, instance_type="local",
        entry_point="train_keras.py", source_dir=str(SCRIPTS), sagemaker_session=_session(), output_path=out,
        hyperparameters={"epochs": 1, "batch-size": 16},
    )  # fmt: skip
    est.fit(job_name="keras-ok-job", logs="None")
    desc = est.latest_training_job.describe()
    assert desc["TrainingJobStatus"] == "Completed", (desc.get("FailureReason"), _log("keras-ok-job")[-3000:])
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    assert "loss" in trial.tensor_names(collection="losses")
    assert {"accuracy", "batch"} <= set(trial.tensor_names(collection="metrics"))


def test_sdk_tensorflow_two_instances_multi_worker_mirrored_is_stopped(tf, tmp_path: Path) -> None:
    """instance_count=2 with MultiWorkerMirroredStrategy: each host gets SageMaker's TF_CONFIG
    (worker i of two, ports on 127.0.0.1); the chief saves; ExplodingTensor + StopTraining stop both."""
    import json

    from sagemaker.debugger import DebuggerHookConfig, Rule, rule_configs
    from sagemaker.tensorflow import TensorFlow

    from sagemaker_debugger_ext.local import LocalTrainingClient
    from sagemaker_debugger_ext.trials import create_trial

    out = (tmp_path / "out").as_uri()
    nan_at, epochs = 4, 40
    est = TensorFlow(
        entry_point="train_keras_mwms.py", source_dir=str(SCRIPTS), role=ROLE, framework_version="2.16",
        py_version="py310", instance_count=2, instance_type="local", sagemaker_session=_session(), output_path=out,
        distribution={"multi_worker_mirrored_strategy": {"enabled": True}},
        hyperparameters={"epochs": epochs, "nan-at-step": nan_at, "step-seconds": 0.05},
        rules=[Rule.sagemaker(rule_configs.exploding_tensor(), actions=rule_configs.StopTraining())],
        debugger_hook_config=DebuggerHookConfig(s3_output_path=out, hook_parameters={"save_interval": "1"}),
    )  # fmt: skip
    est.fit(job_name="keras-mwms-job", logs="None")
    desc = est.latest_training_job.describe()
    paths = LocalTrainingClient().store.paths("keras-mwms-job")
    logs = {host: paths.host_log(host).read_text() for host in ("algo-1", "algo-2")}
    assert desc["TrainingJobStatus"] == "Stopped", (desc.get("FailureReason"), logs)
    summary = {
        s["RuleConfigurationName"]: s["RuleEvaluationStatus"] for s in est.latest_training_job.rule_job_summary()
    }
    assert summary == {"ExplodingTensor": "IssuesFound"}
    for index, host in enumerate(("algo-1", "algo-2")):
        task = next(line for line in logs[host].splitlines() if line.startswith("tf_config_task="))
        assert json.loads(task.split("=", 1)[1].replace("'", '"')) == {"type": "worker", "index": index}
        assert f"worker=worker_{index} replicas=2" in logs[host]
    assert est.latest_job_debugger_artifacts_path() == f"{out}/keras-mwms-job/debug-output"
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    assert trial.workers() == ["worker_0"]  # include_workers="one": the chief saves
    loss = trial.tensor("loss")
    assert loss.steps()[: nan_at + 1] == list(range(nan_at + 1))
    assert str(loss.value(nan_at)) == "nan"
    assert max(loss.steps()) < epochs * 4 - 1  # stopped long before the 40 epochs of 4 batches
