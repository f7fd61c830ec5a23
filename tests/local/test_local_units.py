"""Unit tests of local mode's pieces: job store, container emulation, failure reasons, inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sagemaker_debugger_ext._container_env import ContainerPaths
from sagemaker_debugger_ext._exceptions import (
    JobAlreadyExistsError,
    JobNotFoundError,
    LocalJobInputError,
)
from sagemaker_debugger_ext.local.api._describe import rule_job_arn
from sagemaker_debugger_ext.local.store._job_spec import resolve_job_spec
from sagemaker_debugger_ext.local.store._job_store import JobStore, validate_job_name
from sagemaker_debugger_ext.local.supervisor._child_process import failure_reason
from sagemaker_debugger_ext.local.supervisor._container import build_host, to_cmd_args


@pytest.mark.parametrize("name", ["", "-abc", "a_b", "x" * 64, 5], ids=["empty", "dash", "underscore", "long", "int"])
def test_bad_job_names_are_rejected(name: object) -> None:
    """Job names outside SageMaker's pattern raise LocalJobInputError naming the field."""
    with pytest.raises(LocalJobInputError, match="TrainingJobName"):
        validate_job_name(name)


def test_store_create_twice_and_missing(tmp_path: Path) -> None:
    """A second create with the same name fails; unknown jobs raise JobNotFoundError."""
    store = JobStore(tmp_path)
    store.create("job-a", {"TrainingJobName": "job-a"})
    with pytest.raises(JobAlreadyExistsError, match="job-a"):
        store.create("job-a", {"TrainingJobName": "job-a"})
    assert list(store.names()) == ["job-a"]
    assert store.read_state("job-a")["TrainingJobStatus"] == "InProgress"
    with pytest.raises(JobNotFoundError):
        store.read_request("nope")
    with pytest.raises(JobNotFoundError):
        store.require("../escape")


def test_store_root_from_environ(tmp_path: Path) -> None:
    """The store root comes from SAGEMAKER_DEBUGGER_EXT_HOME, else the home folder."""
    assert JobStore.from_environ({"SAGEMAKER_DEBUGGER_EXT_HOME": str(tmp_path)}).root == tmp_path.resolve()
    assert JobStore.from_environ({}).root == (Path.home() / ".sagemaker-debugger-ext").resolve()


def test_cmd_args_sorted_and_json() -> None:
    """Hyperparameters become sorted --name value pairs; non-strings are compact JSON."""
    assert to_cmd_args({"b": 2, "a": "x", "c": [1, 2]}) == ["--a", "x", "--b", "2", "--c", "[1,2]"]


def test_build_host_writes_configs_and_env(tmp_path: Path, make_request) -> None:  # type: ignore[no-untyped-def]
    """The host tree has SageMaker's config files and the toolkit's environment."""
    data = tmp_path / "data"
    data.mkdir()
    req = make_request(
        "env-job",
        hps={"lr": "0.1", "epochs": "3"},
        count=2,
        InputDataConfig=[{"ChannelName": "train", "DataSource": {"FileDataSource": {"FileUri": data.as_uri()}}}],
        TensorBoardOutputConfig={"S3OutputPath": "s3://b/tb"},
        ProfilerConfig={"S3OutputPath": "s3://b/p", "ProfilingIntervalInMilliseconds": 100},
    )
    spec = resolve_job_spec(req, default_output_path="")
    store = JobStore(tmp_path / "home")
    job = store.create("env-job", req)
    host = build_host(
        spec=spec, request=req, job=job, rank=1, master_port=29555, code_dir=Path(spec.submit_dir[7:]),
        channel_sources={"train": data}, base_env={"PATH": "/bin"},
    )  # fmt: skip
    paths = ContainerPaths(root=job.host_root("algo-2"))
    env = host.env
    assert host.host == "algo-2"
    assert env["SM_CURRENT_HOST"] == "algo-2" and env["SM_HOSTS"] == '["algo-1","algo-2"]'
    assert env["RANK"] == "1" and env["WORLD_SIZE"] == "2" and env["MASTER_ADDR"] == "127.0.0.1"
    assert env["MASTER_PORT"] == "29555"
    assert env["SM_HPS"] == '{"epochs":3,"lr":0.1}'
    assert env["SM_HP_LR"] == "0.1" and env["SM_CHANNEL_TRAIN"] == str(paths.channel_dir("train"))
    assert env["SM_CHANNELS"] == '["train"]' and env["SM_MODEL_DIR"] == str(paths.model_dir)
    assert env["TRAINING_JOB_NAME"] == "env-job" and env["SM_USER_ENTRY_POINT"] == "train_steps.py"
    training_env = json.loads(env["SM_TRAINING_ENV"])
    assert training_env["current_host"] == "algo-2" and training_env["hyperparameters"] == {"epochs": 3, "lr": 0.1}
    assert str(paths.code_dir) in env["PYTHONPATH"].split(":")
    hook = json.loads(Path(env["SMDEBUG_CONFIG_FILE_PATH"]).read_text())
    assert hook["LocalPath"] == str(job.debug_dir)
    assert json.loads(Path(env["TENSORBOARD_CONFIG_FILE_PATH"]).read_text())["LocalPath"] == str(job.tensorboard_dir)
    prof = json.loads(Path(env["SMPROFILER_CONFIG_PATH"]).read_text())
    assert prof["ProfilingParameters"]["LocalPath"] == str(job.profiler_dir) and prof["DisableProfiler"] is False
    resource = json.loads(paths.config_file("resourceconfig.json").read_text())
    assert resource["current_host"] == "algo-2" and resource["hosts"] == ["algo-1", "algo-2"]
    assert json.loads(paths.config_file("hyperparameters.json").read_text())["lr"] == "0.1"
    assert "train" in json.loads(paths.config_file("inputdataconfig.json").read_text())
    assert (paths.channel_dir("train")).resolve() == data.resolve()
    assert host.argv[-4:] == ["--epochs", "3", "--lr", "0.1"]


