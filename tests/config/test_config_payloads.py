"""Config objects produce the SDK's request dicts; conversions from sagemaker.debugger objects."""

from __future__ import annotations

from typing import Any

import pytest

import sagemaker_debugger_ext as sdx


@pytest.fixture(scope="module")
def d() -> Any:
    """The real ``sagemaker.debugger`` module (the oracle)."""
    import sagemaker.debugger

    return sagemaker.debugger


def test_collection_equality_and_hash_follow_sdk(d: Any) -> None:
    """CollectionConfig('a') != CollectionConfig('a', {}) but both hash alike, as in the SDK."""
    a, b = sdx.CollectionConfig("a"), sdx.CollectionConfig("a", {})
    assert a != b and hash(a) == hash(b) and len({a, b}) == 2
    assert (d.CollectionConfig("a") != d.CollectionConfig("a", {})) == (a != b)
    assert a._to_request_dict() == d.CollectionConfig("a")._to_request_dict()
    assert b._to_request_dict() == d.CollectionConfig("a", {})._to_request_dict()


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"s3_output_path": "s3://x"},
        {"container_local_output_path": "/l", "hook_parameters": {"save_interval": "1"}, "collection_configs": []},
    ],
    ids=["empty", "s3", "full"],
)
def test_hook_request_dict(d: Any, kwargs: dict[str, Any]) -> None:
    """DebuggerHookConfig._to_request_dict equals the SDK's (S3OutputPath always present)."""
    assert sdx.DebuggerHookConfig(**kwargs)._to_request_dict() == d.DebuggerHookConfig(**kwargs)._to_request_dict()


def test_tensorboard_request_dict(d: Any) -> None:
    """TensorBoardOutputConfig._to_request_dict equals the SDK's."""
    assert (
        sdx.TensorBoardOutputConfig("s3://t", "/l")._to_request_dict()
        == d.TensorBoardOutputConfig("s3://t", "/l")._to_request_dict()
    )


PROFILER_CASES = {
    "default": lambda m: m.ProfilerConfig(),
    "disabled": lambda m: m.ProfilerConfig(s3_output_path="s3://p", disable_profiler=True),
    "interval": lambda m: m.ProfilerConfig(s3_output_path="s3://p", system_monitor_interval_millis=100),
    "profiler_v2": lambda m: m.ProfilerConfig(
        profile_params=m.Profiler(cpu_profiling_duration=10, file_rotation_interval="5")
    ),
    "time_range": lambda m: m.ProfilerConfig(
        framework_profile_params=m.FrameworkProfile(start_unix_time=1700000000, duration=2.5)
    ),
    "num_steps_only": lambda m: m.ProfilerConfig(framework_profile_params=m.FrameworkProfile(num_steps=4)),
    "python_default_steps": lambda m: m.ProfilerConfig(
        framework_profile_params=m.FrameworkProfile(
            python_profiling_config=m.PythonProfilingConfig(profile_default_steps=True),
            horovod_profiling_config=m.HorovodProfilingConfig(start_step=1),
            smdataparallel_profiling_config=m.SMDataParallelProfilingConfig(duration=3),
        )
    ),
    "cpu_timer": lambda m: m.ProfilerConfig(
        framework_profile_params=m.FrameworkProfile(
            python_profiling_config=m.PythonProfilingConfig(cprofile_timer=m.cProfileTimer.CPU_TIME)
        )
    ),
}


