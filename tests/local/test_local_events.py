"""Training-job state-change events of local jobs: recording, handlers, EventBridge (issue 18)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sagemaker_debugger_ext._exceptions import ConfigValueError
from sagemaker_debugger_ext.local.events._event_patterns import check_pattern, pattern_matches
from sagemaker_debugger_ext.local.events._events import (
    DETAIL_TYPE,
    EVENT_HANDLERS_ENV,
    handler_specs,
    read_events,
)

HANDLERS = Path(__file__).resolve().parent / "handlers"
AWS_LAMBDA = f"{HANDLERS / 'aws_stop_training_lambda.py'}:lambda_handler"
EVENT_KEYS = {"version", "id", "detail-type", "source", "account", "time", "region", "resources", "detail"}

_EVENT = {
    "source": "aws.sagemaker",
    "detail-type": DETAIL_TYPE,
    "detail": {
        "TrainingJobName": "job-1",
        "TrainingJobStatus": "InProgress",
        "TrainingTimeInSeconds": 12,
        "DebugRuleEvaluationStatuses": [
            {"RuleConfigurationName": "LossNotDecreasing", "RuleEvaluationStatus": "InProgress"},
            {"RuleConfigurationName": "VanishingGradient", "RuleEvaluationStatus": "IssuesFound"},
        ],
    },
}


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ({"source": ["aws.sagemaker"]}, True),
        ({"source": ["aws.ec2"]}, False),
        ({"detail-type": [DETAIL_TYPE], "detail": {"TrainingJobStatus": ["Failed", "InProgress"]}}, True),
        ({"detail": {"DebugRuleEvaluationStatuses": {"RuleEvaluationStatus": ["IssuesFound"]}}}, True),
        ({"detail": {"DebugRuleEvaluationStatuses": {"RuleEvaluationStatus": ["Error"]}}}, False),
        ({"detail": {"TrainingJobName": [{"prefix": "job-"}]}}, True),
        ({"detail": {"TrainingJobName": [{"suffix": "-2"}]}}, False),
        ({"detail": {"TrainingJobStatus": [{"anything-but": ["Completed", "Stopped"]}]}}, True),
        ({"detail": {"TrainingJobStatus": [{"anything-but": {"prefix": "In"}}]}}, False),
        ({"detail": {"FailureReason": [{"exists": False}]}}, True),
        ({"detail": {"FailureReason": [{"exists": True}]}}, False),
        ({"detail": {"TrainingTimeInSeconds": [{"numeric": [">", 10, "<=", 12]}]}}, True),
        ({"detail": {"TrainingTimeInSeconds": [{"numeric": ["<", 10]}]}}, False),
        ({"detail": {"TrainingJobStatus": [{"equals-ignore-case": "inprogress"}]}}, True),
        ({"detail": {"Missing": {"Nested": ["x"]}}}, False),
    ],
    ids=lambda v: json.dumps(v) if isinstance(v, dict) else str(v),
)
def test_event_patterns_match_as_eventbridge_does(pattern: dict[str, Any], expected: bool) -> None:
    """Each supported pattern form matches (or not) the way EventBridge documents it."""
    assert pattern_matches(check_pattern(pattern), _EVENT) is expected


@pytest.mark.parametrize(
    ("pattern", "where"),
    [
        ({}, "pattern"),
        ({"source": "aws.sagemaker"}, "pattern.source"),
        ({"source": []}, "pattern.source"),
        ({"detail": {"TrainingJobStatus": [{"prefixx": "In"}]}}, "pattern.detail.TrainingJobStatus[0]"),
        ({"detail": {"TrainingJobStatus": [{"exists": "yes"}]}}, "pattern.detail.TrainingJobStatus[0].exists"),
        ({"detail": {"T": [{"numeric": ["~", 1]}]}}, "pattern.detail.T[0].numeric"),
        ({"detail": {"T": [["nested"]]}}, "pattern.detail.T[0]"),
    ],
)
def test_bad_patterns_are_rejected_naming_the_place(pattern: Any, where: str) -> None:
    """A pattern that EventBridge would not accept fails at registration, naming where."""
    with pytest.raises(ConfigValueError, match=rf"'{__import__('re').escape(where)}' must be"):
        check_pattern(pattern)


def test_handler_references_are_checked_before_a_job_starts(tmp_path: Path) -> None:
    """A missing file, a bad reference or a bad timeout is an error naming the handler."""
    with pytest.raises(ConfigValueError, match=r"event_handlers\[0\]\.Handler.*existing Python file"):
        handler_specs(["nowhere/handler.py:lambda_handler"], environ={}, base_dir=tmp_path)
    with pytest.raises(ConfigValueError, match=r"must be 'path/to/file.py:function_name'"):
        handler_specs([str(HANDLERS / "misbehaving.py")], environ={})
    with pytest.raises(ConfigValueError, match=r"TimeoutSeconds"):
        handler_specs([{"Handler": AWS_LAMBDA, "TimeoutSeconds": 0}], environ={})
    with pytest.raises(ConfigValueError, match=rf"{EVENT_HANDLERS_ENV}\[0\]"):
        handler_specs([], environ={EVENT_HANDLERS_ENV: "missing.py:f"}, base_dir=tmp_path)
    specs = handler_specs([], environ={EVENT_HANDLERS_ENV: json.dumps([{"handler": AWS_LAMBDA, "timeoutSeconds": 5}])})
    assert [(s.handler, s.timeout_s) for s in specs] == [(AWS_LAMBDA, 5.0)]


def _rules_request(make_request: Any, name: str, *, stop: str, steps: int = 600, nan_step: int = 4) -> dict[str, Any]:
    req = make_request(
        name, hps={"steps": str(steps), "nan-step": str(nan_step), "step-seconds": "0.1"}, rules=("NaNRule",)
    )
    req["DebugRuleConfigurations"][0]["RuleParameters"]["stop"] = stop
    return req


def _check_event_shape(event: dict[str, Any], job: str) -> None:
    assert set(event) == EVENT_KEYS
    assert event["source"] == "aws.sagemaker" and event["detail-type"] == DETAIL_TYPE
    assert event["detail"]["TrainingJobName"] == job
    assert event["resources"] == [event["detail"]["TrainingJobArn"]]
    assert isinstance(event["detail"]["CreationTime"], int)  # epoch milliseconds, as SageMaker's events


@pytest.mark.slow
def test_aws_stop_training_lambda_stops_the_local_job(local_client: Any, make_request: Any) -> None:
    """AWS's notebook handler, unmodified, stops the job through its own stop_training_job call."""
    local_client.settings["EventHandlers"] = [AWS_LAMBDA]
    local_client.create_training_job(**_rules_request(make_request, "lambda-stop", stop="false"))
    desc = local_client.wait("lambda-stop", timeout_s=120)
    assert desc["TrainingJobStatus"] == "Stopped", "600 steps of 0.1 s: the handler must stop it long before the end"
    assert desc["SecondaryStatusTransitions"][-1]["StatusMessage"] == "Stopped by StopTrainingJob"
    assert [s["RuleEvaluationStatus"] for s in desc["DebugRuleEvaluationStatuses"]] == ["IssuesFound"]
    paths = local_client.store.paths("lambda-stop")
    assert not paths.stop_file.exists(), "the built-in StopTraining action must not be what stopped the job"
    events, _ = read_events(paths.root)
    for event in events:
        _check_event_shape(event, "lambda-stop")
    statuses = [(e["detail"]["TrainingJobStatus"], e["detail"]["SecondaryStatus"]) for e in events]
    assert statuses[0] == ("InProgress", "Downloading") and statuses[-1] == ("Stopped", "Stopped")
    assert ("Stopping", "Stopping") in statuses
    fired = [
        e for e in events if e["detail"]["DebugRuleEvaluationStatuses"][0]["RuleEvaluationStatus"] == "IssuesFound"
    ]
    assert fired, "an event must carry the rule's IssuesFound status"
    log = (paths.logs_dir / "handlers.log").read_text()
    assert 'resulted in "IssuesFound". Attempting to stop training job lambda-stop' in log


