"""Bad inputs: each gives a clear error (type, field and value named) at construction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import sagemaker_debugger_ext as sdx
from sagemaker_debugger_ext._exceptions import (
    ConfigStateError,
    ConfigTypeError,
    ConfigValueError,
    DebuggerExtError,
)

rc = sdx.rule_configs

BAD_INPUTS: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("collection_name_empty", lambda: sdx.CollectionConfig(""), ConfigValueError, "CollectionConfig.name"),
    ("collection_name_not_str", lambda: sdx.CollectionConfig(5), ConfigTypeError, "CollectionConfig.name"),
    (
        "collection_param_not_str",
        lambda: sdx.CollectionConfig("w", {"save_interval": 5}),
        ConfigTypeError,
        "save_interval",
    ),
    (
        "collection_params_not_dict",
        lambda: sdx.CollectionConfig("w", ["a"]),
        ConfigTypeError,
        "CollectionConfig.parameters",
    ),
    (
        "hook_param_not_str",
        lambda: sdx.DebuggerHookConfig(hook_parameters={"save_interval": 100}),
        ConfigTypeError,
        "hook_parameters",
    ),
    (
        "hook_param_too_long",
        lambda: sdx.DebuggerHookConfig(hook_parameters={"k": "x" * 257}),
        ConfigValueError,
        "at most 256",
    ),
    (
        "hook_params_too_many",
        lambda: sdx.DebuggerHookConfig(hook_parameters={f"k{i}": "v" for i in range(21)}),
        ConfigValueError,
        "at most 20",
    ),
    (
        "hook_collections_wrong_type",
        lambda: sdx.DebuggerHookConfig(collection_configs=["weights"]),
        ConfigTypeError,
        "CollectionConfig",
    ),
    ("hook_s3_not_str", lambda: sdx.DebuggerHookConfig(s3_output_path=3), ConfigTypeError, "s3_output_path"),
    (
        "tensorboard_s3_missing_type",
        lambda: sdx.TensorBoardOutputConfig(None),
        ConfigTypeError,
        "TensorBoardOutputConfig.s3_output_path",
    ),
    (
        "unknown_rule_config",
        lambda: sdx.Rule.sagemaker({"DebugRuleConfiguration": {"RuleConfigurationName": "NoSuchRule"}}),
        ConfigValueError,
        "NoSuchRule",
    ),
    ("rule_base_config_none", lambda: sdx.Rule.sagemaker(None), ConfigTypeError, "base_config"),
    (
        "profiler_rule_in_rule_sagemaker",
        lambda: sdx.Rule.sagemaker(rc.ProfilerReport()),
        ConfigTypeError,
        "ProfilerRule.sagemaker",
    ),
    (
        "debugger_rule_in_profiler_rule",
        lambda: sdx.ProfilerRule.sagemaker(rc.vanishing_gradient()),
        ConfigTypeError,
        "Rule.sagemaker",
    ),
    (
        "rule_to_invoke_on_builtin",
        lambda: sdx.Rule.sagemaker(rc.vanishing_gradient(), rule_parameters={"rule_to_invoke": "X"}),
        ConfigStateError,
        "rule_to_invoke",
    ),
    (
        "actions_wrong_type",
        lambda: sdx.Rule.sagemaker(rc.vanishing_gradient(), actions="stop"),
        ConfigStateError,
        "'actions'",
    ),
    ("email_invalid", lambda: rc.Email("Not An Email"), ConfigValueError, "Email.email_address"),
    ("email_upper_case", lambda: rc.Email("ABC@abc.com"), ConfigValueError, "lower-case letters"),
    ("phone_invalid", lambda: rc.SMS("12345"), ConfigValueError, "SMS.phone_number"),
    ("prefix_invalid", lambda: rc.StopTraining("bad prefix!"), ConfigValueError, "StopTraining.training_job_prefix"),
    (
        "action_list_non_action",
        lambda: rc.ActionList(rc.StopTraining(), "email"),
        ConfigTypeError,
        "ActionList.actions[1]",
    ),
    (
        "rule_param_not_str",
        lambda: sdx.Rule.sagemaker(rc.vanishing_gradient(), rule_parameters={"threshold": 0.5}),
        ConfigTypeError,
        "threshold",
    ),
    (
        "source_without_rule_to_invoke",
        lambda: sdx.Rule.custom("R", "img", "ml.m5.xlarge", 10, source="r.py"),
        ConfigValueError,
        "rule to invoke",
    ),
    (
        "rule_to_invoke_without_source",
        lambda: sdx.ProfilerRule.custom("R", "img", "ml.m5.xlarge", 10, rule_to_invoke="R"),
        ConfigValueError,
        "source",
    ),
    ("rule_name_empty", lambda: sdx.Rule.custom("", "img", "ml.m5.xlarge", 10), ConfigValueError, "'name'"),
    (
        "rule_volume_negative",
        lambda: sdx.Rule.custom("R", "img", "ml.m5.xlarge", -1),
        ConfigValueError,
        "volume_size_in_gb",
    ),
    (
        "other_trials_not_list",
        lambda: sdx.Rule.sagemaker(rc.vanishing_gradient(), other_trials_s3_input_paths="s3://a"),
        ConfigTypeError,
        "other_trials",
    ),
    (
        "negative_interval",
        lambda: sdx.ProfilerConfig(system_monitor_interval_millis=-500),
        ConfigValueError,
        "system_monitor_interval_millis",
    ),
    (
        "interval_not_int",
        lambda: sdx.ProfilerConfig(system_monitor_interval_millis="500"),
        ConfigTypeError,
        "system_monitor_interval_millis",
    ),
    (
        "framework_params_wrong_type",
        lambda: sdx.ProfilerConfig(framework_profile_params="x"),
        ConfigTypeError,
        "framework_profile_params",
    ),
    ("profile_params_wrong_type", lambda: sdx.ProfilerConfig(profile_params={}), ConfigTypeError, "profile_params"),
    (
        "both_profilers",
        lambda: sdx.ProfilerConfig(framework_profile_params=sdx.FrameworkProfile(), profile_params=sdx.Profiler()),
        ConfigValueError,
        "cannot both",
    ),
    (
        "disable_profiler_not_bool",
        lambda: sdx.ProfilerConfig(disable_profiler="yes"),
        ConfigTypeError,
        "disable_profiler",
    ),
    (
        "step_and_time_range",
        lambda: sdx.DetailedProfilingConfig(start_step=1, duration=10),
        ConfigValueError,
        "both a step range",
    ),
    ("negative_start_step", lambda: sdx.DataloaderProfilingConfig(start_step=-1), ConfigValueError, "start_step"),
    ("zero_num_steps", lambda: sdx.PythonProfilingConfig(num_steps=0), ConfigValueError, "num_steps"),
    ("negative_duration", lambda: sdx.HorovodProfilingConfig(duration=-1.0), ConfigValueError, "duration"),
    (
        "bad_unix_time",
        lambda: sdx.SMDataParallelProfilingConfig(start_unix_time=10**20),
        ConfigValueError,
        "start_unix_time",
    ),
    ("bad_metrics_regex", lambda: sdx.DataloaderProfilingConfig(metrics_regex="("), ConfigValueError, "metrics_regex"),
    (
        "bad_python_profiler",
        lambda: sdx.PythonProfilingConfig(python_profiler="perf"),
        ConfigValueError,
        "python_profiler",
    ),
    (
        "framework_profile_bad_file_size",
        lambda: sdx.FrameworkProfile(file_max_size=0),
        ConfigValueError,
        "file_max_size",
    ),
    (
        "framework_profile_step_and_time",
        lambda: sdx.FrameworkProfile(start_step=2, start_unix_time=1700000000),
        ConfigValueError,
        "both a step range",
    ),
    (
        "unknown_region_image",
        lambda: sdx.get_rule_container_image_uri("VanishingGradient", "mars-north-1"),
        ConfigValueError,
        "mars-north-1",
    ),
    (
        "detailed_profiler_region",
        lambda: sdx.get_rule_container_image_uri("DetailedProfilerProcessingJobConfig-1", "ap-south-1"),
        ConfigValueError,
        "detailed-profiler",
    ),
]


@pytest.mark.parametrize(("case", "make", "error", "fragment"), BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_raises_clear_error(
    case: str, make: Callable[[], Any], error: type[Exception], fragment: str
) -> None:
    """The expected error type (a ValueError/TypeError/RuntimeError subclass) names the field."""
    with pytest.raises(error) as info:
        make()
    assert isinstance(info.value, DebuggerExtError)
    assert fragment in str(info.value)


def test_bad_input_table_is_large_enough() -> None:
    """The table holds at least 25 bad inputs."""
    assert len(BAD_INPUTS) >= 25


def test_messages_follow_house_style() -> None:
    """Messages read ``'<field>' must be <expected> (got <value!r>)``."""
    with pytest.raises(ConfigTypeError) as info:
        sdx.DebuggerHookConfig(hook_parameters={"save_interval": 100})
    assert str(info.value) == "\"DebuggerHookConfig.hook_parameters['save_interval']\" must be a string (got 100)"
