"""Local jobs end to end through SDK v2 estimators and ours, with LocalSession.

S3 coverage: moto *in-process* cannot see the detached supervisor (another process), so the
in-process case runs the supervisor inline (``settings={"Inline": True}``) inside
``mock_aws``; the wire-protocol case uses moto's HTTP server with ``AWS_ENDPOINT_URL`` in the
environment the job inherits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import boto3
import pytest
from polling import wait_until

from sagemaker_debugger_ext.local.api._describe import response_problems
from sagemaker_debugger_ext.local.store._job_store import pid_alive

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SCRIPTS = Path(__file__).resolve().parents[1] / "local" / "scripts"
RULES = Path(__file__).resolve().parent / "rules"
ROLE = "arn:aws:iam::123456789012:role/local"


@pytest.fixture(autouse=True)
def _quiet_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")


def _session(**settings: Any) -> Any:
    from sagemaker_debugger_ext.local import LocalSession

    return LocalSession(settings={"StartMonitor": False, **settings})


def _steps(trial: Any, worker: str | None = None) -> list[int]:
    return sorted(trial.tensor("loss").steps())


def _statuses_valid(summary: list[dict[str, Any]]) -> None:
    import botocore.session

    from sagemaker_debugger_ext.request._service_model import validate_request

    shape = botocore.session.get_session().get_service_model("sagemaker").shape_for("DebugRuleEvaluationStatus")
    for entry in summary:
        assert validate_request(shape, entry) == []


def test_sdk_estimator_file_output(tmp_path: Path) -> None:
    """sagemaker.estimator.Estimator + LocalSession: file:// artifacts (tensors, TensorBoard, profiler) at the derived paths."""
    from sagemaker.debugger import Rule, TensorBoardOutputConfig, rule_configs
    from sagemaker.estimator import Estimator

    from sagemaker_debugger_ext.trials import create_trial

    out = (tmp_path / "out").as_uri()
    est = Estimator(
        image_uri="local-image", role=ROLE, instance_count=1, instance_type="local",
        entry_point="train_steps.py", source_dir=str(SCRIPTS), sagemaker_session=_session(StartMonitor=True),
        # 3 steps of 0.5 s: the system monitor (500 ms interval) samples while training runs, also
        # on a loaded machine (with instant steps it could miss the whole job)
        output_path=out, hyperparameters={"steps": 3, "step-seconds": "0.5"},
        rules=[Rule.sagemaker(rule_configs.loss_not_decreasing())],
        tensorboard_output_config=TensorBoardOutputConfig(s3_output_path=out),
    )  # fmt: skip
    est.fit(job_name="sdk-file-job", logs="None")
    assert est.latest_job_debugger_artifacts_path() == f"{out}/sdk-file-job/debug-output"
    assert est.latest_job_tensorboard_artifacts_path() == f"{out}/sdk-file-job/tensorboard-output"
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    assert _steps(trial) == [0, 1, 2]
    assert float(trial.tensor("loss").value(1)[0]) == pytest.approx(0.5)
    desc = est.latest_training_job.describe()
    assert desc["TrainingJobStatus"] == "Completed"
    assert response_problems("DescribeTrainingJob", desc) == []
    summary = est.latest_training_job.rule_job_summary()
    assert [s["RuleConfigurationName"] for s in summary] == ["LossNotDecreasing"]
    assert summary[0]["RuleEvaluationStatus"] in ("NoIssuesFound", "IssuesFound"), summary
    _statuses_valid(summary)
    assert (tmp_path / "out" / "sdk-file-job" / "rule-output" / "LossNotDecreasing").is_dir()
    assert (tmp_path / "out" / "sdk-file-job" / "output" / "model.tar.gz").is_file()
    profiler = tmp_path / "out" / "sdk-file-job" / "profiler-output"
    assert est.latest_job_profiler_artifacts_path() == profiler.as_uri()
    samples = [p for p in (profiler / "system").rglob("*") if p.is_file() and p.name != "training_job_end.ts"]
    assert samples, "the system monitor wrote no samples"