@pytest.mark.slow
def test_misbehaving_handlers_leave_the_outcome_unchanged(
    local_client: Any, make_request: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Handlers that raise, hang or name a missing function are reported in the logs; the job completes."""
    out = tmp_path / "events.jsonl"
    monkeypatch.setenv("EVENTS_OUT", str(out))
    final_only = {"detail": {"TrainingJobStatus": ["Completed"]}}
    local_client.settings["EventHandlers"] = [
        {"Handler": f"{HANDLERS / 'misbehaving.py'}:raises", "Pattern": final_only},
        {"Handler": f"{HANDLERS / 'misbehaving.py'}:hangs", "Pattern": final_only, "TimeoutSeconds": 1},
        {"Handler": f"{HANDLERS / 'misbehaving.py'}:not_there", "Pattern": final_only},
        {"Handler": f"{HANDLERS / 'misbehaving.py'}:records"},
    ]
    local_client.create_training_job(**make_request("bad-handlers", hps={"steps": "3"}))
    desc = local_client.wait("bad-handlers", timeout_s=120)
    assert desc["TrainingJobStatus"] == "Completed"
    assert local_client.wait_supervisor_exit("bad-handlers", timeout_s=60)
    log = (local_client.store.paths("bad-handlers").logs_dir / "handlers.log").read_text()
    assert "RuntimeError: handler failure on Completed" in log
    assert "misbehaving.py:hangs timed out after 1 s and was killed" in log
    assert "defines no function 'not_there'" in log
    recorded = [json.loads(line) for line in out.read_text().splitlines()]
    emitted = read_events(local_client.store.paths("bad-handlers").root)[0]
    # every event reached the recording handler exactly once; calls run concurrently, each in its
    # own process, so (as with EventBridge) the order of delivery is not guaranteed
    assert sorted(e["id"] for e in recorded) == sorted(e["id"] for e in emitted)
    assert "Completed" in {e["detail"]["TrainingJobStatus"] for e in recorded}


@pytest.mark.slow
def test_python_callables_receive_events_in_the_calling_process(local_client: Any, make_request: Any) -> None:
    """A callable handler runs in this process, filtered by its pattern; one that raises changes nothing."""
    seen: list[dict[str, Any]] = []

    def broken(event: dict[str, Any], context: Any) -> None:
        raise ValueError("broken handler")

    local_client.settings["EventHandlers"] = [
        {"Handler": lambda event, context: seen.append(event), "Pattern": {"source": ["aws.sagemaker"]}},
        broken,
    ]
    local_client.create_training_job(**make_request("callables", hps={"steps": "2"}))
    assert local_client.wait("callables", timeout_s=120)["TrainingJobStatus"] == "Completed"
    follower = local_client.followers[-1]
    follower.join(timeout=60)
    assert not follower.is_alive()
    assert seen[-1]["detail"]["TrainingJobStatus"] == "Completed"
    assert [e["id"] for e in seen] == [e["id"] for e in read_events(local_client.store.paths("callables").root)[0]]
    log = (local_client.store.paths("callables").logs_dir / "handlers.log").read_text()
    assert "ValueError: broken handler" in log


@pytest.mark.slow
def test_events_reach_eventbridge_on_moto_with_an_sqs_target(
    local_client: Any, make_request: Any, moto_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bus rule on moto's EventBridge (127.0.0.1) routes the job's events to an SQS queue."""
    import boto3

    monkeypatch.setenv("AWS_ENDPOINT_URL_EVENTS", moto_server)
    events = boto3.client("events", endpoint_url=moto_server, region_name="us-west-2")
    sqs = boto3.client("sqs", endpoint_url=moto_server, region_name="us-west-2")
    events.create_event_bus(Name="local-jobs")
    queue_url = sqs.create_queue(QueueName="job-events")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    pattern = {
        "source": ["aws.sagemaker"],
        "detail-type": [DETAIL_TYPE],
        "detail": {"TrainingJobStatus": ["Completed"]},
    }
    events.put_rule(Name="completed", EventBusName="local-jobs", EventPattern=json.dumps(pattern))
    events.put_targets(Rule="completed", EventBusName="local-jobs", Targets=[{"Id": "q", "Arn": queue_arn}])
    local_client.settings["EventBusName"] = "local-jobs"
    local_client.create_training_job(**make_request("to-bridge", hps={"steps": "2"}))
    assert local_client.wait("to-bridge", timeout_s=120)["TrainingJobStatus"] == "Completed"
    assert local_client.wait_supervisor_exit("to-bridge", timeout_s=60)
    got = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
    bodies = [json.loads(m["Body"]) for m in got]
    assert len(bodies) == 1, "exactly the final event matches the rule"
    assert bodies[0]["detail-type"] == DETAIL_TYPE and bodies[0]["source"] == "aws.sagemaker"
    assert bodies[0]["detail"]["TrainingJobName"] == "to-bridge"
    assert bodies[0]["detail"]["TrainingJobStatus"] == "Completed"
