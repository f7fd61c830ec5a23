"""prepare_train_args against moto's S3 server: the request sent, the bundle, the wheel channel, the manifest."""

from __future__ import annotations

import copy
import io
import json
import tarfile
import uuid
from pathlib import Path
from typing import Any

import boto3
import pytest

from sagemaker_debugger_ext._exceptions import ConfigValueError
from sagemaker_debugger_ext.cloud._self_hosted import DROPPED_ARGUMENTS, prepare_train_args


@pytest.fixture
def s3(moto_server: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A boto3 S3 client on moto's server and a fresh bucket (``client.bucket``)."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto_server)
    client = boto3.client("s3", region_name="us-west-2")
    client.bucket = f"req-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=client.bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    return client


def _train_args(bucket: str) -> dict[str, Any]:
    hook = {"S3OutputPath": f"s3://{bucket}/out", "CollectionConfigurations": [
        {"CollectionName": "losses", "CollectionParameters": {"save_interval": "1"}}]}  # fmt: skip
    return {
        "job_name": "req-job",
        "role": "arn:aws:iam::123456789012:role/r",
        "output_config": {"S3OutputPath": f"s3://{bucket}/out"},
        "hyperparameters": {
            "sagemaker_program": '"train.py"',
            "sagemaker_submit_directory": f'"s3://{bucket}/code/sourcedir.tar.gz"',
            "lr": "0.1",
        },
        "input_config": [],
        "stop_condition": {"MaxRuntimeInSeconds": 3600},
        "debugger_hook_config": hook,
        "debugger_rule_configs": [
            {
                "RuleConfigurationName": "LossNotDecreasing",
                "RuleEvaluatorImage": "x",
                "RuleParameters": {"rule_to_invoke": "LossNotDecreasing"},
            }
        ],
        "profiler_config": {"S3OutputPath": f"s3://{bucket}/out", "ProfilingIntervalInMilliseconds": 500},
        "profiler_rule_configs": [
            {
                "RuleConfigurationName": "CPUBottleneck",
                "RuleEvaluatorImage": "x",
                "InstanceType": "ml.m5.large",
                "VolumeSizeInGB": 5,
                "RuleParameters": {"rule_to_invoke": "CPUBottleneck"},
            }
        ],
        "tensorboard_output_config": {"S3OutputPath": f"s3://{bucket}/tb"},
    }


def _put_bundle(s3: Any) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("train.py")
        info.size = 8
        tar.addfile(info, io.BytesIO(b"print(1)"))
    s3.put_object(Bucket=s3.bucket, Key="code/sourcedir.tar.gz", Body=out.getvalue())


def test_request_has_no_debugger_field_and_the_bundle_carries_the_config(s3: Any, tmp_path: Path) -> None:
    """Debugger fields dropped (TensorBoard kept), program = launcher, wheel channel, manifest and parameters."""
    _put_bundle(s3)
    wheel = tmp_path / "sagemaker_debugger_ext-9.9.9-py3-none-any.whl"
    wheel.write_bytes(b"wheel")
    given = _train_args(s3.bucket)
    before = copy.deepcopy(given)
    args, plan = prepare_train_args(given, s3_client=s3, version="9.9.9", wheel=wheel)
    assert given == before
    assert [k for k in DROPPED_ARGUMENTS if k in args] == []
    assert args["tensorboard_output_config"] == before["tensorboard_output_config"]
    base = f"s3://{s3.bucket}/out/req-job/debugger-self-hosted"
    assert args["hyperparameters"] == {"sagemaker_program": '"sagemaker_debugger_ext_launch.py"',
                                       "sagemaker_submit_directory": f'"{base}/sourcedir.tar.gz"', "lr": "0.1"}  # fmt: skip
    assert args["input_config"] == [{"ChannelName": "sagemaker-debugger-ext", "DataSource": {"S3DataSource": {
        "S3DataType": "S3Prefix", "S3Uri": f"{base}/wheel/", "S3DataDistributionType": "FullyReplicated"}}}]  # fmt: skip
    key = "out/req-job/debugger-self-hosted/"
    assert s3.get_object(Bucket=s3.bucket, Key=key + "wheel/" + wheel.name)["Body"].read() == b"wheel"
    bundle = s3.get_object(Bucket=s3.bucket, Key=key + "sourcedir.tar.gz")["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(bundle)) as tar:
        config = json.loads(tar.extractfile(".sagemaker-debugger-ext/config.json").read())  # type: ignore[union-attr]
        requirements = tar.extractfile("requirements.txt").read().decode()  # type: ignore[union-attr]
        assert tar.extractfile("train.py").read() == b"print(1)"  # type: ignore[union-attr]
    assert config["EntryPoint"] == "train.py"
    assert config["DebugHookConfig"] == before["debugger_hook_config"]
    assert config["ProfilerConfig"] == before["profiler_config"]
    assert requirements == f"/opt/ml/input/data/sagemaker-debugger-ext/{wheel.name}\n"
    manifest = json.loads(s3.get_object(Bucket=s3.bucket, Key=key + "manifest.json")["Body"].read())
    assert manifest["DebugHookConfig"]["S3OutputPath"] == f"s3://{s3.bucket}/out"  # the fit() summary's paths
    assert [(r["RuleConfigurationName"], r["Kind"]) for r in manifest["Rules"]] == [
        ("LossNotDecreasing", "debug"), ("CPUBottleneck", "profiler")]  # fmt: skip
    params = s3.get_object(Bucket=s3.bucket, Key=key + "rules/CPUBottleneck/parameters.json")["Body"].read()
    assert json.loads(params) == {"rule_to_invoke": "CPUBottleneck"}
    debug, profiler = plan.rules
    assert debug.trial_uri == f"s3://{s3.bucket}/out/req-job/debug-output"
    assert profiler.trial_uri == f"s3://{s3.bucket}/out/req-job/profiler-output"
    assert (profiler.instance_type, profiler.volume_gb) == ("ml.m5.large", 5)
    assert plan.requirement == f"/opt/ml/processing/input/wheel/{wheel.name}"
    assert plan.max_runtime_s == 3600 + 3600


def test_self_hosted_needs_an_entry_point_and_an_s3_output(s3: Any) -> None:
    """Without script mode, or with a file:// output, the error names the field and says why."""
    args = _train_args(s3.bucket)
    args["hyperparameters"] = {}
    with pytest.raises(ConfigValueError, match=r"^'entry_point' must be set with debugger_backend='self-hosted'"):
        prepare_train_args(args, s3_client=s3, version="1")
    args = _train_args(s3.bucket)
    args["output_config"] = {"S3OutputPath": "file:///tmp/out"}
    with pytest.raises(ConfigValueError, match=r"^'output_path' must be an s3:// URI"):
        prepare_train_args(args, s3_client=s3, version="1")


@pytest.mark.parametrize("distribution", [{"mpi": {"enabled": True}}, {"pytorchddp": {"enabled": True}},
                                          {"smdistributed": {"dataparallel": {"enabled": True}}}])  # fmt: skip
def test_mpi_distributions_are_refused_torchrun_is_not(
    s3: Any, distribution: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real SDK v2 PyTorch estimator's distribution hyperparameters: the mpirun-launched ones are
    refused before anything is uploaded, naming the hyperparameter; torch_distributed passes
    (its ranks share one launcher leader: tests/cloud/test_cloud_launcher_ranks.py)."""
    from sagemaker.pytorch import PyTorch

    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")

    def hyperparameters(dist: dict[str, Any]) -> dict[str, Any]:
        est = PyTorch(entry_point="train.py", role="r", framework_version="2.1.0", py_version="py310",
                      instance_type="ml.p4d.24xlarge", instance_count=1, distribution=dist)  # fmt: skip
        return dict(est.hyperparameters())  # JSON-encoded, as Session.train receives them

    args = _train_args(s3.bucket)
    args["hyperparameters"].update(hyperparameters(distribution))
    with pytest.raises(ConfigValueError, match=r"^'distribution' must be none, torch_distributed.*is true: mpirun"):
        prepare_train_args(args, s3_client=s3, version="1")
    assert "Contents" not in s3.list_objects_v2(Bucket=s3.bucket)  # nothing uploaded
    args = _train_args(s3.bucket)
    args["hyperparameters"].update(hyperparameters({"torch_distributed": {"enabled": True}}))
    assert args["hyperparameters"]["sagemaker_torch_distributed_enabled"] == "true"
    prepare_train_args(args, s3_client=s3, version="1", upload=False)
