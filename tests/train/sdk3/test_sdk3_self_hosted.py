"""``ModelTrainer.with_debugger(backend="self-hosted")``: the self-hosted Debugger of ``cloud/`` for SDK v3.

The end-to-end test is the v2 acceptance (tests/e2e/test_e2e_self_hosted.py) for a ModelTrainer:
a real SDK v3 ``Session`` whose SageMaker endpoint is ``serve`` (in this process, ml.* types
accepted) and whose S3 is moto's server on 127.0.0.1; a PyTorch script that turns NaN at step 30.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from offline_cloud import serve_on_moto
from polling import wait_until

from sagemaker_debugger_ext import CollectionConfig, DebuggerHookConfig, Rule, rule_configs
from sagemaker_debugger_ext.exceptions import ConfigStateError, ConfigValueError

SCRIPTS = Path(__file__).parent / "scripts"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
DEBUGGER_FIELDS = ("DebugHookConfig", "DebugRuleConfigurations", "ProfilerConfig", "ProfilerRuleConfigurations")
LAUNCH = "sagemaker_debugger_ext_launch.py"
CONFIG = ".sagemaker-debugger-ext/config.json"
REQUIREMENTS = ".sagemaker-debugger-ext/requirements.txt"
HOOK = {"S3OutputPath": "s3://b/out", "HookParameters": {"save_interval": "1"}}


@pytest.fixture(autouse=True)
def _no_role_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAGEMAKER_VALIDATE_ROLE", "false")


def _source_code(**kwargs: Any) -> Any:
    from sagemaker.core.training.configs import SourceCode

    return SourceCode(**kwargs)


# --- staging the source (no AWS) ---------------------------------------------------------------
def test_staged_source_holds_the_users_files_the_launcher_config_and_requirement(tmp_path: Path) -> None:
    """The user's folder is copied; their requirements file keeps its lines and gains the package."""
    from sagemaker_debugger_ext.train._self_hosted import stage_source_code

    src = tmp_path / "src"
    (src / "lib").mkdir(parents=True)
    (src / "train.py").write_text("print('hi')\n")
    (src / "lib" / "util.py").write_text("X = 1\n")
    (src / "reqs.txt").write_text("pandas==2.2\n")
    user = _source_code(source_dir=str(src), entry_script="train.py", requirements="reqs.txt")
    staged = stage_source_code(
        user, distributed=None, into=tmp_path / "staged", requirement="sagemaker-debugger-ext==9.9",
        keys={"DebugHookConfig": HOOK, "ProfilerConfig": {"DisableProfiler": True}},
    )  # fmt: skip
    out = Path(staged.source_dir)
    assert (staged.entry_script, staged.requirements) == (LAUNCH, "reqs.txt")
    assert (out / "lib" / "util.py").read_text() == "X = 1\n" and (out / "train.py").is_file()
    assert (out / "reqs.txt").read_text() == "pandas==2.2\nsagemaker-debugger-ext==9.9\n"
    config = json.loads((out / CONFIG).read_text())
    assert config == {"EntryPoint": "train.py", "TrainingJobName": None, "DebugHookConfig": HOOK,
                      "ProfilerConfig": None}  # fmt: skip
    assert "sagemaker_debugger_ext.cloud._launcher" in (out / LAUNCH).read_text()
    assert (user.source_dir, user.entry_script) == (str(src), "train.py")  # the user's object is untouched
    assert sorted(p.name for p in src.iterdir()) == ["lib", "reqs.txt", "train.py"]