def test_pytorch_two_hosts_over_moto_server(moto_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """sagemaker.pytorch.PyTorch, instance_count=2, s3:// input channel and output over moto's HTTP server."""
    from sagemaker.pytorch import PyTorch

    from sagemaker_debugger_ext.trials import create_trial

    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="e2e-wire", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    s3.put_object(Bucket="e2e-wire", Key="data/part/train.csv", Body=b"1,2,3")
    est = PyTorch(
        entry_point="train_steps.py", source_dir=str(SCRIPTS), role=ROLE, framework_version="2.1",
        py_version="py310", instance_count=2, instance_type="local", sagemaker_session=_session(),
        output_path="s3://e2e-wire/out", hyperparameters={"steps": 2, "expect-channel-file": "train/part/train.csv"},
    )  # fmt: skip
    est.fit({"train": "s3://e2e-wire/data"}, job_name="pt-wire-job", logs="None")
    keys = {o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket="e2e-wire")["Contents"]}
    assert "out/pt-wire-job/output/model.tar.gz" in keys
    assert "out/pt-wire-job/debug-output/events/000000000001/000000000001_worker_1.tfevents" in keys
    assert "out/pt-wire-job/debug-output/training_job_end.ts" in keys
    assert est.latest_job_debugger_artifacts_path() == "s3://e2e-wire/out/pt-wire-job/debug-output"
    from sagemaker_debugger_ext.local import LocalTrainingClient

    log = LocalTrainingClient().store.paths("pt-wire-job").host_log("algo-2").read_text()
    assert "channel train file part/train.csv: '1,2,3'" in log
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    assert sorted(trial.workers()) == ["worker_0", "worker_1"]
    assert float(trial.tensor("loss").value(1, worker="worker_1")[0]) == pytest.approx(1.5)


def test_our_estimator_in_process_moto(tmp_path: Path) -> None:
    """Our Estimator with moto in-process: the supervisor runs inline so mock_aws sees its uploads."""
    from moto import mock_aws

    from sagemaker_debugger_ext import Estimator
    from sagemaker_debugger_ext.trials import create_trial

    with mock_aws():
        boto3.client("s3").create_bucket(
            Bucket="e2e-inproc", CreateBucketConfiguration={"LocationConstraint": "us-west-2"}
        )
        est = Estimator(
            image_uri="local-image", role=ROLE, instance_count=1, instance_type="local",
            entry_point=str(SCRIPTS / "train_steps.py"), sagemaker_session=_session(Inline=True),
            output_path="s3://e2e-inproc/base", hyperparameters={"steps": 3},
        )  # fmt: skip
        est.fit(job_name="inproc-job", logs="None")
        assert est.latest_job_debugger_artifacts_path() == "s3://e2e-inproc/base/inproc-job/debug-output"
        trial = create_trial(est.latest_job_debugger_artifacts_path())
        assert _steps(trial) == [0, 1, 2]
        keys = {o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket="e2e-inproc")["Contents"]}
        assert "base/inproc-job/output/model.tar.gz" in keys


