"""The self-hosted Debugger backend end to end, offline (issue 30 acceptance).

A real ``sagemaker.Session`` whose SageMaker endpoint is ``serve`` (in this process, ml.* types
accepted) and whose S3 is moto's server on 127.0.0.1; a PyTorch job that turns NaN at step 30.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import boto3
import pytest
from offline_cloud import serve_on_moto
from polling import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SCRIPTS = Path(__file__).resolve().parent / "scripts"
RULES = Path(__file__).resolve().parent / "rules"
ROLE = "arn:aws:iam::123456789012:role/training"
DEBUGGER_FIELDS = ("DebugHookConfig", "DebugRuleConfigurations", "ProfilerConfig", "ProfilerRuleConfigurations")


@pytest.fixture
def cloud(moto_server: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``serve`` + moto S3 + a fresh bucket (``url``, ``client``, ``s3``, ``sm``, ``bucket``)."""
    with serve_on_moto(moto_server, monkeypatch, bucket_prefix="cloud") as cloud:
        yield cloud


def _session(cloud: Any, cls: Any = None, **kwargs: Any) -> Any:
    import sagemaker

    boto_session = boto3.Session(region_name="us-west-2")
    factory = cls or sagemaker.Session
    return factory(
        boto_session=boto_session,
        sagemaker_client=boto_session.client("sagemaker"),
        default_bucket=cloud.bucket,
        **kwargs,
    )