def test_failure_reason_is_end_of_traceback(tmp_path: Path) -> None:
    """FailureReason carries the last exception line of the log's last traceback."""
    log = tmp_path / "algo-1.log"
    log.write_text(
        'step 0\nTraceback (most recent call last):\n  File "t.py", line 3, in <module>\n'
        "    raise ValueError('boom')\nValueError: boom at step 1\n"
    )
    reason = failure_reason(
        host="algo-1", exit_code=1, log_path=log, failure_file=tmp_path / "none", argv=["py", "t.py"]
    )
    assert "ValueError: boom at step 1" in reason and "ExitCode 1" in reason
    (tmp_path / "failure").write_text("custom failure text")
    reason = failure_reason(host="algo-1", exit_code=1, log_path=log, failure_file=tmp_path / "failure", argv=["py"])
    assert "custom failure text" in reason and "boom" not in reason


def test_rule_job_arn_matches_api_pattern() -> None:
    """Rule evaluation job ARNs fit the ProcessingJobArn pattern and length limit."""
    import re

    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    shape = model.shape_for("ProcessingJobArn")
    arn = rule_job_arn("us-west-2", "a" * 63, "LossNotDecreasing-very-long-rule-name")
    assert re.fullmatch(shape.metadata["pattern"], arn)
    assert len(arn) <= shape.metadata["max"]


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda r: r["HyperParameters"].pop("sagemaker_program"), "sagemaker_program"),
        (lambda r: r["HyperParameters"].update(sagemaker_program='"missing.py"'), "entry_point"),
        (
            lambda r: r.update(
                InputDataConfig=[{"ChannelName": "train", "DataSource": {"S3DataSource": {"S3Uri": "ftp://x/y"}}}]
            ),
            "ftp://x/y",
        ),
        (lambda r: r["OutputDataConfig"].update(S3OutputPath="gs://bucket/x"), "S3OutputPath"),
        (lambda r: r["HyperParameters"].update(sagemaker_program='"../train_steps.py"'), "inside the source"),
        (
            lambda r: r.update(
                InputDataConfig=[{"ChannelName": "../up", "DataSource": {"S3DataSource": {"S3Uri": "s3://b/k"}}}]
            ),
            "ChannelName",
        ),
    ],
    ids=["no-entry-point", "missing-entry-point", "channel-scheme", "output-scheme", "escaping-entry", "bad-channel"],
)
def test_bad_inputs_raise_before_anything_starts(make_request, local_client, mutate, match) -> None:  # type: ignore[no-untyped-def]
    """Bad requests raise LocalJobInputError and leave no job in the store."""
    req = make_request("bad-input")
    mutate(req)
    with pytest.raises(LocalJobInputError, match=match):
        local_client.create_training_job(**req)
    assert list(local_client.store.names()) == []


def test_unwritable_output_path(make_request, local_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An output path below a regular file cannot be written: clear error, no job."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    req = make_request("bad-output", output=(blocker / "sub").as_uri())
    with pytest.raises(LocalJobInputError, match="writable folder"):
        local_client.create_training_job(**req)
    assert list(local_client.store.names()) == []


def test_relative_local_paths_resolve_against_the_callers_folder(
    tmp_path: Path,
    make_request,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    """A relative source_dir (`file://scripts`), channel and output resolve against base_dir, not the cwd."""
    caller = tmp_path / "caller"
    (caller / "scripts").mkdir(parents=True)
    (caller / "scripts" / "train.py").write_text("print('hi')\n")
    (caller / "data").mkdir()
    req = make_request(
        "rel-job",
        output="file://out",
        InputDataConfig=[{"ChannelName": "train", "DataSource": {"FileDataSource": {"FileUri": "file://data"}}}],
    )
    req["HyperParameters"]["sagemaker_program"] = '"train.py"'
    req["HyperParameters"]["sagemaker_submit_directory"] = '"file://scripts"'
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the supervisor runs in another folder than the caller
    spec = resolve_job_spec(req, default_output_path="", base_dir=caller)
    assert spec.submit_dir == (caller / "scripts").as_uri()
    assert spec.channels[0].uri == (caller / "data").as_uri()
    assert spec.output_path == (caller / "out").as_uri()
    with pytest.raises(LocalJobInputError, match="entry_point"):
        resolve_job_spec(req, default_output_path="")  # resolved against `elsewhere`: no scripts there


def test_tf_config_only_for_multi_worker_mirrored_jobs() -> None:
    """SageMaker's TF_CONFIG for MultiWorkerMirroredStrategy: every host a worker, this one at its
    index; none without the SDK's ``sagemaker_multi_worker_mirrored_strategy_enabled``."""
    from sagemaker_debugger_ext.local.supervisor._container import tf_config

    ports = [4001, 4002]
    assert tf_config({}, 0, ports) is None
    assert tf_config({"sagemaker_multi_worker_mirrored_strategy_enabled": "false"}, 0, ports) is None
    config = tf_config({"sagemaker_multi_worker_mirrored_strategy_enabled": "true"}, 1, ports)
    assert config == {"cluster": {"worker": ["127.0.0.1:4001", "127.0.0.1:4002"]}, "environment": "cloud",
                      "task": {"type": "worker", "index": 1}}  # fmt: skip