def test_our_estimator_default_output_and_custom_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moto_server: str
) -> None:
    """instance_type='local' builds LocalSession; default file:// output; custom rules run (Email via SNS).

    (A custom rule source that does not compile is refused before training: tests/local/test_local_bad_inputs.py.)
    """
    from sagemaker_debugger_ext import Estimator, Rule, rule_configs
    from sagemaker_debugger_ext.local import LocalSession
    from sagemaker_debugger_ext.trials import create_trial

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    est = Estimator(
        image_uri="local-image", role=ROLE, instance_count=1, instance_type="local",
        entry_point=str(SCRIPTS / "train_steps.py"), hyperparameters={"steps": 3},
        rules=[
            Rule.custom(name="LossAbove", image_uri="local", instance_type="ml.m5.xlarge", volume_size_in_gb=1,
                        source=str(RULES / "loss_rules.py"), rule_to_invoke="LossAbove",
                        rule_parameters={"threshold": "0.9"}, actions=rule_configs.Email("someone@example.com")),
        ],
    )  # fmt: skip
    assert isinstance(est.sagemaker_session, LocalSession)
    est.fit(job_name="ours-default-job", logs="None")
    expected = (tmp_path / "sagemaker-local-output" / "ours-default-job" / "debug-output").as_uri()
    assert est.latest_job_debugger_artifacts_path() == expected
    assert _steps(create_trial(expected)) == [0, 1, 2]
    desc = est.latest_training_job.describe()
    assert desc["TrainingJobStatus"] == "Completed"
    statuses = {s["RuleConfigurationName"]: s for s in est.latest_training_job.rule_job_summary()}
    assert statuses["LossAbove"]["RuleEvaluationStatus"] == "IssuesFound"
    assert response_problems("DescribeTrainingJob", desc) == []
    sns = boto3.client("sns")
    topic = next(t["TopicArn"] for t in sns.list_topics()["Topics"] if t["TopicArn"].endswith(":SMDebugRules"))
    endpoints = {
        (x["Protocol"], x["Endpoint"]) for x in sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    }
    assert ("email", "someone@example.com") in endpoints
    rule_log = LocalSession().training_client.store.paths("ours-default-job").rule_log("LossAbove").read_text()
    assert "someone@example.com" in rule_log


def test_fit_no_wait_returns_then_stop(tmp_path: Path) -> None:
    """fit(wait=False) returns while the job runs; stop() ends it Stopped."""
    from sagemaker.estimator import Estimator

    est = Estimator(
        image_uri="local-image", role=ROLE, instance_count=1, instance_type="local",
        entry_point="train_steps.py", source_dir=str(SCRIPTS), sagemaker_session=_session(),
        output_path=(tmp_path / "out").as_uri(), hyperparameters={"steps": 2000, "step-seconds": 0.05},
    )  # fmt: skip
    est.fit(job_name="nowait-job", wait=False)
    assert est.latest_training_job.describe()["TrainingJobStatus"] == "InProgress"
    est.latest_training_job.stop()
    est.latest_training_job.wait(logs="None")
    assert est.latest_training_job.describe()["TrainingJobStatus"] == "Stopped"


def test_ctrl_c_during_fit_stops_job(tmp_path: Path) -> None:
    """SIGINT to a process blocked in fit(): KeyboardInterrupt after the job ends Stopped, no process left.

    Our Estimator is used: SDK v2's ``EstimatorBase.fit`` telemetry wrapper returns from a
    ``finally`` block, which swallows KeyboardInterrupt (the job still stops; docs/local-mode.md).
    """
    from sagemaker_debugger_ext.local import LocalTrainingClient

    marker = tmp_path / "started"
    program = textwrap.dedent(
        f"""
        import signal
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, even if launched in background
        from sagemaker_debugger_ext import Estimator
        from sagemaker_debugger_ext.local import LocalSession
        est = Estimator(image_uri="local-image", role={ROLE!r}, instance_count=1, instance_type="local",
                        entry_point={str(SCRIPTS / "train_steps.py")!r},
                        sagemaker_session=LocalSession(settings={{"StartMonitor": False}}),
                        output_path={(tmp_path / "out").as_uri()!r},
                        hyperparameters={{"steps": 5000, "step-seconds": 0.05, "marker": {str(marker)!r}}})
        try:
            est.fit(job_name="ctrl-c-job")
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            raise SystemExit(130)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", program], env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    _wait_for(lambda: marker.exists() or proc.poll() is not None, timeout_s=60, what="training started")
    assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
    proc.send_signal(signal.SIGINT)
    output = proc.communicate(timeout=60)[0].decode()
    assert proc.returncode == 130, output
    client = LocalTrainingClient()
    assert client.describe_training_job("ctrl-c-job")["TrainingJobStatus"] == "Stopped"
    state = client.store.read_state("ctrl-c-job")
    assert {name: pid for name, pid in state["Pids"].items() if pid_alive(pid)} == {}
    assert not pid_alive(int(marker.read_text()))


def _wait_for(condition: Any, *, timeout_s: float, what: str) -> None:
    wait_until(condition, timeout_s=timeout_s, what=what)