@pytest.mark.parametrize("case", sorted(PROFILER_CASES), ids=sorted(PROFILER_CASES))
def test_profiler_request_dict(d: Any, case: str) -> None:
    """ProfilerConfig/FrameworkProfile/Profiler request dicts equal the SDK's, also after conversion."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sdk = PROFILER_CASES[case](d)
    ours = PROFILER_CASES[case](sdx)
    assert ours._to_request_dict() == sdk._to_request_dict()
    from sagemaker_debugger_ext.config._convert import to_profiler_config

    assert to_profiler_config(sdk)._to_request_dict() == sdk._to_request_dict()


def test_rule_dicts_equal_sdk(d: Any) -> None:
    """Rule / ProfilerRule config dicts before fit equal the SDK's (ProfilerRule params str()-ed)."""
    assert (
        sdx.Rule.sagemaker(sdx.rule_configs.dead_relu(), name="N").to_debugger_rule_config_dict()
        == d.Rule.sagemaker(d.rule_configs.dead_relu(), name="N").to_debugger_rule_config_dict()
    )
    args = ("P", "img", "ml.m5.xlarge", 10)
    assert (
        sdx.ProfilerRule.custom(
            *args, source="s3://s", rule_to_invoke="P", rule_parameters={"x": None}
        ).to_profiler_rule_config_dict()
        == d.ProfilerRule.custom(
            *args, source="s3://s", rule_to_invoke="P", rule_parameters={"x": None}
        ).to_profiler_rule_config_dict()
    )


def test_rule_positional_constructor_matches_sdk_order(d: Any) -> None:
    """Rule(...) positional order is the SDK's: name, image_uri, instance_type, local, s3, volume, params, collections."""
    args = ("R", "img", "ml.m5.xlarge", "/l", "s3://o", 5, {"a": "1"}, [sdx.CollectionConfig("c")])
    ours = sdx.Rule(*args)
    sdk = d.Rule(*args[:7], [d.CollectionConfig("c")])
    assert ours.to_debugger_rule_config_dict() == sdk.to_debugger_rule_config_dict()
    assert ours.collection_configs == [sdx.CollectionConfig("c")]


REGIONS = [
    "af-south-1",
    "ap-east-1",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-southeast-1",
    "ap-southeast-2",
    "ca-central-1",
    "cn-north-1",
    "cn-northwest-1",
    "eu-central-1",
    "eu-north-1",
    "eu-south-1",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "me-south-1",
    "sa-east-1",
    "us-east-1",
    "us-east-2",
    "us-gov-west-1",
    "us-west-1",
    "us-west-2",
]


def test_rule_images_for_every_region(d: Any) -> None:
    """Debugger and detailed-profiler images equal sagemaker.image_uris for every region of the table."""
    from sagemaker import image_uris

    for region in REGIONS:
        assert sdx.get_rule_container_image_uri("X", region) == image_uris.retrieve("debugger", region)
    for region in ["eu-central-1", "eu-west-1", "il-central-1", "us-east-1", "us-east-2", "us-west-2"]:
        assert sdx.get_rule_container_image_uri("DetailedProfilerProcessingJobConfig-1", region) == image_uris.retrieve(
            "detailed-profiler", region
        )
    assert sdx.get_rule_container_image_uri("X", "cn-north-1").endswith(
        ".amazonaws.com.cn/sagemaker-debugger-rules:latest"
    )


def test_sdk_objects_convert(d: Any) -> None:
    """SDK Rule, ProfilerRule, hook and TensorBoard configs convert to equal-payload objects of ours."""
    from sagemaker_debugger_ext.config import _convert

    rule = d.Rule.sagemaker(d.rule_configs.overfit(), actions=d.rule_configs.StopTraining())
    ours = _convert.to_rule(rule)
    assert isinstance(ours, sdx.Rule) and ours.actions is rule.actions
    assert ours.to_debugger_rule_config_dict() == rule.to_debugger_rule_config_dict()
    prule = d.ProfilerRule.sagemaker(d.rule_configs.BatchSize())
    assert _convert.to_rule(prule).to_profiler_rule_config_dict() == prule.to_profiler_rule_config_dict()
    hook = d.DebuggerHookConfig("s3://h", collection_configs=[d.CollectionConfig("w", {"save_interval": "1"})])
    assert _convert.to_hook_config(hook)._to_request_dict() == hook._to_request_dict()