def test_staged_tarball_source_without_requirements_gets_the_packages_own_file(tmp_path: Path) -> None:
    """A .tar.gz source_dir is unpacked; without SourceCode.requirements the package's own file is named
    (a requirements.txt the user did not ask ModelTrainer to install is left alone)."""
    from sagemaker_debugger_ext.train._self_hosted import stage_source_code

    tar_path = tmp_path / "src.tar.gz"
    with tarfile.open(tar_path, "w:gz") as tar:
        for name, data in (("train.py", b"print(1)\n"), ("requirements.txt", b"torch\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    staged = stage_source_code(
        _source_code(source_dir=str(tar_path), entry_script="train.py"), distributed=None,
        into=tmp_path / "staged", requirement="/opt/ml/input/data/sagemaker-debugger-ext/x.whl", keys={},
    )  # fmt: skip
    out = Path(staged.source_dir)
    assert staged.requirements == REQUIREMENTS
    assert (out / REQUIREMENTS).read_text() == "/opt/ml/input/data/sagemaker-debugger-ext/x.whl\n"
    assert (out / "requirements.txt").read_text() == "torch\n" and (out / "train.py").is_file()


def test_sources_the_launcher_cannot_run_are_refused_by_name(tmp_path: Path) -> None:
    from sagemaker.train.distributed import MPI, Torchrun

    from sagemaker_debugger_ext.train._self_hosted import stage_source_code

    src = tmp_path / "src"
    src.mkdir()
    (src / "run.sh").write_text("echo\n")
    (src / "train.py").write_text("\n")

    def stage(source_code: Any, distributed: Any = None) -> Any:
        return stage_source_code(source_code, distributed=distributed, into=tmp_path / "x", keys={}, requirement="r")

    with pytest.raises(ConfigValueError, match=r"'source_code.entry_script'.*Python script.*got None"):
        stage(_source_code(source_dir=str(src), command="python train.py"))
    with pytest.raises(ConfigValueError, match=r"'source_code.entry_script' must be a .py script.*got 'run.sh'"):
        stage(_source_code(source_dir=str(src), entry_script="run.sh"))
    with pytest.raises(ConfigValueError, match=r"'distributed' must be None or Torchrun.*got 'MPI'"):
        stage(_source_code(source_dir=str(src), entry_script="train.py"), MPI())
    # torchrun starts the launcher once per rank; the ranks of a host share one leader (cloud/_host_group.py)
    staged = stage(_source_code(source_dir=str(src), entry_script="train.py"), Torchrun())
    assert staged.entry_script == LAUNCH
    with pytest.raises(ConfigValueError, match=r"'source_code.source_dir'.*local folder.*got 's3://b/src'"):
        stage(_source_code(source_dir="s3://b/src", entry_script="train.py"))


def test_backend_values_and_the_v2_estimators_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """backend= and $SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND both choose self-hosted; bad values are named;
    a pipeline (which never calls train()) is refused before anything is uploaded."""
    from sagemaker.core.helper.session_helper import Session
    from sagemaker.core.shapes import OutputDataConfig
    from sagemaker.core.training.configs import Compute

    from sagemaker_debugger_ext.train import ModelTrainer

    session = Session(boto_session=boto3.Session(region_name="us-west-2"), default_bucket="b")
    trainer = ModelTrainer(training_image="img", role=ROLE, sagemaker_session=session,
                           compute=Compute(instance_type="ml.m5.xlarge", instance_count=1),
                           output_data_config=OutputDataConfig(s3_output_path="s3://b/out"))  # fmt: skip
    with pytest.raises(ConfigValueError, match=r"^'backend' must be 'service' or 'self-hosted' \(got 'cloud'\)$"):
        trainer.with_debugger(backend="cloud")
    monkeypatch.setenv("SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND", "elsewhere")
    with pytest.raises(ConfigValueError, match="'SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND' must be .*got 'elsewhere'"):
        trainer.with_debugger()
    monkeypatch.setenv("SAGEMAKER_DEBUGGER_EXT_DEBUGGER_BACKEND", "Self-Hosted")
    for chosen in (trainer.with_debugger(), trainer.with_debugger(backend="self-hosted")):
        with pytest.raises(ConfigStateError, match="backend='self-hosted' starts its rule jobs from"):
            chosen._create_training_job_args(boto3=True)
    service = trainer.with_debugger(backend="service")  # the argument wins over the variable
    assert "DebugHookConfig" in service._create_training_job_args(boto3=True)
    with pytest.raises(ConfigValueError, match=r"^'wheel' must be the path of an existing .whl file.*'nowhere.whl'"):
        trainer.with_debugger(backend="self-hosted", wheel="nowhere.whl")
    with pytest.raises(ConfigValueError, match=r"^'rule_poll_seconds' must be a number of seconds > 0 \(got 0\)$"):
        trainer.with_debugger(backend="self-hosted", rule_poll_seconds=0)


def test_a_wheel_travels_in_its_channel_and_the_requirements_name_it(tmp_path: Path) -> None:
    """with_debugger(wheel=...): for jobs without internet access the wheel is uploaded beside the manifest,
    added as the ``sagemaker-debugger-ext`` channel, and the staged requirements file installs it from there;
    the rule jobs get it as an input. The request has no Debugger field (in-process moto S3, nothing sent)."""
    from moto import mock_aws
    from sagemaker.core.helper.session_helper import Session
    from sagemaker.core.shapes import OutputDataConfig
    from sagemaker.core.training.configs import Compute, SourceCode

    from sagemaker_debugger_ext.train import ModelTrainer

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("print(1)\n")
    wheel = tmp_path / "sagemaker_debugger_ext-9.9-py3-none-any.whl"
    wheel.write_bytes(b"a wheel")
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-west-2")
        s3.create_bucket(Bucket="wheel-bkt", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
        session = Session(boto_session=boto3.Session(region_name="us-west-2"), default_bucket="wheel-bkt")
        trainer = ModelTrainer(
            training_image="img", role=ROLE, sagemaker_session=session, base_job_name="mt-wheel",
            source_code=SourceCode(source_dir=str(tmp_path / "src"), entry_script="train.py"),
            compute=Compute(instance_type="ml.m5.xlarge", instance_count=1),
            output_data_config=OutputDataConfig(s3_output_path="s3://wheel-bkt/out"),
        ).with_debugger(rules=[Rule.sagemaker(rule_configs.exploding_tensor())], backend="self-hosted", wheel=wheel)  # fmt: skip
        args = trainer._create_training_job_args()
        job = args["training_job_name"]
        assert not {"debug_hook_config", "debug_rule_configurations", "profiler_config"} & set(args)
        channels = {c.channel_name: c.data_source.s3_data_source.s3_uri for c in args["input_data_config"]}
        assert channels["sagemaker-debugger-ext"] == f"s3://wheel-bkt/out/{job}/debugger-self-hosted/wheel/"
        key = f"out/{job}/debugger-self-hosted/wheel/{wheel.name}"
        assert s3.get_object(Bucket="wheel-bkt", Key=key)["Body"].read() == b"a wheel"
        code = channels["code"].removeprefix("s3://wheel-bkt/").rstrip("/")
        requirements = s3.get_object(Bucket="wheel-bkt", Key=f"{code}/{REQUIREMENTS}")["Body"].read().decode()
        assert requirements == f"/opt/ml/input/data/sagemaker-debugger-ext/{wheel.name}\n"
        plan = trainer._self_hosted_plan
        assert plan is not None and plan.wheel_uri == channels["sagemaker-debugger-ext"]
        assert plan.requirement == f"/opt/ml/processing/input/wheel/{wheel.name}"
        assert [r.rule_name for r in plan.rules] == ["ExplodingTensor"]


# --- end to end through serve and moto's S3 ----------------------------------------------------
@pytest.fixture
def cloud(moto_server: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``serve`` (ml.* types run here) + moto S3 + a fresh bucket, reached through the endpoint variables."""
    with serve_on_moto(moto_server, monkeypatch, bucket_prefix="mt-cloud") as cloud:
        yield cloud


def _rules() -> list[Any]:
    losses = [CollectionConfig("losses", {"save_interval": "1"})]  # the rules' own interval (500) otherwise
    return [
        Rule.sagemaker(
            rule_configs.exploding_tensor(), actions=rule_configs.StopTraining(), collections_to_save=losses
        ),
        Rule.sagemaker(rule_configs.loss_not_decreasing(), collections_to_save=losses),
    ]


def _cloud_trainer(cloud: Any, source: Path, entry_script: str, base_job_name: str, **kwargs: Any) -> Any:
    """Our ModelTrainer on a real SDK v3 Session (SageMaker = serve, S3 = moto, from the endpoint variables)."""
    from sagemaker.core.helper.session_helper import Session
    from sagemaker.core.shapes import OutputDataConfig
    from sagemaker.core.training.configs import Compute, SourceCode

    from sagemaker_debugger_ext.train import ModelTrainer

    session = Session(boto_session=boto3.Session(region_name="us-west-2"), default_bucket=cloud.bucket)
    return ModelTrainer(
        training_image="763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.8-cpu-py312",
        role=ROLE, sagemaker_session=session, base_job_name=base_job_name,
        source_code=SourceCode(source_dir=str(source), entry_script=entry_script),
        compute=Compute(instance_type="ml.m5.xlarge", instance_count=1),
        output_data_config=OutputDataConfig(s3_output_path=f"s3://{cloud.bucket}/out"), **kwargs,
    )  # fmt: skip


@pytest.mark.slow
def test_model_trainer_self_hosted_job_is_stopped_by_its_rule_job(
    cloud: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No Debugger field on the wire; the launcher and configs in the code channel; one processing job per
    rule named as Debugger named them; StopTraining stops the job; statuses from train(wait=True) and
    rule_job_summary(); the trial is read from S3."""
    from sagemaker.core.resources import TrainingJob

    from sagemaker_debugger_ext import modes
    from sagemaker_debugger_ext.train import rule_job_summary
    from sagemaker_debugger_ext.trials import create_trial

    source = tmp_path / "src"
    shutil.copytree(SCRIPTS, source)
    trainer = _cloud_trainer(
        cloud, source, "train_nan.py", "mt-self-hosted", hyperparameters={"nan-step": 30, "steps": 400}
    ).with_debugger(
        rules=_rules(), debugger_hook_config=DebuggerHookConfig(hook_parameters={"save_interval": "1"}),
        backend="self-hosted", rule_poll_seconds=0.5,
    )  # fmt: skip
    trainer.train(wait=True, logs=True)
    job, session = trainer._latest_training_job.training_job_name, trainer.sagemaker_session
    printed = capsys.readouterr().out

    sent = cloud.client.store.read_request(job)
    assert [k for k in DEBUGGER_FIELDS if k in sent] == []
    code = {c["ChannelName"]: c["DataSource"]["S3DataSource"]["S3Uri"] for c in sent["InputDataConfig"]}
    bucket, _, prefix = code["code"].removeprefix("s3://").partition("/")
    keys = {o["Key"].removeprefix(prefix.rstrip("/") + "/")
            for o in cloud.s3.list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"]}  # fmt: skip
    assert {"train_nan.py", LAUNCH, CONFIG, REQUIREMENTS} <= keys
    drivers_bucket, _, drivers = code["sm_drivers"].removeprefix("s3://").partition("/")
    source_json = cloud.s3.get_object(Bucket=drivers_bucket, Key=f"{drivers.rstrip('/')}/sourcecode.json")
    assert json.loads(source_json["Body"].read())["entry_script"] == LAUNCH

    assert TrainingJob.get(training_job_name=job, session=session.boto_session).training_job_status == "Stopped"
    names = [
        s["ProcessingJobName"] for s in cloud.sm.list_processing_jobs(NameContains=job[:26])["ProcessingJobSummaries"]
    ]
    for rule in ("ExplodingTensor", "LossNotDecreasing"):
        pattern = re.compile(rf"^{re.escape(job[:26])}-{rule.lower()[:26]}-[0-9a-f]{{8}}$")
        assert [n for n in names if pattern.match(n)], (rule, names)
    assert len(names) == 2

    def ended(name: str) -> Any:
        described = cloud.sm.describe_processing_job(ProcessingJobName=name)
        return described["ProcessingJobStatus"] in ("Completed", "Failed", "Stopped") and described

    finals = [wait_until(lambda n=n: ended(n), timeout_s=240, what=f"rule job {n}") for n in names]
    assert [j["ProcessingJobStatus"] for j in finals] == ["Completed", "Completed"], finals

    summary = {s["RuleConfigurationName"]: s for s in trainer.rule_job_summary()}
    exploding = summary["ExplodingTensor"]
    assert exploding["RuleEvaluationStatus"] == "IssuesFound", exploding
    assert re.match(r"^arn:aws:sagemaker:us-west-2:\d{12}:processing-job/", exploding["RuleEvaluationJobArn"])
    assert exploding["RuleEvaluationJobArn"].rsplit("/", 1)[-1] in names
    assert rule_job_summary(job, session) == trainer.rule_job_summary()  # by name, from any process
    assert re.search(r"ExplodingTensor\W+IssuesFound", printed), printed[-3000:]  # train(wait=True)'s summary

    path = trainer.latest_job_debugger_artifacts_path()
    assert path == f"s3://{cloud.bucket}/out/{job}/debug-output"
    trial = create_trial(path)
    loss = trial.tensor(trial.tensor_names(collection="losses")[0])
    steps = loss.steps(mode=modes.TRAIN)
    assert min(steps) == 0 and 30 in steps and max(steps) < 399  # past the NaN, stopped long before the end
    assert "nan" in str(loss.value(30, mode=modes.TRAIN))


@pytest.mark.slow
def test_a_failed_self_hosted_job_prints_its_summary_before_the_sdks_error(
    cloud: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """train(wait=True, logs=True) of a job whose script fails at once: the summary (output paths; no rules, so
    no rule job to wait for) comes before the SDK's FailedStatusError, which carries the job's FailureReason."""
    from sagemaker.core.utils.exceptions import FailedStatusError

    source = tmp_path / "src"
    source.mkdir()
    (source / "fail.py").write_text("import sys\n\nsys.exit('the script failed on purpose')\n")
    trainer = _cloud_trainer(cloud, source, "fail.py", "mt-self-hosted-fails")
    trainer.with_debugger(rules=[], disable_profiler=True, backend="self-hosted")
    with pytest.raises(FailedStatusError, match="the script failed on purpose"):
        trainer.train(wait=True, logs=True)
    job = trainer._latest_training_job.training_job_name
    printed = capsys.readouterr().out
    assert f"Debug output:       s3://{cloud.bucket}/out/{job}/debug-output" in printed, printed[-2000:]
    assert cloud.sm.list_processing_jobs(NameContains=job[:26])["ProcessingJobSummaries"] == []
    assert [k for k in DEBUGGER_FIELDS if k in cloud.client.store.read_request(job)] == []


@pytest.mark.slow
def test_a_torchrun_job_writes_one_trial_with_every_rank_before_its_end_marker(cloud: Any, tmp_path: Path) -> None:
    """``Torchrun(process_count_per_node=2)``: torchrun starts the launcher once per rank; the ranks
    share one leader, so the trial on S3 holds both workers at every step and the rule job (which
    stops at the end marker) evaluates them all."""
    from sagemaker.train.distributed import Torchrun

    from sagemaker_debugger_ext import modes
    from sagemaker_debugger_ext.trials import create_trial

    source = tmp_path / "src"
    shutil.copytree(SCRIPTS, source)
    losses = [CollectionConfig("losses", {"save_interval": "1"})]
    trainer = _cloud_trainer(
        cloud, source, "train_ddp.py", "mt-self-hosted-ddp", hyperparameters={"steps": 20},
        distributed=Torchrun(process_count_per_node=2),
    ).with_debugger(
        rules=[Rule.sagemaker(rule_configs.loss_not_decreasing(), collections_to_save=losses)],
        debugger_hook_config=DebuggerHookConfig(hook_parameters={"save_interval": "1", "include_workers": "all"}),
        backend="self-hosted", rule_poll_seconds=0.5,
    )  # fmt: skip
    trainer.train(wait=True, logs=False)
    job = trainer._latest_training_job.training_job_name
    assert cloud.sm.describe_training_job(TrainingJobName=job)["TrainingJobStatus"] == "Completed"
    trial = create_trial(trainer.latest_job_debugger_artifacts_path())
    assert trial.loaded_all_steps and trial.num_workers == 2
    loss = trial.tensor(trial.tensor_names(collection="losses")[0])
    assert loss.steps(mode=modes.TRAIN) == list(range(20))
    assert all(len(loss.workers(s, mode=modes.TRAIN)) == 2 for s in range(20))
    names = [
        s["ProcessingJobName"] for s in cloud.sm.list_processing_jobs(NameContains=job[:26])["ProcessingJobSummaries"]
    ]
    assert len(names) == 1
    final = wait_until(
        lambda: (d := cloud.sm.describe_processing_job(ProcessingJobName=names[0]))["ProcessingJobStatus"]
        in ("Completed", "Failed", "Stopped") and d,
        timeout_s=240, what="the rule job",
    )  # fmt: skip
    assert final["ProcessingJobStatus"] == "Completed", final
    (status,) = trainer.rule_job_summary()
    assert status["RuleEvaluationStatus"] in ("NoIssuesFound", "IssuesFound"), status
