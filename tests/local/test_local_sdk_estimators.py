"""SDK v2 estimators (PyTorch, XGBoost, TensorFlow, Estimator) with our LocalSession, offline.

No credentials and no network: every connection to a host other than loopback is refused
and recorded (the SDK's telemetry, IAM and STS calls would be). Our config objects and the
SDK's must produce the same request, and the SDK writes to both kinds during fit().
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SCRIPTS = Path(__file__).resolve().parent / "scripts"
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """No AWS credentials; non-loopback connections fail and are recorded. Runs in tmp_path."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SECURITY_TOKEN", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("SAGEMAKER_SUPPRESS_V2_WARNING", "1")
    monkeypatch.chdir(tmp_path)
    attempts: list[str] = []
    real_getaddrinfo = socket.getaddrinfo

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in _LOOPBACK and host is not None:
            attempts.append(str(host))
            raise socket.gaierror(f"offline test: no network for {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    return attempts


def _session() -> Any:
    from sagemaker_debugger_ext.local import LocalSession

    return LocalSession(settings={"StartMonitor": False})


def _configs(ns: Any) -> dict[str, Any]:
    rc = ns.rule_configs
    return {
        "rules": [
            ns.Rule.sagemaker(rc.vanishing_gradient(), actions=rc.ActionList(rc.StopTraining())),
            ns.Rule.sagemaker(
                rc.loss_not_decreasing(), collections_to_save=[ns.CollectionConfig("losses", {"save_interval": "2"})]
            ),
            ns.ProfilerRule.sagemaker(rc.ProfilerReport()),
        ],
        "debugger_hook_config": ns.DebuggerHookConfig(
            hook_parameters={"save_interval": "1"}, collection_configs=[ns.CollectionConfig("weights")]
        ),
        "tensorboard_output_config": ns.TensorBoardOutputConfig((Path.cwd() / "tb").as_uri()),
        "profiler_config": ns.ProfilerConfig(system_monitor_interval_millis=500),
    }


def _estimator(kind: str, **kwargs: Any) -> Any:
    common = {
        "role": "SageMakerRole", "instance_count": 1, "instance_type": "local", "sagemaker_session": _session(),
        "entry_point": "train_steps.py", "source_dir": str(SCRIPTS),
    }  # fmt: skip
    common.update(kwargs)
    if kind == "PyTorch":
        from sagemaker.pytorch import PyTorch

        return PyTorch(framework_version="2.1", py_version="py310", **common)
    if kind == "XGBoost":
        from sagemaker.xgboost import XGBoost

        return XGBoost(framework_version="1.7-1", py_version="py3", **common)
    if kind == "TensorFlow":
        from sagemaker.tensorflow import TensorFlow

        return TensorFlow(framework_version="2.13", py_version="py310", **common)
    from sagemaker.estimator import Estimator

    return Estimator(image_uri="local-python", **common)


def _request(estimator: Any, job_name: str) -> dict[str, Any]:
    from sagemaker.estimator import _TrainingJob

    from sagemaker_debugger_ext.estimator._support import capture_create_request

    estimator._prepare_for_training(job_name=job_name)
    args = _TrainingJob._get_train_args(estimator, None, None)
    return capture_create_request(estimator.sagemaker_session, args)


_DEBUGGER_KEYS = (
    "DebugHookConfig",
    "DebugRuleConfigurations",
    "TensorBoardOutputConfig",
    "ProfilerConfig",
    "ProfilerRuleConfigurations",
)


@pytest.mark.parametrize("kind", ["PyTorch", "XGBoost", "TensorFlow", "Estimator"])
def test_our_configs_equal_sdk_configs_in_sdk_estimators(kind: str, offline: list[str]) -> None:
    """Each SDK estimator builds the same Debugger request from our objects as from its own,
    writes the same defaults into both (as it does into its own), and makes no network call."""
    import sagemaker.debugger as sdk

    import sagemaker_debugger_ext as ours

    results = {}
    for label, ns in (("sdk", sdk), ("ours", ours)):
        configs = _configs(ns)
        request = _request(_estimator(kind, **configs), f"{kind.lower()}-job")
        results[label] = ({key: request.get(key) for key in _DEBUGGER_KEYS}, configs)
    (sdk_request, sdk_configs), (our_request, our_configs) = results["sdk"], results["ours"]
    assert our_request == sdk_request
    expected_output = ours.LocalSession.default_output_path()
    assert sdk_request["DebugHookConfig"]["S3OutputPath"] == expected_output
    assert [c["CollectionName"] for c in sdk_request["DebugHookConfig"]["CollectionConfigurations"]]
    assert sdk_request["DebugRuleConfigurations"][0]["RuleParameters"]["action_json"].startswith("[{")
    # The SDK writes into the config objects during fit: the same writes land on ours.
    assert our_configs["debugger_hook_config"].s3_output_path == sdk_configs["debugger_hook_config"].s3_output_path
    assert (
        our_configs["profiler_config"].s3_output_path
        == sdk_configs["profiler_config"].s3_output_path
        == expected_output
    )
    assert our_configs["rules"][0].image_uri == sdk_configs["rules"][0].image_uri != "DEFAULT_RULE_EVALUATOR_IMAGE"
    assert our_configs["rules"][0].rule_parameters == sdk_configs["rules"][0].rule_parameters
    assert offline == []


def test_sdk_estimator_without_output_path_sees_our_default(offline: list[str]) -> None:
    """With our LocalSession and no output_path, the SDK estimator's output_path is our default."""
    from sagemaker_debugger_ext import LocalSession

    est = _estimator("PyTorch")
    est._prepare_for_training(job_name="pt-default")
    assert est.output_path == LocalSession.default_output_path()
    assert est.output_path == (Path.cwd() / "sagemaker-local-output").as_uri() + "/"


@pytest.mark.slow
@pytest.mark.parametrize("objects", ["ours", "sdk"])
def test_sdk_pytorch_fit_offline_role_name_default_output(
    objects: str, offline: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    """Real PyTorch fit(): role name, no output_path, no credentials; path helpers point at the data,
    create_trial reads it, nothing is printed about telemetry and no network call is attempted."""
    import sagemaker.debugger as sdk

    import sagemaker_debugger_ext as ours
    from sagemaker_debugger_ext.trials import create_trial

    ns = ours if objects == "ours" else sdk
    est = _estimator(
        "PyTorch", hyperparameters={"steps": 3}, rules=[ns.Rule.sagemaker(ns.rule_configs.loss_not_decreasing())],
        debugger_hook_config=ns.DebuggerHookConfig(hook_parameters={"save_interval": "1"}),
    )  # fmt: skip
    est.fit(job_name=f"pt-offline-{objects}", logs="None")
    base = (Path.cwd() / "sagemaker-local-output").as_uri()
    assert est.output_path == base + "/"
    assert est.latest_job_debugger_artifacts_path() == f"{base}/pt-offline-{objects}/debug-output"
    assert est.latest_job_profiler_artifacts_path() == f"{base}/pt-offline-{objects}/profiler-output"
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    assert sorted(trial.tensor("loss").steps()) == [0, 1, 2]
    desc = est.latest_training_job.describe()
    assert desc["RoleArn"] == "arn:aws:iam::000000000000:role/SageMakerRole"
    assert desc["TrainingJobStatus"] == "Completed"
    # What the SDK's integration test asserts on the service's answer.
    assert desc["DebugRuleConfigurations"][0]["VolumeSizeInGB"] == 0
    assert desc["DebugRuleConfigurations"][0]["RuleEvaluatorImage"] == est.rules[0].image_uri
    assert desc["DebugHookConfig"] == est.debugger_hook_config._to_request_dict()
    assert desc["ProfilingStatus"] == "Enabled"
    assert desc["ProfilerConfig"]["ProfilingIntervalInMilliseconds"] == 500
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    assert "telemetry" not in (out + err).lower()
    assert offline == []