def _wait_for_everything(cloud: Any, job: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The training job's final description and its rule jobs' final descriptions."""
    final = cloud.client.wait(job, timeout_s=240)
    names = [
        s["ProcessingJobName"] for s in cloud.sm.list_processing_jobs(NameContains=job[:26])["ProcessingJobSummaries"]
    ]

    def ended(name: str) -> Any:
        described = cloud.sm.describe_processing_job(ProcessingJobName=name)
        return described["ProcessingJobStatus"] in ("Completed", "Failed", "Stopped") and described

    return final, [wait_until(lambda n=name: ended(n), timeout_s=240, what=f"rule job {name}") for name in names]


def _check_job(cloud: Any, est: Any, job: str, rules: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    from sagemaker_debugger_ext.trials import create_trial

    sent = cloud.client.store.read_request(job)
    assert [k for k in DEBUGGER_FIELDS if k in sent] == []
    final, rule_jobs = _wait_for_everything(cloud, job)
    assert final["TrainingJobStatus"] == "Stopped", final.get("FailureReason")
    names = {j["ProcessingJobName"]: j for j in rule_jobs}
    for rule in rules:
        pattern = re.compile(rf"^{re.escape(job[:26])}-{rule.lower()[:26]}-[0-9a-f]{{8}}$")
        assert [n for n in names if pattern.match(n)], (rule, sorted(names))
    assert all(j["ProcessingJobStatus"] == "Completed" for j in rule_jobs), [
        (j["ProcessingJobName"], j.get("FailureReason")) for j in rule_jobs
    ]
    summary = {s["RuleConfigurationName"]: s for s in est.latest_training_job.rule_job_summary()}
    exploding = summary["ExplodingTensor"]
    assert exploding["RuleEvaluationStatus"] == "IssuesFound", exploding
    arn = exploding["RuleEvaluationJobArn"]
    assert re.match(r"^arn:aws:sagemaker:us-west-2:\d{12}:processing-job/", arn)
    assert arn.rsplit("/", 1)[-1] in names
    trial = create_trial(est.latest_job_debugger_artifacts_path())
    steps = trial.tensor_names() and trial.steps()
    assert steps and min(steps) == 0 and max(steps) >= 30
    return summary


def _hook() -> Any:
    from sagemaker.debugger import CollectionConfig, DebuggerHookConfig

    every_step = {"save_interval": "1"}
    return DebuggerHookConfig(
        hook_parameters=every_step,
        collection_configs=[CollectionConfig("losses", every_step)],
    )


def _rules() -> list[Any]:
    from sagemaker.debugger import CollectionConfig, Rule, rule_configs

    stop = rule_configs.ActionList(rule_configs.StopTraining())
    losses = [CollectionConfig("losses", {"save_interval": "1"})]  # the SDK merges the rules' own (500) otherwise
    return [
        Rule.sagemaker(rule_configs.exploding_tensor(), actions=stop, collections_to_save=losses),
        Rule.sagemaker(rule_configs.loss_not_decreasing(), collections_to_save=losses),
    ]


def test_our_estimator_self_hosted_on_a_real_session(cloud: Any) -> None:
    """Estimator(debugger_backend="self-hosted") + sagemaker.Session: no Debugger field sent, rule jobs stop the job;
    a profiler rule and a Rule.custom rule run as rule jobs too."""
    from sagemaker.debugger import ProfilerRule, Rule, rule_configs

    from sagemaker_debugger_ext import Estimator

    extra = [
        ProfilerRule.sagemaker(rule_configs.CPUBottleneck()),
        Rule.custom(name="LossIsNaN", image_uri="any", instance_type="ml.t3.medium", volume_size_in_gb=1,
                    source=str(RULES / "nan_rules.py"), rule_to_invoke="LossIsNaN"),
    ]  # fmt: skip
    est = Estimator(
        image_uri="123456789012.dkr.ecr.us-west-2.amazonaws.com/pytorch:latest", role=ROLE,
        instance_count=1, instance_type="ml.m5.xlarge", entry_point="train_nan_at_30.py",
        source_dir=str(SCRIPTS), output_path=f"s3://{cloud.bucket}/out",
        sagemaker_session=_session(cloud), rules=_rules() + extra, debugger_hook_config=_hook(),
        debugger_backend="self-hosted",
    )  # fmt: skip
    est.fit(job_name="self-hosted-ours", wait=False)
    summary = _check_job(
        cloud, est, "self-hosted-ours", ("ExplodingTensor", "LossNotDecreasing", "CPUBottleneck", "LossIsNaN")
    )
    assert summary["LossIsNaN"]["RuleEvaluationStatus"] == "IssuesFound", summary["LossIsNaN"]
    profiler = {
        s["RuleConfigurationName"]: s for s in est.latest_training_job.describe()["ProfilerRuleEvaluationStatuses"]
    }
    assert profiler["CPUBottleneck"]["RuleEvaluationStatus"] in ("NoIssuesFound", "IssuesFound"), profiler
    assert est.latest_job_profiler_artifacts_path() == f"s3://{cloud.bucket}/out/self-hosted-ours/profiler-output"
    keys = cloud.s3.list_objects_v2(Bucket=cloud.bucket, Prefix="out/self-hosted-ours/profiler-output/system/")
    assert any("incremental" in k["Key"] for k in keys.get("Contents", [])), keys.get("Contents")
    reports = cloud.s3.list_objects_v2(Bucket=cloud.bucket, Prefix="out/self-hosted-ours/rule-output/ExplodingTensor/")
    assert {k["Key"].rsplit("/", 1)[-1] for k in reports["Contents"]} >= {"status.json", "rule-report.json"}


def test_sdk_pytorch_estimator_with_debugger_session(cloud: Any) -> None:
    """sagemaker.pytorch.PyTorch + DebuggerSession(debugger_backend="self-hosted"): the same outcome."""
    from sagemaker.pytorch import PyTorch

    from sagemaker_debugger_ext.cloud import DebuggerSession

    est = PyTorch(
        entry_point="train_nan_at_30.py", source_dir=str(SCRIPTS), role=ROLE, framework_version="2.3",
        py_version="py311", instance_count=1, instance_type="ml.m5.xlarge", output_path=f"s3://{cloud.bucket}/out",
        sagemaker_session=_session(cloud, DebuggerSession, debugger_backend="self-hosted"), rules=_rules(),
        debugger_hook_config=_hook(),
    )  # fmt: skip
    est.fit(job_name="self-hosted-sdk-pytorch", wait=False)
    _check_job(cloud, est, "self-hosted-sdk-pytorch", ("ExplodingTensor", "LossNotDecreasing"))


def _ended_rule_jobs(cloud: Any, job: str) -> dict[str, dict[str, Any]]:
    """The rule jobs of ``job`` once all have ended (polled with a deadline), by rule name."""
    names = [
        s["ProcessingJobName"] for s in cloud.sm.list_processing_jobs(NameContains=job[:26])["ProcessingJobSummaries"]
    ]
    assert len(names) == 2, names

    def all_ended() -> Any:
        described = [cloud.sm.describe_processing_job(ProcessingJobName=n) for n in names]
        return all(d["ProcessingJobStatus"] in ("Completed", "Failed", "Stopped") for d in described) and described

    described = wait_until(all_ended, timeout_s=240, what=f"the rule jobs of {job} to end")
    return {d["ProcessingJobName"].split("-")[-2]: d for d in described}


# The promise (cloud/_rule_job.py): a rule job asks every --poll-seconds (10) whether training has
# ended, then gets --final-grace-seconds (120) for its final evaluation and 10 s to exit.
FINAL_EVALUATION_S = 10 + 120 + 10 + 10


def test_failed_and_timed_out_jobs_end_their_rule_jobs(cloud: Any) -> None:
    """A training job that fails (the script raises at step 8) and one that runs past MaxRuntimeInSeconds:
    their rule jobs end within their final evaluation of the training's end, and each rule's status says why."""
    from sagemaker_debugger_ext import Estimator

    def start(job: str, **kwargs: Any) -> Any:
        est = Estimator(
            image_uri="123456789012.dkr.ecr.us-west-2.amazonaws.com/pytorch:latest", role=ROLE,
            instance_count=1, instance_type="ml.m5.xlarge", entry_point="train_nan_at_30.py",
            source_dir=str(SCRIPTS), output_path=f"s3://{cloud.bucket}/out",
            sagemaker_session=_session(cloud), rules=_rules(), debugger_hook_config=_hook(),
            debugger_backend="self-hosted", **kwargs,
        )  # fmt: skip
        est.fit(job_name=job, wait=False)
        return est

    failing = start("self-hosted-fails", hyperparameters={"nan-step": 100000, "fail-at-step": 8})
    timed_out = start("self-hosted-times-out", hyperparameters={"nan-step": 100000}, max_run=25)
    for est, status, why in (
        (failing, "Failed", "The training job ended Failed (AlgorithmError"),
        (timed_out, "Stopped", "The training job ended Stopped (MaxRuntimeExceeded)"),
    ):
        job = est.latest_training_job.name
        training = cloud.client.wait(job, timeout_s=240)
        assert training["TrainingJobStatus"] == status, training
        rule_jobs = _ended_rule_jobs(cloud, job)
        for rule, described in rule_jobs.items():
            assert described["ProcessingJobStatus"] == "Completed", (job, rule, described.get("FailureReason"))
            late = (described["ProcessingEndTime"] - training["TrainingEndTime"]).total_seconds()
            assert late < FINAL_EVALUATION_S, (job, rule, late)
        summary = {s["RuleConfigurationName"]: s for s in est.latest_training_job.rule_job_summary()}
        assert set(summary) == {"ExplodingTensor", "LossNotDecreasing"}, summary
        for status_of_rule in summary.values():
            assert status_of_rule["RuleEvaluationStatus"] in ("NoIssuesFound", "IssuesFound"), (job, status_of_rule)
            assert status_of_rule["StatusDetails"].startswith(why), (job, status_of_rule)
        if status == "Failed":
            assert "failed on purpose at step 8" in training["FailureReason"], training["FailureReason"]
        else:
            assert training["SecondaryStatus"] == "MaxRuntimeExceeded", training
            trial_steps = create_trial_steps(est)
            assert trial_steps and max(trial_steps) >= 1, trial_steps


def create_trial_steps(est: Any) -> list[int]:
    """The steps of the job's trial on S3 (what the timed-out job saved before it was stopped)."""
    from sagemaker_debugger_ext.trials import create_trial

    return list(create_trial(est.latest_job_debugger_artifacts_path()).steps())


def test_a_two_host_job_ends_its_trial_after_the_last_hosts_files(cloud: Any) -> None:
    """instance_count=2: each host's launcher syncs its worker; only the first host writes the end
    marker, once the second has synced its last step (its script ends seconds later)."""
    import threading

    from sagemaker.debugger import CollectionConfig, DebuggerHookConfig

    from sagemaker_debugger_ext import Estimator

    every_step = {"save_interval": "1"}
    hook = DebuggerHookConfig(
        hook_parameters={**every_step, "include_workers": "all"},
        collection_configs=[CollectionConfig("losses", every_step)],
    )
    est = Estimator(
        image_uri="123456789012.dkr.ecr.us-west-2.amazonaws.com/pytorch:latest", role=ROLE,
        instance_count=2, instance_type="ml.m5.xlarge", entry_point="train_two_hosts.py",
        source_dir=str(SCRIPTS), output_path=f"s3://{cloud.bucket}/out", sagemaker_session=_session(cloud),
        debugger_hook_config=hook, debugger_backend="self-hosted", rules=[],
    )  # fmt: skip
    prefix = "out/two-hosts/debug-output/"
    at_marker: list[set[str]] = []
    done = threading.Event()

    def keys() -> set[str]:
        pages = cloud.s3.get_paginator("list_objects_v2").paginate(Bucket=cloud.bucket, Prefix=prefix)
        return {o["Key"].removeprefix(prefix) for page in pages for o in page.get("Contents", [])}

    def watch() -> None:  # what S3 held when the end marker first appeared there
        while not done.is_set() and not at_marker:
            now = keys()
            if "training_job_end.ts" in now:
                at_marker.append(now)
            done.wait(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    est.fit(job_name="two-hosts", wait=False)
    final = cloud.client.wait("two-hosts", timeout_s=240)
    done.set()
    watcher.join(timeout=30)
    assert final["TrainingJobStatus"] == "Completed", final.get("FailureReason")
    assert at_marker, "no end marker on S3"
    last_of_second_host = "events/000000000014/000000000014_worker_1.tfevents"
    assert last_of_second_host in at_marker[0], sorted(at_marker[0])
    assert "events/000000000009/000000000009_worker_0.tfevents" in at_marker[0]
    hosts = cloud.s3.list_objects_v2(Bucket=cloud.bucket, Prefix="out/two-hosts/debugger-self-hosted/hosts/")
    assert sorted(o["Key"].rsplit("/", 1)[-1] for o in hosts["Contents"]) == ["algo-1.ended", "algo-2.ended"]
