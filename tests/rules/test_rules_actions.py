"""action_json parsing and the StopTraining / Email / SMS actions."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from moto import mock_aws
from smdebug_rulesconfig import SMS, ActionList, Email, StopTraining

from sagemaker_debugger_ext._exceptions import RuleParameterError
from sagemaker_debugger_ext.rules import Actions, ActionSpec, parse_action_json


def test_parses_sdk_serialisation_with_backslash_quotes() -> None:
    """The SDK's literal backslash-quoted action_json parses into three actions."""
    text = ActionList(StopTraining("my-job"), Email("a@b.com"), SMS("+15555550100")).serialize()
    assert '\\"' in text
    assert parse_action_json(text) == (
        ActionSpec(name="stoptraining", training_job_prefix="my-job"),
        ActionSpec(name="email", endpoint="a@b.com"),
        ActionSpec(name="sms", endpoint="+15555550100"),
    )


def test_plain_json_object_is_one_action() -> None:
    """A plain JSON object (not a list) is one action; names are case-insensitive."""
    assert parse_action_json('{"name": "StopTraining", "training_job_prefix": "j"}') == (
        ActionSpec(name="stoptraining", training_job_prefix="j"),
    )


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("not json", "'action_json' must be a JSON object or list of objects"),
        ('[{"name": "page"}]', "'action_json name' must be one of"),
        ('[{"name": "email"}]', "'action_json endpoint of email' must be a non-empty string"),
    ],
    ids=["not-json", "unknown", "no-endpoint"],
)
def test_bad_action_json(text: str, fragment: str) -> None:
    """Bad action_json raises RuleParameterError with a clear message."""
    with pytest.raises(RuleParameterError, match=fragment):
        parse_action_json(text)


def test_stop_training_writes_stop_file_once(tmp_path: Path) -> None:
    """In a local job StopTraining writes the stop request file, only on the first firing."""
    stop = tmp_path / "stop.json"
    actions = Actions(
        parse_action_json('[{"name":"stoptraining","training_job_prefix":"j"}]'), rule_name="Loss", stop_file=stop
    )
    assert actions.invoke("at step 3") and actions.invoke("again") == []
    doc = json.loads(stop.read_text())
    assert doc["RuleConfigurationName"] == "Loss" and "at step 3" in doc["Reason"]


def test_stop_training_without_stop_file_skips_finished_jobs() -> None:
    """Standalone, StopTraining only considers InProgress jobs (moto's job is Completed)."""
    with mock_aws():
        sm = boto3.client("sagemaker", region_name="us-west-2")
        sm.create_training_job(
            TrainingJobName="prefix-job-1",
            AlgorithmSpecification={"TrainingImage": "img", "TrainingInputMode": "File"},
            RoleArn="arn:aws:iam::123456789012:role/r",
            OutputDataConfig={"S3OutputPath": "s3://b/o"},
            ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 1},
            StoppingCondition={"MaxRuntimeInSeconds": 60},
        )
        actions = Actions(
            (ActionSpec(name="stoptraining", training_job_prefix="prefix-job"),), rule_name="R", region="us-west-2"
        )
        assert actions.invoke("fired") == ["StopTraining: 0 InProgress jobs match prefix 'prefix-job'; none stopped"]


class _RecordingSageMaker:
    """Stands in for boto3's SageMaker client: two InProgress jobs share a prefix."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.stopped: list[str] = []

    def list_training_jobs(self, **kw: object) -> dict[str, object]:
        assert kw["StatusEquals"] == "InProgress"
        return {"TrainingJobSummaries": [{"TrainingJobName": n} for n in self.names if str(kw["NameContains"]) in n]}

    def stop_training_job(self, TrainingJobName: str) -> None:
        self.stopped.append(TrainingJobName)


@pytest.mark.parametrize(
    ("names", "stopped"),
    [(["job-a-1", "other"], ["job-a-1"]), (["job-a-1", "job-a-2"], [])],
    ids=["one-match", "ambiguous"],
)
def test_stop_training_stops_only_a_unique_match(names: list[str], stopped: list[str]) -> None:
    """As smdebug: the job is stopped only when exactly one InProgress job has the prefix."""
    client = _RecordingSageMaker(names)
    actions = Actions(
        (ActionSpec(name="stoptraining", training_job_prefix="job-a"),), rule_name="R", client_factory=lambda _: client
    )
    actions.invoke("fired")
    assert client.stopped == stopped


def test_email_and_sms_publish_to_sns_topic() -> None:
    """Email/SMS subscribe their endpoint to SMDebugRules and publish a message."""
    with mock_aws():
        actions = Actions(
            (ActionSpec(name="email", endpoint="a@b.com"), ActionSpec(name="sms", endpoint="+15555550100")),
            rule_name="Overfit",
            region="us-west-2",
        )
        lines = actions.invoke("step 7")
        assert all("notified" in line for line in lines), lines
        sns = boto3.client("sns", region_name="us-west-2")
        (topic,) = sns.list_topics()["Topics"]
        assert topic["TopicArn"].endswith(":SMDebugRules")
        subs = sns.list_subscriptions_by_topic(TopicArn=topic["TopicArn"])["Subscriptions"]
        assert sorted(s["Protocol"] for s in subs) == ["email", "sms"]
