"""Every SDK v2 error scenario raises in ours too: same exception type (or a subclass), clearer message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from estimator_harness import ESTIMATOR_ARGS, make_session

import sagemaker_debugger_ext as ours
from sagemaker_debugger_ext._exceptions import DebuggerExtError

X_OUT = "s3://my-bucket/out"


def _fit(estimator_cls: type, region: str = "us-west-2", **kwargs: Any) -> None:
    args = {**ESTIMATOR_ARGS, "sagemaker_session": make_session(region), "output_path": X_OUT, **kwargs}
    estimator_cls(**args).fit(wait=False, job_name="err-job")


# name -> callable(d, Estimator) that raises; d is sagemaker.debugger or our package
ERRORS: dict[str, Callable[[Any, type], Any]] = {
    "j5_disable_profiler_with_profiler_config": lambda d, E: _fit(
        E, disable_profiler=True, profiler_config=d.ProfilerConfig()
    ),
    "j4_disable_profiler_with_profiler_rule": lambda d, E: _fit(
        E, disable_profiler=True, rules=[d.ProfilerRule.sagemaker(d.rule_configs.ProfilerReport())]
    ),
    "j_unsupported_region_builtin_rule": lambda d, E: _fit(
        E, "ap-southeast-3", rules=[d.Rule.sagemaker(d.rule_configs.vanishing_gradient())]
    ),
    "j2_unsupported_region_hook_config": lambda d, E: _fit(
        E, "ap-southeast-3", debugger_hook_config=d.DebuggerHookConfig(s3_output_path=X_OUT)
    ),
    "unsupported_region_custom_rule": lambda d, E: _fit(
        E,
        "ap-southeast-3",
        rules=[d.Rule.custom("R", "111122223333.dkr.ecr.us-west-2.amazonaws.com/r:1", "ml.m5.xlarge", 10)],
    ),
    "detailed_profiler_region_without_image": lambda d, E: _fit(
        E, "ap-south-1", profiler_config=d.ProfilerConfig(profile_params=d.Profiler())
    ),
    "rules_list_with_non_rule": lambda d, E: _fit(E, rules=["VanishingGradient"]),
    "rule_to_invoke_on_builtin": lambda d, E: d.Rule.sagemaker(
        d.rule_configs.vanishing_gradient(), rule_parameters={"rule_to_invoke": "X"}
    ),
    "invalid_actions": lambda d, E: d.Rule.sagemaker(d.rule_configs.vanishing_gradient(), actions=["stop"]),
    "invalid_actions_custom": lambda d, E: d.Rule.custom("R", "img", "ml.m5.xlarge", 10, actions=42),
    "source_without_rule_to_invoke": lambda d, E: d.Rule.custom("R", "img", "ml.m5.xlarge", 10, source="s3://b/r.py"),
    "profiler_rule_source_without_rule_to_invoke": lambda d, E: d.ProfilerRule.custom(
        "R", "img", "ml.m5.xlarge", 10, rule_to_invoke="R"
    ),
    "both_profilers": lambda d, E: d.ProfilerConfig(
        framework_profile_params=d.FrameworkProfile(), profile_params=d.Profiler()
    ),
    "base_config_none": lambda d, E: d.Rule.sagemaker(None),
    "unknown_region_image": lambda d, E: d.get_rule_container_image_uri("VanishingGradient", "mars-north-1"),
    "stop_training_bad_prefix": lambda d, E: d.rule_configs.StopTraining("bad prefix!"),
    "email_bad_address": lambda d, E: d.rule_configs.Email("ABC@abc.com"),
    "sms_bad_number": lambda d, E: d.rule_configs.SMS("555"),
}


# what each of our messages names (the offending value or field)
FRAGMENTS = {
    "j5_disable_profiler_with_profiler_config": "profiler_config",
    "j4_disable_profiler_with_profiler_rule": "ProfilerReport",
    "j_unsupported_region_builtin_rule": "'ap-southeast-3'",
    "j2_unsupported_region_hook_config": "'ap-southeast-3'",
    "unsupported_region_custom_rule": "'ap-southeast-3'",
    "detailed_profiler_region_without_image": "'ap-south-1'",
    "rules_list_with_non_rule": "'VanishingGradient'",
    "rule_to_invoke_on_builtin": "'X'",
    "invalid_actions": "['stop']",
    "invalid_actions_custom": "42",
    "source_without_rule_to_invoke": "s3://b/r.py",
    "profiler_rule_source_without_rule_to_invoke": "rule_to_invoke='R'",
    "both_profilers": "profile_params",
    "base_config_none": "None",
    "unknown_region_image": "'mars-north-1'",
    "stop_training_bad_prefix": "'bad prefix!'",
    "email_bad_address": "'ABC@abc.com'",
    "sms_bad_number": "'555'",
}


@pytest.mark.parametrize("name", sorted(ERRORS), ids=sorted(ERRORS))
def test_sdk_error_scenario_raises_in_ours(name: str, aws: None) -> None:
    """Ours raises the SDK's exception type or a subclass of it, and a message naming the value."""
    import sagemaker.debugger
    import sagemaker.estimator

    with pytest.raises(Exception) as sdk_info:
        ERRORS[name](sagemaker.debugger, sagemaker.estimator.Estimator)
    with pytest.raises(Exception) as our_info:
        ERRORS[name](ours, ours.Estimator)
    assert isinstance(our_info.value, type(sdk_info.value)), (type(sdk_info.value), type(our_info.value))
    assert isinstance(our_info.value, DebuggerExtError)
    assert FRAGMENTS[name] in str(our_info.value)


def test_sdk_assertion_errors_become_type_errors() -> None:
    """Where the SDK uses ``assert`` (AssertionError), ours raises TypeError/ValueError (a difference)."""
    import sagemaker.debugger as d

    with pytest.raises(AssertionError):
        d.ProfilerConfig(framework_profile_params="x")
    with pytest.raises(TypeError, match="framework_profile_params"):
        ours.ProfilerConfig(framework_profile_params="x")
    with pytest.raises(AssertionError):
        d.DetailedProfilingConfig(start_step=1, duration=5)
    with pytest.raises(ValueError, match="step range"):
        ours.DetailedProfilingConfig(start_step=1, duration=5)
