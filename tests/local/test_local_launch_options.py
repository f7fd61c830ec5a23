"""The supervisor's launch options: one frozen object read from launch.json, defaults and clear errors."""

from __future__ import annotations

import attrs
import pytest

from sagemaker_debugger_ext._exceptions import ConfigValueError
from sagemaker_debugger_ext.local.supervisor._launch import LaunchOptions


def test_defaults_for_an_empty_launch_file() -> None:
    """Missing keys take the supervisor's defaults."""
    o = LaunchOptions.from_json({})
    assert (o.region, o.output_path, o.caller_cwd, o.poll_s, o.stop_grace_s, o.rule_wait_s) == (
        "us-east-1",
        "",
        None,
        0.05,
        10.0,
        120.0,
    )
    assert (o.rule_poll_s, o.sync_interval_s, o.start_monitor) == (0.1, 1.0, True)
    assert (o.debug_rule_module, o.profiler_rule_module) == (
        "sagemaker_debugger_ext.rules",
        "sagemaker_debugger_ext.profiler.rules",
    )
    assert o.event_settings() == {"Region": "us-east-1", "EventHandlers": [], "EventBusName": None}


def test_values_from_the_client_settings() -> None:
    """Every key the client writes lands in its field, converted."""
    o = LaunchOptions.from_json(
        {
            "Region": "eu-west-1",
            "OutputPath": "file:///o",
            "CallerCwd": "/w",
            "PollSeconds": "0.5",
            "StopGraceSeconds": 3,
            "RuleWaitSeconds": 7,
            "RulePollSeconds": 0.2,
            "SyncIntervalSeconds": 0.25,
            "StartMonitor": "false",
            "DebugRuleModule": "my_rules",
            "EventHandlers": [{"handler": "h.py:f"}],
            "EventBusName": "bus",
        }
    )
    assert (o.region, o.output_path, o.caller_cwd, o.poll_s, o.stop_grace_s, o.rule_wait_s) == (
        "eu-west-1",
        "file:///o",
        "/w",
        0.5,
        3.0,
        7.0,
    )
    assert (o.rule_poll_s, o.sync_interval_s, o.start_monitor, o.debug_rule_module) == (0.2, 0.25, False, "my_rules")
    assert o.event_settings()["EventHandlers"] == [{"handler": "h.py:f"}] and o.event_bus_name == "bus"
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        attrs.evolve(o).__setattr__("poll_s", 1.0)


@pytest.mark.parametrize(
    ("key", "value"), [("PollSeconds", "soon"), ("StopGraceSeconds", -1), ("SyncIntervalSeconds", True)], ids=str
)
def test_bad_value_names_the_key(key: str, value: object) -> None:
    """A bad number is a ConfigValueError naming the launch key and the value."""
    with pytest.raises(ConfigValueError, match=rf"'{key}' must be a number of seconds >= 0 \(got {value!r}\)"):
        LaunchOptions.from_json({key: value})


@pytest.mark.parametrize(
    ("instance_type", "grace", "expected"),
    [("ml.m5.xlarge", 10.0, 120.0), ("ml.m5.xlarge", 300.0, 300.0), ("local", 10.0, 10.0), (None, 10.0, 10.0)],
)
def test_ml_instance_types_get_the_services_stop_grace(
    instance_type: str | None, grace: float, expected: float
) -> None:
    """An ml.* job's training processes get SageMaker's 120 s between SIGTERM and SIGKILL (a self-hosted
    launcher's final sync and end markers need it); local jobs keep StopGraceSeconds."""
    from sagemaker_debugger_ext.local.supervisor._launch import training_grace_s

    request = {"ResourceConfig": {"InstanceType": instance_type}} if instance_type else {}
    assert training_grace_s(request, grace) == expected
